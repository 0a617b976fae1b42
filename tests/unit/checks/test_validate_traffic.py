"""RW607 (RoCE on the lossless priority) and RW608 (congestion control acts) on recorded counter outputs.

Analyze cases read real captures (corpus ethtool_stats/byteps-179: every byte on priority 0; corpus
hw_counters/gpud-943). Doctor cases run the real pair probes (roce_wizard/probes/pairs.py: the exact steps,
counter reads included) against the lab's bare-metal hosts through the lab shell — `ethtool -S` in mlx5's
names, hw_counters files — and parse their outputs with the probes' own parsers, as roce_wizard/engine/pairs.py does
over SSH. Hand-made deltas cover what the lab does not (a sender whose packets leave on priority 0; a sender
whose reaction point is off; a VF that shows no counters).
"""

from __future__ import annotations

import pytest

from roce_wizard.catalog import load_catalog
from roce_wizard.lab import guest as G
from roce_wizard.lab import scenarios, shell
from roce_wizard.lab.guest.state import _gs
from roce_wizard.lab.proto import Ctx
from roce_wizard.model import Facts, Policy, Status, TargetKind
from roce_wizard.probes.pairs import NODE_PROBES, PAIR_PROBES, Pair, PairNodes
from roce_wizard.engine.pairs import describe_node, parse_rate
from roce_wizard.parsers import PARSERS
from roce_wizard.probes import PROBES
from tests.checkcases import Case, build_facts, guest, run_case
from tests.conftest import corpus_text

PASS, FAIL, SKIP = Status.PASS, Status.FAIL, Status.SKIP
CATALOG = load_catalog([])
NODES = ("node-01", "node-02")


def _world(fault: str | None = None, on: str = "node-02"):
    world = scenarios.healthy(2)
    G.add_baremetal(world, 2)
    if fault:
        G.VALIDATE_FAULTS[fault].apply(world, on)
    return world


def _sh(world, name: str, line: str) -> tuple[int, str]:
    ctx = Ctx(world=world, target=name, files=G.files(world, name), env={})
    reply = shell.run(line, ctx, G.programs(world, name),
                      write_file=lambda p, c: G.write_file(world, name, p, c), esxi=False)
    return reply.exit, reply.stdout + reply.stderr


def _node(world, name: str):
    target = guest(name, TargetKind.LINUX, netdev="ens1f0np0", ip=None)
    facts = Facts(target=target)
    for probe in NODE_PROBES:
        command = PROBES[probe].command(target, facts.data)
        facts.data[probe] = PARSERS[PROBES[probe].parser].parse(_sh(world, name, command)[1])
    node = describe_node(target, facts)
    assert not node.problems, node.problems
    node.speed_gbps = parse_rate(_sh(world, name, f"cat /sys/class/infiniband/{node.dev}/ports/1/rate")[1])
    return node


def measure(world, probes: tuple[str, ...], policy: Policy | None = None) -> dict:
    """The pair probes run like roce_wizard/engine/pairs.py runs them (their steps in order, then their parsers)."""
    policy = policy or Policy()
    a, b = (_node(world, n) for n in NODES)
    nodes = PairNodes(Pair(a.target, b.target, 0), a, b)
    data = dict(nodes.common_facts())
    for name in probes:
        probe = PAIR_PROBES[name]
        outputs = {s.key: _sh(world, a.name if s.side == "sender" else b.name, s.command)
                   for s in probe.command(nodes, policy)}
        data.update(probe.parser(nodes, policy, outputs))
    return data


ALL = ("perftest_bw", "perftest_lat", "mpi_osu", "incast")
HEALTHY = measure(_world(), ALL)
REMARKED = measure(_world("RW607"), ALL)  # the switch rewrites RoCE to DSCP 0 towards node-02
REMARKED_AT_SENDER = measure(_world("RW607", on="node-01"), ALL)  # towards the sender: the replies land on 0
ECN_LATE = measure(_world("RW608"), ("incast",))  # the queue towards node-02 pauses before it marks


def _rp_off() -> dict:
    world = _world()
    _gs(world, world.guests["node-01"])["dcqcn_rp"] = [1, 1, 1, 0, 1, 1, 1, 1]
    return measure(world, ("incast",))


def _np_off() -> dict:
    world = _world()
    _gs(world, world.guests["node-02"])["dcqcn_np"] = [0] * 8
    return measure(world, ("incast",))


def _sender_on_prio0() -> dict:
    """A sender whose RoCE leaves on priority 0 (what an application without a traffic class does): the
    healthy run's deltas with the sender's and the receiver's data moved from priority 3 to priority 0."""
    facts = {k: v for k, v in HEALTHY.items()}
    run = dict(facts["validate_traffic_perftest_bw"])
    s, r = dict(run["sender"]), dict(run["receiver"])
    for delta, d in ((s, "tx"), (r, "rx")):
        delta[f"{d}_prio0_bytes"] = delta.get(f"{d}_prio0_bytes", 0) + delta.pop(f"{d}_prio3_bytes")
        delta[f"{d}_prio3_bytes"] = 0
    facts = {k: v for k, v in facts.items() if not k.startswith("validate_traffic_")}
    facts["validate_traffic_perftest_bw"] = {**run, "sender": s, "receiver": r}
    return facts


def _vf(data: dict) -> dict:
    """The same runs as a VF guest sees them: no per-priority lines, no pause lines, no congestion counters."""
    def strip(d: dict) -> dict:
        return {k: v for k, v in d.items() if not (k.startswith(("rx_prio", "tx_prio", "np_", "rp_"))
                                                   or k.endswith("_phy"))}
    out = {}
    for k, v in data.items():
        if k.startswith("validate_traffic_"):
            v = {**v, "sender": strip(v["sender"]), "receiver": strip(v["receiver"])}
        if k == "validate_incast":
            v = {**v, "pfc_visible": False, "steps": [{**s, "sender": strip(s["sender"]), "receiver": strip(s["receiver"])} for s in v["steps"]]}
        out[k] = v
    return out


T = guest("node-02", TargetKind.LINUX)
CASES: list[Case] = [
    # RW607 analyze: a real `ethtool -S | grep prio` with every byte on priority 0 (byteps #179)
    Case("RW607", "corpus-all-on-prio0", FAIL,
         outputs={"ethtool_stats": corpus_text("ethtool_stats/byteps-179-prio-all-on-prio0.txt")},
         summary_has="priority 0"),
    Case("RW607", "corpus-no-prio-lines", SKIP,
         outputs={"ethtool_stats": corpus_text("ethtool_stats/mlx5-pause-grep-global-pause-all-zero.txt")}),
    Case("RW607", "lab-healthy", PASS, facts=HEALTHY, target=T, summary_has="priority 3 both ways"),
    Case("RW607", "lab-switch-remarks-to-receiver", FAIL, facts=REMARKED, target=T, summary_has="priority 0"),
    Case("RW607", "sender-sends-on-prio0", FAIL, facts=_sender_on_prio0(), target=T, summary_has="node-01 tx"),
    Case("RW607", "vf-sees-no-priorities", SKIP, facts=_vf(HEALTHY), target=T, summary_has="n/a"),
    # RW608
    Case("RW608", "corpus-hw-counters-snapshot", SKIP,
         outputs={"hw_counters": corpus_text("hw_counters/gpud-943-mlx5-counters-echo-header-cat-loop.txt")}),
    Case("RW608", "lab-healthy", PASS, facts=HEALTHY, target=T, summary_has="CNPs sent"),
    Case("RW608", "lab-ecn-never-marks", FAIL, facts=ECN_LATE, target=T, summary_has="np_ecn_marked_roce_packets"),
    Case("RW608", "lab-np-off", FAIL, facts=_np_off(), target=T, summary_has="np_cnp_sent"),
    Case("RW608", "lab-rp-off-on-sender", FAIL, facts=_rp_off(), target=T, summary_has="rp_cnp_handled"),
    Case("RW608", "vf-cannot-tell-congestion", SKIP, facts=_vf(HEALTHY), target=T, summary_has="n/a"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case(case: Case):
    run_case(case)


def _one(code: str, facts: dict):
    return CATALOG[code].evaluate(build_facts(Case(code, "x", PASS, facts=facts, target=T)), Policy())[0]


def test_rw607_names_the_node_whose_fault_it_is():
    assert _one("RW607", REMARKED).target == "node-02"  # arrived on 0: the receiver's path
    assert _one("RW607", _sender_on_prio0()).target == "node-01"  # left on 0: the sender
    at_sender = _one("RW607", REMARKED_AT_SENDER)  # the replies towards the sender arrive on 0
    assert at_sender.status is FAIL and at_sender.target == "node-01" and "reverse" in at_sender.summary


def test_rw607_shows_both_directions_with_numbers():
    f = _one("RW607", HEALTHY)
    seen = {(r[1], r[2], r[3]) for r in f.details["table"]["rows"]}
    assert {("node-01", "tx", "forward"), ("node-02", "rx", "forward"), ("node-02", "tx", "reverse"),
            ("node-01", "rx", "reverse")} <= seen
    assert all(r[5] > 0 for r in f.details["table"]["rows"] if r[0] == "ib_write_bw incast" and r[3] == "forward")


def test_rw608_names_the_sender_when_its_reaction_point_is_off():
    f = _one("RW608", _rp_off())
    assert f.target == "node-01" and "rp_cnp_handled" in f.summary
    assert _one("RW608", ECN_LATE).target == "node-02"


def test_counter_reads_surround_every_measurement():
    steps = [s.key for s in PAIR_PROBES["perftest_bw"].command(
        *[PairNodes(Pair(a.target, b.target, 0), a, b) for a, b in [tuple(_node(_world(), n) for n in NODES)]],
        Policy())]
    assert steps[0].endswith(".before.sysfs") and steps[-1].endswith(".after.ethtool")
    assert any("np_cnp_sent" in r for r in HEALTHY["validate_traffic_incast"]["receiver"])


def test_a_node_that_cannot_be_measured_is_the_one_named():
    """The pair finding builder names the node that lacks a device/GID, not always the receiver."""
    pair = {"pair": "node-01<->node-02", "sender": "node-01", "receiver": "node-02", "link_gbps": 100.0,
            "nodes": [{"node": "node-01", "problems": ["no RoCE v2 GID carries 192.168.101.11"]},
                      {"node": "node-02", "problems": []}]}
    for code in ("RW601", "RW605", "RW607", "RW608"):
        f = _one(code, {"validate_pair": pair})
        assert f.status is FAIL and f.target == "node-01" and "cannot measure" in f.summary, (code, f.summary)
