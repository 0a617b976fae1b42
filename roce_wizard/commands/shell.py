"""Shell quoting: a value that reaches a remote shell (executed, or shown for pasting) is validated against a
strict pattern, then quoted; one that does not fit raises `UnsafeValue` and never becomes a command."""

from __future__ import annotations

import re
import shlex

__all__ = ["TOKEN", "UnsafeValue", "safe"]

TOKEN = re.compile(r"^[A-Za-z0-9_.:@/-]{1,64}$")


class UnsafeValue(ValueError):
    """An inventory or discovered value that must not reach a shell."""


def safe(value: str, pattern: re.Pattern[str] = TOKEN) -> str:
    """Validate a value against a strict pattern, then shell-quote it (belt and braces)."""
    if not isinstance(value, str) or not pattern.match(value):
        raise UnsafeValue(f"refusing to put {value!r} into a remote command")
    return shlex.quote(value)
