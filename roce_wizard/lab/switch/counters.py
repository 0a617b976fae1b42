"""Switch port counters of the lab, moved by the world's traffic (perftest and incast between nodes), and the
vendor views that show them in their real formats (only views with a real capture; see tests/data/README-issue15.md):

- EOS `show interfaces counters queue detail`: the egress queue table of the real capture
  tests/data/corpus/eos_queue_counters/ (networktocode/ntc-templates), one row per port and traffic class.
- NVUE `nv show interface <swp> qos roce counters`: the table of the real capture
  tests/data/corpus/cumulus_nv_show_qos_roce/cl514-… (Cumulus Linux 5.14 User Guide).
Onyx and OS10 per-priority counter views have no real capture: the lab does not invent them.

How traffic moves them (the lab's physics, not a check's logic): every RoCE packet into a node is enqueued on
the egress queue (traffic class = the priority the switch's own DSCP map gives the packet's DSCP, as
common.switch_priority decides) of the port that faces the receiver. Under incast, when that priority is
lossless on the receiver's port (PFC on, no-drop), the switch pauses the senders (tx pause on the sender's
port) and the receiver pauses the switch (rx pause on its port); when it is lossy, the queue drops. A port
whose RoCE queue limit is short (fault RW609: a buffer profile, invisible in the PFC/ECN/trust configuration)
drops a few packets on the lossless queue even though pauses flow.
"""

from __future__ import annotations

from roce_wizard.lab.faults import Fault
from roce_wizard.lab.switch.common import _reconcile, eos_short, switch_priority
from roce_wizard.lab.world import Guest, Switch, SwitchPort, World

KEYS = ("enq_pkts", "enq_octets", "drop_pkts", "drop_octets", "rx_pause", "tx_pause", "rx_pause_us", "tx_pause_us")


def port_counters(switch: Switch, port: SwitchPort) -> dict[str, list[int]]:
    table = switch.__dict__.setdefault("lab_counters", {})  # deep-copied with the world
    return table.setdefault(port.name, {k: [0] * 8 for k in KEYS})


def uplink(world: World, guest: Guest) -> tuple[Switch, SwitchPort] | None:
    """The switch port a node's RoCE traffic leaves through: its own netdev's, or its ESXi host's VF uplink."""
    from roce_wizard.lab.guest.state import _vf_backing  # lazy: lab/guest imports this module

    if guest.vm is None:
        peer = (guest.name, guest.roce_netdev)
    else:
        backing = _vf_backing(world, guest)
        if backing is None:
            return None
        peer = (backing[0].name, backing[1].name)
    for sw in world.switches.values():
        for p in sw.ports:
            if p.peer == peer:
                return sw, p
    return None


def count_stream(world: World, sender: Guest, receiver: Guest, nbytes: int, pkts: int, dscp: int, mode: str,
                 streams: int) -> None:
    """RoCE packets from sender to receiver through the switch; `mode` is how the receiver's link treats their
    priority ("pfc", "pfc-overrun", "pause", "lossy"); `streams` > 1 is an incast (congestion)."""
    into, out_of = uplink(world, receiver), uplink(world, sender)
    if into is None:
        return
    sw, port = into
    tc = switch_priority(sw, port.name, dscp)
    tc = 0 if tc is None else tc
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
        if port.name in sw.__dict__.get("lab_short_queue", ()):  # fault RW609: the queue overflows anyway
            c["drop_pkts"][tc] += 37 * streams
            c["drop_octets"][tc] += 37 * streams * 1100
        if out_of is not None:
            s = port_counters(*out_of)
            s["tx_pause"][tc] += 400 * streams  # and the switch pauses the senders
            s["tx_pause_us"][tc] += 1200 * streams


# ---------------------------------------------------------------------------- vendor views


def render_eos_queue(switch: Switch) -> str:
    """`show interfaces counters queue detail` (the egress section, as the real capture shows it)."""
    out = ["Egress Queue Counters",
           "Port               Traffic   DropPrec   DestType        OutEnqPkts      OutEnqOctets       OutDropPkts     "
           "OutDropOctets",
           "                    Class"]
    for p in switch.ports:
        c = port_counters(switch, p)
        for tc in range(8):
            out.append(f"{eos_short(p):<14}{'TC' + str(tc):>9}{'DP0-3':>11}{'UC':>11}{c['enq_pkts'][tc]:>18}"
                       f"{c['enq_octets'][tc]:>18}{c['drop_pkts'][tc]:>18}{c['drop_octets'][tc]:>18}")
    return "\n".join(out)


def _size(n: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n} Bytes"


def render_nvue_roce_counters(world: World, switch: Switch, port: SwitchPort) -> str:
    """`nv show interface <swp> qos roce counters` (layout of the Cumulus Linux 5.14 capture)."""
    c = port_counters(switch, port)
    roce = int(world.policy.get("pfc_priority", 3))
    rows: list[tuple[str, str, str]] = [
        ("rx-stats", "", ""), ("  rx-non-roce-stats", "", ""),
        ("    buffer-max-usage", "0 Bytes", "Max Ingress Pool-buffer usage for non-RoCE traffic"),
        ("    buffer-usage", "0 Bytes", "Current Ingress Pool-buffer usage for non-RoCE traffic"),
        ("    no-buffer-discard", "0", "Rx buffer discards for non-RoCE traffic"),
        ("    non-roce-bytes", "0 Bytes", "non-roce rx bytes"), ("    non-roce-packets", "0", "non-roce rx packets"),
        ("    pg-max-usage", "0 Bytes", "Max PG-buffer usage for non-RoCE traffic"),
        ("    pg-usage", "0 Bytes", "Current PG-buffer usage for non-RoCE traffic"),
        ("  rx-pfc-stats", "", ""),
        ("    pause-duration", str(c["rx_pause_us"][roce]), "Rx PFC pause duration for RoCE traffic"),
        ("    pause-packets", str(c["rx_pause"][roce]), "Rx PFC pause packets for RoCE traffic"),
        ("  rx-roce-stats", "", ""),
        ("    buffer-max-usage", "0 Bytes", "Max Ingress Pool-buffer usage for RoCE traffic"),
        ("    buffer-usage", "0 Bytes", "Current Ingress Pool-buffer usage for RoCE traffic"),
        ("    no-buffer-discard", "0", "Rx buffer discards for RoCE traffic"),
        ("    pg-max-usage", "0 Bytes", "Max PG-buffer usage for RoCE traffic"),
        ("    pg-usage", "0 Bytes", "Current PG-buffer usage for RoCE traffic"),
        ("    roce-bytes", "0 Bytes", "Rx RoCE Bytes"), ("    roce-packets", "0", "Rx RoCE Packets"),
        ("tx-stats", "", ""), ("  tx-cnp-stats", "", ""),
        ("    buffer-max-usage", "0 Bytes", "Max Egress Pool-buffer usage for CNP traffic"),
        ("    buffer-usage", "0 Bytes", "Current Egress Pool-buffer usage for CNP traffic"),
        ("    cnp-bytes", "0 Bytes", "Tx CNP Packet Bytes"), ("    cnp-packets", "0", "Tx CNP Packets"),
        ("    tc-max-usage", "0 Bytes", "Max TC-buffer usage for CNP traffic"),
        ("    tc-usage", "0 Bytes", "Current TC-buffer usage for CNP traffic"),
        ("    unicast-no-buffer-discard", "0", "Tx buffer discards for CNP traffic"),
        ("  tx-ecn-stats", "", ""), ("    ecn-marked-packets", "0", "Tx ECN marked packets"),
        ("  tx-pfc-stats", "", ""),
        ("    pause-duration", str(c["tx_pause_us"][roce]), "Tx PFC pause duration for RoCE traffic"),
        ("    pause-packets", str(c["tx_pause"][roce]), "Tx PFC pause packets for RoCE traffic"),
        ("  tx-roce-stats", "", ""),
        ("    buffer-max-usage", "0 Bytes", "Max Egress Pool-buffer usage for RoCE traffic"),
        ("    buffer-usage", "0 Bytes", "Current Egress Pool-buffer usage for RoCE traffic"),
        ("    roce-bytes", _size(c["enq_octets"][roce]), "Tx RoCE Packet bytes"),
        ("    roce-packets", str(c["enq_pkts"][roce]), "Tx RoCE Packets"),
        ("    tc-max-usage", "0 Bytes", "Max TC-buffer usage for RoCE traffic"),
        ("    tc-usage", "0 Bytes", "Current TC-buffer usage for RoCE traffic"),
        ("    unicast-no-buffer-discard", str(c["drop_pkts"][roce]), "Tx buffer discards for RoCE traffic"),
    ]
    out = [f"{'':<31}operational   applied  description",
           "-----------------------------  ------------  -------  ------------------------------------------------------"]
    for name, oper, desc in rows:
        out.append(f"{name:<29}  {oper:<12}  {'':<7}  {desc}".rstrip() if oper or desc else name)
    return "\n".join(out)


# ---------------------------------------------------------------------------- fault


def _rw609(world: World, target: str) -> None:
    from roce_wizard.lab.switch.faults import fault_port  # lazy: faults imports the switch package's helpers

    sw = world.switches[target]
    _reconcile(world, sw)
    sw.__dict__.setdefault("lab_short_queue", set()).add(fault_port(world, sw).name)
    sw.faults.add("RW609")


VALIDATE_FAULTS: dict[str, Fault] = {f.code: f for f in (
    Fault("RW609", "switch", "the RoCE queue of the switch port towards one node has too short a buffer limit: "
                             "under incast it drops on the lossless queue although PFC pauses flow", _rw609),
)}
