"""`--env-file DIR/lab.env` (issue 18 item 6): a lab started with `lab up --detach` keeps its switch,
vCenter and BMC passwords in DIR/lab.env; without them every such target "could not run". `lab up`
now prints the doctor line with `--env-file`, and that exact line connects to every target, with no
password in the output or anywhere under the run directory."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

from roce_wizard.lab.server import read_env
from tests.conftest import REPO

CLI = [sys.executable, "-m", "roce_wizard.cli"]


def run(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout)


def test_detached_lab_doctor_with_env_file_reaches_every_target(tmp_path):
    lab_dir, state = tmp_path / "lab", tmp_path / "state"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROCE_LAB_")}
    env.update(PYTHONPATH=str(REPO), ROCE_WIZARD_STATE_DIR=str(state), COLUMNS="250")
    up = run(env, "lab", "up", "--detach", "--dir", str(lab_dir), "--hosts", "1")
    assert up.returncode == 0, up.stderr + up.stdout
    try:
        inventory, env_file = lab_dir / "inventory.yaml", lab_dir / "lab.env"
        (line,) = [ln for ln in up.stdout.splitlines() if ln.strip().startswith("run doctor:")]
        printed = shlex.split(line.split(":", 1)[1])
        assert printed == ["roce-wizard", "doctor", "-i", str(inventory), "--env-file", str(env_file)]

        without = run(env, "doctor", "-i", str(inventory), "--skip", "RW6", "--json")
        assert without.returncode == 3, without.stderr  # switch, vCenter, BMC: could not run
        reach = {r["target"]: r["status"] for r in json.loads(without.stdout)["results"] if r["check"] == "RW001"}
        assert reach["sw-eos-1"] == reach["vcenter"] == reach["bmc-esx-01"] == "error", reach

        with_file = run(env, *printed[1:], "--skip", "RW6", "--json")  # the line lab up printed
        assert with_file.returncode == 0, with_file.stdout[-2000:] + with_file.stderr
        results = json.loads(with_file.stdout)["results"]
        reach = {r["target"]: r["status"] for r in results if r["check"] == "RW001"}
        assert reach["sw-eos-1"] == reach["vcenter"] == reach["bmc-esx-01"] == "pass", reach
        assert not [r for r in results if r["status"] in ("error", "fail")]
        assert any(r["target"] == "vcenter" and r["check"] == "RW303" and r["status"] == "pass" for r in results)

        secrets = [v for v in read_env(lab_dir).values() if v]
        assert len(secrets) == 3
        assert not any(s in with_file.stdout + with_file.stderr for s in secrets)
        leaks = [str(p) for p in state.rglob("*") if p.is_file()
                 for s in secrets if s.encode() in p.read_bytes()]
        assert not leaks, leaks  # the run log (events, raw outputs, sessions) never holds a password
        assert any(state.rglob("events.jsonl"))
    finally:
        down = run(env, "lab", "down", "--dir", str(lab_dir))
    assert down.returncode == 0, down.stderr
