"""Fix, reboot, verify, repeat: the rounds `fix --reboot` and the wizard's "fix everything" run, and the
one rule by which a reboot's changes are judged current (`reboot_verdict`), also after the wizard's reboots.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from roce_wizard.engine.events import Hooks, RebootProgress, RoundJudged, RunStopped, VmsStillOff, log_event
from roce_wizard.engine.fixes import FixRun, Planned, apply_plans, plan_fixes
from roce_wizard.engine.judge import RunReport
from roce_wizard.model import Policy, RebootKind, Safety, Status, Target, TargetKind
from roce_wizard.records.runlog import RunLog
from roce_wizard.transports.base import Transport, TransportError


@dataclass
class FixContext:
    """What one `fix` works on: the targets and checks doctor would run, and how to reach them."""

    targets: list[Target]
    checks: dict[str, Any]  # code -> LoadedCheck
    stage_of: dict[str, Any]
    policy: Policy
    make_transports: Callable[[], Mapping[TargetKind, Transport]]  # fresh ones per phase (phases close them)
    allow: set[Safety]
    runlog: RunLog
    concurrency: int = 32
    command_timeout: float = 120.0


@dataclass
class Round:
    number: int
    report: RunReport
    planned: list[Planned]
    fixrun: FixRun | None = None
    rebooted: dict[str, Any] = field(default_factory=dict)  # name -> reboots.RebootOutcome
    powered_on: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    vms_off: list[Any] = field(default_factory=list)  # vm_restore.VmStillOff: powered off by this tool, still off
    stopped: RunStopped | None = None  # the user stopped the run in this round (at a safe point)


async def fix_until_ready(ctx: FixContext, *, reboot: bool, batch: int = 1, max_rounds: int = 30,
                          power_off_vms: bool = False, reboot_timeout: float = 1200.0, poll_s: float = 5.0,
                          hooks: Hooks | None = None) -> list[Round]:
    """Check, fix what is allowed, reboot what waits for a reboot, and again, until a round has nothing
    left to do (or `max_rounds`). Batching follows from the plans' `needs`: everything that can go in before
    a reboot does, so a host on day 0 takes two reboots (MFT + NMST + driver + staged BIOS; then firmware
    configuration + module parameters + the vSphere VF count). VMs powered off for a host reboot stay off
    until no host needs another reboot, then come back once (one restart per VM, which also covers guest
    changes that wait for a VM reboot).

    A stop the front end asks for (`hooks.stop_requested`) ends the run at the next safe point: before a
    round's look, between targets' plans (fixes.apply_plans), before reboots. A RunStopped event says where;
    what every run does at its end (VMs this tool powered off come back, or are named) still happens."""
    from roce_wizard.engine.checkpass import run_checks  # noqa: PLC0415
    from roce_wizard.engine.pending import mark_pending  # noqa: PLC0415
    from roce_wizard.engine.reboots import (  # noqa: PLC0415
        RebootError,
        RebootOutcome,
        RebootPlan,
        exit_maintenance,
        reboot_hosts,
        record_verification,
        resume_interrupted,
        set_vm_power,
    )
    from roce_wizard.engine.vm_restore import restore_vms, unconfirmed_vms_off, vms_off  # noqa: PLC0415
    from roce_wizard.records.ledger import (  # noqa: PLC0415
        HOST_REBOOTS,
        HostState,
        all_events,
        ledger_from_events,
        vm_aliases,
    )
    from roce_wizard.records.ledger_scope import identities_in_run, scope_events, scoped_names  # noqa: PLC0415

    hooks = hooks or Hooks()

    def emit(event: Any) -> None:
        log_event(ctx.runlog, event)
        hooks.on_event(event)

    def on_progress(host: str, state: Any, note: str) -> None:  # reboots.py reports (host, HostState, text)
        emit(RebootProgress(host, getattr(state, "value", str(state)), note))

    def stop(where: str, current: Round | None, fixrun: FixRun | None = None) -> bool:
        """True (and the RunStopped event) when the user asked to stop; `fixrun`: a round's fixes stopped."""
        if fixrun is None and not hooks.stop_requested():
            return False
        done = sorted({f"{r.target} {r.check}" for r in fixrun.results}) if fixrun is not None else []
        pending = [f"{p.target.name} {p.plan.check}" for p in fixrun.not_run] if fixrun is not None else []
        event = RunStopped(where, current.number if current is not None else 0, done, pending)
        if current is not None:
            current.stopped = event
        emit(event)
        return True

    names = {t.name: t for t in ctx.targets}
    base = ctx.runlog.path.parent.parent
    rounds: list[Round] = []
    rebooted_last: dict[str, list[tuple[str, str, str]]] = {}  # host -> items waiting for its reboot
    to_verify: dict[str, list[tuple[str, str, str]]] = {}
    rebooted_in: dict[str, int] = {}  # host -> the round of its last reboot
    failed_here: set[str] = set()  # hosts whose reboot failed in this run: not tried again in it
    aliases = vm_aliases(ctx.targets)
    live: dict[str, str] = {}  # target -> the machine identity this run's checks read (RW003)

    def ledger(scoped: bool = True) -> dict[str, Any]:
        """The ledger of this inventory's machines: for its hosts and guests only the runs that saw the same
        machine as this run's live checks did (host names repeat across clusters: ledger_scope)."""
        ctx.runlog.flush()
        events = all_events(base)
        if scoped:
            live.clear()
            live.update(identities_in_run(events, ctx.runlog.path.name))
            events, _ = scope_events(events, aliases, live, scoped_names(ctx.targets), ctx.runlog.path.name)
        return {n: v for n, v in ledger_from_events(events, aliases).items() if n in names}

    @contextlib.asynccontextmanager
    async def reboot_plan(keep_vms_off: bool) -> AsyncIterator[RebootPlan]:
        """A RebootPlan on fresh transports, closed after the phase (a reboot drops their connections)."""
        plan = RebootPlan(ctx.targets, ctx.make_transports(), power_off_vms=power_off_vms,
                          keep_vms_off=keep_vms_off, timeout_s=reboot_timeout, poll_s=poll_s,
                          command_timeout=ctx.command_timeout)
        try:
            yield plan
        finally:
            for used in {id(t): t for t in plan.transports.values()}.values():
                await used.close()

    applied: set[tuple[str, str]] = set()  # (target, command) run since the target's last boot
    async def _rounds() -> list[Round]:
        nonlocal applied, rebooted_last
        book = ledger(scoped=False)  # before any check has read who answers: resume_interrupted asks itself
        if any(e.state in (HostState.REBOOTING, HostState.ENTERING_MAINTENANCE) for e in book.values()):
            # an earlier run was killed mid-reboot: see its reboots through first
            async with reboot_plan(keep_vms_off=True) as plan:
                resumed = await resume_interrupted(plan, book, runlog=ctx.runlog, on_progress=on_progress)
            rebooted_last = {h: awaited(h, book[h]) for h, outcome in resumed.items() if outcome.ok}
        for number in range(1, max_rounds + 1):
            if stop("before the checks of a round", rounds[-1] if rounds else None):
                break
            report = await run_checks(ctx.targets, ctx.checks, ctx.make_transports(), ctx.policy,
                                      stage_of=ctx.stage_of, runlog=ctx.runlog, concurrency=ctx.concurrency,
                                      command_timeout=ctx.command_timeout, on_event=hooks.on_event)
            book = ledger()
            mark_pending(report.findings, book)  # a pass on a staged value shows it waits for a reboot
            # staged changes, under the host they wait on and the target they were made on (a BIOS value: the BMC)
            staged = {(who, p.check) for n, entry in book.items() for p in entry.awaiting_reboot
                      for who in (n, p.target)}
            planned, errors = plan_fixes(report, ctx.policy, ctx.allow, staged=staged)
            for item in planned:  # ran already on this boot and still planned: the change waits for a reboot
                if item.allowed and all((item.target.name, st.command) in applied for st in item.plan.steps):
                    item.allowed, item.waits_for = False, ("a reboot",)
            current = Round(number, report, planned, errors=errors,
                            vms_off=vms_off(book) + unconfirmed_vms_off(ledger(scoped=False), book, ctx.targets, live))
            rounds.append(current)
            for host, waiting in rebooted_last.items():
                to_verify[host], rebooted_in[host] = waiting, number - 1
            rebooted_last = {}
            # the hosts rebooted earlier: are the values that waited for the reboot current now? A check blocked
            # right after a boot (mst is not started yet) is judged a round later, once what blocks it is fixed.
            for host, waiting in list(to_verify.items()):
                failing = reboot_verdict(report, waiting,
                                         final=number - rebooted_in[host] >= 3 or number >= max_rounds)
                if failing is None:
                    continue
                record_verification(ctx.runlog, host, not failing, failing)
                del to_verify[host]
            emit(RoundJudged(current))
            runnable = [p for p in planned if p.allowed]
            if runnable and not hooks.confirm(current):
                break
            if runnable:
                if stop("before the fixes of a round", current):
                    break
                current.fixrun = await apply_plans(planned, ctx.make_transports(), runlog=ctx.runlog,
                                                   command_timeout=ctx.command_timeout, on_event=hooks.on_event,
                                                   stop_requested=hooks.stop_requested)
                applied.update((r.target, r.command) for r in current.fixrun.results if r.ok)
                if current.fixrun.stopped:
                    stop("between the fixes of two targets", current, current.fixrun)
                    break
                if not reboot or not any(r.ok for r in current.fixrun.results):
                    break
                continue  # look again before any reboot: a fix can unblock others that ride the same reboot
            if not reboot or stop("before the reboots of a round", current):
                break
            book = ledger()
            # NEVER reboot without this run's live word: the machine answering under that name now (RW003's
            # identity, this run) is the one the change was made on (the scoped ledger), and its boot read now
            # is older than the change. A host whose reboot already failed in this run is not tried again.
            hosts = sorted(n for n, entry in book.items() if names[n].kind in (TargetKind.ESXI, TargetKind.LINUX)
                           and n in live and n not in failed_here
                           and any(p.reboot in HOST_REBOOTS for p in entry.awaiting_reboot))
            off = {vm: host for host, entry in book.items() for vm in entry.powered_off_vms}
            if hosts:
                async with reboot_plan(keep_vms_off=True) as plan:
                    reasons = {h: [f"{p.check}: {p.reason}" if p.reason else p.check for p in book[h].awaiting_reboot]
                               for h in hosts}
                    current.rebooted = await reboot_hosts(plan, hosts, batch=batch, runlog=ctx.runlog,
                                                          on_progress=on_progress, reasons=reasons)
                rebooted_last = {h: awaited(h, book[h]) for h, outcome in current.rebooted.items() if outcome.ok}
                failed_here.update(h for h, outcome in current.rebooted.items() if not outcome.ok)
                applied = {(t, c) for t, c in applied if t not in rebooted_last}
                continue  # every reboot failed: the next round brings the VMs back, then stops
            # no host waits for a reboot: hosts this tool left in maintenance mode (a run killed mid-reboot) leave it
            stuck = sorted(n for n, entry in book.items() if entry.in_maintenance and names[n].kind is TargetKind.ESXI)
            if stuck:
                async with reboot_plan(keep_vms_off=False) as plan:
                    for host in stuck:
                        on_progress(host, "maintenance", "leaving maintenance mode (entered by an earlier run)")
                        try:
                            await exit_maintenance(plan, host, ctx.runlog)
                        except (RebootError, TransportError) as exc:
                            current.errors.append(f"{host}: could not leave maintenance mode: {exc}")
            # the VMs this tool powered off come back (once)
            vm_targets = {t.vm: t for t in ctx.targets if t.kind is TargetKind.GUEST and t.vm}
            if off:
                async with reboot_plan(keep_vms_off=False) as plan:
                    for vm, host in sorted(off.items()):
                        if plan.vcenter is None:
                            current.errors.append(f"{vm}: powered off by an earlier run; no vCenter to power it on")
                            continue
                        on_progress(host, "power-on", f"powering on VM {vm}")
                        try:
                            await set_vm_power(plan, vm, host, "on", ctx.runlog)
                            current.powered_on.append(vm)
                        except Exception as exc:  # noqa: BLE001 - reported, the rest go on
                            current.errors.append(f"{vm}: power on failed: {exc}")
                back = [vm_targets[v] for v in current.powered_on if v in vm_targets]
                applied = {(t, c) for t, c in applied if t not in {g.name for g in back}}
                await _wait_reachable(back, ctx.make_transports, reboot_timeout, poll_s)
                if not current.powered_on:
                    break
                continue
            # guests whose change waits for a VM reboot, on a host that stays up
            guests = sorted(n for n, entry in book.items() if names[n].kind is TargetKind.GUEST
                            and entry.awaiting_reboot and n in live and n not in failed_here)
            if guests:
                async with reboot_plan(keep_vms_off=False) as plan:
                    # a VM device/configuration change needs a power cycle (vCenter); a guest OS change a reboot
                    cycle = [g for g in guests if plan.vcenter is not None and names[g].vm
                             and any(p.reboot is RebootKind.VM_POWER_OFF for p in book[g].awaiting_reboot)]
                    current.rebooted = await reboot_hosts(plan, [g for g in guests if g not in cycle],
                                                          batch=max(batch, len(guests)), runlog=ctx.runlog,
                                                          on_progress=on_progress)
                    for g in cycle:
                        vm, host = names[g].vm or g, names[g].host
                        on_progress(g, "power-cycle", f"power cycling VM {vm} (its change needs it)")
                        try:
                            await set_vm_power(plan, vm, host, "off", ctx.runlog)
                            await set_vm_power(plan, vm, host, "on", ctx.runlog)
                            current.powered_on.append(vm)
                            current.rebooted[g] = RebootOutcome(g, True, "power cycled")
                        except Exception as exc:  # noqa: BLE001 - reported, the rest go on
                            current.errors.append(f"{vm}: power cycle failed: {exc}")
                await _wait_reachable([names[g] for g in cycle], ctx.make_transports, reboot_timeout, poll_s)
                rebooted_last = {g: awaited(g, book[g]) for g, outcome in current.rebooted.items() if outcome.ok}
                failed_here.update(g for g, outcome in current.rebooted.items() if not outcome.ok)
                applied = {(t, c) for t, c in applied if t not in rebooted_last}
                if not rebooted_last:
                    break
                continue
            break
        if rounds and to_verify:  # the loop ended with reboots still unjudged: say so in the ledger
            for host, waiting in to_verify.items():
                failing = reboot_verdict(rounds[-1].report, waiting, final=True) or []
                record_verification(ctx.runlog, host, not failing, failing)
        return rounds

    try:
        return await _rounds()
    finally:
        # whatever ended the run: the VMs this tool powered off come back, or are named
        book = ledger()
        off = vms_off(book)
        still = list(off)
        if off and reboot:
            async with reboot_plan(keep_vms_off=False) as plan:
                powered, still = await restore_vms(plan, off, ctx.runlog, on_progress,
                                                   in_maintenance=[h for h, e in book.items() if e.in_maintenance])
            if rounds:
                rounds[-1].powered_on.extend(powered)
        # off by this tool on a host this run could not identify (it did not answer): named, never acted on
        still += unconfirmed_vms_off(ledger(scoped=False), book, ctx.targets, set(live))
        if rounds:
            rounds[-1].vms_off = list(still)
        emit(VmsStillOff(list(still)))


def reboot_verdict(report: RunReport, waiting: list[tuple[str, str, str]], *, final: bool) -> list[str] | None:
    """THE rule by which a reboot's changes are judged current (after `fix --reboot`'s reboots, "fix
    everything"'s and the wizard's own): the checks among `waiting` (awaited()) that do not pass now, or None
    while one is unjudged (blocked right after a boot: mst not started yet) and this is not the `final` look,
    which judges an unjudged change as not current."""
    verdicts = _verdicts(report)
    seen = [_verdict(verdicts, item) for item in waiting]
    if "unjudged" in seen and not final:
        return None
    return sorted({item[2] for item, v in zip(waiting, seen, strict=True) if v != "pass"})


def awaited(owner: str, entry: Any) -> list[tuple[str, str, str]]:
    """(host, target the change was made on, check) of a ledger entry's items waiting for a reboot: what a
    re-check must see current. RW214 is left out: after a reboot it reports whatever is pending now, newly
    staged changes included."""
    return sorted({(owner, p.target, p.check) for p in entry.awaiting_reboot if p.check != "RW214"})


def _verdict(verdicts: dict[tuple[str, str], str], item: tuple[str, str, str]) -> str:
    """The check's verdict where it reports the change: on the target it was made on (a BMC) or on the
    host/VM it is about (vCenter changes are reported on the host or VM); unjudged when on neither."""
    owner, target, check = item
    found = [verdicts[k] for k in ((target, check), (owner, check)) if k in verdicts]
    if not found:
        return "unjudged"
    return "fail" if "fail" in found else "unjudged" if "unjudged" in found else "pass"


def _verdicts(report: RunReport) -> dict[tuple[str, str], str]:
    """(target, check) -> pass / fail / unjudged (blocked or could not run); not-applicable skips pass."""
    out: dict[tuple[str, str], str] = {}
    rank = {"pass": 0, "unjudged": 1, "fail": 2}
    for f in report.findings:
        if f.status is Status.PASS or (f.status is Status.SKIP and f.blocked_by is None):
            verdict = "pass"
        elif f.status in (Status.FAIL, Status.WARN):
            verdict = "fail"
        else:
            verdict = "unjudged"
        key = (f.target, f.check)
        if rank[verdict] > rank[out.get(key, "pass")] or key not in out:
            out[key] = verdict if key not in out else max(out[key], verdict, key=rank.__getitem__)
    return out


async def _wait_reachable(targets: list[Target], make_transports: Callable[[], Mapping[TargetKind, Transport]],
                          timeout: float, poll_s: float) -> None:
    """Wait (bounded) until every target answers a session again (VMs just powered on)."""
    if not targets:
        return
    import asyncio  # noqa: PLC0415

    transports = make_transports()
    deadline = time.monotonic() + timeout
    try:
        for target in targets:
            while True:
                try:
                    session = await transports[target.kind].session(target)
                    await session.close()
                    break
                except TransportError:
                    if time.monotonic() > deadline:
                        return
                    await asyncio.sleep(poll_s)
    finally:
        for used in {id(t): t for t in transports.values()}.values():
            await used.close()

