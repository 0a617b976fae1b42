"""Issue 11 items 11 and 12 on the lab: the reboot ledger is scoped to the machines (not the names), and
every exit of `fix --reboot` brings back the VMs it powered off, or names them in red and fails."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roce_wizard.cli import app
from roce_wizard.lab.control import BackgroundLab
from roce_wizard.lab.scenarios import Scenario, build_scenario
from roce_wizard.lab.server import read_env
from roce_wizard.records.runlog import read_events

pytestmark = pytest.mark.e2e  # the CLI in a subprocess / the wizard's whole flow against a lab

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]


def fix_args(timeout: float = 60) -> list[str]:
    return ["--yes", "--allow-disruptive", "--reboot", "--batch", "2", "--poll", "0.2", "--reboot-timeout", str(timeout)]


def settled(predicate, timeout: float = 10.0) -> bool:
    """The lab's World follows vCenter by polling it (every 0.25 s): wait, bounded, until it shows `predicate`."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def lab(tmp_path: Path, name: str, monkeypatch, *, faults: list[str], reboot_delay: float = 0.3,
        booted_days_ago: float = 0.0, delays: dict[str, float] | None = None) -> tuple[BackgroundLab, Path, dict]:
    """A healthy 2-host lab (esx-01, esx-02, compute-01, compute-02) with `faults`, its env in the process."""
    scenario = build_scenario("healthy", 2)
    world = scenario.world
    world.reboot_delay_s = reboot_delay
    if delays:
        world.reboot_delays.update(delays)
    for host in world.hosts.values():  # a site whose hosts have been up for a while, as real ones are
        host.boot_time -= booted_days_ago * 86400
    background = BackgroundLab(Scenario("healthy", world, list(faults)), tmp_path / name)
    background.start()
    if background.lab.world.vcenter is None or not background.lab.world.vcenter.port:
        background.stop()
        pytest.skip("the lab's vCenter simulator is not available (no Go); fix --reboot goes through vCenter")
    env = read_env(tmp_path / name)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    return background, tmp_path / name / "inventory.yaml", env


def run_events(tmp_path: Path) -> dict[str, list[dict]]:
    root = tmp_path / "state" / "runs"
    return {run.name: read_events(run) for run in sorted(root.iterdir()) if run.is_dir()} if root.is_dir() else {}


@pytest.mark.slow
def test_another_cluster_with_the_same_host_names_is_never_rebooted(tmp_path, monkeypatch):
    # cluster A: a fix --reboot killed while its nmlx5_core changes wait (VMs already powered off)
    a, inventory_a, env_a = lab(tmp_path, "site-a", monkeypatch, faults=["RW209@esx-01", "RW209@esx-02"],
                                reboot_delay=5.0)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "roce_wizard.cli", "fix", "-i", str(inventory_a), *fix_args()],
                                env={**os.environ, **env_a, "ROCE_WIZARD_STATE_DIR": str(tmp_path / "state"),
                                     "PYTHONPATH": str(REPO)},
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        try:
            while time.monotonic() < deadline:
                if any(e["type"] == "vm-power" for log in run_events(tmp_path).values() for e in log):
                    break
                assert proc.poll() is None, proc.stdout.read().decode()[-2000:]
                time.sleep(0.05)
            else:
                pytest.fail("the fix on cluster A never powered a VM off")
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
    finally:
        a.stop()
    before = set(run_events(tmp_path))

    # cluster B: healthy, the same names, up for days (older than A's changes)
    b, inventory_b, _ = lab(tmp_path, "site-b", monkeypatch, faults=[], booted_days_ago=3)
    try:
        world = b.lab.world
        boots = {h: host.boot_count for h, host in world.hosts.items()}
        result = runner.invoke(app, ["fix", "-i", str(inventory_b), *fix_args()])
        assert result.exit_code == 0, result.output[-3000:]
        assert {h: host.boot_count for h, host in world.hosts.items()} == boots
        assert all(vm.powered_on for vm in world.vms.values())
        [new_run] = set(run_events(tmp_path)) - before
        acted = [e for e in run_events(tmp_path)[new_run]
                 if e["type"] in ("reboot-requested", "vm-power", "maintenance-enter", "maintenance-exit")]
        assert acted == [], acted
        assert "nothing to fix" in result.output and "Waiting for a reboot" not in result.output

        ledger = runner.invoke(app, ["reboots", "--json"])
        assert ledger.exit_code == 0
        import json  # noqa: PLC0415

        hosts = json.loads(ledger.stdout)["hosts"]
        waiting = [h for h in hosts if h["pending"]]
        # A's items are still there, under A's machines and the run that recorded them
        assert {h["host"] for h in waiting} == {"esx-01", "esx-02"}
        assert all(p["run"] and p["run"] in before for h in waiting for p in h["pending"])
        assert {h["system_id"] for h in waiting}.isdisjoint(
            {f"uuid:{host.system_uuid}" for host in world.hosts.values()})
        text = runner.invoke(app, ["reboots"])
        assert "cluster 1" in text.output and "cluster 2" in text.output and "run " in text.output
    finally:
        b.stop()


@pytest.mark.slow
def test_a_host_that_does_not_come_back_leaves_no_other_vm_off_and_fails_loudly(tmp_path, monkeypatch):
    # esx-02 goes down for its reboot and stays down far longer than --reboot-timeout
    background, inventory, _ = lab(tmp_path, "site", monkeypatch, faults=["RW209@esx-01", "RW209@esx-02"],
                                   delays={"esx-02": 3600.0})
    try:
        world = background.lab.world
        result = runner.invoke(app, ["fix", "-i", str(inventory), *fix_args(timeout=8)])
        assert result.exit_code != 0, result.output[-3000:]
        assert settled(lambda: world.vms["compute-01"].powered_on), result.output[-3000:]  # its host came back: so did it
        # its host is down (vCenter: not responding): it cannot come back, and the run says so in red
        assert not world.vms["compute-02"].powered_on
        assert "VM compute-02 is still powered off (by roce-wizard at" in result.output, result.output[-3000:]
        assert "esx-02 did not come back" in result.output
        # a later fix does not call that "nothing to fix", nor exit 0
        again = runner.invoke(app, ["fix", "-i", str(inventory), *fix_args(timeout=8)])
        assert again.exit_code != 0 and "nothing to fix" not in again.output, again.output[-3000:]
        assert "VM compute-02 is still powered off (by roce-wizard at" in again.output
        # and doctor says why the guest does not answer
        doctor = runner.invoke(app, ["doctor", "-i", str(inventory), "--host", "compute-02"])
        assert "its VM compute-02 is powered off (by roce-wizard at" in doctor.output, doctor.output[-3000:]
    finally:
        background.stop()


@pytest.mark.slow
def test_ctrl_c_during_a_reboot_brings_the_vms_back(tmp_path, monkeypatch):
    background, inventory, env = lab(tmp_path, "site", monkeypatch, faults=["RW209@esx-01", "RW209@esx-02"],
                                     delays={"esx-02": 3600.0})
    try:
        world = background.lab.world
        proc = subprocess.Popen([sys.executable, "-m", "roce_wizard.cli", "fix", "-i", str(inventory), *fix_args()],
                                env={**os.environ, **env, "ROCE_WIZARD_STATE_DIR": str(tmp_path / "state"),
                                     "PYTHONPATH": str(REPO)},
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        try:
            while time.monotonic() < deadline:  # esx-01 is back, esx-02 is still down: Ctrl-C
                log = [e for events in run_events(tmp_path).values() for e in events]
                if any(e["type"] == "host-back" and e["target"] == "esx-01" for e in log):
                    break
                assert proc.poll() is None, proc.stdout.read().decode()[-2000:]
                time.sleep(0.05)
            else:
                pytest.fail("esx-01 never came back")
            proc.send_signal(signal.SIGINT)
            out, _ = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
        text = out.decode()
        assert proc.returncode == 130, text[-3000:]
        assert settled(lambda: world.vms["compute-01"].powered_on), text[-3000:]
        assert "Traceback" not in text
        assert not world.vms["compute-02"].powered_on
        assert "VM compute-02 is still powered off (by roce-wizard at" in text, text[-3000:]
    finally:
        background.stop()
