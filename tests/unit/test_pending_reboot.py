"""Pending is not passing (issue 17 item 2): a pass on a value that is staged (the reboot ledger holds the
fix step, no boot since) is marked `pending_reboot`, shows ⟳ and "waits for a reboot" wherever results are
shown, makes the exit code 3, and is a skipped (JUnit) / pending (CTRF) case for CI.

The findings are the recorded sample cluster's (examples/sample-cluster, replayed): esx-01 passes RW209 and
RW201 there; the ledger events are what `fix` records (a fix-step with a reboot kind, RW003's boot)."""

from __future__ import annotations

import asyncio
import io
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

from roce_wizard.catalog import load_catalog
from roce_wizard.ci_reports import ctrf_json, junit_xml
from roce_wizard.engine import RunReport, run_checks
from roce_wizard.engine.judge import exit_code_for
from roce_wizard.engine.pending import mark_pending
from roce_wizard.inventory import load_inventory
from roce_wizard.model import ExitCode, Finding, Status
from roce_wizard.playbook import load_playbook
from roce_wizard.records.ledger import ledger_from_events
from roce_wizard.records.markup import markdown
from roce_wizard.records.report import render_terminal, results_line, results_sections, to_json_dict
from roce_wizard.transports.replay import ReplayTransport

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample-cluster"
T0 = 1_700_000_000.0


def report() -> RunReport:
    inventory = load_inventory(SAMPLE / "inventory.yaml")
    book = load_playbook("vsphere-sriov")
    catalog = load_catalog([])
    chosen = {c: v for c, v in catalog.items() if c in ("RW001", "RW201", "RW209", "RW210", "RW214")}
    stage_of = {c: book.stage_of(c) for c in chosen}
    esx01 = [t for t in inventory.targets if t.name == "esx-01"]
    transport = ReplayTransport.from_file(SAMPLE / "recordings.yaml")
    return asyncio.run(run_checks(esx01, chosen, transport, inventory.policy, stage_of=stage_of))


def step(target: str, ts: float, check: str, reboot: str = "host", description: str = "", **extra: str) -> dict:
    return {"type": "fix-step", "ts": ts, "target": target, "check": check, "exit_status": 0, "reboot": reboot,
            "description": description or f"{check} change", "command": "true", **extra}


def boot(host: str, ts: float, booted_at: float) -> dict:
    return {"type": "finding", "ts": ts, "target": host, "check": "RW003", "status": "pass",
            "details": {"uptime_us": int((ts - booted_at) * 1e6)}}


def only(rep: RunReport, code: str) -> Finding:
    found = [f for f in rep.findings if f.check == code and f.target == "esx-01"]
    assert len(found) == 1, found
    return found[0]


@pytest.fixture(scope="module")
def staged() -> RunReport:
    """esx-01 with RW209's parameters and RW201's VIBs written and no boot since."""
    rep = report()
    assert only(rep, "RW209").status is Status.PASS and only(rep, "RW201").status is Status.PASS
    assert rep.exit_code is ExitCode.OK
    book = ledger_from_events([boot("esx-01", T0, T0 - 86400),
                               step("esx-01", T0 + 10, "RW209", description="pfctx=0x08 pfcrx=0x08"),
                               step("esx-01", T0 + 11, "RW201", description="install mft")])
    assert mark_pending(rep.findings, book) == 2
    return rep


def test_a_pass_on_a_staged_change_is_pending_and_says_what_it_waits_for(staged):
    rw209 = only(staged, "RW209")
    assert rw209.status is Status.PASS  # the status stays in the contract's closed set
    assert rw209.pending_reboot == "waits for a host reboot (pfctx=0x08 pfcrx=0x08)"
    assert only(staged, "RW210").pending_reboot is None  # nothing of RW210 was staged
    assert only(staged, "RW001").pending_reboot is None


def test_pending_makes_the_exit_code_3_and_a_failure_still_wins(staged):
    assert staged.exit_code is ExitCode.INCOMPLETE
    failed = Finding("RW210", Status.FAIL, "trust pcp", target="esx-01")
    assert exit_code_for([*staged.findings, failed]) is ExitCode.FAILED


def test_a_boot_after_the_change_or_another_host_or_rw214_marks_nothing():
    events = [boot("esx-01", T0, T0 - 86400), step("esx-01", T0 + 10, "RW209")]
    rebooted = report()
    assert mark_pending(rebooted.findings, ledger_from_events([*events, boot("esx-01", T0 + 400, T0 + 300)])) == 0
    other = report()
    assert mark_pending(other.findings, ledger_from_events([step("esx-02", T0, "RW209")])) == 0
    rw214 = report()  # RW214's own items ("something is pending") belong to no passing check
    book = ledger_from_events([{"type": "finding", "ts": T0, "target": "esx-01", "check": "RW214",
                                "status": "fail", "summary": "rebootRequired = true"}])
    assert book["esx-01"].awaiting_reboot and mark_pending(rw214.findings, book) == 0
    assert rw214.exit_code is ExitCode.OK


def test_a_change_made_through_another_target_marks_the_finding_on_either():
    """A BIOS value staged on the BMC waits on its host: the item is the host's, its target the BMC's."""
    book = ledger_from_events([step("bmc-01", T0, "RW103", reboot="bios", host="esx-01", description="SR-IOV")])
    on_bmc = Finding("RW103", Status.PASS, "SriovGlobalEnable Enabled", target="bmc-01")
    assert mark_pending([on_bmc], book) == 1 and on_bmc.pending_reboot == "waits for a reboot (BIOS) (SR-IOV)"


def test_doctor_json_and_terminal_say_pending(staged):
    doc = to_json_dict(staged)
    row = next(r for r in doc["results"] if r["check"] == "RW209")
    assert (row["status"], row["pending_reboot"]) == ("pass", True)
    assert row["pending_reason"] == "waits for a host reboot (pfctx=0x08 pfcrx=0x08)"
    assert not next(r for r in doc["results"] if r["check"] == "RW210")["pending_reboot"]
    assert doc["summary"]["pending_reboot"] == 2 and doc["summary"]["exit_code"] == 3
    console = Console(file=io.StringIO(), width=200, record=True)
    render_terminal(staged, console)
    text = console.export_text()
    assert "⟳ RW209 pfc-on-roce-priority" in text and "not in effect yet: waits for a host reboot" in text
    assert "✓ RW210" in text and "✓ RW209" not in text
    assert "2 wait for a reboot" in text and f"{doc['summary']['pass'] - 2} passed" in text


def test_the_bundle_summary_shows_pending(staged):
    doc = to_json_dict(staged)
    text = markdown([], results_sections(doc["results"]))
    line = next(ln for ln in text.splitlines() if "RW209" in ln)
    assert "⟳" in line and "not in effect yet" in line
    assert "2 wait for a reboot" in results_line(doc["summary"])


def test_ci_reports_pending_is_skipped_in_junit_and_pending_in_ctrf(staged):
    doc = to_json_dict(staged)
    root = ET.fromstring(junit_xml(doc))
    case = next(c for c in root.iter("testcase") if c.get("classname") == "esxi.RW209")
    assert case.find("skipped").get("message").startswith("waits for a reboot: ")
    assert next(c for c in root.iter("testcase") if c.get("classname") == "esxi.RW210").find("skipped") is None
    ctrf = ctrf_json(doc)["results"]
    test = next(t for t in ctrf["tests"] if t["suite"][1] == "RW209")
    assert (test["status"], test["rawStatus"]) == ("pending", "pass") and "host reboot" in test["message"]
    assert ctrf["summary"]["pending"] == 2
    assert ctrf["summary"]["passed"] == doc["summary"]["pass"] + doc["summary"]["warn"] - 2
