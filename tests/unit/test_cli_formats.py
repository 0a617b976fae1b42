"""The CLI as a CI job and a shell use it (issue 18 items 1-3), in subprocesses: `doctor --junit-xml/--ctrf`,
shell completion of check codes, and output into pipes vs terminals.

Runs doctor over the recorded sample cluster (examples/sample-cluster/, offline); the formats themselves
are tested in test_junit_ctrf.py, completion in test_completion.py, the console in test_console.py: here,
that the CLI is wired to them.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample-cluster"
REPLAY = ["doctor", "-i", str(SAMPLE / "inventory.yaml"), "--replay", str(SAMPLE / "recordings.yaml")]
COLOUR = re.compile(r"\x1b\[[0-9;]*(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])(?:;[0-9;]*)?m")
OURS = ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "LINES")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in OURS}
    return {**env, "PYTHONPATH": str(ROOT), "ROCE_WIZARD_STATE_DIR": str(tmp_path / "state"),
            "TERM": "xterm-256color", **extra}


def _cli(tmp_path: Path, *args: str, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "roce_wizard.cli", *args], capture_output=True, text=True,
                          env=_env(tmp_path, **extra), cwd=tmp_path, timeout=120)


def test_doctor_writes_junit_xml_and_ctrf_beside_its_json(tmp_path):
    run = _cli(tmp_path, *REPLAY, "--json", "--junit-xml", str(tmp_path / "doctor.xml"),
               "--ctrf", str(tmp_path / "doctor.ctrf.json"))
    assert run.returncode == 1, run.stderr  # the sample cluster has failures: the exit code is doctor's
    results = json.loads(run.stdout)["results"]
    root = ET.parse(tmp_path / "doctor.xml").getroot()
    assert root.tag == "testsuites" and len(list(root.iter("testcase"))) == len(results)
    assert int(root.get("failures")) == sum(r["status"] == "fail" for r in results)
    ctrf = json.loads((tmp_path / "doctor.ctrf.json").read_text(encoding="utf-8"))
    assert ctrf["reportFormat"] == "CTRF" and ctrf["results"]["summary"]["tests"] == len(results)


def test_an_unwritable_report_file_is_a_usage_error(tmp_path):
    run = _cli(tmp_path, *REPLAY, "--junit-xml", str(tmp_path / "no-such-dir" / "doctor.xml"))
    assert run.returncode == 2
    assert "error: --junit-xml" in run.stderr and "Traceback" not in run.stderr


def _complete(tmp_path: Path, words: str) -> list[str]:
    run = subprocess.run(["roce-wizard"], capture_output=True, text=True, timeout=60, cwd=tmp_path, env=_env(
        tmp_path, _ROCE_WIZARD_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=str(len(words.split()) - 1)))
    assert run.returncode == 0, run.stderr
    return run.stdout.split()


def test_shell_completion_is_on_and_completes_check_codes(tmp_path):
    # the shell is named, not detected from the process tree (under a test runner the parents are python)
    shown = subprocess.run(["roce-wizard", "--show-completion", "bash"], capture_output=True, text=True, cwd=tmp_path,
                           env=_env(tmp_path, _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1"), timeout=60)
    assert "complete -o default -F _roce_wizard_completion roce-wizard" in shown.stdout
    assert _complete(tmp_path, "roce-wizard doctor --select RW20") == [f"RW20{n}" for n in range(1, 10)]
    assert _complete(tmp_path, "roce-wizard fix --skip RW201,RW20")[0] == "RW201,RW202"
    assert _complete(tmp_path, "roce-wizard explain pfc-on") == ["pfc-on-roce-priority"]


def test_checks_into_a_pipe_is_one_line_per_check_without_escapes(tmp_path):
    run = _cli(tmp_path, "checks")
    lines = run.stdout.splitlines()
    assert run.returncode == 0 and "\x1b" not in run.stdout
    assert all(re.match(r"RW\d{3}  ", line) for line in lines) and max(map(len, lines)) > 80


def _on_a_terminal(tmp_path: Path, *args: str, **extra: str) -> str:
    import fcntl
    import pty
    import termios

    main, sub = pty.openpty()
    fcntl.ioctl(sub, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "roce_wizard.cli", *args], stdin=sub, stdout=sub, stderr=sub,
                            env=_env(tmp_path, **extra), cwd=tmp_path)
    os.close(sub)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    proc.wait(timeout=120)
    return b"".join(chunks).decode("utf-8", errors="replace")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_no_color_on_a_terminal(tmp_path):
    assert COLOUR.search(_on_a_terminal(tmp_path, *REPLAY)), "doctor on a terminal should be in colour"
    out = _on_a_terminal(tmp_path, *REPLAY, NO_COLOR="1")
    assert "esx-02" in out and not COLOUR.search(out)


def test_doctor_local_checks_this_machine_without_an_inventory(tmp_path):
    """`doctor --local`: the probes run here as subprocesses (transports/local.py), one target named after
    this machine; it refuses the options that belong to an inventory run."""
    env = {**os.environ, "ROCE_WIZARD_STATE_DIR": str(tmp_path / "state")}
    done = subprocess.run([sys.executable, "-m", "roce_wizard.cli", "doctor", "--local", "--select", "RW003",
                           "--json"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    [result] = json.loads(done.stdout)["results"]
    boot_id = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="utf-8").strip()
    assert result["check"] == "RW003" and result["status"] == "pass" and boot_id in result["summary"]
    refused = subprocess.run([sys.executable, "-m", "roce_wizard.cli", "doctor", "--local", "--host", "x"],
                             capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert refused.returncode == 2 and "--local checks this machine" in refused.stderr
    stray = subprocess.run([sys.executable, "-m", "roce_wizard.cli", "doctor", "--netdev", "ens1"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert stray.returncode == 2 and "go with --local" in stray.stderr
