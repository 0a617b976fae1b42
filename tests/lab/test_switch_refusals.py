"""Each vendor CLI refuses a bad MTU, a missing value and a missing saved configuration with its own words, and takes
the edits the three share (lab/switch/edits.py) the way its device does. Outputs pinned from the lab before the
shared edits were factored out of eos.py/onyx.py/os10.py (issue 14, item 5: behaviour unchanged)."""

from __future__ import annotations

import pytest

from roce_wizard.lab.scenarios import fresh
from roce_wizard.lab.switch import SwitchCli

SWITCH = {"eos": "sw-eos-1", "onyx": "sw-onyx-1", "os10": "sw-os10-1"}
IFACE = {"eos": "interface Ethernet1", "onyx": "interface ethernet 1/1", "os10": "interface ethernet 1/1/1"}

CASES = [
    ("eos", "mtu 99999", "% Invalid input (at token 1: '99999')", 1500),
    ("eos", "mtu", "% Incomplete command", 1500),
    ("eos", "mtu 9216 force", "% Invalid input (at token 2: 'force')", 1500),
    ("eos", "mtu 9000", "", 9000),
    ("eos", "no mtu", "", 9214),
    ("onyx", "mtu 99999", "% MTU must be between 1500 and 9216", 1500),
    ("onyx", "mtu", "% Incomplete command", 1500),
    ("onyx", "mtu 9216 extra", '% Unrecognized command "extra".\nType "?" for help.', 1500),
    ("onyx", "mtu 9216 force", "", 9216),
    ("onyx", "no mtu", "", 1500),
    ("os10", "mtu 99999", "% Error: MTU value out of range (1312-9216).", 1500),
    ("os10", "mtu", "% Error: Incomplete command.", 1500),
    ("os10", "mtu 9216 force", "% Error: Unrecognized command.", 1500),
    ("os10", "mtu 9000", "", 9000),
    ("os10", "no mtu", "", 1532),
]


def _in_interface(vendor: str):
    world = fresh(2, vendor)
    cli = SwitchCli(world, SWITCH[vendor])
    if vendor != "os10":
        assert cli.run("enable") == ""
    assert cli.run("configure terminal") == "" and cli.run(IFACE[vendor]) == ""
    return world, cli


@pytest.mark.parametrize(("vendor", "line", "answer", "mtu"), CASES)
def test_interface_mtu_as_the_device_takes_or_refuses_it(vendor, line, answer, mtu):
    world, cli = _in_interface(vendor)
    assert cli.run(line) == answer
    assert world.switches[SWITCH[vendor]].ports[0].mtu == mtu


@pytest.mark.parametrize("vendor", ["onyx", "os10"])
def test_description_drops_the_quotes_and_no_description_clears_it(vendor):
    world, cli = _in_interface(vendor)
    port = world.switches[SWITCH[vendor]].ports[0]
    assert cli.run('description "to esx-09"') == "" and port.description == "to esx-09"
    assert cli.run("no description") == "" and port.description == ""


@pytest.mark.parametrize(("vendor", "save", "load", "missing", "answer"), [
    ("eos", "copy running-config flash:lab.cfg", "configure replace flash:lab.cfg", "configure replace flash:nope.cfg",
     "% Error opening flash:nope.cfg (No such file or directory)"),
    ("os10", "copy running-configuration config://lab", "copy config://lab running-configuration",
     "copy config://nope running-configuration", "% Error: config://nope: No such file or directory"),
])
def test_a_saved_configuration_comes_back_and_a_missing_one_is_refused(vendor, save, load, missing, answer):
    world = fresh(2, vendor)
    cli = SwitchCli(world, SWITCH[vendor])
    if vendor != "os10":
        assert cli.run("enable") == ""
    port = world.switches[SWITCH[vendor]].ports[0]
    cli.run(save)
    port.mtu = 4000  # changed after the save: loading the saved file brings 1500 back
    assert cli.run(missing) == answer
    assert cli.run(load) in ("", "Copy completed successfully.") and port.mtu == 1500
