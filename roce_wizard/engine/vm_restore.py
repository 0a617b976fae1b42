"""VMs this tool powered off come back (issue 11 item 12).

`fix --reboot` powers VMs off so their host can enter maintenance mode. Whatever ends the run (an error,
Ctrl-C, a host that does not come back), `restore_vms` powers back on every VM the ledger says this tool
powered off and has not powered on; one it cannot power on is returned as `VmStillOff` (which VM, since
when, for which host, why), for the front end's red line and a non-zero exit. `vm_power_facts` hands
the same knowledge to the checks as facts (RW001 says why a guest does not answer), keeping them pure.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from roce_wizard.model import Target, TargetKind


@dataclass
class VmStillOff:
    vm: str
    host: str
    since: float | None  # when this tool powered it off
    run: str | None  # the run that powered it off
    error: str = ""

    @property
    def since_text(self) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since)) if self.since else "an unknown time"

    def line(self) -> str:
        return (f"VM {self.vm} is still powered off (by roce-wizard at {self.since_text}"
                f"{f', run {self.run}' if self.run else ''}, for the reboot of {self.host})"
                + (f": {self.error}" if self.error else ""))


def vms_off(book: Mapping[str, Any]) -> list[VmStillOff]:
    """Every VM the ledger says this tool powered off and did not power on again."""
    return [VmStillOff(vm, host, entry.powered_off_at.get(vm), entry.powered_off_run.get(vm))
            for host, entry in sorted(book.items()) for vm in entry.powered_off_vms]


def unconfirmed_vms_off(unscoped: Mapping[str, Any], scoped: Mapping[str, Any], targets: Iterable[Target],
                        identified: Iterable[str]) -> list[VmStillOff]:
    """VMs of the inventory (by VM name and host) that the unscoped ledger says this tool powered off,
    on a host this run could not identify (the scoped ledger has no word on it): reported, not acted on."""
    known = {(item.vm, item.host) for item in vms_off(scoped)}
    identified = set(identified)
    ours = {(t.vm or t.name, t.host) for t in targets if t.kind is TargetKind.GUEST}
    out = []
    for item in vms_off(unscoped):
        if (item.vm, item.host) in known or not ((item.vm, item.host) in ours or (item.vm, None) in ours):
            continue
        if item.host in identified:  # identified now: what it saw is in `scoped`; this was another machine
            continue
        item.error = f"{item.host} was not identified in this run (it did not answer): not powered on"
        out.append(item)
    return out


async def restore_vms(plan: Any, off: Iterable[VmStillOff], runlog: Any,
                      progress: Callable[[str, Any, str], None],
                      in_maintenance: Iterable[str] = ()) -> tuple[list[str], list[VmStillOff]]:
    """Power on each VM in `off` through vCenter: (powered on, still off with the reason). A host this tool put
    in maintenance mode and has not taken out (`in_maintenance`, from the ledger: a reboot interrupted after the
    host came back, before it left maintenance mode) is taken out first — no VM powers on in maintenance mode,
    and the host ran these VMs before this tool entered it, so leaving it is what restores the state."""
    from roce_wizard.engine.reboots import exit_maintenance, set_vm_power  # noqa: PLC0415

    done: list[str] = []
    still: list[VmStillOff] = []
    left = {h for h in in_maintenance if plan.vcenter is not None}
    for item in off:
        if plan.vcenter is None:
            item.error = "the inventory has no vCenter to power it on through"
            still.append(item)
            continue
        if item.host in left:
            left.discard(item.host)
            progress(item.host, "power-on", "leaving maintenance mode (this tool entered it)")
            try:
                await exit_maintenance(plan, item.host, runlog)
            except Exception:  # noqa: BLE001, S110 - the power-on below fails then, and says why
                pass
        progress(item.host, "power-on", f"powering on VM {item.vm}")
        try:
            await set_vm_power(plan, item.vm, item.host, "on", runlog)
            done.append(item.vm)
        except Exception as exc:  # noqa: BLE001 - every VM is tried; each failure is reported
            item.error = f"power on failed: {getattr(exc, 'message', None) or exc}"
            still.append(item)
    return done, still


def vm_power_facts(book: Mapping[str, Any], targets: Iterable[Target]) -> dict[str, dict[str, Any]]:
    """target name -> facts for its checks: `tool_vm_power` on a guest whose VM this tool powered off (on
    the host the inventory puts it on) and has not powered on since."""
    off = {(item.vm, item.host): item for item in vms_off(book)}
    out: dict[str, dict[str, Any]] = {}
    for t in targets:
        if t.kind is not TargetKind.GUEST:
            continue
        item = off.get((t.vm or t.name, t.host or "")) or next(
            (i for (vm, _), i in off.items() if vm == (t.vm or t.name) and not t.host), None)
        if item is not None:
            out[t.name] = {"tool_vm_power": {"vm": item.vm, "state": "off", "by": "roce-wizard",
                                             "since": item.since_text, "host": item.host, "run": item.run}}
    return out
