"""What the lab writes about itself: inventory.yaml's targets and state.json's status rows."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from roce_wizard.lab.guest import OFED_BUNDLE
from roce_wizard.lab.server.config import CLIENT_KEY_FILE, INVENTORY_FILE, KNOWN_HOSTS_FILE, ROCE_PF_PCI, ROCE_VMNICS
from roce_wizard.lab.server.files import _roce_ip, _vfs_of
from roce_wizard.lab.world import EsxiHost

if TYPE_CHECKING:
    from roce_wizard.lab.server.lab import Lab


def base_inventory(lab: Lab) -> dict[str, Any]:
    """inventory.yaml's policy, defaults and the SSH targets (ESXi hosts, guests, bare metal) of the lab."""
    policy_keys = ("pfc_priority", "roce_dscp", "trust", "eth_mtu", "switch_mtu", "roce_mtu")
    policy = {k: v for k, v in lab.world.policy.items() if k in policy_keys}
    ssh_defaults = {
        "username": "root",
        "key_file": str(lab.directory / CLIENT_KEY_FILE),
        "use_agent": False,
        "options": {"known_hosts": str(lab.directory / KNOWN_HOSTS_FILE)},
    }
    targets: dict[str, list[dict[str, Any]]] = {"esxi": [], "guest": [], "linux": []}
    for name, host in lab.world.hosts.items():
        targets["esxi"].append({
            "name": name,
            "address": lab.host,
            "port": lab.endpoints[name].port,
            "roce": {"pf_pci": ROCE_PF_PCI, "vmnics": list(ROCE_VMNICS), "vfs": _vfs_of(host)},
        })
    for guest in lab.world.guests.values():
        entry: dict[str, Any] = {"name": guest.name, "address": lab.host, "port": lab.endpoints[guest.name].port}
        roce: dict[str, Any] = {"netdev": guest.roce_netdev}
        ip = _roce_ip(lab.world, guest)
        if ip:
            roce["ip"] = ip
        if guest.vm is not None:
            vm = lab.world.vms.get(guest.vm)
            if vm is not None:
                entry["host"] = vm.host
            entry["vm"] = guest.vm
        else:
            roce = {"pf_pci": ROCE_PF_PCI, **roce}
        entry["roce"] = roce
        # where the operator keeps the MLNX_OFED bundle (RW401's fix installs it from there)
        entry["options"] = {"ofed_bundle": f"/tmp/{OFED_BUNDLE}-rhel8.4-x86_64.tgz"}
        targets["guest" if guest.vm is not None else "linux"].append(entry)
    targets = {k: v for k, v in targets.items() if v}
    return {
        "policy": policy,
        "defaults": {kind: dict(ssh_defaults) for kind in targets},
        "targets": targets,
    }


def lab_status(lab: Lab) -> dict[str, Any]:
    """state.json: the lab's targets (up, down, rebooting, refusing) and what its services report."""
    rows: list[dict[str, Any]] = []
    for ep in lab.endpoints.values():
        target = lab._target(ep)
        if target is None:
            continue
        if ep.rebooting:
            state = "rebooting"
        elif not target.up:
            state = "down"
        elif "RW001" in target.faults:
            state = "refusing"
        else:
            state = "up" if ep.acceptor is not None else "down"
        row: dict[str, Any] = {
            "name": ep.name,
            "kind": ep.kind,
            "state": state,
            "port": ep.port,
            "boot_count": target.boot_count,
            "faults": sorted(target.faults),
            "commands": ep.commands,
        }
        if isinstance(target, EsxiHost):
            row["boot_time"] = round(target.boot_time, 3)
            row["pending_reboot"] = target.reboot_required()
            row["maintenance_mode"] = target.maintenance_mode
        else:
            row["boot_id"] = target.boot_id
        rows.append(row)
    for service in lab.services:
        if service.status is not None:
            try:
                rows.extend(service.status())
            except Exception as exc:  # noqa: BLE001
                rows.append({"name": service.kind, "kind": service.kind, "state": f"status failed: {exc}"})
        else:
            rows.extend({"name": e.get("name"), "kind": service.kind, "state": "up", "port": e.get("port"),
                         "faults": []} for e in service.entries)
    return {
        "version": 1,
        "ready": lab.ready,
        "pid": os.getpid(),
        "dir": str(lab.directory),
        "scenario": lab.world.scenario,
        "started": round(lab.started, 3),
        "updated": round(time.time(), 3),
        "reboot_delay_s": lab.world.reboot_delay_s,
        "command_delay_s": lab.command_delay_s,
        "inventory": str(lab.directory / INVENTORY_FILE),
        "known_hosts": str(lab.directory / KNOWN_HOSTS_FILE),
        "faults": [list(f) for f in lab.world.faults],
        "notes": list(lab.notes),
        "targets": rows,
    }
