"""RW413-RW415's lines through the real tools' option parsers: the probes on a bare-metal host that has its card's
PCI address in the inventory (`lspci -vv -s <pci>`, which test_generated_lines' derived targets lack), `ulimit -l`
(bash's builtin), `systemctl show -p … slurmd.service`, the DCQCN probe's `grep -H .` (a builtin of the lab's shell,
so run here directly), and the fix lines of RW413 / RW414 on their lab faults (systemd's `systemctl`)."""

from __future__ import annotations

import asyncio
import dataclasses
import shlex
import subprocess

from roce_wizard.engine import run_checks
from roce_wizard.lab import faults as lab_faults
from roce_wizard.model import Policy
from roce_wizard.probes import PROBES
from tests.fixkit import CATALOG, WorldTransport, plan_for, run_line, target_for
from tests.oracle import real
from tests.oracle.test_generated_lines import _judge, _netdevs, _taken, _world, recorder  # noqa: F401 (fixture)

CODES = ("RW413", "RW414", "RW415")


def _node(world, name: str):
    t = target_for(world, name)
    return dataclasses.replace(t, roce=dataclasses.replace(t.roce, pf_pci="0000:3b:00.0"))


def test_probe_lines_pass_the_real_parsers(recorder):  # noqa: F811
    world = _world()
    checks = {c: CATALOG[c] for c in CODES}
    targets = [_node(world, "node-01"), target_for(world, "compute-01")]
    lines = _taken(recorder, lambda: asyncio.run(run_checks(targets, checks, WorldTransport(world), Policy())))
    refused, tools = _judge(lines, _netdevs(world))
    assert {"lspci", "ulimit", "systemctl"} <= tools, tools
    assert refused == []


def test_the_dcqcn_probe_line_passes_grep():
    real.need("grep")
    line = PROBES["roce_ecn_sysfs"].command(_node(_world(), "node-01"), {})
    argv = shlex.split(line)  # the globs match nothing here: grep gets them as they are, as on an inbox host
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2 and "No such file or directory" in done.stderr, done.stderr
    assert "usage" not in done.stderr.lower() and "invalid option" not in done.stderr


def test_fix_lines_pass_the_real_parsers(recorder):  # noqa: F811
    lines = []
    for code in ("RW413", "RW414"):
        world = _world()
        target = lab_faults.inject(world, code)[1]
        plan = plan_for(world, target, code)
        assert plan is not None and plan.steps
        for step in plan.steps:
            lines += _taken(recorder, lambda step=step, world=world, target=target: run_line(world, target, step.command))
    refused, tools = _judge(lines, _netdevs(_world()))
    assert "systemctl" in tools, tools
    assert refused == []
