"""`fix --reboot` on the `fresh` lab (issue 5's done-when, at 2 hosts): fix, reboot, repeat until doctor
is green, with exactly two ESXi reboots per host and one restart per VM; a second fix plans nothing;
a fix killed with SIGKILL in the middle of a reboot batch resumes from the ledger."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roce_wizard.cli import app
from roce_wizard.lab.control import BackgroundLab
from roce_wizard.lab.scenarios import Scenario, fresh
from roce_wizard.lab.server import read_env
from roce_wizard.records.ledger import HostState, build_ledger
from roce_wizard.records.runlog import read_events

pytestmark = pytest.mark.e2e  # the CLI in a subprocess / the wizard's whole flow against a lab

runner = CliRunner()
FIX = ["--yes", "--allow-disruptive", "--reboot", "--batch", "2", "--poll", "0.2", "--reboot-timeout", "60"]


def start(tmp_path: Path, monkeypatch, reboot_delay: float) -> tuple[BackgroundLab, Path, dict[str, str]]:
    world = fresh(2)
    world.reboot_delay_s = reboot_delay
    background = BackgroundLab(Scenario("fresh", world), tmp_path / "lab")
    background.start()
    if background.lab.world.vcenter is None or not background.lab.world.vcenter.port:
        background.stop()
        pytest.skip("the lab's vCenter simulator is not available (no Go); fix --reboot goes through vCenter")
    env = read_env(tmp_path / "lab")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    return background, tmp_path / "lab" / "inventory.yaml", env


def events(tmp_path: Path) -> list[dict]:
    out = []
    for run in sorted((tmp_path / "state" / "runs").iterdir()):
        out.extend(read_events(run))
    return out


@pytest.mark.slow
def test_fresh_to_green_in_two_reboots_per_host_and_one_restart_per_vm(tmp_path, monkeypatch):
    background, inventory, _ = start(tmp_path, monkeypatch, reboot_delay=0.3)
    try:
        world = background.lab.world
        boots = {h: host.boot_count for h, host in world.hosts.items()}
        guest_boots = {g: guest.boot_count for g, guest in world.guests.items()}

        result = runner.invoke(app, ["fix", "-i", str(inventory), *FIX])
        assert result.exit_code == 0, result.output[-3000:]
        doctor = runner.invoke(app, ["doctor", "-i", str(inventory)])
        assert doctor.exit_code == 0, doctor.output[-3000:]

        world = background.lab.world
        assert {h: host.boot_count - boots[h] for h, host in world.hosts.items()} == {"esx-01": 2, "esx-02": 2}
        assert {g: guest.boot_count - guest_boots[g] for g, guest in world.guests.items()} == {
            "compute-01": 1, "compute-02": 1}
        log = events(tmp_path)
        backs = Counter(e["target"] for e in log if e["type"] == "host-back")
        assert backs == {"esx-01": 2, "esx-02": 2}
        power = Counter((e["target"], e["state"]) for e in log if e["type"] == "vm-power")
        assert power == {("compute-01", "off"): 1, ("compute-01", "on"): 1,
                         ("compute-02", "off"): 1, ("compute-02", "on"): 1}
        assert all(e["verified"] for e in log if e["type"] == "reboot-verified")
        assert "reboots: esx-01 ×2, esx-02 ×2" in result.output
        assert "back — back" not in result.output and re.search(r"esx-01: back — after \d+s", result.output)

        ledger = build_ledger(tmp_path / "state")
        assert all(not entry.awaiting_reboot and not entry.in_maintenance for entry in ledger.values())
        assert ledger["esx-01"].reboots == 2 and ledger["esx-01"].state is HostState.VERIFIED

        # the power policy (Balanced on day 0) was set through vCenter (RW307's ConfigurePowerPolicy; RW213, whose
        # own plan is words, depends on it): the host's esxcli shows it, nothing is left to plan
        assert {host.power_policy for host in world.hosts.values()} == {"High Performance"}
        assert "✓ vcenter RW307" in result.output, result.output[-3000:]
        again = runner.invoke(app, ["fix", "-i", str(inventory), *FIX])
        assert again.exit_code == 0 and "nothing to fix" in again.output, again.output[-2000:]
    finally:
        background.stop()


@pytest.mark.slow
def test_a_fix_killed_mid_reboot_resumes_from_the_ledger(tmp_path, monkeypatch):
    background, inventory, env = start(tmp_path, monkeypatch, reboot_delay=3.0)
    try:
        world = background.lab.world
        boots = {h: host.boot_count for h, host in world.hosts.items()}
        proc = subprocess.Popen(
            [sys.executable, "-m", "roce_wizard.cli", "fix", "-i", str(inventory), *FIX],
            env={**os.environ, **env, "ROCE_WIZARD_STATE_DIR": str(tmp_path / "state")},
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        try:
            while time.monotonic() < deadline:  # kill it while the first batch is down
                if (tmp_path / "state" / "runs").exists() and any(
                        e["type"] == "host-down" for e in events(tmp_path)):
                    break
                assert proc.poll() is None, proc.stdout.read().decode()[-2000:]
                time.sleep(0.05)
            else:
                pytest.fail("the fix never took a host down")
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        killed = build_ledger(tmp_path / "state")
        assert {killed[h].state for h in ("esx-01", "esx-02")} <= {HostState.REBOOTING, HostState.ENTERING_MAINTENANCE}

        result = runner.invoke(app, ["fix", "-i", str(inventory), *FIX])
        assert result.exit_code == 0, result.output[-3000:]
        doctor = runner.invoke(app, ["doctor", "-i", str(inventory)])
        assert doctor.exit_code == 0, doctor.output[-3000:]
        # the interrupted reboot counted: still two per host, and no VIB installed twice
        world = background.lab.world
        assert {h: host.boot_count - boots[h] for h, host in world.hosts.items()} == {"esx-01": 2, "esx-02": 2}
        installs = Counter((e["target"], e["command"]) for e in events(tmp_path)
                           if e["type"] == "fix-step" and e["check"] in ("RW201", "RW204") and e["exit_status"] == 0)
        assert len(installs) == 6 and set(installs.values()) == {1}, installs  # mft, nmst, driver per host
        assert not any(entry.in_maintenance for entry in build_ledger(tmp_path / "state").values())
    finally:
        background.stop()
