"""Shared pieces of the simulated ESXi host: paths, reply helpers, NIC naming, link and VF state."""

from __future__ import annotations

import time
import zlib

from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.world import Card, EsxiHost, Vmnic, World

MLX_BIN = "/opt/mellanox/bin"
DATASTORE = "/vmfs/volumes/datastore1"
VIB_DIR = f"{DATASTORE}/mellanox"  # the shared datastore of seed 000's best practice
CPU_POLICIES = ("High Performance", "Balanced", "Low Power", "Custom")
NMLX5_ZIP = "Mellanox-nmlx5_4.21.71.101-1OEM.702.0.0.17473468_18150468-package.zip"

# ==================================================================================== helpers


def _host(ctx: Ctx) -> EsxiHost:
    return ctx.world.hosts[ctx.target]


def _ok(text: str = "") -> Reply:
    return Reply(stdout=text)


def _err(text: str, code: int = 1, stdout: str = "") -> Reply:
    return Reply(stdout=stdout, stderr=text if text.endswith("\n") or not text else text + "\n", exit=code)


def _full_pci(short: str) -> str:
    return f"0000:{short}"


_FAMILY = {  # device id -> (PCI family name, marketing name) as `esxcli network nic list` prints them
    4115: ("MT27700", "ConnectX-4"),
    4117: ("MT27710", "ConnectX-4 Lx"),
    4119: ("MT27800", "ConnectX-5"),
    4121: ("MT28800", "ConnectX-5 Ex"),
    4123: ("MT28908", "ConnectX-6"),
    4125: ("MT2892", "ConnectX-6 Dx"),
    4127: ("MT2894", "ConnectX-6 Lx"),
}


def _nic_description(card: Card) -> str:
    family, name = _FAMILY.get(card.device_id, (f"MT{card.device_id}", card.model))
    return f"Mellanox Technologies {family} Family [{name}]"


def _port_is_eth(card: Card, port: int) -> bool:
    link = card.config.get(f"LINK_TYPE_P{port}")
    return link is None or link.current == "ETH"


def _link_up(card: Card, vmnic: Vmnic) -> bool:
    # an IB-configured VPI port brings up no Ethernet link
    return vmnic.link_up and _port_is_eth(card, vmnic.port)


def instantiated_vfs(world: World, host: EsxiHost, vmnic: Vmnic) -> int:
    """VFs the driver created on this PF at boot (what `sriovnic vf list` shows)."""
    return world.vf_count(host, vmnic)


def reported_pause(world: World, host: EsxiHost, vmnic: Vmnic) -> tuple[bool, bool]:
    """Global pause as `pauseParams list` shows it: as configured. Whether it is in effect is
    esxi_dcb.pause_operational (PFC disables it operationally)."""
    return vmnic.pause_rx, vmnic.pause_tx


def _iso(ts: float) -> str:
    frac = int((ts - int(ts)) * 1_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{frac:06d}Z"


def _world_id(name: str) -> int:
    return 2_100_000 + zlib.crc32(name.encode()) % 90_000
