"""The progress bar of long runs (roce_wizard/cli/progress.py): on a terminal (a pseudo-terminal from the `pty`
module, stdout and stderr both on it) doctor shows "checking … N/N targets judged" while it runs; into a pipe, or
with --json, nothing of it. The sample cluster's recordings answer (--replay): a real run, no hosts needed.
The reboot side is driven by the engine's own RebootProgress events in a small program on a pty."""

from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample-cluster"
DOCTOR = [sys.executable, "-m", "roce_wizard.cli", "doctor", "-i", str(SAMPLE / "inventory.yaml"),
          "--replay", str(SAMPLE / "recordings.yaml")]
OURS = ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "LINES")
JUDGED = re.compile(r"checking.*?(\d+)/(\d+) targets judged")


def env_for(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in OURS}
    return {**env, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "ROCE_WIZARD_STATE_DIR": str(tmp_path)}


def through_pty(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    """What a program writes to a terminal of 120 columns (stdin, stdout and stderr on it), and its exit code."""
    pty = pytest.importorskip("pty")
    fcntl, termios = pytest.importorskip("fcntl"), pytest.importorskip("termios")
    main, sub = pty.openpty()
    fcntl.ioctl(sub, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen(args, stdin=sub, stdout=sub, stderr=sub, env=env, close_fds=True)
    os.close(sub)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the program closed its side
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    return proc.wait(timeout=120), b"".join(chunks).decode("utf-8", errors="replace")


def plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def test_doctor_shows_targets_judged_on_a_terminal(tmp_path):
    code, out = through_pty(DOCTOR, env_for(tmp_path))
    assert code in (0, 1, 3), out
    seen = [(int(a), int(b)) for a, b in JUDGED.findall(plain(out))]
    assert seen, out[-2000:]
    total = seen[-1][1]
    assert total > 1 and seen[-1] == (total, total)  # every target judged, then erased for the report
    assert "run log:" in out  # the report is printed as before, after the bar


def test_doctor_into_a_pipe_or_with_json_shows_no_progress(tmp_path):
    piped = subprocess.run(DOCTOR, capture_output=True, text=True, env=env_for(tmp_path), timeout=120, check=False)
    assert piped.returncode in (0, 1, 3), piped.stderr
    assert "run log:" in piped.stdout
    assert "targets judged" not in piped.stdout + piped.stderr
    code, out = through_pty([*DOCTOR, "--json"], env_for(tmp_path))
    assert code in (0, 1, 3) and '"results"' in out
    assert "targets judged" not in out


REBOOTS = """\
import time
from roce_wizard.cli.progress import RunProgress
from roce_wizard.engine.events import RebootProgress, RunPlanned, TargetJudged, RunEnded
with RunProgress.for_terminal() as bar:
    for host in ("esx-01", "esx-02"):
        bar.on_event(RebootProgress(host, "rebooting", "rebooting"))
    time.sleep(0.3)
    bar.on_event(RebootProgress("esx-01", "back", "back after 42 s"))
    time.sleep(0.3)
    print("a line the front end prints")
    bar.on_event(RunPlanned(["esx-01", "esx-02"], ["RW001"]))
    bar.on_event(TargetJudged("esx-01", False, {}, 0.1))
    time.sleep(0.3)
print("done")
"""


def test_fix_shows_hosts_back_of_hosts_rebooting_on_a_terminal(tmp_path):
    code, out = through_pty([sys.executable, "-c", REBOOTS], env_for(tmp_path))
    assert code == 0, out
    text = plain(out)
    assert re.search(r"rebooting \(esx-01: back\).*1/2 hosts back", text), text
    assert re.search(r"checking.*1/2 targets judged", text), text
    assert "a line the front end prints" in text and text.rstrip().endswith("done")
    piped = subprocess.run([sys.executable, "-c", REBOOTS], capture_output=True, text=True, env=env_for(tmp_path),
                           timeout=60, check=False)
    assert piped.stdout == "a line the front end prints\ndone\n" and piped.stderr == ""
