"""The switch ports' traffic counters of the lab, moved by the world's traffic (perftest and incast between nodes).

Kept apart from lab/switch/ (which renders them in the vendors' formats, lab/switch/counters.py) so that the
guests' perftest can move them without importing the switch package. State lives on each Switch object
(`lab_counters`, deep-copied with the world).

How traffic moves them (the lab's physics, not a check's logic): every RoCE packet into a node is enqueued on
the egress queue of the port that faces the receiver, in the traffic class of the priority its DSCP maps to.
Under incast, when that priority is lossless on the receiver's path (`mode` "pfc", as lab/guest/perftest.py
decides from PFC on both ends), the switch pauses the senders (tx pause on the sender's port) and the receiver
pauses the switch (rx pause on its port); when it is lossy the queue drops. A port whose RoCE queue limit is
short (fault RW609: a buffer profile, invisible in the PFC/ECN/trust configuration) drops a few packets on
the lossless queue even though pauses flow.
"""

from __future__ import annotations

from roce_wizard.lab.world import Switch, SwitchPort, World

KEYS = ("enq_pkts", "enq_octets", "drop_pkts", "drop_octets", "rx_pause", "tx_pause", "rx_pause_us", "tx_pause_us")
SHORT_QUEUE = "lab_short_queue"  # Switch.__dict__ key: names of ports whose lossless queue limit is short


def port_counters(switch: Switch, port: SwitchPort) -> dict[str, list[int]]:
    table = switch.__dict__.setdefault("lab_counters", {})
    return table.setdefault(port.name, {k: [0] * 8 for k in KEYS})


def cabled(world: World, peer: tuple[str, str] | None) -> tuple[Switch, SwitchPort] | None:
    """The switch port cabled to (host, nic)."""
    for sw in world.switches.values():
        for p in sw.ports:
            if peer is not None and p.peer == peer:
                return sw, p
    return None


def count_stream(world: World, into: tuple[str, str] | None, out_of: tuple[str, str] | None, nbytes: int, pkts: int,
                 tc: int, mode: str, streams: int) -> None:
    """RoCE packets from the host port `out_of` to the host port `into` ((host, nic) each) through the switch, on
    traffic class `tc`; `mode` is how the receiver's path treats it ("pfc", "pfc-overrun", "pause", "lossy");
    `streams` > 1 is an incast (congestion)."""
    to_receiver = cabled(world, into)
    if to_receiver is None:
        return
    sw, port = to_receiver
    c = port_counters(sw, port)
    c["enq_pkts"][tc] += pkts
    c["enq_octets"][tc] += nbytes
    if streams <= 1:
        return
    if mode in ("lossy", "pause", "pfc-overrun"):
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
