"""Which node a validate finding is reported on (roce_wizard/engine/pairs.py, "Whose finding it is").

Rule 1: a blocked finding goes to the node whose root cause blocks it (the first root in pair order, the
other node's root named beside it; the same root for every RW60x of the pair). Rule 2: a measured failure
goes to the node at fault when the check can tell (`checklib.pairs.at_fault`), else to the receiver.
Rule 3: the pair stays the subject. Facts are recorded pair facts (the corpus' perftest output, the
engine-made `validate_pair`); findings of earlier stages are what those stages report.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from roce_wizard.catalog import load_catalog
from roce_wizard.engine.pairs import block_on_root_causes, pair_roots
from roce_wizard.model import Facts, Finding, Policy, RoceSpec, Status, Target, TargetKind
from roce_wizard.probes.pairs import Pair
from tests.checkcases import Case, build_facts, guest
from tests.conftest import corpus_text

CATALOG = load_catalog([])
SENDER, RECEIVER = "compute-01", "compute-02"
PAIR = f"{SENDER}<->{RECEIVER}"
BW_100G = corpus_text("perftest/blog-pve-ib_write_bw-bidir-100g-cpufreq-warning.txt")  # ~98 Gb/s


def _node(name: str, speed: float = 100.0, problems: tuple[str, ...] = ()) -> dict:
    return {"node": name, "device": "mlx5_0", "port": 1, "netdev": "ens256", "ip": "192.168.100.1",
            "gid_index": 3, "speed_gbps": speed, "problems": list(problems)}


def _pair(sender: dict, receiver: dict) -> dict:
    speeds = [n["speed_gbps"] for n in (sender, receiver) if n["speed_gbps"]]
    return {"pair": PAIR, "sender": SENDER, "receiver": RECEIVER, "nodes": [sender, receiver],
            "link_gbps": min(speeds) if speeds else None}


def _judge(code: str, data: dict) -> Finding:
    facts = build_facts(Case(code, "blame", Status.FAIL, facts=data, target=guest(RECEIVER)))
    (f,) = CATALOG[code].evaluate(facts, Policy())
    return f


def _bw(sender_gbps: float, receiver_gbps: float) -> dict:
    from roce_wizard.parsers import PARSERS

    parsed = PARSERS["perftest"].parse(BW_100G)
    return {"perftest": parsed, "validate_pair": _pair(_node(SENDER, sender_gbps), _node(RECEIVER, receiver_gbps)),
            "validate_perftest": {"test": parsed.get("test"), "parsed": parsed, "client_output": BW_100G,
                                  "server_output": "", "leftover_killed": False}}


# ---------------------------------------------------------------------------- rule 2: the check can tell


def test_rw601_low_bandwidth_is_the_slower_links_node():
    f = _judge("RW601", _bw(200.0, 400.0))  # ~98 Gb/s of the 200 Gb/s the slower end (the sender) trained at
    assert f.status is Status.FAIL and f.target == SENDER and f"{SENDER}'s link is the slower" in f.summary
    # when it cannot tell (the receiver's link is the slower, or both agree): the receiver
    assert _judge("RW601", _bw(400.0, 200.0)).target == RECEIVER  # the receiver's link is the slower
    equal = _judge("RW601", _bw(200.0, 200.0))
    assert equal.status is Status.FAIL and equal.target == RECEIVER and "slower" not in equal.summary


def test_a_sender_without_a_roce_gid_is_named_by_every_check_that_reads_the_nodes():
    lacking = _pair(_node(SENDER, problems=("no RoCE v2 GID carries 192.168.100.11",)), _node(RECEIVER))
    for code in ("RW601", "RW602", "RW603", "RW604", "RW605", "RW606", "RW607", "RW608", "RW609", "RW610"):
        f = _judge(code, {"validate_pair": lacking})
        assert f.status is Status.FAIL and f.target == SENDER, (code, f.target, f.summary)


# ---------------------------------------------------------------------------- rule 1: a blocked finding


@dataclass
class Run:
    target: Target
    facts: Facts = field(default_factory=Facts)
    findings: list[Finding] = field(default_factory=list)


def _target(name: str, host: str, switch_port: str | None = None) -> Target:
    roce = RoceSpec(netdev="ens256", ip="192.168.100.11/24", switch_ports=(switch_port,) if switch_port else ())
    return Target(name=name, kind=TargetKind.GUEST, address="127.0.0.1", roce=roce, host=host, vm=name)


def _world(*broken: Finding, shared_switch: bool = False) -> tuple[Pair, list[Run]]:
    port = "leaf-01:Ethernet1" if shared_switch else None
    s, r = _target(SENDER, "esx-01", port), _target(RECEIVER, "esx-02", port)
    runs = [Run(t) for t in (s, r)] + [Run(Target(name=n, kind=TargetKind.ESXI, address="127.0.0.1"))
                                       for n in ("esx-01", "esx-02")]
    if shared_switch:
        runs.append(Run(Target(name="leaf-01", kind=TargetKind.SWITCH, address="127.0.0.1")))
    by_name = {run.target.name: run for run in runs}
    for f in broken:
        by_name[f.target].findings.append(f)
    return Pair(s, r, 0), runs


def _measured(*at_sender: str) -> list[Finding]:
    """What the pair's checks judged: a failure each, on the receiver unless the check named the sender."""
    return [Finding(code, Status.FAIL, f"{code} failed", target=SENDER if code in at_sender else RECEIVER,
                    subject=PAIR) for code in ("RW601", "RW603", "RW605", "RW607", "RW608", "RW610")]


def _block(pair: Pair, runs: list[Run], findings: list[Finding]) -> list[Finding]:
    block_on_root_causes(findings, {pair.name: pair}, runs, {c: CATALOG[c] for c in CATALOG if c.startswith("RW6")})
    return findings


def test_a_root_on_the_senders_host_is_reported_on_the_sender():
    pair, runs = _world(Finding("RW206", Status.FAIL, "SR-IOV pending a reboot", target="esx-01"))
    for f in _block(pair, runs, _measured()):
        assert (f.target, f.status, f.blocked_by, f.subject) == (SENDER, Status.SKIP, ("RW206", "esx-01"), PAIR), (
            f.check, f.target, f.summary)
        assert f.summary == "blocked by RW206 on esx-01"


def test_a_root_on_the_receiver_is_reported_on_the_receiver_whoever_the_check_named():
    pair, runs = _world(Finding("RW405", Status.FAIL, "MTU 1500", target=RECEIVER))
    for f in _block(pair, runs, _measured("RW607", "RW608")):
        assert (f.target, f.blocked_by) == (RECEIVER, ("RW405", RECEIVER)), (f.check, f.target)


def test_both_nodes_broken_one_node_one_root_for_every_check_and_both_named():
    pair, runs = _world(Finding("RW001", Status.ERROR, "refused", target="esx-02"),
                        Finding("RW206", Status.FAIL, "SR-IOV pending a reboot", target="esx-01"))
    findings = _block(pair, runs, _measured("RW607"))
    assert {(f.target, f.blocked_by) for f in findings} == {(SENDER, ("RW206", "esx-01"))}
    assert {f.summary for f in findings} == {f"blocked by RW206 on esx-01 ({SENDER}) and RW001 on esx-02 ({RECEIVER})"}


def test_a_root_both_nodes_share_is_named_once_on_the_first_node():
    pair, runs = _world(Finding("RW502", Status.FAIL, "no PFC on priority 3", target="leaf-01"), shared_switch=True)
    assert pair_roots(pair, runs) == [(SENDER, ("RW502", "leaf-01"))]
    assert {f.summary for f in _block(pair, runs, _measured())} == {"blocked by RW502 on leaf-01"}


def test_a_measured_failure_blocks_its_dependants_on_the_node_it_named():
    pair, runs = _world()  # nothing broken before the stage: RW605 depends on RW601, which named the sender
    rw601, rw605 = _block(pair, runs, [Finding("RW601", Status.FAIL, "only 40 Gb/s", target=SENDER, subject=PAIR),
                                       Finding("RW605", Status.FAIL, "incast collapses", target=RECEIVER, subject=PAIR)])
    assert (rw601.status, rw601.target) == (Status.FAIL, SENDER)
    assert (rw605.status, rw605.target, rw605.blocked_by) == (Status.SKIP, SENDER, ("RW601", SENDER))


def test_unreachable_nodes_block_the_pair_on_the_first_in_pair_order():
    pair, runs = _world()
    roots = pair_roots(pair, runs, own={RECEIVER: ("RW001", RECEIVER), SENDER: ("RW001", SENDER)})
    assert roots == [(SENDER, ("RW001", SENDER)), (RECEIVER, ("RW001", RECEIVER))]
