"""plan_fix of the switch checks RW501–RW507 (RW507: the switch end of the host/switch agreement) on outputs recorded from the lab's vendor CLIs
(`SwitchCli` in process, as test_switch_checks records them): one `switch-config` step per switch
with interface ranges, for EOS, Onyx and OS10, on every lab fault and on the fresh lab; nothing when
healthy. After-fix cases: the step's configuration lines typed into the same CLI the way
SwitchTransport sends them (an EOS config session and `commit`; Onyx / OS10 configure mode), the
outputs recorded again: the check passes and plans nothing.

The transport's backup / verify / save / rollback runs over netmiko in tests/lab/test_switch_fix.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from roce_wizard.commands.switch_config import parse_config_command
from roce_wizard.engine.fixes import plan_for as planned_fix
from roce_wizard.lab import faults as faults_mod
from roce_wizard.lab.scenarios import fresh, healthy
from roce_wizard.lab.switch import SwitchCli
from roce_wizard.model import Policy, RebootKind, Safety, Status
from tests.checkcases import CATALOG, Case, build_facts
from tests.unit.checks.test_switch_checks import recorded, roce_ports, switch

VENDORS = ("eos", "onyx", "os10")
FIXABLE = ("RW501", "RW502", "RW503", "RW504", "RW505", "RW506", "RW507")


def _case(code: str, vendor: str, world: Any, expect: Status = Status.PASS, **kw: Any) -> Case:
    return Case(code, f"{vendor}-{kw.pop('name', 'x')}", expect, recorded(vendor, None, world),
                facts={"roce_ports": roce_ports(vendor)}, target=switch(vendor), **kw)


def plan_on(code: str, vendor: str, world: Any):
    return planned_fix(CATALOG[code], build_facts(_case(code, vendor, world)), Policy())


def apply_on(world: Any, vendor: str, command: str) -> None:
    """Type a switch-config step's lines into the lab CLI the way SwitchTransport sends them."""
    meta, lines = parse_config_command(command)
    cli = SwitchCli(world, f"sw-{vendor}-1")
    if vendor != "os10":
        cli.run("enable")
    head = [f"configure session {meta['name']}"] if vendor == "eos" else ["configure terminal"]
    tail = ["commit"] if vendor == "eos" else ["end"]
    for line in [*head, *lines, *tail]:
        out = cli.run(line)
        assert not out.lstrip().startswith("%"), f"{line!r}: {out}"


def _faulty(vendor: str, code: str) -> Any:
    world = healthy(2, vendor)
    faults_mod.inject(world, code)
    return world


def _after_fix(code: str, vendor: str) -> Case:
    world = _faulty(vendor, code)
    apply_on(world, vendor, plan_on(code, vendor, world).steps[0].command)
    return _case(code, vendor, world, name="after-fix", after_fix=True)


CASES: list[Case] = [_after_fix(code, vendor) for code in FIXABLE for vendor in VENDORS]


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize("code", FIXABLE)
def test_plan_on_the_lab_fault(code, vendor):
    p = plan_on(code, vendor, _faulty(vendor, code))
    assert p is not None and (p.target, p.safety, p.reboot) == (f"sw-{vendor}-1", Safety.DISRUPTIVE,
                                                                 RebootKind.NONE)
    [step] = p.steps
    meta, lines = parse_config_command(step.command)
    assert meta["vendor"] == vendor and meta["name"] == f"roce-wizard-{code.lower()}"
    [verify] = meta["verify"]
    assert verify["ports"] and set(verify["ports"]) <= {r["port"] for r in roce_ports(vendor)}
    if vendor == "eos" and code != "RW507":
        assert verify["ports"] == ["Ethernet3"]  # the port the lab fault broke
    assert step.after == "\n".join(lines)


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize("code", FIXABLE)
def test_nothing_when_healthy(code, vendor):
    assert plan_on(code, vendor, healthy(2, vendor)) is None


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.code}-{c.name}")
def test_after_fix_cases_pass_and_plan_nothing(case):
    from tests.checkcases import run_case

    run_case(case)
    assert planned_fix(CATALOG[case.code], build_facts(case), case.policy) is None


def test_the_fresh_lab_gets_one_block_with_ranges_per_check():
    """Day 0 on EOS: no PFC anywhere: one range covering the four RoCE ports, not four blocks."""
    p = plan_on("RW501", "eos", fresh(2, "eos"))
    _meta, lines = parse_config_command(p.steps[0].command)
    assert lines == ["interface Ethernet1-4", "   priority-flow-control on"]
    onyx = plan_on("RW504", "onyx", fresh(2, "onyx"))
    _meta, lines = parse_config_command(onyx.steps[0].command)
    assert lines == ["interface ethernet 1/1-1/4 mtu 9216 force"]
    os10 = plan_on("RW504", "os10", fresh(2, "os10"))
    meta, lines = parse_config_command(os10.steps[0].command)
    assert lines == ["interface range ethernet1/1/1-1/1/4", " mtu 9216", " exit"]
    assert json.loads(json.dumps(meta))["verify"][0]["expect"] == {"mtu_min": 9216}
