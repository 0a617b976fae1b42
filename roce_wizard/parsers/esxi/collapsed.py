"""`esxcli system module parameters list` as web pages and chat tools render it: the column padding collapsed
to single spaces and no dash row (`Name Type Value Description` / `max_vfs array of uint Number of ...`).

Kept out of modules.py; read by parse_esxi_module_params when no real table is there.
"""

from __future__ import annotations

import re

from roce_wizard.parsers.base import is_elision, is_prompt, lines

_DASH_ROW_RE = re.compile(r"^\s*-+(?:\s+-+)*\s*$")
_COLLAPSED_HEADER_RE = re.compile(r"^\s*Name\s+Type\s+Value\s+Description\s*$")
_COLLAPSED_ROW_RE = re.compile(
    r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s+(array of (?:u?int|u?long|u?short|string|charp)|u?int|u?long|u?short|string|charp"
    r"|bool|invbool)(?:\s+(.*))?$")
_NUMERIC_VALUE_RE = re.compile(r"^-?(?:0[xX][0-9a-fA-F]+|[0-9]+)(?:,-?(?:0[xX][0-9a-fA-F]+|[0-9]+))*$")


def collapsed_params(text: str) -> tuple[dict[str, str], list[str], bool]:
    """Read a collapsed `Name Type Value Description` table: (set values, unreadable names, found).

    With the padding gone the Value column can only be told from the description where the type is
    numeric: a number (or list of numbers) right after the type is the value, a word starts the
    description (the value is empty: not set). For string types the two cannot be told apart: those
    parameters are listed as unreadable, never guessed."""
    ls = lines(text)
    start = next((i for i, ln in enumerate(ls) if _COLLAPSED_HEADER_RE.match(ln)), None)
    if start is None or (start + 1 < len(ls) and _DASH_ROW_RE.match(ls[start + 1])):
        return {}, [], False
    params: dict[str, str] = {}
    unreadable: list[str] = []
    for raw in ls[start + 1:]:
        if not raw.strip() or is_elision(raw) or is_prompt(raw):
            continue
        m = _COLLAPSED_ROW_RE.match(raw)
        if not m:
            continue  # a description's continuation line (`Values : ...`, `Default: 0`)
        name, typ, rest = m.group(1), m.group(2), (m.group(3) or "").split()
        if typ in ("string", "charp", "array of string", "array of charp"):
            unreadable.append(name)
        elif rest and _NUMERIC_VALUE_RE.match(rest[0]):
            params[name] = rest[0]
    return params, unreadable, True
