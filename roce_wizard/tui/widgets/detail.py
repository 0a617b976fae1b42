"""The detail pane's text for one grid cell, verdict first: findings (summary, observed vs expected), the
fix (the exact lines, never wrapped: `y` copies them), the evidence and raw output, then the check's
explain text (its docstring sections, reflowed once to the pane's width)."""

from __future__ import annotations

import json
import re
from typing import Any

from rich.console import Group
from rich.text import Text

from roce_wizard.catalog import SECTIONS
from roce_wizard.commands.switch_config import human_command
from roce_wizard.engine.fixes import Planned
from roce_wizard.model import Safety, Stage, Status
from roce_wizard.records.report import PENDING_STYLE, style_of, symbol_of
from roce_wizard.textsafe import printable
from roce_wizard.tui.board import Board

RAW_LINES = 25
LISTED = re.compile(r"^([-*•]|\d+[.)]|\$|Sources?:|See:)\s")  # a listed, command or sources line: a line of its own
WRAPPED = 60  # a source line at least this long ended where the docstring was wrapped, not where its author broke it


def command(text: str, indent: str = "    ") -> Text:
    """A line to paste: never wrapped (a wrapped command pastes broken); too long for the pane, it ends in …"""
    return Text(printable(f"{indent}{text}"), style="cyan", no_wrap=True, overflow="ellipsis")


def reflow(doc: str) -> str:
    """A docstring section wrapped at ~100 columns in the source, as paragraphs the pane wraps once. A line joins the
    one before it when that one was cut by the wrapping (long, not ending in ':'), both are prose (not indented,
    not listed), or it is the indented tail of a long prose line (a hanging indent, as under "Sources:").
    Short lines, indented command lines and listed lines keep their own line."""
    out: list[str] = []
    last = ""  # the previous source line, as written
    for line in doc.splitlines():
        wrapped = len(last) >= WRAPPED and not last.rstrip().endswith(":") and not last[:1].isspace()
        prose = bool(line.strip()) and not line[:1].isspace() and not LISTED.match(line)
        hanging = line.startswith("    ") and not line.startswith("     ")
        if out and wrapped and (prose or hanging):
            out[-1] = f"{out[-1]} {line.strip()}"
            last = last if hanging else line  # a hanging tail continues the prose line it hangs from
        else:
            out.append(line.rstrip())
            last = line
    return "\n".join(out)


def short(value: Any, limit: int = 300) -> str:
    text = printable(value) if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plan_state(p: Planned) -> str:
    if p.waits_for:
        return f"waits for {', '.join(p.waits_for)}"
    if p.plan.safety is Safety.MANUAL or not p.plan.steps:
        return "manual: shown, never run"
    if p.plan.safety is Safety.DISRUPTIVE:
        return "disruptive: asks twice"
    return "safe"


def plan_lines(planned: list[Planned]) -> list[Text]:
    out: list[Text] = []
    for p in planned:
        plan = p.plan
        reboot = "" if plan.reboot.value == "none" else f" · reboot: {plan.reboot.value}"
        out.append(Text.assemble((plan.check, "bold"), " · ", (plan.target, "bold"), ": ", printable(plan.summary),
                                 (f"  [{plan_state(p)}{reboot}]", "dim")))
        if plan.reboot_reason:
            out.append(Text(printable(f"    reboot: {plan.reboot_reason}"), style="yellow"))
        for step in plan.steps:
            shown = human_command(step.command)
            if shown != step.command:  # a switch configuration: its lines, not the transport's JSON header
                out.append(Text(printable(f"    {step.description}:"), style="cyan"))
                out += [command(line, "      ") for line in shown.split("\n")]
            else:
                out.append(command(f"$ {step.command}"))
            if (step.before is not None or step.after is not None) and step.before != step.after:
                out.append(Text(printable(f"      {step.before} → {step.after}"), style="dim"))
    return out


def cell_detail(board: Board, stage: Stage, row: str | None, code: str | None) -> Group:
    if row is None:
        return Group(Text("No cell selected. Arrow keys move in the grid.", style="dim"))
    if code is None:
        return host_detail(board, stage, row)
    check = board.checks[code]
    meta = check.meta
    parts: list[Any] = [
        Text.assemble((f"{code} {meta.slug}", "bold"), f" — {meta.title}"),
        Text(f"{row} · stage {stage.value} · severity {meta.severity.value} · reboot {meta.reboot.value}", style="dim"),
    ]
    findings = board.cell_findings(row, code)
    if not findings:
        parts.append(Text("not judged on this host (not applicable, or not run yet)", style="dim"))
    for f in findings:  # the verdict, and what was seen against what was wanted
        line = Text.assemble((f"{symbol_of(f)} ", style_of(f)), printable(f.summary))
        if f.subject:
            line.append(printable(f" [{f.subject}]"), style="dim")
        parts.append(line)
        if f.status is Status.PASS and f.pending_reboot:
            parts.append(Text(printable(f"  not in effect yet: {f.pending_reboot}"), style=PENDING_STYLE))
        if f.details.get("unjudged"):
            parts.append(Text(printable(f"  saw: {f.details['unjudged']}"), style="dim"))
        if f.observed is not None or f.expected is not None:
            parts.append(Text.assemble(("  observed: ", "bold"), short(f.observed)))
            parts.append(Text.assemble(("  expected: ", "bold"), short(f.expected)))
    planned = board.plans_in(stage, row, code)
    parts.append(Text("\nFix preview", style="bold underline"))
    if planned:
        parts.extend(plan_lines(planned))
        parts.append(Text("f fixes this cell · h this host · c this check · s the whole stage · y copies the "
                          "commands", style="dim"))
    else:
        parts.append(Text("nothing to fix here" if check.plan_fix else "the tool does not fix this check: see "
                          "How to fix by hand", style="dim"))
    for f in findings:
        if f.fix:
            parts.append(Text("  fix by hand:", style="bold"))
            parts.extend(command(ln) for ln in f.fix.splitlines())
    evidence = [(f, ev) for f in findings for ev in f.evidence if ev.command or ev.excerpt or ev.probe]
    if evidence:
        parts.append(Text("\nEvidence", style="bold underline"))
    for f, ev in evidence:
        run = board.run_of(f)
        if ev.command:
            parts.append(command(f"$ {ev.command}", "  "))
        if ev.excerpt:
            parts.extend(Text(printable(f"  | {ln}"), style="dim") for ln in ev.excerpt.splitlines()[:8])
        raw = run.facts.raw.get(ev.probe) if run is not None else None
        if raw:
            lines = raw.splitlines()
            parts.append(Text(f"  raw output of {ev.probe} ({len(lines)} lines):", style="bold"))
            parts.extend(Text(printable(f"  {ln}")) for ln in lines[:RAW_LINES])
            if len(lines) > RAW_LINES:
                parts.append(Text(f"  … {len(lines) - RAW_LINES} more lines in the run log", style="dim"))
    for section in SECTIONS:
        parts.append(Text(f"\n{section}", style="bold underline"))
        parts.append(Text(printable(reflow(check.doc.get(section, "")))))
    return Group(*parts)


def fix_commands(board: Board, stage: Stage, row: str, code: str) -> list[str]:
    """What `y` copies for a cell: the plan's commands (a switch configuration as its lines), else the
    findings' fix-by-hand lines; exactly as the detail pane shows them, without its indentation."""
    lines: list[str] = []
    for p in board.plans_in(stage, row, code):
        for step in p.plan.steps:
            shown = human_command(step.command)
            lines.extend(printable(ln) for ln in shown.split("\n"))
    if not lines:
        lines = [printable(ln.strip()) for f in board.cell_findings(row, code) if f.fix for ln in f.fix.splitlines()]
    return [ln for ln in lines if ln]


def host_detail(board: Board, stage: Stage, row: str) -> Group:
    target = next((t for t in board.targets if t.name == row), None)
    parts: list[Any] = [Text(row, style="bold")]
    if target is not None:
        parts.append(Text(f"{target.kind.value} · {target.address}" + (f" · on {target.host}" if target.host else ""),
                          style="dim"))
    progress = board.progress.get(row)
    if progress is not None and progress.message:
        parts.append(Text(printable(progress.message), style="red"))
    counts: dict[str, int] = {}
    for code in board.columns(stage):
        if board.cell_status(row, code) is not None:
            sign = board.cell_text(row, code)
            counts[sign] = counts.get(sign, 0) + 1
    parts.append(Text("  ".join(f"{sym} {n}" for sym, n in counts.items()) or "no results yet"))
    planned = board.plans_in(stage, row)
    if planned:
        parts.append(Text("\nFix preview (h fixes this host)", style="bold underline"))
        parts.extend(plan_lines(planned))
    return Group(*parts)
