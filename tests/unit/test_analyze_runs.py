"""`analyze` on a run directory and on its support bundle: the tool's own records are read as what they
are, the run's results come back as findings in the run's FINAL state, and a bundle's members are named by
their path inside it (issue 13, "a support bundle must round-trip")."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

from typer.testing import CliRunner

from roce_wizard.cli import app

runner = CliRunner()


def _finding(check: str, status: str, subject: str | None, summary: str) -> dict:
    return {"type": "finding", "ts": 1.0, "stage": "esxi", "check": check, "status": status, "target": "esx-01",
            "subject": subject, "summary": summary, "observed": None, "expected": None, "evidence": [],
            "fix": None, "blocked_by": None, "details": {}}


def fix_run(tmp_path: Path) -> Path:
    """A `fix` run: round 1 fails RW209 on one port, the fix, round 2 passes RW209 for the host."""
    run = tmp_path / "runs" / "20261126-120000-abcdef"
    (run / "raw" / "esx-01").mkdir(parents=True)
    (run / "raw" / "bmc-esx-01").mkdir(parents=True)
    events = [
        {"type": "run-start", "ts": 0.0, "kind": "fix"},
        {"type": "plan", "ts": 0.1, "targets": ["esx-01"], "checks": ["RW209"]},
        _finding("RW209", "fail", "vmnic2", "PFC is off on vmnic2 (pfctx=0x00)"),
        {"type": "run-end", "ts": 0.2, "exit_code": 1, "counts": {"fail": 1}},
        {"type": "fix-step", "ts": 0.3, "target": "esx-01", "check": "RW209", "exit_status": 0, "command": "esxcli …"},
        {"type": "plan", "ts": 0.4, "targets": ["esx-01"], "checks": ["RW209"]},
        _finding("RW209", "pass", None, "PFC on priority 3 on every RoCE port"),
        {"type": "run-end", "ts": 0.5, "exit_code": 0, "counts": {"pass": 1}},
    ]
    (run / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    (run / "raw" / "bmc-esx-01" / "connect.json").write_text(json.dumps(
        {"connect_error": {"kind": "refused", "message": "connection refused by 127.0.0.1:9"}}))
    (run / "raw" / "esx-01" / "esxi_power_policy.json").write_text(json.dumps(
        {"command": "esxcli --formatter=csv system settings advanced list -o /Power/CpuPolicy", "stdout": "",
         "stderr": "sh: esxcli: not found\n", "exit_status": 127, "duration_s": 0.01, "timed_out": False}))
    return run


def analyze_json(*args: str) -> tuple[int, dict]:
    result = runner.invoke(app, ["analyze", "--json", *args])
    return result.exit_code, json.loads(result.stdout)


def test_the_tools_own_failed_records_are_named_not_unrecognised(tmp_path):
    run = fix_run(tmp_path)
    _, out = analyze_json(str(run))
    by_name = {Path(f["path"]).relative_to(run).as_posix(): f for f in out["files"]}
    connect = by_name["raw/bmc-esx-01/connect.json"]
    assert connect["kind"] == "run-record" and "could not connect (refused)" in connect["error"]
    failed = by_name["raw/esx-01/esxi_power_policy.json"]
    assert failed["kind"] == "esxi_power_policy" and failed["error"].startswith("the command failed (exit 127)")
    assert "esxcli: not found" in failed["error"]
    assert not [f for f in out["files"] if f["kind"] == "unknown"]


def test_a_fix_runs_results_are_its_final_state(tmp_path):
    run = fix_run(tmp_path)
    code, out = analyze_json(str(run))
    (results,) = [f for f in out["files"] if f["kind"] == "run-results"]
    assert [(x["check"], x["status"], x["subject"]) for x in results["findings"]] == [("RW209", "pass", None)]
    assert code == 0  # the run ended green: the first round's port failure is history, not a finding


def test_the_bundles_summary_reports_the_final_round(tmp_path, monkeypatch):
    run = fix_run(tmp_path)
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    out = tmp_path / "b.tar.gz"
    assert runner.invoke(app, ["export", "--run", str(run), "-o", str(out)]).exit_code == 0
    with tarfile.open(out) as tar:
        summary = tar.extractfile(f"roce-wizard-bundle-{run.name}/summary.md").read().decode()
    assert ("- result: 1 passed, 0 warnings, 0 failed, 0 could not run, 0 skipped (final state; the run ended with "
            "exit code 0)") in summary
    assert "vmnic2" not in summary


def test_analyze_bundle_names_members_inside_it_and_matches_the_run_dir(tmp_path, monkeypatch):
    run = fix_run(tmp_path)
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    out = tmp_path / "b.tar.gz"
    assert runner.invoke(app, ["export", "--run", str(run), "-o", str(out)]).exit_code == 0
    direct_code, direct = analyze_json(str(run))
    back_code, back = analyze_json(str(out))
    top = f"{out}:roce-wizard-bundle-{run.name}/"
    assert all(f["path"].startswith(top) for f in back["files"]), [f["path"] for f in back["files"]]
    inside = {f["path"].removeprefix(top): (f["kind"], f["error"]) for f in back["files"]}
    assert inside == {Path(f["path"]).relative_to(run).as_posix().replace("events.jsonl", "results.json"):
                      (f["kind"], f["error"]) for f in direct["files"]}
    assert back_code == direct_code == 0
    human = runner.invoke(app, ["analyze", str(out)]).output
    assert "/tmp" not in human.replace(str(tmp_path), "") and "not recognised" not in human


def test_a_torn_or_hostile_results_json_is_said_not_a_traceback(tmp_path):
    run = fix_run(tmp_path)
    (run / "results.json").write_text("[" * 100_000 + "]" * 100_000)  # nested deeper than json can walk
    result = runner.invoke(app, ["analyze", "--json", str(run)])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    (entry,) = [f for f in json.loads(result.stdout)["files"] if f["kind"] == "run-results"]
    assert entry["error"] == "the run's results could not be read" and entry["findings"] == []


def test_a_runs_per_item_records_are_judged_together_as_the_run_held_them(tmp_path, monkeypatch):
    """One VF list per vmnic (raw/esx-01/esxi_sriovnic_vf_list.vmnic2.json, .vmnic3.json): RW215 reads them
    as {vmnic: list}, as doctor did, not each alone ("vmnic3: its VF list was not read") nor the later for both."""
    from tests.unit.test_bundle import SAMPLE

    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    doctor = runner.invoke(app, ["doctor", "-i", str(SAMPLE / "inventory.yaml"), "--replay",
                                 str(SAMPLE / "recordings.yaml"), "--json"])
    (run,) = [p for p in (tmp_path / "state" / "runs").iterdir() if p.is_dir()]
    said = {(r["subject"], r["status"]) for r in json.loads(doctor.stdout)["results"]
            if r["check"] == "RW215" and r["target"] == "esx-01"}
    _, out = analyze_json(str(run / "raw" / "esx-01"))
    per_file = [{(x["subject"], x["status"]) for x in f["findings"] if x["check"] == "RW215"}
                for f in out["files"] if "esxi_sriovnic_vf_list." in f["path"]]
    assert said == {("vmnic2", "pass"), ("vmnic3", "pass")}
    assert per_file == [said, said]  # (doctor's wanted counts come from the inventory, analyze's from max_vfs)


def test_export_takes_the_run_that_ended_last_when_two_started_in_one_second(tmp_path, monkeypatch):
    """A doctor, then a fix in the same second: the fix is the newest run whatever its random name part."""
    import os

    from roce_wizard.records.bundle import find_run

    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    runs = tmp_path / "state" / "runs"
    doctor, fix = runs / "20261126-130754-ffffff", runs / "20261126-130754-000000"
    for run, ns in ((doctor, 1_000_000_000), (fix, 2_000_000_000)):
        (run / "raw").mkdir(parents=True)
        (run / "events.jsonl").write_text('{"type": "run-start"}\n')
        os.utime(run / "events.jsonl", ns=(ns, ns))
    (runs / "latest").write_text(doctor.name + "\n")  # only doctor writes `latest`
    assert find_run(None) == fix
