"""The switch ports' traffic counters of the lab, moved by the world's traffic (perftest and incast between nodes).

Kept apart from lab/switch/ (which renders them in the vendors' formats, lab/switch/counters.py) so that the
guests' perftest can move them without importing the switch package. State lives on each Switch object
(`lab_counters`, deep-copied with the world).

How traffic moves them (the lab's physics, not a check's logic): every RoCE packet into a node is enqueued on
the egress queue of the port that faces the receiver, in the traffic class the SWITCH classified it into where it
entered (the port towards the sender): with `qos trust dscp` its DSCP through the switch's DSCP → TC map (EOS's
default map sends DSCP 0-7 to TC 1), else its CoS through the CoS → TC map — unless that ingress port re-marks
what it receives to DSCP 0 (an input policy map; fault RW607 on a VF guest: REMARK_IN). Latency pongs and MPI
replies go the other way, into the sender's port. A rewrite on the way OUT of a port (fault RW607 on bare metal)
happens after queueing: it changes the DSCP the node receives, not the queue.
Under incast, when that priority is lossless on the receiver's path (`mode` "pfc", as lab/guest/perftest.py
decides from PFC on both ends), the switch pauses the senders (tx pause on the sender's port) and the receiver
pauses the switch (rx pause on its port); when it is lossy the queue drops. A port whose RoCE queue limit is
short (fault RW609: a buffer profile, invisible in the PFC/ECN/trust configuration) drops a few packets on
the lossless queue even though pauses flow.
"""

from __future__ import annotations

from roce_wizard.lab.world import Switch, SwitchPort, World

KEYS = ("enq_pkts", "enq_octets", "drop_pkts", "drop_octets", "rx_pause", "tx_pause", "rx_pause_us", "tx_pause_us",
        "ecn_marked")
SHORT_QUEUE = "lab_short_queue"  # Switch.__dict__ key: names of ports whose lossless queue limit is short
REMARK_IN = "lab_remark_in"  # Switch.__dict__ key: names of ports that re-mark what they receive to DSCP 0


def port_counters(switch: Switch, port: SwitchPort) -> dict[str, list[int]]:
    table = switch.__dict__.setdefault("lab_counters", {})
    counters = table.setdefault(port.name, {k: [0] * 8 for k in KEYS})
    for k in KEYS:  # a table made before a key was added
        counters.setdefault(k, [0] * 8)
    return counters


def remarks_in(world: World, peer: tuple[str, str] | None) -> bool:
    """Does the switch port cabled to (host, nic) re-mark what it receives from there to DSCP 0?"""
    found = cabled(world, peer)
    return found is not None and found[1].name in found[0].__dict__.get(REMARK_IN, ())


def cabled(world: World, peer: tuple[str, str] | None) -> tuple[Switch, SwitchPort] | None:
    """The switch port cabled to (host, nic)."""
    for sw in world.switches.values():
        for p in sw.ports:
            if peer is not None and p.peer == peer:
                return sw, p
    return None


def switch_tc(world: World, into: tuple[str, str] | None, out_of: tuple[str, str] | None, dscp: int,
              cos: int) -> int:
    """The traffic class the switch queues a packet in on its way from `out_of` to `into`: classified at the port
    it enters by (trust dscp) the DSCP → TC map, else the CoS → TC map; EOS's defaults as `show qos maps` shows them
    (CoS 0 → TC 1, CoS 1 → TC 0; DSCP 0-7 → TC 1, 8-15 → TC 0). The vendor CLIs' map overrides are read from the
    switch's CLI state duck-typed, in step with lab/switch/common.switch_priority (the switch package imports this
    module, so it cannot import the switch package)."""
    entry = cabled(world, out_of) or cabled(world, into)
    if entry is None:
        return cos
    sw, port = entry
    if remarks_in(world, out_of):
        dscp = 0
    eos = sw.vendor == "eos"
    if port.trust != "dscp":
        return {0: 1, 1: 0}.get(cos, cos) if eos else cos
    state = sw.__dict__.get("cli_state")  # lab/switch/state.py CliState, once a vendor CLI changed the maps
    if sw.vendor == "os10":
        name = (getattr(state, "os10_port_trust_map", None) or {}).get(port.name, "default")
        overrides = (getattr(state, "os10_dscp_maps", None) or {}).get(name, {}) if name != "default" else {}
    else:
        overrides = getattr(state, "dscp_map", None) or {}
    default = dscp >> 3
    return overrides.get(dscp, {0: 1, 1: 0}.get(default, default) if eos else default)


def count_stream(world: World, into: tuple[str, str] | None, out_of: tuple[str, str] | None, nbytes: int, pkts: int,
                 tc: int, mode: str, streams: int) -> None:
    """RoCE packets from the host port `out_of` to the host port `into` ((host, nic) each) through the switch, on
    traffic class `tc` (switch_tc); `nbytes` as on the wire; `mode` is how the receiver's path treats it ("pfc",
    "pfc-overrun", "pause", "lossy"); `streams` > 1 is an incast (congestion)."""
    to_receiver = cabled(world, into)
    if to_receiver is None:
        return
    sw, port = to_receiver
    c = port_counters(sw, port)
    c["enq_pkts"][tc] += pkts
    c["enq_octets"][tc] += nbytes
    if streams <= 1:
        return
    # a queue the switch keeps lossless (PFC on, its class no-drop) does not drop: when the receiver's own port
    # treats the traffic as lossy (a DSCP rewritten on the way out of the switch), the loss is the host's
    switch_lossless = port.pfc_enabled and tc in port.no_drop
    if mode in ("pause", "pfc-overrun") or (mode == "lossy" and not switch_lossless):
        dropped = (1500 if mode != "pause" else 300) * streams
        c["drop_pkts"][tc] += dropped
        c["drop_octets"][tc] += dropped * 1100
    if mode in ("pfc", "pfc-overrun"):
        c["rx_pause"][tc] += 120 * streams  # the receiver, its buffers filling, pauses the switch
        c["rx_pause_us"][tc] += 360 * streams
        if port.name in sw.__dict__.get(SHORT_QUEUE, ()):  # fault RW609: the queue overflows anyway
            c["drop_pkts"][tc] += 37 * streams
            c["drop_octets"][tc] += 37 * streams * 1100
        from_sender = cabled(world, out_of)
        if from_sender is not None:
            s = port_counters(*from_sender)
            s["tx_pause"][tc] += 400 * streams  # and the switch pauses the senders
            s["tx_pause_us"][tc] += 1200 * streams


def count_marks(world: World, into: tuple[str, str] | None, tc: int, marked: int) -> None:
    """ECN-marked packets out of the switch port towards `into` (the queue that congested marked them)."""
    found = cabled(world, into)
    if found is not None:
        port_counters(*found)["ecn_marked"][tc] += marked
