"""Switch rollback with the vendors' own semantics, on the lab's vendor CLIs in process.

- A copy of a saved file onto the running config MERGES on EOS (`copy flash:F running-config`) and
  OS10 (`copy config://F running-configuration`): the lines a change added stay. EOS `configure replace`
  and Onyx `configuration switch-to` put the saved configuration back exactly.
- OS10 documents no replace: `switch_undo.os10_inverse` types the inverse of exactly the lines a
  fix added; for every OS10 lab fault, the fix's lines then their inverse leave the running config as
  it was, which a plain copy does not.
"""

from __future__ import annotations

import pytest

from roce_wizard.commands.switch_config import parse_config_command
from roce_wizard.commands.switch_undo import comparable, os10_inverse
from roce_wizard.lab import faults as faults_mod
from roce_wizard.lab.scenarios import healthy
from roce_wizard.lab.switch import SwitchCli
from tests.unit.checks.test_switch_fixes import FIXABLE, plan_on


def _typed(cli: SwitchCli, lines: list[str]) -> None:
    for line in lines:
        out = cli.run(line)
        assert not out.lstrip().startswith("%"), f"{line!r}: {out}"


def _os10(code: str):
    world = healthy(2, "os10")
    faults_mod.inject(world, code)
    return world, SwitchCli(world, "sw-os10-1")


@pytest.mark.parametrize("code", FIXABLE)
def test_os10_inverse_of_a_fix_restores_the_running_config(code):
    world, cli = _os10(code)
    _meta, lines = parse_config_command(plan_on(code, "os10", world).steps[0].command)
    before = cli.run("show running-configuration")
    _typed(cli, ["configure terminal", *lines, "end"])
    now = cli.run("show running-configuration")
    assert comparable(now) != comparable(before)
    inverse = os10_inverse(lines, before, now)
    assert inverse
    _typed(cli, ["configure terminal", *inverse, "end"])
    assert comparable(cli.run("show running-configuration")) == comparable(before), inverse


def test_os10_copy_onto_running_merges_and_leaves_what_a_fix_added():
    world, cli = _os10("RW506")
    _meta, lines = parse_config_command(plan_on("RW506", "os10", world).steps[0].command)
    _typed(cli, ["copy running-configuration config://before.xml"])
    before = cli.run("show running-configuration")
    _typed(cli, ["configure terminal", *lines, "end", "copy config://before.xml running-configuration"])
    after = cli.run("show running-configuration")
    assert comparable(after) != comparable(before)
    assert "wred roce-ecn\n" in after and "policy-map type queuing roce-ecn\n" in after


def test_eos_copy_merges_configure_replace_restores():
    world = healthy(2, "eos")
    faults_mod.inject(world, "RW501")  # Ethernet3 without PFC
    cli = SwitchCli(world, "sw-eos-1")
    _typed(cli, ["enable", "copy running-config flash:before.cfg"])
    before = cli.run("show running-config")
    _typed(cli, ["configure", "interface Ethernet3", "priority-flow-control on", "end"])
    assert cli.run("show running-config") != before
    assert cli.run("copy flash:before.cfg running-config") == "Copy completed successfully."
    merged = cli.run("show running-config")
    assert merged != before  # the added `priority-flow-control on` stays: a copy merges
    _typed(cli, ["configure replace flash:before.cfg"])
    assert cli.run("show running-config") == before


def test_inverse_keeps_what_the_config_held_before_and_retypes_replaced_values():
    before = "interface ethernet1/1/3\n mtu 1500\n flowcontrol receive on\n!\n"
    change = ["interface range ethernet1/1/3-1/1/4", " mtu 9216", " flowcontrol receive off", " exit"]
    now = ("interface ethernet1/1/3\n mtu 9216\n flowcontrol receive off\n!\n"
           "interface ethernet1/1/4\n mtu 9216\n flowcontrol receive off\n!\n")
    assert os10_inverse(change, before, now) == [
        "interface ethernet1/1/3", " mtu 1500", " flowcontrol receive on", " exit",
        "interface ethernet1/1/4", " no mtu 9216", " no flowcontrol receive off", " exit"]
