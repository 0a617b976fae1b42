"""analyze's two readings of issue 13 together: pastes (sessions, launcher prefixes) inside the directory,
run-dir and host rules (same-kind files judged each on its own, hosts never joined), and a parser's own bug
contained wherever a parser is called."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from roce_wizard import parsers
from roce_wizard.cli import app
from roce_wizard.parsers.base import Parser
from tests.unit.test_analyze import MODULE_PARAMS
from tests.unit.test_analyze_groups import FIFTEEN, SIXTEEN, rw208
from tests.unit.test_analyze_runs import fix_run
from tests.unit.test_containment import ODD, VIB_CMD, VIBS

runner = CliRunner()


def analyze_json(path: Path) -> dict:
    result = runner.invoke(app, ["analyze", "--json", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return json.loads(result.stdout)


def session(host: str, query: str) -> str:
    """One ESXi host's terminal: the query, then the module parameters."""
    return "\n".join([f"[root@{host}:~] /opt/mellanox/bin/mlxconfig -e -d mt4119_pciconf0 query",
                      *query.strip("\n").split("\n"), f"[root@{host}:~] esxcfg-module -g nmlx5_core",
                      MODULE_PARAMS.rstrip("\n"), f"[root@{host}:~] "]) + "\n"


def test_a_sessions_parts_are_one_file_among_same_kind_files(tmp_path):
    # the session's query and a second query file are each judged with the session's module parameters;
    # the session (holding both kinds RW208 reads) gets each verdict once, naming the files it read
    (tmp_path / "session.txt").write_text(session("esx-01", FIFTEEN))
    (tmp_path / "other-query.txt").write_text(SIXTEEN)
    out = analyze_json(tmp_path)
    kinds = {Path(f["path"]).name: f["kind"] for f in out["files"]}
    assert kinds == {"session.txt": "session", "other-query.txt": "mlxconfig_query"}
    got = {name: sorted((s, sorted(files or [])) for s, files in v) for name, v in rw208(out).items()}
    assert got["session.txt"] == [("fail", ["session.txt"]), ("pass", ["other-query.txt", "session.txt"])]
    assert got["other-query.txt"] == [("pass", ["other-query.txt", "session.txt"])]


def test_a_sessions_prompt_names_its_host_and_another_hosts_file_is_never_joined(tmp_path):
    # the host is read from the prompts as pasted, before the session is cut at them
    (tmp_path / "session.txt").write_text(session("esx-01", FIFTEEN))
    (tmp_path / "b.txt").write_text("[root@esx-02:~] /opt/mellanox/bin/mlxconfig -d mt4119_pciconf1 -e q\n" + SIXTEEN)
    out = analyze_json(tmp_path)
    hosts = {Path(f["path"]).name: f.get("host") for f in out["files"]}
    assert hosts == {"session.txt": "esx-01", "b.txt": "esx-02"}
    assert rw208(out) == {"session.txt": [("fail", None)], "b.txt": []}  # esx-02's query never meets esx-01's


def test_a_launchers_hosts_are_their_own_entries_not_the_prompts_machine(tmp_path):
    (tmp_path / "pdsh.txt").write_text("\n".join(
        ["[root@head-01 ~]# pdsh -w esx-[01-02] esxcfg-module -g nmlx5_core",
         f"esx-01: {MODULE_PARAMS.rstrip()}", f"esx-02: {MODULE_PARAMS.rstrip()}"]) + "\n")
    out = analyze_json(tmp_path)
    assert [(e["source"], e["kind"], e.get("host")) for e in out["files"]] == [
        ("host esx-01", "esxi_module_params", None), ("host esx-02", "esxi_module_params", None)]


def test_a_parser_bug_in_a_run_record_is_that_records_error(tmp_path, monkeypatch):
    real = parsers.PARSERS["esxi_vib_list"]

    def parse_vib_list(text: str) -> dict:
        if "mft-odd" in text:
            return {}["prefixlen"]
        return real.parse(text)

    monkeypatch.setitem(parsers.PARSERS, "esxi_vib_list", Parser("esxi_vib_list", parse_vib_list, real.sniff))
    run = fix_run(tmp_path)
    for target, stdout in (("esx-01", ODD), ("esx-02", VIBS)):
        (run / "raw" / target).mkdir(exist_ok=True)
        (run / "raw" / target / "esxi_vib_list.json").write_text(json.dumps(
            {"command": VIB_CMD, "stdout": stdout, "stderr": "", "exit_status": 0, "duration_s": 0.1,
             "timed_out": False}))
    out = analyze_json(run)
    by_name = {Path(f["path"]).relative_to(run).as_posix(): f for f in out["files"]}
    bad, good = by_name["raw/esx-01/esxi_vib_list.json"], by_name["raw/esx-02/esxi_vib_list.json"]
    assert bad["kind"] == "esxi_vib_list" and "parser bug: KeyError 'prefixlen' in parse_vib_list" in bad["error"]
    assert any(f["check"] == "RW201" and f["status"] == "pass" for f in good["findings"])
