"""THE entry: `run(setup, mode, hooks) -> RunOutcome`, for `doctor`, `fix` and every action of the wizard.

check   one look (checkpass.run_checks)
fix     the rounds (rounds.fix_until_ready: check, fix, with `reboot` also reboot and repeat), or exactly the
        plans a front end hands over (the wizard's one-click fix); then the post-fix sequence, once, here:
        one more look, the reboots counted
reboot  reboot the hosts named, one more look, the verdict per host (rounds.reboot_verdict, the rule `fix
        --reboot` uses)

Every mode writes the `inventory` event the support bundle relies on when it knows the inventory file.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roce_wizard.engine.checkpass import run_checks
from roce_wizard.engine.events import (
    Event,
    FixesApplied,
    Hooks,
    InventoryRead,
    LookDone,
    LookStarted,
    RebootProgress,
    RunStopped,
    log_event,
)
from roce_wizard.engine.fixes import FixRun, Planned, apply_plans
from roce_wizard.engine.judge import RunReport
from roce_wizard.engine.kept import KeptTransports
from roce_wizard.engine.pending import look_ledger, mark_pending
from roce_wizard.engine.rounds import FixContext, Round, awaited, fix_until_ready, reboot_verdict
from roce_wizard.model import ExitCode, LoadedCheck, Policy, Safety, Stage, Target
from roce_wizard.records.runlog import RunLog


class Mode(str, enum.Enum):
    CHECK = "check"
    FIX = "fix"
    REBOOT = "reboot"


@dataclass
class RunSetup:
    """What a run works on and how: the targets and checks (session.Setup's), fresh transports per phase
    (a phase closes them), the run log, and per mode its options."""

    targets: list[Target]
    checks: dict[str, LoadedCheck]
    stage_of: dict[str, Stage]
    policy: Policy
    transports: Callable[[], Any]  # -> one Transport or {TargetKind: Transport}
    runlog: RunLog
    inventory: Path | None = None  # for the `inventory` event
    playbook: str = ""
    concurrency: int = 32
    command_timeout: float = 60.0
    names: set[str] | None = None  # check: only these targets
    ledger_facts: bool = False  # check: hand the checks what the ledger knows (a VM this tool powered off)
    pending_from_ledger: bool = False  # every look: mark passes whose change waits for a reboot (live runs only)
    # fix
    allow: set[Safety] = field(default_factory=lambda: {Safety.SAFE})
    plans: list[Planned] | None = None  # apply exactly these (no rounds), then look at every target
    reboot: bool = False  # the rounds reboot and repeat until nothing is left
    batch: int = 1
    power_off_vms: bool = False
    reboot_timeout: float = 1200.0
    poll_s: float = 5.0
    # reboot
    hosts: list[str] = field(default_factory=list)


@dataclass
class RunOutcome:
    mode: Mode
    report: RunReport | None  # the last look: what the result is judged on
    rounds: list[Round] = field(default_factory=list)
    fixrun: FixRun | None = None  # the plans handed over (fix with `plans`)
    rebooted: dict[str, Any] = field(default_factory=dict)  # reboot mode: host -> reboots.RebootOutcome
    looked_again: int | None = None  # targets of the look after the fixes (fix without reboot: those touched)
    stopped: RunStopped | None = None
    vms_still_off: list[Any] = field(default_factory=list)

    @property
    def applied(self) -> list[FixRun]:
        runs = [r.fixrun for r in self.rounds if r.fixrun is not None]
        return runs + ([self.fixrun] if self.fixrun is not None else [])

    @property
    def reboots(self) -> dict[str, int]:
        """Host -> reboots this run that came back."""
        out: dict[str, int] = {}
        for rebooted in [r.rebooted for r in self.rounds] + [self.rebooted]:
            for name, outcome in rebooted.items():
                if outcome.ok:
                    out[name] = out.get(name, 0) + 1
        return out

    @property
    def failed_reboot(self) -> bool:
        return any(not o.ok for r in self.rounds for o in r.rebooted.values()) or any(
            not o.ok for o in self.rebooted.values())

    @property
    def failed(self) -> bool:
        """A step or a reboot failed, a fix could not reach its target, or a VM this tool powered off is off."""
        return (any(not s.ok for run in self.applied for s in run.results) or any(run.errors for run in self.applied)
                or self.failed_reboot or bool(self.vms_still_off))

    @property
    def exit_code(self) -> ExitCode:
        """`fix`'s exit code: 1 when anything failed, else the last look's; a fix preview that was not
        applied (declined, --dry-run) exits 0 with plans, the report's code without."""
        if self.mode is Mode.CHECK:
            return self.report.exit_code if self.report is not None else ExitCode.INCOMPLETE
        if self.failed:
            return ExitCode.FAILED
        if not self.applied and self.rounds and self.rounds[-1].planned:
            return ExitCode.OK
        return self.report.exit_code if self.report is not None else ExitCode.OK


async def run(setup: RunSetup, mode: Mode | str, hooks: Hooks | None = None) -> RunOutcome:
    mode = Mode(mode)
    if mode is Mode.CHECK:  # one look: one set of transports anyway
        return await _run(setup, mode, hooks)
    # fix and reboot: phase after phase; the BMCs' transport (one login each) serves them all (engine.kept)
    kept = KeptTransports(setup.transports)
    try:
        return await _run(dataclasses.replace(setup, transports=kept), mode, hooks)
    finally:
        await kept.aclose()


async def _run(setup: RunSetup, mode: Mode, hooks: Hooks | None) -> RunOutcome:
    hooks = hooks or Hooks()

    def emit(event: Event) -> None:
        log_event(setup.runlog, event)
        hooks.on_event(event)

    async def look(purpose: str, targets: list[Target], tool_facts: Mapping[str, Any] | None = None) -> RunReport:
        emit(LookStarted(purpose, [t.name for t in targets]))
        report = await run_checks(targets, setup.checks, setup.transports(), setup.policy, stage_of=setup.stage_of,
                                  runlog=setup.runlog, concurrency=setup.concurrency,
                                  command_timeout=setup.command_timeout, on_event=hooks.on_event,
                                  tool_facts=tool_facts)
        if setup.pending_from_ledger:
            setup.runlog.flush()  # this run's own fix steps and RW003 identities count
            mark_pending(report.findings, look_ledger(setup.runlog.path.parent.parent, setup.runlog.path.name,
                                                      setup.targets))
        emit(LookDone(purpose, report))
        return report

    if setup.inventory is not None:
        emit(InventoryRead(str(setup.inventory.resolve()), [t.name for t in setup.targets], setup.playbook,
                           list(setup.checks), setup.policy.to_dict()))
    if mode is Mode.CHECK:
        targets = [t for t in setup.targets if setup.names is None or t.name in setup.names]
        tool_facts = None
        if setup.ledger_facts:  # the ledger knows which guests' VMs this tool powered off (RW001 says so)
            from roce_wizard.engine.vm_restore import vm_power_facts  # noqa: PLC0415
            from roce_wizard.records.ledger import build_ledger, vm_aliases  # noqa: PLC0415

            tool_facts = vm_power_facts(build_ledger(setup.runlog.path.parent.parent, vm_aliases(targets)), targets)
        return RunOutcome(mode, await look("checks", targets, tool_facts))
    if mode is Mode.REBOOT:
        return await _reboot(setup, hooks, emit, look)
    if setup.plans is not None:  # the wizard's one-click fix: these plans, then every target again
        fixrun = await apply_plans(setup.plans, setup.transports(), runlog=setup.runlog,
                                   command_timeout=setup.command_timeout, on_event=hooks.on_event,
                                   stop_requested=hooks.stop_requested)
        outcome = RunOutcome(mode, None, fixrun=fixrun)
        emit(FixesApplied(fixrun))
        if fixrun.stopped:
            outcome.stopped = RunStopped("between the fixes of two targets", 1,
                                         sorted({f"{r.target} {r.check}" for r in fixrun.results}),
                                         [f"{p.target.name} {p.plan.check}" for p in fixrun.not_run])
            emit(outcome.stopped)
        if fixrun.results and outcome.stopped is None:
            # every target, not only the touched ones: findings are judged across targets (root causes,
            # vCenter's verdicts on hosts and VMs, a host's PFC against its switch port)
            outcome.report = await look("re-verify", setup.targets)
        return outcome
    return await _rounds(setup, hooks, look)


async def _rounds(setup: RunSetup, hooks: Hooks, look: Any) -> RunOutcome:
    """fix_until_ready, then the post-fix sequence: one more look when the rounds ended right after applying
    (all targets with reboots; the touched ones without), and the run's result."""
    ctx = FixContext(setup.targets, setup.checks, setup.stage_of, setup.policy, setup.transports, setup.allow,
                     setup.runlog, concurrency=setup.concurrency, command_timeout=setup.command_timeout)
    rounds = await fix_until_ready(ctx, reboot=setup.reboot, batch=setup.batch, power_off_vms=setup.power_off_vms,
                                   reboot_timeout=setup.reboot_timeout, poll_s=setup.poll_s, hooks=hooks)
    last = rounds[-1] if rounds else None
    outcome = RunOutcome(Mode.FIX, last.report if last is not None else None, rounds,
                         stopped=next((r.stopped for r in rounds if r.stopped is not None), None),
                         vms_still_off=list(last.vms_off) if last is not None else [])
    if outcome.stopped is not None or not outcome.applied:
        return outcome
    if setup.reboot:
        if last is not None and last.fixrun is not None:  # the loop stopped right after applying: one more look
            outcome.report = await look("final", setup.targets)
    else:
        touched = {s.target for run in outcome.applied for s in run.results}
        outcome.report = await look("re-verify", [t for t in setup.targets if t.name in touched])
        outcome.looked_again = len(touched)
    return outcome


async def _reboot(setup: RunSetup, hooks: Hooks, emit: Callable[[Event], None], look: Any) -> RunOutcome:
    """Reboot `setup.hosts` (maintenance mode via vCenter, VMs powered off and on again, wait for a new boot),
    one more look at every target, and the verdict per host that came back."""
    from roce_wizard.engine import reboots  # noqa: PLC0415
    from roce_wizard.records.ledger import build_ledger

    book = build_ledger()
    reasons = {h: [f"{p.check}: {p.reason}" if p.reason else p.check for p in book[h].awaiting_reboot]
               for h in setup.hosts if h in book}
    transport = setup.transports()
    plan = reboots.RebootPlan(setup.targets, transport, power_off_vms=True, keep_vms_off=False,
                              command_timeout=setup.command_timeout, timeout_s=setup.reboot_timeout,
                              poll_s=setup.poll_s)
    try:
        outcomes = await reboots.reboot_hosts(
            plan, setup.hosts, batch=setup.batch, runlog=setup.runlog, reasons=reasons,
            on_progress=lambda host, state, note: emit(RebootProgress(host, getattr(state, "value", str(state)),
                                                                      note)))
    finally:
        for used in {id(t): t for t in transport.values()}.values():
            await used.close()
    outcome = RunOutcome(Mode.REBOOT, None, rebooted=outcomes)
    back = [h for h, o in outcomes.items() if o.ok]
    if back:
        outcome.report = await look("re-verify", setup.targets)  # every target: as after a fix
        for host in back:
            failing = reboot_verdict(outcome.report, awaited(host, book[host]), final=True) if host in book else []
            reboots.record_verification(setup.runlog, host, not failing, failing or [])
        setup.runlog.flush()
    return outcome
