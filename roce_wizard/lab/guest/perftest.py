"""perftest (ib_send_bw, ib_write_lat, ...) between two simulated nodes: results computed from both ends, and the counters they move."""

from __future__ import annotations

import ipaddress
import random
import time

from roce_wizard.lab.fabric import count_stream, switch_tc
from roce_wizard.lab.guest import congestion, perftest_cli
from roce_wizard.lab.guest.ethtool import _prio_for
from roce_wizard.lab.guest.ofed import _next_pid
from roce_wizard.lab.guest.procs import _reap_servers
from roce_wizard.lab.guest.rdma import RdmaPort, _resolve, gid_table, rdma_ports
from roce_wizard.lab.guest.state import LINE, _err, _gs, _guest, _lab, _ok, _rng, _switch_port, _vf_backing
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.world import Guest, World

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
    prio = _prio_for(world, peer, congestion.arriving_dscp(world, peer, tclass >> 2, sender=guest))
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
            _count_congestion(world, guest, peer, mode, n, prio,
                              switch_tc(world, _uplink(world, peer), _uplink(world, guest), tclass >> 2,
                                        _prio_for(world, guest, tclass >> 2)))
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
    if kind == "bw" and n > 1:  # the incast's pauses and drops on the switch ports on the way
        count_stream(world, _uplink(world, peer), _uplink(world, guest), 0, 0,
                     switch_tc(world, _uplink(world, peer), _uplink(world, guest), tclass >> 2,
                               _prio_for(world, guest, tclass >> 2)), mode, n)
    return _ok("\n".join(out) + "\n")


def _uplink(world: World, g: Guest) -> tuple[str, str] | None:
    """(host, nic) a node's RoCE traffic leaves through: its own netdev, or its ESXi host's VF uplink."""
    return congestion._uplink_of(world, g)


def _count_rdma(world: World, sender: Guest, receiver: Guest, nbytes: int, mtu: int, both_ways: bool = False,
                tclass: int | None = None) -> None:
    """RDMA bytes on both ends; per priority by the class the packets carried (each end maps the DSCP with its
    own trust and dscp2prio; without a class given, the device's default class)."""
    pkts = max(1, nbytes // mtu)
    wire = nbytes + 58 * pkts  # RoCE v2 headers on the wire
    for g, direction in ((sender, "tx"), (receiver, "rx")):
        r = _gs(world, g)["rdma"]
        dscp = (tclass if tclass is not None else (g.traffic_class or 0)) >> 2
        for d in (direction, "rx" if direction == "tx" else "tx") if both_ways else (direction,):
            # what arrives is classified by the DSCP it arrives with (a switch may have rewritten it)
            other = receiver if g is sender else sender
            prio = _prio_for(world, g, congestion.arriving_dscp(world, g, dscp, sender=other) if d == "rx" else dscp)
            r[f"{d}_bytes"] += wire
            r[f"{d}_packets"] += pkts
            r[f"prio_{d}_bytes"][prio] += wire
    for src, dst in ((sender, receiver), (receiver, sender)) if both_ways else ((sender, receiver),):
        # through the switch: queued on the port towards dst, in the class the switch gives what src sends
        dscp = (tclass if tclass is not None else (src.traffic_class or 0)) >> 2
        into, out_of = _uplink(world, dst), _uplink(world, src)
        count_stream(world, into, out_of, wire, pkts, switch_tc(world, into, out_of, dscp, _prio_for(world, src, dscp)),
                     "pfc", 1)


def _count_congestion(world: World, sender: Guest, receiver: Guest, mode: str, n: int, prio: int,
                      tc: int | None = None) -> None:
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
    congestion.count_ecn(world, sender, receiver, n, prio, tc)
