"""The only sequencer. `run(setup, mode, hooks) -> RunOutcome` (run.py) checks, fixes and reboots; the CLI
and the wizard render its events (events.py) and answer its confirmations (Hooks), nothing more.

gather.py  probes per target over the transports, recorded
judge.py   evaluate, ONE root-cause algorithm (`resolve_root_causes`), cross-target comparisons, the report
checkpass.py  one look at the inventory (`run_checks`): gather, judge, the validate stage, compare
fixes.py   plan (pure, per check) and apply; rounds.py: fix, reboot, verify, repeat (one reboot verdict)
events.py  the typed events (written to events.jsonl with the keys it always had) and Hooks
"""

from __future__ import annotations

from roce_wizard.engine.checkpass import run_checks
from roce_wizard.engine.events import Event, Hooks
from roce_wizard.engine.gather import gather_target, peer_facts
from roce_wizard.engine.judge import (
    RunReport,
    TargetRun,
    analyzable,
    applicable,
    compare_across_targets,
    evaluate_check,
    evaluate_target,
    exit_code_for,
    facts_for_analyze,
    resolve_root_causes,
)
from roce_wizard.engine.run import Mode, RunOutcome, RunSetup, run
from roce_wizard.model import TargetKind

__all__ = [
    "Event",
    "Hooks",
    "Mode",
    "RunOutcome",
    "RunReport",
    "RunSetup",
    "TargetKind",
    "TargetRun",
    "analyzable",
    "applicable",
    "compare_across_targets",
    "evaluate_check",
    "evaluate_target",
    "exit_code_for",
    "facts_for_analyze",
    "gather_target",
    "peer_facts",
    "resolve_root_causes",
    "run",
    "run_checks",
]
