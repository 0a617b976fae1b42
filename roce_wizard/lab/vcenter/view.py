"""The world as vSphere shows it (hosts, PCI devices, VDS, VMs) and its flat path form."""

from __future__ import annotations

from typing import Any

from roce_wizard.lab.vcenter.config import CLUSTER, DATACENTER, DATASTORE, PCI_DEVICE_NAMES
from roce_wizard.lab.world import Card, EsxiHost, VCenter, World

# ------------------------------------------------------------------------------ the vSphere view


def pf_id(pci: str) -> str:
    """vSphere's PCI id for the world's short form: 3b:00.0 -> 0000:3b:00.0."""
    return pci if pci.count(":") == 2 else f"0000:{pci}"


def _sriov_capable(host: EsxiHost) -> bool:
    # the PF exposes SR-IOV when the server's BIOS has SR-IOV Global on (at the last boot)
    return host.bios.get("SriovGlobalEnable", "Enabled") == "Enabled"


def _max_vfs(card: Card) -> int:
    sriov, num = card.config.get("SRIOV_EN"), card.config.get("NUM_OF_VFS")
    if sriov is None or num is None or sriov.current is not True or not isinstance(num.current, int):
        return 0
    return num.current


def _vibs_pending(host: EsxiHost) -> bool:
    """What makes ESXi itself flag summary.rebootRequired: VIBs installed since the last boot.

    (mlxconfig Next Boot values, module parameters and staged BIOS settings wait for a reboot too,
    but hostd does not know about them; vCenter's SR-IOV settings are counted by the simulator.)
    """
    installed, active = host.vibs_installed, host.vibs_active
    return set(installed) != set(active) or any(installed[k].version != active[k].version for k in installed)


def vsphere_view(world: World) -> dict[str, Any]:
    """The world as vCenter shows it: the simulator's state file and sync format."""
    vc = world.vcenter or VCenter()
    hosts = {}
    for host in world.hosts.values():
        pfs = {}
        for nic in host.nmlx5_vmnics():
            card = host.cards[nic.card]
            pci = card.pci(nic.port)
            configured = host.sriov_config.get(pci, {})
            active = host.sriov_config_active.get(pci, {})
            pfs[pf_id(pci)] = {
                "vmnic": nic.name,
                "device_id": f"{card.device_id:x}",
                "device_name": PCI_DEVICE_NAMES.get(card.model, card.model),
                "capable": _sriov_capable(host),
                "max_vfs": _max_vfs(card),
                "hw_vfs": world.vf_count(host, nic),
                "enabled": bool(configured.get("enabled", False)),
                "requested": int(configured.get("requested", 0)),
                "active_enabled": bool(active.get("enabled", False)),
                "active_requested": int(active.get("requested", 0)),
            }
        hosts[host.name] = {
            "boot_time": host.boot_time,
            "boot_count": host.boot_count,
            "connected": host.up,
            "maintenance_mode": host.maintenance_mode,
            "power_policy": host.power_policy,
            "pending_other": _vibs_pending(host),
            "pnics": [{"device": n.name, "pci": pf_id(host.cards[n.card].pci(n.port)), "mac": n.mac,
                       "speed_mbps": host.cards[n.card].speed_mbps, "driver": n.driver} for n in host.vmnics],
            "pfs": pfs,
            # a host whose reboot the lab stretches (World.reboot_delays): vCenter sees it down as long
            **({"reboot_delay_s": world.reboot_delays[host.name]} if host.name in world.reboot_delays else {}),
        }
    vms = {}
    for vm in world.vms.values():
        host = world.hosts.get(vm.host)
        vf = pf_id(host.roce_card.pci(vm.vf_port)) if host is not None and vm.vf_port is not None else None
        vms[vm.name] = {
            "host": vm.host,
            "powered_on": vm.powered_on,
            "vf_pf": vf,
            "memory_mb": vm.memory_mb,
            "cpus": vm.cpus,
            "memory_reserved": vm.memory_reserved,
            "latency_sensitivity": vm.latency_sensitivity,
        }
        if vf is not None:  # a property of its SR-IOV adapter
            vms[vm.name]["allow_guest_mtu_change"] = vm.allow_guest_mtu_change
    dvs = None
    if vc.dvs_name is not None:
        dvs = {"name": vc.dvs_name, "portgroup": vc.portgroup or "", "max_mtu": vc.dvs_max_mtu,
               "members": {h: list(nics) for h, nics in sorted(vc.dvs_members.items())}}
    return {
        "datacenter": DATACENTER,
        "cluster": CLUSTER,
        "datastore": DATASTORE,
        "reboot_delay_s": world.reboot_delay_s,
        "hosts": hosts,
        "vms": vms,
        "dvs": dvs,
    }


Path_ = tuple[str, ...]
_STATIC = {"pnics", "vmnic", "device_id", "device_name", "host", "memory_mb", "cpus", "reboot_delay_s"}


def flatten(view: dict[str, Any]) -> dict[Path_, Any]:
    """Leaf fields by path; the VDS is one value (it is created and changed as a whole)."""
    out: dict[Path_, Any] = {}
    for key in ("reboot_delay_s", "dvs"):
        if key in view:
            out[(key,)] = view[key]
    for host, hv in view.get("hosts", {}).items():
        for k, v in hv.items():
            if k == "pfs":
                for pf, pv in v.items():
                    for pk, pval in pv.items():
                        out[("hosts", host, "pfs", pf, pk)] = pval
            elif k not in _STATIC:
                out[("hosts", host, k)] = v
    for vm, vv in view.get("vms", {}).items():
        for k, v in vv.items():
            if k not in _STATIC:
                out[("vms", vm, k)] = v
    return out


def unflatten(fields: dict[Path_, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path, value in fields.items():
        node = out
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return out


# ------------------------------------------------------------------------------ the handle

Event = tuple[str, str]  # ("down" | "up" | "booted", host) as vCenter shows its hosts; ("vm-off" | "vm-on", vm)
