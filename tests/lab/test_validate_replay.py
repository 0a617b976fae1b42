"""`doctor --replay RUN_DIR` of a validate run reproduces its findings, end to end.

A lab (2 ESXi hosts with their guests, NCCL on the guests, the EOS switch) is measured by
`roce-wizard doctor --stage validate --json` over the real transports; the run directory it leaves is then
replayed with `--replay` (nothing contacted) and must give the same findings: every check, target, pair,
status and summary. Commands asked twice with the same text (the switch's counters before and after the
measurements) are answered in the order they ran (the records' `seq`).
"""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from roce_wizard.cli import app

pytestmark = pytest.mark.lab


def _world():
    from roce_wizard.lab import scenarios
    from roce_wizard.lab.guest import nccl

    world = scenarios.healthy(2)
    for g in world.guests.values():
        nccl.install(world, g)
    return world


HOSTS = ("--host", "compute-*", "--host", "esx-*", "--host", "sw-*")  # the guests, their hosts, the switch


def _findings(out: str) -> list[tuple]:
    data = json.loads(out)
    return sorted((r["check"], r["target"], r.get("subject") or "", r["status"], r["summary"],
                   json.dumps(r.get("observed"), sort_keys=True)) for r in data["results"])


def test_replay_of_a_validate_run_gives_the_same_findings(tmp_path, monkeypatch):
    from roce_wizard.lab.control import BackgroundLab
    from roce_wizard.lab.scenarios import Scenario
    from roce_wizard.lab.server import read_env

    runner = BackgroundLab(Scenario("healthy", _world()), tmp_path / "lab")
    runner.start()
    try:
        for k, v in read_env(tmp_path / "lab").items():
            monkeypatch.setenv(k, v)
        monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
        inventory = str(tmp_path / "lab" / "inventory.yaml")
        cli = CliRunner()
        live = cli.invoke(app, ["doctor", "-i", inventory, *HOSTS, "--stage", "validate", "--json", "--timeout", "30"])
    finally:
        runner.stop()
    assert live.exit_code == 0, live.output
    run_dir = next(p for p in (tmp_path / "state" / "runs").iterdir() if p.is_dir())
    first = _findings(live.stdout)
    codes = {(f[0], f[3]) for f in first}
    assert ("RW609", "pass") in codes and ("RW610", "pass") in codes, [f for f in first if f[0] >= "RW609"]
    rw609 = [f for f in first if f[0] == "RW609"]
    assert rw609 and all(t.startswith("sw-") for _c, t, *_ in rw609)  # judged on the switch itself
    assert all(" 0 packets out of" not in f[4] for f in rw609), rw609  # the counters moved between the readings

    replayed = cli.invoke(app, ["doctor", "-i", inventory, *HOSTS, "--stage", "validate", "--json",
                                "--replay", str(run_dir)])
    assert replayed.exit_code == 0, replayed.output
    assert _findings(replayed.stdout) == first
    assert os.path.isdir(run_dir / "raw")
