"""The CLI says what next (issue 17 items 7, 8), run as an operator runs it (a subprocess, output to a pipe):
doctor's closing lines on the recorded sample cluster, doctor --quiet, `reboots --host` that matches nothing,
and the counted words. The sample cluster (examples/sample-cluster, README's first command): esx-02 without
PFC (RW209, a disruptive fix), its power policy (RW213, manual), compute-04's MTU (RW405, a safe fix),
esx-03 waiting for a reboot, esx-04 refusing SSH."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from roce_wizard.cli.next_step import fix_command
from roce_wizard.records.wording import plural
from roce_wizard.tui.screens.reboots import reboot_hint

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample-cluster"
REPLAY = ["-i", str(SAMPLE / "inventory.yaml"), "--replay", str(SAMPLE / "recordings.yaml")]


def cli(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR", "NO_COLOR")}
    env.update(PYTHONPATH=str(ROOT), ROCE_WIZARD_STATE_DIR=str(state))
    return subprocess.run([sys.executable, "-m", "roce_wizard.cli", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120, check=False)


def test_doctor_ends_with_the_next_step(tmp_path):
    run = cli(tmp_path, "doctor", *REPLAY, "--skip", "RW6")
    assert run.returncode == 1, run.stderr
    *_, summary, log, fixes, reach = run.stdout.rstrip("\n").split("\n")
    assert summary.startswith("105 passed, 1 warning, 6 failed") and log.startswith("run log: ")
    # RW209 (disruptive) and RW405 (safe) have a plan; the command repeats this run's -i and --skip, quoted
    inventory = str(SAMPLE / "inventory.yaml")
    command = shlex.join(["roce-wizard", "fix", "-i", inventory, "--skip", "RW6"])
    assert fixes.startswith(f"2 problems fixable with `{command}` (1 needs --allow-disruptive); 5 to fix by hand "
                            "(`roce-wizard explain RW213`"), fixes
    assert reach.startswith("1 target could not be reached (esx-04: connection refused); "), reach
    assert "checks blocked by" in reach and "RW001 on esx-04" in reach


def test_doctor_quiet_shows_only_what_did_not_pass(tmp_path):
    loud = cli(tmp_path, "doctor", *REPLAY, "--skip", "RW6")
    quiet = cli(tmp_path, "doctor", *REPLAY, "--skip", "RW6", "--quiet")
    assert quiet.returncode == loud.returncode == 1
    assert "✓" in loud.stdout and "✓" not in quiet.stdout
    assert "✗ RW209 pfc-on-roce-priority" in quiet.stdout and "? RW001 target-reachable" in quiet.stdout
    assert quiet.stdout.splitlines()[-2:] == loud.stdout.splitlines()[-2:]  # the same next step

    healthy = cli(tmp_path, "doctor", *REPLAY, "--host", "esx-01", "--select", "RW0,RW2", "--failures-only")
    assert healthy.returncode == 0, healthy.stdout
    [line] = healthy.stdout.splitlines()  # a healthy run: its summary line alone
    assert line.startswith("22 passed, 0 warnings, 0 failed, 0 could not run, 0 skipped — 1 target in ")


def test_reboots_host_that_matches_nothing_names_the_ledgers_hosts(tmp_path):
    assert cli(tmp_path, "reboots", "--host", "nosuch").stdout.startswith("the ledger is empty")
    cli(tmp_path, "doctor", *REPLAY, "--skip", "RW6")  # the ledger now knows the sample's hosts
    run = cli(tmp_path, "reboots", "--host", "nosuch")
    assert run.returncode == 0
    assert run.stdout.startswith("no host matches 'nosuch' (the ledger has: compute-01, compute-02, "), run.stdout
    assert "esx-03" in run.stdout and "empty" not in run.stdout


@pytest.mark.parametrize(("n", "word", "said"), [
    (0, "host", "0 hosts"), (1, "host", "1 host"), (2, "host", "2 hosts"), (1, "fix", "1 fix"),
    (3, "fix", "3 fixes"), (2, "pending host", "2 pending hosts"), (1, "disruptive fix", "1 disruptive fix"),
])
def test_plural(n, word, said):
    assert plural(n, word) == said


def test_the_reboot_trackers_hint_says_when_nothing_waits():
    assert reboot_hint(0, 1) == "No host waits for a reboot: R has nothing to do."
    assert reboot_hint(1, 2) == "R reboots the 1 pending host, 2 at a time."
    assert reboot_hint(3, 1) == "R reboots the 3 pending hosts, 1 at a time."


def test_the_suggested_command_is_quoted_and_never_shows_a_control_character():
    assert fix_command(Path("my inv.yaml"), "baremetal", select_=["RW2"], host=["esx-[01-04]"]) == (
        "roce-wizard fix -i 'my inv.yaml' --playbook baremetal --select RW2 --host 'esx-[01-04]'")
    assert fix_command(Path("inventory.yaml"), None) == "roce-wizard fix"
    assert fix_command(Path("inv\x1b]0;pwned\x07.yaml"), None) is None
    assert fix_command(Path("a\nb.yaml"), None) is None


def test_summary_counts_read_in_the_singular():
    from roce_wizard.records.report import summary_line  # noqa: PLC0415

    report = SimpleNamespace(counts=lambda: {"pass": 1, "warn": 1, "fail": 1, "error": 1, "skip": 1},
                             targets=["esx-01"], duration_s=0.1, findings=[])
    assert summary_line(report) == "1 passed, 1 warning, 1 failed, 1 could not run, 1 skipped — 1 target in 0.1s"
