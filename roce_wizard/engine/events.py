"""What the engine tells a front end, as typed events (no `emit(str, dict)`).

Each event has a TYPE; those the run log keeps are written through `record()` at the RunLog boundary
(`log_event`), with exactly the keys events.jsonl always had (the bundle, the ledger and analyze read
them). Fields marked live (`LIVE`) are objects for a front end in this process: never written.
Events with `LOGGED = False` are for front ends only (a round judged, a reboot's progress).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from roce_wizard.model import Finding


class Event:
    TYPE: ClassVar[str] = ""
    LOGGED: ClassVar[bool] = True
    LIVE: ClassVar[tuple[str, ...]] = ()  # fields for a front end only
    OMIT_NONE: ClassVar[tuple[str, ...]] = ()  # fields left out of the record when None

    def record(self) -> dict[str, Any]:
        """The run log's keys, in the order they always had."""
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.name in self.LIVE or (f.name in self.OMIT_NONE and value is None):
                continue
            out[f.name] = value
        return out

    def as_dict(self, live: bool = False) -> dict[str, Any]:
        data = self.record()
        if live:
            data.update({name: getattr(self, name) for name in self.LIVE})
        return data


Sink = Callable[[Event], None]


def log_event(runlog: Any, event: Event) -> None:
    """The RunLog boundary: a typed event becomes the same line events.jsonl always had."""
    if runlog is not None and event.LOGGED:
        runlog.event(event.TYPE, **event.record())


# ------------------------------------------------------------------ the check pass


@dataclass
class RunPlanned(Event):
    TYPE: ClassVar[str] = "plan"
    targets: list[str]
    checks: list[str]


@dataclass
class InventoryRead(Event):
    """What the run worked on (the bundle finds the inventory through it)."""

    TYPE: ClassVar[str] = "inventory"
    path: str
    targets: list[str]
    playbook: str
    checks: list[str]
    policy: dict[str, Any]


@dataclass
class Connected(Event):
    TYPE: ClassVar[str] = "connect"
    OMIT_NONE: ClassVar[tuple[str, ...]] = ("error_kind", "message")
    target: str
    ok: bool
    error_kind: str | None = None
    message: str | None = None


@dataclass
class ProbeRan(Event):
    TYPE: ClassVar[str] = "probe"
    target: str
    probe: str
    command: str
    exit_status: int | None
    timed_out: bool
    duration_s: float


@dataclass
class TargetJudged(Event):
    """A target's findings as soon as they are known: provisional after its own evaluation, then resolved
    once root causes across targets are named. The log keeps counts; `run` (a copy) is live only."""

    TYPE: ClassVar[str] = "target-findings"
    LIVE: ClassVar[tuple[str, ...]] = ("run",)
    target: str
    resolved: bool
    counts: dict[str, int]
    duration_s: float
    run: Any = None  # judge.TargetRun


@dataclass
class FindingJudged(Event):
    TYPE: ClassVar[str] = "finding"
    stage: str
    finding: Finding

    def record(self) -> dict[str, Any]:
        return {"stage": self.stage, **self.finding.to_dict()}


@dataclass
class RunEnded(Event):
    TYPE: ClassVar[str] = "run-end"
    exit_code: int
    counts: dict[str, int]
    duration_s: float


# ------------------------------------------------------------------ fixes, reboots, rounds


@dataclass
class FixStepRan(Event):
    TYPE: ClassVar[str] = "fix-step"
    LIVE: ClassVar[tuple[str, ...]] = ("result",)
    OMIT_NONE: ClassVar[tuple[str, ...]] = ("host",)
    target: str
    check: str
    description: str
    command: str
    exit_status: int | None
    output: str
    duration_s: float
    reboot: str
    host: str | None = None
    result: Any = None  # fixes.StepResult


@dataclass
class FixesApplied(Event):
    """The plans a front end handed over are applied (before the look that re-verifies them)."""

    TYPE: ClassVar[str] = "fixes-applied"
    LOGGED: ClassVar[bool] = False
    LIVE: ClassVar[tuple[str, ...]] = ("fixrun",)
    fixrun: Any  # fixes.FixRun


@dataclass
class RoundJudged(Event):
    """A round's checks are done and its plans made (before the confirmation)."""

    TYPE: ClassVar[str] = "round"
    LOGGED: ClassVar[bool] = False
    LIVE: ClassVar[tuple[str, ...]] = ("round",)
    round: Any  # rounds.Round


@dataclass
class RebootProgress(Event):
    TYPE: ClassVar[str] = "reboot-progress"
    LOGGED: ClassVar[bool] = False
    host: str
    state: str
    note: str


@dataclass
class VmsStillOff(Event):
    """At the very end, whatever ended the run: the VMs this tool powered off that are still off."""

    TYPE: ClassVar[str] = "vms-still-off"
    LOGGED: ClassVar[bool] = False
    LIVE: ClassVar[tuple[str, ...]] = ("off",)
    off: list[Any] = field(default_factory=list)  # vm_restore.VmStillOff


@dataclass
class RunStopped(Event):
    """The user asked to stop; the run stopped at a safe point (between targets or rounds, never between a
    change and its verify). `where` says which point, `round` which round, `done` what had been applied."""

    TYPE: ClassVar[str] = "run-stopped"
    where: str
    round: int
    done: list[str] = field(default_factory=list)  # "target check" of the plans applied before the stop
    pending: list[str] = field(default_factory=list)  # "target check" of the plans not applied


@dataclass
class LookStarted(Event):
    """run() starts a look of its own: `purpose` "checks", "re-verify" or "final" (a round's look: RoundJudged)."""

    TYPE: ClassVar[str] = "look-started"
    LOGGED: ClassVar[bool] = False
    purpose: str
    targets: list[str]


@dataclass
class LookDone(Event):
    TYPE: ClassVar[str] = "look-done"
    LOGGED: ClassVar[bool] = False
    LIVE: ClassVar[tuple[str, ...]] = ("report",)
    purpose: str
    report: Any  # judge.RunReport


@dataclass
class Hooks:
    """How a front end follows a run: it renders events and answers the confirmation; `stop_requested` is
    asked at every safe point (between targets' plans, before rounds and reboots) and ends the run there."""

    on_event: Sink = lambda event: None
    confirm: Callable[[Any], bool] = lambda round_: True  # before applying a round's runnable plans
    stop_requested: Callable[[], bool] = lambda: False
