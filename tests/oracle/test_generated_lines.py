"""Every command line roce-wizard generates for Linux guests and bare-metal hosts, through the real binary's
option parser (issue 12, item 3a): the guest probes, the guest fixes (plan_fix steps of checks/guest on each
lab fault), and the validate stage's perftest, ucx_info and mpirun lines.

The lines are collected as the tool sends them: the engine runs against the lab world in process (the same
shell the lab's sshd runs), and each program the lab's shell starts is recorded with the argv a real shell
would pass it (after `for`, `$p`, `timeout`/`nohup`) before the lab answers. Then the same argv goes to the
real binary (tests/oracle/real.py says how each one's answer is judged, and what replaces the cluster).
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Callable

import pytest

from roce_wizard.engine import run_checks
from roce_wizard.lab import faults as lab_faults
from roce_wizard.lab import guest as lab_guest
from roce_wizard.lab import scenarios
from roce_wizard.lab.world import World
from roce_wizard.model import MissingFact, Policy, Safety, Stage
from tests.fixkit import CATALOG, WorldTransport, plan_for, run_line, target_for
from tests.oracle import real

Recorded = list[tuple[str, list[str]]]  # (target, argv)


@pytest.fixture(scope="module")
def recorder():
    """Record every oracle program the lab's shell runs on a guest (lab_guest.programs wrapped)."""
    seen: Recorded = []
    original = lab_guest.programs

    def wrap(fn: Callable, target: str) -> Callable:
        def recording(ctx, argv):  # noqa: ANN001, ANN202
            seen.append((target, list(argv)))
            return fn(ctx, argv)
        return recording

    def programs(world: World, name: str):  # noqa: ANN202
        table = original(world, name)
        return {k: wrap(v, name) if k.rsplit("/", 1)[-1] in real.PACKAGE else v for k, v in table.items()}

    mp = pytest.MonkeyPatch()
    mp.setattr(lab_guest, "programs", programs)
    yield seen
    mp.undo()


def _world() -> World:
    world = scenarios.healthy()
    lab_guest.add_baremetal(world, 2)
    return world


def _nodes(world: World) -> list[str]:
    return list(world.guests)


def _netdevs(world: World) -> list[str]:
    return sorted({i.name for g in world.guests.values() for i in g.interfaces})


def _taken(recorder: Recorded, action: Callable[[], object]) -> Recorded:
    start = len(recorder)
    action()
    return recorder[start:]


def _judge(lines: Recorded, netdevs: list[str]) -> tuple[list[str], set[str]]:
    refused, tools, done = [], set(), set()
    rdma_why_not = real._rdma_usable()
    for _target, argv in lines:
        key = tuple(argv)
        if key in done or (argv[0] == "rdma" and rdma_why_not):  # test_rdma_probe_lines says why
            continue
        done.add(key)
        tools.add(argv[0].rsplit("/", 1)[-1])
        answer = real.run(argv, netdevs)
        if not answer.accepted:
            refused.append(answer.why())
    return refused, tools


def _probe_lines(recorder: Recorded) -> tuple[World, Recorded]:
    world = _world()
    checks = {c: v for c, v in CATALOG.items() if v.meta.stage is not Stage.VALIDATE}

    def gather() -> None:
        for name in _nodes(world):
            target = target_for(world, name)
            mine = {c: v for c, v in checks.items() if target.kind in v.meta.target_kinds}
            asyncio.run(run_checks([target], mine, WorldTransport(world), Policy()))

    return world, _taken(recorder, gather)


def test_guest_and_baremetal_probes_pass_the_real_parsers(recorder):
    world, lines = _probe_lines(recorder)
    refused, tools = _judge(lines, _netdevs(world))
    assert {"ibv_devinfo", "ip", "ethtool"} <= tools, tools
    assert refused == []


def test_rdma_probe_lines_pass_the_real_parser(recorder):
    """`rdma link show`: a separate test, since `rdma` can only judge where the kernel has RDMA netlink."""
    world, lines = _probe_lines(recorder)
    rdma = [(t, a) for t, a in lines if a[0] == "rdma"]
    assert rdma
    answers = [real.run(argv, _netdevs(world)) for argv in {tuple(a): a for _t, a in rdma}.values()]
    assert [a.why() for a in answers if not a.accepted] == []


def test_guest_fix_steps_pass_the_real_parsers(recorder):
    """plan_fix of every guest/bare-metal check on its lab fault; each non-manual step run through the lab's
    shell (which records the binaries it starts), then those argv through the real binaries."""
    registry = lab_faults.registry()
    lines: Recorded = []
    planned = 0
    for fault in registry.values():
        if fault.kind not in ("guest", "linux") or not fault.code.startswith("RW4") \
                or CATALOG[fault.code].plan_fix is None:
            continue
        world = _world()
        target = lab_faults.inject(world, fault.code)[1]
        try:
            plan = plan_for(world, target, fault.code)
        except MissingFact:  # RW412 needs the card's PCI address, which fixkit's target does not carry (mlxconfig
            continue  # is not packaged by Debian: no oracle for its lines anyway)
        if plan is None or plan.safety is Safety.MANUAL:
            continue
        planned += 1
        for step in plan.steps:
            lines += _taken(recorder, lambda step=step: run_line(world, target, step.command))
    assert planned >= 4, "the lab's guest faults should give several runnable fix plans"
    refused, tools = _judge(lines, _netdevs(_world()))
    assert "ip" in tools, tools
    assert refused == []


def test_validate_stage_lines_pass_the_real_parsers(recorder):
    """The healthy pair's validate stage (RW601-RW606): perftest servers and clients, the incast streams,
    ucx_info and the mpirun line, each as the node's shell received it."""
    world = _world()
    targets = [target_for(world, n) for n in _nodes(world)]  # a guest pair and a bare-metal pair
    checks = {c: v for c, v in CATALOG.items() if v.meta.stage is Stage.VALIDATE}

    printed: list[str] = []

    def measure() -> None:
        report = asyncio.run(run_checks(targets, checks, WorldTransport(world), Policy()))
        failing = [f for f in report.findings if f.check.startswith("RW6") and f.status.value in ("fail", "error", "warn")]
        assert failing == [], [(f.check, f.summary) for f in failing]
        printed.extend(f.details["mpirun"] for f in report.findings if f.check == "RW604" and "mpirun" in f.details)

    lines = _taken(recorder, measure)
    assert printed, "RW604 prints a ready mpirun line for the user's jobs"
    lines += [("printed by RW604", shlex.split(line)) for line in printed]  # shown for pasting: it must run too
    refused, tools = _judge(lines, _netdevs(world))
    assert {"ib_send_bw", "ib_send_lat", "ib_write_bw", "mpirun"} <= tools, tools
    assert refused == []
    assert any("--tclass=106" in argv for _t, argv in lines)  # the lossless class, DSCP 26 with ECT(0)
