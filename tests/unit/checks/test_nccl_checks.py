"""RW610 nccl-uses-roce: pasted real NCCL logs (analyze) and the `nccl_allreduce` pair probe over the lab's nodes
(its steps run through the lab's shell and programs, its outputs read by the real nccl_log parser)."""

from __future__ import annotations

import shlex

import pytest

from roce_wizard.lab import guest as G
from roce_wizard.lab import scenarios, shell
from roce_wizard.lab.guest import nccl as lab_nccl
from roce_wizard.lab.proto import Ctx
from roce_wizard.model import Policy, RoceSpec, Status, Target, TargetKind
from roce_wizard.probes.pairs import Pair, PairNodes
from roce_wizard.probes.pairs_nccl import NCCL_ALLREDUCE
from roce_wizard.engine.pairs import describe_node
from roce_wizard.parsers import PARSERS
from tests.checkcases import Case, run_case

PASS, FAIL, SKIP = Status.PASS, Status.FAIL, Status.SKIP


def _sh(world, name: str, line: str) -> tuple[int, str]:
    ctx = Ctx(world=world, target=name, files=G.files(world, name), env={})
    reply = shell.run(line, ctx, G.programs(world, name),
                      write_file=lambda p, c: G.write_file(world, name, p, c), esxi=False)
    return reply.exit, reply.stdout + reply.stderr


def _target(world, name: str) -> Target:
    g = world.guests[name]
    ip = next(i.ipv4[0] for i in g.interfaces if i.name == g.roce_netdev)
    return Target(name=name, kind=TargetKind.GUEST, address="127.0.0.1", host=None, vm=name,
                  roce=RoceSpec(netdev=g.roce_netdev, ip=ip))


def _facts_of(world, name: str) -> dict:
    from roce_wizard.model import Facts

    data = {}
    for kind, line in (("ibv_devinfo", "ibv_devinfo"), ("show_gids", "show_gids"), ("ip_json", "ip -j addr show"),
                       ("ibdev2netdev", "ibdev2netdev")):
        data[kind] = PARSERS[kind].parse(_sh(world, name, line)[1])
    return Facts(data=data, target=_target(world, name))


def _measure(world) -> dict:
    """The pair probe's steps on the lab (sender compute-01, receiver compute-02), then its parser."""
    a, b = (describe_node(_target(world, n), _facts_of(world, n)) for n in ("compute-01", "compute-02"))
    nodes = PairNodes(Pair(a.target, b.target, 0), a, b)
    policy = Policy()
    outputs = {}
    for step in NCCL_ALLREDUCE.command(nodes, policy) or []:
        outputs[step.key] = _sh(world, a.name if step.side == "sender" else b.name, step.command)
    facts = NCCL_ALLREDUCE.parser(nodes, policy, outputs)
    facts.update(nodes.common_facts())
    return facts


def _world(nccl: bool, conf: str | None = None):
    world = scenarios.healthy(2)
    if nccl:
        for g in world.guests.values():
            lab_nccl.install(world, g)
    if conf:
        lab_nccl.VALIDATE_FAULTS["RW610"].apply(world, "compute-02")
    return world


CASES = [
    Case("RW610", "real-roce-dgxh100-net-ib", PASS, outputs={"nccl_log": "nccl_log/nccl-tests-185-roce-dgxh100-two-nodes-mlx5-10-11.txt"},
         summary_has="mlx5_10:1"),
    Case("RW610", "real-socket-no-libibverbs", FAIL, outputs={"nccl_log": "nccl_log/nccl-428-socket-no-libibverbs-two-t4.txt"},
         summary_has="NET/Socket"),
    Case("RW610", "lab-nccl-over-roce", PASS, facts=_measure(_world(True)), summary_has="busbw"),
    Case("RW610", "lab-nccl-ib-disabled-in-nccl-conf", FAIL, facts=_measure(_world(True, conf="RW610")),
         summary_has="NET/Socket on compute-01, compute-02"),
    Case("RW610", "lab-no-nccl", SKIP, facts=_measure(_world(False)), summary_has="not on both nodes"),
]


def _corpus(case: Case) -> Case:
    from tests.conftest import corpus_text

    if case.outputs:
        case.outputs = {k: corpus_text(v) for k, v in case.outputs.items()}
    return case


CASES = [_corpus(c) for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rw610_cases(case):
    run_case(case)


def test_the_run_line_carries_the_nccl_environment_and_parses_as_mpirun():
    facts = _measure(_world(True))
    line = facts["validate_nccl"]["command"]
    argv = shlex.split(line)
    for want in ("NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,NET", "NCCL_IB_HCA==mlx5_0:1", "NCCL_IB_TC=106",
                 "NCCL_SOCKET_IFNAME==ens256", "NCCL_IB_GID_INDEX=3"):
        assert want in argv, (want, line)
    assert argv[0] == "mpirun" and argv[-9:] == ["all_reduce_perf", "-b", "8", "-e", "128M", "-f", "2", "-g", "1"]
    assert facts["nccl_log"]["net"] == "IB" and facts["nccl_log"]["link_layer"] == "RoCE"


def test_a_wrong_gid_index_keeps_net_ib_and_fails_connecting():
    world = _world(True)
    out = _sh(world, "compute-01", "mpirun -np 2 --host 192.168.100.11,192.168.100.12 -x NCCL_DEBUG=INFO "
                                   "-x NCCL_IB_GID_INDEX=0 all_reduce_perf -b 8 -e 128M -f 2 -g 1")[1]
    log = PARSERS["nccl_log"].parse(out)
    assert log["net"] == "IB" and log["failures"], log
    (f,) = run_case(Case("RW610", "gid-0", FAIL, outputs={"nccl_log": out}))
    assert "did not complete over NET/IB" in f.summary
