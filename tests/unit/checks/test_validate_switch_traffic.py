"""RW607/RW608 in a VF pair, judged through the switch, on real vendor counter formats.

The switch readings go through the `switch_counters` pair probe's own command builder and parser (the readings
RW609 judges, shared): the "after" reading is a real capture, the "before" the same capture with the counters
that moved set back (only counts change; the format stays the real one). The VFs show no per-priority counters
(they belong to the port): their deltas hold only vport RDMA and hw_counters names, as a VF's `ethtool -S` and
hw_counters do.
Real captures: EOS `show interfaces counters queue detail` (networktocode/ntc-templates), NVUE `nv show interface
<swp> qos roce counters` (Cumulus Linux 5.14 User Guide), SONiC `show queue counters` (a SONiC triage note:
tests/data/corpus/sonic_show_pfc/). EOS `show qos maps`: no real capture was found; the parser's seed in
tests/data/parser_seeds/eos_qos_maps/ (hand-written in the format the lab renders) gives the CoS -> TC map.
"""

from __future__ import annotations

import re
from pathlib import Path

from roce_wizard.model import Policy, RoceSpec, Status, Target, TargetKind
from roce_wizard.probes.pairs import Node, Pair, PairNodes
from roce_wizard.probes.pairs_switch import SWITCH_COUNTERS
from tests.checkcases import Case, run_case
from tests.conftest import corpus_text

EOS_REAL = corpus_text("eos_queue_counters/ntc-templates-eos-queue-detail-egress-tc7-drops.txt")
NVUE_REAL = corpus_text("cumulus_nv_show_qos_roce/cl514-interface-swp16-roce-counters-tx-discards.txt")
SONIC_REAL = corpus_text("sonic_show_pfc/lossless-pg-triage-uc3-drops-zero-pfc.txt")
EOS_MAPS = (Path(__file__).resolve().parents[2] / "data" / "parser_seeds" / "eos_qos_maps"
            / "test-fixture-4483f623a3.txt").read_text()
SONIC_QUEUE = SONIC_REAL.split("# show queue counters\n", 1)[1].split("\n# ", 1)[0]
SONIC_PFC = SONIC_REAL.split("# show pfc counters\n", 1)[1].split("\n# ", 1)[0]


def _node(name: str, ports: tuple[str, ...]) -> Node:
    t = Target(name=name, kind=TargetKind.GUEST, address="127.0.0.1",
               roce=RoceSpec(netdev="ens224", ip="192.168.100.21/24", switch_ports=ports))
    return Node(t, None)  # type: ignore[arg-type]


def _facts(device_type: str, ports: tuple[str, str], before: dict[str, str], after: dict[str, str], policy: Policy,
           into_b: int, into_a: int, unit: str = "bytes", incast: list[dict] | None = None) -> dict:
    """A VF pair node-a -> node-b: the switch probe over the readings, the VFs' RoCE counters (into each node)."""
    sw = Target(name="leaf-1", kind=TargetKind.SWITCH, address="127.0.0.1", device_type=device_type)
    a, b = _node("node-a", (f"leaf-1:{ports[0]}",)), _node("node-b", (f"leaf-1:{ports[1]}",))
    nodes = PairNodes(Pair(a.target, b.target, 0), a, b, targets={"leaf-1": sw})
    outputs = {}
    for s in SWITCH_COUNTERS.command(nodes, policy) or []:
        name = s.key.split(f".{s.phase}.", 1)[1]
        outputs[s.key] = (0, (before if s.phase == "before" else after).get(name, ""))
    facts = SWITCH_COUNTERS.parser(nodes, policy, outputs)
    key = f"rx_vport_rdma_unicast_{unit}"
    facts["validate_pair"] = {"pair": "node-a<->node-b", "sender": "node-a", "receiver": "node-b",
                              "nodes": [{"node": "node-a", "problems": []}, {"node": "node-b", "problems": []}]}
    facts["validate_traffic_perftest_bw"] = {"label": "ib_send_bw", "sender": {key: into_a, "tx_vport_rdma_unicast_bytes": 1},
                                             "receiver": {key: into_b}}
    facts["validate_incast"] = {"sender": "node-a", "receiver": "node-b", "steps": incast or [], "pfc_visible": False}
    return facts


def _zero(text: str, ports: tuple[str, ...]) -> str:
    """The EOS capture as it read before: these ports' rows with every count at 0."""
    out = []
    for line in text.splitlines():
        if line.split()[:1] and line.split()[0] in ports:
            line = re.sub(r"\d+(\s+\d+){3}$", lambda m: re.sub(r"\d", "0", m.group(0)), line)
        out.append(line)
    return "\n".join(out)


EOS_PORTS = ("Et3/1/1", "Et3/9/1")  # Et3/9/1 queued 238170896 octets on TC7, Et3/1/1 72078388 (and TC1 traffic)
EOS_BEFORE = {"queue": _zero(EOS_REAL, EOS_PORTS), "maps": EOS_MAPS}
EOS_AFTER = {"queue": EOS_REAL}
P7, P3 = Policy(pfc_priority=7), Policy(pfc_priority=3)  # the seed map: CoS 7 -> TC7, CoS 3 -> TC3


def test_eos_vf_pair_on_the_lossless_tc_passes():
    facts = _facts("arista_eos", EOS_PORTS, EOS_BEFORE, EOS_AFTER, P7, into_b=238170896, into_a=72078388)
    (f,) = run_case(Case("RW607", "eos-real-tc7", Status.PASS, facts=facts, policy=P7))
    assert "into node-b 100% on TC7" in f.summary and "into node-a 100% on TC7" in f.summary, f.summary


def test_eos_vf_pair_on_another_tc_fails_on_the_sender():
    facts = _facts("arista_eos", EOS_PORTS, EOS_BEFORE, EOS_AFTER, P3, into_b=238170896, into_a=72078388)
    (f,) = run_case(Case("RW607", "eos-real-tc7-not-tc3", Status.FAIL, facts=facts, policy=P3))
    assert f.target == "node-a", f.target  # bytes into node-b on the wrong class: node-a sent them
    assert "from node-a crossed the switch on TC7, not TC3" in f.summary and "Et3/1/1" in f.summary, f.summary


def test_eos_without_its_cos_map_is_not_judged():
    facts = _facts("arista_eos", EOS_PORTS, {"queue": EOS_BEFORE["queue"]}, EOS_AFTER, P7, 238170896, 72078388)
    (f,) = run_case(Case("RW607", "eos-no-map", Status.SKIP, facts=facts, policy=P7))
    assert "show qos maps" in f.summary, f.summary


SONIC_MOVED = SONIC_QUEUE.replace("852072", "5852072")  # 5,000,000 more bytes out of Ethernet4's UC3


def test_sonic_vf_pair_judged_per_unicast_queue():
    before, after = {"pfc": SONIC_PFC, "queue": SONIC_QUEUE}, {"pfc": SONIC_PFC, "queue": SONIC_MOVED}
    ok = _facts("sonic", ("Ethernet120", "Ethernet4"), before, after, P3, into_b=5_000_000, into_a=0)
    (f,) = run_case(Case("RW607", "sonic-uc3", Status.PASS, facts=ok, policy=P3))
    assert "into node-b 100% on UC3" in f.summary, f.summary
    p4 = Policy(pfc_priority=4)
    bad = _facts("sonic", ("Ethernet120", "Ethernet4"), before, after, p4, into_b=5_000_000, into_a=0)
    (f,) = run_case(Case("RW607", "sonic-uc3-not-uc4", Status.FAIL, facts=bad, policy=p4))
    assert f.target == "node-a" and "on UC3, not UC4" in f.summary, f.summary


def _nvue(packets: int, ecn: int = 693777677344, pause: int = 0) -> str:
    return (NVUE_REAL.replace("803785675319", str(packets))
            .replace("693777677344", str(ecn))
            .replace("    pause-packets              0                      Rx",
                     f"    pause-packets              {pause:<23}Rx"))


def test_nvue_vf_pair_counts_roce_packets_on_the_roce_queue():
    before = {"roce.swp15": _nvue(1000), "roce.swp16": _nvue(1000)}
    after = {"roce.swp15": _nvue(1000 + 40_000), "roce.swp16": _nvue(1000 + 900_000)}
    facts = _facts("cumulus_nvue", ("swp15", "swp16"), before, after, P3, 900_000, 40_000, unit="packets")
    (f,) = run_case(Case("RW607", "nvue-roce", Status.PASS, facts=facts, policy=P3))
    assert "on the RoCE queue" in f.summary, f.summary
    short = {"roce.swp15": _nvue(1000 + 40_000), "roce.swp16": _nvue(1000 + 1_000)}  # 1,000 of 900,000
    facts = _facts("cumulus_nvue", ("swp15", "swp16"), before, short, P3, 900_000, 40_000, unit="packets")
    (f,) = run_case(Case("RW607", "nvue-missed", Status.FAIL, facts=facts, policy=P3))
    assert f.target == "node-a" and "missed the lossless queue" in f.summary, f.summary


def _incast(marked: int | None, sent: int | None, handled: int | None) -> list[dict]:
    r = {"rx_vport_rdma_unicast_bytes": 1 << 30}
    s: dict[str, int] = {}
    for k, v, d in (("np_ecn_marked_roce_packets", marked, r), ("np_cnp_sent", sent, r), ("rp_cnp_handled", handled, s)):
        if v is not None:
            d[k] = v
    return [{"streams": 4, "size": 1048576, "gbps": 90.0, "receiver": r, "sender": s}]


def test_rw608_vf_pair_on_nvue():
    before = {"roce.swp15": _nvue(1000), "roce.swp16": _nvue(1000)}
    congested_marked = {"roce.swp15": _nvue(2000), "roce.swp16": _nvue(2000, ecn=693777677344 + 5000, pause=310)}
    congested_unmarked = {"roce.swp15": _nvue(2000), "roce.swp16": _nvue(2000, pause=310)}
    args = (("swp15", "swp16"), before)
    ok = _facts("cumulus_nvue", *args, congested_marked, P3, 0, 0, incast=_incast(5000, 5000, 5000))
    (f,) = run_case(Case("RW608", "nvue-marks-cnps", Status.PASS, facts=ok, policy=P3))
    assert "5000 ECN-marked packets on the switch" in f.summary, f.summary
    unmarked = _facts("cumulus_nvue", *args, congested_unmarked, P3, 0, 0, incast=_incast(0, 0, 0))
    (f,) = run_case(Case("RW608", "nvue-no-marks", Status.FAIL, facts=unmarked, policy=P3))
    assert f.target == "node-b" and "no ECN mark on the switch" in f.summary and "310 pause" in f.summary, f.summary
    rp_off = _facts("cumulus_nvue", *args, congested_marked, P3, 0, 0, incast=_incast(5000, 5000, 0))
    (f,) = run_case(Case("RW608", "nvue-rp-off", Status.FAIL, facts=rp_off, policy=P3))
    assert f.target == "node-a" and "rp_cnp_handled" in f.summary, f.summary
    # a VF without congestion hw_counters: the marks are judged, the CNPs are said to be unreadable
    blind = _facts("cumulus_nvue", *args, congested_marked, P3, 0, 0, incast=_incast(None, None, None))
    (f,) = run_case(Case("RW608", "nvue-vf-no-hw-counters", Status.SKIP, facts=blind, policy=P3))
    assert "CNPs went back cannot be told" in f.summary, f.summary


def test_rw608_vf_pair_on_eos_says_what_it_cannot_read():
    facts = _facts("arista_eos", EOS_PORTS, EOS_BEFORE, EOS_AFTER, P7, 0, 0, incast=_incast(0, 0, 0))
    (f,) = run_case(Case("RW608", "eos-no-ecn-column", Status.SKIP, facts=facts, policy=P7))
    assert "no ECN marks" in f.summary and "not read" in f.summary, f.summary
