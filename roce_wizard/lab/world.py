"""The practice lab's world model: one cluster's state, from which every simulated device renders
its outputs (ESXi shells, Linux guests, switches, vCenter, BMCs).

The lab never imports `checks/` or `roce_wizard.parsers`: it models the hardware and software and
prints what the real tools print; the judge must read it like any real output.

State that takes effect on a reboot is kept twice — configured (what a tool wrote) and active
(what the running system uses) — and `reboot_host` moves one to the other, as the hardware does:
mlxconfig Next Boot -> Current, nmlx5_core parameters, installed VIBs, staged BIOS settings.
"""

from __future__ import annotations

import copy
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

# ---------------------------------------------------------------------------- adapters

MMIO_LOW_VFS_PER_PF = 4  # VFs per PF whose BARs fit when the BIOS maps no MMIO above 4 GB


@dataclass
class MlxParam:
    """One mlxconfig parameter: values kept normalised (bool, int, or the word of `ETH(2)`)."""

    default: Any
    current: Any
    next_boot: Any


# How mlxconfig prints a value for each parameter that is not a plain integer.
MLX_ENUMS: dict[str, dict[Any, str]] = {
    "LINK_TYPE_P1": {"IB": "IB(1)", "ETH": "ETH(2)", "VPI": "VPI(3)"},
    "LINK_TYPE_P2": {"IB": "IB(1)", "ETH": "ETH(2)", "VPI": "VPI(3)"},
}


@dataclass
class Card:
    """A ConnectX adapter: two PCI functions (one per port), its firmware and its mlxconfig."""

    model: str  # mst device type, e.g. "ConnectX5"
    device_id: int  # 4119 -> mt4119
    part_number: str
    description: str
    psid: str
    fw_version: str
    fw_available: str | None  # what mlxfwmanager --online would offer (None: N/A)
    pci_bus: str  # "3b" -> 3b:00.0 / 3b:00.1
    mst_index: int  # mt4119_pciconf<index>
    speed_mbps: int
    vpi: bool  # has LINK_TYPE_P1/P2
    config: dict[str, MlxParam] = field(default_factory=dict)
    base_mac: str = "0c:42:a1:00:00:00"
    ports: int = 2
    pxe_version: str = "3.6.0502"
    uefi_version: str = "14.25.0017"

    def pci(self, port: int) -> str:
        return f"{self.pci_bus}:00.{port - 1}"

    @property
    def mst_name(self) -> str:
        return f"mt{self.device_id}_pciconf{self.mst_index}"


@dataclass
class Vmnic:
    name: str  # vmnic2
    card: int  # index into EsxiHost.cards
    port: int  # 1 or 2
    mac: str
    mtu: int = 1500
    link_up: bool = True
    driver: str = "nmlx5_core"
    pause_rx: bool = True  # as configured with `esxcli network nic pauseParams set` (what pauseParams shows)
    pause_tx: bool = True
    # PFC bitmask this port's DCBX took from a willing negotiation with the switch, instead of nmlx5_core's
    # pfctx (None: the driver's own); what `esxcli network nic dcb status get` then shows (fault RW216)
    dcb_peer_pfc: int | None = None


@dataclass
class Vib:
    name: str
    version: str
    vendor: str
    acceptance: str = "PartnerSupported"
    install_date: str = "2021-06-01"


# ---------------------------------------------------------------------------- ESXi hosts


@dataclass
class EsxiHost:
    name: str
    ssh_port: int = 0
    boot_time: float = field(default_factory=time.time)
    boot_count: int = 1
    up: bool = True
    # the SMBIOS system UUID (hostsummary hardware.uuid): one per machine, never derived from the name,
    # so that two labs with the same host names are two different clusters, as two sites are
    system_uuid: str = field(default_factory=lambda: str(uuid.uuid4()))
    esxi_version: str = "7.0.2"
    esxi_build: str = "17867351"
    cards: list[Card] = field(default_factory=list)
    vmnics: list[Vmnic] = field(default_factory=list)
    vibs_active: dict[str, Vib] = field(default_factory=dict)  # loaded at the last boot
    vibs_installed: dict[str, Vib] = field(default_factory=dict)  # in the image (vib list shows these)
    module_params: dict[str, str] = field(default_factory=dict)  # configured nmlx5_core parameters
    module_params_active: dict[str, str] = field(default_factory=dict)  # what the driver loaded with
    power_policy: str = "Balanced"  # /Power/CpuPolicy
    maintenance_mode: bool = False
    mst_started: bool = True  # `mst start` was run since boot (ESXi: needed once after the VIB)
    hv_support: int = 3
    bmc_vendor: str = "dell"  # dell (iDRAC attribute names) or hpe (iLO: IntelProcVtd, Sriov, ...)
    bios: dict[str, str] = field(default_factory=dict)  # current BIOS attributes (Dell names)
    bios_pending: dict[str, str] = field(default_factory=dict)  # staged over Redfish, applied at reboot
    # vSphere's view of SR-IOV on each PF (by PCI): {"enabled": bool, "requested": int}
    sriov_config: dict[str, dict[str, Any]] = field(default_factory=dict)
    sriov_config_active: dict[str, dict[str, Any]] = field(default_factory=dict)
    faults: set[str] = field(default_factory=set)  # injected fault codes on this host

    @property
    def roce_card(self) -> Card:
        """The card whose vmnics carry RoCE (the last nmlx5 card: the seed's ConnectX-5)."""
        return self.cards[-1]

    def nmlx5_vmnics(self) -> list[Vmnic]:
        """nmlx5 vmnics in driver enumeration (PCI) order: the positions of max_vfs."""
        nics = [n for n in self.vmnics if n.driver == "nmlx5_core"]
        return sorted(nics, key=lambda n: (self.cards[n.card].pci_bus, n.port))

    def reboot_required(self) -> bool:
        card_pending = any(p.current != p.next_boot for c in self.cards for p in c.config.values())
        return (
            card_pending
            or set(self.vibs_installed) != set(self.vibs_active)
            or any(self.vibs_installed[k].version != self.vibs_active[k].version for k in self.vibs_installed
                   if k in self.vibs_active)
            or self.module_params != self.module_params_active
            or self.sriov_config != self.sriov_config_active
            or bool(self.bios_pending)
        )

    def has_tools(self) -> bool:
        """MFT and NMST loaded (installed and the host rebooted since)."""
        return "mft" in self.vibs_active and "nmst" in self.vibs_active

    def uptime_us(self, now: float | None = None) -> int:
        return int(((now or time.time()) - self.boot_time) * 1_000_000)


# ---------------------------------------------------------------------------- VMs and guests


@dataclass
class Vm:
    name: str
    host: str
    powered_on: bool = True
    vf_port: int | None = None  # the RoCE PF port (1/2) its VirtualSriovEthernetCard is backed by; None: no VF
    memory_reserved: bool = True  # memoryReservationLockedToMax
    latency_sensitivity: str = "normal"  # normal / high
    allow_guest_mtu_change: bool = True
    memory_mb: int = 16384
    cpus: int = 8


@dataclass
class Interface:
    name: str
    mac: str
    mtu: int = 1500
    ipv4: list[str] = field(default_factory=list)  # "a.b.c.d/len"
    up: bool = True


@dataclass
class Guest:
    """A Linux VM (kind guest) or a bare-metal Linux host (kind linux)."""

    name: str
    vm: str | None  # None for bare metal
    ssh_port: int = 0
    boot_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    machine_id: str = field(default_factory=lambda: uuid.uuid4().hex)  # /etc/machine-id: per installation
    boot_count: int = 1
    up: bool = True
    os_release: str = "Red Hat Enterprise Linux 8.4 (Ootpa)"
    kernel: str = "4.18.0-305.el8.x86_64"
    ofed_version: str | None = None  # "MLNX_OFED_LINUX-5.4-1.0.3.0"; None: not installed
    ofed_pending: bool = False  # installed, active after the next guest reboot
    rdma_core: bool = False  # inbox rdma-core (ibv_devinfo without OFED)
    roce_netdev: str = "ens256"
    interfaces: list[Interface] = field(default_factory=list)
    cma_roce_mode: str = "IB/RoCE v1"  # lost on reboot unless persisted
    cma_persisted: bool = False
    traffic_class: int | None = None  # /sys/class/infiniband/<dev>/tc/1/traffic_class
    # rdma_cm's configfs default_roce_tos of the RoCE device (kernel configfs-rdma_cm ABI); None: the
    # /sys/kernel/config/rdma_cm/<dev> directory was never made, so the file does not exist. configfs
    # lives in memory: a boot brings back only what a boot hook writes (the lab's `persist` state).
    rdma_cm_tos: int | None = None
    pause_rx: bool = False  # ethtool -a on the RoCE netdev
    pause_tx: bool = False
    missing_tools: set[str] = field(default_factory=set)  # tools removed (fault RW002)
    # bare metal only: the PF's QoS as mlnx_qos sets it
    qos_trust: str = "pcp"
    qos_pfc: list[int] = field(default_factory=lambda: [0] * 8)
    faults: set[str] = field(default_factory=set)
    # rdma_cm configfs groups (`mkdir /sys/kernel/config/rdma_cm/<dev>`): device -> the boot_count it was made in
    # (configfs is in memory: a group of an earlier boot is gone); lab/guest/rdma_sysfs.py serves the files
    rdma_cm_groups: dict[str, int] = field(default_factory=dict)

    def interface(self, name: str) -> Interface | None:
        return next((i for i in self.interfaces if i.name == name), None)


# ---------------------------------------------------------------------------- switches


@dataclass
class SwitchPort:
    name: str  # vendor spelling: Ethernet1/1 (EOS), Eth1/1 (Onyx), ethernet1/1/1 (OS10)
    mtu: int = 1500
    pfc_enabled: bool = False
    no_drop: set[int] = field(default_factory=set)
    trust: str = "pcp"  # pcp / dscp
    flowcontrol_rx: bool = False
    flowcontrol_tx: bool = False
    ecn: bool = False
    description: str = ""
    link_up: bool = True
    peer: tuple[str, str] | None = None  # (esxi host or linux host, vmnic/netdev) cabled here


@dataclass
class Switch:
    name: str
    vendor: str  # eos / onyx / os10
    ssh_port: int = 0
    ports: list[SwitchPort] = field(default_factory=list)
    saved_config: str | None = None  # `write memory` snapshot, for rollback
    faults: set[str] = field(default_factory=set)

    def port(self, name: str) -> SwitchPort | None:
        return next((p for p in self.ports if p.name.lower() == name.lower()), None)


# ---------------------------------------------------------------------------- vCenter


@dataclass
class VCenter:
    dvs_name: str | None = None  # None: no VDS yet
    portgroup: str | None = None
    dvs_max_mtu: int = 1500
    dvs_members: dict[str, list[str]] = field(default_factory=dict)  # host -> uplink vmnics
    port: int = 0


# ---------------------------------------------------------------------------- the world


@dataclass
class World:
    hosts: dict[str, EsxiHost] = field(default_factory=dict)
    vms: dict[str, Vm] = field(default_factory=dict)
    guests: dict[str, Guest] = field(default_factory=dict)
    switches: dict[str, Switch] = field(default_factory=dict)
    vcenter: VCenter | None = None
    policy: dict[str, Any] = field(default_factory=dict)  # the site-policy values the world was built to
    reboot_delay_s: float = 2.0  # how long a rebooting host stays unreachable
    reboot_delays: dict[str, float] = field(default_factory=dict)  # per target, overrides reboot_delay_s
    scenario: str = "healthy"
    faults: list[tuple[str, str]] = field(default_factory=list)  # (code, target) as injected

    def copy(self) -> World:
        return copy.deepcopy(self)

    # -------------------------------------------------------------- derived facts

    def host_of(self, guest: Guest) -> EsxiHost | None:
        vm = self.vms.get(guest.vm or "")
        return self.hosts.get(vm.host) if vm else None

    def vf_count(self, host: EsxiHost, vmnic: Vmnic) -> int:
        """VFs the driver instantiated on a port at the last boot (0 when SR-IOV is not active)."""
        card = host.cards[vmnic.card]
        if vmnic.driver != "nmlx5_core" or "nmlx5-core" not in host.vibs_active:
            return 0
        if host.bios.get("SriovGlobalEnable", "Enabled") != "Enabled":
            return 0
        if card.config.get("SRIOV_EN") and card.config["SRIOV_EN"].current is not True:
            return 0
        link = card.config.get(f"LINK_TYPE_P{vmnic.port}")
        if link is not None and link.current != "ETH":
            return 0
        order = host.nmlx5_vmnics()
        try:
            entries = [int(x) for x in host.module_params_active.get("max_vfs", "").split(",") if x != ""]
        except ValueError:
            return 0
        position = order.index(vmnic)
        wanted = entries[position] if position < len(entries) else 0
        # the card's firmware must leave one VF for the PF: NUM_OF_VFS > sum of this card's entries
        card_positions = [i for i, n in enumerate(order) if n.card == vmnic.card]
        card_sum = sum(entries[i] for i in card_positions if i < len(entries))
        num_vfs = card.config["NUM_OF_VFS"].current if "NUM_OF_VFS" in card.config else 0
        if not isinstance(num_vfs, int) or card_sum >= num_vfs:
            return 0
        if host.bios.get("MmioAbove4Gb", "Enabled") == "Disabled":
            # the VF BARs must fit below 4 GB: only a few VFs per PF get resources
            wanted = min(wanted, MMIO_LOW_VFS_PER_PF)
        return wanted

    def pfc_active(self, host: EsxiHost) -> bool:
        """nmlx5 loaded with PFC on some priority: global pause is then off on its ports."""
        try:
            return int(host.module_params_active.get("pfctx", "0"), 0) != 0
        except ValueError:
            return False

    def guest_rdma(self, guest: Guest) -> bool:
        """Does the guest see an mlx5 RDMA device on its RoCE netdev?"""
        stack = (guest.ofed_version is not None and not guest.ofed_pending) or guest.rdma_core
        if not stack or not guest.up:
            return False
        if guest.vm is None:  # bare metal owns the PF
            return True
        vm = self.vms.get(guest.vm)
        host = self.hosts.get(vm.host) if vm else None
        if vm is None or host is None or vm.vf_port is None or not vm.powered_on:
            return False
        vmnic = next((n for n in host.vmnics if n.card == len(host.cards) - 1 and n.port == vm.vf_port), None)
        return vmnic is not None and self.vf_count(host, vmnic) > 0

    # -------------------------------------------------------------- reboots

    def reboot_host(self, host: EsxiHost, now: float | None = None) -> None:
        """Apply what waits for a reboot and start a new boot (the server's BIOS rides along)."""
        for card in host.cards:
            for param in card.config.values():
                param.current = param.next_boot
        host.vibs_active = copy.deepcopy(host.vibs_installed)
        host.module_params_active = dict(host.module_params)
        host.sriov_config_active = copy.deepcopy(host.sriov_config)
        host.bios.update(host.bios_pending)
        host.bios_pending.clear()
        host.mst_started = False
        host.maintenance_mode = host.maintenance_mode  # survives a reboot, as on ESXi
        host.boot_count += 1
        host.boot_time = now or time.time()

    def reboot_guest(self, guest: Guest) -> None:
        guest.boot_id = str(uuid.uuid4())
        guest.boot_count += 1
        if guest.ofed_pending:
            guest.ofed_pending = False
        if not guest.cma_persisted:
            guest.cma_roce_mode = "IB/RoCE v1"
