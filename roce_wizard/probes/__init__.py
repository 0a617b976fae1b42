"""Probes: the named commands checks read. One host is asked each thing once per run.

A probe's name is the fact kind it produces (the parser kind), so `analyze` (facts from pasted
files) and `doctor` (facts from live commands) feed checks the same dictionary.  A probe's
command is built from the inventory and from facts of probes it runs ``after``; every value that
reaches the remote shell is validated against a strict pattern or quoted.
"""

from __future__ import annotations

import importlib
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from roce_wizard.commands.shell import UnsafeValue, safe
from roce_wizard.model import Target, TargetKind

__all__ = ["PROBES", "Command", "Probe", "UnsafeValue", "probe_order", "rdma_device", "roce_mst_device", "roce_pci",
           "safe", "short_pci", "tool_presence_command"]

MLX = "/opt/mellanox/bin"  # where the MFT/NMST VIBs put their tools on ESXi

_PCI = re.compile(r"^(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
_IFNAME = re.compile(r"^[^\s/;|&$`'\"\\<>(){}*?!#~]{1,15}$")


def short_pci(pci: str) -> str:
    """0000:3b:00.0 -> 3b:00.0 (ESXi tools print and accept the short form)."""
    pci = pci.strip().lower()
    return pci[5:] if re.match(r"^[0-9a-f]{4}:", pci) and pci.count(":") == 2 else pci


Command = Callable[[Target, dict[str, Any]], "str | None"]


@dataclass(frozen=True)
class Probe:
    name: str  # == the fact kind its parser produces
    kinds: tuple[TargetKind, ...]
    command: Command  # (target, facts so far) -> command line, or None when not applicable
    parser: str
    after: tuple[str, ...] = ()
    # per-item probes run once per item and store {item: facts}
    items: Callable[[Target, dict[str, Any]], list[str]] | None = None
    item_command: Callable[[Target, dict[str, Any], str], str] | None = None
    why_not: str = ""  # what is missing when command() returns None
    # non-zero exits that are an answer, not a failure: the parser reads stdout + stderr then
    # (`ibv_devinfo` exits 255 with "No IB devices found" on a host without an RDMA device)
    answer_exits: tuple[int, ...] = ()


def _const(cmd: str) -> Command:
    return lambda target, facts: cmd


# ---------------------------------------------------------------------------- ESXi


def roce_pci(target: Target, facts: dict[str, Any]) -> str | None:
    """The RoCE PF's PCI address: inventory first, else the first RoCE vmnic's PCI in `nic list`."""
    if target.roce.pf_pci:
        return short_pci(target.roce.pf_pci)
    nics = {n.get("name"): n for n in (facts.get("esxi_nic_list") or {}).get("nics", [])}
    for vmnic in target.roce.vmnics:
        pci = (nics.get(vmnic) or {}).get("pci")
        if pci and _PCI.match(pci):
            return short_pci(pci)
    return None


def roce_mst_device(target: Target, facts: dict[str, Any]) -> str | None:
    """The mst device of the RoCE card (e.g. mt4119_pciconf1), found by its PCI address."""
    pci = roce_pci(target, facts)
    devices = (facts.get("mst_status") or {}).get("devices", [])
    if pci is None:
        return None
    for dev in devices:
        if dev.get("pci") and short_pci(dev["pci"]) == pci and dev.get("mst"):
            return dev["mst"].rsplit("/", 1)[-1] if target.kind is TargetKind.ESXI else dev["mst"]
    # the port-1 PF is the card's config device; .1 functions print as `<dev>.1`
    return None


def _mlxconfig(target: Target, facts: dict[str, Any]) -> str | None:
    if target.kind is not TargetKind.ESXI:  # bare metal: MFT takes the PCI address directly
        return f"mlxconfig -d {safe(target.roce.pf_pci, _PCI)} -e query" if target.roce.pf_pci else None
    dev = roce_mst_device(target, facts)
    if dev is None:
        pci = roce_pci(target, facts)
        if pci is None:
            return None
        dev = pci  # MFT accepts a PCI address as well
    return f"{MLX}/mlxconfig -d {safe(dev)} -e query"


def _mlxfwmanager(target: Target, facts: dict[str, Any]) -> str | None:
    pci = roce_pci(target, facts)
    if pci is None:
        return None
    prefix = f"{MLX}/" if target.kind is TargetKind.ESXI else ""
    return f"{prefix}mlxfwmanager -d {safe(pci, _PCI)}"


ESXI_TOOLS = (f"{MLX}/mst", f"{MLX}/mlxconfig", f"{MLX}/mlxfwmanager", f"{MLX}/flint")
GUEST_TOOLS = ("ibv_devinfo", "rdma", "ip", "ethtool", "show_gids", "ibdev2netdev", "cma_roce_mode", "ofed_info")
LINUX_TOOLS = GUEST_TOOLS + ("mlnx_qos", "mlxconfig", "mst")


def tool_presence_command(tools: tuple[str, ...]) -> str:
    names = " ".join(shlex.quote(t) for t in tools)
    return (
        f'for t in {names}; do if command -v "$t" >/dev/null 2>&1; '
        f'then echo "present $t $(command -v "$t")"; else echo "missing $t"; fi; done'
    )


def _vf_items(target: Target, facts: dict[str, Any]) -> list[str]:
    return [safe(v, re.compile(r"^vmnic\d+$")) and v for v in target.roce.vmnics]


# ---------------------------------------------------------------------------- Linux


def rdma_device(target: Target, facts: dict[str, Any]) -> str | None:
    """The RDMA device bound to the RoCE netdev (inventory, else `rdma link` / `ibdev2netdev`)."""
    if target.roce.rdma_dev:
        return target.roce.rdma_dev
    netdev = target.roce.netdev
    for kind in ("rdma_link", "ibdev2netdev"):
        for link in (facts.get(kind) or {}).get("links", []):
            if netdev and link.get("netdev") == netdev:
                return link.get("dev")
    links = [lk for lk in (facts.get("rdma_link") or {}).get("links", []) if lk.get("dev")]
    if netdev is None and len(links) == 1:
        return links[0]["dev"]
    return None


def _netdev_cmd(template: str) -> Command:
    def build(target: Target, facts: dict[str, Any]) -> str | None:
        if not target.roce.netdev:
            return None
        return template.format(netdev=safe(target.roce.netdev, _IFNAME))

    return build


def _rdmadev_cmd(template: str) -> Command:
    def build(target: Target, facts: dict[str, Any]) -> str | None:
        dev = rdma_device(target, facts)
        if dev is None:
            return None
        return template.format(dev=safe(dev, _IFNAME))

    return build


def _missing(facts: dict[str, Any], tool: str) -> bool:
    """RW002's tool_presence says `tool` is not installed (unknown: assume it is)."""
    return tool in ((facts.get("tool_presence") or {}).get("missing") or [])


# Inbox rdma-core has no show_gids / cma_roce_mode (MLNX_OFED's): the same facts come from the kernel's files,
# read-only (parsers/rdma/sysfs.py names the sources). The configfs group of a device must have been created
# (`mkdir /sys/kernel/config/rdma_cm/<dev>`, Documentation/ABI/testing/configfs-rdma_cm) for its file to exist:
# the probe never creates it (a write); the fact then says so.
SYSFS_GIDS = " ".join(f"/sys/class/infiniband/*/ports/*/{d}/*" for d in ("gids", "gid_attrs/types", "gid_attrs/ndevs"))


def _show_gids(target: Target, facts: dict[str, Any]) -> str:
    return f"grep -H . {SYSFS_GIDS}" if _missing(facts, "show_gids") else "show_gids"


def _cma_roce_mode(target: Target, facts: dict[str, Any]) -> str | None:
    dev = rdma_device(target, facts)
    if dev is None:
        return None
    if _missing(facts, "cma_roce_mode"):
        return f"cat /sys/kernel/config/rdma_cm/{safe(dev, _IFNAME)}/ports/1/default_roce_mode"
    return f"cma_roce_mode -d {safe(dev, _IFNAME)} -p 1"


ESXI = (TargetKind.ESXI,)
VCENTER = (TargetKind.VCENTER,)
SWITCH = (TargetKind.SWITCH,)
BMC = (TargetKind.BMC,)
LINUXY = (TargetKind.GUEST, TargetKind.LINUX)
BAREMETAL = (TargetKind.LINUX,)
_NO_NETDEV = "the inventory gives no roce.netdev for this target"
_NO_RDMADEV = "no RDMA device is bound to the RoCE netdev"

PROBES: dict[str, Probe] = {
    p.name: p
    for p in (
        # ESXi
        Probe("esxi_uptime", ESXI, _const("esxcli system stats uptime get"), "esxi_uptime"),
        Probe("esxi_host_summary", ESXI, _const("vim-cmd hostsvc/hostsummary"), "esxi_host_summary"),
        Probe("esxi_vib_list", ESXI, _const("esxcli --formatter=csv software vib list"), "esxi_vib_list"),
        Probe("esxi_nic_list", ESXI, _const("esxcli --formatter=csv network nic list"), "esxi_nic_list"),
        Probe(
            "esxi_module_params",
            ESXI,
            _const("esxcli --formatter=csv system module parameters list -m nmlx5_core"),
            "esxi_module_params",
        ),
        Probe(
            "esxi_pause_params", ESXI, _const("esxcli --formatter=csv network nic pauseParams list"), "esxi_pause_params"
        ),
        Probe(
            "esxi_power_policy",
            ESXI,
            _const("esxcli --formatter=csv system settings advanced list -o /Power/CpuPolicy"),
            "esxi_power_policy",
        ),
        Probe("esxi_sriovnic_list", ESXI, _const("esxcli --formatter=csv network sriovnic list"), "esxi_sriovnic_list"),
        Probe(
            "esxi_sriovnic_vf_list",
            ESXI,
            _const(""),
            "esxi_sriovnic_vf_list",
            items=_vf_items,
            item_command=lambda t, f, vmnic: f"esxcli --formatter=csv network sriovnic vf list -n {shlex.quote(vmnic)}",
            why_not="the inventory gives no roce.vmnics for this host",
        ),
        # the operational DCB/PFC state per RoCE vmnic (RW216, RW212): VMware's command, vSphere 7.0 Storage,
        # "Configure Lossless Network for NVMe over RDMA" (`esxcli network nic dcb status get -n vmnicX`)
        Probe(
            "esxi_dcb_status",
            ESXI,
            _const(""),
            "esxi_dcb_status",
            items=_vf_items,
            item_command=lambda t, f, vmnic: f"esxcli network nic dcb status get -n {shlex.quote(vmnic)}",
            why_not="the inventory gives no roce.vmnics for this host",
        ),
        Probe("tool_presence", ESXI + LINUXY, lambda t, f: tool_presence_command(
            ESXI_TOOLS if t.kind is TargetKind.ESXI else LINUX_TOOLS if t.kind is TargetKind.LINUX else GUEST_TOOLS
        ), "tool_presence"),
        Probe("mst_status", ESXI, _const(f"{MLX}/mst status -vv"), "mst_status"),
        Probe(
            "mlxconfig_query",
            ESXI + BAREMETAL,
            _mlxconfig,
            "mlxconfig_query",
            after=("mst_status", "esxi_nic_list"),
            why_not="the RoCE card's PCI address is unknown (inventory roce.pf_pci, or roce.vmnics in `nic list`)",
        ),
        Probe(
            "mlxfwmanager",
            ESXI,
            _mlxfwmanager,
            "mlxfwmanager",
            after=("esxi_nic_list",),
            why_not="the RoCE card's PCI address is unknown",
        ),
        # Linux guest / bare metal
        Probe("boot_id", LINUXY, _const("cat /proc/sys/kernel/random/boot_id"), "boot_id"),
        Probe("machine_id", LINUXY, _const("cat /etc/machine-id"), "machine_id"),
        Probe("ofed_info", LINUXY, _const("ofed_info -s"), "ofed_info"),
        Probe("ibv_devinfo", LINUXY, _const("ibv_devinfo"), "ibv_devinfo", answer_exits=(255,)),
        Probe("rdma_link", LINUXY, _const("rdma link show"), "rdma_link"),
        Probe("ibdev2netdev", LINUXY, _const("ibdev2netdev"), "ibdev2netdev"),
        Probe("ip_json", LINUXY, _const("ip -j addr show"), "ip_json"),
        # grep exits 2 when an unused entry's type/netdev reads EINVAL; cat exits 1 without the configfs group:
        # answers, not failures (the parsers read them)
        Probe("show_gids", LINUXY, _show_gids, "show_gids", after=("tool_presence",), answer_exits=(2,)),
        Probe(
            "cma_roce_mode",
            LINUXY,
            _cma_roce_mode,
            "cma_roce_mode",
            after=("rdma_link", "tool_presence"),
            why_not=_NO_RDMADEV,
            answer_exits=(1,),
        ),
        Probe(
            "roce_tc_sysfs",
            LINUXY,
            _rdmadev_cmd("cat /sys/class/infiniband/{dev}/tc/1/traffic_class"),
            "roce_tc_sysfs",
            after=("rdma_link",),
            why_not=_NO_RDMADEV,
        ),
        # rdma_cm's default TOS (Linux Documentation/ABI/testing/configfs-rdma_cm): RW411
        Probe(
            "rdma_cm_tos",
            LINUXY,
            _rdmadev_cmd("cat /sys/kernel/config/rdma_cm/{dev}/ports/1/default_roce_tos"),
            "rdma_cm_tos",
            after=("rdma_link",),
            why_not=_NO_RDMADEV,
        ),
        Probe("ethtool_pause", LINUXY, _netdev_cmd("ethtool -a {netdev}"), "ethtool_pause", why_not=_NO_NETDEV),
        # what a UCX job gets on this node without extra variables (validate: RW604)
        Probe("ucx_config", LINUXY, _const("ucx_info -c"), "ucx_config"),
        Probe("mlnx_qos", BAREMETAL, _netdev_cmd("mlnx_qos -i {netdev}"), "mlnx_qos", why_not=_NO_NETDEV),
        Probe(
            "sriov_numvfs",
            BAREMETAL,
            _netdev_cmd("cat /sys/class/net/{netdev}/device/sriov_totalvfs"),
            "sriov_numvfs",
            why_not=_NO_NETDEV,
        ),
    )
}


# Probes of the targets that are not reached over SSH live in modules of their own: probes/vsphere.py
# (vCenter property reads), probes/switch.py (vendor show commands), probes/bios.py (Redfish reads);
# probes/host.py: host and firmware limits of a Linux host (RW413-RW415).
# Each defines PROBES, a tuple of Probe.
for _family in ("vsphere", "switch", "bios", "host"):
    _module = importlib.import_module(f"roce_wizard.probes.{_family}")
    for _probe in _module.PROBES:
        if _probe.name in PROBES:
            raise RuntimeError(f"probe {_probe.name} defined twice")
        PROBES[_probe.name] = _probe


def probe_order(names: set[str]) -> list[Probe]:
    """Probes to run for the given names, dependencies (``after``) first, each once."""
    ordered: list[Probe] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen or name not in PROBES:
            return
        seen.add(name)
        for dep in PROBES[name].after:
            visit(dep)
        ordered.append(PROBES[name])

    for name in sorted(names):
        visit(name)
    return ordered
