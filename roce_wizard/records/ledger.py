"""The reboot ledger (`roce-wizard reboots`): a pure fold of the run logs' events.

The ledger is derived from the run logs (every ``events.jsonl`` under the state dir), never kept
beside them, so it survives the tool being killed at any point: per host the boot identity at the
last observation, the pending items (a fix step that succeeded and waits for a reboot, or RW214
saying something is pending) and the reboot history (requested, down, back, boot changed, verified).

A pending item is done only when the host booted after the item was recorded AND a later run shows
the item's check passing (the new value is current). A boot alone leaves it pending, state `back`.

Boot identity: Linux has `/proc/sys/kernel/random/boot_id`; ESXi has none, so its boot is the
moment `now - uptime` (RW003's `uptime_us` against the event's time), compared with the time of the
fix. The reboot orchestration (roce_wizard.engine.reboots) writes the events this folds.
"""

from __future__ import annotations

import enum
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from roce_wizard.model import RebootKind, Target, TargetKind
from roce_wizard.records.ledger_scope import identities_in_run, run_identities, scope_events, scoped_names
from roce_wizard.records.runlog import read_events, runs_dir


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
        return {**asdict(self), "reboot": self.reboot.value, "since": iso_time(self.since)}


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
            out[key] = iso_time(out[key]) if out[key] is not None else None
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
                "boot_seen_at": iso_time(self.boot_seen_at) if self.boot_seen_at else None,
                "pending": [p.to_dict() for p in self.pending], "history": [r.to_dict() for r in self.history],
                "in_maintenance": self.in_maintenance, "powered_off_vms": list(self.powered_off_vms),
                "powered_off": [{"vm": vm, "since": iso_time(self.powered_off_at[vm]) if vm in self.powered_off_at
                                 else None, "run": self.powered_off_run.get(vm)} for vm in self.powered_off_vms],
                "system_id": self.system_id, "reboots": self.reboots}


def iso_time(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(ts))


def _boot_of_finding(event: dict[str, Any]) -> tuple[str | None, float | None]:
    """(boot identity, boot epoch or None) of an RW003 finding event."""
    details = event.get("details") or {}
    if isinstance(details.get("boot_id"), str):
        return details["boot_id"], None
    uptime = details.get("uptime_us")
    if isinstance(uptime, int) and isinstance(event.get("ts"), (int, float)):
        epoch = float(event["ts"]) - uptime / 1e6
        return f"booted {iso_time(epoch)}", epoch
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
    staged_checks: set[str] = set()  # every check a pending item was ever made for (a pass of another moves none)

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
            if status == "pass" and check in staged_checks:  # not one walk of every ledger per pass
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
                    staged_checks.add("RW214")
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
            staged_checks.add(check)
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
