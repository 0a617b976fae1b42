"""Reboot orchestration: the steps that reboot hosts and guests and record each one as an event.

The ledger those events fold into (what is pending, what was rebooted, verified) is
roce_wizard.records.ledger. The orchestration itself does not compare boot estimates: it asks the
host's uptime after the reboot and requires it to be shorter than the time since it asked for the reboot.

Orchestration (`reboot_hosts`): hosts go in batches (`batch` at a time, in parallel); for each ESXi
host: note its boot, power off its VMs when allowed (through vCenter when the inventory has one),
enter maintenance mode (vCenter, else `esxcli`), reboot, wait for the host to drop and come back
with a new boot (timeout, progress), exit maintenance mode. Linux hosts and guests are rebooted
over SSH. Every step is an event in the run log; the caller re-verifies and records the verdict
(`record_verification`).
"""

from __future__ import annotations

import asyncio
import shlex
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from roce_wizard.model import Target, TargetKind
from roce_wizard.parsers.esxi import parse_esxi_uptime
from roce_wizard.records.ledger import HostLedger, HostState, RebootRecord, iso_time
from roce_wizard.records.runlog import RunLog
from roce_wizard.transports.base import Transport, TransportError

ProgressSink = Callable[[str, HostState, str], None]


@dataclass
class RebootOutcome:
    host: str
    ok: bool
    message: str
    boot_before: str | None = None
    boot_after: str | None = None
    powered_off_vms: list[str] = field(default_factory=list)
    duration_s: float = 0.0


class RebootError(Exception):
    """A step of a host's reboot failed; the message says which and what the host answered."""


@dataclass
class _Boot:
    identity: str
    uptime_s: float | None = None  # ESXi: how long it has been up (asked just now)


async def read_boot(transport: Transport, target: Target, timeout: float = 30.0) -> _Boot:
    """The target's boot identity, asked now (raises TransportError when it cannot be reached)."""
    session = await transport.session(target)
    try:
        if target.kind is TargetKind.ESXI:
            result = await session.run("esxcli system stats uptime get", timeout=timeout)
            try:
                value = parse_esxi_uptime(result.stdout).get("uptime_us") if result.ok else None
            except Exception:  # ParseError or a parser's own bug: the uptime is unknown, said below
                value = None
            if not isinstance(value, int):
                raise RebootError(f"{target.name}: cannot read the uptime (`esxcli system stats uptime get` said "
                                  f"{(result.stdout + result.stderr).strip()[:200]!r})")
            return _Boot(f"booted {iso_time(time.time() - value / 1e6)}", value / 1e6)
        result = await session.run("cat /proc/sys/kernel/random/boot_id", timeout=timeout)
        boot = result.stdout.strip()
        if not result.ok or len(boot) != 36:
            raise RebootError(f"{target.name}: cannot read /proc/sys/kernel/random/boot_id "
                              f"({(result.stdout + result.stderr).strip()[:200]!r})")
        return _Boot(boot)
    finally:
        await session.close()


async def read_system_id(transport: Transport, target: Target, timeout: float = 30.0) -> str | None:
    """Which machine answers under the target's name, asked now, as RW003 records it (the ESXi host's
    SMBIOS UUID from hostsummary, a Linux installation's /etc/machine-id); None when it cannot tell."""
    from roce_wizard.parsers.esxi import parse_esxi_host_summary  # noqa: PLC0415
    from roce_wizard.parsers.linux import parse_machine_id  # noqa: PLC0415

    session = await transport.session(target)
    try:
        esxi = target.kind is TargetKind.ESXI
        result = await session.run("vim-cmd hostsvc/hostsummary" if esxi else "cat /etc/machine-id", timeout=timeout)
    finally:
        await session.close()
    try:
        if esxi:
            uuid = parse_esxi_host_summary(result.stdout).get("uuid")
            return "uuid:" + uuid.strip().lower() if isinstance(uuid, str) and uuid.strip() else None
        return "machine-id:" + parse_machine_id(result.stdout)["machine_id"]
    except Exception:  # ParseError or a parser's own bug: the machine is not identified (never rebooted)
        return None


async def _run(transport: Transport, target: Target, command: str, timeout: float) -> str:
    session = await transport.session(target)
    try:
        result = await session.run(command, timeout=timeout)
    finally:
        await session.close()
    if not result.ok:
        said = (result.stderr or result.stdout).strip()[:400]
        raise RebootError(f"{target.name}: `{command}` failed (exit {result.exit_status}): {said}")
    return result.stdout


@dataclass
class RebootPlan:
    """Who is rebooted how: the inventory's targets and the transports for them."""

    targets: list[Target]
    transports: Mapping[TargetKind, Transport]
    power_off_vms: bool = False  # may power off the VMs running on a host (else they block maintenance mode)
    keep_vms_off: bool = False  # leave the VMs this tool powered off off (the caller powers them on later)
    timeout_s: float = 1200.0  # per host, from the reboot request to back
    poll_s: float = 5.0
    command_timeout: float = 120.0

    @property
    def vcenter(self) -> Target | None:
        return next((t for t in self.targets if t.kind is TargetKind.VCENTER), None)

    def target(self, name: str) -> Target:
        for t in self.targets:
            if t.name == name:
                return t
        raise KeyError(name)

    def guests_on(self, host: str) -> list[Target]:
        return [t for t in self.targets if t.kind is TargetKind.GUEST and t.host == host]


async def _vsphere(plan: RebootPlan, action: str, *args: str) -> str:
    vc = plan.vcenter
    assert vc is not None
    line = " ".join(["vsphere", action, *(shlex.quote(a) for a in args)])
    return await _run(plan.transports[TargetKind.VCENTER], vc, line, plan.command_timeout)


async def _vms_on(plan: RebootPlan, host: str) -> list[str]:
    """Powered-on VMs on `host` as vCenter sees them (every VM, not only the inventory's)."""
    import json  # noqa: PLC0415

    out = await _vsphere(plan, "vms")
    doc = json.loads(out)
    running = []
    for vm in doc.get("vms") or []:
        where = (vm.get("runtime.host") or {}).get("name")
        if where == host and vm.get("runtime.powerState") == "poweredOn":
            running.append(str(vm.get("name")))
    return sorted(running)


async def set_vm_power(plan: RebootPlan, vm: str, host: str | None, state: str, runlog: RunLog | None) -> None:
    """Power a VM off or on through vCenter; recorded as a `vm-power` event."""
    await _vsphere(plan, "vm-power", state, vm)
    if runlog is not None:
        runlog.event("vm-power", target=vm, host=host, state=state)


async def exit_maintenance(plan: RebootPlan, name: str, runlog: RunLog | None = None) -> None:
    """Take an ESXi host out of maintenance mode (vCenter when the inventory has one, else esxcli)."""
    target = plan.target(name)
    if plan.vcenter is not None:
        await _vsphere(plan, "host-maintenance", "exit", name)
    else:
        await _run(plan.transports[target.kind], target, "esxcli system maintenanceMode set --enable false",
                   plan.command_timeout)
    if runlog is not None:
        runlog.event("maintenance-exit", target=name, via="vcenter" if plan.vcenter is not None else "esxcli")


async def reboot_one(plan: RebootPlan, name: str, *, runlog: RunLog | None = None,
                     on_progress: ProgressSink | None = None, reasons: list[str] | None = None) -> RebootOutcome:
    """Reboot one host or guest and wait for it to come back with a new boot."""
    target = plan.target(name)
    transport = plan.transports[target.kind]
    started = time.monotonic()
    wall_started = time.time()
    progress = on_progress or (lambda *_: None)

    def event(type_: str, **data: Any) -> None:
        if runlog is not None:
            runlog.event(type_, target=name, **data)

    outcome = RebootOutcome(name, False, "")
    try:
        before = await read_boot(transport, target, plan.command_timeout)
        outcome.boot_before = before.identity
        via = ("vcenter" if target.kind is TargetKind.ESXI and plan.vcenter is not None else
               "esxcli" if target.kind is TargetKind.ESXI else "ssh")
        event("reboot-requested", boot_before=before.identity, reasons=reasons or [], via=via)
        if target.kind is TargetKind.ESXI:
            progress(name, HostState.ENTERING_MAINTENANCE, "entering maintenance mode")
            if plan.vcenter is not None:
                running = await _vms_on(plan, name)
                if running and not plan.power_off_vms:
                    raise RebootError(f"{name}: VMs are powered on ({', '.join(running)}); power them off or allow "
                                      "it (--allow-disruptive) so the host can enter maintenance mode")
                for vm in running:
                    progress(name, HostState.ENTERING_MAINTENANCE, f"powering off VM {vm}")
                    await set_vm_power(plan, vm, name, "off", runlog)
                    outcome.powered_off_vms.append(vm)
                await _vsphere(plan, "host-maintenance", "enter", name)
                event("maintenance-enter", via="vcenter")
                progress(name, HostState.REBOOTING, "rebooting (vCenter RebootHost_Task)")
                await _vsphere(plan, "host-reboot", name)
            else:
                await _run(transport, target, "esxcli system maintenanceMode set --enable true", plan.command_timeout)
                event("maintenance-enter", via="esxcli")
                progress(name, HostState.REBOOTING, "rebooting (esxcli system shutdown reboot)")
                event_reason = ("roce-wizard: " + "; ".join(reasons or []))[:120]
                try:
                    await _run(transport, target, "esxcli system shutdown reboot -r " + shlex.quote(event_reason),
                               plan.command_timeout)
                except TransportError:
                    pass  # the connection dropped under the command: the reboot started
        else:
            progress(name, HostState.REBOOTING, "rebooting (systemctl reboot)")
            try:
                await _run(transport, target, "systemctl reboot || reboot", plan.command_timeout)
            except TransportError:
                pass
        after = await _wait_back(plan, target, transport, before, wall_started, name, progress, event)
        outcome.boot_after = after.identity
        event("host-back", boot_after=after.identity)
        progress(name, HostState.BACK, f"after {time.monotonic() - started:.0f}s")  # shown after its state: "back — after 42s"
        if target.kind is TargetKind.ESXI:
            await exit_maintenance(plan, name, runlog)
            if outcome.powered_off_vms and not plan.keep_vms_off:
                for vm in outcome.powered_off_vms:
                    progress(name, HostState.BACK, f"powering on VM {vm}")
                    await set_vm_power(plan, vm, name, "on", runlog)
        outcome.ok, outcome.message = True, f"rebooted in {time.monotonic() - started:.0f}s"
    except (RebootError, TransportError) as exc:
        message = exc.message if isinstance(exc, TransportError) else str(exc)
        outcome.message = message
        event("reboot-failed", error=message)
        progress(name, HostState.FAILED, message)
    outcome.duration_s = round(time.monotonic() - started, 3)
    return outcome


async def _wait_back(plan: RebootPlan, target: Target, transport: Transport, before: _Boot, requested: float,
                     name: str, progress: ProgressSink, event: Callable[..., None]) -> _Boot:
    """Poll until the target answers with a boot newer than the request (it went down on the way)."""
    deadline = time.monotonic() + plan.timeout_s
    seen_down = False
    while True:
        try:
            now = await read_boot(transport, target, min(plan.command_timeout, 30.0))
        except (TransportError, RebootError, OSError):
            if not seen_down:
                seen_down = True
                event("host-down")
                progress(name, HostState.REBOOTING, "down")
            now = None
        if now is not None:
            if before.uptime_s is not None and now.uptime_s is not None:
                if now.uptime_s < time.time() - requested:
                    return now
            elif now.identity != before.identity:
                return now
        if time.monotonic() > deadline:
            raise RebootError(f"{name} did not come back with a new boot within {plan.timeout_s:g}s "
                              f"({'it went down' if seen_down else 'it never went down'})")
        waited = plan.timeout_s - (deadline - time.monotonic())
        progress(name, HostState.REBOOTING, f"waiting for the host ({waited:.0f}s)")
        await asyncio.sleep(plan.poll_s)


async def resume_interrupted(plan: RebootPlan, book: Mapping[str, HostLedger], *, runlog: RunLog | None = None,
                             on_progress: ProgressSink | None = None) -> dict[str, RebootOutcome]:
    """Reboots an earlier run started and never saw finish (it was killed): wait for each such host to
    answer, then record whether it booted since the request (`host-back`, so the reboot is not done again)
    or not (`reboot-failed`: its items still wait, and the caller reboots it as usual)."""
    progress = on_progress or (lambda *_: None)
    open_hosts = {name: entry.history[-1] for name, entry in book.items()
                  if entry.state in (HostState.REBOOTING, HostState.ENTERING_MAINTENANCE) and entry.history}

    async def one(name: str, record: RebootRecord) -> RebootOutcome:
        target = plan.target(name)
        transport = plan.transports[target.kind]
        progress(name, HostState.REBOOTING, "an earlier run's reboot: waiting for the host")
        deadline = time.monotonic() + plan.timeout_s
        while True:
            try:
                boot = await read_boot(transport, target, min(plan.command_timeout, 30.0))
                break
            except (TransportError, RebootError, OSError):
                if time.monotonic() > deadline:
                    message = f"{name} did not answer within {plan.timeout_s:g}s after an interrupted reboot"
                    if runlog is not None:
                        runlog.event("reboot-failed", target=name, error=message)
                    progress(name, HostState.FAILED, message)
                    return RebootOutcome(name, False, message)
                await asyncio.sleep(plan.poll_s)
        try:
            machine = await read_system_id(transport, target, min(plan.command_timeout, 30.0))
        except (TransportError, OSError):
            machine = None
        if record.system_id is None or machine != record.system_id:
            # another machine under that name (another cluster's ledger), or one the run could not tell:
            # the interrupted reboot is not this host's, and nothing is recorded for it here
            progress(name, HostState.OK, f"the interrupted reboot of {name} (run {record.run or '?'}) was of "
                     f"another machine ({record.system_id or 'unidentified'}; this one is {machine or 'unknown'}):"
                     " not resumed")
            return RebootOutcome(name, False, "another machine's interrupted reboot")
        rebooted = (boot.uptime_s < time.time() - record.requested_at if boot.uptime_s is not None
                    else record.boot_id_before is not None and boot.identity != record.boot_id_before)
        if runlog is not None:
            if rebooted:
                runlog.event("host-back", target=name, boot_after=boot.identity, resumed=True)
            else:
                runlog.event("reboot-failed", target=name, error="interrupted before the host rebooted")
        progress(name, HostState.BACK if rebooted else HostState.PENDING,
                 "it rebooted meanwhile" if rebooted else "it had not rebooted: rebooting it again")
        return RebootOutcome(name, rebooted, "rebooted meanwhile" if rebooted else "not rebooted",
                             record.boot_id_before, boot.identity if rebooted else None)

    done = await asyncio.gather(*(one(n, r) for n, r in open_hosts.items() if plan.target(n).kind in
                                  (TargetKind.ESXI, TargetKind.LINUX, TargetKind.GUEST)))
    return {o.host: o for o in done}


async def reboot_hosts(plan: RebootPlan, hosts: list[str], *, batch: int = 1, runlog: RunLog | None = None,
                       on_progress: ProgressSink | None = None,
                       reasons: Mapping[str, list[str]] | None = None) -> dict[str, RebootOutcome]:
    """Reboot `hosts` in batches of `batch` at a time (in parallel within a batch); a batch waits for
    the previous one. Returns the outcome per host; failures are outcomes, not exceptions."""
    outcomes: dict[str, RebootOutcome] = {}
    batch = max(1, batch)
    for i in range(0, len(hosts), batch):
        group = hosts[i:i + batch]
        for name in group:
            if on_progress is not None:
                on_progress(name, HostState.PENDING, f"batch {i // batch + 1}")
        done = await asyncio.gather(*(reboot_one(plan, name, runlog=runlog, on_progress=on_progress,
                                                 reasons=list((reasons or {}).get(name, [])))
                                      for name in group))
        for outcome in done:
            outcomes[outcome.host] = outcome
    return outcomes


def record_verification(runlog: RunLog, host: str, verified: bool, failing: list[str]) -> None:
    """After re-checking a rebooted host: its pending values are current (or which checks still fail)."""
    runlog.event("reboot-verified", target=host, verified=verified, failing=failing,
                 error=None if verified else f"still failing after the reboot: {', '.join(failing)}")
