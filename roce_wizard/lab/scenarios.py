"""Built-in worlds: `healthy` (everything per policy) and `fresh` (the seed's day 0), and
scenario files that describe any other cluster and state.

The cluster is the seed's (000): per host a ConnectX-4 Lx for the service network (vmnic0/1,
1a:00.0/.1) and a ConnectX-5 VPI card for RoCE (vmnic2/3, 3b:00.0/.1, mt4119_pciconf1), one
compute VM per host with its guest, one switch cabling every RoCE port.

Scenario files (``roce-wizard lab up --scenario FILE``), YAML::

    base: healthy            # or fresh: the world to start from (default healthy)
    hosts: 4                 # ESXi hosts, each with its compute VM and guest (default 2; 0 with baremetal)
    baremetal: 2             # bare-metal Linux hosts node-01… (kind linux; default 0)
    switch: onyx             # eos | onyx | os10 (default eos)
    reboot_delay_s: 3        # how long a rebooting host stays unreachable
    nccl: true               # NCCL + nccl-tests (all_reduce_perf) on every node (default false; RW610)
    set:                     # attribute paths on the world's objects, applied in order
      esx-02:                # an ESXi host (World.hosts) …
        power_policy: Balanced
        module_params.max_vfs: "0,0,4,4"              # dict keys: .KEY
        cards[1].config.NUM_OF_VFS.current: 8         # list items: [INDEX]
        vmnics[vmnic3].mtu: 1500                      # … or [NAME] for items with a .name
      compute-01:            # … a guest (World.guests) …
        interfaces[ens256].mtu: 1500
      vm:compute-01:         # … a VM (World.vms) …
        vf_port: null
      sw-eos-1:              # … a switch (World.switches) …
        ports[0].pfc_enabled: false
      vcenter:               # … vCenter, or `world` for the World itself
        dvs_max_mtu: 1500
    faults: [RW208@esx-02, RW405]   # injected once the lab is up, as --fault does

Paths are checked against the objects: an unknown attribute, key, index or name, or a value of
another type than the one it replaces (a set takes a list), is an error that names the file, the
line and the path. `hosts`/`baremetal`/`switch` given on the command line win over the file.

`hosts: 0` with `baremetal: N` is a bare-metal-only lab: the Linux nodes and their switch, no ESXi host,
VM or vCenter (so no vcsim either).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from roce_wizard.lab.guest.baremetal import add_baremetal  # the guest simulator owns bare metal
from roce_wizard.lab.guest.nccl import install as install_nccl
from roce_wizard.lab.world import (
    Card,
    EsxiHost,
    Guest,
    Interface,
    MlxParam,
    Switch,
    SwitchPort,
    VCenter,
    Vib,
    Vm,
    Vmnic,
    World,
)
from roce_wizard.lab.world_paths import PathError, assign, known_targets, set_root
from roce_wizard.yamlguard import GuardedLoader, YamlRefused

HEALTHY_PARAMS = {"pfctx": "0x08", "pfcrx": "0x08", "trust_state": "2", "max_vfs": "0,0,8,7", "ecn": "1"}
VFS = (8, 7)
ROCE_NET = "192.168.100"
SERVICE_NET = "10.10.0"

MFT = Vib("mft", "4.18.1.14-0", "MEL")
NMST = Vib("nmst", "4.18.1.14-1OEM.700.1.0.15843807", "MEL")
NMLX5_ASYNC = Vib("nmlx5-core", "4.21.71.101-1OEM.702.0.0.17473468", "MEL")
NMLX5_RDMA_ASYNC = Vib("nmlx5-rdma", "4.21.71.101-1OEM.702.0.0.17473468", "MEL")
NMLX5_INBOX = Vib("nmlx5-core", "4.19.16.10-1vmw.702.0.0.17473468", "VMW", "VMwareCertified")
NMLX5_RDMA_INBOX = Vib("nmlx5-rdma", "4.19.16.10-1vmw.702.0.0.17473468", "VMW", "VMwareCertified")
BASE_VIBS = [
    Vib("esx-base", "7.0.2-0.0.17867351", "VMware", "VMwareCertified"),
    Vib("vsan", "7.0.2-0.0.17867351", "VMware", "VMwareCertified"),
    Vib("i40en", "1.10.6-1OEM.700.1.0.15525992", "INT", "VMwareCertified"),
]
SWITCH_PORT_NAMES = {
    "eos": "Ethernet{n}",
    "onyx": "Eth1/{n}",
    "os10": "ethernet1/1/{n}",
    "nvue": "swp{n}",
}


WIDE_ABOVE = 150  # clusters larger than this number hosts on /16 networks (a /24 runs out)


def _mac(host_index: int, nic: int) -> str:
    # the host index takes two octets from host 256 on; below, the seed's numbering
    return f"0c:42:{0xa1 + (host_index >> 8):02x}:{host_index & 0xFF:02x}:{nic:02x}:{0x10 + nic:02x}"


def service_ip(index: int, wide: bool = False) -> str:
    return f"{SERVICE_NET}.{100 + index}/24" if not wide else f"10.10.{index // 250}.{1 + index % 250}/16"


def roce_ip(index: int, wide: bool = False) -> str:
    """The RoCE address of compute-<index>: what a healthy guest has and a fresh one should get."""
    return f"{ROCE_NET}.{10 + index}/24" if not wide else f"192.168.{100 + index // 250}.{1 + index % 250}/16"


def _cx5_config(healthy: bool) -> dict[str, MlxParam]:
    def p(default, value):
        return MlxParam(default, value, value)

    return {
        "MEMIC_BAR_SIZE": p(0, 0),
        "HOST_CHAINING_MODE": p("DISABLED", "DISABLED"),
        "NUM_OF_VFS": p(0, 16 if healthy else 0),
        "NUM_OF_PF": p(2, 2),
        "SRIOV_EN": p(False, True if healthy else False),
        "PF_LOG_BAR_SIZE": p(5, 5),
        "VF_LOG_BAR_SIZE": p(1, 1),
        "NUM_PF_MSIX": p(63, 63),
        "NUM_VF_MSIX": p(11, 11),
        "INT_LOG_MAX_PAYLOAD_SIZE": p("AUTOMATIC", "AUTOMATIC"),
        "PCI_ATOMIC_MODE": p("PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED", "PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED"),
        "SRIOV_IB_ROUTING_MODE_P1": p("LID", "LID"),
        "SRIOV_IB_ROUTING_MODE_P2": p("LID", "LID"),
        "LINK_TYPE_P1": p("IB", "ETH" if healthy else "IB"),
        "LINK_TYPE_P2": p("IB", "ETH" if healthy else "IB"),
        "ADVANCED_PCI_SETTINGS": p(False, False),
        "SAFE_MODE_THRESHOLD": p(10, 10),
        "SAFE_MODE_ENABLE": p(True, True),
        # DCQCN (RW413): NVIDIA's defaults, as a full `mlxconfig -e q` prints them (corpus cx4lx full query)
        **{f"{k}_P{n}": p(v, v) for n in (1, 2) for k, v in (("ROCE_CC_PRIO_MASK", 255), ("CNP_DSCP", 48),
                                                              ("CNP_802P_PRIO", 6))},
    }


def _cx4lx_config() -> dict[str, MlxParam]:
    def p(default, value):
        return MlxParam(default, value, value)

    return {
        "NUM_OF_VFS": p(8, 8),
        "SRIOV_EN": p(True, True),
        "PF_LOG_BAR_SIZE": p(5, 5),
        "VF_LOG_BAR_SIZE": p(1, 1),
        "ADVANCED_PCI_SETTINGS": p(False, False),
    }


def build_host(index: int, healthy: bool) -> EsxiHost:
    name = f"esx-{index:02d}"
    cx4 = Card("ConnectX4LX", 4117, "MCX4121A-ACA_Ax", "ConnectX-4 Lx EN network interface card; 25GbE dual-port SFP28; "
               "PCIe3.0 x8; ROHS R6", "MT_2420110034", "14.32.1010", None, "1a", 0, 25000, False, _cx4lx_config(),
               base_mac=_mac(index, 0))
    cx5 = Card("ConnectX5", 4119, "MCX556A-ECA_Ax", "ConnectX-5 VPI adapter card; EDR IB (100Gb/s) and 100GbE; "
               "dual-port QSFP28; PCIe3.0 x16; tall bracket; ROHS R6", "MT_0000000008", "16.32.1010", None, "3b", 1,
               100000, True, _cx5_config(healthy), base_mac=_mac(index, 2))
    vmnics = [
        Vmnic("vmnic0", 0, 1, _mac(index, 0), mtu=1500),
        Vmnic("vmnic1", 0, 2, _mac(index, 1), mtu=1500),
        Vmnic("vmnic2", 1, 1, _mac(index, 2), mtu=9000 if healthy else 1500),
        Vmnic("vmnic3", 1, 2, _mac(index, 3), mtu=9000 if healthy else 1500),
    ]
    for nic in vmnics:
        nic.pause_rx = nic.pause_tx = not healthy  # the driver's default is global pause on
    if healthy:
        vibs = {v.name: v for v in (*BASE_VIBS, MFT, NMST, NMLX5_ASYNC, NMLX5_RDMA_ASYNC)}
        params = dict(HEALTHY_PARAMS)
        bios = {"ProcVirtualization": "Enabled", "SriovGlobalEnable": "Enabled", "SysProfile": "PerfPerWattOptimizedOs"}
        sriov = {cx5.pci(1): {"enabled": True, "requested": VFS[0]}, cx5.pci(2): {"enabled": True, "requested": VFS[1]}}
    else:
        vibs = {v.name: v for v in (*BASE_VIBS, NMLX5_INBOX, NMLX5_RDMA_INBOX)}
        params = {}
        bios = {"ProcVirtualization": "Enabled", "SriovGlobalEnable": "Disabled", "SysProfile": "PerfPerWattOptimizedDapc"}
        sriov = {}
    return EsxiHost(
        name=name,
        boot_time=time.time() - 3600 * 24 * (3 + index % 5),
        cards=[cx4, cx5],
        vmnics=vmnics,
        vibs_active=dict(vibs),
        vibs_installed=dict(vibs),
        module_params=dict(params),
        module_params_active=dict(params),
        power_policy="High Performance" if healthy else "Balanced",
        mst_started=healthy,
        bios=bios,
        sriov_config={k: dict(v) for k, v in sriov.items()},
        sriov_config_active={k: dict(v) for k, v in sriov.items()},
    )


def build_guest(index: int, healthy: bool, wide: bool = False) -> Guest:
    name = f"compute-{index:02d}"
    return Guest(
        name=name,
        vm=name,
        ofed_version="MLNX_OFED_LINUX-5.4-1.0.3.0" if healthy else None,
        interfaces=[
            Interface("lo", "00:00:00:00:00:00", 65536, ["127.0.0.1/8"]),
            Interface("ens192", f"00:50:56:{0xa1 + (index >> 8):02x}:{index & 0xFF:02x}:01", 1500,
                      [service_ip(index, wide)]),
            Interface("ens256", f"00:50:56:{0xa1 + (index >> 8):02x}:{index & 0xFF:02x}:02", 9000 if healthy else 1500,
                      [roce_ip(index, wide)] if healthy else []),
        ],
        cma_roce_mode="RoCE v2" if healthy else "IB/RoCE v1",
        cma_persisted=healthy,
        # set up like UCX's RoCE v2 default: DSCP 26 with ECT(0) (106) (an unset class is RW411's warning)
        traffic_class=(26 << 2 | 2) if healthy else None,
        rdma_cm_tos=(26 << 2 | 2) if healthy else None,  # rdma_cm's configfs default, set by a boot hook
    )


def build_world(hosts: int = 2, healthy: bool = True, switch: str = "eos") -> World:
    if switch not in SWITCH_PORT_NAMES:
        raise ValueError(f"switch vendor {switch!r}: expected one of {', '.join(SWITCH_PORT_NAMES)}")
    world = World(scenario="healthy" if healthy else "fresh",
                  policy={"pfc_priority": 3, "roce_dscp": 26, "eth_mtu": 9000, "switch_mtu": 9216})
    sw = Switch(f"sw-{switch}-1", switch)
    for i in range(1, hosts + 1):
        host = build_host(i, healthy)
        world.hosts[host.name] = host
        guest = build_guest(i, healthy, wide=hosts > WIDE_ABOVE)
        world.guests[guest.name] = guest
        world.vms[guest.name] = Vm(guest.name, host.name, vf_port=1 if healthy else None,
                                   memory_reserved=healthy, latency_sensitivity="high" if healthy else "normal")
        for port, vmnic in ((0, "vmnic2"), (1, "vmnic3")):
            n = 2 * (i - 1) + port + 1
            sw.ports.append(SwitchPort(
                SWITCH_PORT_NAMES[switch].format(n=n),
                mtu=9216 if healthy else 1500,
                pfc_enabled=healthy,
                no_drop={3} if healthy else set(),
                trust="dscp" if healthy else "pcp",
                ecn=healthy,
                description=f"{host.name} {vmnic}",
                peer=(host.name, vmnic),
            ))
    world.switches[sw.name] = sw
    world.vcenter = VCenter(
        dvs_name="RoCE-DVS" if healthy else None,
        portgroup="roce-pg" if healthy else None,
        dvs_max_mtu=9000 if healthy else 1500,
        dvs_members={h: ["vmnic2", "vmnic3"] for h in world.hosts} if healthy else {},
    ) if hosts else None  # no ESXi host, no vCenter: a bare-metal-only lab
    return world


def healthy(hosts: int = 2, switch: str = "eos") -> World:
    return build_world(hosts, True, switch)


def fresh(hosts: int = 2, switch: str = "eos") -> World:
    return build_world(hosts, False, switch)


# ---------------------------------------------------------------------------- scenario files

BUILTIN = ("healthy", "fresh")
SCENARIO_KEYS = ("base", "hosts", "baremetal", "switch", "reboot_delay_s", "nccl", "set", "faults")


class ScenarioError(ValueError):
    """A scenario file problem: ``file:line: path: what is wrong``."""


@dataclass
class Scenario:
    name: str
    world: World
    faults: list[str] = field(default_factory=list)  # CODE[@TARGET], injected once the lab is up


def check_counts(hosts: int, baremetal: int) -> str | None:
    """Why a lab of HOSTS ESXi hosts and BAREMETAL Linux nodes cannot be built (None when it can)."""
    if not 0 <= hosts <= 4096:
        return f"hosts: expected 0..4096, got {hosts}"
    if not 0 <= baremetal <= 4096:
        return f"baremetal: expected 0..4096, got {baremetal}"
    if hosts == 0 and baremetal == 0:
        return "hosts 0 and baremetal 0: a lab needs at least one ESXi host (hosts) or bare-metal node (baremetal)"
    return None


def build_scenario(spec: str, hosts: int | None = None, switch: str | None = None,
                   baremetal: int | None = None) -> Scenario:
    """`healthy`, `fresh` or a scenario file; `hosts`/`baremetal`/`switch` (the command line) win over the file."""
    if spec in BUILTIN:
        count = hosts if hosts is not None else (0 if baremetal else 2)  # --baremetal alone: bare metal only
        problem = check_counts(count, baremetal or 0)
        if problem:
            raise ScenarioError(problem)
        world = build_world(count, spec == "healthy", switch or "eos")
        if baremetal:
            add_baremetal(world, baremetal, healthy=spec == "healthy")
        return Scenario(spec, world)
    return load_scenario(spec, hosts=hosts, switch=switch, baremetal=baremetal)


def load_scenario(path: str | os.PathLike[str], *, hosts: int | None = None, switch: str | None = None,
                  baremetal: int | None = None) -> Scenario:
    """Read a scenario file (format in this module's docstring). Raises ScenarioError."""
    file = os.fspath(path)
    try:
        text = Path(file).read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"{file}: cannot read the scenario: {exc.strerror or exc}") from None
    try:
        # depth, aliases and tags bounded (a YAML helper, not the judge's logic: the lab stays independent of it)
        root = yaml.compose(text, Loader=GuardedLoader)
    except YamlRefused as exc:
        raise ScenarioError(f"{file}:{exc.line or '?'}: refused: {exc.problem}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise ScenarioError(f"{file}:{mark.line + 1 if mark else '?'}: YAML syntax error: {exc.problem}") from None
    if root is None:
        root = MappingNode("tag:yaml.org,2002:map", [])
    if not isinstance(root, MappingNode):
        raise ScenarioError(f"{file}:{root.start_mark.line + 1}: expected a mapping (base, hosts, switch, set, faults)")

    def err(node: Node, where: str, problem: str) -> ScenarioError:
        return ScenarioError(f"{file}:{node.start_mark.line + 1}: {where}: {problem}")

    items: dict[str, tuple[Node, Node]] = {}
    for key_node, value_node in root.value:
        key = _value(key_node)
        if key not in SCENARIO_KEYS:
            raise err(key_node, str(key), f"unknown key; expected one of {', '.join(SCENARIO_KEYS)}")
        items[key] = (key_node, value_node)

    def scalar(key: str, kind: type, default: Any) -> Any:
        if key not in items:
            return default
        node = items[key][1]
        value = _value(node)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            raise err(node, key, f"expected {kind.__name__}, got {value!r}")
        return value

    base = scalar("base", str, "healthy")
    if base not in BUILTIN:
        raise err(items["base"][1], "base", f"expected healthy or fresh, got {base!r}")
    metal = baremetal if baremetal is not None else scalar("baremetal", int, 0)
    if not 0 <= metal <= 4096:
        raise err(items["baremetal"][1] if "baremetal" in items else root, "baremetal", f"expected 0..4096, got {metal}")
    count = hosts if hosts is not None else scalar("hosts", int, 2)
    if not 0 <= count <= 4096 or count == 0 == metal:
        raise err(items["hosts"][1] if "hosts" in items else root, "hosts",
                  f"expected 0..4096, got {count}" if count else
                  "0 with baremetal 0: a lab needs at least one ESXi host (hosts) or bare-metal node (baremetal)")
    vendor = switch or scalar("switch", str, "eos")
    if vendor not in SWITCH_PORT_NAMES:
        raise err(items["switch"][1] if "switch" in items else root, "switch",
                  f"expected one of {', '.join(SWITCH_PORT_NAMES)}, got {vendor!r}")
    world = build_world(count, base == "healthy", vendor)
    world.scenario = Path(file).stem
    if "reboot_delay_s" in items:
        world.reboot_delay_s = scalar("reboot_delay_s", float, world.reboot_delay_s)
    if metal:
        add_baremetal(world, metal, healthy=base == "healthy")
    if scalar("nccl", bool, False):  # NCCL and nccl-tests on every node (RW610 runs all_reduce_perf)
        for g in world.guests.values():
            install_nccl(world, g)

    if "set" in items:
        node = items["set"][1]
        if not isinstance(node, MappingNode):
            raise err(node, "set", "expected a mapping of target -> {attribute.path: value}")
        for target_node, paths_node in node.value:
            target_name = str(_value(target_node))
            obj = set_root(world, target_name)
            if obj is None:
                raise err(target_node, f"set.{target_name}", "no such target; expected an ESXi host, a guest, "
                          "vm:NAME, a switch, vcenter or world — " + known_targets(world))
            if not isinstance(paths_node, MappingNode):
                raise err(paths_node, f"set.{target_name}", "expected a mapping of attribute.path: value")
            for path_node, value_node in paths_node.value:
                dotted = str(_value(path_node))
                try:
                    assign(obj, dotted, _value(value_node))
                except PathError as exc:
                    raise err(path_node, f"set.{target_name}.{dotted}", str(exc)) from None

    fault_specs: list[str] = []
    if "faults" in items:
        node = items["faults"][1]
        if not isinstance(node, SequenceNode):
            raise err(node, "faults", "expected a list like [RW208@esx-02, RW405]")
        for item in node.value:
            spec = _value(item)
            if not isinstance(spec, str) or not re.fullmatch(r"RW\d{3}(@[A-Za-z0-9._:-]+)?", spec.strip(), re.IGNORECASE):
                raise err(item, "faults", f"expected CODE[@TARGET] like RW208@esx-02, got {spec!r}")
            fault_specs.append(spec.strip())
    return Scenario(world.scenario, world, fault_specs)


def _value(node: Node) -> Any:
    return yaml.safe_load(yaml.serialize(node))
