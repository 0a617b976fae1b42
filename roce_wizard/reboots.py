"""The reboot ledger (DOMAIN.md §5) and reboot orchestration.

The ledger is derived from the run logs (every ``events.jsonl`` under the state dir), never kept
beside them, so it survives the tool being killed at any point: per host the boot identity at the
last observation, the pending items (a fix step that succeeded and waits for a reboot, or RW214
saying something is pending) and the reboot history (requested, down, back, boot changed, verified).

A pending item is done only when the host booted after the item was recorded AND a later run shows
the item's check passing (the new value is current). A boot alone leaves it pending, state `back`.

Boot identity: Linux has `/proc/sys/kernel/random/boot_id`; ESXi has none, so its boot is the
moment `now - uptime` (RW003's `uptime_us` against the event's time), compared with the time of the
fix. The orchestration itself does not compare estimates: it asks the host's uptime after the
reboot and requires it to be shorter than the time since it asked for the reboot.

Orchestration (`reboot_hosts`): hosts go in batches (`batch` at a time, in parallel); for each ESXi
host: note its boot, power off its VMs when allowed (through vCenter when the inventory has one),
enter maintenance mode (vCenter, else `esxcli`), reboot, wait for the host to drop and come back
with a new boot (timeout, progress), exit maintenance mode. Linux hosts and guests are rebooted
over SSH. Every step is an event in the run log; the caller re-verifies and records the verdict
(`record_verification`).
"""

from __future__ import annotations

import asyncio
import enum
import re
import shlex
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from roce_wizard.ledger_scope import identities_in_run, run_identities, scope_events, scoped_names
from roce_wizard.model import RebootKind, Target, TargetKind
from roce_wizard.parsers.esxi import parse_esxi_uptime
from roce_wizard.runlog import RunLog, read_events, runs_dir
from roce_wizard.transports.base import Transport, TransportError

# ---------------------------------------------------------------------------------- the ledger


class HostState(str, enum.Enum):
    OK = "ok"  # nothing pending
    PENDING = "pending"  # changes wait for a reboot
    ENTERING_MAINTENANCE = "entering-maintenance"
    REBOOTING = "rebooting"
    BACK = "back"  # booted again; the pending values are not yet seen current
    VERIFIED = "verified"  # the last reboot's items were re-checked and are current
    FAILED = "failed"  # the last reboot did not complete (timeout, refused, boot unchanged)


HOST_REBOOTS = frozenset({RebootKind.HOST, RebootKind.FW_RESET, RebootKind.BIOS, RebootKind.DRIVER_RELOAD})
VM_RESTARTS = frozenset({RebootKind.VM_REBOOT, RebootKind.VM_POWER_OFF})


@dataclass
class PendingItem:
    check: str
    target: str
    reboot: RebootKind
    reason: str
    since: float  # when it was recorded (epoch seconds)
    boot_before: str | None = None  # the boot identity last seen before it
    booted_over: bool = False  # the target booted after it was recorded (not yet seen current)
    run: str | None = None  # the run that recorded it (its directory name)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "reboot": self.reboot.value, "since": _iso(self.since)}


@dataclass
class RebootRecord:
    requested_at: float
    down_at: float | None = None
    back_at: float | None = None
    boot_id_before: str | None = None
    boot_id_after: str | None = None
    verified: bool | None = None
    error: str | None = None
    reasons: list[str] = field(default_factory=list)
    via: str | None = None  # "vcenter", "esxcli", "ssh"
    run: str | None = None  # the run that asked for it
    system_id: str | None = None  # the machine that run saw under this name (RW003)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("requested_at", "down_at", "back_at"):
            out[key] = _iso(out[key]) if out[key] is not None else None
        return out


@dataclass
class HostLedger:
    host: str
    boot_id: str | None = None
    boot_seen_at: float | None = None
    state: HostState = HostState.OK
    pending: list[PendingItem] = field(default_factory=list)
    history: list[RebootRecord] = field(default_factory=list)
    in_maintenance: bool = False  # entered by this tool and not yet left
    powered_off_vms: list[str] = field(default_factory=list)  # by this tool, not yet powered on
    powered_off_at: dict[str, float] = field(default_factory=dict)  # VM -> when this tool powered it off
    powered_off_run: dict[str, str] = field(default_factory=dict)  # VM -> the run that powered it off
    system_id: str | None = None  # the machine last seen under this name (RW003: SMBIOS UUID / machine-id)

    @property
    def awaiting_reboot(self) -> list[PendingItem]:
        """Items no boot has happened since."""
        return [p for p in self.pending if not p.booted_over]

    @property
    def reboots(self) -> int:
        """Reboots that happened (the boot changed)."""
        return sum(1 for r in self.history if r.boot_id_after is not None)

    def to_dict(self) -> dict[str, Any]:
        return {"host": self.host, "boot_id": self.boot_id, "state": self.state.value,
                "boot_seen_at": _iso(self.boot_seen_at) if self.boot_seen_at else None,
                "pending": [p.to_dict() for p in self.pending], "history": [r.to_dict() for r in self.history],
                "in_maintenance": self.in_maintenance, "powered_off_vms": list(self.powered_off_vms),
                "powered_off": [{"vm": vm, "since": _iso(self.powered_off_at[vm]) if vm in self.powered_off_at
                                 else None, "run": self.powered_off_run.get(vm)} for vm in self.powered_off_vms],
                "system_id": self.system_id, "reboots": self.reboots}


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(ts))


def _boot_of_finding(event: dict[str, Any]) -> tuple[str | None, float | None]:
    """(boot identity, boot epoch or None) of an RW003 finding event."""
    details = event.get("details") or {}
    if isinstance(details.get("boot_id"), str):
        return details["boot_id"], None
    uptime = details.get("uptime_us")
    if isinstance(uptime, int) and isinstance(event.get("ts"), (int, float)):
        epoch = float(event["ts"]) - uptime / 1e6
        return f"booted {_iso(epoch)}", epoch
    return None, None


def ledger_from_events(events: Iterable[dict[str, Any]],
                       aliases: Mapping[str, str] | None = None) -> dict[str, HostLedger]:
    """Fold run-log events (oldest first) into one ledger per host/guest that ever needed a reboot
    or was seen booting. `aliases` maps a VM's vCenter name to its guest target's name (a change made
    through vCenter for a VM is that guest's)."""
    aliases = aliases or {}
    events = list(events)
    identity = run_identities(events)
    ledgers: dict[str, HostLedger] = {}
    boot_epoch: dict[str, float] = {}  # ESXi: the boot moment last seen
    open_record: dict[str, RebootRecord] = {}

    def of(name: str) -> HostLedger:
        if name not in ledgers:
            ledgers[name] = HostLedger(name)
        return ledgers[name]

    def booted(ledger: HostLedger, epoch: float | None = None) -> None:
        """A boot was seen: every item recorded before it has been rebooted over."""
        for item in ledger.pending:
            if epoch is None or item.since < epoch:
                item.booted_over = True

    for event in events:
        kind, name, ts = event.get("type"), event.get("target"), event.get("ts") or 0.0
        run = str(event.get("run")) if event.get("run") else None
        if not isinstance(name, str) or not name:
            continue
        if kind == "finding":
            check, status = event.get("check"), event.get("status")
            if check == "RW003" and status == "pass":
                boot, epoch = _boot_of_finding(event)
                if boot is None:
                    continue
                ledger = of(name)
                ledger.system_id = identity.get((run or "", name), ledger.system_id)
                if epoch is not None:
                    booted(ledger, epoch)
                    boot_epoch[name] = epoch
                elif ledger.boot_id is not None and boot != ledger.boot_id:
                    booted(ledger)
                ledger.boot_id, ledger.boot_seen_at = boot, ts
                continue
            if status == "pass":
                # a change planned on one target (vCenter) about another (a VM): done when that one passes
                word = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])")
                for other in ledgers.values():
                    if other.host != name and any(p.check == check for p in other.pending):
                        other.pending = [p for p in other.pending
                                         if not (p.check == check and p.booted_over
                                                 and (p.target == name or word.search(p.reason)))]
            if name not in ledgers and not (check == "RW214" and status in ("fail", "warn")):
                continue
            ledger = of(name)
            if check == "RW214" and status in ("fail", "warn"):
                if not any(p.check == "RW214" and not p.booted_over for p in ledger.pending):
                    ledger.pending.append(PendingItem("RW214", name, RebootKind.HOST, str(event.get("summary") or ""),
                                                      ts, ledger.boot_id, run=run))
            elif status == "pass":
                # done: the check passes on a boot newer than the change (RW214 passing: nothing is pending)
                keep = [p for p in ledger.pending
                        if not (p.booted_over and (p.check == check or check == "RW214"))
                        and not (check == "RW214" and p.check == "RW214")]
                if len(keep) != len(ledger.pending):
                    ledger.pending = keep
                    if not keep and ledger.history and ledger.history[-1].boot_id_after:
                        ledger.history[-1].verified = True
        elif kind == "fix-step":
            reboot = event.get("reboot") or "none"
            if event.get("exit_status") != 0 or reboot == "none":
                continue
            try:
                reboot_kind = RebootKind(reboot)
            except ValueError:
                continue
            # a change made through vCenter or a BMC waits for its host's reboot (or its VM's power cycle):
            # the step names that host (`host`); the item is that host's
            owner = event.get("host") if isinstance(event.get("host"), str) and event.get("host") else name
            owner = aliases.get(owner, owner)
            ledger = of(owner)
            check, reason = str(event.get("check") or ""), str(event.get("description") or "")
            # one item per change (a plan over several VMs has a step, and an item, per VM)
            ledger.pending = [p for p in ledger.pending if (p.check, p.reason) != (check, reason)]
            ledger.pending.append(PendingItem(check, name, reboot_kind, reason, ts, ledger.boot_id, run=run))
        elif kind == "reboot-requested":
            ledger = of(name)
            record = RebootRecord(ts, boot_id_before=event.get("boot_before"), reasons=list(event.get("reasons") or []),
                                  via=event.get("via"), run=run, system_id=identity.get((run or "", name)))
            ledger.history.append(record)
            open_record[name] = record
        elif kind == "host-down" and name in open_record:
            open_record[name].down_at = ts
        elif kind == "host-back" and name in open_record:
            record = open_record.pop(name)
            record.back_at, record.boot_id_after = ts, event.get("boot_after")
            ledger = of(name)
            booted(ledger, record.requested_at)
            if record.boot_id_after:
                ledger.boot_id, ledger.boot_seen_at = record.boot_id_after, ts
        elif kind == "reboot-failed" and name in open_record:
            open_record.pop(name).error = str(event.get("error") or "failed")
        elif kind == "reboot-verified" and name in ledgers:
            ledger = ledgers[name]
            record = next((r for r in reversed(ledger.history) if r.boot_id_after), None)
            if record is not None:
                record.verified = bool(event.get("verified"))
                record.error = None if event.get("verified") else str(event.get("error") or "not verified")
            if event.get("verified"):
                ledger.pending = [p for p in ledger.pending if not p.booted_over]
        elif kind == "maintenance-enter":
            of(name).in_maintenance = True
        elif kind == "maintenance-exit" and name in ledgers:
            ledgers[name].in_maintenance = False
        elif kind == "vm-power":
            host = event.get("host")
            if isinstance(host, str) and host:
                ledger = of(host)
                if event.get("state") == "off" and name not in ledger.powered_off_vms:
                    ledger.powered_off_vms.append(name)
                    ledger.powered_off_at[name] = ts
                    if run:
                        ledger.powered_off_run[name] = run
                elif event.get("state") == "on" and name in ledger.powered_off_vms:
                    ledger.powered_off_vms.remove(name)
                    ledger.powered_off_at.pop(name, None)
                    ledger.powered_off_run.pop(name, None)
            if event.get("state") == "on":
                # a VM's device and configuration changes take effect at its power-on (and its guest boots)
                word = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])")
                for entry in ledgers.values():
                    for item in entry.pending:
                        if item.reboot in VM_RESTARTS and item.since < ts and (
                                entry.host in (name, aliases.get(name)) or item.target == name
                                or word.search(item.reason)):
                            item.booted_over = True

    for name, ledger in ledgers.items():
        ledger.state = _state(ledger, open_record.get(name))
    return ledgers


def _state(ledger: HostLedger, open_record: RebootRecord | None) -> HostState:
    if open_record is not None:
        if open_record.back_at is not None:
            return HostState.BACK
        if open_record.down_at is not None:
            return HostState.REBOOTING
        # ESXi enters maintenance mode first (vCenter or esxcli); Linux goes straight to its reboot
        return (HostState.ENTERING_MAINTENANCE if ledger.in_maintenance or open_record.via in ("vcenter", "esxcli")
                else HostState.REBOOTING)
    last = ledger.history[-1] if ledger.history else None
    if last is not None and last.error and last.boot_id_after is None:
        return HostState.FAILED
    if ledger.awaiting_reboot:
        return HostState.PENDING
    if ledger.pending:
        return HostState.BACK  # rebooted; the new values are not seen current yet
    if last is not None and last.verified:
        return HostState.VERIFIED
    return HostState.OK


def run_dirs(base: Path | None = None) -> list[Path]:
    root = runs_dir(base)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and (p / "events.jsonl").exists())


def all_events(base: Path | None = None) -> list[dict[str, Any]]:
    """Every run's events, oldest first, each tagged with its run (the run directory's name)."""
    events: list[dict[str, Any]] = []
    for run in run_dirs(base):
        events.extend({**e, "run": run.name} for e in read_events(run))
    events.sort(key=lambda e: e.get("ts") or 0.0)  # runs can overlap (a doctor while a fix runs)
    return events


def build_ledger(base: Path | None = None, aliases: Mapping[str, str] | None = None, *,
                 identities: Mapping[str, str] | None = None,
                 scoped: Iterable[str] | None = None) -> dict[str, HostLedger]:
    """The ledger of every host, from every run under the state dir (oldest first); `aliases` as in
    `ledger_from_events` (`vm_aliases(targets)`). With `identities` (target -> the machine identity read
    now) only the events of runs that saw those same machines count for the `scoped` targets
    (`ledger_scope.scope_events`): another cluster's hosts with the same names are not these."""
    events = all_events(base)
    if identities is not None:
        events, _ = scope_events(events, aliases or {}, identities, scoped if scoped is not None else identities)
    return ledger_from_events(events, aliases)


def scoped_ledger(base: Path | None, run: str, targets: list[Target]) -> dict[str, HostLedger]:
    """The ledger of the inventory's machines as run `run` saw them (its RW003 identities): what `fix`
    acts on and reports. Hosts and guests whose identity that run did not read have no entry."""
    events = all_events(base)
    aliases = vm_aliases(targets)
    events, _ = scope_events(events, aliases, identities_in_run(events, run), scoped_names(targets), run)
    names = {t.name for t in targets}
    return {n: v for n, v in ledger_from_events(events, aliases).items() if n in names}


def vm_aliases(targets: Iterable[Target]) -> dict[str, str]:
    """VM name (vCenter) -> guest target name, where they differ."""
    return {t.vm: t.name for t in targets if t.kind is TargetKind.GUEST and t.vm and t.vm != t.name}


# ------------------------------------------------------------------------------ orchestration

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
            return _Boot(f"booted {_iso(time.time() - value / 1e6)}", value / 1e6)
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
        progress(name, HostState.BACK, f"back after {time.monotonic() - started:.0f}s")
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
