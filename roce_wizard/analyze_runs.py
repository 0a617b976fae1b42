"""What `analyze` reads in a run directory or a support bundle besides pasted outputs.

- raw/<target>/<probe>.json: the tool's own records. A command that answered gives its output to the
  probe's parser; a command that failed, timed out, or a connection that was refused is reported as
  what it is (kind ``run-record`` for a connection, the probe's kind for a command) with the reason,
  never as "not recognised".
- results.json (a bundle always has one; a doctor run dir too): read back as findings, so `analyze`
  shows what the run itself concluded. A run dir without one (a `fix`) is summarised from its events
  in their FINAL state (results_from_events; the bundle's summary uses it too).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from roce_wizard.model import Finding, Status

RUN_RECORD = "run-record"  # a raw record that holds no tool output (a refused connection)
RUN_RESULTS = "run-results"  # the run's own verdicts (results.json, or its events rebuilt)
SESSION_LOG = "session-log"  # a switch session transcript; its commands' outputs are judged from raw/<switch>/
_SESSION_NOTE = re.compile(r"^### roce-wizard \S+ (?P<note>.*)$", re.M)
BUNDLE_MANIFEST = "bundle.json"
RUN_MEMBERS = ("raw", "sessions")  # the tool outputs a run directory (and a bundle) holds


def is_run_root(path: Path) -> bool:
    """A support bundle's top directory, or a run directory (its journal beside raw/)."""
    return (path / BUNDLE_MANIFEST).is_file() or ((path / "events.jsonl").is_file() and (path / "raw").is_dir())


def record_output(text: str, probe: str | None) -> tuple[str | None, str | None, bool]:
    """(output for the parser, why there is none, is_record) for a raw record's text.

    is_record False: the text is not one of the tool's records (a pasted JSON output); read it as text."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:  # RecursionError (nested too deeply) is the caller's to report
        return None, None, False
    if not isinstance(data, dict):
        return None, None, False
    if isinstance(data.get("connect_error"), dict):
        err = data["connect_error"]
        return None, f"could not connect ({err.get('kind', 'error')}): {err.get('message', '')}".rstrip(": "), True
    if not ("command" in data and "stdout" in data and "exit_status" in data):
        return None, None, False
    from roce_wizard.probes import PROBES  # noqa: PLC0415

    answers = (0, *PROBES[probe].answer_exits) if probe in PROBES else (0,)
    status = data.get("exit_status")
    if data.get("timed_out"):
        return None, f"the command timed out: {data.get('command')}", True
    if status not in answers:
        said = next((ln.strip() for ln in str(data.get("stderr") or data.get("stdout") or "").splitlines()
                     if ln.strip()), "")
        return None, f"the command failed (exit {status}){': ' + said[:200] if said else ''}", True
    out = str(data["stdout"])
    if status != 0:  # an answer on a non-zero exit: the parser reads stdout + stderr (as the engine does)
        out += str(data.get("stderr") or "")
    return out, None, True


def session_failure(text: str) -> str | None:
    """What a session log's own notes say went wrong (a refused login), if anything."""
    failed = [m.group("note") for m in _SESSION_NOTE.finditer(text) if "failed" in m.group("note")]
    return f"the session log records: {failed[-1][:200]}" if failed else None


def results_document(root: Path) -> dict[str, Any] | None:
    """The run's results: results.json, else rebuilt from the events in their final state. Read like any
    file handed to `analyze` (regular files only, bounded); unreadable, torn or nested too deeply: None."""
    from roce_wizard.untrusted import InputError, read_bounded  # noqa: PLC0415

    def read(name: str) -> bytes | None:
        try:
            return read_bounded(root / name) if (root / name).is_file() else None
        except InputError:
            return None

    try:
        data = read("results.json")
        results = json.loads(data.rstrip(b"\x00").decode("utf-8")) if data else None
        if isinstance(results, dict):
            return results
        data = read("events.jsonl")
        if data is None:
            return None
        events = []
        for line in data.replace(b"\x00", b"").split(b"\n"):
            try:
                event = json.loads(line.decode("utf-8")) if line.strip() else None
            except ValueError:  # a torn line: skipped, as the run log's own reader does
                continue
            if isinstance(event, dict):
                events.append(event)
        return results_from_events(events)
    except (ValueError, RecursionError):
        return None


def findings_of(results: dict[str, Any]) -> list[Finding]:
    """results.json rows as findings (a row this version cannot read is an error finding, not dropped)."""
    out = []
    for row in results.get("results") or []:
        if not isinstance(row, dict):
            continue
        try:
            status = Status(row.get("status"))
        except ValueError:
            status = Status.ERROR
        out.append(Finding(check=str(row.get("check") or "?"), status=status, summary=str(row.get("summary") or ""),
                           target=str(row.get("target") or ""), observed=row.get("observed"),
                           expected=row.get("expected"), fix=row.get("fix"), subject=row.get("subject")))
    return out


def results_from_events(events: list[dict[str, Any]]) -> dict[str, Any]:
    """A results.json for a run that wrote none (fix, or a killed doctor): the run's FINAL state.

    A `fix` judges in rounds (each starts with a `plan` event): the check, the fix, the re-check. A check's
    verdicts on a target are those of the last round that judged it there, all its subjects together: a
    subject the last round no longer names (a port's failure, then one pass for the host) is not left over."""
    rows: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    judged_in: dict[tuple[str, str], int] = {}
    round_no, exit_code = 0, None
    for e in events:
        if e.get("type") == "plan":
            round_no += 1
        elif e.get("type") == "run-end":
            exit_code = e.get("exit_code", exit_code)
        elif e.get("type") == "finding":
            row = {k: v for k, v in e.items() if k not in ("type", "ts")}
            key = (str(row.get("check", "")), str(row.get("target", "")))
            if judged_in.get(key) != round_no:
                rows[key], judged_in[key] = {}, round_no
            rows[key][str(row.get("subject") or "")] = row
    final = [row for subjects in rows.values() for row in subjects.values()]
    counts = {s.value: 0 for s in Status}
    for row in final:
        counts[row.get("status", "error")] = counts.get(row.get("status", "error"), 0) + 1
    summary: dict[str, Any] = {**counts, "rebuilt_from_events": True}
    if exit_code is not None:
        summary["exit_code"] = exit_code  # how the run's last round ended
    return {"version": 1, "results": final, "summary": summary}
