"""Merging run directories of DIFFERENT targets (roce_wizard/records/merge.py) made by real doctor runs against
the practice lab, one run directory per "node" (--host selection) in a state dir of its own, as a fan-out
leaves them: esx-01, esx-02, then esx-01 again (the newest, which supersedes the first)."""

from __future__ import annotations

import json
import tarfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roce_wizard.cli import app
from roce_wizard.lab.control import BackgroundLab
from roce_wizard.lab.scenarios import Scenario, healthy

runner = CliRunner()
CROSS = "all targets"


@pytest.fixture(scope="module")
def node_runs(tmp_path_factory) -> Iterator[dict]:
    tmp = tmp_path_factory.mktemp("merge-lab")
    background = BackgroundLab(Scenario("healthy", healthy(2)), tmp / "lab", services=())
    background.start()
    mp = pytest.MonkeyPatch()
    try:
        results = {}
        for node, host in (("first", "esx-01"), ("second", "esx-02"), ("third", "esx-01")):
            mp.setenv("ROCE_WIZARD_STATE_DIR", str(tmp / "collected" / node))
            result = runner.invoke(app, ["doctor", "-i", str(tmp / "lab" / "inventory.yaml"), "--host", host,
                                         "--skip", "RW6", "--json"])
            assert result.exit_code in (0, 1, 3), result.output
            results[node] = json.loads(result.stdout)
        yield {"tmp": tmp, "results": results}
    finally:
        mp.undo()
        background.stop()


def _key(row: dict) -> tuple:
    return row["check"], row["target"], row.get("subject") or "", row["status"]


def test_analyze_merges_two_hosts_runs_and_the_newest_run_of_a_host_wins(node_runs):
    res = node_runs["results"]
    result = runner.invoke(app, ["analyze", "--json", str(node_runs["tmp"] / "collected")])
    merged = json.loads(result.stdout)
    expected = [r for r in res["third"]["results"] if r["target"] == "esx-01"] + \
               [r for r in res["second"]["results"] if r["target"] == "esx-02"]
    cross = [r for r in res["third"]["results"] if r["target"] == CROSS]
    assert sorted(map(_key, merged["results"])) == sorted(map(_key, expected + cross))
    counts = Counter(r["status"] for r in expected + cross)
    for status in ("pass", "warn", "fail", "skip", "error"):
        assert merged["summary"][status] == counts[status]
    assert merged["summary"]["targets"] == 2 and merged["summary"]["runs"] == 3
    code = 1 if counts["fail"] else 3 if counts["error"] else 0
    assert merged["summary"]["exit_code"] == code == result.exit_code
    assert merged["merged"]["superseded"] == [{"target": "esx-01", "run": res["first"]["summary"]["run_dir"],
                                               "by": res["third"]["summary"]["run_dir"]}]
    text = runner.invoke(app, ["analyze", str(node_runs["tmp"] / "collected")]).stdout
    assert text.startswith("merged 3 run directories: 2 targets from 2 runs, 1 superseded by a newer run")
    assert "\n  esx-01\n" in text and "\n  esx-02\n" in text  # doctor's report, per target


def test_export_writes_one_bundle_of_the_merged_runs(node_runs, tmp_path):
    collected = node_runs["tmp"] / "collected"
    out = tmp_path / "fleet.tar.gz"
    result = runner.invoke(app, ["export", "--run", str(collected / "first"), "--run", str(collected / "second"),
                                 "--run", str(collected / "third"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    with tarfile.open(out) as tar:
        top = tar.getnames()[0]
        results = json.loads(tar.extractfile(f"{top}/results.json").read())
        names = tar.getnames()
    assert {r["target"] for r in results["results"]} - {CROSS} == {"esx-01", "esx-02"}
    assert results["summary"]["superseded"] == 1
    assert {Path(n).parts[2] for n in names if n.startswith(f"{top}/runs/") and n.count("/") >= 3} == \
        {f"esx-0{i}-{Path(node_runs['results'][node]['summary']['run_dir']).name}"
         for i, node in ((1, "first"), (2, "second"), (1, "third"))}
