"""A bare-metal-only practice lab (issue 18 item 5): `lab up --baremetal 2 --hosts 0` starts two Linux
nodes and their switch — no ESXi host, VM, vCenter (so no vcsim) or BMC — and prints the doctor line
with the baremetal playbook; `demo --baremetal` does the same for the wizard and `--no-tui`.
A lab of nothing (hosts 0, baremetal 0) is still refused, with a message that says what to give."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from roce_wizard.lab.control import LabSpec
from roce_wizard.lab.scenarios import ScenarioError
from roce_wizard.lab.server import read_state
from tests.conftest import REPO

CLI = [sys.executable, "-m", "roce_wizard.cli"]


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ROCE_LAB_")}
    return {**clean, "PYTHONPATH": str(REPO), "ROCE_WIZARD_STATE_DIR": str(tmp_path / "state"), "COLUMNS": "250"}


def cli(env, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout)


def test_baremetal_only_lab_up_doctor_down(tmp_path, env):
    lab_dir = tmp_path / "lab"
    up = cli(env, "lab", "up", "--baremetal", "2", "--hosts", "0", "--detach", "--dir", str(lab_dir))
    assert up.returncode == 0, up.stderr + up.stdout
    try:
        assert "2 linux, 1 switch" in up.stdout and "esxi" not in up.stdout and "vcenter" not in up.stdout
        kinds = sorted({t["kind"] for t in read_state(lab_dir)["targets"]})
        assert kinds == ["linux", "switch"], kinds  # no ESXi, guest, vCenter or BMC
        (line,) = [ln for ln in up.stdout.splitlines() if ln.strip().startswith("run doctor:")]
        printed = shlex.split(line.split(":", 1)[1])
        assert printed == ["roce-wizard", "doctor", "-i", str(lab_dir / "inventory.yaml"), "--playbook", "baremetal",
                           "--env-file", str(lab_dir / "lab.env")]
        doctor = cli(env, *printed[1:], "--json")
        assert doctor.returncode == 0, doctor.stdout[-3000:] + doctor.stderr  # the healthy lab: nothing fails
        results = json.loads(doctor.stdout)["results"]
        targets = {r["target"] for r in results if r["target"]}
        assert {"node-01", "node-02", "sw-eos-1"} <= targets and not any(t.startswith("esx") for t in targets)
        passed = {(r["check"], r["target"]) for r in results if r["status"] == "pass"}
        assert {("RW412", "node-01"), ("RW409", "node-02"), ("RW501", "sw-eos-1"), ("RW001", "sw-eos-1")} <= passed
        assert not [r for r in results if r["status"] in ("fail", "error")]
        assert any(r["check"] == "RW601" and r["status"] == "pass" for r in results)  # node pair measured
    finally:
        down = cli(env, "lab", "down", "--dir", str(lab_dir))
    assert down.returncode == 0, down.stderr


def test_a_lab_of_nothing_is_refused(tmp_path, env):
    none = cli(env, "lab", "up", "--hosts", "0", "--dir", str(tmp_path / "x"))
    assert none.returncode == 2
    assert "a lab needs at least one ESXi host (hosts) or bare-metal node (baremetal)" in " ".join(none.stderr.split())
    assert not (tmp_path / "x" / "state.json").exists()
    scenario = tmp_path / "empty.yaml"
    scenario.write_text("base: healthy\nhosts: 0\n")
    with pytest.raises(ScenarioError, match=r"empty\.yaml:2: hosts: 0 with baremetal 0"):
        LabSpec(scenario=str(scenario)).build()
    scenario.write_text("base: healthy\nhosts: 0\nbaremetal: 2\n")  # the file the issue was refused on
    world = LabSpec(scenario=str(scenario)).build().world
    assert not world.hosts and world.vcenter is None and sorted(world.guests) == ["node-01", "node-02"]


def test_demo_baremetal_no_tui(env):
    demo = cli(env, "demo", "--baremetal", "--no-tui")
    assert demo.returncode == 0, demo.stderr + demo.stdout
    out = demo.stdout
    assert "2 bare-metal nodes" in out and "--playbook baremetal" in out and "doctor exited 1" in out
    assert "roce-wizard lab up --scenario fresh --baremetal 2 --hosts 0" in out  # the lab it suggests is this one
    assert "node-01" in out and "RW412" in out and "esx-" not in out  # fresh bare metal: linux stage fails
    lab_dirs = list((Path(env["ROCE_WIZARD_STATE_DIR"]) / "lab").iterdir())
    assert len(lab_dirs) == 1 and read_state(lab_dirs[0])["stopped"] is True
