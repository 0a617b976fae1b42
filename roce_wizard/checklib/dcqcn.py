"""What RW413 (dcqcn-enabled) reads and writes: MLNX_OFED's per-priority np/rp switches of the RoCE netdev, and
the card's congestion-control firmware keys (ROCE_CC_PRIO_MASK_P<n>, CNP_DSCP_P<n>, CNP_802P_PRIO_P<n>).

Pure: reads `Facts`, builds command text from validated values only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from roce_wizard.checklib.esxi import MLXCONFIG, mlx_device_name, safe_mlx_device
from roce_wizard.checklib.linux import safe_netdev
from roce_wizard.commands.handfix import MST_DEVICE, refused
from roce_wizard.commands.shell import UnsafeValue
from roce_wizard.model import Facts, Policy, TargetKind
from roce_wizard.probes import roce_pci

__all__ = ["DeviceState", "SysfsState", "firmware_sets", "firmware_state", "mlx_command", "sysfs_paths",
           "sysfs_state"]

KEYS = ("ROCE_CC_PRIO_MASK", "CNP_DSCP", "CNP_802P_PRIO")


@dataclass
class SysfsState:
    netdev: str
    np: bool | None
    rp: bool | None
    missing: bool  # no MLNX_OFED ecn directory


@dataclass
class DeviceState:
    label: str
    device: dict[str, Any]
    keys: dict[str, Any] = field(default_factory=dict)  # Next Boot (or the only column)
    expected: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def sysfs_state(facts: Facts, policy: Policy) -> SysfsState | None:
    """The RoCE netdev's np/rp switch on the RoCE priority; None when the probe did not answer."""
    ecn = facts.get("roce_ecn_sysfs")
    if not ecn:
        return None
    t = facts.target
    interfaces = ecn.get("interfaces") or {}
    netdev = (t.roce.netdev if t is not None and t.roce.netdev else None) or ecn.get("interface") or \
        next(iter(interfaces), None)
    try:
        netdev = safe_netdev(netdev) if netdev else "<netdev>"
    except UnsafeValue:
        netdev = "<netdev>"
    mine = interfaces.get(netdev)
    if mine is None:
        return SysfsState(netdev, None, None, bool(ecn.get("missing")))
    prio = policy.pfc_priority
    return SysfsState(netdev, (mine.get("np") or {}).get(prio), (mine.get("rp") or {}).get(prio), False)


def sysfs_paths(state: SysfsState, policy: Policy, only_off: bool = False) -> list[str]:
    prio = int(policy.pfc_priority)
    points = [(p, v) for p, v in (("np", state.np), ("rp", state.rp)) if not only_off or v is False]
    return [f"/sys/class/net/{state.netdev}/ecn/roce_{p}/enable/{prio}" for p, _ in points]


def _ports(facts: Facts, device: dict[str, Any]) -> list[int]:
    t = facts.target
    pci = None
    if t is not None:
        pci = roce_pci(t, facts.data) if t.kind is TargetKind.ESXI else t.roce.pf_pci
    m = re.search(r"\.([0-7])$", pci or "")
    if m:
        return [int(m.group(1)) + 1]
    names = device.get("params") or {}
    return sorted({int(n.rsplit("_P", 1)[1]) for n in names if re.fullmatch(r"ROCE_CC_PRIO_MASK_P\d", n)}) or [1]


def _column(param: dict[str, Any], column: str) -> Any:
    return param.get(column, param.get("current" if column == "next_boot" else "next_boot"))


def firmware_state(facts: Facts, policy: Policy) -> list[DeviceState]:
    """Per device of the mlxconfig query: the keys of the RoCE port, what is wrong with them."""
    query = facts.get("mlxconfig_query")
    if not query:
        return []
    prio, out = policy.pfc_priority, []
    for device in query.get("devices", []):
        label = device.get("device") or device.get("device_type") or "device"
        dev = DeviceState(label, device)
        params = device.get("params") or {}
        for port in _ports(facts, device):
            mask, dscp, pcp = (f"{k}_P{port}" for k in KEYS)
            want = {mask: f"bit {prio} set", dscp: policy.cnp_dscp, pcp: policy.cnp_priority}
            for name in (mask, dscp, pcp):
                p = params.get(name)
                if not p:
                    continue
                nb, cur = _column(p, "next_boot"), _column(p, "current")
                dev.keys[name], dev.expected[name] = nb, want[name]
                ok = isinstance(nb, int) and not isinstance(nb, bool) and (
                    bool(nb >> prio & 1) if name == mask else nb == want[name])
                if not ok:
                    what = (f"{name} {nb} leaves priority {prio} out of DCQCN" if name == mask else
                            f"{name} {nb}, expected {want[name]} (CNPs go elsewhere)")
                    dev.problems.append(what)
                elif cur != nb:
                    dev.problems.append(f"{name} is {cur} now and {nb} after the next reboot (reboot pending)")
        out.append(dev)
    return out


def firmware_sets(dev: DeviceState, policy: Policy) -> dict[str, int]:
    """Key -> value to write for every wrong Next Boot value (a right Next Boot waiting for a reboot: none)."""
    prio, sets = policy.pfc_priority, {}
    for name, nb in dev.keys.items():
        bad_int = not isinstance(nb, int) or isinstance(nb, bool)
        if name.startswith("ROCE_CC_PRIO_MASK_P"):
            if bad_int or not nb >> prio & 1:
                sets[name] = (0 if bad_int else nb) | 1 << prio
        elif name.startswith("CNP_DSCP_P"):
            if bad_int or nb != policy.cnp_dscp:
                sets[name] = int(policy.cnp_dscp)
        elif bad_int or nb != policy.cnp_priority:
            sets[name] = int(policy.cnp_priority)
    return sets


def mlx_command(facts: Facts, dev: DeviceState, sets: dict[str, int]) -> str:
    """`mlxconfig -d <dev> -y set K=V …` (ESXi: MFT's path, the mst device); a refusal text when the device
    name the host printed does not fit."""
    args = " ".join(f"{k}={int(v)}" for k, v in sets.items())
    t = facts.target
    try:
        if t is not None and t.kind is TargetKind.ESXI:
            return f"{MLXCONFIG} -d {safe_mlx_device(mlx_device_name(facts, dev.device))} -y set {args}"
        name = (t.roce.pf_pci if t is not None and t.roce.pf_pci else None) or dev.device.get("device") or "<pci>"
        if name == "<pci>":
            return f"mlxconfig -d <pci> -y set {args}  # then reboot the host"
        return f"mlxconfig -d {safe_mlx_device(name)} -y set {args}"
    except UnsafeValue:
        return refused(MST_DEVICE)
