"""The CLI's rich Console, made for where the output goes: a terminal, or a pipe / file.

On a terminal: rich's defaults (its width, colour, spinners).
Not a terminal (`roce-wizard checks | cat`, `fix > out.txt`, a CI log): lines are never wrapped
(soft wrap, and a width far past any line, so tables and summaries stay one line each; `COLUMNS`, when
set, still wins), spinners and live progress are off (not interactive), and no colour.

The environment conventions are rich's own, left to it: `NO_COLOR` (https://no-color.org) removes
colour everywhere, a terminal included; `FORCE_COLOR` (https://force-color.org) and `TTY_COMPATIBLE=1`
ask for escape sequences on a pipe (a CI log that renders them), `TTY_COMPATIBLE=0` turns them off on
a terminal, and `TTY_INTERACTIVE` overrides the spinner decision. Forcing colour does not bring back
wrapping: a pipe has no width to wrap to.
"""

from __future__ import annotations

import os
import sys
from typing import IO

from rich.console import Console

PIPE_WIDTH = 10_000  # "no width": wider than any line the tool prints, small enough for rich's layout


def is_tty(stream: IO[str]) -> bool:
    """Whether `stream` is a terminal (a closed or detached stream is not)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def make_console(stream: IO[str] | None = None, *, stderr: bool = False) -> Console:
    """A Console writing to `stream` (default: the current sys.stdout, or sys.stderr with `stderr`)."""
    current = stream if stream is not None else (sys.stderr if stderr else sys.stdout)
    if is_tty(current):
        return Console(file=stream, stderr=stderr)
    columns = os.environ.get("COLUMNS", "")
    return Console(
        file=stream, stderr=stderr,  # file=None: rich follows sys.stdout/sys.stderr as they are swapped
        soft_wrap=True,
        width=int(columns) if columns.isdigit() and int(columns) > 0 else PIPE_WIDTH,
        force_interactive=None if "TTY_INTERACTIVE" in os.environ else False,
    )
