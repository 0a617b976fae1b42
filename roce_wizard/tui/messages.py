"""Engine events as Textual messages. Workers run the engine in threads and post these to the app
(post_message is thread-safe); handlers on the app's loop update the board and the screens."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message

from roce_wizard.engine import RunReport
from roce_wizard.fixes import FixRun, StepResult


@dataclass
class ChecksStarted(Message):
    targets: list[str]
    purpose: str  # "preflight", "checks" or "re-verify"


@dataclass
class TargetConnected(Message):
    target: str
    ok: bool
    error_kind: str | None = None
    message: str | None = None


@dataclass
class ProbeDone(Message):
    target: str
    probe: str
    exit_status: int | None


@dataclass
class ChecksFinished(Message):
    report: RunReport
    purpose: str


@dataclass
class FixStepDone(Message):
    step: StepResult


@dataclass
class FixFinished(Message):
    run: FixRun


@dataclass
class RebootProgress(Message):
    host: str
    state: str
    note: str


@dataclass
class RebootsFinished(Message):
    ledger: dict[str, Any]


@dataclass
class WorkFailed(Message):
    what: str
    error: str


@dataclass
class BoardChanged(Message):
    """The board moved on (results, progress, plans): screens that show it redraw."""
