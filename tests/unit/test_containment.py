"""One odd output never costs the run (issue 11, item 2): a parser's own bug — any exception but
ParseError — makes that probe's checks "could not run" on that target, with the error and the raw
output as evidence; every other target is judged and the run log is complete."""

from __future__ import annotations

import json

import yaml
from typer.testing import CliRunner

from roce_wizard import parsers
from roce_wizard.cli import app
from roce_wizard.parsers.base import Parser
from roce_wizard.records.runlog import read_events, runs_dir

VIB_CMD = "esxcli --formatter=csv software vib list"
VIBS = (
    "AcceptanceLevel,CreationDate,ID,InstallDate,Name,Platforms,Status,Vendor,Version,\n"
    "PartnerSupported,2021-05-01,MEL_bootbank_mft_4.18.1.14-0,2021-06-01,mft,host,,MEL,4.18.1.14-0,\n"
    "PartnerSupported,2021-05-01,MEL_bootbank_nmst_4.18.1.14-1OEM.700.1.0.15843807,2021-06-01,nmst,host,,MEL,"
    "4.18.1.14-1OEM.700.1.0.15843807,\n"
)
ODD = VIBS.replace("mft,host", "mft-odd,host")  # what makes the stand-in parser trip


def test_a_parser_bug_on_one_host_is_could_not_run_there_and_the_others_are_judged(tmp_path, monkeypatch):
    # The parsers have no known bug left (test_parser_properties.py), so a stand-in plays the next one:
    # the real esxi_vib_list parser, except that it trips over one host's output the way the
    # ip -j parser tripped over an address without "prefixlen".
    real = parsers.PARSERS["esxi_vib_list"]

    def parse_vib_list(text: str) -> dict:
        if "mft-odd" in text:
            return {}["prefixlen"]
        return real.parse(text)

    monkeypatch.setitem(parsers.PARSERS, "esxi_vib_list", Parser("esxi_vib_list", parse_vib_list, real.sniff))
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("targets:\n  esxi:\n    - name: esx-[01-03]\n      address: 127.0.0.1\n"
                         "      roce: {pf_pci: '0000:3b:00.0', vmnics: [vmnic2], vfs: [8]}\n")
    rec = tmp_path / "rec.yaml"
    rec.write_text(yaml.safe_dump({"targets": {
        name: {"commands": {VIB_CMD: {"stdout": ODD if name == "esx-02" else VIBS}}}
        for name in ("esx-01", "esx-02", "esx-03")}}))

    result = CliRunner().invoke(app, ["doctor", "-i", str(inventory), "--replay", str(rec),
                                      "--select", "RW001,RW201", "--json"])

    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 3, result.output
    by = {(r["check"], r["target"]): r for r in json.loads(result.stdout)["results"]}
    bad = by[("RW201", "esx-02")]
    assert bad["status"] == "error"
    assert "parser bug: KeyError 'prefixlen' in parse_vib_list" in bad["summary"]
    assert VIB_CMD in bad["summary"]
    assert any("mft-odd" in (e.get("excerpt") or "") for e in bad["evidence"])  # the raw output
    for name in ("esx-01", "esx-03"):
        assert by[("RW201", name)]["status"] == "pass"
        assert by[("RW001", name)]["status"] == "pass"
    # the run log is complete: every finding and the run's end are in it
    (run,) = [p for p in runs_dir(tmp_path / "state").iterdir() if p.is_dir() and not p.is_symlink()]
    events = read_events(run)
    assert events[-1]["type"] == "run-end" and events[-1]["exit_code"] == 3
    logged = {(e["check"], e["target"]): e["status"] for e in events if e["type"] == "finding"}
    assert logged[("RW201", "esx-02")] == "error" and logged[("RW201", "esx-01")] == "pass"


def test_analyze_judges_the_other_files_when_a_parser_trips_over_one(tmp_path, monkeypatch):
    # analyze read only ParseError too: a parser's own bug on one pasted file ended the whole analysis
    real = parsers.PARSERS["esxi_vib_list"]

    def parse_vib_list(text: str) -> dict:
        if "mft-odd" in text:
            return {}["prefixlen"]
        return real.parse(text)

    monkeypatch.setitem(parsers.PARSERS, "esxi_vib_list", Parser("esxi_vib_list", parse_vib_list, real.sniff))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "vibs.txt").write_text(ODD)
    (tmp_path / "b" / "vibs.txt").write_text(VIBS)

    result = CliRunner().invoke(app, ["analyze", str(tmp_path / "a"), str(tmp_path / "b"), "--json"])

    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    files = {f["path"].split("/")[-2]: f for f in json.loads(result.stdout)["files"]}
    assert "parser bug: KeyError 'prefixlen' in parse_vib_list" in files["a"]["error"]
    assert any(f["check"] == "RW201" and f["status"] == "pass" for f in files["b"]["findings"])
