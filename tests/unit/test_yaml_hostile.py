"""Hostile YAML from users: inventories, playbook files, replay recordings and lab scenarios.

5,000-deep nesting (flow and block), `!!python/…` tags and a "billion laughs" alias bomb are refused
with the file and the line, exit 2, no traceback, in seconds; anchors and `<<: *defaults` merge keys
that an inventory really uses keep working. The CLI runs as a user runs it (a process of its own).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from roce_wizard.inventory import load_inventory
from roce_wizard.lab.scenarios import ScenarioError, load_scenario
from tests.conftest import REPO

CLI = [sys.executable, "-m", "roce_wizard.cli"]
SAMPLE = REPO / "examples" / "sample-cluster"
HEAD = "targets:\n  esxi:\n    - name: esx-01\n      options:\n"


def doctor(tmp_path: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "ROCE_WIZARD_STATE_DIR": str(tmp_path / "state"),
           "COLUMNS": "250"}
    return subprocess.run([*CLI, "doctor", *args], env=env, capture_output=True, text=True, timeout=timeout,
                          cwd=tmp_path)


def laughs(indent: str, levels: int = 10) -> str:
    """The "billion laughs": 10 levels of 9 aliases, 9^10 (3.4 billion) strings from 12 lines."""
    lines = [f'{indent}l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"{indent}l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


INVENTORIES = {
    "deep-flow": (HEAD + "        deep: " + "[" * 5000 + "]" * 5000 + "\n", 5, "nested deeper than 64 levels"),
    "deep-block": (HEAD + "".join("  " * (i + 4) + f"k{i}:\n" for i in range(5000)), 65,
                   "nested deeper than 64 levels"),
    "python-apply": ("targets:\n  esxi:\n    - name: !!python/object/apply:os.system ['touch pwned']\n", 3,
                     "YAML tag !!python/object/apply:os.system is not allowed"),
    "python-name": (HEAD + "        x: !!python/name:os.system\n", 5,
                    "YAML tag !!python/name:os.system is not allowed"),
    "alias-bomb": (HEAD + laughs("        "), 10, "aliases repeat more than 100000 nodes"),
    "recursive-alias": (HEAD + "        loop: &loop [1, *loop]\n", 5, "alias *loop is used inside its own anchor"),
}


@pytest.mark.parametrize("case", sorted(INVENTORIES))
def test_hostile_inventory_is_exit_2_with_file_and_line(tmp_path, case):
    text, line, needle = INVENTORIES[case]
    (tmp_path / "inventory.yaml").write_text(text)
    started = time.monotonic()
    result = doctor(tmp_path, "-i", "inventory.yaml")
    err = " ".join(result.stderr.split())
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr + result.stdout
    assert f"inventory.yaml:{line}: refused: {needle}" in err, err
    assert time.monotonic() - started < 30
    assert not (tmp_path / "pwned").exists()


def test_anchors_and_merge_keys_an_inventory_uses_still_load(tmp_path):
    inv = tmp_path / "inventory.yaml"
    inv.write_text("defaults:\n  esxi: &esxi {username: root, password: {env: ESXI_PASSWORD}}\n"
                   "targets:\n  esxi:\n    - &first {name: esx-01, roce: {vmnics: [vmnic2], vfs: [8]}}\n"
                   "    - <<: *first\n      name: esx-02\n    - {name: !!str 03}\n")
    loaded = load_inventory(inv)
    assert [t.name for t in loaded.targets] == ["esx-01", "esx-02", "03"]
    assert loaded.targets[1].roce.vfs == (8,)


def test_hostile_playbook_file_is_exit_2_with_file_and_line(tmp_path):
    (tmp_path / "book.yaml").write_text(
        "name: evil\nstages:\n  - id: !!python/object/apply:os.system ['touch pwned']\n")
    result = doctor(tmp_path, "-i", str(SAMPLE / "inventory.yaml"), "--playbook", "book.yaml")
    err = " ".join(result.stderr.split())
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "book.yaml:3: YAML tag !!python/object/apply:os.system is not allowed" in err
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("body, line, needle", [
    ("targets:\n  esx-01:\n    commands:\n" + laughs("      "), 9, "aliases repeat more than 100000 nodes"),
    ("targets:\n  esx-01: !!python/object/new:os.system ['touch pwned']\n", 2, "YAML tag !!python/object/new"),
    ("targets:\n  esx-01: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n", 2, "nested deeper than 64 levels"),
], ids=["alias-bomb", "python-tag", "deep"])
def test_hostile_replay_recording_is_exit_2_with_file_and_line(tmp_path, body, line, needle):
    (tmp_path / "rec.yaml").write_text(body)
    result = doctor(tmp_path, "-i", str(SAMPLE / "inventory.yaml"), "--replay", "rec.yaml")
    err = " ".join(result.stderr.split())
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert f"rec.yaml:{line}: {needle}" in err, err
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("body, needle", [
    ("hosts: 2\n" + "set: " + "[" * 5000 + "]" * 5000 + "\n", "scenario.yaml:2: refused: nested deeper"),
    ("hosts: !!python/object/apply:os.system ['touch pwned']\n", "scenario.yaml:1: refused: YAML tag !!python"),
    ("hosts: 2\nset:\n" + laughs("  "), "refused: aliases repeat more than"),
], ids=["deep", "python-tag", "alias-bomb"])
def test_hostile_lab_scenario_is_a_scenario_error(tmp_path, body, needle):
    (tmp_path / "scenario.yaml").write_text(body)
    with pytest.raises(ScenarioError) as err:
        load_scenario(tmp_path / "scenario.yaml")
    assert needle in str(err.value)
