"""What the wizard prints when a fix or reboot it was running is stopped (Ctrl-C, or `q` confirmed): where the
engine stopped, what it applied, what it did not, what waits for a reboot, which hosts this tool left in
maintenance mode or mid-reboot, which VMs it left off, and the run log (issue 17 item 4: never quit silently).

Pure: the outcome and the reboot ledger in, lines out."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from roce_wizard.textsafe import printable

# the exit code of a run interrupted by Ctrl-C: 128 + SIGINT, the shell's convention (bash, git, make)
INTERRUPTED = 130


def stop_report(what: str, by: str, outcome: Any, book: Mapping[str, Any], run_dir: Path | None) -> list[str]:
    """`outcome`: the engine's RunOutcome, or None when the run ended in an error; `book`: host -> HostLedger."""
    stopped = getattr(outcome, "stopped", None)
    if stopped is not None:
        head = (f"{what}: stopped by {by} at a safe point ({stopped.where}, round {stopped.round}) — no host was "
                "left between a change and its verify")
    elif outcome is None:
        head = f"{what}: stopped by {by}; the run ended with an error (the run log says which)"
    else:
        head = f"{what}: stopped by {by} once the step under way had finished"
    lines = [head]
    applied = getattr(outcome, "applied", []) if outcome is not None else []
    ok = sorted({f"{r.target} {r.check}" for run in applied for r in run.results if r.ok})
    failed = sorted({f"{r.target} {r.check}" for run in applied for r in run.results if not r.ok})
    if ok:
        lines.append("  applied: " + ", ".join(ok))
    if failed:
        lines.append("  failed: " + ", ".join(failed))
    not_run = list(stopped.pending) if stopped is not None else []
    rounds = getattr(outcome, "rounds", []) if stopped is not None else []
    if not not_run and rounds and rounds[-1].fixrun is None:  # stopped before the round's fixes: all of them
        not_run = [f"{p.target.name} {p.plan.check}" for p in rounds[-1].planned if p.allowed]
    if not_run:
        lines.append("  not run: " + ", ".join(not_run))
    waiting = {h: e for h, e in sorted(book.items()) if e.awaiting_reboot}
    if waiting:
        lines.append("  waits for a reboot: " + "; ".join(
            f"{h} ({', '.join(sorted({p.check for p in e.awaiting_reboot}))})" for h, e in waiting.items())
            + " — `roce-wizard fix --reboot` or the wizard's reboot tracker (b) finishes it")
    maintenance = [h for h, e in sorted(book.items()) if e.in_maintenance]
    if maintenance:
        lines.append("  in maintenance mode (entered by roce-wizard): " + ", ".join(maintenance))
    rebooting = [h for h, e in sorted(book.items()) if getattr(e.state, "value", e.state) in
                 ("rebooting", "entering-maintenance")]
    if rebooting:
        lines.append("  mid-reboot (the next fix resumes it): " + ", ".join(rebooting))
    for item in getattr(outcome, "vms_still_off", []) or []:
        lines.append(f"  {item.line()}")
    if len(lines) == 1:
        lines.append("  nothing was applied")
    if run_dir is not None:
        lines.append(f"  run log: {run_dir}")
    return [printable(line) for line in lines]
