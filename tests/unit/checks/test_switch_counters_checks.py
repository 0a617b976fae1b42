"""RW609 switch-counters-clean on real vendor outputs, read the way the `switch_counters` pair probe reads them.

Before/after pairs: a real capture as the "after" reading and the same capture with the counters that moved
set back (what the switch said before) — only counts change, the format stays the real one. The lab's own
renderings (lab/switch/counters.py) are checked against the same parsers after a lab incast.
"""

from __future__ import annotations

import re

import pytest

from roce_wizard.lab import guest as G
from roce_wizard.lab import scenarios, shell
from roce_wizard.lab.proto import Ctx
from roce_wizard.lab.switch.counters import render_eos_queue, render_nvue_roce_counters
from roce_wizard.model import Policy, RoceSpec, Status, Target, TargetKind
from roce_wizard.probes.pairs import Node, Pair, PairNodes
from roce_wizard.probes.pairs_switch import SWITCH_COUNTERS, port_key
from tests.checkcases import Case, run_case
from tests.conftest import corpus_text

PASS, FAIL, SKIP = Status.PASS, Status.FAIL, Status.SKIP
EOS_REAL = corpus_text("eos_queue_counters/ntc-templates-eos-queue-detail-egress-tc7-drops.txt")
NVUE_REAL = corpus_text("cumulus_nv_show_qos_roce/cl514-interface-swp16-roce-counters-tx-discards.txt")
SONIC_REAL = corpus_text("sonic_show_pfc/lossless-pg-triage-uc3-drops-zero-pfc.txt")


def _section(text: str, head: str) -> str:
    """One command's output out of the triage paste (`# show queue counters` … up to the next `# `)."""
    part = text.split(f"# {head}\n", 1)[1]
    return part.split("\n# ", 1)[0]


SONIC_QUEUE, SONIC_PFC = _section(SONIC_REAL, "show queue counters"), _section(SONIC_REAL, "show pfc counters")


def _node(name: str, ports: tuple[str, ...]) -> Node:
    t = Target(name=name, kind=TargetKind.LINUX, address="127.0.0.1",
               roce=RoceSpec(netdev="ens1f0", ip="192.168.100.11/24", switch_ports=ports))
    return Node(t, None)  # type: ignore[arg-type]


def _measure(device_type: str, ports: tuple[str, str], before: dict[str, str], after: dict[str, str],
             policy: Policy | None = None) -> dict:
    """Run the pair probe's command builder and parser over the given readings (step name -> text)."""
    sw = Target(name="leaf-1", kind=TargetKind.SWITCH, address="127.0.0.1", device_type=device_type)
    a, b = _node("node-a", (f"leaf-1:{ports[0]}",)), _node("node-b", (f"leaf-1:{ports[1]}",))
    nodes = PairNodes(Pair(a.target, b.target, 0), a, b, targets={"leaf-1": sw})
    policy = policy or Policy()
    steps = SWITCH_COUNTERS.command(nodes, policy) or []
    outputs = {}
    for s in steps:
        name = s.key.split(f".{s.phase}.", 1)[1]
        outputs[s.key] = (0, (before if s.phase == "before" else after).get(name, ""))  # a view not given: empty
    facts = SWITCH_COUNTERS.parser(nodes, policy, outputs)
    facts["validate_pair"] = {"pair": "node-a<->node-b", "sender": "node-a", "receiver": "node-b",
                              "nodes": [{"node": "node-a", "problems": []}, {"node": "node-b", "problems": []}]}
    return facts


def _zero_drops(text: str) -> str:
    """The EOS capture as it read before its drops: every OutDropPkts/Octets of 1/110 set back to 0."""
    return re.sub(r"(\s+)1(\s+)110$", r"\g<1>0\g<2>  0", text, flags=re.MULTILINE)


EOS_TC7 = Policy(pfc_priority=7)  # the capture's traffic is on TC7
CASES = [
    Case("RW609", "eos-real-no-drop-on-the-measured-ports", PASS, policy=EOS_TC7, summary_has="not read",
         facts=_measure("arista_eos", ("Et3/1/1", "Et3/2/1"), {"queue": EOS_REAL}, {"queue": EOS_REAL}, EOS_TC7)),
    Case("RW609", "eos-real-drop-on-the-lossless-queue", FAIL, policy=EOS_TC7, summary_has="Et4/2/1 dropped 1",
         facts=_measure("arista_eos", ("Et3/1/1", "Et4/2/1"), {"queue": _zero_drops(EOS_REAL)}, {"queue": EOS_REAL},
                        EOS_TC7)),
    Case("RW609", "nvue-real-roce-discards", FAIL, summary_has="dropped 663060754115",
         facts=_measure("cumulus_nvue", ("swp15", "swp16"),
                        {"roce.swp15": NVUE_REAL, "roce.swp16": NVUE_REAL.replace("663060754115", "0".ljust(12))},
                        {"roce.swp15": NVUE_REAL, "roce.swp16": NVUE_REAL})),
    Case("RW609", "nvue-real-unchanged", PASS, summary_has="RoCE pause frames",
         facts=_measure("cumulus_nvue", ("swp15", "swp16"), {"roce.swp15": NVUE_REAL, "roce.swp16": NVUE_REAL},
                        {"roce.swp15": NVUE_REAL, "roce.swp16": NVUE_REAL})),
    Case("RW609", "sonic-real-uc3-drops-without-pause", FAIL, summary_has="Ethernet4 dropped 91786",
         facts=_measure("sonic", ("Ethernet120", "Ethernet4"),
                        {"pfc": SONIC_PFC, "queue": SONIC_QUEUE.replace("91786", "0")},
                        {"pfc": SONIC_PFC, "queue": SONIC_QUEUE})),
    Case("RW609", "onyx-not-read-yet", SKIP, summary_has="not read yet",
         facts=_measure("mellanox_mlnxos", ("Eth1/1", "Eth1/2"), {}, {})),
    Case("RW609", "os10-not-read-yet", SKIP, summary_has="not read yet",
         facts=_measure("dell_os10", ("ethernet1/1/1", "ethernet1/1/2"), {}, {})),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rw609_cases(case):
    findings = run_case(case)
    assert all(f.target == "leaf-1" for f in findings)  # the switch's finding, not the node's


def test_sonic_pause_on_another_priority_fails():
    moved = SONIC_PFC.replace("  Ethernet4       0       0       0       0       0",
                              "  Ethernet4       0       0       0       0      52", 1)  # rx PFC4 on Ethernet4
    facts = _measure("sonic", ("Ethernet120", "Ethernet4"), {"pfc": SONIC_PFC, "queue": SONIC_QUEUE},
                     {"pfc": moved, "queue": SONIC_QUEUE})
    (f,) = run_case(Case("RW609", "sonic-pause-prio4", FAIL, facts=facts))
    assert "pause frames on priority 4 (rx +52" in f.summary


def test_eos_port_names_join_the_inventory_spelling():
    assert port_key("Ethernet1/1") == port_key("Et1/1") == "et1/1"


def test_no_switch_command_for_a_port_name_with_cli_characters():
    facts = _measure("cumulus_nvue", ("swp1; nv config apply", "swp2"), {"roce.swp2": NVUE_REAL},
                     {"roce.swp2": NVUE_REAL})
    (entry,) = facts["validate_switch_counters"]["switches"]
    assert "not safe" in entry["not_read"]


def _sh(world, name: str, line: str) -> str:
    ctx = Ctx(world=world, target=name, files=G.files(world, name), env={})
    reply = shell.run(line, ctx, G.programs(world, name),
                      write_file=lambda p, c: G.write_file(world, name, p, c), esxi=False)
    return reply.stdout + reply.stderr


def _incast(world) -> None:
    """Four ib_write_bw streams from compute-01 into compute-02 on the RoCE class (as the incast probe runs them)."""
    for p in range(4):
        _sh(world, "compute-02", f"ib_write_bw -D 5 -s 65536 --tclass=106 -d mlx5_0 -x 3 -p {18700 + p} &")
    for p in range(4):
        _sh(world, "compute-01", f"ib_write_bw -D 5 -s 65536 --tclass=106 -d mlx5_0 -x 3 -p {18700 + p} "
                                 "192.168.100.12")


@pytest.mark.parametrize("fault", [None, "RW609"])
def test_lab_switch_counts_incast_in_the_real_eos_format(fault):
    from roce_wizard.lab.switch.counters import VALIDATE_FAULTS
    from roce_wizard.parsers import PARSERS

    world = scenarios.healthy(2)
    sw = next(iter(world.switches.values()))
    if fault:
        VALIDATE_FAULTS[fault].apply(world, sw.name)
    before = PARSERS["eos_queue_counters"].parse(render_eos_queue(sw))
    _incast(world)
    after = PARSERS["eos_queue_counters"].parse(render_eos_queue(sw))
    moved = {p: {tc: q["enq_pkts"] - before["ports"][p][tc]["enq_pkts"] for tc, q in tcs.items()}
             for p, tcs in after["ports"].items()}
    drops = {p: {tc: q["drop_pkts"] - before["ports"][p][tc]["drop_pkts"] for tc, q in tcs.items() if
                 q["drop_pkts"] - before["ports"][p][tc]["drop_pkts"]} for p, tcs in after["ports"].items()}
    assert any(v[3] > 0 for v in moved.values()), moved  # RoCE (DSCP 26) enqueued on TC3 towards the receiver
    assert (drops == {p: {} for p in drops}) is (fault is None), drops
    nv = PARSERS["nvue_qos_roce"].parse(render_nvue_roce_counters(world, sw, sw.ports[0]))
    assert "tx-stats.tx-pfc-stats.pause-packets" in nv["counters"]
