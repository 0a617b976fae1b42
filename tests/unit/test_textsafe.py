"""Terminal escape injection (issue 11, item 7): tool text reaches the terminal without control sequences,
the run log and results.json keep the raw bytes.

A replayed ESXi host (the sample cluster's esx-02) whose mlxconfig prints a device name carrying an OSC
title change and a CSI screen clear; a target whose connection error carries the same.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from typer.testing import CliRunner

from roce_wizard.catalog import load_catalog
from roce_wizard.cli import app
from roce_wizard.engine import run_checks
from roce_wizard.inventory import load_inventory
from roce_wizard.model import Stage
from roce_wizard.playbook import load_playbook
from roce_wizard.textsafe import printable
from roce_wizard.transports.replay import ReplayTransport
from roce_wizard.tui.board import Board
from roce_wizard.tui.widgets.detail import cell_detail

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample-cluster" / "recordings.yaml"
MLXCONFIG = "/opt/mellanox/bin/mlxconfig -d mt4119_pciconf1 -e query"
TITLE, CLEAR = "\x1b]0;pwned\x07", "\x1b[2J"
DEVICE = f"mt4119{TITLE}{CLEAR}_pciconf1"
INVENTORY = """\
targets:
  esxi:
    - name: esx-[1-2]
      address: 127.0.0.1
      username: root
      password: not-used-by-replay
      roce: {pf_pci: "0000:3b:00.0"}
"""


def hostile_cluster(tmp_path: Path) -> tuple[Path, Path]:
    commands = yaml.safe_load(SAMPLE.read_text())["targets"]["esx-02"]["commands"]
    query = commands[MLXCONFIG]["stdout"]
    query = query.replace("Device:         mt4119_pciconf1", f"Device:         {DEVICE}")
    query = "\n".join(ln.replace("False(0)        False(0)        False(0)", "False(0)        False(0)        True(1)")
                      if "ADVANCED_PCI_SETTINGS" in ln else ln for ln in query.splitlines())
    assert DEVICE in query
    commands[MLXCONFIG]["stdout"] = query
    recording = {"targets": {"esx-1": {"commands": commands},
                             "esx-2": {"connect_error": {"kind": "refused", "message": f"refused{TITLE}{CLEAR}"}}}}
    (tmp_path / "inventory.yaml").write_text(INVENTORY)
    (tmp_path / "rec.yaml").write_text(yaml.safe_dump(recording))
    return tmp_path / "inventory.yaml", tmp_path / "rec.yaml"


def test_printable_strips_sequences_and_controls_keeps_text():
    assert printable(f"a{TITLE}b{CLEAR}c") == "abc"
    assert printable("x\x1b]2;t\x1b\\y\x9b2Jz\x1bc!") == "xyz!"  # ST-terminated OSC, 8-bit CSI, ESC c (reset)
    assert printable("\x1b[31mred\x1b[0m\r\x08\x00") == "red"
    assert printable("two\nlines\tand ü€漢 [bold]") == "two\nlines\tand ü€漢 [bold]"
    assert printable(3) == "3"


@given(st.text(alphabet=st.characters(max_codepoint=0x2FF)))
def test_printable_output_has_no_control_character_but_newline_and_tab(text):
    out = printable(text)
    assert not [c for c in out if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]
    if not [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]:
        assert out == text


def test_doctor_prints_no_escape_and_the_run_log_keeps_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    inventory, rec = hostile_cluster(tmp_path)
    result = CliRunner().invoke(app, ["doctor", "-i", str(inventory), "--replay", str(rec), "--stage", "esxi", "-v"])
    assert "ADVANCED_PCI_SETTINGS is True" in result.output and "mt4119_pciconf1" in result.output
    assert "refused" in result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    run_dir = next((tmp_path / "state" / "runs").glob("2*"))
    raw = json.loads((run_dir / "raw" / "esx-1" / "mlxconfig_query.json").read_text())
    assert DEVICE in raw["stdout"]
    results = json.loads((run_dir / "results.json").read_text())
    assert any(r["subject"] == DEVICE for r in results["results"])


def test_analyze_prints_no_escape(tmp_path):
    commands = yaml.safe_load(SAMPLE.read_text())["targets"]["esx-02"]["commands"]
    pasted = tmp_path / "mlxconfig.txt"
    pasted.write_text(commands[MLXCONFIG]["stdout"].replace("mt4119_pciconf1", DEVICE))
    result = CliRunner().invoke(app, ["analyze", str(pasted)])
    assert "mt4119_pciconf1" in result.output
    assert "\x1b" not in result.output and "\x07" not in result.output


def test_the_wizard_detail_pane_shows_no_escape(tmp_path):
    inventory_path, rec = hostile_cluster(tmp_path)
    inventory = load_inventory(inventory_path)
    book = load_playbook("vsphere-sriov")
    chosen = {c: k for c, k in load_catalog([]).items() if c in ("RW001", "RW207")}
    stage_of = {c: book.stage_of(c) for c in chosen}
    report = asyncio.run(run_checks(list(inventory.targets), chosen, ReplayTransport.from_file(rec),
                                    inventory.policy, stage_of=stage_of))
    board = Board(list(inventory.targets), chosen, stage_of, report=report)
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None, force_terminal=False)
    console.print(cell_detail(board, Stage.ESXI, "esx-1", "RW207"))
    console.print(cell_detail(board, Stage.PREFLIGHT, "esx-2", "RW001"))
    text = out.getvalue()
    assert "ADVANCED_PCI_SETTINGS is True" in text and "mt4119_pciconf1" in text and "refused" in text
    assert "\x1b" not in text and "\x07" not in text
