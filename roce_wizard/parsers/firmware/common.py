"""Small helpers shared by the firmware-tool parsers."""

from __future__ import annotations

# ---------------------------------------------------------------------------------------------
# shared helpers

def _na(value: str | None) -> str | None:
    """`N/A`, `NA`, `-` and empty -> None; anything else stripped."""
    if value is None:
        return None
    s = value.strip()
    return None if s in ("", "N/A", "NA", "n/a", "-", "--") else s
