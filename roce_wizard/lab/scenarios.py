"""Built-in worlds: `healthy` (everything per policy) and `fresh` (the seed's day 0).

The cluster is the seed's (000): per host a ConnectX-4 Lx for the service network (vmnic0/1,
1a:00.0/.1) and a ConnectX-5 VPI card for RoCE (vmnic2/3, 3b:00.0/.1, mt4119_pciconf1), one
compute VM per host with its guest, one switch cabling every RoCE port.
"""

from __future__ import annotations

import time

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
}


def _mac(host_index: int, nic: int) -> str:
    return f"0c:42:a1:{host_index:02x}:{nic:02x}:{0x10 + nic:02x}"


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


def build_guest(index: int, healthy: bool) -> Guest:
    name = f"compute-{index:02d}"
    return Guest(
        name=name,
        vm=name,
        ofed_version="MLNX_OFED_LINUX-5.4-1.0.3.0" if healthy else None,
        interfaces=[
            Interface("lo", "00:00:00:00:00:00", 65536, ["127.0.0.1/8"]),
            Interface("ens192", f"00:50:56:a1:{index:02x}:01", 1500, [f"{SERVICE_NET}.{100 + index}/24"]),
            Interface("ens256", f"00:50:56:a1:{index:02x}:02", 9000 if healthy else 1500,
                      [f"{ROCE_NET}.{10 + index}/24"] if healthy else []),
        ],
        cma_roce_mode="RoCE v2" if healthy else "IB/RoCE v1",
        cma_persisted=healthy,
        traffic_class=None,
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
        guest = build_guest(i, healthy)
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
    )
    return world


def healthy(hosts: int = 2, switch: str = "eos") -> World:
    return build_world(hosts, True, switch)


def fresh(hosts: int = 2, switch: str = "eos") -> World:
    return build_world(hosts, False, switch)
