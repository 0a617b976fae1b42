"""`roce-wizard fix` end to end against the practice lab over SSH: preview, the safety gate, apply,
re-verify, idempotence, the run log's record of every step."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from roce_wizard.cli import app
from roce_wizard.lab.control import BackgroundLab
from roce_wizard.lab.scenarios import Scenario, healthy
from roce_wizard.records.runlog import read_events

runner = CliRunner()


@pytest.fixture
def lab(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    world = healthy(1)
    background = BackgroundLab(Scenario("healthy", world), tmp_path / "lab", services=())
    running = background.start()
    try:
        yield background, running, tmp_path / "lab" / "inventory.yaml"
    finally:
        background.stop()


def fix(inventory: Path, *args: str):
    return runner.invoke(app, ["fix", "-i", str(inventory), "--stage", "esxi", *args])


def test_safe_fix_applies_reverifies_and_a_second_run_plans_nothing(lab, tmp_path):
    background, running, inventory = lab
    # mst not started: a safe fix (NVIDIA MFT "VMware ESXi": mst start). RW213's power policy used to be the
    # example; its plan is manual words now (no vendor source for the esxcli write, issue 12 item 2)
    background.call(running.inject("RW202@esx-01"))
    preview = fix(inventory)
    assert preview.exit_code == 0 and "RW202" in preview.output and "--yes" in preview.output
    assert "/opt/mellanox/bin/mst start" in preview.output
    assert background.lab.world.hosts["esx-01"].mst_started is False  # a preview changes nothing

    applied = fix(inventory, "--yes")
    assert applied.exit_code == 0, applied.output
    assert "✓ esx-01 RW202" in applied.output
    assert background.lab.world.hosts["esx-01"].mst_started is True
    again = fix(inventory, "--yes")
    assert again.exit_code == 0 and "nothing to fix" in again.output

    runs = sorted((tmp_path / "state" / "runs").iterdir())
    steps = [e for run in runs for e in read_events(run) if e["type"] == "fix-step"]
    assert [(s["target"], s["check"], s["exit_status"]) for s in steps] == [("esx-01", "RW202", 0)]


def test_manual_plan_is_shown_not_run(lab, tmp_path):
    background, running, inventory = lab
    background.call(running.inject("RW213@esx-01"))  # Balanced power policy: no vendor source for the esxcli write
    preview = fix(inventory, "--yes")
    assert "RW213" in preview.output and "manual: shown, not run" in preview.output
    assert "esxcli system settings advanced set" not in preview.output
    assert background.lab.world.hosts["esx-01"].power_policy == "Balanced"


def test_disruptive_fix_needs_allow_disruptive_and_keeps_the_other_params(lab):
    background, running, inventory = lab
    background.call(running.inject("RW209@esx-01"))  # no pfctx/pfcrx; max_vfs, trust_state, ecn stay set
    gated = fix(inventory, "--yes")
    assert "needs --allow-disruptive" in gated.output
    assert "pfctx" not in background.lab.world.hosts["esx-01"].module_params

    applied = fix(inventory, "--yes", "--allow-disruptive", "--select", "RW209")
    assert applied.exit_code == 3, applied.output  # RW209 passes on a staged value: pending, not proven (issue 17)
    params = background.lab.world.hosts["esx-01"].module_params
    assert params["pfctx"] in ("0x08", "8") and params["max_vfs"] == "0,0,8,7" and params["trust_state"] == "2"
    assert "Waiting for a reboot" in applied.output and "esx-01" in applied.output
