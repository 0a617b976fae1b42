"""The parser contract shared by every parser module.

A parser is a pure function ``text -> dict`` (the facts of one kind, DOMAIN §6 vocabulary).
A sniffer is a pure function ``text -> int`` scoring how sure it is that ``text`` was printed by
that tool (0 = not this kind; higher wins in ``detect``).  Both must accept text as a person
pastes it: prompts, the command line itself, blank lines, tabs, ``...`` elisions, trailing
spaces.  A value a parser cannot read is absent or ``None`` — never guessed.  A parser raises
``ParseError`` only when the text is not that tool's output at all (nothing recognisable).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Facts = dict[str, Any]


class ParseError(ValueError):
    """The text is not output of the expected tool. Carries the 1-based line and what was expected."""

    def __init__(self, kind: str, message: str, line: int | None = None):
        self.kind = kind
        self.line = line
        where = f" (line {line})" if line else ""
        super().__init__(f"{kind}: {message}{where}")


@dataclass(frozen=True)
class Parser:
    kind: str
    parse: Callable[[str], Facts]
    sniff: Callable[[str], int]
    description: str = ""


# A shell prompt a person pasted along with the output: `[root@host ~]# cmd`, `user@h:~$ cmd`,
# `[esxi]$ cmd`, `# cmd`, `$ cmd`, `switch# cmd`.
PROMPT_RE = re.compile(r"^\s*(?:\[[^\]]*\]\s*[#$]|[\w.-]+@[\w.-]+(?::[^\s#$]*)?\s*[#$]|[#$>])\s+\S")


def lines(text: str) -> list[str]:
    """Split into lines, normalising CRLF and dropping trailing whitespace on each line."""
    return [ln.rstrip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]


def is_elision(line: str) -> bool:
    """A `...` / `......` / `[...]` line an author put in place of omitted output."""
    s = line.strip()
    return bool(s) and (set(s) <= {".", "…"} or s in ("[...]", "(...)", "<snip>", "[snip]"))


def to_int(value: str | None) -> int | None:
    """`16` -> 16, `0x08` -> 8, anything else -> None (unknown, not a guess)."""
    if value is None:
        return None
    s = value.strip()
    try:
        return int(s, 0) if s.lower().startswith("0x") else int(s)
    except ValueError:
        return None


def to_bool(value: str | None) -> bool | None:
    """on/off, true/false, yes/no, enabled/disabled, 1/0 -> bool; anything else -> None."""
    if value is None:
        return None
    s = value.strip().lower()
    if s in ("on", "true", "yes", "enabled", "enable", "1", "up"):
        return True
    if s in ("off", "false", "no", "disabled", "disable", "0", "down"):
        return False
    return None
