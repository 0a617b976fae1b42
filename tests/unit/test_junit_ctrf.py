"""JUnit XML and CTRF from doctor's JSON (roce_wizard/ci_reports.py), on a real doctor run.

The document is what `roce-wizard doctor --json` prints for the recorded sample cluster
(examples/sample-cluster/, offline over the replay transport), run in a subprocess as a CI job would:
it has every status (pass, warn, fail, skip, error) and results with a subject.

The JUnit shape checked here is the Jenkins xUnit plugin's junit-10.xsd (which GitLab's parser also
accepts), restated below as the attributes and children each element may have; junitparser (a
maintained reader of JUnit XML that CI tooling uses to merge and summarise reports) then reads the file
back as an independent consumer, so "valid" is not only our own reading of the format.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import junitparser
import pytest

from roce_wizard import __version__
from roce_wizard.ci_reports import ctrf_json, junit_xml

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample-cluster"

# junit-10.xsd (jenkinsci/xunit-plugin), in words: which attributes each element may carry
ATTRS = {
    "testsuites": {"name", "time", "tests", "failures", "errors"},
    "testsuite": {"name", "tests", "failures", "errors", "group", "time", "skipped", "timestamp", "hostname",
                  "id", "package", "file", "log", "url"},
    "testcase": {"name", "time", "classname", "group"},
    "failure": {"type", "message"}, "error": {"type", "message"}, "skipped": {"type", "message"},
}
REQUIRED = {"testsuite": {"name", "tests", "failures", "errors"}, "testcase": {"name"}}
CHILDREN = {
    "testsuites": {"testsuite"},
    "testsuite": {"testsuite", "properties", "testcase", "system-out", "system-err"},
    "testcase": {"skipped", "error", "failure", "system-out", "system-err"},
    "failure": set(), "error": set(), "skipped": set(), "system-out": set(), "system-err": set(),
}
SUREFIRE_TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?")


@pytest.fixture(scope="module")
def doctor_doc(tmp_path_factory) -> dict:
    state = tmp_path_factory.mktemp("state")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ROCE_WIZARD_STATE_DIR": str(state)}
    run = subprocess.run(
        [sys.executable, "-m", "roce_wizard.cli", "doctor", "-i", str(SAMPLE / "inventory.yaml"),
         "--replay", str(SAMPLE / "recordings.yaml"), "--json"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert run.returncode == 1, run.stderr  # the sample cluster has failures
    doc = json.loads(run.stdout)
    assert {r["status"] for r in doc["results"]} == {"pass", "warn", "fail", "skip", "error"}
    return doc


def _row(doc: dict, check: str, target: str, status: str) -> dict:
    rows = [r for r in doc["results"] if r["check"] == check and r["target"] == target and r["status"] == status]
    assert rows, f"the sample cluster no longer has {check} {status} on {target}"
    return rows[0]


def _cases(root: ET.Element) -> dict[tuple[str, str], ET.Element]:
    return {(c.get("classname"), c.get("name")): c for c in root.iter("testcase")}


def _conforms(element: ET.Element) -> None:
    """`element` and everything under it has only the attributes and children junit-10.xsd allows."""
    tag = element.tag
    assert tag in CHILDREN, f"<{tag}> is not a JUnit element"
    assert set(element.attrib) <= ATTRS.get(tag, set()), f"<{tag}> has {set(element.attrib) - ATTRS[tag]}"
    assert REQUIRED.get(tag, set()) <= set(element.attrib), f"<{tag}> lacks {REQUIRED[tag] - set(element.attrib)}"
    if "time" in element.attrib and tag != "testcase":
        assert SUREFIRE_TIME.fullmatch(element.get("time")), element.get("time")
    for child in element:
        assert child.tag in CHILDREN[tag], f"<{child.tag}> inside <{tag}>"
        _conforms(child)


def test_junit_has_the_shape_jenkins_reads(doctor_doc):
    root = ET.fromstring(junit_xml(doctor_doc).encode("utf-8"))
    assert root.tag == "testsuites"
    _conforms(root)
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [f"roce-wizard.{s}" for s in dict.fromkeys(
        r["stage"] for r in doctor_doc["results"])]
    for suite in suites:  # the counts say what the cases hold
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(c.find("failure") is not None for c in cases)
        assert int(suite.get("skipped")) == sum(c.find("skipped") is not None for c in cases)
    assert int(root.get("tests")) == len(doctor_doc["results"]) == len(list(root.iter("testcase")))
    assert int(root.get("failures")) == doctor_doc["summary"]["fail"]


def test_one_case_per_check_target_and_subject(doctor_doc):
    cases = _cases(ET.fromstring(junit_xml(doctor_doc)))
    keys = {(f"{r['stage']}.{r['check']}",
             f"{r['slug']}[{r['target']}{'/' + r['subject'] if r['subject'] else ''}]") for r in doctor_doc["results"]}
    assert set(cases) == keys
    subject = next(r for r in doctor_doc["results"] if r["subject"])
    assert (f"{subject['stage']}.{subject['check']}",
            f"{subject['slug']}[{subject['target']}/{subject['subject']}]") in cases


def test_each_status_becomes_its_junit_element(doctor_doc):
    cases = _cases(ET.fromstring(junit_xml(doctor_doc)))
    fail = _row(doctor_doc, "RW209", "esx-02", "fail")  # PFC off: the module-parameter trap
    case = cases[("esxi.RW209", "pfc-on-roce-priority[esx-02]")]
    failure = case.find("failure")
    assert failure.get("message") == fail["summary"]
    assert "observed: " in failure.text and "expected: " in failure.text and '"pfctx": "0x08"' in failure.text
    assert f"esxi_module_params: $ {fail['evidence'][0]['command']}" in failure.text
    assert f"fix by hand: {fail['fix']}" in failure.text

    error = _row(doctor_doc, "RW001", "esx-04", "error")  # unreachable: could not run
    skipped = cases[("preflight.RW001", "target-reachable[esx-04]")].find("skipped")
    assert skipped.get("message") == f"could not run: {error['summary']}"
    assert "fix by hand: start SSH on the ESXi host" in skipped.text

    skip = _row(doctor_doc, "RW002", "esx-04", "skip")  # blocked by RW001
    case = cases[("preflight.RW002", "tools-present[esx-04]")]
    assert case.find("skipped").get("message") == skip["summary"] and case.find("failure") is None

    warn = _row(doctor_doc, "RW213", "esx-02", "warn")  # a warning passes, and says so in its output
    case = cases[("esxi.RW213", "host-power-policy[esx-02]")]
    assert [child.tag for child in case] == ["system-out"]
    assert case.find("system-out").text.startswith(f"warning: {warn['summary']}\n")

    case = cases[("preflight.RW001", "target-reachable[esx-01]")]
    assert list(case) == []  # a pass is an empty test case


def test_junitparser_reads_it_back(doctor_doc, tmp_path):
    path = tmp_path / "doctor.xml"
    path.write_text(junit_xml(doctor_doc), encoding="utf-8")
    report = junitparser.JUnitXml.fromfile(str(path))
    kinds = Counter(type(result).__name__ for suite in report for case in suite for result in case.result)
    summary = doctor_doc["summary"]
    assert kinds == Counter({"Failure": summary["fail"], "Skipped": summary["skip"] + summary["error"]})
    assert sum(suite.tests for suite in report) == len(doctor_doc["results"])


HOSTILE = "bad \x1b[31mred\x1b[0m <b>&amp; \"q\" \x00\x07\x0b\ud800\ufffe end\x1b]0;pwned\x07"


def test_host_text_cannot_break_the_xml(doctor_doc):
    row = {**_row(doctor_doc, "RW209", "esx-02", "fail"), "summary": HOSTILE, "target": 'esx<"&>',
           "evidence": [{"probe": "p", "command": "echo \x01x", "excerpt": "one\r\ntwo\x00\udfff"}]}
    text = junit_xml({"version": 1, "results": [row], "summary": {"duration_s": 1.5}})
    text.encode("utf-8")  # no lone surrogate left: the file can be written
    case = ET.fromstring(text).find("testsuite/testcase")
    assert case.get("name") == 'pfc-on-roce-priority[esx<"&>]'
    failure = case.find("failure")
    assert failure.get("message") == 'bad red <b>&amp; "q"  end'
    assert "p: $ echo x\n    one\n    two" in failure.text
    assert not re.search(r"[\x00-\x08\x0b-\x1f\ud800-\udfff\ufffe\uffff]", text)


def test_junit_of_an_empty_run_is_a_valid_document():
    root = ET.fromstring(junit_xml({"version": 1, "results": [], "summary": {}}))
    _conforms(root)
    assert root.get("tests") == "0" and root.findall("testsuite") == []


# ---------------------------------------------------------------------------- CTRF

CTRF_STATUSES = {"passed", "failed", "skipped", "pending", "other"}


def test_ctrf_follows_the_schema_and_counts(doctor_doc):
    doc = ctrf_json(doctor_doc, stop_ms=1_700_000_000_000)
    json.dumps(doc, ensure_ascii=False).encode("utf-8")
    assert doc["reportFormat"] == "CTRF" and re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", doc["specVersion"])
    results = doc["results"]
    assert set(results) == {"tool", "summary", "tests"}
    assert results["tool"] == {"name": "roce-wizard", "version": __version__}
    summary, tests, counts = results["summary"], results["tests"], doctor_doc["summary"]
    assert set(summary) <= {"tests", "passed", "failed", "skipped", "pending", "other", "flaky", "suites", "start",
                            "stop", "duration", "extra"}
    assert summary["tests"] == len(tests) == len(doctor_doc["results"])
    assert (summary["passed"], summary["failed"], summary["skipped"], summary["other"], summary["pending"]) == (
        counts["pass"] + counts["warn"], counts["fail"], counts["skip"], counts["error"], 0)
    assert summary["stop"] == 1_700_000_000_000
    assert summary["stop"] - summary["start"] == summary["duration"] == round(counts["duration_s"] * 1000)
    for test in tests:
        assert {"name", "status", "duration"} <= set(test) and test["name"]
        assert test["status"] in CTRF_STATUSES and isinstance(test["duration"], int)
        assert len(test["suite"]) >= 1 and all(isinstance(s, str) for s in test["suite"])
        assert all(isinstance(v, str) for v in test["labels"].values())


def test_ctrf_statuses_messages_and_traces(doctor_doc):
    tests = {(t["suite"][1], t["name"]): t for t in ctrf_json(doctor_doc)["results"]["tests"]}
    fail = tests[("RW209", "pfc-on-roce-priority[esx-02]")]
    assert fail["status"] == "failed" and fail["message"] == _row(doctor_doc, "RW209", "esx-02", "fail")["summary"]
    assert "fix by hand: esxcli system module parameters set" in fail["trace"]
    error = tests[("RW001", "target-reachable[esx-04]")]
    assert (error["status"], error["rawStatus"]) == ("other", "error") and "refused" in error["message"]
    warn = tests[("RW213", "host-power-policy[esx-02]")]
    assert (warn["status"], warn["rawStatus"]) == ("passed", "warn") and "Balanced" in warn["message"]
    assert tests[("RW002", "tools-present[esx-04]")]["status"] == "skipped"
    passed = tests[("RW001", "target-reachable[esx-01]")]
    assert passed["status"] == "passed" and "message" not in passed and passed["suite"] == ["preflight", "RW001"]


def test_ctrf_strips_what_host_text_must_not_carry(doctor_doc):
    row = {**_row(doctor_doc, "RW209", "esx-02", "fail"), "summary": HOSTILE}
    test = ctrf_json({"version": 1, "results": [row], "summary": {}})["results"]["tests"][0]
    assert test["message"] == 'bad red <b>&amp; "q"  end'
