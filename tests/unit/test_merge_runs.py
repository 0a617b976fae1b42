"""Many nodes' run directories, one report (roce_wizard/records/merge.py): `doctor --local` runs made in
subprocesses with their own ROCE_WIZARD_STATE_DIR (as srun/pdsh leave them, collected as runs/<node>/), merged
by `analyze` and `export`. Every node here is this machine, so the runs share one target (the hostname): the
newest run wins and the older ones are said to be superseded. Different targets: tests/lab/test_merge_lab.py."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roce_wizard.cli import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def local_run(state: Path, *select: str) -> dict:
    """`roce-wizard doctor --local --json` in a process of its own, its run directory under `state`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ROCE_WIZARD_STATE_DIR": str(state)}
    args = [sys.executable, "-m", "roce_wizard.cli", "doctor", "--local", "--json"]
    for code in select:
        args += ["--select", code]
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode in (0, 1, 3), proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> dict:
    """Three nodes' state dirs collected under runs/: node-a and node-b check RW0 (RW001-RW003), node-c
    (the newest) checks RW1 (BIOS) only."""
    base = tmp_path_factory.mktemp("merge")
    results = {name: local_run(base / "runs" / name, code) for name, code in
               (("node-a", "RW0"), ("node-b", "RW0"), ("node-c", "RW1"))}
    return {"base": base, "results": results}


def test_analyze_merges_a_directory_of_node_runs_into_one_report(collected):
    base, newest = collected["base"], collected["results"]["node-c"]
    result = runner.invoke(app, ["analyze", "--json", str(base / "runs")])
    merged = json.loads(result.stdout)
    host = socket.gethostname()
    # one target, its verdicts from the newest run only (node-c's BIOS checks, none of the older RW0 rows)
    assert {r["target"] for r in merged["results"]} - {"all targets"} == {host}
    assert sorted((r["check"], r["status"]) for r in merged["results"]) == \
        sorted((r["check"], r["status"]) for r in newest["results"])
    for status in ("pass", "warn", "fail", "skip", "error"):
        assert merged["summary"][status] == newest["summary"][status]
    assert merged["summary"]["targets"] == 1 and merged["summary"]["runs"] == 3
    assert merged["summary"]["exit_code"] == newest["summary"]["exit_code"] == result.exit_code
    newest_dir = newest["summary"]["run_dir"]
    assert {(s["target"], s["by"]) for s in merged["merged"]["superseded"]} == {(host, newest_dir)}
    assert len(merged["merged"]["superseded"]) == 2
    assert merged["merged"]["left_out"] == []  # runs/<node>/runs/latest is the state dir's own pointer

    text = runner.invoke(app, ["analyze", str(base / "runs" / "node-a"), str(base / "runs" / "node-c")]).stdout
    assert text.startswith("merged 2 run directories: 1 target from 1 run, 1 superseded by a newer run")
    assert f"{host}: {collected['results']['node-a']['summary']['run_dir']} superseded by the newer {newest_dir}" \
        in text
    assert "RW102" in text and "RW001" not in text  # doctor's own report of the kept rows


def test_one_run_directory_is_analyzed_as_before(collected):
    # a single run dir is not a merge: its raw outputs are judged again, file by file
    state = collected["base"] / "runs" / "node-a"
    data = json.loads(runner.invoke(app, ["analyze", "--json", str(state)]).stdout)
    assert "files" in data and "merged" not in data
    assert any(f["kind"] == "run-results" for f in data["files"])


def test_export_bundles_the_merged_report_and_every_run_redacted(collected, tmp_path):
    base = collected["base"]
    # a secret in one node's recorded output (a `password=` form): the single-run redaction removes it
    raw = next((base / "runs" / "node-b").rglob("raw/*/*.json"))
    record = json.loads(raw.read_text())
    record["stdout"] += "\nbmc password=Hunter2-merge-canary\n"
    raw.write_text(json.dumps(record))
    out = tmp_path / "merged.tar.gz"
    result = runner.invoke(app, ["export", "--run", str(base / "runs"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "redacted: 1 " in result.stdout
    with tarfile.open(out) as tar:
        names = tar.getnames()
        blobs = {n: tar.extractfile(n).read() for n in names if tar.getmember(n).isfile()}
    assert not any(b"Hunter2-merge-canary" in b for b in blobs.values())
    top = names[0]
    assert top.startswith("roce-wizard-bundle-merged-3runs-")
    merged = json.loads(blobs[f"{top}/results.json"])
    newest = collected["results"]["node-c"]
    assert merged["summary"]["fail"] == newest["summary"]["fail"] and merged["summary"]["runs"] == 3
    assert sorted(r["check"] for r in merged["results"]) == sorted(r["check"] for r in newest["results"])
    per_run = sorted(n for n in names if n.count("/") == 3 and n.endswith("/results.json"))
    assert len(per_run) == 3  # each run's own results, events and raw outputs, as its own bundle holds them
    assert f"{top}/summary.md" in blobs and b"merged-3runs" in blobs[f"{top}/summary.md"]
    manifest = json.loads(blobs[f"{top}/bundle.json"])
    assert [r["used_for"] for r in manifest["merged"]["runs"]][-1] != []
    # the bundle reads back in analyze as one run: the merged report's rows
    tar_dir = tmp_path / "x"
    with tarfile.open(out) as tar:
        tar.extractall(tar_dir, filter="data")
    back = json.loads(runner.invoke(app, ["analyze", "--json", str(tar_dir / top)]).stdout)
    (results_file,) = [f for f in back["files"] if f["kind"] == "run-results"]
    assert len(results_file["findings"]) == len(newest["results"])


def test_anonymize_is_refused_on_a_merge(collected, tmp_path):
    result = runner.invoke(app, ["export", "--run", str(collected["base"] / "runs"), "--anonymize",
                                 "-o", str(tmp_path / "x.tar.gz")])
    assert result.exit_code == 2 and "--anonymize exports one run at a time" in result.output


def test_a_run_stopped_before_any_verdict_is_said_and_counts_as_could_not_run(collected, tmp_path):
    # a node's doctor killed right after it started: its journal's first line and an empty raw/, nothing else
    real = next((collected["base"] / "runs" / "node-c" / "runs").glob("2*"))
    killed = tmp_path / "node-d" / "runs" / "20261126-235959-dead00"
    (killed / "raw").mkdir(parents=True)
    (killed / "events.jsonl").write_text((real / "events.jsonl").read_text().splitlines()[0] + "\n")
    result = runner.invoke(app, ["analyze", str(real), str(killed)])
    # doctor's rules: a failure (exit 1) still beats a node that could not be checked (3)
    assert result.exit_code == (1 if collected["results"]["node-c"]["summary"]["fail"] else 3)
    assert f"? {killed}: it recorded no verdict (stopped before the checks ended?)" in result.stdout
    alone = runner.invoke(app, ["analyze", "--json", str(real), str(killed)])
    data = json.loads(alone.stdout)
    assert [r["error"] for r in data["merged"]["runs"] if r.get("error")] == \
        ["it recorded no verdict (stopped before the checks ended?)"]
    export = runner.invoke(app, ["export", "--run", str(real), "--run", str(killed), "-o", str(tmp_path / "x.tar.gz")])
    assert export.exit_code == 2 and "it recorded no verdict" in export.output
