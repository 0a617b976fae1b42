"""commands/: the text formats of steps, one definition shared by the checks that write a line and the
transport that reads it — and checklib/ + commands/ stay pure (no transport, lab, engine or front end)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from roce_wizard.checklib.vsphere import action
from roce_wizard.commands.redfish import Malformed as RedfishMalformed
from roce_wizard.commands.redfish import bios_set_line, parse_bios_set
from roce_wizard.commands.shell import UnsafeValue
from roce_wizard.commands.vsphere import SYNTAX, Malformed, action_line, parse_action_line
from roce_wizard.transports.vsphere import ACTIONS, parse_action

PACKAGE = Path(__file__).resolve().parents[2] / "roce_wizard"


# ---------------------------------------------------------------------------- redfish bios-set


def test_bios_set_line_reads_back_as_the_same_settings():
    line = bios_set_line({"SriovGlobalEnable": "Enabled", "SysProfile": "PerfPerWattOptimizedOs"})
    assert line == "redfish bios-set SriovGlobalEnable=Enabled SysProfile=PerfPerWattOptimizedOs"
    assert parse_bios_set(line.split()[2:]) == {"SriovGlobalEnable": "Enabled", "SysProfile": "PerfPerWattOptimizedOs"}


@pytest.mark.parametrize(("args", "message"), [
    (["Sriov"], "redfish bios-set: 'Sriov' is not NAME=VALUE (letters, digits, _ . -)"),
    (["Sriov=$(reboot)"], "redfish bios-set: 'Sriov=$(reboot)' is not NAME=VALUE (letters, digits, _ . -)"),
    (["9Sriov=Enabled"], "redfish bios-set: '9Sriov=Enabled' is not NAME=VALUE (letters, digits, _ . -)"),
    ([], "redfish bios-set: no NAME=VALUE given"),
])
def test_a_malformed_bios_set_line_is_refused_with_the_transports_message(args, message):
    with pytest.raises(RedfishMalformed) as exc:
        parse_bios_set(args)
    assert str(exc.value) == message


def test_a_setting_that_does_not_fit_is_never_rendered():
    with pytest.raises(RedfishMalformed):
        bios_set_line({"Sriov": "Enabled; reboot"})


# ---------------------------------------------------------------------------- vsphere actions


def test_the_transport_runs_exactly_the_verbs_the_format_parses():
    assert list(ACTIONS) == list(SYNTAX)
    assert all(ACTIONS[v][:2] == SYNTAX[v] for v in SYNTAX)


def test_an_action_line_parses_in_the_format_and_in_the_transport():
    line = action_line("vm-add-vf", "vm 01", "0000:3B:00.0", "roce-pg")
    assert line == "vsphere vm-add-vf 'vm 01' 0000:3B:00.0 roce-pg"
    assert parse_action_line(line) == ("vm-add-vf", ("vm 01", "0000:3b:00.0", "roce-pg"))
    call, args = parse_action(line)
    assert call is ACTIONS["vm-add-vf"][2] and args == ("vm 01", "0000:3b:00.0", "roce-pg")


def test_queries_and_other_lines_are_no_action():
    assert parse_action_line("vsphere hosts") is None
    assert parse_action_line("esxcli network nic list") is None


def test_a_malformed_action_names_the_usage_and_a_check_gets_unsafe_value():
    with pytest.raises(Malformed, match=r"usage: vsphere host-sriov <host> <pf-pci-id> <num-vfs>"):
        parse_action_line("vsphere host-sriov esx-01 0000:3b:00.0 999")
    with pytest.raises(UnsafeValue, match="refusing to run vsphere dvs-mtu"):
        action("dvs-mtu", "RoCE-DVS;reboot", 9000)


# ---------------------------------------------------------------------------- purity

# what checklib/ and commands/ may import from the project: the vocabulary, each other, the probes
# (pure command builders) and the parsers' pure text functions
ALLOWED = ("roce_wizard.model", "roce_wizard.checklib", "roce_wizard.commands", "roce_wizard.probes",
           "roce_wizard.parsers")
NOT_PARSERS = ("roce_wizard.parsers.session", "roce_wizard.parsers.paste", "roce_wizard.parsers.detect")


def _project_imports(path: Path) -> list[str]:
    """Every roce_wizard module a file imports, at the top or inside a function (lazy imports too)."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
            names.extend(f"{node.module}.{a.name}" for a in node.names if node.module == "roce_wizard")
        elif isinstance(node, ast.Import):
            names.extend(a.name for a in node.names)
    return [n for n in names if n.startswith("roce_wizard") and n != "roce_wizard"]


@pytest.mark.parametrize("package", ["checklib", "commands"])
def test_helpers_import_only_pure_modules(package):
    files = sorted((PACKAGE / package).glob("*.py"))
    assert files
    wrong = [f"{f.name}: {name}" for f in files for name in _project_imports(f)
             if not name.startswith(ALLOWED) or name.startswith(NOT_PARSERS)]
    assert not wrong


def test_commands_import_nothing_of_the_project_but_commands():
    wrong = [f"{f.name}: {name}" for f in sorted((PACKAGE / "commands").glob("*.py"))
             for name in _project_imports(f) if not name.startswith("roce_wizard.commands")]
    assert not wrong
