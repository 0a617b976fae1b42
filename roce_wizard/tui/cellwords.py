"""The words the wizard says about cells, pure (no Textual): the stage rail's counts, the grid title's, and
why `f` has nothing to run on a cell (issue 17 items 5 and 6: no silent no-ops, one word per state).

One word per status everywhere: records.report.LABEL ("could not run" for status error; JSON keeps `error`)."""

from __future__ import annotations

from rich.text import Text

from roce_wizard.model import Safety, Stage, Status
from roce_wizard.records.report import LABEL, PENDING_STYLE, PENDING_SYMBOL, PENDING_WORDS, STYLE
from roce_wizard.records.wording import plural_word
from roce_wizard.tui.board import BLOCKED, PENDING, Board

# the order counts are said in: what needs the operator first after what is fine
SAID = (Status.PASS, PENDING, Status.WARN, Status.FAIL, Status.ERROR)


def _sign(key: Status | str) -> tuple[str, str]:
    return (PENDING_SYMBOL, PENDING_STYLE) if key == PENDING else (key.symbol, STYLE[key])


def rail_text(counts: dict[Status | str, int], running: bool = False) -> Text:
    """The counts under a stage's name on the rail: ✓ and ✗ always, ⟳ ! ? when there are any. A stage whose
    judged cells are all blocked says "blocked" (✓0 ✗0 would look clean). `running`: a look is under way and
    these are the last final counts, kept until the new ones are final (they do not flash)."""
    line = Text()
    judged = sum(counts.get(k, 0) for k in SAID)
    if not judged and not counts.get(BLOCKED, 0) and running:
        pass  # nothing final yet: the running marker alone
    elif not judged and counts.get(BLOCKED, 0):
        line.append(f"- blocked ({counts[BLOCKED]})", style="bold yellow")
    elif not judged and counts.get(Status.SKIP, 0):
        line.append(f"- not applicable ({counts[Status.SKIP]})", style="dim")
    elif not judged:
        line.append("· nothing judged", style="dim")  # no target of the stage's kind, or not run yet
    else:
        for key in SAID:
            if counts.get(key, 0) or key in (Status.PASS, Status.FAIL):
                symbol, style = _sign(key)
                line.append(f"{symbol}{counts.get(key, 0)} ", style=style)
    if running:
        line.append("…", style="dim")
    return line


def title_counts(counts: dict[Status | str, int]) -> Text:
    """The grid title's counts, in words: "✓ 3 passed  ⟳ 1 wait for a reboot  ? 0 could not run …"."""
    out = Text()
    for key in (Status.PASS, PENDING, Status.WARN, Status.FAIL, Status.ERROR, Status.SKIP):
        if key == PENDING and not counts.get(PENDING, 0):
            continue
        symbol, style = _sign(key)
        n = counts.get(key, 0)
        word = PENDING_WORDS if key == PENDING else plural_word(n, "warning") if key == Status.WARN else LABEL[key]
        out.append(f"{symbol} {n} {word}  ", style=style)
    return out


def nothing_to_fix(board: Board, stage: Stage, row: str | None, code: str | None) -> str | None:
    """Why `f` runs nothing on this cell, in one line; None when it has a fix to offer."""
    if row is None or code is None:
        return "select a check's cell (the host column holds no check): arrows move in the grid"
    planned = board.plans_in(stage, row, code)
    if any(p.allowed for p in planned):
        return None
    findings = board.cell_findings(row, code)
    status = board.cell_status(row, code)
    if board._row_running(row, code):
        return f"{code} on {row} is being checked — wait for the result"
    if not findings:
        return f"{code} is not judged on {row} (not applicable, or not run yet) — nothing to fix"
    blocked = board.cell_blocked(row, code)
    if blocked is not None and blocked.blocked_by is not None:
        by, where = blocked.blocked_by
        return f"{code} on {row} is blocked by {by} on {where} — fix that first"
    if board.cell_pending(row, code):
        why = next((f.pending_reboot for f in findings if f.pending_reboot), "waits for a reboot")
        return f"{code} passes on {row} but is not in effect yet: {why} — reboot it (b: the reboot tracker)"
    if status is Status.PASS:
        return f"{code} passes on {row} — nothing to fix"
    if status is Status.SKIP:
        return f"{code} does not apply on {row} — nothing to fix"
    if status is Status.ERROR:
        return f"{code} could not run on {row} — the detail pane says why; r checks again"
    waiting = [p for p in planned if p.waits_for]
    if waiting:
        return f"{code}'s fix on {row} waits for {', '.join(waiting[0].waits_for)} — b shows the reboot tracker"
    check = board.checks.get(code)
    if any(p.plan.safety is Safety.MANUAL or not p.plan.steps for p in planned) or (
            check is not None and getattr(check, "plan_fix", None) is None):
        return f"{code} has no automatic fix — see the detail pane for the fix by hand"
    return f"{code} on {row}: no fix was planned — see the detail pane for the fix by hand"
