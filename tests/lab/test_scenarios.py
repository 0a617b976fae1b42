"""Scenario files: `base`, `hosts`, `switch`, `set` paths on the world, `faults`."""

from __future__ import annotations

import pytest

from roce_wizard.lab.scenarios import ScenarioError, build_scenario, load_scenario


def write(tmp_path, text: str):
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    return path


def test_builtin_names():
    assert build_scenario("healthy", 3).world.hosts.keys() == {"esx-01", "esx-02", "esx-03"}
    fresh = build_scenario("fresh", 1, "os10").world
    assert fresh.scenario == "fresh" and list(fresh.switches) == ["sw-os10-1"]
    assert fresh.hosts["esx-01"].bios["SriovGlobalEnable"] == "Disabled"


def test_file_sets_paths_and_lists_faults(tmp_path):
    path = write(tmp_path, """
base: fresh
hosts: 3
switch: onyx
reboot_delay_s: 1
set:
  esx-02:
    power_policy: High Performance
    module_params.max_vfs: "0,0,4,4"
    cards[1].config.NUM_OF_VFS.next_boot: 8
    vmnics[vmnic3].mtu: 9000
    faults: [RW208]
  vm:compute-01:
    vf_port: 2
  compute-03:
    interfaces[ens256].mtu: 9000
  sw-onyx-1:
    ports[0].no_drop: [3]
  vcenter:
    dvs_max_mtu: 9000
  world:
    policy.eth_mtu: 9000
faults: [RW208@esx-02, rw405]
""")
    scenario = load_scenario(path)
    w = scenario.world
    assert scenario.name == "scenario" and scenario.faults == ["RW208@esx-02", "rw405"]
    assert len(w.hosts) == 3 and list(w.switches) == ["sw-onyx-1"] and w.reboot_delay_s == 1.0
    h = w.hosts["esx-02"]
    assert h.power_policy == "High Performance" and h.module_params == {"max_vfs": "0,0,4,4"}
    assert h.cards[1].config["NUM_OF_VFS"].next_boot == 8 and h.cards[1].config["NUM_OF_VFS"].current == 0
    assert h.vmnics[3].mtu == 9000 and h.faults == {"RW208"}
    assert w.vms["compute-01"].vf_port == 2
    assert w.guests["compute-03"].interface("ens256").mtu == 9000
    assert w.switches["sw-onyx-1"].ports[0].no_drop == {3}
    assert w.vcenter.dvs_max_mtu == 9000
    # the command line wins over the file
    assert len(load_scenario(path, hosts=4).world.hosts) == 4


@pytest.mark.parametrize("text, line, message", [
    ("bogus: 1\n", 1, "bogus: unknown key"),
    ("base: rotten\n", 1, "base: expected healthy or fresh"),
    ("hosts: two\n", 1, "hosts: expected int"),
    ("switch: cisco\n", 1, "switch: expected one of eos, onyx, os10"),
    ("set:\n  esx-09:\n    power_policy: x\n", 2, "set.esx-09: no such target"),
    ("set:\n  esx-01:\n    cards[1].confg.X: 1\n", 3, "set.esx-01.cards[1].confg.X: no attribute 'confg' on Card"),
    ("set:\n  esx-01:\n    cards[7].fw_version: x\n", 3, "index 7 out of range"),
    ("set:\n  esx-01:\n    vmnics[vmnic9].mtu: 1500\n", 3, "no item named 'vmnic9'"),
    ("set:\n  esx-01:\n    vmnics[vmnic2].mtu: big\n", 3, "expected an integer"),
    ("set:\n  esx-01:\n    up: maybe\n", 3, "expected true/false"),
    ("set:\n  esx-01:\n    cards[1]: x\n", 3, "set its attributes one by one"),
    ("faults: RW208\n", 1, "faults: expected a list"),
    ("faults: [208]\n", 1, "expected CODE[@TARGET]"),
    ("set: [1, 2]\n", 1, "set: expected a mapping"),
    ("base: [\n", 2, "YAML syntax error"),
])
def test_errors_name_file_line_and_path(tmp_path, text, line, message):
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path}:{line}: "), str(info.value)
    assert message in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(ScenarioError, match="cannot read"):
        load_scenario(tmp_path / "nope.yaml")
