"""`fix` ends with what it left and why (issue 17 items 7, 8), run as an operator runs it (a subprocess,
output to a pipe) against the practice lab: esx-01 with mst not started (RW202, safe), PFC off (RW209,
disruptive) and a Balanced power policy (RW213, manual words); esx-02 with too few firmware VFs (RW208,
disruptive) which blocks compute-02's guest checks (and, with vCenter, RW301's verdict on esx-02). doctor calls those guest checks blocked by RW208 on
esx-02; fix used to plan RW405/RW406 there as "ens256 does not exist: find the RoCE netdev"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from roce_wizard.lab.control import BackgroundLab
from roce_wizard.lab.scenarios import Scenario, healthy
from roce_wizard.lab.server import read_env

pytestmark = pytest.mark.e2e


def start(tmp_path: Path, services: tuple[str, ...] | None):  # noqa: ANN201
    extra = {} if services is None else {"services": services}
    background = BackgroundLab(Scenario("healthy", healthy(2)), tmp_path / "lab", **extra)
    running = background.start()
    if services is None and (background.lab.world.vcenter is None or not background.lab.world.vcenter.port):
        background.stop()
        pytest.skip("the lab's vCenter simulator is not available (no Go)")
    for fault in ("RW202@esx-01", "RW209@esx-01", "RW213@esx-01", "RW208@esx-02"):
        background.call(running.inject(fault))
    return background, (tmp_path / "lab" / "inventory.yaml", read_env(tmp_path / "lab"), tmp_path / "state")


@pytest.fixture
def lab(tmp_path):
    """No vCenter: the power policy (RW213) is the host's, and its plan is manual words."""
    background, lab = start(tmp_path, services=())
    try:
        yield lab
    finally:
        background.stop()


@pytest.fixture
def lab_with_vcenter(tmp_path):
    """With vCenter: RW301 judges esx-02's SR-IOV counts (RW307 sets the power policy through vCenter)."""
    background, lab = start(tmp_path, services=None)
    try:
        yield lab
    finally:
        background.stop()


def fix(lab, *args: str) -> subprocess.CompletedProcess[str]:  # noqa: ANN001
    inventory, env, state = lab
    run_env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    run_env.update(env, ROCE_WIZARD_STATE_DIR=str(state), PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    return subprocess.run([sys.executable, "-m", "roce_wizard.cli", "fix", "-i", str(inventory), "--skip", "RW6",
                           *args], capture_output=True, text=True, env=run_env, timeout=300, check=False)


def closing(output: str) -> list[str]:
    lines = output.rstrip("\n").split("\n")
    return lines[next(i for i, line in enumerate(lines) if line.startswith("Left undone")):]


@pytest.mark.slow
def test_fix_ends_with_what_it_left_and_why(lab):
    applied = fix(lab, "--yes")
    assert applied.returncode in (0, 1), applied.stdout + applied.stderr
    assert "✓ esx-01 RW202" in applied.stdout  # the safe fix ran
    # each plan says its safety once
    assert "[disruptive, reboot: host; needs --allow-disruptive]" in applied.stdout
    assert "disruptive: needs" not in applied.stdout and "[manual; manual" not in applied.stdout
    left = closing(applied.stdout)
    assert left[0] == "Left undone:"
    assert left[1] == ("  2 disruptive fixes not applied (RW209 on esx-01, RW208 on esx-02): rerun with "
                       "--allow-disruptive")
    assert left[2] == "  1 manual fix (RW213 on esx-01): see `roce-wizard explain RW213`"
    assert left[3].startswith("  ") and "checks blocked by" in left[3] and "RW208 on esx-02" in left[3]
    assert "RW202 on esx-01" not in left[3]  # applied: what it blocked is judged again, not left blocked


@pytest.mark.slow
def test_fix_says_blocked_by_the_root_where_doctor_does(lab_with_vcenter):
    preview = fix(lab_with_vcenter, "--allow-disruptive", "--dry-run")
    assert preview.returncode == 0, preview.stdout + preview.stderr
    assert "find the RoCE netdev" not in preview.stdout  # compute-02's guest checks wait for RW208's reboot
    assert "compute-02" not in preview.stdout.split("Left undone")[0]  # no plan for them
    left = closing(preview.stdout)
    assert left[0] == "Left undone (with --yes too):"
    assert any("blocked by" in line and "RW208 on esx-02" in line for line in left), left
    # and RW301's vCenter plan re-requested counts vSphere already requests: no step with before = after
    plan = preview.stdout.split("Left undone")[0].split("\n")
    befores = [line.split("before: ", 1)[1] for line in plan if "before: " in line]
    afters = [line.split("after:  ", 1)[1] for line in plan if "after:  " in line]
    assert all(b != a for b, a in zip(befores, afters, strict=True))
    assert "vsphere host-sriov esx-02" not in preview.stdout
