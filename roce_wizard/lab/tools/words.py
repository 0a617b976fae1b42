"""Words the simulated tools read as booleans (esxcli options, mlxconfig values)."""

from __future__ import annotations


def bool_word(value: str) -> bool | None:
    v = value.strip().lower()
    if v in ("true", "1", "yes", "on"):
        return True
    if v in ("false", "0", "no", "off"):
        return False
    return None
