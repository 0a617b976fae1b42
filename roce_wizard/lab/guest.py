"""The simulated Linux guest (a VM with an SR-IOV VF) and bare-metal Linux host of the practice lab.

Every output is computed from the world model and printed the way the real tool prints it (held
against `../shared/corpus/` and seeds 000/001/004), so roce-wizard's production parsers and checks
read the lab exactly as they read real machines. This module never imports `roce_wizard.parsers`
or `checks/`.

What the world decides:
- The RoCE netdev (`guest.roce_netdev`) exists in a VM only while the VM has its VF (vCenter gave
  it a VirtualSriovEthernetCard, the VM is on, and the host instantiated VFs on that port); its
  configuration (MTU, addresses) is the NetworkManager profile that applies when it appears.
- The RDMA device (`mlx5_0` on that netdev) exists only when `World.guest_rdma` says so (VF present,
  host SR-IOV active, a verbs stack loaded).
- `active_mtu` is local, as mlx5 computes it (mlx5_query_port_roce): min(max_mtu 4096, iboe_get_mtu(the
  RDMA port's OWN netdev MTU)), i.e. the netdev MTU less 96 bytes of RoCE headers rounded down to
  4096/2048/1024/512/256. In a VM that netdev is the VF's, in the guest: neither the host's uplink vmnic,
  the VDS nor a switch port lowers it (a small hop drops the jumbo frames instead).
- The GID table: index 0/1 the MAC-derived link-local (v1, v2), then one v1/v2 pair per address in
  the order the addresses appeared (a non-EUI-64 link-local comes up before the IPv4 at boot, which
  is how the RoCE v2 IPv4 GID ends up at index 5 instead of 3).
- perftest and MPI results come from both ends' state: link speed, active MTU, GID indexes, UCX
  device names, PFC agreement along the path (incast), and the counters they move.

State the world model has no field for (per-guest counters, NetworkManager profiles, boot hooks,
perftest servers, the bare-metal card) lives in ``world.lab_guest_state`` (see ``_lab``). A reboot
(`World.reboot_guest`) is noticed by the boot id changing and applied on the next call here
(``sync`` applies it at once).

Faults: ``FAULTS``, one per failable guest/preflight check, named by the check that detects it.
"""

from __future__ import annotations

import ipaddress
import json
import random
import re
import shlex
import time
import zlib
from dataclasses import dataclass
from typing import Any

from roce_wizard.lab import perftest_cli, rdma_sysfs
from roce_wizard.lab.faults import Fault
from roce_wizard.lab.proto import Ctx, Program, Reply
from roce_wizard.lab.world import Card, EsxiHost, Guest, Interface, MlxParam, SwitchPort, Vmnic, World

OFED_BUNDLE = "MLNX_OFED_LINUX-5.4-1.0.3.0"  # what /tmp/<bundle>-rhel8.4-x86_64/mlnxofedinstall installs
OFED_DIR = f"/tmp/{OFED_BUNDLE}-rhel8.4-x86_64"
UCX_VERSION = "1.12"
OSU_VERSION = "5.7.1"
ROCE_DEV = "mlx5_0"  # the VF's RDMA device in a guest; bare metal: mlx5_<port-1>
LINE = "-" * 87
MTU_ENUM = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
# the VMware PCI slots of the guest's NICs (ens192 -> 0b, ens224 -> 13, ens256 -> 1b)
VM_PCI = {"ens192": "0000:0b:00.0", "ens224": "0000:13:00.0", "ens256": "0000:1b:00.0"}

# ---------------------------------------------------------------------------- lab-side state


def _lab(world: World) -> dict[str, Any]:
    """State the world model lacks a field for (deep-copied with the world)."""
    return world.__dict__.setdefault("lab_guest_state", {"guests": {}, "perftest": {}, "waves": {}, "pids": 4000})


def _gs(world: World, guest: Guest) -> dict[str, Any]:
    """This guest's lab state, brought up to date with its boot (a reboot applies what persists)."""
    table = _lab(world)["guests"]
    st = table.get(guest.name)
    if st is None:
        st = table[guest.name] = {
            "boot_id": guest.boot_id,
            # what the machine comes up with: the scenario's (and an injected fault's) state persists
            "nm": {i.name: {"mtu": i.mtu, "ipv4": list(i.ipv4), "autoconnect": i.up} for i in guest.interfaces},
            "persist": {"pause": (guest.pause_rx, guest.pause_tx), "traffic_class": guest.traffic_class,
                        "qos": (guest.qos_trust, list(guest.qos_pfc)), "rdma_cm_tos": guest.rdma_cm_tos},
            "ipv6": {},  # ifname -> extra IPv6 addresses (beyond the EUI-64 link-local)
            "gid_order": {},  # ifname -> addresses in the order the GID table got them
            "ll_mode": "eui64",  # NetworkManager ipv6.addr-gen-mode for the RoCE netdev
            "counters": {},
            "etc": {},  # files written under /etc, /tmp, /root
            "units": {},  # systemd unit -> enabled
            "packages": set(),
            "card": _baremetal_card(guest) if guest.vm is None else None,
        }
        _reset_counters(st, guest)
        return st
    if st["boot_id"] != guest.boot_id:
        st["boot_id"] = guest.boot_id
        _boot(world, guest, st)
    return st


def sync(world: World, guest_name: str) -> None:
    """Apply a reboot `World.reboot_guest` just did (otherwise the next call here applies it)."""
    _gs(world, world.guests[guest_name])


def _boot(world: World, guest: Guest, st: dict[str, Any]) -> None:
    """What a fresh boot of the guest looks like: NetworkManager profiles, non-persistent settings
    back to what persists, counters from zero, the GID table rebuilt, then the boot hooks run."""
    for iface in guest.interfaces:
        prof = st["nm"].get(iface.name)
        if prof:
            iface.mtu, iface.ipv4, iface.up = prof["mtu"], list(prof["ipv4"]), prof["autoconnect"]
    guest.pause_rx, guest.pause_tx = st["persist"]["pause"]
    guest.traffic_class = st["persist"]["traffic_class"]
    guest.rdma_cm_tos = st["persist"].get("rdma_cm_tos")
    guest.qos_trust, guest.qos_pfc = st["persist"]["qos"][0], list(st["persist"]["qos"][1])
    st["gid_order"] = {}
    _reset_counters(st, guest)
    card = st.get("card")
    if card is not None:
        for p in card.config.values():
            p.current = p.next_boot
    _run_boot_hooks(world, guest, st)


def _driver_reload(world: World, guest: Guest, st: dict[str, Any]) -> None:
    """`openibd force-restart`: the new stack loads; sysfs/configfs settings and counters start over."""
    guest.ofed_pending = False
    guest.traffic_class = None
    guest.rdma_cm_tos = None  # rdma_cm reloads: its configfs groups are gone
    if not guest.cma_persisted:
        guest.cma_roce_mode = "IB/RoCE v1"
    st["gid_order"] = {}
    _reset_counters(st, guest)


def _reset_counters(st: dict[str, Any], guest: Guest) -> None:
    seed = zlib.crc32(guest.boot_id.encode())
    st["counters"] = {i.name: {"rx_bytes": 0 if i.name == guest.roce_netdev else 180_000 + seed % 90_000,
                               "tx_bytes": 0 if i.name == guest.roce_netdev else 120_000 + seed % 70_000,
                               "rx_packets": 0 if i.name == guest.roce_netdev else 2_100 + seed % 700,
                               "tx_packets": 0 if i.name == guest.roce_netdev else 1_500 + seed % 500}
                      for i in guest.interfaces}
    st["rdma"] = {"tx_bytes": 0, "rx_bytes": 0, "tx_packets": 0, "rx_packets": 0, "cnp_sent": 0,
                  "cnp_handled": 0, "ecn_marked": 0, "out_of_sequence": 0, "pause_rx": [0] * 8,
                  "pause_tx": [0] * 8, "discards": 0, "out_of_buffer": 0, "prio_rx_bytes": [0] * 8,
                  "prio_tx_bytes": [0] * 8}


def _run_boot_hooks(world: World, guest: Guest, st: dict[str, Any]) -> None:
    """Enabled systemd units written under /etc/systemd/system run their ExecStart lines at boot."""
    table = programs(world, guest.name)
    for unit, enabled in st["units"].items():
        text = st["etc"].get(f"/etc/systemd/system/{unit}")
        if enabled and text is not None:
            _exec_unit(world, guest, table, text)


def _exec_unit(world: World, guest: Guest, table: dict[str, Program], text: str) -> None:
    for m in re.finditer(r"^\s*ExecStart=-?(.+)$", text, re.MULTILINE):
        line = m.group(1).strip()
        if line.startswith(("/bin/sh -c ", "/usr/bin/sh -c ", "/bin/bash -c ", "/usr/bin/bash -c ")):
            line = shlex.split(line)[-1]
        _run_simple(world, guest, table, line)


def _run_simple(world: World, guest: Guest, table: dict[str, Program], line: str) -> None:
    """A boot hook's command: `prog args` or `echo N > file` (no shell beyond that)."""
    m = re.fullmatch(r"\s*echo\s+(-n\s+)?(\S+)\s*>\s*(\S+)\s*", line)
    if m:
        write_file(world, guest.name, m.group(3), m.group(2).strip("'\"") + "\n")
        return
    argv = shlex.split(line)
    if not argv:
        return
    prog = table.get(argv[0]) or table.get(argv[0].rsplit("/", 1)[-1])
    if prog is not None:
        prog(Ctx(world=world, target=guest.name), argv)


# ---------------------------------------------------------------------------- the world, seen from a guest


def _guest(world: World, name: str) -> Guest:
    return world.guests[name]


def _vf_backing(world: World, guest: Guest) -> tuple[EsxiHost, Vmnic] | None:
    """The host and RoCE uplink the VM's VF hangs off, when the VM has a working VF."""
    vm = world.vms.get(guest.vm or "")
    host = world.hosts.get(vm.host) if vm else None
    if vm is None or host is None or vm.vf_port is None or not vm.powered_on:
        return None
    vmnic = next((n for n in host.vmnics if n.card == len(host.cards) - 1 and n.port == vm.vf_port), None)
    if vmnic is None or world.vf_count(host, vmnic) <= 0:
        return None
    return host, vmnic


def _switch_port(world: World, host: str, port: str) -> SwitchPort | None:
    for sw in world.switches.values():
        for p in sw.ports:
            if p.peer == (host, port):
                return p
    return None


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


def _baremetal_card(guest: Guest) -> Card:
    """The ConnectX-5 a bare-metal host owns (healthy firmware config, both ports Ethernet)."""
    def p(default: Any, value: Any) -> MlxParam:
        return MlxParam(default, value, value)

    index = zlib.crc32(guest.name.encode()) % 200 + 16
    config = {
        "MEMIC_BAR_SIZE": p(0, 0), "NUM_OF_VFS": p(0, 8), "NUM_OF_PF": p(2, 2), "SRIOV_EN": p(False, True),
        "PF_LOG_BAR_SIZE": p(5, 5), "VF_LOG_BAR_SIZE": p(1, 1), "NUM_PF_MSIX": p(63, 63),
        "NUM_VF_MSIX": p(11, 11), "LINK_TYPE_P1": p("IB", "ETH"), "LINK_TYPE_P2": p("IB", "ETH"),
        "ADVANCED_PCI_SETTINGS": p(False, False), "SAFE_MODE_THRESHOLD": p(10, 10), "SAFE_MODE_ENABLE": p(True, True),
    }
    return Card("ConnectX5", 4119, "MCX556A-ECA_Ax", "ConnectX-5 VPI adapter card; EDR IB (100Gb/s) and 100GbE; "
                "dual-port QSFP28; PCIe3.0 x16; tall bracket; ROHS R6", "MT_0000000008", "16.32.1010", None, "3b", 0,
                100000, True, config, base_mac=f"0c:42:a1:{index:02x}:7e:20")


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


# ---------------------------------------------------------------------------- small helpers


def _ok(text: str = "") -> Reply:
    return Reply(stdout=text)


def _err(text: str, code: int = 1) -> Reply:
    return Reply(stderr=text if text.endswith("\n") else text + "\n", exit=code)


def _rng(*parts: Any) -> random.Random:
    return random.Random(zlib.crc32("|".join(map(str, parts)).encode()))


def _flags(world: World, guest: Guest, iface: Interface) -> tuple[list[str], str]:
    if iface.name == "lo":
        return ["LOOPBACK", "UP", "LOWER_UP"], "UNKNOWN"
    if not iface.up:
        return ["BROADCAST", "MULTICAST"], "DOWN"
    if not _carrier(world, guest, iface):
        return ["NO-CARRIER", "BROADCAST", "MULTICAST", "UP"], "DOWN"
    return ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "UP"


def _carrier(world: World, guest: Guest, iface: Interface) -> bool:
    if not iface.up:
        return False
    if guest.vm is None:
        if iface.name in _bm_netdevs(guest):
            sp = _switch_port(world, guest.name, iface.name)
            return sp is not None and sp.link_up
        return True
    if iface.name == guest.roce_netdev:
        backing = _vf_backing(world, guest)
        if backing is None:
            return False
        host, vmnic = backing
        sp = _switch_port(world, host.name, vmnic.name)
        return vmnic.link_up and (sp is None or sp.link_up)
    return True


def _driver(guest: Guest, iface: Interface) -> str:
    if iface.name == "lo":
        return ""
    if guest.vm is None:
        return "mlx5_core" if iface.name in _bm_netdevs(guest) else "igb"
    return "mlx5_core" if iface.name == guest.roce_netdev else "vmxnet3"


def _max_mtu(guest: Guest, iface: Interface) -> int:
    return 9978 if _driver(guest, iface) == "mlx5_core" else 9000


# ---------------------------------------------------------------------------- ip (iproute2)


def _addr_info(world: World, guest: Guest, iface: Interface) -> list[dict[str, Any]]:
    info: list[dict[str, Any]] = []
    forever = 4294967295
    for a in iface.ipv4:
        net = ipaddress.IPv4Interface(a)
        entry: dict[str, Any] = {"family": "inet", "local": str(net.ip), "prefixlen": net.network.prefixlen}
        if iface.name == "lo":
            entry.update(scope="host", label="lo")
        else:
            entry.update(broadcast=str(net.network.broadcast_address), scope="global", noprefixroute=True,
                         label=iface.name)
        entry.update(valid_life_time=forever, preferred_life_time=forever)
        info.append(entry)
    for a in ipv6_addrs(world, guest, iface):
        ip, _, plen = a.partition("/")
        scope = "host" if ip == "::1" else "link" if ip.startswith("fe80") else "global"
        entry = {"family": "inet6", "local": ip, "prefixlen": int(plen), "scope": scope}
        if scope != "host":
            entry["noprefixroute"] = True
        entry.update(valid_life_time=forever, preferred_life_time=forever)
        info.append(entry)
    return info


def _ip_objects(world: World, guest: Guest, ifaces: list[Interface], with_addr: bool) -> list[dict[str, Any]]:
    objs = []
    all_visible = visible_interfaces(world, guest)
    for iface in ifaces:
        flags, state = _flags(world, guest, iface)
        o: dict[str, Any] = {"ifindex": all_visible.index(iface) + 1, "ifname": iface.name, "flags": flags,
                             "mtu": iface.mtu, "qdisc": "noqueue" if iface.name == "lo" else "mq",
                             "operstate": state, "group": "default", "txqlen": 1000,
                             "link_type": "loopback" if iface.name == "lo" else "ether", "address": iface.mac,
                             "broadcast": "00:00:00:00:00:00" if iface.name == "lo" else "ff:ff:ff:ff:ff:ff"}
        if with_addr:
            o["addr_info"] = _addr_info(world, guest, iface)
        objs.append(o)
    return objs


def _ip_text(world: World, guest: Guest, ifaces: list[Interface], with_addr: bool) -> str:
    out = []
    for o in _ip_objects(world, guest, ifaces, True):
        out.append(f"{o['ifindex']}: {o['ifname']}: <{','.join(o['flags'])}> mtu {o['mtu']} qdisc {o['qdisc']} "
                   f"state {o['operstate']} group default qlen 1000")
        out.append(f"    link/{o['link_type']} {o['address']} brd {o['broadcast']}")
        if not with_addr:
            continue
        for a in o["addr_info"]:
            npr = " noprefixroute" if a.get("noprefixroute") else ""
            if a["family"] == "inet":
                brd = f" brd {a['broadcast']}" if "broadcast" in a else ""
                out.append(f"    inet {a['local']}/{a['prefixlen']}{brd} scope {a['scope']}{npr} {a['label']}")
            else:
                out.append(f"    inet6 {a['local']}/{a['prefixlen']} scope {a['scope']}{npr} ")
            out.append("       valid_lft forever preferred_lft forever")
    return "\n".join(out) + "\n"


def _ip_brief(world: World, guest: Guest, ifaces: list[Interface], with_addr: bool) -> str:
    out = []
    for o in _ip_objects(world, guest, ifaces, True):
        if with_addr:
            addrs = " ".join(f"{a['local']}/{a['prefixlen']}" for a in o["addr_info"])
            out.append(f"{o['ifname']:<16} {o['operstate']:<14} {addrs} ")
        else:
            out.append(f"{o['ifname']:<16} {o['operstate']:<14} {o['address']} <{','.join(o['flags'])}> ")
    return "\n".join(out) + "\n"


_IP_OBJECTS = {"a": "addr", "ad": "addr", "addr": "addr", "address": "addr", "l": "link", "li": "link",
               "link": "link", "r": "route", "ro": "route", "route": "route"}


def prog_ip(ctx: Ctx, argv: list[str]) -> Reply:
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    args = argv[1:]
    opts = set()
    while args and args[0].startswith("-") and args[0] not in ("-h", "-help"):
        a = args.pop(0)
        if a in ("-j", "-json"):
            opts.add("json")
        elif a in ("-br", "-brief"):
            opts.add("brief")
        elif a in ("-d", "-details", "-s", "-stats", "-p", "-pretty", "-c", "-color", "-4", "-6"):
            opts.add(a.lstrip("-"))
        else:
            return _err(f'Option "{a}" is unknown, try "ip -help".', 255)
    if not args:
        return _err("Usage: ip [ OPTIONS ] OBJECT { COMMAND | help }", 255)
    if args[0] not in _IP_OBJECTS:
        return _err(f'Object "{args[0]}" is unknown, try "ip help".', 1)
    obj, rest = _IP_OBJECTS[args[0]], args[1:]
    visible = visible_interfaces(world, guest)
    cmd = rest[0] if rest else "show"
    if obj == "route":
        return _ip_route(guest, visible)
    if cmd in ("show", "list", "lst", "sh", "ls", "dev"):
        words = rest[1:] if cmd != "dev" else rest
        dev = None
        if words and words[0] == "dev" and len(words) > 1:
            dev = words[1]
        elif words and words[0] != "up":
            dev = words[0]
        ifaces = visible
        if dev is not None:
            ifaces = [i for i in visible if i.name == dev]
            if not ifaces:
                return _err(f'Device "{dev}" does not exist.', 1)
        if "up" in words:
            ifaces = [i for i in ifaces if i.up]
        if "json" in opts:
            return _ok(json.dumps(_ip_objects(world, guest, ifaces, obj == "addr"), separators=(",", ":")) + "\n")
        if "brief" in opts:
            return _ok(_ip_brief(world, guest, ifaces, obj == "addr"))
        return _ok(_ip_text(world, guest, ifaces, obj == "addr"))
    if obj == "link" and cmd == "set":
        return _ip_link_set(world, guest, visible, rest[1:])
    if obj == "addr" and cmd in ("add", "del", "delete", "flush"):
        return _ip_addr_change(world, guest, visible, cmd, rest[1:])
    return _err(f'Command "{cmd}" is unknown, try "ip {obj} help".', 1)


def _ip_link_set(world: World, guest: Guest, visible: list[Interface], words: list[str]) -> Reply:
    if words and words[0] == "dev":
        words = words[1:]
    if not words:
        return _err('Not enough information: "dev" argument is required.', 1)
    name, words = words[0], words[1:]
    iface = next((i for i in visible if i.name == name), None)
    if iface is None:
        return _err(f'Cannot find device "{name}"', 1)
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("up", "down"):
            iface.up = w == "up"
            i += 1
        elif w == "mtu" and i + 1 >= len(words):
            return _err('Command line is not complete. Try option "help"', 255)
        elif w == "mtu":
            try:
                mtu = int(words[i + 1])
            except ValueError:
                return _err(f'Error: argument "{words[i + 1]}" is wrong: Invalid "mtu" value\n\n', 255)  # iproute2 6.1
            if mtu > _max_mtu(guest, iface):
                return _err("Error: mtu greater than device maximum.", 2)
            if mtu < 68:
                return _err("Error: mtu less than device minimum.", 2)
            vm = world.vms.get(guest.vm or "")
            if iface.name == guest.roce_netdev and vm is not None and not vm.allow_guest_mtu_change \
                    and mtu != iface.mtu:
                return _err("RTNETLINK answers: Operation not permitted", 2)
            iface.mtu = mtu
            i += 2
        else:
            return _err(f'Error: either "dev" is duplicate, or "{w}" is a garbage.', 255)
    return _ok()


def _ip_addr_change(world: World, guest: Guest, visible: list[Interface], cmd: str, words: list[str]) -> Reply:
    st = _gs(world, guest)
    dev = words[words.index("dev") + 1] if "dev" in words and words.index("dev") + 1 < len(words) else None
    if cmd == "flush":
        dev = dev or (words[0] if words else None)
        iface = next((i for i in visible if i.name == dev), None)
        if iface is None:
            return _err(f'Device "{dev}" does not exist.', 1)
        iface.ipv4 = []
        st["ipv6"][iface.name] = []
        return _ok()
    if dev is None or not words:
        return _err('Not enough information: "dev" argument is required.', 1)
    addr = words[0]
    iface = next((i for i in visible if i.name == dev), None)
    if iface is None:
        return _err(f'Cannot find device "{dev}"', 1)
    try:
        net = ipaddress.ip_interface(addr if "/" in addr else addr + ("/32" if ":" not in addr else "/128"))
    except ValueError:
        return _err(f'Error: any valid prefix is expected rather than "{addr}".', 1)
    text = f"{net.ip}/{net.network.prefixlen}"
    if net.version == 4:
        present = [a for a in iface.ipv4 if ipaddress.IPv4Interface(a).ip == net.ip]
        if cmd == "add":
            if present:
                return _err("RTNETLINK answers: File exists", 2)
            iface.ipv4.append(text)
        elif not present:
            return _err("RTNETLINK answers: Cannot assign requested address", 2)
        else:
            iface.ipv4.remove(present[0])
        return _ok()
    extra = st["ipv6"].setdefault(iface.name, [])
    if cmd == "add":
        if text in extra:
            return _err("RTNETLINK answers: File exists", 2)
        extra.append(text)
    elif text not in extra:
        return _err("RTNETLINK answers: Cannot assign requested address", 2)
    else:
        extra.remove(text)
    return _ok()


def _ip_route(guest: Guest, visible: list[Interface]) -> Reply:
    lines = []
    mgmt = next((i for i in visible if i.name not in ("lo", guest.roce_netdev) and i.ipv4), None)
    if mgmt:
        net = ipaddress.IPv4Interface(mgmt.ipv4[0]).network
        lines.append(f"default via {net.network_address + 1} dev {mgmt.name} proto static metric 100 ")
    for n, i in enumerate(v for v in visible if v.name != "lo"):
        for a in i.ipv4:
            ip = ipaddress.IPv4Interface(a)
            lines.append(f"{ip.network} dev {i.name} proto kernel scope link src {ip.ip} metric {100 + n} ")
    return _ok("".join(line + "\n" for line in lines))


# ---------------------------------------------------------------------------- ethtool

_ETHTOOL_USAGE = "ethtool: bad command line argument(s)\nFor more information run ethtool -h"


def _empty_rdma() -> dict[str, Any]:
    return {"tx_bytes": 0, "rx_bytes": 0, "tx_packets": 0, "rx_packets": 0, "discards": 0,
            "pause_rx": [0] * 8, "pause_tx": [0] * 8, "prio_rx_bytes": [0] * 8, "prio_tx_bytes": [0] * 8}


def _ethtool_stats(world: World, guest: Guest, iface: Interface) -> list[tuple[str, int]]:
    st = _gs(world, guest)
    c = st["counters"].setdefault(iface.name, {"rx_bytes": 0, "tx_bytes": 0, "rx_packets": 0, "tx_packets": 0})
    if _driver(guest, iface) != "mlx5_core":
        return [("Tx Queue#", 0), ("  TSO pkts tx", 0), ("  ucast pkts tx", c["tx_packets"]),
                ("  ucast bytes tx", c["tx_bytes"]), ("Rx Queue#", 0), ("  ucast pkts rx", c["rx_packets"]),
                ("  ucast bytes rx", c["rx_bytes"])]
    r = st["rdma"] if iface.name == guest.roce_netdev else _empty_rdma()
    rows = [("rx_packets", c["rx_packets"]), ("rx_bytes", c["rx_bytes"]), ("tx_packets", c["tx_packets"]),
            ("tx_bytes", c["tx_bytes"]), ("tx_tso_packets", 0), ("tx_tso_bytes", 0), ("rx_csum_complete", 0),
            ("rx_xdp_drop", 0), ("tx_csum_partial", c["tx_packets"] // 2), ("tx_queue_stopped", 0),
            ("tx_queue_dropped", 0), ("rx_out_of_buffer", r.get("out_of_buffer", 0)), ("rx_cache_reuse", 0),
            ("rx_vport_unicast_packets", c["rx_packets"]),
            ("rx_vport_unicast_bytes", c["rx_bytes"] + 4 * c["rx_packets"]),
            ("tx_vport_unicast_packets", c["tx_packets"]),
            ("tx_vport_unicast_bytes", c["tx_bytes"] + 4 * c["tx_packets"]),
            ("rx_vport_multicast_packets", 7), ("rx_vport_multicast_bytes", 658),
            ("tx_vport_multicast_packets", 9), ("tx_vport_multicast_bytes", 806),
            ("rx_vport_broadcast_packets", 3), ("rx_vport_broadcast_bytes", 192),
            ("tx_vport_broadcast_packets", 2), ("tx_vport_broadcast_bytes", 128),
            ("rx_vport_rdma_unicast_packets", r["rx_packets"]), ("rx_vport_rdma_unicast_bytes", r["rx_bytes"]),
            ("tx_vport_rdma_unicast_packets", r["tx_packets"]), ("tx_vport_rdma_unicast_bytes", r["tx_bytes"]),
            ("rx_vport_rdma_multicast_packets", 0), ("rx_vport_rdma_multicast_bytes", 0),
            ("tx_vport_rdma_multicast_packets", 0), ("tx_vport_rdma_multicast_bytes", 0)]
    if guest.vm is None:  # the PF sees the physical port and its priorities
        phy_rx = c["rx_bytes"] + r["rx_bytes"] + 4 * (c["rx_packets"] + r["rx_packets"])
        phy_tx = c["tx_bytes"] + r["tx_bytes"] + 4 * (c["tx_packets"] + r["tx_packets"])
        rows += [("rx_packets_phy", c["rx_packets"] + r["rx_packets"]), ("rx_bytes_phy", phy_rx),
                 ("tx_packets_phy", c["tx_packets"] + r["tx_packets"]), ("tx_bytes_phy", phy_tx),
                 ("rx_discards_phy", r["discards"]), ("tx_discards_phy", 0),
                 ("rx_pause_ctrl_phy", 0), ("tx_pause_ctrl_phy", 0)]
        for p in range(8):  # RoCE bytes on the priority their class mapped to; TCP/IP on 0
            rb = r["prio_rx_bytes"][p] + (c["rx_bytes"] if p == 0 else 0)
            tb = r["prio_tx_bytes"][p] + (c["tx_bytes"] if p == 0 else 0)
            rows += [(f"rx_prio{p}_bytes", rb), (f"rx_prio{p}_packets", rb // 1024), (f"tx_prio{p}_bytes", tb),
                     (f"tx_prio{p}_packets", tb // 1024)]
            if guest.qos_pfc[p]:
                rows += [(f"rx_prio{p}_pause", r["pause_rx"][p]), (f"rx_prio{p}_pause_duration", r["pause_rx"][p] * 3),
                         (f"tx_prio{p}_pause", r["pause_tx"][p]), (f"tx_prio{p}_pause_duration", r["pause_tx"][p] * 3),
                         (f"rx_prio{p}_pause_transition", r["pause_rx"][p] // 2)]
        rows += [("rx_global_pause", 0), ("rx_global_pause_duration", 0), ("tx_global_pause", 0),
                 ("tx_global_pause_duration", 0), ("rx_global_pause_transition", 0),
                 ("tx_pause_storm_warning_events", 0), ("tx_pause_storm_error_events", 0)]
    return rows


def _prio_for(world: World, guest: Guest, dscp: int) -> int:
    """The priority traffic with this DSCP lands in on the guest's port (trust + the default dscp2prio)."""
    if guest.vm is None:
        return dscp >> 3 if guest.qos_trust == "dscp" else 0
    host = world.host_of(guest)
    trust = host.module_params_active.get("trust_state", "1") if host else "1"
    return dscp >> 3 if trust == "2" else 0


def prog_ethtool(ctx: Ctx, argv: list[str]) -> Reply:
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    args = argv[1:]
    if not args:
        return _err(_ETHTOOL_USAGE, 1)
    if args[0] == "--version":
        return _ok("ethtool version 5.8\n")
    flag = args[0] if args[0].startswith("-") else None
    name = args[1] if flag and len(args) > 1 else (None if flag else args[0])
    if not name:
        return _err(_ETHTOOL_USAGE, 1)
    iface = next((i for i in visible_interfaces(world, guest) if i.name == name), None)
    if iface is None:
        return _err("netlink error: no device matches name (offset 24)\nnetlink error: No such device", 1)
    paravirtual = _driver(guest, iface) == "vmxnet3"  # no pause parameters to show or set
    # an mlx5 VF is not the port owner: the kernel refuses to set pause (EOPNOTSUPP, Linux commit "net/mlx5e:
    # Only support tx/rx pause setting for port owner") and its read cannot see the port's (zeroed: off)
    mlx5_vf = guest.vm is not None and _driver(guest, iface) == "mlx5_core"
    if flag in ("-a", "--show-pause"):
        if paravirtual:  # no get_pauseparam: ethtool's netlink request fails (Debian ethtool 6.1's text, exit 1)
            return _err("netlink error: Operation not supported", 1)
        roce = iface.name == guest.roce_netdev and not mlx5_vf
        rx, tx = (guest.pause_rx, guest.pause_tx) if roce else (False, False)
        on = {True: "on", False: "off"}
        return _ok(f"Pause parameters for {iface.name}:\nAutonegotiate:\toff\nRX:\t\t{on[rx]}\nTX:\t\t{on[tx]}\n\n")
    if flag in ("-A", "--pause"):
        rest = args[2:]
        for n, key in enumerate(rest[::2]):  # ethtool's netlink parser, its messages (Debian ethtool 6.1)
            if key not in ("rx", "tx", "autoneg"):
                return _err(f"ethtool (-A): unknown parameter '{key}'", 1)
            if 2 * n + 1 >= len(rest):
                return _err(f"ethtool (-A): no value for parameter '{key}'", 1)
            if rest[2 * n + 1] not in ("on", "off"):
                return _err(f"ethtool (-A): invalid value '{rest[2 * n + 1]}' for parameter '{key}'", 1)
        if paravirtual or mlx5_vf:  # EOPNOTSUPP through ethtool's netlink path (Debian ethtool 6.1: text, exit 76)
            return _err("netlink error: Operation not supported", 76)
        for key, val in zip(rest[::2], rest[1::2], strict=True):
            if iface.name == guest.roce_netdev and key == "rx":
                guest.pause_rx = val == "on"
            elif iface.name == guest.roce_netdev and key == "tx":
                guest.pause_tx = val == "on"
        return _ok()
    if flag in ("-S", "--statistics"):
        return _ok("NIC statistics:\n" + "".join(f"     {k}: {v}\n" for k, v in _ethtool_stats(world, guest, iface)))
    if flag in ("-i", "--driver"):
        return _ok(_ethtool_info(world, guest, iface))
    if flag is None:
        return _ok(_ethtool_settings(world, guest, iface))
    return _err(_ETHTOOL_USAGE, 1)


def _ethtool_info(world: World, guest: Guest, iface: Interface) -> str:
    drv = _driver(guest, iface)
    if drv == "mlx5_core":
        port = next((p for p in rdma_ports(world, guest) if p.netdev is iface), None)
        host = world.host_of(guest)
        card = port.card if port else (host.roce_card if host else _gs(world, guest)["card"])
        stack = guest.ofed_version and not guest.ofed_pending
        version = guest.ofed_version.replace("MLNX_OFED_LINUX-", "")[:-2] if stack else guest.kernel
        pci = VM_PCI.get(iface.name, "0000:1b:00.0") if guest.vm else (port.pci if port else "0000:3b:00.0")
        return (f"driver: mlx5_core\nversion: {version}\nfirmware-version: {card.fw_version} ({card.psid})\n"
                f"expansion-rom-version: \nbus-info: {pci}\nsupports-statistics: yes\nsupports-test: yes\n"
                "supports-eeprom-access: no\nsupports-register-dump: no\nsupports-priv-flags: yes\n")
    return (f"driver: {drv}\nversion: 1.5.0.0-k-NAPI\nfirmware-version: \nexpansion-rom-version: \n"
            f"bus-info: {VM_PCI.get(iface.name, '0000:0b:00.0')}\nsupports-statistics: yes\nsupports-test: no\n"
            "supports-eeprom-access: no\nsupports-register-dump: yes\nsupports-priv-flags: no\n")


def _ethtool_settings(world: World, guest: Guest, iface: Interface) -> str:
    carrier = _carrier(world, guest, iface)
    if _driver(guest, iface) == "mlx5_core":
        port = next((p for p in rdma_ports(world, guest) if p.netdev is iface), None)
        speed = port.speed_mbps if port else 100000
        return (f"Settings for {iface.name}:\n\tSupported ports: [ FIBRE ]\n"
                "\tSupported link modes:   100000baseKR4/Full\n\t                        100000baseSR4/Full\n"
                "\t                        100000baseCR4/Full\n\t                        100000baseLR4_ER4/Full\n"
                "\tSupported pause frame use: Symmetric\n\tSupports auto-negotiation: Yes\n"
                "\tSupported FEC modes: None RS\n\tAdvertised link modes:  100000baseCR4/Full\n"
                "\tAdvertised pause frame use: No\n\tAdvertised auto-negotiation: Yes\n"
                "\tAdvertised FEC modes: RS\n"
                f"\tSpeed: {str(speed) + 'Mb/s' if carrier else 'Unknown!'}\n"
                f"\tDuplex: {'Full' if carrier else 'Unknown! (255)'}\n\tPort: Direct Attach Copper\n\tPHYAD: 0\n"
                "\tTransceiver: internal\n\tAuto-negotiation: on\n\tSupports Wake-on: d\n\tWake-on: d\n"
                "\tCurrent message level: 0x00000004 (4)\n\t\t\t       link\n"
                f"\tLink detected: {'yes' if carrier else 'no'}\n")
    return (f"Settings for {iface.name}:\n\tSupported ports: [ TP ]\n\tSupported link modes:   1000baseT/Full\n"
            "\t                        10000baseT/Full\n\tSupported pause frame use: No\n"
            "\tSupports auto-negotiation: No\n\tSupported FEC modes: Not reported\n"
            "\tAdvertised link modes:  Not reported\n\tAdvertised pause frame use: No\n"
            "\tAdvertised auto-negotiation: No\n\tAdvertised FEC modes: Not reported\n\tSpeed: 10000Mb/s\n"
            "\tDuplex: Full\n\tPort: Twisted Pair\n\tPHYAD: 0\n\tTransceiver: internal\n\tAuto-negotiation: off\n"
            "\tMDI-X: Unknown\n\tSupports Wake-on: uag\n\tWake-on: d\n"
            f"\tLink detected: {'yes' if carrier else 'no'}\n")


# ---------------------------------------------------------------------------- system tools


def prog_uname(ctx: Ctx, argv: list[str]) -> Reply:
    guest = _guest(ctx.world, ctx.target)
    parts = {"-s": "Linux", "-n": guest.name, "-r": guest.kernel, "-v": "#1 SMP Thu Apr 29 08:54:30 EDT 2021",
             "-m": "x86_64"}
    flags = argv[1:] or ["-s"]
    if "-a" in flags:
        return _ok(f"Linux {guest.name} {guest.kernel} {parts['-v']} x86_64 x86_64 x86_64 GNU/Linux\n")
    out = []
    for f in flags:
        if f not in parts:
            return _err(f"uname: invalid option -- '{f.lstrip('-')}'\nTry 'uname --help' for more information.", 1)
        out.append(parts[f])
    return _ok(" ".join(out) + "\n")


def prog_hostname(ctx: Ctx, argv: list[str]) -> Reply:
    guest = _guest(ctx.world, ctx.target)
    if "-I" in argv[1:]:
        addrs = [a.split("/")[0] for i in visible_interfaces(ctx.world, guest) if i.name != "lo" for a in i.ipv4]
        return _ok(" ".join(addrs) + " \n")
    return _ok(guest.name + "\n")


# A bare-metal host's kernel log, the IOMMU part (Intel Xeon Skylake-SP in a PowerEdge; the kernel runs
# with intel_iommu=on iommu=pt, as SR-IOV wants): the lab's bare-metal servers have VT-d on.
_DMESG_IOMMU = """[    0.000000] Command line: BOOT_IMAGE=(hd0,gpt2)/vmlinuz-{kernel} root=/dev/mapper/rhel-root ro intel_iommu=on iommu=pt
[    0.011873] ACPI: DMAR 0x000000006FF9B000 000170 (v01 DELL   PE_SC3   00000001 DELL 00000001)
[    0.011921] ACPI: Reserving DMAR table memory at [mem 0x6ff9b000-0x6ff9b16f]
[    0.402170] DMAR: IOMMU enabled
[    1.137954] DMAR: Host address width 46
[    1.137957] DMAR: DRHD base: 0x000000d37fc000 flags: 0x0
[    1.137968] DMAR: dmar0: reg_base_addr d37fc000 ver 1:0 cap 8d2078c106f0466 ecap f020df
[    1.137972] DMAR: DRHD base: 0x000000fbffc000 flags: 0x1
[    1.137979] DMAR: dmar1: reg_base_addr fbffc000 ver 1:0 cap 8d2078c106f0466 ecap f020df
[    1.137983] DMAR: RMRR base: 0x0000006f0d0000 end: 0x0000006f0d2fff
[    1.138001] DMAR-IR: IOAPIC id 12 under DRHD base  0xfbffc000 IOMMU 1
[    1.138004] DMAR-IR: Enabled IRQ remapping in x2apic mode
[    3.402716] DMAR: Intel(R) Virtualization Technology for Directed I/O
[    4.118204] mlx5_core 0000:3b:00.0: firmware version: 16.32.1010
[    4.912637] mlx5_core 0000:3b:00.0: 126.016 Gb/s available PCIe bandwidth (8.0 GT/s PCIe x16 link)
"""


def prog_dmesg(ctx: Ctx, argv: list[str]) -> Reply:
    return _ok(_DMESG_IOMMU.format(kernel=_guest(ctx.world, ctx.target).kernel))


def prog_reboot(ctx: Ctx, argv: list[str]) -> Reply:
    return Reply(action="reboot")


def prog_shutdown(ctx: Ctx, argv: list[str]) -> Reply:
    if "-r" in argv[1:]:
        return Reply(action="reboot")
    return _err("shutdown: the lab only simulates reboots (shutdown -r now)", 1)


_SYSTEM_UNITS = {"sshd.service": True, "NetworkManager.service": True, "openibd.service": True,
                 "firewalld.service": False, "lldpad.service": False}


def prog_systemctl(ctx: Ctx, argv: list[str]) -> Reply:
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    st = _gs(world, guest)
    args = [a for a in argv[1:] if not a.startswith("-")]
    if not args:
        return _ok()
    verb, units = args[0], [u if "." in u else u + ".service" for u in args[1:]]
    known = dict(_SYSTEM_UNITS)
    if not guest.ofed_version:
        known.pop("openibd.service")
    for path in st["etc"]:
        if path.startswith("/etc/systemd/system/"):
            known.setdefault(path.rsplit("/", 1)[-1], False)
    if verb == "daemon-reload":
        return _ok()
    for u in units:
        if u not in known and u not in st["units"]:
            if verb == "status":
                return _err(f"Unit {u} could not be found.", 4)
            return _err(f"Failed to {verb} {u}: Unit {u} not found.", 5)
    if verb in ("enable", "disable"):
        out = []
        for u in units:
            st["units"][u] = verb == "enable"
            out.append(f"Created symlink /etc/systemd/system/multi-user.target.wants/{u} \u2192 /etc/systemd/system/{u}."
                       if verb == "enable" else f"Removed /etc/systemd/system/multi-user.target.wants/{u}.")
        return Reply(stderr="".join(line + "\n" for line in out))
    if verb == "is-enabled":
        on = all(st["units"].get(u, known.get(u, False)) for u in units)
        return Reply(stdout=("enabled" if on else "disabled") + "\n", exit=0 if on else 1)
    if verb in ("start", "restart", "stop", "reload"):
        for u in units:
            if u == "openibd.service" and verb in ("start", "restart"):
                _driver_reload(world, guest, st)
            elif u in st["units"] and verb in ("start", "restart"):
                _exec_unit(world, guest, programs(world, guest.name), st["etc"].get(f"/etc/systemd/system/{u}", ""))
        return _ok()
    if verb in ("is-active", "status"):
        u = units[0] if units else "sshd.service"
        active = u in known and (u not in st["units"] or st["units"][u])
        if verb == "is-active":
            return Reply(stdout=("active" if active else "inactive") + "\n", exit=0 if active else 3)
        return Reply(stdout=f"\u25cf {u}\n   Loaded: loaded (/usr/lib/systemd/system/{u}; enabled; vendor preset: "
                     f"enabled)\n   Active: {'active (running)' if active else 'inactive (dead)'}\n",
                     exit=0 if active else 3)
    return _err(f"Unknown operation {verb}.", 1)


def _uuid_of(guest: Guest, name: str) -> str:
    h = f"{zlib.crc32(f'{guest.name}/{name}'.encode()):08x}"
    return f"{h}-{h[:4]}-4{h[5:8]}-a{h[1:4]}-{h}{h[:4]}"


def prog_nmcli(ctx: Ctx, argv: list[str]) -> Reply:
    """NetworkManager, minimal: each interface's profile holds what applies at boot (and on `con up`)."""
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    st = _gs(world, guest)
    args = argv[1:]
    terse = False
    while args and args[0].startswith("-"):
        a = args.pop(0)
        if a in ("-t", "--terse"):
            terse = True
        elif a in ("-f", "--fields", "-g", "--get-values") and args:
            args.pop(0)
    if not args or args[0] not in ("con", "c", "connection", "dev", "d", "device"):
        return _err(f"Error: argument '{args[0] if args else ''}' not understood. Try passing --help instead.", 2)
    visible = visible_interfaces(world, guest)
    if args[0] in ("dev", "d", "device"):
        rows = [(i.name, "loopback" if i.name == "lo" else "ethernet",
                 "unmanaged" if i.name == "lo" else "connected" if i.up else "disconnected",
                 "--" if i.name == "lo" else i.name) for i in visible]
        if terse:
            return _ok("".join(":".join(r) + "\n" for r in rows))
        return _ok("DEVICE  TYPE      STATE      CONNECTION \n"
                   + "".join(f"{r[0]:<7} {r[1]:<9} {r[2]:<10} {r[3]} \n" for r in rows))
    sub, rest = (args[1] if len(args) > 1 else "show"), args[2:]
    profiles = {n: p for n, p in st["nm"].items() if n != "lo"}
    if sub in ("show", "s"):
        return _nmcli_show(guest, profiles, {i.name for i in visible}, rest, terse)
    if sub in ("mod", "modify", "m"):
        return _nmcli_mod(guest, st, profiles, rest)
    if sub == "up":
        name = rest[-1] if rest else ""
        prof = profiles.get(name)
        iface = next((i for i in visible if i.name == name), None)
        if prof is None or iface is None:
            return _err("Error: Connection activation failed: No suitable device found for this connection.", 4)
        iface.mtu, iface.ipv4, iface.up = prof["mtu"], list(prof["ipv4"]), True
        guest.pause_rx, guest.pause_tx = st["persist"]["pause"]
        return _ok("Connection successfully activated (D-Bus active path: "
                   f"/org/freedesktop/NetworkManager/ActiveConnection/{3 + list(profiles).index(name)})\n")
    if sub == "reload":
        return _ok()
    return _err(f"Error: argument '{sub}' not understood. Try passing --help instead.", 2)


def _nmcli_show(guest: Guest, profiles: dict[str, Any], visible: set[str], rest: list[str], terse: bool) -> Reply:
    if rest:
        prof = profiles.get(rest[-1])
        if prof is None:
            return _err(f"Error: {rest[-1]} - no such connection profile.", 10)
        return _ok(f"connection.id:                          {rest[-1]}\n"
                   f"connection.interface-name:              {rest[-1]}\n"
                   f"connection.autoconnect:                 {'yes' if prof['autoconnect'] else 'no'}\n"
                   f"802-3-ethernet.mtu:                     {prof['mtu'] if prof['mtu'] != 1500 else 'auto'}\n"
                   f"ipv4.method:                            {'manual' if prof['ipv4'] else 'disabled'}\n"
                   f"ipv4.addresses:                         {', '.join(prof['ipv4']) or '--'}\n")
    rows = [(n, _uuid_of(guest, n), "ethernet", n if n in visible else "--") for n in profiles]
    if terse:
        return _ok("".join(":".join(r) + "\n" for r in rows))
    return _ok("NAME    UUID                                  TYPE      DEVICE \n"
               + "".join(f"{r[0]:<7} {r[1]}  {r[2]:<9} {r[3]} \n" for r in rows))


def _nmcli_mod(guest: Guest, st: dict[str, Any], profiles: dict[str, Any], rest: list[str]) -> Reply:
    if not rest:
        return _err("Error: No arguments provided.", 2)
    name, props = rest[0], rest[1:]
    prof = profiles.get(name)
    if prof is None:
        return _err(f"Error: unknown connection '{name}'.", 10)
    if not props or len(props) % 2:
        return _err("Error: value for '" + (props[-1] if props else "") + "' is missing.", 2)
    for key, val in zip(props[::2], props[1::2], strict=True):
        k = key.lstrip("+-")
        if k in ("802-3-ethernet.mtu", "ethernet.mtu"):
            if not (val.isdigit() or val == "auto"):
                return _err(f"Error: failed to modify 802-3-ethernet.mtu: '{val}' is not a valid number.", 2)
            prof["mtu"] = 1500 if val == "auto" else int(val)
        elif k == "ipv4.addresses":
            addrs = [a.strip() for a in val.split(",") if a.strip()]
            prof["ipv4"] = prof["ipv4"] + addrs if key.startswith("+") else addrs
        elif k == "ipv6.addr-gen-mode":
            if name == guest.roce_netdev:
                st["ll_mode"] = "stable-privacy" if val == "stable-privacy" else "eui64"
        elif k == "connection.autoconnect":
            prof["autoconnect"] = val in ("yes", "true", "1")
        elif k in ("ethtool.pause-rx", "ethtool.pause-tx"):
            rx, tx = st["persist"]["pause"]
            on = val in ("on", "yes", "true", "1")
            st["persist"]["pause"] = (on, tx) if k.endswith("rx") else (rx, on)
        elif k not in ("ipv4.method", "ipv6.method", "ipv4.gateway", "ipv4.never-default", "connection.id"):
            return _err(f"Error: invalid property '{k}': not supported by the lab.", 2)
    return _ok()


_PACKAGES = {"rdma-core", "libibverbs-utils", "infiniband-diags", "perftest", "mlnx-tools", "kernel-modules-extra",
             "tk", "iproute", "ethtool", "pciutils", "lsof", "tcl", "gcc-gfortran", "createrepo", "rpm-build"}


def prog_dnf(ctx: Ctx, argv: list[str]) -> Reply:
    """`dnf/yum install -y PKG…`: rdma-core + libibverbs-utils give the inbox verbs stack."""
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    st = _gs(world, guest)
    args = [a for a in argv[1:] if not a.startswith("-")]
    if not args or args[0] not in ("install", "remove", "list"):
        return _err(f"No such command: {args[0] if args else ''}. Please use /usr/bin/{argv[0]} --help", 1)
    pkgs = args[1:]
    if args[0] == "install":
        for p in pkgs:
            if p not in _PACKAGES:
                return _err(f"No match for argument: {p}\nError: Unable to find a match: {p}", 1)
        st["packages"].update(pkgs)
        if {"rdma-core", "libibverbs-utils"} <= st["packages"]:
            guest.rdma_core = True
        if "ethtool" in pkgs:
            guest.missing_tools.discard("ethtool")
        return _ok("".join(f"Installing: {p}\n" for p in pkgs) + "\nComplete!\n")
    if args[0] == "remove":
        st["packages"].difference_update(pkgs)
        if "rdma-core" in pkgs or "libibverbs-utils" in pkgs:
            guest.rdma_core = False
        return _ok("Complete!\n")
    return _ok("".join(f"{p}.x86_64\n" for p in sorted(st["packages"])))


def prog_tar(ctx: Ctx, argv: list[str]) -> Reply:
    """Only the MLNX_OFED bundle the lab stages in /tmp unpacks (into /tmp/<bundle>-rhel8.4-x86_64)."""
    names = [a for a in argv[1:] if not a.startswith("-") and not re.fullmatch(r"[xzvfCc]+", a)]
    if not names:
        return _err("tar: You must specify one of the '-Acdtrux', '--delete' or '--test-label' options", 2)
    if not names[0].endswith(f"{OFED_BUNDLE}-rhel8.4-x86_64.tgz"):
        return _err(f"tar: {names[0]}: Cannot open: No such file or directory\ntar: Error is not recoverable: "
                    "exiting now", 2)
    return _ok()


def _next_pid(world: World) -> int:
    lab = _lab(world)
    lab["pids"] += 37
    return lab["pids"]


_OFED_INSTALL_OPTS = {"--force", "-force", "--add-kernel-support", "--skip-repo", "--without-fw-update", "-q",
                      "--hpc", "--all", "--basic", "--dpdk", "--upstream-libs", "--without-depcheck"}


def prog_mlnxofedinstall(ctx: Ctx, argv: list[str]) -> Reply:
    """MLNX_OFED's installer: installs now; the new stack loads with openibd force-restart or a reboot."""
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    st = _gs(world, guest)
    m = re.search(r"(MLNX_OFED_LINUX-\d+\.\d+-[\d.]+?)-", argv[0])
    bundle = m.group(1) if m else OFED_BUNDLE
    bad = [a for a in argv[1:] if a.startswith("-") and a not in _OFED_INSTALL_OPTS]
    if bad:
        return _err(f"Unsupported parameter: {bad[0]}", 1)
    pid = _next_pid(world)
    logs = f"/tmp/MLNX_OFED_LINUX.{pid}.logs"
    kernel_dir = f"/tmp/{bundle}-{guest.kernel.rsplit('.', 1)[0]}"
    out = [f"Logs dir: {logs}", f"General log file: {logs}/general.log"]
    if "--add-kernel-support" in argv[1:]:
        out += [f"Note: This program will create MLNX_OFED_LINUX TGZ for rhel8.4 under {kernel_dir} directory.",
                f"See log file /tmp/mlnx_iso.{pid}_logs/mlnx_ofed_iso.{pid}.log", "",
                "Checking if all needed packages are installed...", "Building MLNX_OFED_LINUX RPMS . Please wait...",
                f"Created {kernel_dir}/{bundle}-rhel8.4-ext.tgz", ""]
    out += ["Below is the list of MLNX_OFED_LINUX packages that you have chosen",
            "(some may have been already installed by other means):", "",
            ("ofed-scripts mlnx-tools mlnx-ofa_kernel mlnx-ofa_kernel-modules rdma-core libibverbs libibverbs-utils "
             "ibacm librdmacm librdmacm-utils infiniband-diags perftest ucx openmpi mpitests_openmpi"), "",
            "Checking SW Requirements...", "Removing old packages...", "Installing new packages",
            "Installing ofed-scripts-5.4...", "Installing mlnx-tools-5.2.0...", "Installing mlnx-ofa_kernel-5.4...",
            "Installing rdma-core-54mlnx1...", "Installing perftest-4.5...", "Installing ucx-1.11.0...",
            "Installing openmpi-4.1.2a1...", "Installing mpitests_openmpi-3.2.20...",
            "Installation passed successfully", "To load the new driver, run:", "/etc/init.d/openibd restart"]
    guest.ofed_version = bundle
    guest.ofed_pending = True
    st["packages"].update({"mlnx-ofa_kernel", "rdma-core", "perftest", "ucx", "openmpi"})
    return _ok("\n".join(out) + "\n")


def prog_openibd(ctx: Ctx, argv: list[str]) -> Reply:
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    st = _gs(world, guest)
    verb = argv[1] if len(argv) > 1 else ""
    ok = "[  OK  ]"
    if verb in ("restart", "force-restart", "start", "force-start"):
        _driver_reload(world, guest, st)
        lines = [] if verb in ("start", "force-start") else [f"{'Unloading HCA driver:':<59}{ok}"]
        lines.append(f"{'Loading HCA driver and Access Layer:':<59}{ok}")
        return _ok("".join(line + "\n" for line in lines))
    if verb in ("stop", "force-stop"):
        return _ok(f"{'Unloading HCA driver:':<59}{ok}\n")
    if verb == "status":
        ports = rdma_ports(world, guest)
        if not ports:
            return _ok("\n  HCA driver is not loaded\n\n")
        return _ok("\n  HCA driver loaded\n\nConfigured Mellanox EN devices:\n"
                   + "".join(p.netdev.name + "\n" for p in ports) + "\nCurrently active Mellanox devices:\n"
                   + "".join(p.netdev.name + "\n" for p in ports if p.active) + "\n"
                   "The following OFED modules are loaded:\n\n  rdma_ucm\n  rdma_cm\n  ib_ipoib\n  mlx5_core\n"
                   "  mlx5_ib\n  ib_uverbs\n  ib_umad\n  ib_cm\n  ib_core\n  mlxfw\n\n")
    return _err("Usage: /etc/init.d/openibd {start|force-start|stop|force-stop|restart|force-restart|status}", 1)


# ---------------------------------------------------------------------------- RDMA tools


def prog_ofed_info(ctx: Ctx, argv: list[str]) -> Reply:
    guest = _guest(ctx.world, ctx.target)
    ver = guest.ofed_version or OFED_BUNDLE
    short = ver.replace("MLNX_OFED_LINUX-", "")
    if "-s" in argv[1:]:
        return _ok(f"{ver}:\n")
    if "-n" in argv[1:]:
        return _ok(short + "\n")
    base = short.rsplit(".", 1)[0]
    return _ok(f"{ver} (OFED-{base}):\n\nclusterkit:\nmlnx_ofed_clusterkit/clusterkit-1.3.1.tgz\n\n"
               "hcoll:\nmlnx_ofed_hcoll/hcoll-4.7.3199.tgz\n\nmlnx-ethtool:\nmlnx_ofed/ethtool.git mlnx_ofed_5_4\n\n"
               "mlnx-tools:\nmlnx_ofed/mlnx-tools.git mlnx_ofed_5_4\n\n"
               "perftest:\nmlnx_ofed_perftest/perftest-4.5-0.4.g4b12e2b.tar.gz\n\n"
               "rdma-core:\nmlnx_ofed/rdma-core.git mlnx_ofed_5_4\n\nucx:\nmlnx_ofed_ucx/ucx-1.11.0-1.54103.src.rpm\n\n"
               "Installed Packages:\n-------------------\n"
               "ofed-scripts\nmlnx-tools\nmlnx-ofa_kernel\nrdma-core\nlibibverbs\nlibibverbs-utils\nperftest\nucx\n"
               "openmpi\n")


_IBV_USAGE = ("Usage: ibv_devinfo             print the ca attributes\n\nOptions:\n"
              "  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)\n"
              "  -i, --ib-port=<port>   use port <port> of IB device (default all ports)\n"
              "  -l, --list             print only the IB devices names\n"
              "  -v, --verbose          print all the attributes of the IB device(s)\n")


def prog_ibv_devinfo(ctx: Ctx, argv: list[str]) -> Reply:
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    args = argv[1:]
    dev_name, port_no, verbose, listing = None, 0, False, False
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "--ib-dev", "-i", "--ib-port") and i + 1 >= len(args):  # getopt's messages, then the usage
            what = f"option '{a}' requires an argument" if a.startswith("--") else \
                f"option requires an argument -- '{a[1]}'"
            return Reply(stdout=_IBV_USAGE, stderr=f"ibv_devinfo: {what}\n", exit=255)
        if a in ("-d", "--ib-dev", "-i", "--ib-port"):
            if a in ("-d", "--ib-dev"):
                dev_name = args[i + 1]
            else:
                port_no = int(args[i + 1]) if args[i + 1].isdigit() else -1
                if port_no <= 0:
                    return Reply(stdout=_IBV_USAGE, exit=1)
            i += 2
            continue
        if a.startswith("--ib-dev="):
            dev_name = a.split("=", 1)[1]
        elif a in ("-v", "--verbose"):
            verbose = True
        elif a in ("-l", "--list"):
            listing = True
        else:
            what = f"unrecognized option '{a}'" if a.startswith("--") else \
                f"invalid option -- '{a[1:2]}'" if a.startswith("-") else None
            return Reply(stdout=_IBV_USAGE, stderr=f"ibv_devinfo: {what}\n" if what else "", exit=255)
        i += 1
    ports = rdma_ports(world, guest)
    if listing:
        n = len(ports)
        return _ok(f"{n} HCA{'s' if n != 1 else ''} found:\n" + "".join(f"\t{p.dev}\n" for p in ports) + "\n")
    if dev_name:
        ports = [p for p in ports if p.dev == dev_name]
        if not ports:
            return _err(f"IB device '{dev_name}' wasn't found", 255)
    elif not ports:
        return _err("No IB devices found", 255)  # rdma-core: stderr and `return -1`
    if port_no > 1:
        return _err("Invalid port requested for device", 4)
    return _ok("".join(_devinfo_block(world, guest, p, verbose) for p in ports))


def _devinfo_block(world: World, guest: Guest, p: RdmaPort, verbose: bool) -> str:
    state, state_n = ("PORT_ACTIVE", 4) if p.active else ("PORT_DOWN", 1)
    amtu = p.active_mtu
    lines = [f"hca_id:\t{p.dev}", "\ttransport:\t\t\tInfiniBand (0)", f"\tfw_ver:\t\t\t\t{p.card.fw_version}",
             f"\tnode_guid:\t\t\t{p.node_guid}", f"\tsys_image_guid:\t\t\t{p.sys_image_guid}",
             "\tvendor_id:\t\t\t0x02c9", f"\tvendor_part_id:\t\t\t{p.vendor_part_id}", "\thw_ver:\t\t\t\t0x0",
             f"\tboard_id:\t\t\t{p.card.psid}", "\tphys_port_cnt:\t\t\t1"]
    if verbose:
        lines += ["\tmax_mr_size:\t\t\t0xffffffffffffffff", "\tpage_size_cap:\t\t\t0xfffffffffffff000",
                  "\tmax_qp:\t\t\t\t262144", "\tmax_qp_wr:\t\t\t32768", "\tdevice_cap_flags:\t\t0xe97e1c36",
                  "\tmax_sge:\t\t\t30", "\tmax_sge_rd:\t\t\t30", "\tmax_cq:\t\t\t\t16777216",
                  "\tmax_cqe:\t\t\t4194303", "\tmax_mr:\t\t\t\t16777216", "\tmax_pd:\t\t\t\t16777216",
                  "\tmax_qp_rd_atom:\t\t\t16", "\tmax_res_rd_atom:\t\t4194304", "\tmax_qp_init_rd_atom:\t\t16",
                  "\tatomic_cap:\t\t\tATOMIC_HCA (1)", "\tmax_srq:\t\t\t8388608", "\tmax_srq_wr:\t\t\t32767",
                  "\tmax_srq_sge:\t\t\t31", "\tmax_pkeys:\t\t\t128", "\tlocal_ca_ack_delay:\t\t16",
                  "\tnum_comp_vectors:\t\t8"]
    lines += ["\t\tport:\t1", f"\t\t\tstate:\t\t\t{state} ({state_n})", "\t\t\tmax_mtu:\t\t4096 (5)",
              f"\t\t\tactive_mtu:\t\t{amtu} ({MTU_ENUM[amtu]})", "\t\t\tsm_lid:\t\t\t0", "\t\t\tport_lid:\t\t0",
              "\t\t\tport_lmc:\t\t0x00", "\t\t\tlink_layer:\t\tEthernet"]
    if verbose:
        phys = ("LINK_UP", 5) if p.active else ("DISABLED", 3)
        lines += ["\t\t\tmax_msg_sz:\t\t0x40000000", "\t\t\tport_cap_flags:\t\t0x04010000",
                  "\t\t\tmax_vl_num:\t\tinvalid value (0)", "\t\t\tbad_pkey_cntr:\t\t0x0",
                  "\t\t\tqkey_viol_cntr:\t\t0x0", "\t\t\tsm_sl:\t\t\t0", "\t\t\tpkey_tbl_len:\t\t1",
                  "\t\t\tgid_tbl_len:\t\t255", "\t\t\tsubnet_timeout:\t\t0", "\t\t\tinit_type_reply:\t0",
                  "\t\t\tactive_width:\t\t4X (2)",
                  f"\t\t\tactive_speed:\t\t{'25.0 Gbps (32)' if p.active else 'invalid speed (0)'}",
                  f"\t\t\tphys_state:\t\t{phys[0]} ({phys[1]})"]
        for idx, gid, v4, ver, _nd in gid_table(world, guest, p):
            shown = f"::ffff:{v4}" if v4 else str(ipaddress.IPv6Address(gid))
            lines.append(f"\t\t\tGID[{idx:>3}]:\t\t{shown}, {'RoCE v2' if ver == 'v2' else 'RoCE v1'}")
    return "\n".join(lines) + "\n\n"


def prog_ibv_devices(ctx: Ctx, argv: list[str]) -> Reply:
    ports = rdma_ports(ctx.world, _guest(ctx.world, ctx.target))
    out = f"    {'device':<16}\t   node GUID\n    {'------':<16}\t----------------\n"
    return _ok(out + "".join(f"    {p.dev:<16}\t{p.node_guid.replace(':', '')}\n" for p in ports))


def prog_show_gids(ctx: Ctx, argv: list[str]) -> Reply:
    """MLNX_OFED's show_gids: TAB-separated, the IPv4 column padded with two spaces, a blank line, a count."""
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    want_dev = argv[1] if len(argv) > 1 else None
    want_port = argv[2] if len(argv) > 2 else None
    out = ["DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV", "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---"]
    n = 0
    for p in rdma_ports(world, guest):
        if (want_dev and p.dev != want_dev) or (want_port and str(p.port) != want_port):
            continue
        for idx, gid, v4, ver, nd in gid_table(world, guest, p):
            if v4:
                out.append(f"{p.dev}\t{p.port}\t{idx}\t{gid}\t{v4}  \t{ver}\t{nd}")
            else:
                out.append(f"{p.dev}\t{p.port}\t{idx}\t{gid}\t\t\t{ver}\t{nd}")
            n += 1
    return _ok("\n".join(out) + f"\n\nn_gids_found={n}\n")


_I2N_USAGE = "ibdev2netdev <options>\n-h, --help                print help message\n-v, --verbose             print more info\n"


def prog_ibdev2netdev(ctx: Ctx, argv: list[str]) -> Reply:
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    args = argv[1:]
    if args and args[0] in ("-h", "--help"):
        return _ok(_I2N_USAGE)
    if len(args) > 1 or (args and args[0] != "-v"):
        return Reply(stdout=_I2N_USAGE, exit=255)
    ports = rdma_ports(world, guest)
    if not ports:
        return Reply(exit=255)  # no /sys/class/infiniband: "driver is stopped"
    out = []
    for p in ports:
        link = "Up" if _carrier(world, guest, p.netdev) else "Down"
        if args:
            # the VPD of a PF names the board and its serial; a VF has no VPD
            desc = "" if p.is_vf else f"{'CX556A - ConnectX-5 QSFP28':<15}"
            h = zlib.crc32(p.card.base_mac.encode())
            part = "NA" if p.is_vf else f"MT{1800 + h % 200:04d}X{h % 99991:05d}"
            state = f"{'ACTIVE' if p.active else 'DOWN':<6}"
            out.append(f"{p.pci} {p.dev} (MT{p.vendor_part_id} - {part}) {desc} fw {p.card.fw_version} port {p.port} "
                       f"({state}) ==> {p.netdev.name} ({link})")
        else:
            out.append(f"{p.dev} port {p.port} ==> {p.netdev.name} ({link})")
    return _ok("".join(line + "\n" for line in out))


def prog_rdma(ctx: Ctx, argv: list[str]) -> Reply:
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    args = [a for a in argv[1:] if a not in ("-p", "-pretty", "-d", "-details")]
    as_json = bool(args) and args[0] in ("-j", "-json")
    if as_json:
        args = args[1:]
    if not args:
        return _err("Usage: rdma [ OPTIONS ] OBJECT { COMMAND | help }", 255)
    obj, rest = args[0], args[1:]
    ports = rdma_ports(world, guest)
    if obj in ("link", "l"):
        if rest and rest[0] not in ("show", "list"):
            return _err(f'Command "{rest[0]}" is unknown, try "rdma link help".', 1)
        if len(rest) > 1:
            dev, _, pno = rest[1].partition("/")
            ports = [p for p in ports if p.dev == dev and (not pno or str(p.port) == pno)]
            if not ports:
                return _err("Wrong device name", 1)
        if as_json:
            visible = visible_interfaces(world, guest)
            return _ok(json.dumps([{"ifindex": n, "ifname": p.dev, "port": p.port,
                                    "state": "ACTIVE" if p.active else "DOWN",
                                    "physical_state": "LINK_UP" if p.active else "DISABLED",
                                    "netdev": p.netdev.name, "netdev_index": visible.index(p.netdev) + 1}
                                   for n, p in enumerate(ports)], separators=(",", ":")) + "\n")
        out = ""
        for n, p in enumerate(ports):
            state, phys = ("ACTIVE", "LINK_UP") if p.active else ("DOWN", "DISABLED")
            out += f"{n}/{p.port}: {p.dev}/{p.port}: state {state} physical_state {phys} netdev {p.netdev.name} \n"
        return _ok(out)
    if obj in ("dev", "d"):
        return _ok("".join(f"{n}: {p.dev}: node_type ca fw {p.card.fw_version} node_guid {p.node_guid} "
                           f"sys_image_guid {p.sys_image_guid} \n" for n, p in enumerate(ports)))
    if obj in ("statistic", "stat", "s"):
        r = _gs(world, guest)["rdma"]
        return _ok("".join(
            f"link {p.dev}/{p.port} rx_write_requests 0 rx_read_requests 0 rx_atomic_requests 0 out_of_buffer 0 "
            f"out_of_sequence {r['out_of_sequence']} duplicate_request 0 rnr_nak_retry_err 0 packet_seq_err 0 "
            "implied_nak_seq_err 0 local_ack_timeout_err 0 resp_local_length_error 0 "
            f"np_ecn_marked_roce_packets {r['ecn_marked']} np_cnp_sent {r['cnp_sent']} "
            f"rp_cnp_handled {r['cnp_handled']} rp_cnp_ignored 0 \n" for p in ports))
    return _err(f'Object "{obj}" is unknown, try "rdma help".', 1)


def prog_cma_roce_mode(ctx: Ctx, argv: list[str]) -> Reply:
    """MLNX_OFED's cma_roce_mode script (configfs rdma_cm default_roce_mode); its messages go to stdout."""
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    opts = {"-d": "mlx4_0", "-p": "1", "-m": "0"}
    args = argv[1:]
    i = 0
    while i < len(args):
        if args[i] == "-h":
            return _ok("Set/Show RoCE mode of RDMA_CM applications\n\nUsage:\n\tcma_roce_mode\nOptions:\n"
                       " -d <dev>        use IB device <dev> (default mlx4_0)\n"
                       " -p <port>       use port <port> of IB device (default 1)\n"
                       " -m <roce_mode>  set RoCE mode of RDMA_CM applications (default 1)\n")
        if args[i] in opts and i + 1 < len(args):
            opts[args[i]] = args[i + 1]
            i += 1
        i += 1
    device, port, mode = opts["-d"], opts["-p"], opts["-m"]
    ports = [p for p in rdma_ports(world, guest) if p.dev == device]
    if not rdma_ports(world, guest):
        return Reply(stdout="module rdma_cm is not loaded or does not support configfs\n", exit=1)
    if not ports:
        return Reply(stdout=f"failed to creat configuration for {device}\n",
                     stderr=f"mkdir: cannot create directory '{device}': No such file or directory\n", exit=1)
    if port != "1":
        return Reply(stdout=f"device {device} port {port} does not exist\n", exit=1)
    rdma_sysfs.make_group(guest, device)  # the script's mkdir of the configfs group
    if mode in ("1", "2"):
        guest.cma_roce_mode = "IB/RoCE v1" if mode == "1" else "RoCE v2"
    return _ok(guest.cma_roce_mode + "\n")


# ---------------------------------------------------------------------------- mlnx_qos

_QOS_NAMES = {"-i": "intf", "--interface": "intf", "--trust": "trust", "-f": "pfc", "--pfc": "pfc",
              "--dscp2prio": "dscp2prio", "--cable_len": "cable_len", "-d": "dcbx", "--dcbx": "dcbx",
              "-p": "prio_tc", "--prio_tc": "prio_tc", "-s": "tsa", "--tsa": "tsa", "-t": "tcbw", "--tcbw": "tcbw",
              "-r": "ratelimit", "--ratelimit": "ratelimit"}
_QOS_USAGE = "Usage: mlnx_qos -i <interface> [options]\n"


def _dscp2prio_lines() -> list[str]:
    return [f"\tprio:{p} dscp:" + ",".join(f"{d:02d}" for d in range(8 * p + 7, 8 * p - 1, -1)) + ","
            for p in range(8)]


def _py_trace(error: str) -> str:
    return ("Traceback (most recent call last):\n  File \"/usr/sbin/mlnx_qos\", line 513, in <module>\n"
            "    pretty_print(prio_tc, tsa, tc_bw, ratelimit, pfc_en, trustObj.trust, appTable, pfc_delay)\n"
            "  File \"/usr/sbin/mlnx_qos\", line 123, in pretty_print\n"
            "    if (ctrl.get_dcbx() & DCB_CAP_DCBX_HOST):\n"
            "  File \"/usr/lib/python3.6/site-packages/dcbnetlink.py\", line 261, in get_dcbx\n"
            "    m = self.conn.recv()\n"
            "  File \"/usr/lib/python3.6/site-packages/netlink.py\", line 215, in recv\n"
            "    raise OSError(-error, os.strerror(-error))\n"
            f"OSError: {error}\n")


def prog_mlnx_qos(ctx: Ctx, argv: list[str]) -> Reply:
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    args = argv[1:]
    opts: dict[str, str] = {}
    i = 0
    while i < len(args):
        key, eq, val = args[i].partition("=")
        if args[i] == "-a":
            i += 1
            continue
        if key not in _QOS_NAMES:
            return Reply(stdout="Bad arguments\n" + _QOS_USAGE, exit=1)
        if not eq:
            if i + 1 >= len(args):
                return Reply(stdout=f"{_QOS_USAGE}\nmlnx_qos: error: {args[i]} option requires an argument\n", exit=2)
            val, i = args[i + 1], i + 1
        opts[_QOS_NAMES[key]] = val
        i += 1
    if "intf" not in opts:
        return Reply(stdout="Interface name is required\n" + _QOS_USAGE, exit=1)
    iface = next((x for x in visible_interfaces(world, guest) if x.name == opts["intf"]), None)
    if iface is None:
        return Reply(stderr=_py_trace("[Errno 19] No such device"), exit=1)
    if not (guest.vm is None and iface.name in _bm_netdevs(guest)):
        # a VF (or a NIC without DCB): PFC and trust belong to the PF
        msgs = "Priority trust state is not supported on your system\n"
        if "trust" in opts:
            return Reply(stdout=msgs, exit=1)
        msgs += "Rate limit is not supported on your system!\nETS features are not supported on your system\n"
        if "pfc" in opts:
            return Reply(stdout=msgs + "[Errno 95] Operation not supported\n", exit=1)
        return Reply(stdout=msgs, stderr=_py_trace("[Errno 95] Operation not supported"), exit=1)
    if "trust" in opts:
        if opts["trust"] not in ("dscp", "pcp"):
            return Reply(stdout="Invalid trust state command. Refer to the help.\n", exit=1)
        if "dscp2prio" in opts:
            return Reply(stdout="trust and dscp2prio commands cannot be used at the same time.\n", exit=1)
        guest.qos_trust = opts["trust"]
    if "pfc" in opts:
        vals = opts["pfc"].split(",")
        if len(vals) != 8:
            return Reply(stdout="pfc list must have 8 items\n" if len(vals) < 8 else "Too many items for PFC\n", exit=1)
        if any(v not in ("0", "1") for v in vals):
            bad = next(v for v in vals if v not in ("0", "1"))
            return Reply(stdout=f"Bad value for PFC: {bad} is not in the range 0..1\n{_QOS_USAGE}", exit=1)
        guest.qos_pfc = [int(v) for v in vals]
    out = ["DCBX mode: OS controlled", f"Priority trust state: {guest.qos_trust}"]
    if guest.qos_trust == "dscp":
        out += ["dscp2prio mapping:", *_dscp2prio_lines()]
    out += ["Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,max_buffer_size=262016", "Cable len: 7",
            "PFC configuration:", "\tpriority    0   1   2   3   4   5   6   7",
            "\tenabled     " + "".join(f"{v:<4}" for v in guest.qos_pfc),
            "\tbuffer      " + "".join(f"{v:<4}" for v in guest.qos_pfc)]
    for tc, prio in ((0, 1), (1, 0), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 7)):
        out += [f"tc: {tc} ratelimit: unlimited, tsa: vendor", f"\t priority:  {prio}"]
    return _ok("\n".join(out) + "\n")


# ---------------------------------------------------------------------------- bare metal: MFT mlxconfig

_MLX_WORDS = {"LINK_TYPE_P1": {"IB": 1, "ETH": 2, "VPI": 3}, "LINK_TYPE_P2": {"IB": 1, "ETH": 2, "VPI": 3}}
_MFT_NO_DEV = "-E- No devices found or specified, mst might be stopped, run 'mst start' to load MST modules"


def _mlx_value(name: str, v: Any) -> str:
    if isinstance(v, bool):
        return "True(1)" if v else "False(0)"
    if isinstance(v, str):
        return f"{v}({_MLX_WORDS.get(name, {}).get(v, 0)})"
    return str(v)


def _mlx_parse(name: str, raw: str, old: Any) -> Any:
    s = raw.strip()
    if isinstance(old, bool):
        if s.lower() not in ("0", "1", "true", "false", "true(1)", "false(0)"):
            raise ValueError(s)
        return s.lower() in ("1", "true", "true(1)")
    words = _MLX_WORDS.get(name)
    if words:
        for w, n in words.items():
            if s.upper() in (w, str(n), f"{w}({n})"):
                return w
        raise ValueError(s)
    return int(s, 0)


def prog_mlxconfig(ctx: Ctx, argv: list[str]) -> Reply:
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    card: Card | None = _gs(world, guest)["card"]
    args = argv[1:]
    dev, extended, yes, cmd, rest = None, False, False, None, []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "--dev") and i + 1 < len(args):
            dev = args[i + 1]
            i += 2
            continue
        if a in ("-e", "--enable_verbosity"):
            extended = True
        elif a in ("-y", "--yes"):
            yes = True
        elif cmd is None and a in ("q", "query", "s", "set"):
            cmd = "query" if a in ("q", "query") else "set"
        else:
            rest.append(a)
        i += 1
    if card is None or dev is None:
        return _err(_MFT_NO_DEV, 1)
    valid = {card.pci(1), f"0000:{card.pci(1)}", card.pci(2), f"0000:{card.pci(2)}", f"/dev/mst/{card.mst_name}",
             card.mst_name}
    if dev not in valid:
        return _err(f"-E- Failed to open the device: {dev}", 1)
    head = ["", "Device #1:", "----------", "", f"Device type:    {card.model}", f"Name:           {card.part_number}",
            f"Description:    {card.description}", f"Device:         {dev}", ""]
    if cmd in ("query", None):
        if extended:
            out = [*head, f"Configurations:{'Default':>37}         Current         Next Boot"]
            star = False
            for k, p in card.config.items():
                mark = "*" if p.next_boot != p.default or p.current != p.default else " "
                star = star or mark == "*"
                out.append(f"{mark}        {k:<36}{_mlx_value(k, p.default):<16}{_mlx_value(k, p.current):<16}"
                           f"{_mlx_value(k, p.next_boot)}")
            if star:
                out.append("The '*' shows parameters with next value different from default/current value.")
        else:
            out = [*head, f"Configurations:{'Next Boot':>47}"]
            out += [f"         {k:<36}{_mlx_value(k, p.next_boot)}" for k, p in card.config.items()]
        return _ok("\n".join(out) + "\n")
    changes: dict[str, Any] = {}
    for kv in rest:
        k, eq, v = kv.partition("=")
        if not eq or k not in card.config:
            return _err(f"-E- The Device doesn't support {k} parameter", 1)
        try:
            changes[k] = _mlx_parse(k, v, card.config[k].next_boot)
        except ValueError:
            return _err(f"-E- Bad value argument for {k}: {v}", 1)
    out = [*head, f"Configurations:{'Next Boot':>47}       New"]
    out += [f"         {k:<36}{_mlx_value(k, card.config[k].next_boot):<21}{_mlx_value(k, v)}" for k, v in changes.items()]
    if not yes:
        return _ok("\n".join([*out, "", " Apply new Configuration? (y/n) [n] : N", "Aborted by user"]) + "\n")
    for k, v in changes.items():
        card.config[k].next_boot = v
    return _ok("\n".join([*out, "", " Apply new Configuration? (y/n) [n] : y", "Applying... Done!",
                          "-I- Please reboot machine to load new configurations."]) + "\n")


# ---------------------------------------------------------------------------- perftest

_PT_VERBS = {"ib_send_bw": ("Send", "bw"), "ib_send_lat": ("Send", "lat"), "ib_write_bw": ("RDMA_Write", "bw"),
             "ib_write_lat": ("RDMA_Write", "lat"), "ib_read_bw": ("RDMA_Read", "bw"),
             "ib_read_lat": ("RDMA_Read", "lat")}
GidRow = tuple[int, str, str | None, str, str]


def _pt_header(test: str, o: perftest_cli.PtOpts, port: RdmaPort, gid_index: int | None, server: bool) -> list[str]:
    verb, kind = _PT_VERBS[test]
    title = f"{verb}{' Bidirectional' if o.bidir else ''} {'BW' if kind == 'bw' else 'Latency'} Test"
    out = ["WARNING: BW peak won't be measured in this run."] if o.duration and kind == "bw" else []
    out += [LINE, f"{title:^87}".rstrip(), f" Dual-port       : OFF\t\tDevice         : {port.dev}",
            " Number of qps   : 1\t\tTransport type : IB", " Connection type : RC\t\tUsing SRQ      : OFF",
            " PCIe relax order: ON", " ibv_wr* API     : ON"]
    if kind == "bw":
        out += [" RX depth        : 512" if server else " TX depth        : 128",
                f" CQ Moderation   : {1 if o.duration else 100}"]
    else:
        out += [" TX depth        : 1"]
    out += [f" Mtu             : {port.active_mtu}[B]", f" Link type       : {o.force_link or 'Ethernet'}"]
    if gid_index is not None and not o.rdma_cm:
        out.append(f" GID index       : {gid_index}")
    inline = 0 if kind == "bw" else (236 if test.startswith("ib_send") else 220)
    out += [f" Max inline data : {inline}[B]", f" rdma_cm QPs\t : {'ON' if o.rdma_cm else 'OFF'}",
            f" Data ex. method : {'rdma_cm' if o.rdma_cm else 'Ethernet'}", LINE]
    return out


def _gid_bytes(gid: str | None) -> str:
    if gid is None:
        return ":".join(["00"] * 16)
    return ":".join(f"{b:02d}" for b in ipaddress.IPv6Address(gid).packed)  # perftest prints %02d of each byte


def _pt_addr(rng: random.Random, gid: str | None, bw: bool) -> tuple[str, str]:
    qpn, psn = rng.randrange(0x60, 0x300), rng.randrange(0x100000, 0xFFFFFF)
    extra = (f" RKey 0x{rng.randrange(0x1000, 0x3FFFFF):06x} VAddr 0x00{rng.randrange(0x7F0000000000, 0x7FFFFFFFF000):012x}"
             if bw else "")
    return f"LID 0000 QPN {qpn:#06x} PSN {psn:#08x}{extra}", f" GID: {_gid_bytes(gid)}"


def _pick_gid(rows: list[GidRow], index: int | None, cma_mode: str | None) -> tuple[int | None, GidRow | None]:
    """perftest's choice: -x as given; without it the first RoCE v2 IPv4 GID (else index 0); through
    rdma_cm the IPv4 GID of the port's default RoCE mode."""
    if cma_mode is not None:
        ver = "v2" if cma_mode == "RoCE v2" else "v1"
        row = next((r for r in rows if r[2] and r[3] == ver), None)
        return (row[0] if row else None), row
    if index is not None:
        return index, next((r for r in rows if r[0] == index), None)
    row = next((r for r in rows if r[2] and r[3] == "v2"), None) or (rows[0] if rows else None)
    return (row[0] if row else 0), row


def _usable_gid(row: GidRow | None, rdma_cm: bool = False) -> bool:
    """A GID two lab hosts connect on: a RoCE v2 IPv4 one (any IPv4 one through rdma_cm on one L2)."""
    return row is not None and row[2] is not None and (row[3] == "v2" or rdma_cm)


def _link_eff(mtu: int) -> float:
    return {4096: 0.965, 2048: 0.935, 1024: 0.815, 512: 0.64, 256: 0.45}[mtu]


def _bw_gbps(size: int, link_gbps: float, mtu: int, msg_mpps: float) -> float:
    """Message-rate bound at small sizes, the link (less the headers' share at this MTU) at large ones."""
    cap = link_gbps * _link_eff(mtu)
    rate = size * 8 * msg_mpps / 1000
    return (rate ** -2 + cap ** -2) ** -0.5


def _lat_us(size: int, link_gbps: float, mtu: int, base: float, inline: int) -> float:
    wire = size / (link_gbps * _link_eff(mtu) * 125)
    return base + (0.45 if size > inline else 0.0) + wire + 1.2 * min(size, 16384) / 16384


def _lossless(world: World, receiver: Guest, prio: int) -> str:
    """How the link into the receiver treats priority `prio`: "pfc", "pause" or "lossy"."""
    if receiver.vm is None:
        host_pfc = bool(receiver.qos_pfc[prio])
        host_pause = receiver.pause_rx and receiver.pause_tx
        sp = _switch_port(world, receiver.name, receiver.roce_netdev)
    else:
        backing = _vf_backing(world, receiver)
        if backing is None:
            return "lossy"
        host, vmnic = backing
        params = host.module_params_active
        try:
            mask = int(params.get("pfcrx", "0"), 0) & int(params.get("pfctx", "0"), 0)
        except ValueError:
            mask = 0
        host_pfc = bool(mask >> prio & 1)
        host_pause = vmnic.pause_rx and vmnic.pause_tx and not world.pfc_active(host)
        sp = _switch_port(world, host.name, vmnic.name)
    if sp is None:
        return "lossy"
    if host_pfc and sp.pfc_enabled and prio in sp.no_drop:
        return "pfc"
    if host_pause and sp.flowcontrol_rx and sp.flowcontrol_tx:
        return "pause"
    return "lossy"


def _perftest(ctx: Ctx, argv: list[str]) -> Reply:
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    test = argv[0].rsplit("/", 1)[-1]
    kind = _PT_VERBS[test][1]
    o = perftest_cli.parse(test, argv[1:])  # the real binary's parser: what it refuses, refused here
    if isinstance(o, Reply):
        return o
    ports = rdma_ports(world, guest)
    if not ports:
        return perftest_cli.no_device()
    port = next((p for p in ports if p.dev == o.device), None) if o.device else ports[0]
    if port is None:
        # perftest_resources.c ctx_find_dev (linux-rdma/perftest), then the test's main
        return _err(f"IB device {o.device} not found\n Unable to find the Infiniband/RoCE device", 1)
    gid_index, my_gid = _pick_gid(gid_table(world, guest, port), o.gid_index,
                                  guest.cma_roce_mode if o.rdma_cm else None)
    lab = _lab(world)
    _reap_servers(world)
    if o.peer is None:  # the server: it listens until a client comes (the client computes both ends)
        if (guest.name, o.port) in lab["perftest"]:  # another server holds the port
            return _err(f" Couldn't listen to port {o.port}\n Unable to open file descriptor for socket connection"
                        " Unable to init the socket connection", 1)
        # servers started while others still wait on this guest form one wave: their clients run together
        # (the incast pattern: N servers on N ports, then N clients at once)
        waiting = [s for (g, _p), s in lab["perftest"].items() if g == guest.name and s["test"] == test]
        wave = waiting[0]["wave"] if waiting else len(lab["waves"]) + 1
        lab["waves"][wave] = lab["waves"].get(wave, 0) + 1
        lab["perftest"][(guest.name, o.port)] = {"test": test, "opts": o, "wave": wave, "pid": _next_pid(world),
                                                 "argv": [test, *argv[1:]], "expires": None}
        out = [*_pt_header(test, o, port, gid_index, server=True), "", "************************************",
               "* Waiting for client to connect... *", "************************************"]
        return _ok("\n".join(out) + "\n")
    found = _resolve(world, o.peer)
    server = lab["perftest"].get((found[0].name, o.port)) if found else None
    if found is None or server is None or server["test"] != test:
        return _err(f"Couldn't connect to {o.peer}:{o.port}\nUnable to open file descriptor for socket connection "
                    "Unable to init the socket connection", 1)
    peer = found[0]
    lab["perftest"].pop((peer.name, o.port))
    so: perftest_cli.PtOpts = server["opts"]
    peer_ports = rdma_ports(world, peer)
    pport = next((p for p in peer_ports if p.dev == so.device), None) if so.device else next(iter(peer_ports), None)
    if pport is None:
        return _err(f"Couldn't connect to {o.peer}:{o.port}", 1)
    prow = _pick_gid(gid_table(world, peer, pport), so.gid_index, peer.cma_roce_mode if so.rdma_cm else None)[1]
    now = time.monotonic()
    rng = _rng(guest.name, peer.name, test, gid_index, now)
    local, local_gid = _pt_addr(rng, my_gid[1] if my_gid else None, kind == "bw")
    remote, remote_gid = _pt_addr(rng, prow[1] if prow else None, kind == "bw")
    out = [*_pt_header(test, o, port, gid_index, server=False), " local address: " + local, local_gid,
           " remote address: " + remote, remote_gid, LINE]
    same_ver = my_gid is not None and prow is not None and my_gid[3] == prow[3]
    if not (port.active and pport.active and _usable_gid(my_gid, o.rdma_cm) and _usable_gid(prow, so.rdma_cm)
            and same_ver):
        return Reply(stdout="\n".join(out) + "\n", stderr=f"Failed to modify QP {rng.randrange(40, 400)} to RTR\n"
                     " Unable to Connect the HCA's through the link\n", exit=1)
    mtu = min(port.active_mtu, pport.active_mtu)
    link = min(port.speed_mbps, pport.speed_mbps) / 1000
    # what the PCIe slot can carry (a card trained at Gen3 x4 caps everything behind the port)
    pcie = min(_gs(world, g).get("pcie_gbps") or 1e9 for g in (guest, peer))
    n = lab["waves"].get(server["wave"], 1)  # concurrent streams into the receiver (incast)
    # the class this run's packets carry decides their priority at the receiver, and whether that priority
    # is lossless there: without --tclass (or -R -T) perftest sends DSCP 0, the lossy priority 0
    tclass = perftest_cli.traffic_class(o, guest.traffic_class)
    prio = _prio_for(world, peer, tclass >> 2)
    mode = _lossless(world, peer, prio) if n > 1 else "pfc"
    if mode == "pfc" and n > 1 and _gs(world, peer).get("headroom_short"):
        mode = "pfc-overrun"  # PFC is on but the pause lands after the buffer overflowed
    share = {"pfc": 0.985, "pause": 1 / (1 + 0.35 * (n - 1)), "lossy": 1 / (1 + 0.9 * (n - 1)),
             "pfc-overrun": 1 / (1 + 0.7 * (n - 1))}[mode] / n if n > 1 else 1.0
    if n > 1 and _gs(world, peer).get("rx_ring_small"):
        share *= 0.97  # a few retransmits after the receive ring ran dry
    sizes = [2 ** k for k in range(1, 24)] if o.all_sizes else [o.size or (65536 if kind == "bw" else 2)]
    moved = 0
    if kind == "bw":
        unit = "Gb/sec" if o.gbits else "MB/sec"
        out.append(f" #bytes     #iterations    BW peak[{unit}]    BW average[{unit}]   MsgRate[Mpps]")
        mpps = 5.4 if test == "ib_send_bw" else 8.7
        for size in sizes:
            bw = min(_bw_gbps(size, link, mtu, mpps), pcie * 0.97) * share * rng.uniform(0.995, 1.004)
            peak = 0.0 if o.duration else bw * rng.uniform(1.0, 1.012)
            iters = int(bw * 1e9 / 8 / size * o.duration) if o.duration else (o.iters or (1000 if o.all_sizes else 5000))
            moved += size * iters
            conv = 1.0 if o.gbits else 1000 / 8 / 1.048576  # MB/sec is MiB/sec in perftest
            out.append(f" {size:<10} {iters:<10}       {peak * conv:<7.2f}            {bw * conv:<7.2f}\t\t   "
                       f"{bw * 125 / size:<7.6f}")
        if n > 1:
            _count_congestion(world, guest, peer, mode, n, prio)
    else:
        out.append(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
                   "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ")
        inline = 236 if test.startswith("ib_send") else 220
        base = (1.95 if guest.vm else 1.35) + sum(_gs(world, g).get("lat_extra_us", 0.0) for g in (guest, peer))
        for size in sizes:
            t = _lat_us(size, link, mtu, base, inline)
            iters = o.iters or 1000
            moved += size * iters
            tmax = t * rng.uniform(1.6, 2.6)
            out.append(f" {size:<7} {iters:<10}     {t * rng.uniform(0.965, 0.975):<7.2f}        {tmax:<7.2f}      "
                       f"{t:<7.2f}  \t{t * rng.uniform(1.0, 1.012):<7.2f}     \t{rng.uniform(0.05, 0.3):<7.2f}  \t\t"
                       f"{t * rng.uniform(1.05, 1.12):<7.2f}  \t\t{tmax:<7.2f}   ")
    out.append(LINE)
    _count_rdma(world, guest, peer, moved, mtu, both_ways=(kind == "lat" or o.bidir), tclass=tclass)
    return _ok("\n".join(out) + "\n")


def _reap_servers(world: World) -> None:
    """perftest servers started under `timeout N` are gone N seconds later (timeout killed them)."""
    lab, now = _lab(world), time.monotonic()
    for key, server in list(lab["perftest"].items()):
        if server.get("expires") is not None and server["expires"] <= now:
            _drop_server(world, key)


def _drop_server(world: World, key: tuple[str, int]) -> None:
    lab = _lab(world)
    server = lab["perftest"].pop(key, None)
    if server is not None and lab["waves"].get(server["wave"], 0) > 0:
        lab["waves"][server["wave"]] -= 1


def _processes(world: World, guest: Guest) -> list[tuple[tuple[str, int], dict[str, Any]]]:
    """The long-running processes the lab models on a guest: perftest servers waiting for a client."""
    _reap_servers(world)
    return [(k, v) for k, v in _lab(world)["perftest"].items() if k[0] == guest.name]


def _inner(ctx: Ctx, argv: list[str], name: str) -> Reply:
    """Run the command a wrapper (timeout, nohup) was given, as the shell would have."""
    table = programs(ctx.world, ctx.target)
    prog = table.get(argv[0]) or table.get(argv[0].rsplit("/", 1)[-1])
    if prog is None:
        return _err(f"{name}: failed to run command '{argv[0]}': No such file or directory", 127)
    return prog(ctx, argv)


def _duration_s(text: str) -> float | None:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([smhd]?)", text)
    if not m:
        return None
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def prog_timeout(ctx: Ctx, argv: list[str]) -> Reply:
    """coreutils `timeout [-s SIG] [-k DUR] DURATION COMMAND...`: what it starts dies DURATION later."""
    args = argv[1:]
    while args and args[0].startswith("-") and args[0] != "--":
        args = args[2:] if args[0] in ("-s", "--signal", "-k", "--kill-after") else args[1:]
    if args and args[0] == "--":
        args = args[1:]
    limit = _duration_s(args[0]) if args else None
    if limit is None or len(args) < 2:
        return _err("timeout: invalid time interval" + (f" '{args[0]}'" if args else "") +
                    "\nTry 'timeout --help' for more information.", 125)
    guest = _guest(ctx.world, ctx.target)
    before = {k for k, _ in _processes(ctx.world, guest)}
    reply = _inner(ctx, args[1:], "timeout")
    for key, server in _processes(ctx.world, guest):
        if key not in before:
            server["expires"] = time.monotonic() + limit
    return reply


def prog_nohup(ctx: Ctx, argv: list[str]) -> Reply:
    if len(argv) < 2:
        return _err("nohup: missing operand\nTry 'nohup --help' for more information.", 125)
    return _inner(ctx, argv[1:], "nohup")


def _match_processes(ctx: Ctx, argv: list[str], name: str) -> tuple[list[tuple[tuple[str, int], dict]], bool] | Reply:
    full, listing, pattern = False, False, None
    for a in argv[1:]:
        if a == "--full":
            full = True
        elif a == "--list-full":
            listing = True
        elif a.startswith("-") and pattern is None and len(a) > 1:
            if a[1:].isdigit() or a[1:].isupper() or a == "--":
                continue  # a signal (-9, -TERM) or the end of options
            if set(a[1:]) - set("fal"):
                return _err(f"{name}: invalid option -- '{sorted(set(a[1:]) - set('fal'))[0]}'", 2)
            full = full or "f" in a
            listing = listing or "a" in a or "l" in a
        elif pattern is None:
            pattern = a
    if pattern is None:
        return _err(f"{name}: no matching criteria specified\nTry `{name} --help' for more information.", 2)
    try:
        rx = re.compile(pattern)
    except re.error:
        return _err(f"{name}: invalid regular expression", 2)
    guest = _guest(ctx.world, ctx.target)
    found = [(k, v) for k, v in _processes(ctx.world, guest)
             if rx.search(" ".join(v["argv"]) if full else v["argv"][0][:15])]
    return found, listing


def prog_pgrep(ctx: Ctx, argv: list[str]) -> Reply:
    """procps `pgrep [-f] [-a] PATTERN` over the processes the lab models (perftest servers)."""
    got = _match_processes(ctx, argv, "pgrep")
    if isinstance(got, Reply):
        return got
    found, listing = got
    lines = [f"{v['pid']} {' '.join(v['argv'])}" if listing else str(v["pid"]) for _, v in found]
    return Reply(stdout="".join(f"{ln}\n" for ln in lines), exit=0 if found else 1)


def prog_pkill(ctx: Ctx, argv: list[str]) -> Reply:
    """procps `pkill [-SIGNAL] [-f] PATTERN`: silent, exit 1 when nothing matched."""
    got = _match_processes(ctx, argv, "pkill")
    if isinstance(got, Reply):
        return got
    found, _ = got
    for key, _v in found:
        _drop_server(ctx.world, key)
    return Reply(exit=0 if found else 1)


def prog_rm(ctx: Ctx, argv: list[str]) -> Reply:
    """`rm [-f] FILE...` for the files the lab keeps (under /etc, /tmp, /root)."""
    st = _gs(ctx.world, _guest(ctx.world, ctx.target))
    force = any(a.startswith("-") and "f" in a for a in argv[1:])
    errors = []
    for path in (a for a in argv[1:] if not a.startswith("-")):
        if st["etc"].pop(path, None) is None and not force:
            errors.append(f"rm: cannot remove '{path}': No such file or directory")
    return Reply(stderr="".join(e + "\n" for e in errors), exit=1 if errors else 0)


def _count_rdma(world: World, sender: Guest, receiver: Guest, nbytes: int, mtu: int, both_ways: bool = False,
                tclass: int | None = None) -> None:
    """RDMA bytes on both ends; per priority by the class the packets carried (each end maps the DSCP with its
    own trust and dscp2prio; without a class given, the device's default class)."""
    pkts = max(1, nbytes // mtu)
    wire = nbytes + 58 * pkts  # RoCE v2 headers on the wire
    for g, direction in ((sender, "tx"), (receiver, "rx")):
        r = _gs(world, g)["rdma"]
        prio = _prio_for(world, g, (tclass if tclass is not None else (g.traffic_class or 0)) >> 2)
        for d in (direction, "rx" if direction == "tx" else "tx") if both_ways else (direction,):
            r[f"{d}_bytes"] += wire
            r[f"{d}_packets"] += pkts
            r[f"prio_{d}_bytes"][prio] += wire


def _ecn_on(world: World, g: Guest) -> bool:
    """ECN marking on the switch port facing the guest, and DCQCN on its host (nmlx5 ecn=1 / bare metal)."""
    if g.vm is None:
        sp = _switch_port(world, g.name, g.roce_netdev)
        return sp is not None and sp.ecn
    backing = _vf_backing(world, g)
    if backing is None:
        return False
    host, vmnic = backing
    sp = _switch_port(world, host.name, vmnic.name)
    return sp is not None and sp.ecn and host.module_params_active.get("ecn", "0") == "1"


def _count_congestion(world: World, sender: Guest, receiver: Guest, mode: str, n: int, prio: int) -> None:
    """An incast stream on priority `prio`: pause frames when it is lossless, drops without, CNPs with ECN."""
    r, s = _gs(world, receiver)["rdma"], _gs(world, sender)["rdma"]
    if mode in ("lossy", "pfc-overrun"):
        r["discards"] += 1500 * n
        r["out_of_sequence"] += 900 * n
    if mode in ("pfc", "pfc-overrun"):
        s["pause_rx"][prio] += 400 * n  # the switch pauses the senders on the lossless priority
        r["pause_tx"][prio] += 120 * n  # and the receiver, its buffers filling, pauses the switch
    if _gs(world, receiver).get("rx_ring_small"):
        r["out_of_buffer"] += 310 * n
    if _ecn_on(world, receiver):
        r["ecn_marked"] += 2500 * n
        r["cnp_sent"] += 2500 * n
        s["cnp_handled"] += 2500


# ---------------------------------------------------------------------------- MPI (Open MPI + UCX) and OSU


def _rdma_tls(env: dict[str, str]) -> bool:
    tls = [t.strip() for t in env.get("UCX_TLS", "all").split(",")]
    if tls and tls[0].startswith("^"):  # an exclusion list
        excluded = {tls[0][1:], *tls[1:]}
        return "ib" not in excluded and not {"rc", "ud", "dc"} <= excluded
    return "all" in tls or any(t in tls for t in ("rc", "rc_x", "rc_mlx5", "rc_v", "rc_verbs", "ib", "ud", "dc", "dc_x"))


def _ucx_rdma(world: World, a: Guest, b: Guest, env: dict[str, str],
              env_b: dict[str, str] | None = None) -> tuple[bool, dict[str, list[str]]]:
    """Can UCX's rc_mlx5 carry a<->b (each rank with its own UCX settings)? Also, per node, the
    UCX_NET_DEVICES names UCX warns are unavailable there."""
    envs = {a.name: env, b.name: env if env_b is None else env_b}
    ok = all(_rdma_tls(e) for e in envs.values())
    unavailable: dict[str, list[str]] = {}
    for g in (a, b):
        env = envs[g.name]
        devices = [d.strip() for d in env.get("UCX_NET_DEVICES", "all").split(",") if d.strip()]
        ports = [p for p in rdma_ports(world, g) if p.active]
        names = {f"{p.dev}:{p.port}" for p in ports}
        nets = {i.name for i in visible_interfaces(world, g)}
        unavailable[g.name] = [d for d in devices if d != "all" and d not in names | nets]
        allowed = [p for p in ports if "all" in devices or f"{p.dev}:{p.port}" in devices]
        if not allowed:
            ok = False
            continue
        rows = gid_table(world, g, allowed[0])
        idx = env.get("UCX_IB_GID_INDEX")
        row = (next((r for r in rows if str(r[0]) == idx.strip()), None) if idx is not None
               else next((r for r in rows if r[2] and r[3] == "v2"), None))
        ok = ok and _usable_gid(row)
    return ok, unavailable


def _ucx_tcp_dev(world: World, g: Guest, env: dict[str, str]) -> str | None:
    devices = [d.strip() for d in env.get("UCX_NET_DEVICES", "all").split(",") if d.strip()]
    tls = [t.strip() for t in env.get("UCX_TLS", "all").split(",")]
    if tls and tls[0].startswith("^"):
        if "tcp" in {tls[0][1:], *tls[1:]}:
            return None
    elif "all" not in tls and "tcp" not in tls:
        return None
    usable = [i for i in visible_interfaces(world, g) if i.name != "lo" and i.ipv4
              and ("all" in devices or i.name in devices)]
    usable.sort(key=lambda i: i.name != g.roce_netdev)
    return usable[0].name if usable else None


def _shared_netdev(world: World, a: Guest, b: Guest) -> str | None:
    """The netdev both guests have an IPv4 subnet on, the RoCE netdev first (Open MPI's btl tcp)."""
    def nets(g: Guest) -> dict[str, set[Any]]:
        return {i.name: {ipaddress.IPv4Interface(x).network for x in i.ipv4}
                for i in visible_interfaces(world, g) if i.name != "lo" and i.ipv4}

    na, nb = nets(a), nets(b)
    names = sorted(na, key=lambda n: n != a.roce_netdev)
    return next((n for n in names if n in nb and na[n] & nb[n]), None)


_MPI_WITH_ARG = {"-np", "-n", "--np", "-c", "--host", "-host", "-H", "--hosts", "--hostfile", "-hostfile", "--machinefile",
                 "-machinefile", "-x", "--map-by", "--bind-to", "--rank-by", "-npernode", "--npernode"}


def _mpirun_args(st: dict[str, Any], env: dict[str, str], args: list[str]) -> dict[str, Any] | Reply:
    parsed: dict[str, Any] = {"np": None, "hosts": [], "program": None, "env": dict(env)}
    i = 0
    while i < len(args):
        a = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else None
        if parsed["program"] is not None:
            pass  # the program's own arguments
        elif a in _MPI_WITH_ARG and nxt is None:  # Open MPI 4.1.4's messages (Debian openmpi-bin)
            return _err(f'mpirun: Error: option "{a}" did not have enough parameters (1)\n'
                        "Type 'mpirun --help' for usage.", 1)
        elif a in ("-np", "-n", "--np", "-c") and not nxt.isdigit():
            bar = "-" * 76
            return _err(f"{bar}\nOpen MPI has detected that a parameter given to a command line\noption does not match "
                        f"the expected format:\n\n  Option: {a.lstrip('-')}\n  Param:  {nxt}\n\nThis is frequently "
                        "caused by omitting to provide the parameter\nto an option that requires one. Please check the "
                        f"command line and try again.\n{bar}", 1)
        elif a in ("-np", "-n", "--np", "-c") and nxt:
            parsed["np"], i = nxt, i + 1
        elif a in ("--host", "-host", "-H", "--hosts") and nxt:
            parsed["hosts"] += [h.split(":")[0] for h in nxt.split(",") if h]
            i += 1
        elif a in ("--hostfile", "-hostfile", "--machinefile", "-machinefile") and nxt:
            text = st["etc"].get(nxt)
            if text is None:
                return _err("--------------------------------------------------------------------------\n"
                            f"Open RTE was unable to open the hostfile:\n    {nxt}\nCheck to make sure the path and "
                            "filename are correct.\n"
                            "--------------------------------------------------------------------------", 1)
            parsed["hosts"] += [ln.split()[0] for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
            i += 1
        elif a == "-x" and nxt:
            k, eq, v = nxt.partition("=")
            parsed["env"][k] = v if eq else env.get(k, "")
            i += 1
        elif a in ("--mca", "-mca") and i + 2 < len(args):
            i += 2
        elif a in ("--map-by", "--bind-to", "--rank-by", "-npernode", "--npernode") and nxt:
            i += 1
        elif a.startswith("-") and a not in ("--allow-run-as-root", "--oversubscribe", "-v", "--report-bindings",
                                             "--tag-output"):
            return _err(f'mpirun: Error: unknown option "{a}"\nType \'mpirun --help\' for usage.', 1)
        elif not a.startswith("-"):
            parsed["program"] = a
        i += 1
    return parsed


UCX_CONF = "/etc/ucx/ucx.conf"  # UCX reads $prefix/etc/ucx/ucx.conf; the environment wins over it
# what `ucx_info -c` prints for the variables that matter here when nothing sets them
_UCX_DEFAULTS = {"UCX_LOG_LEVEL": "warn", "UCX_NET_DEVICES": "all", "UCX_SHM_DEVICES": "all",
                 "UCX_ACC_DEVICES": "all", "UCX_SELF_DEVICES": "all", "UCX_TLS": "all", "UCX_SOCKADDR_TLS_PRIORITY":
                 "rdmacm,tcp,sockcm", "UCX_WARN_UNUSED_ENV_VARS": "y", "UCX_RNDV_THRESH": "auto",
                 "UCX_IB_SEG_SIZE": "8256", "UCX_IB_GID_INDEX": "auto", "UCX_IB_SL": "auto",
                 "UCX_IB_TRAFFIC_CLASS": "auto", "UCX_IB_ROCE_LOCAL_SUBNET": "n", "UCX_IB_ROCE_SUBNET_PREFIX_LEN":
                 "auto", "UCX_IB_ADDR_TYPE": "auto", "UCX_TCP_PORT_RANGE": "0"}


def _ucx_conf(world: World, g: Guest) -> dict[str, str]:
    """KEY=VALUE lines of the node's UCX config file (comments and [sections] ignored)."""
    text = _gs(world, g)["etc"].get(UCX_CONF, "")
    out = {}
    for line in text.splitlines():
        k, eq, v = line.strip().partition("=")
        if eq and k.startswith("UCX_"):
            out[k.strip()] = v.strip()
    return out


def _ucx_env(world: World, g: Guest, env: dict[str, str]) -> dict[str, str]:
    """The UCX settings a process on g runs with: the config file, then its environment on top."""
    return {**_ucx_conf(world, g), **{k: v for k, v in env.items() if k.startswith("UCX_")}}


def prog_mpirun(ctx: Ctx, argv: list[str]) -> Reply:
    """Open MPI 4.1 with UCX 1.12 running an OSU benchmark between two lab guests.

    MPMD (`mpirun -np 1 --host a -x K=V prog : -np 1 --host b -x K=W prog`) gives each app context its
    own environment: how a per-node UCX_IB_GID_INDEX reaches its rank."""
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    contexts, current = [], []
    for a in argv[1:]:
        if a == ":":
            contexts.append(current)
            current = []
        else:
            current.append(a)
    contexts.append(current)
    members: list[tuple[Guest, dict[str, str]]] = []
    programs_seen: list[str] = []
    for args in contexts:
        parsed = _mpirun_args(_gs(world, guest), ctx.env, args)
        if isinstance(parsed, Reply):
            return parsed
        env, program = parsed["env"], parsed["program"]
        if program is None:
            bar = "-" * 74
            return _err(f"{bar}\nNo executable was specified on the mpirun command line.\n\nAborting.\n{bar}", 1)
        programs_seen.append(program)
        np = parsed["np"]
        hosts = parsed["hosts"] or [guest.name]
        nprocs = int(np) if np and np.isdigit() else len(hosts)
        for r in range(nprocs):
            h = hosts[r % len(hosts)]
            found = (guest, "") if h in ("localhost", guest.name) else _resolve(world, h)
            if found is None:
                return _err(f"ssh: Could not resolve hostname {h}: Name or service not known\n"
                            "--------------------------------------------------------------------------\n"
                            "ORTE was unable to reliably start one or more daemons.", 1)
            members.append((found[0], env))
    program = programs_seen[0]
    bench = program.rsplit("/", 1)[-1]
    if bench not in ("osu_latency", "osu_bw", "osu_bibw") or any(p.rsplit("/", 1)[-1] != bench for p in programs_seen):
        return _err("--------------------------------------------------------------------------\nmpirun was unable to "
                    "launch the specified application as it could not access\nor execute an executable:\n\n"
                    f"Executable: {program}\nNode: {guest.name}\n\nwhile attempting to start process rank 0.\n"
                    "--------------------------------------------------------------------------", 1)
    if len(members) != 2:
        return Reply(stdout="This test requires exactly two processes\n", exit=1)
    (a, env_a), (b, env_b) = members
    return _ok(_mpi_run(world, a, b, _ucx_env(world, a, env_a), bench, _ucx_env(world, b, env_b)))


def _mpi_run(world: World, a: Guest, b: Guest, env: dict[str, str], bench: str,
             env_b: dict[str, str] | None = None) -> str:
    """UCX picks rc_mlx5 when both ends' RDMA device is up, named in UCX_NET_DEVICES and its GID is a
    RoCE v2 IPv4 one; else UCX's tcp when UCX may use a netdev, else Open MPI's own TCP (ob1): silently."""
    env_b = env if env_b is None else env_b
    envs = {a.name: env, b.name: env_b}
    info = env.get("UCX_LOG_LEVEL", "warn").lower() in ("info", "debug", "trace", "diag")
    ranks = (a, b) if a is not b else (a,)
    rdma, unavailable = _ucx_rdma(world, a, b, env, env_b) if a is not b else (False, {})
    tcp_a, tcp_b = _ucx_tcp_dev(world, a, env), _ucx_tcp_dev(world, b, env_b)
    transport = "shm" if a is b else "rdma" if rdma else "ucx-tcp" if (tcp_a and tcp_b) else "ob1-tcp"
    rng = _rng(a.name, b.name, bench, transport, time.monotonic())
    t0 = time.time()
    pids = {g.name: _next_pid(world) for g in ranks}
    clock = {g.name: t0 + rng.uniform(0.01, 0.05) for g in ranks}
    stamped: list[tuple[float, str]] = []

    def ucx(g: Guest, src: str, level: str, msg: str, later: float = 0.0) -> None:
        clock[g.name] += later + rng.uniform(0.0005, 0.09)
        text = f"[{clock[g.name]:.6f}] [{g.name}:{pids[g.name]}:0] {src:>22} UCX  {level:<4}  {msg}"
        stamped.append((clock[g.name], text))

    for g in ranks:
        # the environment's variables (the config file's are not "env variables")
        envline = " ".join(f"{k}={v}" for k, v in sorted(envs[g.name].items())
                           if k.startswith("UCX_") and _ucx_conf(world, g).get(k) != v)
        if info:
            ucx(g, "ucp_context.c:1550", "INFO", f"UCP version is {UCX_VERSION} (release 0)")
            if envline:
                ucx(g, "parser.c:1885", "INFO", f"UCX_* env variables: {envline}")
        for d in unavailable.get(g.name, []):
            avail = ", ".join([f"'{i.name}'(tcp)" for i in visible_interfaces(world, g)]
                              + [f"'{p.dev}:{p.port}'(ib)" for p in rdma_ports(world, g)])
            ucx(g, "ucp_context.c:859", "WARN", f"network device '{d}' is not available, please use one or more "
                f"of: {avail}")
        if info:
            local = [p for p in rdma_ports(world, g) if p.active]
            tl = f" rc_mlx5/{local[0].dev}:{local[0].port}" if (rdma and local) else ""
            ucx(g, "ucp_worker.c:1783", "INFO", f"ep_cfg[0]: tag(self/memory cma/memory{tl})")
    setup = [text for _, text in sorted(stamped)]
    stamped.clear()
    if info and transport in ("rdma", "ucx-tcp"):  # the remote endpoints connect at the first message
        for g in (a, b):
            if transport == "rdma":
                p = next(p for p in rdma_ports(world, g) if p.active)
                tl = f"rc_mlx5/{p.dev}:{p.port}"
            else:
                tl = f"tcp/{tcp_a if g is a else tcp_b}"
            ucx(g, "ucp_worker.c:1783", "INFO", f"ep_cfg[1]: tag({tl})", later=0.4)
    remote = [text for _, text in sorted(stamped)]

    active = [p.active_mtu for g in (a, b) for p in rdma_ports(world, g) if p.active]
    mtu = min(active or [1024])
    ports_a = [p for p in rdma_ports(world, a) if p.active]
    link = (ports_a[0].speed_mbps if ports_a else 100000) / 1000
    pcie = min(_gs(world, g).get("pcie_gbps") or 1e9 for g in (a, b))
    extra_lat = sum(_gs(world, g).get("lat_extra_us", 0.0) for g in ranks)
    titles = {"osu_latency": ("Latency", "# Size          Latency (us)"),
              "osu_bw": ("Bandwidth", "# Size      Bandwidth (MB/s)"),
              "osu_bibw": ("Bi-Directional Bandwidth", "# Size      Bandwidth (MB/s)")}
    body = []
    moved = 0
    for size in ([0] if bench == "osu_latency" else []) + [2 ** k for k in range(23)]:
        if bench == "osu_latency":
            moved += size * (10000 if size <= 8192 else 1000)
            if transport == "rdma":
                v = ((1.75 if a.vm else 1.32) + extra_lat + size / (link * _link_eff(mtu) * 125) * 1.08
                     + 0.6 * min(size, 8192) / 8192)
            elif transport == "shm":
                v = 0.22 + size / 9000
            else:
                v = 12.9 + size / 1400 + (3.0 if size >= 1024 else 0)
        else:
            moved += size * 64 * (100 if size <= 8192 else 20)
            if transport == "rdma":
                peak = min(link * _link_eff(mtu), pcie * 0.97) * 125 * 0.985
                v = ((size * 2.6) ** -2 + peak ** -2) ** -0.5
            elif transport == "shm":
                v = min(size * 3.8, 11500)
            else:
                v = ((size * 0.42) ** -2 + 2750.0 ** -2) ** -0.5
            v *= 1.9 if bench == "osu_bibw" else 1.0
        body.append(f"{size:<10}{v * rng.uniform(0.985, 1.02):>18.2f}")
    if transport == "rdma":
        _count_rdma(world, a, b, moved, mtu, both_ways=True)
    elif transport != "shm":
        if transport == "ob1-tcp":  # Open MPI's own TCP: the fastest network both ends share
            tcp_a = tcp_b = _shared_netdev(world, a, b)
        _count_tcp(world, a, b, moved, tcp_a, tcp_b)
    _count_tcp(world, a, b, 24_000, None, None)  # the launcher's wireup over the management network
    head = [f"# OSU MPI {titles[bench][0]} Test v{OSU_VERSION}", titles[bench][1]]
    return "\n".join(setup + head + remote + body) + "\n"


def _count_tcp(world: World, a: Guest, b: Guest, nbytes: int, dev_a: str | None, dev_b: str | None) -> None:
    for g, dev in ((a, dev_a), (b, dev_b)):
        st = _gs(world, g)
        name = dev or next((i.name for i in g.interfaces if i.name not in ("lo", g.roce_netdev)), g.roce_netdev)
        c = st["counters"].setdefault(name, {"rx_bytes": 0, "tx_bytes": 0, "rx_packets": 0, "tx_packets": 0})
        pkts = max(1, nbytes // 1448)
        for k in ("rx", "tx"):
            c[f"{k}_bytes"] += nbytes + 66 * pkts
            c[f"{k}_packets"] += pkts


_UCX_USAGE = "Usage: ucx_info [options]\nAt least one of the following options has to be set:\n"


def prog_ucx_info(ctx: Ctx, argv: list[str]) -> Reply:
    """ucx_info's getopt string and messages are the real one's (Debian ucx-utils 1.13.1 `ucx_info -h`)."""
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    args = argv[1:]
    for i, a in enumerate(args):
        if not a.startswith("-") or a == "-":
            continue
        for j, c in enumerate(a[1:]):
            if c not in "vdbyscCafpwemutnNDPA6TMh":
                return Reply(stdout=_UCX_USAGE, stderr=f"ucx_info: invalid option -- '{c}'\n", exit=255)
            if c in "mutnNDPA":
                if j + 2 == len(a) and i + 1 == len(args):
                    return Reply(stdout=_UCX_USAGE, stderr=f"ucx_info: option requires an argument -- '{c}'\n",
                                 exit=255)
                break
    if not args:
        return Reply(stdout=_UCX_USAGE, exit=254)
    version = f"# UCT version={UCX_VERSION}.0 revision 6a24c6b\n"
    if "-v" in argv[1:]:
        return _ok(version + "# configured with: --disable-logging --disable-debug --disable-assertions "
                   "--disable-params-check --enable-mt --with-verbs --with-rdmacm --with-knem\n")
    if "-c" in argv[1:]:  # the configuration a process started here gets: defaults < ucx.conf < environment
        conf = {**_UCX_DEFAULTS, **_ucx_env(world, guest, ctx.env)}
        return _ok("".join(f"{k}={v}\n" for k, v in conf.items()))
    if "-d" not in argv[1:]:
        return _ok(version)
    out = []
    for p in rdma_ports(world, guest):
        if not p.active:
            continue
        bw = p.speed_mbps / 8 * _link_eff(p.active_mtu) * 0.95
        align = {4096: "4K", 2048: "2K", 1024: "1K", 512: "512", 256: "256"}[p.active_mtu]
        out += ["#", f"# Memory domain: {p.dev}", "#     Component: ib", "#             register: unlimited, cost: 180 nsec",
                "#           remote key: 8 bytes", "#           local memory handle is required for zcopy", "#"]
        for tl in ("rc_verbs", "rc_mlx5", "ud_verbs", "ud_mlx5"):
            out += [f"#      Transport: {tl}", f"#         Device: {p.dev}:{p.port}", f"#  System device: {p.pci} (0)",
                    "#", "#      capabilities:", f"#            bandwidth: {bw:.2f}/ppn + 0.00 MB/sec",
                    "#              latency: 800 + 1.000 * N nsec", f"#        put_align_mtu: <= {align}",
                    f"#         am_align_mtu: <= {align}", "#       device address: 18 bytes", "#"]
    out += ["#", "# Memory domain: tcp", "#     Component: tcp", "#"]
    for i in visible_interfaces(world, guest):
        out += ["#      Transport: tcp", f"#         Device: {i.name}", "#  System device: <unknown>", "#"]
    return _ok("\n".join(out) + "\n")


# ---------------------------------------------------------------------------- program table

_PATHS = {
    "ip": "/usr/sbin/ip", "ethtool": "/usr/sbin/ethtool", "uname": "/usr/bin/uname", "hostname": "/usr/bin/hostname",
    "reboot": "/usr/sbin/reboot", "shutdown": "/usr/sbin/shutdown", "systemctl": "/usr/bin/systemctl",
    "nmcli": "/usr/bin/nmcli", "rdma": "/usr/sbin/rdma", "dnf": "/usr/bin/dnf", "yum": "/usr/bin/yum",
    "tar": "/usr/bin/tar", "ofed_info": "/usr/bin/ofed_info", "ibv_devinfo": "/usr/bin/ibv_devinfo",
    "ibv_devices": "/usr/bin/ibv_devices", "show_gids": "/usr/sbin/show_gids", "ibdev2netdev": "/usr/sbin/ibdev2netdev",
    "cma_roce_mode": "/usr/sbin/cma_roce_mode", "mlnx_qos": "/usr/sbin/mlnx_qos", "mpirun": "/usr/bin/mpirun",
    "ucx_info": "/usr/bin/ucx_info", "mlxconfig": "/usr/bin/mlxconfig", "dmesg": "/usr/bin/dmesg",
    "rm": "/usr/bin/rm", "pkill": "/usr/bin/pkill", "pgrep": "/usr/bin/pgrep",
    **{t: f"/usr/bin/{t}" for t in _PT_VERBS},
}
_BASE: dict[str, Program] = {"ip": prog_ip, "ethtool": prog_ethtool, "uname": prog_uname, "hostname": prog_hostname,
                             "reboot": prog_reboot, "shutdown": prog_shutdown, "systemctl": prog_systemctl,
                             "nmcli": prog_nmcli, "rdma": prog_rdma, "dnf": prog_dnf, "yum": prog_dnf, "tar": prog_tar,
                             "timeout": prog_timeout, "nohup": prog_nohup, "pgrep": prog_pgrep, "pkill": prog_pkill,
                             "rm": prog_rm}
_VERBS: dict[str, Program] = {"ibv_devinfo": prog_ibv_devinfo, "ibv_devices": prog_ibv_devices,
                              **dict.fromkeys(_PT_VERBS, _perftest)}
_OFED: dict[str, Program] = {**_VERBS, "ofed_info": prog_ofed_info, "show_gids": prog_show_gids,
                             "ibdev2netdev": prog_ibdev2netdev, "cma_roce_mode": prog_cma_roce_mode,
                             "mlnx_qos": prog_mlnx_qos, "mpirun": prog_mpirun, "ucx_info": prog_ucx_info}


def programs(world: World, guest_name: str) -> dict[str, Program]:
    """The programs installed on the guest right now, by bare name and by full path.

    MLNX_OFED's binaries are there as soon as `mlnxofedinstall` ran (its kernel stack loads with
    `/etc/init.d/openibd force-restart` or the next boot: `World.guest_rdma` decides the device);
    inbox rdma-core gives the verbs tools and perftest only. `mlnx_qos` is installed in a VF guest
    too and fails there as on a VF. Bare metal has NVIDIA MFT's mlxconfig.
    """
    guest = _guest(world, guest_name)
    _gs(world, guest)
    table: dict[str, Program] = dict(_BASE)
    if guest.ofed_version:
        table.update(_OFED)
    elif guest.rdma_core:
        table.update(_VERBS)
    if guest.vm is None:
        table["mlxconfig"] = prog_mlxconfig
        table["dmesg"] = prog_dmesg
    for tool in guest.missing_tools:
        table.pop(tool, None)
    out: dict[str, Program] = {}
    for name, prog in table.items():
        out[name] = prog
        out[_PATHS.get(name, f"/usr/bin/{name}")] = prog
    if guest.ofed_version:
        out["/etc/init.d/openibd"] = prog_openibd
    for path in ("mlnxofedinstall", "./mlnxofedinstall", f"{OFED_DIR}/mlnxofedinstall"):
        out[path] = prog_mlnxofedinstall
    return out


# ---------------------------------------------------------------------------- files


def _os_release(guest: Guest) -> str:
    m = re.match(r"(.*?)\s+(\d+(?:\.\d+)?)\s*(?:\((.*)\))?$", guest.os_release)
    name, ver, code = (m.group(1), m.group(2), m.group(3) or "") if m else (guest.os_release, "", "")
    ident = "rhel" if "Red Hat" in name else name.split()[0].lower()
    return (f'NAME="{name}"\nVERSION="{ver}{f" ({code})" if code else ""}"\nID="{ident}"\nID_LIKE="fedora"\n'
            f'VERSION_ID="{ver}"\nPLATFORM_ID="platform:el{ver.split(".")[0]}"\nPRETTY_NAME="{guest.os_release}"\n'
            f'ANSI_COLOR="0;31"\nCPE_NAME="cpe:/o:redhat:enterprise_linux:{ver}:GA"\nHOME_URL="https://www.redhat.com/"\n'
            'BUG_REPORT_URL="https://bugzilla.redhat.com/"\n')


def files(world: World, guest_name: str) -> dict[str, str]:
    """The virtual files the guest shows now (`cat` reads them; absent = No such file or directory)."""
    guest = _guest(world, guest_name)
    st = _gs(world, guest)
    out: dict[str, str] = {}
    if "RW003" not in guest.faults:
        out["/proc/sys/kernel/random/boot_id"] = guest.boot_id + "\n"
    out["/etc/os-release"] = _os_release(guest)
    out["/etc/machine-id"] = guest.machine_id + "\n"
    out["/etc/redhat-release"] = guest.os_release + "\n"
    out["/etc/hostname"] = guest.name + "\n"
    out["/proc/sys/kernel/hostname"] = guest.name + "\n"
    out["/proc/version"] = (f"Linux version {guest.kernel} (mockbuild@x86-vm-07.build.eng.bos.redhat.com) "
                            "(gcc version 8.4.1 20200928 (Red Hat 8.4.1-1) (GCC)) #1 SMP Thu Apr 29 08:54:30 EDT 2021\n")
    # the MLNX_OFED bundle the lab stages for installs (RW401's fix)
    out[f"/tmp/{OFED_BUNDLE}-rhel8.4-x86_64.tgz"] = "(gzip compressed data)\n"
    out[f"{OFED_DIR}/.mlnx"] = OFED_BUNDLE.replace("MLNX_OFED_LINUX-", "") + "\n"
    out[f"{OFED_DIR}/distro"] = "rhel8.4\n"
    out.update(st["etc"])
    if guest.vm is None:  # a bare-metal server's IOMMU units (VT-d on; see _DMESG_IOMMU)
        for unit in ("dmar0", "dmar1"):
            out[f"/sys/class/iommu/{unit}/intel-iommu/version"] = "1:0\n"
    for iface in visible_interfaces(world, guest):
        base = f"/sys/class/net/{iface.name}"
        state = _flags(world, guest, iface)[1]
        c = st["counters"].get(iface.name, {"rx_bytes": 0, "tx_bytes": 0, "rx_packets": 0, "tx_packets": 0})
        out[f"{base}/mtu"] = f"{iface.mtu}\n"
        out[f"{base}/address"] = f"{iface.mac}\n"
        out[f"{base}/operstate"] = "unknown\n" if iface.name == "lo" else f"{state.lower()}\n"
        if iface.up:
            out[f"{base}/carrier"] = f"{1 if _carrier(world, guest, iface) else 0}\n"
        for k in ("rx_bytes", "tx_bytes", "rx_packets", "tx_packets"):
            out[f"{base}/statistics/{k}"] = f"{c.get(k, 0)}\n"
        if _driver(guest, iface) == "mlx5_core":
            out[f"{base}/device/vendor"] = "0x15b3\n"
            out[f"{base}/device/device"] = "0x1018\n" if guest.vm else "0x1017\n"
            card = st["card"]
            if guest.vm is None and card.config["SRIOV_EN"].current is True:
                out[f"{base}/device/sriov_totalvfs"] = f"{card.config['NUM_OF_VFS'].current}\n"
                out[f"{base}/device/sriov_numvfs"] = "0\n"
    r = st["rdma"]
    for p in rdma_ports(world, guest):
        base = f"/sys/class/infiniband/{p.dev}"
        out[f"{base}/fw_ver"] = p.card.fw_version + "\n"
        out[f"{base}/board_id"] = p.card.psid + "\n"
        out[f"{base}/node_guid"] = p.node_guid + "\n"
        out[f"{base}/node_type"] = "1: CA\n"
        if guest.ofed_version and not guest.ofed_pending:  # the tc/ directory is MLNX_OFED's
            tclass = guest.traffic_class
            out[f"{base}/tc/1/traffic_class"] = f"Global tclass={tclass}\n" if tclass is not None else ""
        if guest.rdma_cm_tos is not None and p.netdev.name == guest.roce_netdev:
            # drivers/infiniband/core/cma_configfs.c prints the TOS as "%u\n"
            out[f"/sys/kernel/config/rdma_cm/{p.dev}/ports/{p.port}/default_roce_tos"] = f"{guest.rdma_cm_tos}\n"
        pb = f"{base}/ports/{p.port}"
        out[f"{pb}/state"] = "4: ACTIVE\n" if p.active else "1: DOWN\n"
        out[f"{pb}/phys_state"] = "5: LinkUp\n" if p.active else "3: Disabled\n"
        out[f"{pb}/link_layer"] = "Ethernet\n"
        out[f"{pb}/rate"] = f"{p.speed_mbps // 1000} Gb/sec (4X EDR)\n" if p.active else "10 Gb/sec (4X QDR)\n"
        mine = r if p.netdev.name == guest.roce_netdev else _empty_rdma()
        for name, val in (("port_xmit_data", mine["tx_bytes"] // 4), ("port_rcv_data", mine["rx_bytes"] // 4),
                          ("port_xmit_packets", mine["tx_packets"]), ("port_rcv_packets", mine["rx_packets"]),
                          ("port_xmit_discards", 0), ("port_rcv_errors", 0), ("port_xmit_wait", 0),
                          ("port_rcv_remote_physical_errors", 0), ("symbol_error", 0), ("link_downed", 0)):
            out[f"{pb}/counters/{name}"] = f"{val}\n"
        for name, val in (("np_cnp_sent", r["cnp_sent"]), ("rp_cnp_handled", r["cnp_handled"]),
                          ("np_ecn_marked_roce_packets", r["ecn_marked"]), ("out_of_sequence", r["out_of_sequence"]),
                          ("out_of_buffer", 0), ("packet_seq_err", 0), ("local_ack_timeout_err", 0),
                          ("rnr_nak_retry_err", 0), ("implied_nak_seq_err", 0), ("duplicate_request", 0)):
            out[f"{pb}/hw_counters/{name}"] = f"{val if p.netdev.name == guest.roce_netdev else 0}\n"
        used = set()
        for idx, gid, _v4, ver, nd in gid_table(world, guest, p):
            used.add(idx)
            out[f"{pb}/gids/{idx}"] = gid + "\n"
            out[f"{pb}/gid_attrs/types/{idx}"] = ("RoCE v2" if ver == "v2" else "IB/RoCE v1") + "\n"
            out[f"{pb}/gid_attrs/ndevs/{idx}"] = nd + "\n"
        out.update(rdma_sysfs.unused_gid_files(pb, used))  # the rest of the table: zeros (types/ndevs: EINVAL)
    out.update(rdma_sysfs.configfs_files(guest, [(p.dev, p.port) for p in rdma_ports(world, guest)]))
    return out


def file_errors(world: World, guest_name: str) -> dict[str, str]:
    """Paths that exist but cannot be read now -> what `cat` says after the path ("Permission denied")."""
    guest = _guest(world, guest_name)
    out: dict[str, str] = {}
    for p in rdma_ports(world, guest):
        used = {idx for idx, *_ in gid_table(world, guest, p)}
        out.update(rdma_sysfs.unused_gid_errors(f"/sys/class/infiniband/{p.dev}/ports/{p.port}", used))
    if "RW003" in guest.faults:
        out["/proc/sys/kernel/random/boot_id"] = "Permission denied"
    return out


def write_file(world: World, guest_name: str, path: str, content: str) -> str | None:
    """`echo … > path`: None when written, else the shell's error text."""
    guest = _guest(world, guest_name)
    st = _gs(world, guest)
    m = re.fullmatch(r"/sys/class/infiniband/([^/]+)/tc/(\d+)/traffic_class", path)
    if m:
        dev = next((p for p in rdma_ports(world, guest) if p.dev == m.group(1)), None)
        if dev is None or not guest.ofed_version or guest.ofed_pending or m.group(2) != "1":
            return f"sh: {path}: No such file or directory"
        value = content.strip()
        if not value.isdigit() or int(value) > 255:
            return "sh: echo: write error: Invalid argument"
        guest.traffic_class = int(value)
        return None
    m = re.fullmatch(r"/sys/class/net/([^/]+)/mtu", path)
    if m:
        iface = next((i for i in visible_interfaces(world, guest) if i.name == m.group(1)), None)
        if iface is None:
            return f"sh: {path}: No such file or directory"
        value = content.strip()
        if not value.isdigit() or not 68 <= int(value) <= _max_mtu(guest, iface):
            return "sh: echo: write error: Invalid argument"
        iface.mtu = int(value)
        return None
    if path.startswith(("/etc/", "/tmp/", "/root/")):
        st["etc"][path] = content
        return None
    if path.startswith(("/sys/", "/proc/")):
        return f"sh: {path}: {'Permission denied' if path in files(world, guest_name) else 'No such file or directory'}"
    return None


# ---------------------------------------------------------------------------- bare metal in a world


def add_baremetal(world: World, count: int = 1, healthy: bool = True) -> list[Guest]:
    """Add bare-metal Linux hosts (kind linux) node-01…, each owning a ConnectX-5 (ens1f0np0 cabled
    to the first switch, ens1f1np1 without a cable), as in seeds 001 and 004."""
    added = []
    first = 1 + sum(1 for g in world.guests.values() if g.vm is None)
    for index in range(first, first + count):
        name, netdev = f"node-{index:02d}", "ens1f0np0"
        guest = Guest(
            name=name, vm=None, roce_netdev=netdev,
            ofed_version=OFED_BUNDLE if healthy else None,
            interfaces=[
                Interface("lo", "00:00:00:00:00:00", 65536, ["127.0.0.1/8"]),
                Interface("eno1", f"b0:26:28:a0:{index:02x}:10", 1500, [f"10.10.1.{10 + index}/24"]),
                Interface(netdev, f"0c:42:a1:{0x40 + index:02x}:7e:20", 9000 if healthy else 1500,
                          [f"192.168.101.{10 + index}/24"] if healthy else []),
                Interface("ens1f1np1", f"0c:42:a1:{0x40 + index:02x}:7e:21", 1500, [], up=False),
            ],
            cma_roce_mode="RoCE v2" if healthy else "IB/RoCE v1", cma_persisted=healthy,
            traffic_class=(26 << 2 | 2) if healthy else None,  # DSCP 26 + ECT(0): RW411 passes
            rdma_cm_tos=(26 << 2 | 2) if healthy else None,  # configfs dir made and set by a boot hook
            qos_trust="dscp" if healthy else "pcp",
            qos_pfc=[0, 0, 0, 1, 0, 0, 0, 0] if healthy else [0] * 8,
        )
        world.guests[name] = guest
        sw = next(iter(world.switches.values()), None)
        if sw is not None:
            fmt = {"eos": "Ethernet{n}", "onyx": "Eth1/{n}", "os10": "ethernet1/1/{n}"}.get(sw.vendor, "Ethernet{n}")
            sw.ports.append(SwitchPort(fmt.format(n=len(sw.ports) + 1), mtu=9216 if healthy else 1500,
                                       pfc_enabled=healthy, no_drop={3} if healthy else set(),
                                       trust="dscp" if healthy else "pcp", ecn=healthy,
                                       description=f"{name} {netdev}", peer=(name, netdev)))
        added.append(guest)
    return added


# ---------------------------------------------------------------------------- faults


def _persist(world: World, target: str) -> None:
    """A fault is the machine's configuration, not a runtime slip: it survives reboots."""
    guest = world.guests[target]
    st = _lab(world)["guests"].get(target)
    if st is None:
        return  # not seen yet: the first look snapshots the state, fault included
    st["nm"] = {i.name: {"mtu": i.mtu, "ipv4": list(i.ipv4), "autoconnect": i.up} for i in guest.interfaces}
    st["persist"] = {"pause": (guest.pause_rx, guest.pause_tx), "traffic_class": guest.traffic_class,
                     "qos": (guest.qos_trust, list(guest.qos_pfc)), "rdma_cm_tos": guest.rdma_cm_tos}


def _roce_iface(world: World, target: str) -> Interface:
    guest = world.guests[target]
    iface = guest.interface(guest.roce_netdev)
    if iface is None:
        raise ValueError(f"{target} has no {guest.roce_netdev}")
    return iface


def _f_rw002(world: World, target: str) -> None:
    # ethtool is a package of its own (minimal images lack it): RW002 fails on an essential tool and
    # RW410, which cannot read the pause settings, is blocked by RW002
    world.guests[target].missing_tools.add("ethtool")


def _f_rw003(world: World, target: str) -> None:
    world.guests[target].faults.add("RW003")  # a hardened /proc: boot_id not readable for the user


def _f_rw401(world: World, target: str) -> None:
    g = world.guests[target]
    g.ofed_version, g.ofed_pending, g.rdma_core = None, False, False


def _f_rw402(world: World, target: str) -> None:
    # MLNX_OFED installed but its driver never loaded (no openibd force-restart, no reboot since): the
    # tools are there (RW401 passes), no RDMA device exists. (A VM without a VF is RW304's fault.)
    g = world.guests[target]
    g.ofed_version = g.ofed_version or OFED_BUNDLE
    g.rdma_core = False
    g.ofed_pending = True


def _f_rw403(world: World, target: str) -> None:
    # the RoCE netdev is not brought up at boot (NetworkManager autoconnect off / ONBOOT=no): port DOWN
    _roce_iface(world, target).up = False
    _persist(world, target)


def _f_rw405(world: World, target: str) -> None:
    _roce_iface(world, target).mtu = 1500
    _persist(world, target)


def _f_rw406(world: World, target: str) -> None:
    # the management NIC also has an address in the RoCE subnet (seed 000 ref. 15: the IP conflict)
    guest = world.guests[target]
    net = ipaddress.IPv4Interface(_roce_iface(world, target).ipv4[0]).network
    mgmt = next(i for i in guest.interfaces if i.name not in ("lo", guest.roce_netdev))
    mgmt.ipv4.append(f"{net.network_address + 200 + list(world.guests).index(target) % 50}/{net.prefixlen}")
    _persist(world, target)


def _f_rw407(world: World, target: str) -> None:
    world.guests[target].faults.add("RW407")  # the stack publishes RoCE v1 GIDs only


def _f_rw408(world: World, target: str) -> None:
    g = world.guests[target]
    g.cma_roce_mode, g.cma_persisted = "IB/RoCE v1", False


def _f_rw409(world: World, target: str) -> None:
    world.guests[target].qos_trust = "pcp"
    _persist(world, target)


def _f_rw410(world: World, target: str) -> None:
    g = world.guests[target]
    g.pause_rx = g.pause_tx = True
    _persist(world, target)


def _f_rw411(world: World, target: str) -> None:
    world.guests[target].traffic_class = 96  # DSCP 24 where the policy says 26
    _persist(world, target)


def _f_rw412(world: World, target: str) -> None:
    # someone ran `mlxconfig set SRIOV_EN=0`: pending for the next boot, it would take the VFs away
    _gs(world, world.guests[target])["card"].config["SRIOV_EN"].next_boot = False


def _f_rw601(world: World, target: str) -> None:
    # every setting is right; the card's PCIe link trained at Gen3 x4 (a riser, a half-seated card):
    # ~25 Gb/s of a 100 Gb/s port. Only a measurement sees it.
    _gs(world, world.guests[target])["pcie_gbps"] = 25.6


def _f_rw602(world: World, target: str) -> None:
    # tuned profile `powersave`: the CPUs idle into deep C-states, every small message waits for a wakeup
    _gs(world, world.guests[target])["lat_extra_us"] = 3.2


def _f_rw603(world: World, target: str) -> None:
    # a site UCX config file restricts transports to TCP and shared memory: MPI runs, silently over TCP
    # (UCX_TLS is no variable the wizard's mpirun line sets, so its jobs get this too)
    _gs(world, world.guests[target])["etc"][UCX_CONF] = (
        "# site defaults (copied from the login nodes)\nUCX_TLS=tcp,sm,self\n")


def _f_rw604(world: World, target: str) -> None:
    # the site UCX config pins the GID index to 0: the MAC-derived link-local RoCE v1 GID
    _gs(world, world.guests[target])["etc"][UCX_CONF] = "# site defaults\nUCX_IB_GID_INDEX=0\n"


def _f_rw605(world: World, target: str) -> None:
    # PFC is on end to end, but the switch port towards this node reserves too little headroom for its
    # cable: under incast the buffer overflows before the pause frame takes effect
    _gs(world, world.guests[target])["headroom_short"] = True


def _f_rw606(world: World, target: str) -> None:
    # `ethtool -G <if> rx 256`: the receive ring runs dry under incast (rx_out_of_buffer), throughput holds
    _gs(world, world.guests[target])["rx_ring_small"] = True


FAULTS: dict[str, Fault] = {f.code: f for f in (
    Fault("RW002", "guest", "ethtool is not installed", _f_rw002),
    Fault("RW003", "guest", "/proc/sys/kernel/random/boot_id is not readable", _f_rw003),
    Fault("RW401", "guest", "no RDMA stack (neither MLNX_OFED nor rdma-core)", _f_rw401),
    Fault("RW402", "guest", "MLNX_OFED installed but its driver not loaded (no openibd restart, no reboot)",
          _f_rw402),
    Fault("RW403", "guest", "the RoCE netdev is not brought up at boot: port DOWN", _f_rw403),
    # no RW404 fault: active_mtu follows the port's own netdev (mlx5: min(4096, iboe_get_mtu(netdev MTU))), so it
    # is below 4096 only while that netdev's MTU is below 4192 — RW405's fault, which then blocks RW404. A small
    # host uplink / VDS / switch MTU leaves active_mtu at 4096 and drops the jumbo frames instead.
    Fault("RW405", "guest", "RoCE netdev MTU 1500", _f_rw405),
    Fault("RW406", "guest", "the management NIC also has an address in the RoCE subnet", _f_rw406),
    Fault("RW407", "guest", "only RoCE v1 GIDs (no RoCE v2 IPv4 GID)", _f_rw407),
    Fault("RW408", "guest", "rdma_cm default mode IB/RoCE v1", _f_rw408),
    Fault("RW409", "linux", "mlnx_qos trust pcp on the PF", _f_rw409),
    # bare metal: an mlx5 VF in a guest cannot set port pause at all (RW410 is n/a there)
    Fault("RW410", "linux", "global pause RX/TX on the RoCE netdev of the PF", _f_rw410),
    Fault("RW411", "guest", "default RoCE traffic class 96 (DSCP 24) instead of 104", _f_rw411),
    Fault("RW412", "linux", "SRIOV_EN set to False for the next boot (mlxconfig)", _f_rw412),
)}

# faults only a measurement between two nodes sees (the validate stage); kept apart from FAULTS, whose
# every entry a guest-stage check detects on the guest itself
VALIDATE_FAULTS: dict[str, Fault] = {f.code: f for f in (
    Fault("RW601", "guest", "the RoCE card's PCIe link trained at Gen3 x4: ~25 Gb/s on a 100 Gb/s port", _f_rw601),
    Fault("RW602", "guest", "tuned profile powersave: deep C-states add ~3 us to every small message", _f_rw602),
    Fault("RW603", "guest", f"{UCX_CONF} sets UCX_TLS=tcp,sm,self: MPI runs over TCP, silently", _f_rw603),
    Fault("RW604", "guest", f"{UCX_CONF} pins UCX_IB_GID_INDEX=0 (a link-local RoCE v1 GID)", _f_rw604),
    Fault("RW605", "guest", "the switch port towards the node has PFC but too little headroom: incast overflows",
          _f_rw605),
    Fault("RW606", "linux", "RoCE netdev RX ring 256: rx_out_of_buffer grows under incast", _f_rw606),
)}


__all__ = ["FAULTS", "VALIDATE_FAULTS", "add_baremetal", "file_errors", "files", "gid_table", "programs", "rdma_ports", "roce_mtu",
           "sync", "visible_interfaces", "write_file"]
