"""Small helpers shared by the perf parsers: numbers, a pasted shell prompt, order-keeping dedup."""

from __future__ import annotations

import re
from typing import Any

# --------------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------------

_NUM_RE = re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$")

# A prompt a person pasted before a command (kept local: PROMPT_RE in base needs the first command char).
_PROMPT_PREFIX_RE = re.compile(
    r"^\s*(?:\[[^\]]*\]\s*[#$]|[\w.-]+@[\w.-]+(?::[^\s#$]*)?\s*[#$]|[$>]|#(?=\s))\s*"
)


def _to_float(value: str | None) -> float | None:
    if value is None:
        return None
    s = value.strip()
    if not _NUM_RE.match(s):
        return None
    try:
        return float(s)
    except ValueError:
        return None


def _strip_prompt(line: str) -> str:
    return _PROMPT_PREFIX_RE.sub("", line, count=1)


def _uniq(items: list[Any]) -> list[Any]:
    seen: list[Any] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen
