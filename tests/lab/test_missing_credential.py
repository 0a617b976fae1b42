"""A credential the inventory refers to but this shell lacks is named in doctor's default output.

The practice lab (`lab up --detach`, one host) keeps its switch, vCenter and BMC passwords in
DIR/lab.env; its inventory refers to them as {env: ROCE_LAB_…}. Doctor run without sourcing lab.env
used to say "authentication failed for admin@127.0.0.1", the cause only behind -v. Now RW001 says
which variable is not set and how to give it; with lab.env sourced, the same targets connect.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from roce_wizard.lab.server import read_env
from tests.conftest import REPO

CLI = [sys.executable, "-m", "roce_wizard.cli"]


def run(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout)


def test_unset_lab_password_is_named_in_rw001_summary_and_fix(tmp_path):
    lab_dir = tmp_path / "lab"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROCE_LAB_")}
    env.update(PYTHONPATH=str(REPO), ROCE_WIZARD_STATE_DIR=str(tmp_path / "state"), COLUMNS="250")
    up = run(env, "lab", "up", "--detach", "--dir", str(lab_dir), "--hosts", "1", timeout=120)
    assert up.returncode == 0, up.stderr + up.stdout
    try:
        inventory = str(lab_dir / "inventory.yaml")
        plain = run(env, "doctor", "-i", inventory, "--stage", "preflight")
        assert plain.returncode == 3, plain.stdout + plain.stderr  # could not run, nothing failed
        assert "sw-eos-1" in plain.stdout
        switch_rw001 = plain.stdout.split("sw-eos-1", 1)[1].splitlines()[1]
        assert "no password for admin@127.0.0.1: environment variable ROCE_LAB_SWITCH_PASSWORD is not set" \
            in switch_rw001
        assert "ROCE_LAB_VCENTER_PASSWORD is not set" in plain.stdout
        assert "ROCE_LAB_BMC_PASSWORD is not set" in plain.stdout
        assert "authentication failed" not in plain.stdout

        as_json = json.loads(run(env, "doctor", "-i", inventory, "--stage", "preflight", "--json").stdout)
        (rw001,) = [r for r in as_json["results"] if r["check"] == "RW001" and r.get("target") == "sw-eos-1"]
        assert rw001["status"] == "error"
        assert rw001["fix"].startswith("read -rs ROCE_LAB_SWITCH_PASSWORD && export ROCE_LAB_SWITCH_PASSWORD")

        secrets = read_env(lab_dir)
        fixed = run({**env, **secrets}, "doctor", "-i", inventory, "--stage", "preflight", "--json")
        reach = {r.get("target"): r["status"] for r in json.loads(fixed.stdout)["results"] if r["check"] == "RW001"}
        assert reach["sw-eos-1"] == reach["vcenter"] == reach["bmc-esx-01"] == "pass", reach
        assert not any(v in plain.stdout + fixed.stdout for v in secrets.values())
    finally:
        down = run(env, "lab", "down", "--dir", str(lab_dir))
    assert down.returncode == 0, down.stderr
