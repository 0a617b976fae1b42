"""Small helpers shared by the Linux host parsers."""

from __future__ import annotations

from collections.abc import Iterable

from roce_wizard.parsers.base import (
    is_bare_command,
    lines,
    prompt_command,
)

# ---------------------------------------------------------------------------------------------
# helpers


def _commands(text: str, tools: Iterable[str] = ()) -> list[str]:
    tools = tuple(tools)
    out = []
    for ln in lines(text):
        c = prompt_command(ln)
        if c is None and tools and is_bare_command(ln, tools):
            c = ln.strip()
        if c:
            out.append(c)
    return out


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
