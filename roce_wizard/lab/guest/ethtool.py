"""`ethtool` of the simulated guest: driver info, link settings, statistics."""

from __future__ import annotations

from typing import Any

from roce_wizard.lab.guest.ip import _carrier, _driver
from roce_wizard.lab.guest.rdma import rdma_ports, visible_interfaces
from roce_wizard.lab.guest.state import VM_PCI, _err, _gs, _guest, _ok
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.world import Guest, Interface, World

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
