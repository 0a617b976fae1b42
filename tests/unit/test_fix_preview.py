"""The fix preview (`roce-wizard fix` without --yes) shows what a person would type: a switch step's
configuration lines, never the `switch-config {json}` header the switch transport reads (issue 12, item 7)."""

from __future__ import annotations

from rich.console import Console

from roce_wizard.cli.fix import _print_plan
from roce_wizard.engine.fixes import Planned
from roce_wizard.commands.switch_config import human_command, parse_config_command
from tests.unit.checks.test_switch_checks import switch
from tests.unit.checks.test_switch_fixes import _faulty, plan_on


def _preview(vendor: str, code: str) -> tuple[str, list[str]]:
    plan = plan_on(code, vendor, _faulty(vendor, code))
    console = Console(record=True, width=300, color_system=None)
    _print_plan(console, [Planned(plan=plan, target=switch(vendor), allowed=True)])
    return console.export_text(), parse_config_command(plan.steps[0].command)[1]


def test_preview_of_a_switch_step_shows_its_config_lines_not_the_json_header():
    text, lines = _preview("eos", "RW501")
    assert "switch-config" not in text and '{"name"' not in text and '"verify"' not in text
    for line in lines:  # every configuration line, as it will be typed into the switch
        assert f"          {line}" in text.splitlines()
    assert "configure Ethernet3 on sw-eos-1" in text  # the step's own words say what happens around them


def test_human_command_leaves_shell_commands_alone():
    assert human_command("ip link set dev ens224 mtu 9000") == "ip link set dev ens224 mtu 9000"
    assert human_command("switch-config {not json\ninterface Ethernet1") == "switch-config {not json\ninterface Ethernet1"


def test_the_wizard_plan_shows_the_config_lines_too():
    from roce_wizard.tui.widgets.detail import plan_lines  # noqa: PLC0415 (the TUI's imports are heavier)

    plan = plan_on("RW501", "eos", _faulty("eos", "RW501"))
    text = "\n".join(t.plain for t in plan_lines([Planned(plan=plan, target=switch("eos"), allowed=True)]))
    assert "switch-config" not in text and '"verify"' not in text
    assert all(f"      {line}" in text.splitlines() for line in parse_config_command(plan.steps[0].command)[1])
