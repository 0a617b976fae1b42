"""`roce-wizard lab up|status|down` as a user runs them (subprocesses, short timeouts)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roce_wizard.cli import app
from roce_wizard.inventory import load_inventory
from roce_wizard.lab.control import alive
from roce_wizard.lab.server import read_state

CLI = [sys.executable, "-m", "roce_wizard.cli"]


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    return {**os.environ, "ROCE_WIZARD_STATE_DIR": str(tmp_path / "state")}


def cli(env, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """A command as a user runs it: a process of its own (`lab up --detach` must outlive it)."""
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout)


def cli_here(env, monkeypatch, *args: str) -> subprocess.CompletedProcess[str]:
    """The same command in this process (fast: for commands that start nothing)."""
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", env["ROCE_WIZARD_STATE_DIR"])
    result = CliRunner().invoke(app, list(args))
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)


def test_up_detach_status_down(tmp_path, env, monkeypatch):
    lab_dir = tmp_path / "lab"
    up = cli(env, "lab", "up", "--detach", "--dir", str(lab_dir), "--hosts", "1", "--fault", "RW001@esx-01",
             "--reboot-delay", "0.2")
    assert up.returncode == 0, up.stderr + up.stdout
    assert str(lab_dir) in up.stdout and f"roce-wizard doctor -i {lab_dir / 'inventory.yaml'}" in up.stdout
    pid = int((lab_dir / "lab.pid").read_text())
    try:
        assert alive(pid)
        status = cli_here(env, monkeypatch, "lab", "status", "--dir", str(lab_dir), "--json")
        assert status.returncode == 0, status.stderr
        state = json.loads(status.stdout)
        assert state["running"] is True and state["ready"] is True and state["pid"] == pid
        rows = {t["name"]: t for t in state["targets"]}
        assert rows["esx-01"]["state"] == "refusing" and rows["esx-01"]["faults"] == ["RW001"]
        assert rows["compute-01"]["state"] == "up" and rows["compute-01"]["boot_count"] == 1
        inv = load_inventory(lab_dir / "inventory.yaml")
        assert [t.name for t in inv.targets if t.kind.value in ("esxi", "guest")] == ["esx-01", "compute-01"]
        assert inv.get("compute-01").port == rows["compute-01"]["port"]
        table = cli_here(env, monkeypatch, "lab", "status", "--dir", str(lab_dir))
        assert table.returncode == 0 and "refusing" in table.stdout and "RW001" in table.stdout
    finally:
        down = cli_here(env, monkeypatch, "lab", "down", "--dir", str(lab_dir))
    assert down.returncode == 0, down.stderr
    assert not alive(pid)
    assert not (lab_dir / "lab.pid").exists()
    after = cli_here(env, monkeypatch, "lab", "status", "--dir", str(lab_dir), "--json")
    assert after.returncode == 3 and json.loads(after.stdout)["running"] is False
    again = cli_here(env, monkeypatch, "lab", "down", "--dir", str(lab_dir))
    assert again.returncode == 2 and "no lab.pid" in again.stderr


def test_foreground_up_stops_cleanly_on_sigint(tmp_path, env):
    lab_dir = tmp_path / "fg"
    proc = subprocess.Popen([*CLI, "lab", "up", "--dir", str(lab_dir), "--hosts", "1"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while not (read_state(lab_dir) or {}).get("ready"):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert f"roce-wizard doctor -i {lab_dir / 'inventory.yaml'}" in out and "stopping" in out
    assert read_state(lab_dir)["stopped"] is True
    assert not (lab_dir / "lab.pid").exists()


def test_usage_errors(tmp_path, env, monkeypatch):
    def cli(env, *args):
        return cli_here(env, monkeypatch, *args)

    bad_fault = cli(env, "lab", "up", "--dir", str(tmp_path / "x"), "--fault", "RW999")
    assert bad_fault.returncode == 2 and "no lab fault for 'RW999'" in bad_fault.stderr
    bad_target = cli(env, "lab", "up", "--dir", str(tmp_path / "x"), "--fault", "RW001@nowhere")
    assert bad_target.returncode == 2 and "nowhere" in bad_target.stderr
    # a vCenter fault takes the host doctor reports it on; another host is refused, naming the one it lands on
    other_host = cli(env, "lab", "up", "--dir", str(tmp_path / "x"), "--fault", "RW301@esx-01")
    assert other_host.returncode == 2
    assert "or the target doctor reports it on (esx-02), not 'esx-01'" in " ".join(other_host.stderr.split())
    scenario = tmp_path / "broken.yaml"
    scenario.write_text("base: healthy\nset:\n  esx-01:\n    cards[1].confg.X: 1\n")
    bad_file = cli(env, "lab", "up", "--dir", str(tmp_path / "x"), "--scenario", str(scenario))
    assert bad_file.returncode == 2
    assert f"{scenario}:4: set.esx-01.cards[1].confg.X" in " ".join(bad_file.stderr.split())
    assert not Path(tmp_path / "x" / "state.json").exists()
    no_lab = cli(env, "lab", "status")
    assert no_lab.returncode == 2 and "no lab found" in no_lab.stderr


def test_demo_runs_doctor_on_a_fresh_lab_and_stops_it(env):
    demo = cli(env, "demo", "--hosts", "1", "--no-tui", timeout=60)  # the wizard is tests/tui's
    assert demo.returncode == 0, demo.stderr + demo.stdout
    assert "roce-wizard doctor -i" in demo.stdout and "doctor exited 1" in demo.stdout
    assert "RW401" in demo.stdout  # the fresh guest has no RDMA stack
    lab_dirs = list((Path(env["ROCE_WIZARD_STATE_DIR"]) / "lab").iterdir())
    assert len(lab_dirs) == 1 and read_state(lab_dirs[0])["stopped"] is True


def test_lab_faults_lists_every_fault_by_its_check_code():
    from typer.testing import CliRunner

    from roce_wizard.cli import app
    from roce_wizard.lab.faults import registry

    result = CliRunner().invoke(app, ["lab", "faults", "--json"])
    assert result.exit_code == 0
    listed = {f["code"]: f for f in json.loads(result.stdout)}
    assert set(listed) == set(registry())
    assert listed["RW208"]["kind"] == "esxi" and "NUM_OF_VFS" in listed["RW208"]["description"]
