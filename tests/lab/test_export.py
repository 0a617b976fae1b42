"""`roce-wizard export` after a real doctor run against the practice lab (SSH hosts and guests, an EOS
switch over netmiko whose password lives in the lab's lab.env): canary secrets in the inventory and the
environment, and the lab's own credentials, never reach the bundle; --anonymize leaves no lab hostname
or address; analyze reads the bundle back with the findings it reads from the run dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from collections import Counter
from collections.abc import Iterator

import pytest
import yaml
from typer.testing import CliRunner

from roce_wizard.cli import app
from roce_wizard.lab.control import BackgroundLab
from roce_wizard.lab.scenarios import Scenario, healthy
from roce_wizard.lab.server import read_env
from tests.unit.test_bundle import PLAIN_PW, TOKEN, assert_no_canary, bundle_blobs

runner = CliRunner()


@pytest.fixture(scope="module")
def lab_run(tmp_path_factory) -> Iterator[dict]:
    """One lab, one doctor run (module-scoped: the lab is the slow part)."""
    mp = pytest.MonkeyPatch()
    tmp = tmp_path_factory.mktemp("export-lab")
    mp.setenv("ROCE_WIZARD_STATE_DIR", str(tmp / "state"))
    background = BackgroundLab(Scenario("healthy", healthy(2, "eos")), tmp / "lab",
                               services=("roce_wizard.lab.switch",))
    lab = background.start()
    try:
        lab_env = read_env(tmp / "lab")
        assert lab_env, "the switch service keeps its password in lab.env"
        for key, value in lab_env.items():
            mp.setenv(key, value)
        mp.setenv("SUPPORT_API_TOKEN", TOKEN)  # a credential in the environment under a secret-looking name
        inv = yaml.safe_load((tmp / "lab" / "inventory.yaml").read_text())
        # canaries in the inventory: a secret-named option, and a plaintext password on an unreachable
        # bare-metal host (its RW001 fails with the connection error, the password is never sent)
        first = inv["targets"]["esxi"][0]
        first["options"] = {**(first.get("options") or {}), "x_api_token": TOKEN}
        inv["targets"].setdefault("linux", []).append(
            {"name": "canary-node", "address": "127.0.0.1", "port": 9, "password": PLAIN_PW})
        inventory = tmp / "inventory.yaml"
        inventory.write_text(yaml.safe_dump(inv))
        result = runner.invoke(app, ["doctor", "-i", str(inventory)])
        assert result.exit_code in (1, 3), result.output  # canary-node cannot be reached
        assert "canary-node" in result.output
        (run,) = [p for p in (tmp / "state" / "runs").iterdir() if p.is_dir()]
        yield {"tmp": tmp, "run": run, "inventory": inventory, "lab_env": lab_env, "lab": lab,
               "key": (tmp / "lab" / "id_ed25519").read_text()}
    finally:
        background.stop()
        mp.undo()


def _lab_secrets(ctx: dict) -> tuple[str, ...]:
    key_lines = tuple(ln for ln in ctx["key"].splitlines() if ln and not ln.startswith("-----"))
    return (PLAIN_PW, TOKEN, *ctx["lab_env"].values(), *key_lines)


def test_a_real_doctor_runs_bundle_holds_no_secret(lab_run):
    out = lab_run["tmp"] / "bundle.tar.gz"
    result = runner.invoke(app, ["export", "-o", str(out)])  # the newest run, its recorded inventory
    assert result.exit_code == 0, result.output
    assert_no_canary(out, _lab_secrets(lab_run))
    with tarfile.open(out) as tar:
        top = f"roce-wizard-bundle-{lab_run['run'].name}"
        names = tar.getnames()
        inventory = yaml.safe_load(tar.extractfile(f"{top}/inventory.yaml"))
        versions = json.load(tar.extractfile(f"{top}/versions.json"))
    switch = inventory["targets"]["switch"][0]
    assert set(switch["password"]) == {"env"}  # the lab's switch password, by reference
    assert [t["password"] for t in inventory["targets"]["linux"] if t["name"] == "canary-node"] == ["<redacted>"]
    assert any(n.startswith(f"{top}/raw/esx-01/") for n in names)
    assert any(n.startswith(f"{top}/raw/{switch['name']}/") for n in names)
    assert any(n.startswith(f"{top}/sessions/") for n in names)  # netmiko's session log, redacted too
    # versions as the lab's ESXi outputs print them
    esx = versions["hosts"]["esx-01"]
    assert esx["esxi_build"].startswith("VMware ESXi") and esx["firmware"] != "unknown" and esx["driver"] != "unknown"


def test_anonymized_lab_bundle_names_no_lab_host_or_address(lab_run):
    out = lab_run["tmp"] / "anon.tar.gz"
    result = runner.invoke(app, ["export", "--run", str(lab_run["run"]), "-o", str(out), "--anonymize"])
    assert result.exit_code == 0, result.output
    assert_no_canary(out, _lab_secrets(lab_run))
    inv = yaml.safe_load(lab_run["inventory"].read_text())
    originals = {t["name"] for kind in inv["targets"].values() for t in kind} | {"127.0.0.1"}
    originals |= {t.get("address") for kind in inv["targets"].values() for t in kind if t.get("address")}
    for where, blob in bundle_blobs(out):
        if where == "<archive.tar.gz>":
            continue
        text = blob.decode("utf-8", errors="replace")
        for original in originals:
            assert original not in text, f"{original} left in {where}"


def _findings(payload: dict) -> Counter:
    return Counter((f["kind"], x["check"], x["status"], x["summary"]) for f in payload["files"] for x in f["findings"])


def test_analyze_reads_the_lab_bundle_back(lab_run):
    out = lab_run["tmp"] / "readback.tar.gz"
    assert runner.invoke(app, ["export", "--run", str(lab_run["run"]), "-o", str(out)]).exit_code == 0
    # the bundle judges what the run dir judges: its results, raw records and switch session logs
    direct = json.loads(runner.invoke(app, ["analyze", "--json", str(lab_run["run"])]).stdout)
    back = json.loads(runner.invoke(app, ["analyze", "--json", str(out)]).stdout)
    assert _findings(direct) and _findings(back) == _findings(direct)
    assert any("/sessions/" in f["path"] for f in back["files"])
    # and the healthy lab's own findings are what doctor said: no failure on esx-01's recorded outputs
    assert not [x for f in back["files"] if "/raw/esx-01/" in f["path"] for x in f["findings"] if x["status"] == "fail"]


def test_a_fixed_lab_runs_bundle_reads_back_as_the_runs_final_state(tmp_path, monkeypatch):
    """`lab up --detach` (a process of its own), doctor, fix, export, then `analyze BUNDLE --json`."""
    env = {**os.environ, "ROCE_WIZARD_STATE_DIR": str(tmp_path / "state")}
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", env["ROCE_WIZARD_STATE_DIR"])
    lab_dir = tmp_path / "lab"
    up = subprocess.run([sys.executable, "-m", "roce_wizard.cli", "lab", "up", "--detach", "--dir", str(lab_dir),
                         "--hosts", "1", "--fault", "RW202@esx-01"], env=env, capture_output=True, text=True,
                        timeout=60)
    assert up.returncode == 0, up.stderr + up.stdout
    try:
        inventory = str(lab_dir / "inventory.yaml")
        doctor = runner.invoke(app, ["doctor", "-i", inventory])
        assert "RW202" in doctor.output  # mst not started: a safe fix (RW213's plan is manual words now)
        fixed = runner.invoke(app, ["fix", "-i", inventory, "--yes"])
        assert fixed.exit_code == 0 and "✓ esx-01 RW202" in fixed.output, fixed.output
        out = tmp_path / "fixed.tar.gz"
        assert runner.invoke(app, ["export", "-o", str(out)]).exit_code == 0  # the newest run: the fix
    finally:
        subprocess.run([sys.executable, "-m", "roce_wizard.cli", "lab", "down", "--dir", str(lab_dir)], env=env,
                       capture_output=True, text=True, timeout=60)
    result = runner.invoke(app, ["analyze", "--json", str(out)])
    back = json.loads(result.stdout)
    with tarfile.open(out) as tar:
        top = next(n for n in tar.getnames() if "/" not in n)
    assert all(f["path"].startswith(f"{out}:{top}/") for f in back["files"])  # never a temporary path
    assert not [f["path"] for f in back["files"] if f["kind"] == "unknown"]  # the tool's own records are named
    (results,) = [f for f in back["files"] if f["kind"] == "run-results"]
    rw202 = [(x["target"], x["status"]) for x in results["findings"] if x["check"] == "RW202"]
    assert rw202 == [("esx-01", "pass")]  # the fix's final round, not the warning it fixed
    refused = [f for f in back["files"] if f["kind"] == "run-record"]
    assert refused and all(f["error"].startswith("could not connect") for f in refused)
    # esx-01's recorded outputs are those of the final round: mst judged after the fix
    mst = [x["status"] for f in back["files"] if f["path"].endswith("/raw/esx-01/mst_status.json")
           for x in f["findings"] if x["check"] == "RW202"]
    assert mst == ["pass"]
