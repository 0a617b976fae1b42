"""The CLI contract via CliRunner: exit codes, the --json schema, select/skip/stage/host, --since-last."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from roce_wizard.cli import app

runner = CliRunner()
VIBS = (
    "AcceptanceLevel,CreationDate,ID,InstallDate,Name,Platforms,Status,Vendor,Version,\n"
    "PartnerSupported,2021-05-01,MEL_bootbank_mft_4.18.1.14-0,2021-06-01,mft,host,,MEL,4.18.1.14-0,\n"
    "PartnerSupported,2021-05-01,MEL_bootbank_nmst_4.18.1.14-1OEM.700.1.0.15843807,2021-06-01,nmst,host,,MEL,"
    "4.18.1.14-1OEM.700.1.0.15843807,\n"
    "VMwareCertified,2021-05-01,MEL_bootbank_nmlx5-core_4.21.71.101-1OEM.702.0.0.17473468,2021-06-01,nmlx5-core,"
    "host,,MEL,4.21.71.101-1OEM.702.0.0.17473468,\n"
)
VIBS_NO_MFT = "\n".join(line for line in VIBS.splitlines() if "_mft_" not in line and "_nmst_" not in line) + "\n"
VIB_CMD = "esxcli --formatter=csv software vib list"


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(
        "targets:\n"
        "  esxi:\n"
        "    - name: esx-[01-03]\n"
        "      address: 127.0.0.1\n"
        "      roce: {pf_pci: '0000:3b:00.0', vmnics: [vmnic2, vmnic3], vfs: [8, 7]}\n"
    )

    def write(vibs: dict[str, str], unreachable: tuple[str, ...] = ()) -> list[str]:
        targets = {}
        for name in ("esx-01", "esx-02", "esx-03"):
            if name in unreachable:
                targets[name] = {"connect_error": {"kind": "timeout", "message": f"{name}: connect timed out"}}
            else:
                targets[name] = {"commands": {VIB_CMD: {"stdout": vibs.get(name, VIBS)}}}
        rec = tmp_path / "rec.yaml"
        rec.write_text(yaml.safe_dump({"targets": targets}))
        return ["-i", str(inventory), "--replay", str(rec)]

    return write


def doctor(*args: str):
    return runner.invoke(app, ["doctor", *args])


def test_exit_0_when_nothing_fails_and_human_output_groups_by_stage(cluster):
    result = doctor(*cluster({}), "--select", "RW001,RW201,RW204")
    assert result.exit_code == 0, result.output
    assert "PREFLIGHT" in result.output and "ESXI" in result.output
    assert result.output.count("✓ RW201") == 3
    assert "9 passed" in result.output


def test_exit_1_on_failure_with_the_fix_by_hand(cluster):
    result = doctor(*cluster({"esx-02": VIBS_NO_MFT}), "--select", "RW001,RW201")
    assert result.exit_code == 1
    assert "✗ RW201" in result.output and "How to fix by hand" in result.output
    assert "esxcli software vib install -v" in result.output


def test_exit_3_when_a_host_cannot_be_reached_and_nothing_failed(cluster):
    result = doctor(*cluster({}, unreachable=("esx-03",)), "--select", "RW001,RW201", "--json")
    assert result.exit_code == 3
    out = json.loads(result.stdout)
    by = {(r["check"], r["target"]): r for r in out["results"]}
    assert by[("RW001", "esx-03")]["status"] == "error"
    assert by[("RW201", "esx-03")]["status"] == "skip"
    assert by[("RW201", "esx-03")]["blocked_by"] == {"check": "RW001", "target": "esx-03"}


def test_json_schema(cluster):
    result = doctor(*cluster({"esx-01": VIBS_NO_MFT}), "--select", "RW2", "--json")
    out = json.loads(result.stdout)
    assert out["version"] == 1
    for row in out["results"]:
        assert {"check", "slug", "stage", "target", "status", "summary", "observed", "expected", "evidence",
                "fix"} <= set(row)
        assert row["status"] in ("pass", "warn", "fail", "skip", "error")
    assert {"pass", "warn", "fail", "skip", "error", "exit_code", "targets"} <= set(out["summary"])
    assert out["summary"]["exit_code"] == result.exit_code


def test_select_skip_by_code_prefix_and_slug(cluster):
    args = cluster({})
    out = json.loads(doctor(*args, "--select", "mft-installed", "--json").stdout)
    assert {r["check"] for r in out["results"]} == {"RW201"}
    out = json.loads(doctor(*args, "--select", "RW20", "--skip", "RW203,nmlx5-driver", "--json").stdout)
    checks = {r["check"] for r in out["results"]}
    assert "RW201" in checks and not checks & {"RW203", "RW204"} and all(c.startswith("RW20") for c in checks)


def test_stage_and_host_filters(cluster):
    out = json.loads(doctor(*cluster({}), "--stage", "esxi", "--host", "esx-02", "--select", "RW001,RW201",
                            "--json").stdout)
    assert {r["target"] for r in out["results"]} == {"esx-02"}
    assert {r["check"] for r in out["results"]} == {"RW001", "RW201"}  # RW001 kept with --stage


@pytest.mark.parametrize("args, message", [
    (["--select", "RW999"], "matches no check"),
    (["--stage", "firmware"], "expected one of"),
    (["--host", "nope-*"], "no target matches"),
])
def test_usage_errors_exit_2(cluster, args, message):
    result = doctor(*cluster({}), *args)
    assert result.exit_code == 2 and message in result.output


def test_inventory_error_exit_2_names_file_and_line(tmp_path):
    bad = tmp_path / "inv.yaml"
    bad.write_text("targets:\n  esxi:\n    - name: esx-01\n      roce: {vfs: eight}\n")
    result = doctor("-i", str(bad))
    assert result.exit_code == 2 and "inv.yaml:4" in result.output and "vfs" in result.output


def test_since_last_shows_what_changed(cluster):
    doctor(*cluster({"esx-02": VIBS_NO_MFT}), "--select", "RW001,RW201")
    result = doctor(*cluster({}), "--select", "RW001,RW201", "--since-last", "--json")
    changes = json.loads(result.stdout)["changes"]
    assert changes == [{"check": "RW201", "target": "esx-02", "subject": None, "before": "fail", "after": "pass",
                        "summary": changes[0]["summary"]}]


def test_explain_prints_the_sections():
    result = runner.invoke(app, ["explain", "RW208"])
    assert result.exit_code == 0
    for section in ("What it checks", "Why it matters", "How to fix by hand", "Fix safety"):
        assert section in result.output
    assert runner.invoke(app, ["explain", "num-vfs-covers-max-vfs"]).output == result.output
    assert runner.invoke(app, ["explain", "RW999"]).exit_code == 2


def test_an_unresolvable_password_is_an_auth_error_not_a_crash(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("RW_TEST_UNSET_PASSWORD", raising=False)
    inv = tmp_path / "inv.yaml"
    inv.write_text("targets:\n  esxi:\n    - name: esx-01\n      address: 127.0.0.1\n      port: 9\n"
                   "      use_agent: false\n      password: {env: RW_TEST_UNSET_PASSWORD}\n")
    result = doctor("-i", str(inv), "--select", "RW001", "--json", "--known-hosts", str(tmp_path / "kh"))
    assert result.exit_code == 3
    (row,) = json.loads(result.stdout)["results"]
    assert row["status"] == "error" and "RW_TEST_UNSET_PASSWORD" in json.dumps(row)
