"""Issue 11 item 4: a run log torn by a crash (inside a UTF-8 character, mid-JSON, NUL padding) never
bricks the tool: every reader skips the torn line and says so once, naming the file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from roce_wizard.records.ledger import HostState, build_ledger
from roce_wizard.records.runlog import RunLog, previous_results, read_events

REPO = Path(__file__).resolve().parents[2]


def torn_run(state: Path, tail: bytes) -> Path:
    """A fix run whose change waits for a reboot, then a last event cut by a crash."""
    run = RunLog.create(state, kind="fix")
    run.event("fix-step", target="esx-01", check="RW209", exit_status=0, reboot="host",
              description="nmlx5_core pfctx=0x08 — réglé ✓")
    run.close()
    with (run.path / "events.jsonl").open("ab") as fh:
        fh.write(tail)
    return run.path


CUT_E = '{"type": "finding", "target": "esx-02", "summary": "caf'.encode() + "é".encode()[:1]
CUT_CHECK = '{"type": "finding", "summary": "ok '.encode() + "✓".encode()[:2]
TAILS = {"mid-é": CUT_E, "mid-✓": CUT_CHECK, "mid-json": b'{"type": "fix-st',
         "nul-padding": b"\x00" * 4096, "mid-é-then-nul": CUT_E + b"\x00" * 512}


@pytest.mark.parametrize("tail", TAILS.values(), ids=list(TAILS))
def test_the_ledger_folds_a_torn_run_and_says_so_once(tmp_path, tail, capsys):
    run = torn_run(tmp_path, tail)
    book = build_ledger(tmp_path)
    assert book["esx-01"].state is HostState.PENDING
    assert "réglé ✓" in book["esx-01"].pending[0].reason
    build_ledger(tmp_path)  # folded again (fix does, every round): not said again
    err = capsys.readouterr().err
    assert err.count("warning:") == 1 and str(run / "events.jsonl") in err
    assert [e["type"] for e in read_events(run)] == ["run-start", "fix-step"]


def test_a_torn_results_json_is_skipped_for_since_last(tmp_path, capsys):
    good = RunLog.create(tmp_path, kind="doctor")
    good.write_results({"version": 1, "results": []})
    good.close()
    torn = tmp_path / "runs" / "99991231-235959-ffffff"  # newer than `good`: read first
    torn.mkdir()
    (torn / "results.json").write_bytes(b'{"version": 1, "results": [{"summary": "caf\xc3')
    found = previous_results(tmp_path)
    assert found is not None and found[0] == good.path
    assert str(torn / "results.json") in capsys.readouterr().err


def roce_wizard(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ROCE_WIZARD_STATE_DIR": str(state), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "roce_wizard.cli", *args], env=env, capture_output=True,
                          text=True, timeout=120, cwd=state)


@pytest.mark.parametrize("tail", [CUT_E, CUT_CHECK], ids=["mid-é", "mid-✓"])
def test_reboots_and_export_work_on_a_run_torn_inside_a_character(tmp_path, tail):
    state = tmp_path / "state"
    run = torn_run(state, tail)
    (run / "results.json").write_bytes(b'{"version": 1, "results": [{"summary": "\xe2\x9c')

    ledger = roce_wizard(state, "reboots")
    assert ledger.returncode == 0, ledger.stderr
    assert "esx-01" in ledger.stdout and "RW209" in ledger.stdout and "Traceback" not in ledger.stderr
    assert ledger.stderr.count("warning:") == 1 and str(run / "events.jsonl") in ledger.stderr

    as_json = roce_wizard(state, "reboots", "--json")
    assert as_json.returncode == 0 and '"esx-01"' in as_json.stdout, as_json.stderr

    out = tmp_path / "bundle.tar.gz"
    export = roce_wizard(state, "export", "--run", str(run), "-o", str(out))
    assert export.returncode == 0, export.stderr
    assert out.is_file() and "Traceback" not in export.stderr
    assert str(run / "events.jsonl") in export.stderr and str(run / "results.json") in export.stderr
