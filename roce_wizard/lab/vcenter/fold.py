"""vCenter changes (SR-IOV, VDS MTU, VM devices and power) folded into the lab's world."""

from __future__ import annotations

from typing import Any

from roce_wizard.lab.vcenter.config import log
from roce_wizard.lab.vcenter.view import Event, Path_, pf_id
from roce_wizard.lab.world import EsxiHost, VCenter, World

_MISSING = object()


def _roce_port(host: EsxiHost, pf: str | None) -> int | None:
    if pf is None:
        return None
    for port in range(1, host.roce_card.ports + 1):
        if pf_id(host.roce_card.pci(port)) == pf:
            return port
    log.warning("%s: a VF backed by %s, which is not the RoCE card: the world shows no VF", host.name, pf)
    return None


def _guest_power(world: World, vm: str, on: bool, boot: bool = False) -> None:
    """The guest OS of a VM vCenter powered off is down; powered on (`boot`: vCenter shows a new boot
    time), it boots (a new boot id)."""
    for guest in world.guests.values():
        if guest.vm == vm:
            if on and (boot or not guest.up):
                world.reboot_guest(guest)
            guest.up = on


def fold_into_world(world: World, changes: dict[Path_, Any], current: dict[Path_, Any]) -> list[Event]:
    """Apply what vCenter changed (paths of its view that moved since the last sync) to the World.

    Host reboots and connection changes are not applied here but returned as events, in order:
    ("down", host), ("booted", host) when vCenter shows a new boot, ("up", host). A VM vCenter
    powered off or on is applied (its guest goes down, or boots) and returned as ("vm-off" |
    "vm-on", vm) so that the lab's SSH listeners can follow.
    """
    events: list[Event] = []
    for path in sorted(p for p in changes if p[0] == "hosts" and len(p) == 5 and p[4] in ("enabled", "requested")):
        host = world.hosts.get(path[1])
        if host is None:
            continue
        pci = path[3].removeprefix("0000:")
        enabled = bool(current.get(("hosts", path[1], "pfs", path[3], "enabled")))
        requested = int(current.get(("hosts", path[1], "pfs", path[3], "requested")) or 0)
        if enabled or requested:
            host.sriov_config[pci] = {"enabled": enabled, "requested": requested}
        else:
            host.sriov_config.pop(pci, None)
    for path, value in sorted(changes.items(), key=lambda kv: kv[0]):
        if path[0] == "hosts" and len(path) == 3 and path[1] in world.hosts:
            host = world.hosts[path[1]]
            if path[2] == "power_policy":
                host.power_policy = value
            elif path[2] == "maintenance_mode":
                host.maintenance_mode = bool(value)
        elif path[0] == "vms" and path[1] in world.vms:
            vm = world.vms[path[1]]
            if path[2] == "vf_pf":
                host = world.hosts.get(vm.host)
                vm.vf_port = _roce_port(host, value) if host is not None else None
            elif path[2] == "memory_reserved":
                vm.memory_reserved = bool(value)
            elif path[2] == "latency_sensitivity":
                vm.latency_sensitivity = str(value)
            elif path[2] == "boot_time" and value:  # vCenter powered the VM on (maybe after an off we missed)
                vm.powered_on = True
                events.append(("vm-on", vm.name))
                _guest_power(world, vm.name, True, boot=True)
            elif path[2] == "powered_on":
                if vm.powered_on != bool(value):
                    vm.powered_on = bool(value)
                    events.append(("vm-on" if vm.powered_on else "vm-off", vm.name))
                    _guest_power(world, vm.name, vm.powered_on)
            elif path[2] == "allow_guest_mtu_change":
                vm.allow_guest_mtu_change = bool(value)
        elif path == ("dvs",):
            vc = world.vcenter if world.vcenter is not None else VCenter()
            world.vcenter = vc
            if value is None:
                vc.dvs_name, vc.portgroup, vc.dvs_members = None, None, {}
            else:
                vc.dvs_name = value["name"]
                vc.portgroup = value.get("portgroup") or None
                vc.dvs_max_mtu = int(value.get("max_mtu") or 1500)
                vc.dvs_members = {h: list(n) for h, n in (value.get("members") or {}).items()}
                # ESXi gives a VDS uplink the switch's MTU (a guest's active_mtu follows its own VF netdev, not this)
                for name, nics in vc.dvs_members.items():
                    host = world.hosts.get(name)
                    for nic in host.vmnics if host is not None else []:
                        if nic.name in nics:
                            nic.mtu = vc.dvs_max_mtu
    for name in sorted({p[1] for p in changes if p[0] == "hosts" and len(p) == 3}):
        if ("hosts", name, "connected") in changes and not changes[("hosts", name, "connected")]:
            events.append(("down", name))
        if ("hosts", name, "boot_count") in changes:
            events.append(("booted", name))
        if changes.get(("hosts", name, "connected")) is True:
            events.append(("up", name))
    return events
