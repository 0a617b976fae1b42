"""Issue 16 item 2: the run log's costs per probe result (a 64-host doctor writes ~2,000 raw records).

- raw/<target>/ is made (mkdir + chmod) once per target and run, not once per record; a new file is created
  0600 by its open() and is not chmod'ed again; a file that existed is made 0600;
- raw records and results.json are compact JSON (json's C encoder; `indent` turns it off), and every reader
  of a run directory reads them: `doctor --replay RUN_DIR`, `analyze RUN_DIR`, `export --run RUN_DIR`;
- the modes stay private: directories 0700, files 0600, also under a umask of 0.
"""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roce_wizard.cli import app
from roce_wizard.records.runlog import RunLog

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "examples" / "sample-cluster"
runner = CliRunner()

RECORD = {"command": "esxcli --formatter=csv software vib list", "stdout": "Name,Version\nnmlx5-core,4.23\n",
          "stderr": "", "exit_status": 0, "duration_s": 0.01, "timed_out": False}


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


class Calls:
    """Counts the calls of a real os function (it still runs): a spy, nothing is faked."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, name: str):
        self.paths: list[str] = []
        real = getattr(os, name)

        def spy(path, *args, **kw):
            self.paths.append(str(path))
            return real(path, *args, **kw)

        monkeypatch.setattr(os, name, spy)


def test_each_targets_raw_directory_is_made_once_and_new_files_are_not_chmoded(tmp_path, monkeypatch):
    run = RunLog.create(tmp_path)
    mkdirs, chmods = Calls(monkeypatch, "mkdir"), Calls(monkeypatch, "chmod")
    for i in range(20):
        for target in ("esx-01", "bmc-esx-01"):
            run.raw(target, f"probe_{i}", {**RECORD, "seq": i})
    run.close()
    raw = run.path / "raw"
    assert sorted(mkdirs.paths) == sorted([str(raw / "bmc-esx-01"), str(raw / "esx-01")])
    assert sorted(chmods.paths) == sorted(mkdirs.paths)  # the directories, once each; no file
    assert {mode(raw / t) for t in ("esx-01", "bmc-esx-01")} == {0o700}
    files = sorted(raw.rglob("*.json"))
    assert len(files) == 40 and {mode(f) for f in files} == {0o600}


def test_files_are_private_under_any_umask_and_one_that_existed_becomes_0600(tmp_path):
    old = os.umask(0)  # the most permissive umask: the modes asked for are the modes made
    try:
        run = RunLog.create(tmp_path)
        path = run.raw("esx-01", "esxi_vib_list", RECORD)
        assert mode(path) == 0o600 and mode(path.parent) == 0o700
        assert mode(run.path) == 0o700 and mode(run.path / "raw") == 0o700
        path.chmod(0o644)  # written again (a probe asked twice): private again
        assert mode(run.raw("esx-01", "esxi_vib_list", {**RECORD, "seq": 2})) == 0o600
        run.write_results({"version": 1, "results": []})
        assert mode(run.path / "results.json") == 0o600 and mode(run.path.parent / "latest") == 0o600
        run.close()
        assert mode(run.path / "events.jsonl") == 0o600
    finally:
        os.umask(old)


def test_raw_records_are_compact_json_holding_the_record(tmp_path):
    run = RunLog.create(tmp_path)
    record = {**RECORD, "stderr": "réglé ✓\n"}
    text = run.raw("esx-01", "esxi_vib_list", record).read_text(encoding="utf-8")
    run.write_results({"version": 1, "results": [{"check": "RW201", "status": "pass"}]})
    run.close()
    assert json.loads(text) == record
    assert text == json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    results = (run.path / "results.json").read_text(encoding="utf-8")
    assert "\n" not in results and json.loads(results)["results"] == [{"check": "RW201", "status": "pass"}]


def test_every_reader_of_a_run_directory_reads_the_compact_files(tmp_path, monkeypatch):
    """A real run (doctor --replay of the sample cluster) read back by replay, analyze and export."""
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    inventory = SAMPLE / "inventory.yaml"
    first = runner.invoke(app, ["doctor", "-i", str(inventory), "--replay", str(SAMPLE / "recordings.yaml"),
                                "--json"])
    (run,) = [p for p in (tmp_path / "state" / "runs").iterdir() if p.is_dir()]
    records = sorted((run / "raw").rglob("*.json"))
    assert len(records) > 20 and all(b"\n" not in f.read_bytes() for f in records)  # compact, every one
    assert b"\n" not in (run / "results.json").read_bytes()

    # doctor --replay RUN_DIR: the same verdicts from what the run recorded
    again = runner.invoke(app, ["doctor", "-i", str(inventory), "--replay", str(run), "--json"])
    assert again.exit_code == first.exit_code

    def verdicts(out: str) -> list[tuple[str, str, str | None, str]]:
        return sorted((r["check"], r["target"], r.get("subject"), r["status"]) for r in json.loads(out)["results"])

    assert verdicts(again.stdout) == verdicts(first.stdout)
    assert json.loads((run / "results.json").read_text())["results"] == json.loads(first.stdout)["results"]

    # analyze RUN_DIR: each record is read as its probe's output; the run's results come back as findings
    analyzed = runner.invoke(app, ["analyze", "--json", str(run)])
    files = json.loads(analyzed.stdout)["files"]
    by_name = {Path(f["path"]).relative_to(run).as_posix(): f for f in files}
    vibs = by_name["raw/esx-01/esxi_vib_list.json"]
    assert vibs["kind"] == "esxi_vib_list" and not vibs.get("error")
    assert by_name["results.json"]["kind"] == "run-results" and not by_name["results.json"].get("error")

    # export --run RUN_DIR: the bundle holds the records and the results, readable JSON
    out = tmp_path / "bundle.tar.gz"
    exported = runner.invoke(app, ["export", "--run", str(run), "-o", str(out)])
    assert exported.exit_code == 0, exported.output
    with tarfile.open(out) as tar:
        members = {m.name.split("/", 1)[1]: m for m in tar.getmembers() if "/" in m.name and m.isfile()}
        bundled = json.loads(tar.extractfile(members["results.json"]).read())
        record = json.loads(tar.extractfile(members["raw/esx-01/esxi_vib_list.json"]).read())
    assert bundled["results"] == json.loads(first.stdout)["results"]
    assert record["command"] == json.loads((run / "raw" / "esx-01" / "esxi_vib_list.json").read_text())["command"]
