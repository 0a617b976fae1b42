"""The CLI's console for where output goes (roce_wizard/console.py): a pipe is not a terminal.

A small program prints through `make_console()` a 200-character line in red, a bold green `Text` of 200
characters and a spinner (`console.status`), then `done`; it runs in a subprocess whose stdout is a pipe,
or a pseudo-terminal of 80 columns (the `pty` module), with the colour variables set or not.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from roce_wizard.console import make_console

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = """\
import time
from rich.text import Text
from roce_wizard.console import make_console
console = make_console()
console.print("[red]" + "x" * 200 + "[/]")
console.print(Text("y" * 200, style="bold green"))
with console.status("working"):
    time.sleep(0.2)
console.print("done")
"""
SGR = re.compile(r"\x1b\[([0-9;]*)m")
OURS = ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "LINES")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in OURS}
    return {**env, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", **extra}


def _through_pipe(**extra: str) -> str:
    run = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=_env(**extra),
                         timeout=60)
    assert run.returncode == 0, run.stderr
    return run.stdout


def _through_pty(**extra: str) -> str:
    """What the program writes to a terminal of 80 columns (newlines as the terminal sends them, \\r\\n)."""
    pty = pytest.importorskip("pty")
    fcntl, termios = pytest.importorskip("fcntl"), pytest.importorskip("termios")
    main, sub = pty.openpty()
    fcntl.ioctl(sub, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen([sys.executable, "-c", PROGRAM], stdin=sub, stdout=sub, stderr=sub,
                            env=_env(**extra), close_fds=True)
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
    assert proc.wait(timeout=60) == 0, b"".join(chunks).decode(errors="replace")
    return b"".join(chunks).decode("utf-8", errors="replace")


def _colour_codes(text: str) -> list[str]:
    """The SGR parameters that set a colour (30-37, 38;…, 39-47, 48;…, 49, 90-107), not bold/underline."""
    found = []
    for params in SGR.findall(text):
        parts = params.split(";")
        if any(p.isdigit() and (30 <= int(p) <= 49 or 90 <= int(p) <= 107) for p in parts):
            found.append(params)
    return found


def test_a_pipe_gets_long_lines_whole_without_escapes_or_spinner():
    out = _through_pipe()
    assert out.splitlines() == ["x" * 200, "y" * 200, "done"]
    assert "\x1b" not in out


def test_columns_still_wins_on_a_pipe():
    out = _through_pipe(COLUMNS="120")
    assert out.splitlines() == ["x" * 200, "y" * 200, "done"]  # print() of text never wraps on a pipe


def test_force_color_colours_a_pipe_and_still_does_not_wrap():
    out = _through_pipe(FORCE_COLOR="1")
    assert _colour_codes(out)
    assert SGR.sub("", out).replace("\x1b[?25l", "").replace("\x1b[?25h", "").splitlines() == [
        "x" * 200, "y" * 200, "done"]


def test_a_terminal_gets_colour_and_its_width():
    out = _through_pty()
    assert _colour_codes(out), "no colour on a terminal: the NO_COLOR test below would prove nothing"
    lines = [SGR.sub("", line) for line in out.split("\r\n")]
    assert "x" * 80 in lines and "x" * 200 not in lines  # wrapped at the terminal's 80 columns


def test_no_color_removes_colour_on_a_terminal():
    out = _through_pty(NO_COLOR="1")
    assert "xxxx" in out and "done" in out
    assert _colour_codes(out) == []


def test_follows_sys_stdout_as_it_is_swapped():
    """make_console() without a stream writes where sys.stdout points when it prints (CliRunner swaps it)."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        make_console().print("[bold]" + "z" * 150 + "[/]")
    assert buffer.getvalue() == "z" * 150 + "\n"
