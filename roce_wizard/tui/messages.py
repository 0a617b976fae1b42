"""Engine events as Textual messages. Workers run the engine in threads and post these to the app
(post_message is thread-safe); handlers on the app's loop update the board and hand fresh copies to
the screens. None bubbles: a copy handed to a screen must not come back up to the app."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message

from roce_wizard.engine import RunReport, TargetRun
from roce_wizard.engine.fixes import FixRun, StepResult


@dataclass
class ChecksStarted(Message, bubble=False):
    targets: list[str]
    purpose: str  # "preflight", "checks" or "re-verify"


@dataclass
class TargetConnected(Message, bubble=False):
    target: str
    ok: bool
    error_kind: str | None = None
    message: str | None = None


@dataclass
class ProbeDone(Message, bubble=False):
    target: str
    probe: str
    exit_status: int | None


@dataclass
class TargetFindings(Message, bubble=False):
    """One target's findings while the run goes on (engine event `target-findings`): provisional right after
    its own evaluation, resolved once root causes across targets are named."""

    run: TargetRun
    resolved: bool


@dataclass
class ChecksFinished(Message, bubble=False):
    report: RunReport
    purpose: str
    ledger: dict[str, Any] | None = None  # reboots.build_ledger() read right after the run (None: no ledger)
    final: bool = True  # False: a round of "fix everything", which goes on (the app stays busy)


@dataclass
class FixAllFinished(Message, bubble=False):
    """"Fix everything" is over: what it did, in lines for the log and its screen."""

    lines: list[str]
    ok: bool


@dataclass
class FixStepDone(Message, bubble=False):
    step: StepResult


@dataclass
class FixFinished(Message, bubble=False):
    run: FixRun


@dataclass
class RebootProgress(Message, bubble=False):
    host: str
    state: str
    note: str


@dataclass
class RebootsFinished(Message, bubble=False):
    ledger: dict[str, Any]


@dataclass
class WorkFailed(Message, bubble=False):
    what: str
    error: str


@dataclass
class BoardChanged(Message, bubble=False):
    """The board moved on (results, progress, plans): screens that show it redraw."""
