"""Faults of ESXi hosts, named by the check that detects each."""

from __future__ import annotations

from typing import Any

from roce_wizard.lab import scenarios
from roce_wizard.lab.faults import Fault
from roce_wizard.lab.world import MMIO_LOW_VFS_PER_PF, Card, EsxiHost, Vib, World

# ==================================================================================== faults


def _roce(world: World, host_name: str) -> tuple[EsxiHost, Card]:
    host = world.hosts[host_name]
    return host, host.roce_card


def _set_param(card: Card, name: str, value: Any, *, current: bool = True) -> None:
    p = card.config[name]
    p.next_boot = value
    if current:
        p.current = value


def _rw201(world: World, host_name: str) -> None:
    host = world.hosts[host_name]
    for name in ("mft", "nmst"):
        host.vibs_installed.pop(name, None)
        host.vibs_active.pop(name, None)


def _rw202(world: World, host_name: str) -> None:
    world.hosts[host_name].mst_started = False


def _rw203(world: World, host_name: str) -> None:
    _, card = _roce(world, host_name)
    card.fw_version, card.pxe_version, card.uefi_version = "16.26.4012", "3.5.0805", "14.19.0017"
    card.fw_available = "16.32.1010"


def _rw204(world: World, host_name: str) -> None:
    host = world.hosts[host_name]
    for vib in (scenarios.NMLX5_INBOX, scenarios.NMLX5_RDMA_INBOX):
        host.vibs_installed[vib.name] = Vib(vib.name, vib.version, vib.vendor, vib.acceptance, vib.install_date)
        host.vibs_active[vib.name] = Vib(vib.name, vib.version, vib.vendor, vib.acceptance, vib.install_date)


def _rw205(world: World, host_name: str) -> None:
    _, card = _roce(world, host_name)
    _set_param(card, "LINK_TYPE_P2", "IB")


def _rw206(world: World, host_name: str) -> None:
    _, card = _roce(world, host_name)
    _set_param(card, "SRIOV_EN", False)


def _rw207(world: World, host_name: str) -> None:
    _, card = _roce(world, host_name)
    _set_param(card, "ADVANCED_PCI_SETTINGS", True)


def _rw208(world: World, host_name: str) -> None:
    _, card = _roce(world, host_name)
    _set_param(card, "NUM_OF_VFS", 15)  # max_vfs 0,0,8,7 asks for 15 on this card: none left for the PF


def _drop_params(world: World, host_name: str, *names: str) -> None:
    host = world.hosts[host_name]
    for params in (host.module_params, host.module_params_active):
        for name in names:
            params.pop(name, None)


def _rw209(world: World, host_name: str) -> None:
    _drop_params(world, host_name, "pfctx", "pfcrx")


def _rw210(world: World, host_name: str) -> None:
    _drop_params(world, host_name, "trust_state")


def _rw211(world: World, host_name: str) -> None:
    host = world.hosts[host_name]
    host.module_params["ecn"] = host.module_params_active["ecn"] = "0"


def _rw216(world: World, host_name: str) -> None:
    host = world.hosts[host_name]
    nic = next(n for n in host.vmnics if n.card == len(host.cards) - 1 and n.port == 1)
    nic.dcb_peer_pfc = 0x10  # the port's DCBX took a willing peer's map: PFC runs on priority 4, not pfctx's 3


def _rw213(world: World, host_name: str) -> None:
    world.hosts[host_name].power_policy = "Balanced"


def _rw214(world: World, host_name: str) -> None:
    _, card = _roce(world, host_name)
    _set_param(card, "NUM_VF_MSIX", 19, current=False)  # staged, never rebooted; no other check reads it


def _rw215(world: World, host_name: str) -> None:
    world.hosts[host_name].bios["MmioAbove4Gb"] = "Disabled"


FAULTS: dict[str, Fault] = {
    f.code: f
    for f in (
        Fault("RW201", "esxi", "the MFT and NMST VIBs are not installed (no /opt/mellanox/bin tools)", _rw201),
        Fault("RW202", "esxi", "mst was not started since the last boot: no mst device for the adapters",
              _rw202),
        Fault("RW203", "esxi", "the RoCE card runs firmware 16.26.4012, older than the driver's 16.29.1016; "
              "16.32.1010 is available online", _rw203),
        Fault("RW204", "esxi", "the inbox VMware nmlx5-core 4.19.16.10 driver instead of the async 4.21.71.101",
              _rw204),
        Fault("RW205", "esxi", "port 2 of the RoCE card runs InfiniBand (LINK_TYPE_P2=IB current and next boot)",
              _rw205),
        Fault("RW206", "esxi", "SRIOV_EN is False in the RoCE card's firmware (current and next boot)",
              _rw206),
        Fault("RW207", "esxi", "ADVANCED_PCI_SETTINGS is True on the RoCE card", _rw207),
        Fault("RW208", "esxi", "NUM_OF_VFS is 15 while max_vfs asks for 8+7 on the card: no VFs are created",
              _rw208),
        Fault("RW209", "esxi", "nmlx5_core has no pfctx/pfcrx: PFC is off", _rw209),
        Fault("RW210", "esxi", "nmlx5_core has no trust_state: the port trusts PCP, not DSCP", _rw210),
        Fault("RW211", "esxi", "nmlx5_core runs with ecn=0", _rw211),
        # no RW212 fault: on nmlx5 global pause is in effect only while PFC is not operational, which is
        # RW209's (not configured), RW214's (not loaded yet) or RW216's (negotiated away) fault, never alone
        Fault("RW213", "esxi", "the CPU power policy is Balanced", _rw213),
        Fault("RW214", "esxi", "an mlxconfig change (NUM_VF_MSIX 11 -> 19) waits for a reboot", _rw214),
        Fault("RW216", "esxi", "vmnic2's DCBX took the switch's PFC map: PFC operational on priority 4, not 3",
              _rw216),
        Fault("RW215", "esxi", "the BIOS maps no MMIO above 4 GB (MmioAbove4Gb Disabled): only "
              f"{MMIO_LOW_VFS_PER_PF} VFs per port fit", _rw215),
    )
}
