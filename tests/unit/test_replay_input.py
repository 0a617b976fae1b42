"""`--replay` given something that is not a recording: a FIFO, a device, an endless stream or bytes that
are not UTF-8 are refused with exit 2 and the path, never waited on or read forever (issue 11, item 5)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

INVENTORY = "targets:\n  linux:\n    - name: node-01\n      address: 127.0.0.1\n"


def doctor(tmp_path, replay) -> subprocess.CompletedProcess[str]:
    inv = tmp_path / "inventory.yaml"
    inv.write_text(INVENTORY)
    env = {**os.environ, "ROCE_WIZARD_STATE_DIR": str(tmp_path / "state")}
    return subprocess.run([sys.executable, "-m", "roce_wizard.cli", "doctor", "-i", str(inv), "--replay", str(replay)],
                          capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("name", ["fifo", "/dev/zero"])
def test_replay_of_a_fifo_or_a_device_is_refused_not_waited_on(tmp_path, name):
    path = tmp_path / "rec.fifo" if name == "fifo" else name
    if name == "fifo":
        os.mkfifo(path)
    result = doctor(tmp_path, path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"--replay: {path}" in result.stderr and "not a file: refused" in result.stderr
    assert "Traceback" not in result.stderr


def test_replay_that_is_not_utf8_says_so(tmp_path):
    rec = tmp_path / "rec.yaml"
    rec.write_bytes(b"targets:\n  node-01: \xff\xfe\n")
    result = doctor(tmp_path, rec)
    assert result.returncode == 2
    assert "rec.yaml: not UTF-8 text (byte 20)" in result.stderr and "Traceback" not in result.stderr
