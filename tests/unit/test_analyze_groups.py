"""`analyze DIR`: two files of one kind are judged each on its own (no "later one wins"), and files that
name different hosts (a pasted prompt, a host in the file name) are never judged together (issue 13)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from roce_wizard.cli import app
from tests.unit.test_analyze import MLXCONFIG_E, MODULE_PARAMS

runner = CliRunner()
SIXTEEN = MLXCONFIG_E  # NUM_OF_VFS 16 covers max_vfs 0+0+8+7
FIFTEEN = MLXCONFIG_E.replace("16              16", "15              15")


def analyze_json(path: Path) -> tuple[int, dict]:
    result = runner.invoke(app, ["analyze", "--json", str(path)])
    return result.exit_code, json.loads(result.stdout)


def rw208(out: dict) -> dict[str, list[tuple[str, list[str] | None]]]:
    return {Path(f["path"]).name: [(x["status"], [Path(n).name for n in x.get("files", [])] or None)
                                   for x in f["findings"] if x["check"] == "RW208"] for f in out["files"]}


def test_two_queries_of_one_kind_are_each_judged_not_the_later_one_for_both(tmp_path):
    (tmp_path / "a-query.txt").write_text(SIXTEEN)
    (tmp_path / "b-query.txt").write_text(FIFTEEN)
    (tmp_path / "module.txt").write_text(MODULE_PARAMS)
    code, out = analyze_json(tmp_path)
    got = rw208(out)
    assert got["a-query.txt"] == [("pass", ["a-query.txt", "module.txt"])]
    assert got["b-query.txt"] == [("fail", ["b-query.txt", "module.txt"])]
    # the module params were read with each query: both verdicts, each naming the query it came from
    assert sorted(got["module.txt"]) == [("fail", ["b-query.txt", "module.txt"]),
                                         ("pass", ["a-query.txt", "module.txt"])]
    assert code == 1
    human = runner.invoke(app, ["analyze", str(tmp_path)]).output
    assert "(with " in human and "b-query.txt" in human
    # one file per kind: judged together as before, no file notes
    (tmp_path / "b-query.txt").unlink()
    _, out = analyze_json(tmp_path)
    assert rw208(out)["a-query.txt"] == [("pass", None)]


def test_prompts_naming_different_hosts_are_never_joined(tmp_path):
    (tmp_path / "a.txt").write_text("[root@esx-01:~] /opt/mellanox/bin/mlxconfig -d mt4119_pciconf1 -e q\n"
                                    + FIFTEEN)
    (tmp_path / "b.txt").write_text("[root@esx-02:~] esxcli system module parameters list -m nmlx5_core\n"
                                    + MODULE_PARAMS)
    _, out = analyze_json(tmp_path)
    hosts = {Path(f["path"]).name: f.get("host") for f in out["files"]}
    assert hosts == {"a.txt": "esx-01", "b.txt": "esx-02"}
    assert rw208(out) == {"a.txt": [], "b.txt": []}  # esx-01's NUM_OF_VFS against esx-02's max_vfs: no verdict
    checks = {x["check"] for f in out["files"] for x in f["findings"]}
    assert {"RW205", "RW209"} <= checks  # each file is still judged on its own facts
    # a file that names no host joins the one host the directory names
    (tmp_path / "b.txt").write_text(MODULE_PARAMS)
    _, out = analyze_json(tmp_path)
    assert rw208(out)["a.txt"] == [("fail", None)]


def test_a_host_in_the_file_names_keeps_the_hosts_apart(tmp_path):
    (tmp_path / "esx-01_mlxconfig.txt").write_text(FIFTEEN)
    (tmp_path / "esx-02_module_params.txt").write_text(MODULE_PARAMS)
    _, out = analyze_json(tmp_path)
    assert rw208(out) == {"esx-01_mlxconfig.txt": [], "esx-02_module_params.txt": []}
    # numbered copies (query-1.txt, query-2.txt) name no host: each is judged with the module params
    other = tmp_path / "copies"
    other.mkdir()
    (other / "query-1.txt").write_text(SIXTEEN)
    (other / "query-2.txt").write_text(FIFTEEN)
    (other / "module.txt").write_text(MODULE_PARAMS)
    _, out = analyze_json(other)
    got = rw208(out)
    assert got["query-1.txt"] == [("pass", ["query-1.txt", "module.txt"])]
    assert got["query-2.txt"] == [("fail", ["query-2.txt", "module.txt"])]
