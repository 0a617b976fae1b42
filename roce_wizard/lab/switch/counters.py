"""Switch port counters of the lab (lab/fabric.py: moved by the world's traffic, perftest and incast between
nodes) as the vendor views show them, in their real formats (only views with a real capture; see tests/data/README-issue15.md):

- EOS `show interfaces counters queue detail`: the egress queue table of the real capture
  tests/data/corpus/eos_queue_counters/ (networktocode/ntc-templates), one row per port and traffic class.
- NVUE `nv show interface <swp> qos roce counters`: the table of the real capture
  tests/data/corpus/cumulus_nv_show_qos_roce/cl514-… (Cumulus Linux 5.14 User Guide).
Onyx and OS10 per-priority counter views have no real capture: the lab does not invent them.

The RW609 fault (a short queue limit on one port) is defined here, with the switch faults' helpers.
"""

from __future__ import annotations

from roce_wizard.lab.fabric import SHORT_QUEUE, port_counters
from roce_wizard.lab.faults import Fault
from roce_wizard.lab.switch.common import _reconcile, eos_short
from roce_wizard.lab.switch.faults import fault_port
from roce_wizard.lab.world import Switch, SwitchPort, World

# ---------------------------------------------------------------------------- vendor views


def render_eos_queue(switch: Switch) -> str:
    """`show interfaces counters queue detail` (the egress section, as the real capture shows it)."""
    out = ["Egress Queue Counters",
           ("Port               Traffic   DropPrec   DestType        OutEnqPkts      OutEnqOctets       OutDropPkts     "
            "OutDropOctets"),
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
        ("  tx-ecn-stats", "", ""),
        ("    ecn-marked-packets", str(c["ecn_marked"][roce]), "Tx ECN marked packets"),
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
    sw = world.switches[target]
    _reconcile(world, sw)
    sw.__dict__.setdefault(SHORT_QUEUE, set()).add(fault_port(world, sw).name)
    sw.faults.add("RW609")


VALIDATE_FAULTS: dict[str, Fault] = {f.code: f for f in (
    Fault("RW609", "switch", "the RoCE queue of the switch port towards one node has too short a buffer limit: "
                             "under incast it drops on the lossless queue although PFC pauses flow", _rw609),
)}
