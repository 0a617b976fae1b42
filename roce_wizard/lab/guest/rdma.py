"""RDMA ports, RoCE MTU, IPv6 link-locals and the GID table of a guest, computed from the world."""

from __future__ import annotations

import ipaddress
import re
import zlib
from dataclasses import dataclass

from roce_wizard.lab.guest.state import ROCE_DEV, VM_PCI, _gs, _switch_port, _vf_backing
from roce_wizard.lab.world import Card, Guest, Interface, World


@dataclass
class RdmaPort:
    """One RDMA device/port as the guest sees it."""

    dev: str
    port: int
    netdev: Interface
    pci: str
    is_vf: bool
    card: Card
    vendor_part_id: int
    node_guid: str
    sys_image_guid: str
    carrier: bool  # the link is up (netdev up and the physical path up)
    speed_mbps: int = 100000

    @property
    def active(self) -> bool:
        return self.carrier

    @property
    def active_mtu(self) -> int:
        # mlx5_query_port_roce: max_mtu = IB_MTU_4096; active_mtu = min(max_mtu, iboe_get_mtu(ndev->mtu)),
        # ndev being this port's own netdev (the VF's in a guest): local, whatever the host or switch carries
        return min(MAX_MTU, roce_mtu(self.netdev.mtu))


MAX_MTU = 4096  # mlx5 reports max_mtu IB_MTU_4096 on every RoCE port (drivers/infiniband/hw/mlx5/main.c)
# include/rdma/ib_pack.h: GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4, which iboe_get_mtu takes off
IBOE_HEADERS = 96


def roce_mtu(eth_mtu: int) -> int:
    """The RoCE MTU an Ethernet MTU allows (include/rdma/ib_addr.h iboe_get_mtu: headers take 96 bytes)."""
    room = eth_mtu - IBOE_HEADERS
    for mtu in (4096, 2048, 1024, 512, 256):
        if room >= mtu:
            return mtu
    return 256


def _guid(mac: str, mellanox: bool = False) -> str:
    """A GUID from a MAC: ff:fe in the middle (VF node GUID), or 03:00 (ConnectX system image GUID)."""
    b = [int(x, 16) for x in mac.split(":")]
    raw = b[:3] + ([0x03, 0x00] if mellanox else [0xFF, 0xFE]) + b[3:]
    return ":".join(f"{raw[i]:02x}{raw[i + 1]:02x}" for i in range(0, 8, 2))


def _bm_netdevs(guest: Guest) -> list[str]:
    """A bare-metal host's two ConnectX ports: the RoCE netdev and its sibling (ens1f0np0 / ens1f1np1)."""
    first = guest.roce_netdev
    m = re.fullmatch(r"(.*f)(\d)(np)(\d)", first)
    second = f"{m.group(1)}{int(m.group(2)) + 1}{m.group(3)}{int(m.group(4)) + 1}" if m else first + "_2"
    return [first, second]


def visible_interfaces(world: World, guest: Guest) -> list[Interface]:
    """The netdevs `ip` shows: a VM's VF netdev only while the VF is there."""
    if guest.vm is None:
        return list(guest.interfaces)
    vf = _vf_backing(world, guest)
    return [i for i in guest.interfaces if i.name != guest.roce_netdev or vf is not None]


def rdma_ports(world: World, guest: Guest) -> list[RdmaPort]:
    """The RDMA devices the guest has right now (none without `World.guest_rdma`)."""
    st = _gs(world, guest)
    if not world.guest_rdma(guest):
        return []
    out: list[RdmaPort] = []
    if guest.vm is None:
        card = st["card"]
        for n, name in enumerate(_bm_netdevs(guest)):
            iface = guest.interface(name)
            link = card.config.get(f"LINK_TYPE_P{n + 1}")
            if iface is None or (link is not None and link.current != "ETH"):
                continue
            sp = _switch_port(world, guest.name, name)
            out.append(RdmaPort(f"mlx5_{n}", 1, iface, f"0000:{card.pci_bus}:00.{n}", False, card, card.device_id,
                                _guid(iface.mac, mellanox=True), _guid(card.base_mac, mellanox=True),
                                iface.up and sp is not None and sp.link_up, card.speed_mbps))
        return out
    backing = _vf_backing(world, guest)
    iface = guest.interface(guest.roce_netdev)
    if backing is None or iface is None:
        return []
    host, vmnic = backing
    card = host.cards[vmnic.card]
    sp = _switch_port(world, host.name, vmnic.name)
    # active_mtu follows the VF's own netdev MTU in the guest, as on bare metal (RdmaPort.active_mtu): the
    # host's uplink vmnic, the VDS and the switch port do not lower it, they drop the jumbo frames instead
    carrier = iface.up and vmnic.link_up and (sp is None or sp.link_up)
    return [RdmaPort(ROCE_DEV, 1, iface, VM_PCI.get(iface.name, "0000:1b:00.0"), True, card, card.device_id + 1,
                     _guid(iface.mac), _guid(card.base_mac, mellanox=True), carrier, card.speed_mbps)]


def _eui64_ll(mac: str) -> str:
    b = [int(x, 16) for x in mac.split(":")]
    b[0] ^= 0x02
    words = [(b[0] << 8) | b[1], (b[2] << 8) | 0xFF, (0xFE << 8) | b[3], (b[4] << 8) | b[5]]
    return str(ipaddress.IPv6Address("fe80::" + ":".join(f"{w:x}" for w in words)))


def _stable_ll(guest: Guest, iface: Interface) -> str:
    h = zlib.crc32(f"{guest.name}/{iface.name}/stable-privacy".encode())
    g = zlib.crc32(f"{iface.mac}/{guest.name}".encode())
    return str(ipaddress.IPv6Address(f"fe80::{h >> 16:x}:{h & 0xffff:x}:{g >> 16:x}:{g & 0xffff:x}"))


def ipv6_addrs(world: World, guest: Guest, iface: Interface) -> list[str]:
    """The interface's IPv6 addresses (link-local first), "addr/len"."""
    st = _gs(world, guest)
    if iface.name == "lo":
        return ["::1/128"]
    out = []
    if iface.up:
        stable = st["ll_mode"] == "stable-privacy" and iface.name == guest.roce_netdev
        out.append(f"{_stable_ll(guest, iface) if stable else _eui64_ll(iface.mac)}/64")
    out.extend(st["ipv6"].get(iface.name, []))
    return out


def gid_table(world: World, guest: Guest, port: RdmaPort) -> list[tuple[int, str, str | None, str, str]]:
    """(index, gid, ipv4 or None, "v1"/"v2", netdev) as the kernel fills the table."""
    st = _gs(world, guest)
    iface = port.netdev
    default = ipaddress.IPv6Address(_eui64_ll(iface.mac))
    addrs: list[str] = [a.split("/")[0] for a in iface.ipv4]
    for a in ipv6_addrs(world, guest, iface):
        ip = ipaddress.IPv6Address(a.split("/")[0])
        if ip != default:
            addrs.append(str(ip))
    order = st["gid_order"].setdefault(iface.name, [])
    if not order and addrs:  # (re)built at boot / driver load: link-local extras first, then IPv4, then the rest
        order.extend(sorted(addrs, key=lambda a: (0 if a.startswith("fe80") else 1 if "." in a else 2)))
    order[:] = [a for a in order if a in addrs] + [a for a in addrs if a not in order]
    v2 = "RW407" not in guest.faults  # the fault: a stack publishing RoCE v1 GIDs only
    rows: list[tuple[str, str | None, str]] = []
    for a in [str(default), *order]:
        ip = ipaddress.ip_address(a)
        gid = ipaddress.IPv6Address(f"::ffff:{ip}") if ip.version == 4 else ip
        v4 = str(ip) if ip.version == 4 else None
        rows.append((gid.exploded, v4, "v1"))
        if v2:
            rows.append((gid.exploded, v4, "v2"))
    return [(i, g, v4, ver, iface.name) for i, (g, v4, ver) in enumerate(rows)]


def _resolve(world: World, name: str) -> tuple[Guest, str] | None:
    """A hostname or address -> (guest, the interface the address is on)."""
    base = name.split(".")[0]
    if base in world.guests:
        g = world.guests[base]
        mgmt = next((i for i in g.interfaces if i.name not in ("lo", g.roce_netdev)), None)
        return g, (mgmt.name if mgmt else g.roce_netdev)
    for g in world.guests.values():
        for i in g.interfaces:
            if any(a.split("/")[0] == name for a in i.ipv4):
                return g, i.name
    return None
