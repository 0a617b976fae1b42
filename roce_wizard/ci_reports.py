"""Doctor's results for CI systems: JUnit XML (Jenkins, GitLab) and CTRF JSON.

Both are pure functions of doctor's JSON document (`roce-wizard doctor --json`, schema version 1:
`{"version": 1, "results": [{check, slug, stage, target, subject, status, summary, observed, expected,
evidence, fix, …}], "summary": {pass, warn, fail, skip, error, duration_s, …}}`), so a CI job can also
convert a saved results.json after the fact.

One test case per result row, that is per check × target (× subject when the check judges several
things on one target, e.g. each NIC port): classname `stage.code` (`esxi.RW208`), name `slug[target]`
or `slug[target/subject]`.

Status mapping (JUnit has pass / failure / error / skipped only):
- fail → `<failure message=summary>`, body: observed / expected, the evidence, the fix by hand.
- skip → `<skipped message=summary>` (blocked by another check, or not applicable).
- error (could not run: unreachable, tool missing) → `<skipped message="could not run: …">`: a check
  that could not run judged nothing, and doctor exits 3 for it, not 1; JUnit's `<error>` would paint
  the job as a crash of the test runner in Jenkins and GitLab.
- warn → a passed test case whose `<system-out>` says `warning: …`: doctor exits 0 on warnings (the
  site's policy allows them), and a `<failure>` would fail the CI job doctor itself lets pass.
  The warning stays visible in the test case's output.
- pass with `pending_reboot` (the value is staged, not in effect until a reboot) → `<skipped
  message="waits for a reboot: …">`: like could-not-run, nothing is proven yet and doctor exits 3 for
  it; a green test case would claim a change that is not in effect, a `<failure>` would fail a job for a
  fix that only waits for its planned reboot.

Text from hosts is made XML-safe: terminal escape sequences and every character XML 1.0 forbids
(C0 controls but tab/newline/CR, lone surrogates, U+FFFE/U+FFFF) are removed, the rest escaped by
ElementTree; a hostile summary cannot break the document.

CTRF (Common Test Report Format, https://ctrf.io; schema: github.com/ctrf-io/ctrf
schema/ctrf.schema.json): `{"reportFormat": "CTRF", "specVersion", "results": {"tool", "summary",
"tests"}}`; pass/warn → passed (warn keeps rawStatus "warn" and its message), fail → failed,
skip → skipped, error → other (rawStatus "error": CTRF has a status for "neither passed nor failed nor
deliberately skipped", so could-not-run is counted apart from skips); a pass with `pending_reboot` →
pending (CTRF's own status for it; rawStatus "pass", message "waits for a reboot: …").
"""

from __future__ import annotations

import json
import re
import time
import xml.etree.ElementTree as ET
from collections import Counter
from typing import Any

from roce_wizard import __version__
from roce_wizard.textsafe import printable

CTRF_SPEC_VERSION = "0.0.0"  # "Must be a valid semver string, currently 0.0.0" (ctrf spec, root object)
STATUSES = ("pass", "warn", "fail", "skip", "error")

# what XML 1.0 forbids after printable() (which removed C0/C1 controls but \t \n): surrogates, U+FFFE/F
_XML_ILLEGAL = re.compile("[\ud800-\udfff\ufffe\uffff]")


def clean(value: object) -> str:
    """`value` as text an XML 1.0 document (and a UTF-8 file) can hold: no escapes, no illegal chars."""
    return _XML_ILLEGAL.sub("", printable("" if value is None else value))


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def case_name(row: dict[str, Any]) -> str:
    """`slug[target]`, or `slug[target/subject]` when the result is about one subject of the target."""
    where = str(row.get("target") or "")
    if row.get("subject"):
        where += f"/{row['subject']}"
    return clean(f"{row.get('slug') or row.get('check')}[{where}]")


def case_class(row: dict[str, Any]) -> str:
    """`stage.code`, e.g. `esxi.RW208`."""
    return clean(f"{row.get('stage') or 'preflight'}.{row.get('check')}")


def details(row: dict[str, Any]) -> str:
    """The body of a failure: observed vs expected, the evidence (command and output excerpt), the fix."""
    lines = []
    if row.get("observed") is not None or row.get("expected") is not None:
        lines.append(f"observed: {_shown(row.get('observed'))}")
        lines.append(f"expected: {_shown(row.get('expected'))}")
    evidence = row.get("evidence") or []
    if evidence:
        lines.append("evidence:")
        for item in evidence:
            head = item.get("probe") or "?"
            if item.get("command"):
                head += f": $ {item['command']}"
            lines.append(f"  {head}")
            for line in str(item.get("excerpt") or "").splitlines():
                lines.append(f"    {line}")
    blocked = row.get("blocked_by")
    if blocked:
        lines.append(f"blocked by: {blocked.get('check')} on {blocked.get('target')}")
    if row.get("fix"):
        lines.append(f"fix by hand: {row['fix']}")
    return clean("\n".join(lines))


def _stages(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    stages: dict[str, list[dict[str, Any]]] = {}
    for row in doc.get("results") or []:
        stages.setdefault(str(row.get("stage") or "preflight"), []).append(row)
    return stages


def pending(row: dict[str, Any]) -> bool:
    """A pass on a staged value (doctor JSON `pending_reboot`): not in effect until a reboot."""
    return row.get("status") == "pass" and bool(row.get("pending_reboot"))


def _pending_message(row: dict[str, Any]) -> str:
    return clean(f"waits for a reboot: {row.get('summary')}"
                 + (f" ({row['pending_reason']})" if row.get("pending_reason") else ""))


def junit_xml(doctor_json: dict[str, Any]) -> str:
    """Doctor's JSON as a JUnit XML document (Jenkins' junit-10.xsd shape, which GitLab also reads):
    `<testsuites>` with one `<testsuite name="roce-wizard.STAGE">` per stage, in run order."""
    total = Counter(str(r.get("status")) for r in doctor_json.get("results") or [])
    duration = float((doctor_json.get("summary") or {}).get("duration_s") or 0.0)
    root = ET.Element("testsuites", {
        "name": "roce-wizard doctor", "tests": str(sum(total.values())), "failures": str(total["fail"]),
        "errors": "0", "time": f"{duration:.3f}"})  # junit-10.xsd: no `skipped` on <testsuites>
    for stage, rows in _stages(doctor_json).items():
        counts = Counter(str(r.get("status")) for r in rows)
        suite = ET.SubElement(root, "testsuite", {
            "name": clean(f"roce-wizard.{stage}"), "tests": str(len(rows)), "failures": str(counts["fail"]),
            "errors": "0", "skipped": str(counts["skip"] + counts["error"] + sum(map(pending, rows))),
            "time": "0"})
        for row in rows:
            case = ET.SubElement(suite, "testcase", {"classname": case_class(row), "name": case_name(row),
                                                     "time": "0"})
            status, summary = row.get("status"), clean(row.get("summary"))
            if pending(row):
                ET.SubElement(case, "skipped", {"message": _pending_message(row)})
            elif status == "fail":
                failure = ET.SubElement(case, "failure", {"message": summary, "type": "fail"})
                failure.text = details(row)
            elif status == "skip":
                ET.SubElement(case, "skipped", {"message": summary})
            elif status == "error":
                skipped = ET.SubElement(case, "skipped", {"message": f"could not run: {summary}"})
                skipped.text = details(row)
            elif status == "warn":
                out = ET.SubElement(case, "system-out")
                out.text = clean(f"warning: {summary}\n") + details(row)
            elif status != "pass":  # an unknown status is not hidden as a pass
                ET.SubElement(case, "skipped", {"message": clean(f"status {status!r}: {summary}")})
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


_CTRF_STATUS = {"pass": "passed", "warn": "passed", "fail": "failed", "skip": "skipped", "error": "other"}


def ctrf_json(doctor_json: dict[str, Any], *, stop_ms: int | None = None) -> dict[str, Any]:
    """Doctor's JSON as a CTRF report. Doctor records the run's duration, not its start: `stop_ms` (ms
    since the epoch, default now) is when the run ended and start = stop - duration."""
    summary_in = doctor_json.get("summary") or {}
    duration_ms = round(float(summary_in.get("duration_s") or 0.0) * 1000)
    stop = int(time.time() * 1000) if stop_ms is None else int(stop_ms)
    tests = []
    for row in doctor_json.get("results") or []:
        status = str(row.get("status"))
        test: dict[str, Any] = {
            "name": case_name(row), "status": _CTRF_STATUS.get(status, "other"), "duration": 0,
            "rawStatus": clean(status), "suite": [clean(row.get("stage") or "preflight"), clean(row.get("check"))],
            "labels": {k: clean(row[k]) for k in ("check", "slug", "stage", "target", "subject", "severity")
                       if row.get(k) is not None},
        }
        if pending(row):
            test["status"], test["message"] = "pending", _pending_message(row)
        elif status != "pass":
            test["message"] = clean(row.get("summary"))
            body = details(row)
            if body and status in ("fail", "error", "warn"):
                test["trace"] = body
        tests.append(test)
    counts = Counter(t["status"] for t in tests)
    return {
        "reportFormat": "CTRF",
        "specVersion": CTRF_SPEC_VERSION,
        "generatedBy": "roce-wizard",
        "results": {
            "tool": {"name": "roce-wizard", "version": __version__},
            "summary": {"tests": len(tests), "passed": counts["passed"], "failed": counts["failed"],
                        "pending": counts["pending"], "skipped": counts["skipped"], "other": counts["other"],
                        "start": stop - duration_ms, "stop": stop, "duration": duration_ms},
            "tests": tests,
        },
    }
