"""Pure renderers of findings: a run's report to terminal text (rich) and to the JSON contract; the JSON
contract's results (results.json, a bundle's) to document sections that records.markup renders as Markdown
and HTML (the support bundle's summary). One symbol per status and one stage order for all of them."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from roce_wizard.model import Finding, Stage, Status
from roce_wizard.records.fabric import pair_sentences
from roce_wizard.records.markup import Code, Html, Lines, Section, Table
from roce_wizard.records.svg import incast_svg
from roce_wizard.records.wording import plural, plural_word
from roce_wizard.textsafe import printable

if TYPE_CHECKING:  # the engine makes reports; rendering one needs only its fields
    from roce_wizard.engine import RunReport

JSON_VERSION = 1
STYLE = {Status.PASS: "green", Status.WARN: "yellow", Status.FAIL: "bold red", Status.SKIP: "dim", Status.ERROR: "magenta"}
SYMBOL = {Status.PASS: "✓", Status.WARN: "!", Status.FAIL: "✗", Status.ERROR: "?", Status.SKIP: "-"}
# a pass on a value that is staged, not in effect yet (engine/pending.py): its own sign, never ✓
PENDING_SYMBOL, PENDING_STYLE, PENDING_WORDS = "⟳", "cyan", "wait for a reboot"
# the words of a status for people, one per status everywhere (grid, rail, log, doctor); JSON keeps the value
LABEL = {Status.PASS: "passed", Status.WARN: "warnings", Status.FAIL: "failed", Status.ERROR: "could not run",
         Status.SKIP: "skipped"}


def symbol_of(f: Finding) -> str:
    return PENDING_SYMBOL if f.status is Status.PASS and f.pending_reboot else SYMBOL[f.status]


def style_of(f: Finding) -> str:
    return PENDING_STYLE if f.status is Status.PASS and f.pending_reboot else STYLE[f.status]


_PLAIN = (str, int, float, bool, type(None))  # exact types: what a JSON round trip gives back unchanged


def _jsonable(value: Any) -> Any:
    if type(value) in _PLAIN:  # most observed/expected values: no round trip through the encoder
        return value
    return json.loads(json.dumps(value, default=str))


def result_rows(report: RunReport) -> list[dict[str, Any]]:
    rows = []
    for f in report.findings:
        check = report.checks.get(f.check)
        rows.append({
            "check": f.check,
            "slug": check.meta.slug if check else None,
            "stage": report.stage_of.get(f.check, check.meta.stage if check else Stage.PREFLIGHT).value,
            "target": f.target,
            "subject": f.subject,
            "status": f.status.value,
            "severity": check.meta.severity.value if check else None,
            "summary": f.summary,
            "observed": _jsonable(f.observed),
            "expected": _jsonable(f.expected),
            "evidence": [e.__dict__ for e in f.evidence],
            "fix": f.fix,
            "reboot": check.meta.reboot.value if check else None,
            "blocked_by": {"check": f.blocked_by[0], "target": f.blocked_by[1]} if f.blocked_by else None,
            "details": _jsonable(f.details),
            # a pass whose change is staged, not in effect until a reboot (status stays "pass": README, JSON)
            "pending_reboot": bool(f.status is Status.PASS and f.pending_reboot),
            "pending_reason": f.pending_reboot if f.status is Status.PASS else None,
        })
    return rows


def to_json_dict(report: RunReport, changes: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    counts = report.counts()
    out = {
        "version": JSON_VERSION,
        "results": result_rows(report),
        "summary": {
            **counts,
            "pending_reboot": sum(1 for f in report.findings if f.status is Status.PASS and f.pending_reboot),
            "targets": len(report.targets),
            "checks": len(report.checks),
            "exit_code": int(report.exit_code),
            "duration_s": round(report.duration_s, 3),
            "run_dir": report.run_dir,
        },
    }
    if changes is not None:
        out["changes"] = changes
    return out


def summary_line(report: RunReport) -> str:
    c = report.counts()
    return counts_words(c, sum(1 for f in report.findings if f.status is Status.PASS and f.pending_reboot)) + (
        f" — {plural(len(report.targets), 'target')} in {report.duration_s:.1f}s")


def counts_words(c: dict[str, int], pending: int = 0) -> str:
    """"3 passed, 2 wait for a reboot, 0 warnings, …": the pending are not counted as passed here (they are in
    the JSON's `pass`, with `pending_reboot` saying how many of them)."""
    waiting = f"{pending} {PENDING_WORDS}, " if pending else ""
    return (f"{c.get('pass', 0) - pending} passed, {waiting}{plural(c.get('warn', 0), 'warning')}, {c.get('fail', 0)} failed, "
            f"{c.get('error', 0)} could not run, {c.get('skip', 0)} skipped")


def _stage_order(report: RunReport) -> list[Stage]:
    seen = {report.stage_of.get(f.check, Stage.PREFLIGHT) for f in report.findings}
    return [s for s in Stage if s in seen]


def render_terminal(report: RunReport, console: Console, verbose: bool = False,
                    changes: list[dict[str, Any]] | None = None, quiet: bool = False) -> None:
    """`quiet` (doctor --quiet): only the findings that did not pass, and the summary; a healthy run prints
    its summary line alone."""
    grouped: dict[Stage, dict[str, list[Finding]]] = defaultdict(lambda: defaultdict(list))
    for f in report.findings:
        if quiet and (f.status is Status.PASS or _not_applicable(f)):
            continue
        grouped[report.stage_of.get(f.check, Stage.PREFLIGHT)][f.target].append(f)
    hidden = 0
    for stage in _stage_order(report):
        shown = {t: fs if verbose else [f for f in fs if not _not_applicable(f)] for t, fs in grouped[stage].items()}
        hidden += sum(len(grouped[stage][t]) - len(fs) for t, fs in shown.items())
        shown = {t: fs for t, fs in shown.items() if fs}
        if not shown:
            continue
        console.print(Text(stage.value.upper(), style="bold underline"))
        for target, findings in shown.items():
            console.print(Text(f"  {printable(target)}", style="bold"))
            roots = {f.blocked_by for f in findings}
            if not verbose and len(findings) > 2 and len(roots) == 1 and None not in roots:
                code, where = next(iter(roots))
                console.print(Text.assemble(("    ", ""), (SYMBOL[Status.SKIP], STYLE[Status.SKIP]),
                                            (printable(f" {len(findings)} checks blocked by {code} on {where}"), "dim")))
                continue
            for f in findings:
                _render_finding(report, f, console, verbose)
        console.print()
    failures = [f for f in report.findings if f.status in (Status.FAIL, Status.WARN) and f.fix]
    if failures:
        console.print(Text("How to fix by hand", style="bold underline"))
        for f in failures:
            where = f"{f.target}" + (f" {f.subject}" if f.subject else "")
            console.print(Text(printable(f"  {f.check} {where}:"), style=STYLE[f.status]))
            for line in f.fix.splitlines():
                console.print(Text(f"      {printable(line)}"), soft_wrap=True)
        console.print()
    if changes is not None:
        console.print(Text("Since the last run", style="bold underline"))
        if not changes:
            console.print("  nothing changed")
        for ch in changes:
            subject = f" {ch['subject']}" if ch.get("subject") else ""
            console.print(Text(printable(f"  {ch['check']} {ch['target']}{subject}: {ch['before'] or 'new'} → "
                                         f"{ch['after'] or 'gone'}")))
        console.print()
    fabric = pair_sentences(result_rows(report)) if any(f.check in ("RW607", "RW608") for f in report.findings) else []
    if fabric:  # the validate stage's verdict per node pair, with its evidence
        console.print(Text("Fabric", style="bold underline"))
        for sentence in fabric:
            console.print(Text(printable(f"  {sentence}")), soft_wrap=True)
        console.print()
    if hidden and not quiet:
        console.print(Text(f"({plural(hidden, 'check')} not applicable here {plural_word(hidden, 'is')} not shown; "
                           "-v shows them)", style="dim"))
    style = "bold red" if report.exit_code == 1 else "yellow" if report.exit_code == 3 else "bold green"
    console.print(Text(summary_line(report), style=style), soft_wrap=True)
    if report.run_dir and not (quiet and not any(fs for targets in grouped.values() for fs in targets.values())):
        console.print(Text(f"run log: {report.run_dir}", style="dim"))


def _not_applicable(f: Finding) -> bool:
    """A skip that no broken dependency caused: the check does not apply to this target (RW409 in a VF
    guest, a BIOS setting judged on the host's BMC instead)."""
    return f.status is Status.SKIP and f.blocked_by is None


def _render_finding(report: RunReport, f: Finding, console: Console, verbose: bool) -> None:
    check = report.checks.get(f.check)
    slug = check.meta.slug if check else ""
    line = Text.assemble(
        ("    ", ""),
        (symbol_of(f), style_of(f)),
        (f" {f.check} ", "bold"),
        (f"{slug:<28} ", "cyan"),
        (printable(f.summary), ""),
    )
    if f.subject:
        line.append(printable(f" [{f.subject}]"), style="dim")
    if f.status is Status.PASS and f.pending_reboot:
        line.append(printable(f" — not in effect yet: {f.pending_reboot}"), style=PENDING_STYLE)
    console.print(line, soft_wrap=True)
    if f.details.get("mpirun") and f.status is not Status.SKIP:  # RW604: the line jobs should use (contract 3)
        console.print(Text(printable(f"        {f.details['mpirun']}"), style="bold"), soft_wrap=True)
        for ln in str(f.details.get("hostfile") or "").splitlines():
            console.print(Text(printable(f"        hostfile: {ln}"), style="dim"), soft_wrap=True)
    table = f.details.get("table")
    if verbose and isinstance(table, dict) and table.get("columns"):  # validate measurements (contract 3)
        console.print(Text(printable("        " + " | ".join(str(c) for c in table["columns"])), style="dim"),
                      soft_wrap=True)
        for row in table.get("rows", [])[:30]:
            console.print(Text(printable("        " + " | ".join(_short(c) for c in row)), style="dim"), soft_wrap=True)
    if verbose:
        if f.details.get("unjudged"):
            console.print(Text(printable(f"        saw: {f.details['unjudged']}"), style="dim"), soft_wrap=True)
        if f.observed is not None or f.expected is not None:
            console.print(Text(printable(f"        observed: {_short(f.observed)}   expected: {_short(f.expected)}"),
                               style="dim"), soft_wrap=True)
        for ev in f.evidence:
            if ev.command:
                console.print(Text(printable(f"        $ {ev.command}"), style="dim"), soft_wrap=True)
            if ev.excerpt:
                for ln in ev.excerpt.splitlines()[:8]:
                    console.print(Text(printable(f"        | {ln}"), style="dim"), soft_wrap=True)


def _short(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else value
    return text if len(text) <= 160 else text[:157] + "..."


# ------------------------------------------------------------------- results (the JSON contract) as sections


def results_line(summary: dict[str, Any]) -> str:
    """The counts of a results document's summary; a run that ended says so (its rows are in their final state)."""
    ended = f" (final state; the run ended with exit code {summary['exit_code']})" if "exit_code" in summary else ""
    return counts_words(summary, int(summary.get("pending_reboot") or 0)) + ended


def rows_by_stage(rows: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Result rows grouped by stage, in the order doctor runs the stages (a stage it does not know last)."""
    stages = [s.value for s in Stage if any(r.get("stage") == s.value for r in rows)]
    stages += sorted({r.get("stage") or "other" for r in rows} - set(stages))
    return [(s, [r for r in rows if (r.get("stage") or "other") == s]) for s in stages]


def _measured(row: dict[str, Any]) -> dict[str, Any] | None:
    table = (row.get("details") or {}).get("table")
    if isinstance(table, dict) and isinstance(table.get("columns"), list) and isinstance(table.get("rows"), list):
        return table
    return None


def results_sections(rows: list[dict[str, Any]]) -> list[Section]:
    """The findings by stage, how to fix by hand, the validate stage's measurements (tables, incast plots)
    and the mpirun line jobs should use."""
    symbol = {status.value: sign for status, sign in SYMBOL.items()}

    def pending(r: dict[str, Any]) -> bool:
        return r.get("status") == "pass" and bool(r.get("pending_reboot"))

    out = [Section(stage, [Table(["", "check", "target", "subject", "summary"],
                                 [[PENDING_SYMBOL if pending(r) else symbol.get(r.get("status"), "?"),
                                   str(r.get("check")), r.get("target") or "", r.get("subject") or "",
                                   (r.get("summary") or "") + (f" — not in effect yet: {r.get('pending_reason')}"
                                                               if pending(r) else "")] for r in stage_rows],
                                 ["pending" if pending(r) else str(r.get("status")) for r in stage_rows])])
           for stage, stage_rows in rows_by_stage(rows)]
    fabric = pair_sentences(rows)
    if fabric:
        out.append(Section("Fabric (per node pair)", [Lines([f"- {sentence}" for sentence in fabric])]))
    failing = [r for r in rows if r.get("status") in ("fail", "warn") and r.get("fix")]
    if failing:
        out.append(Section("How to fix by hand"))
        out += [Section(f"{r.get('check')} {r.get('target')}{' ' + str(r['subject']) if r.get('subject') else ''}",
                        [Code(str(r["fix"]))], level=3) for r in failing]
    for r in rows:
        table = _measured(r)
        if table is not None:
            incast = (r.get("details") or {}).get("incast")
            plot = [Html(incast_svg(incast))] if isinstance(incast, list) and incast else []
            out.append(Section(f"{r.get('check')} {r.get('target')} — measured",
                               [Table(table["columns"], table["rows"]), *plot]))
    for r in rows:
        details = r.get("details") or {}
        incast = details.get("incast")
        if isinstance(incast, list) and incast and _measured(r) is None:
            out.append(Section(f"{r.get('check')} {r.get('target')} — incast", [Html(incast_svg(incast))],
                               html_only=True))
        if details.get("mpirun"):
            hostfile = [Code(str(details["hostfile"]), label="hostfile:")] if details.get("hostfile") else []
            out.append(Section(f"{r.get('check')} — mpirun", [Code(str(details["mpirun"])), *hostfile]))
    return out
