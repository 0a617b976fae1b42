"""Pending is not passing, end to end (issue 17 item 2): on the practice lab, `fix` writes RW209's and RW210's
nmlx5_core parameters (they load at the next boot) without rebooting; `doctor` in a subprocess then shows
those checks as ⟳ "not in effect yet", its JSON marks them `pending_reboot` with status still `pass`, and
it exits 3 (nothing failed, not everything proven)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roce_wizard.cli import app
from roce_wizard.lab.control import BackgroundLab
from roce_wizard.lab.scenarios import Scenario, healthy

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def staged(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    background = BackgroundLab(Scenario("healthy", healthy(1)), tmp_path / "lab", services=())
    running = background.start()
    try:
        background.call(running.inject("RW209@esx-01"))  # no pfctx/pfcrx
        background.call(running.inject("RW210@esx-01"))  # no trust_state
        inventory = tmp_path / "lab" / "inventory.yaml"
        fixed = CliRunner().invoke(app, ["fix", "-i", str(inventory), "--select", "RW209,RW210", "--yes",
                                         "--allow-disruptive"])
        assert "Waiting for a reboot" in fixed.output, fixed.output
        assert fixed.exit_code == 3, fixed.output  # the re-verification: pending, not passing
        yield inventory, {**os.environ, "PYTHONPATH": str(ROOT), "ROCE_WIZARD_STATE_DIR": str(tmp_path / "state")}
    finally:
        background.stop()


def doctor(inventory: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "roce_wizard.cli", "doctor", "-i", str(inventory), "--select",
                           "RW209,RW210", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=180, check=False)


def test_doctor_after_a_staged_fix_says_pending_in_text_and_json_and_exits_3(staged):
    inventory, env = staged
    shown = doctor(inventory, env)
    print(shown.stdout)
    assert shown.returncode == 3, shown.stdout + shown.stderr
    assert "⟳ RW209 pfc-on-roce-priority" in shown.stdout and "⟳ RW210 dscp-trust" in shown.stdout
    assert "not in effect yet: waits for a host reboot" in shown.stdout
    assert "0 passed, 2 wait for a reboot, 0 warnings, 0 failed" in shown.stdout

    as_json = doctor(inventory, env, "--json")
    assert as_json.returncode == 3, as_json.stderr
    doc = json.loads(as_json.stdout)
    rows = {r["check"]: r for r in doc["results"] if r["target"] == "esx-01"}
    for code in ("RW209", "RW210"):
        assert (rows[code]["status"], rows[code]["pending_reboot"]) == ("pass", True)
        assert rows[code]["pending_reason"].startswith("waits for a host reboot")
    assert doc["summary"]["pending_reboot"] == 2 and doc["summary"]["exit_code"] == 3
