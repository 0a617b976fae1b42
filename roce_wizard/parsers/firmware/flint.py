"""flint query (MFT)."""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    is_digits,
    is_elision,
    is_prompt,
    lines,
    snake,
)
from roce_wizard.parsers.firmware.common import _na

# ---------------------------------------------------------------------------------------------
# flint query

_FLINT_KV_RE = re.compile(r"^([A-Za-z][A-Za-z0-9 ()/._-]{0,40}?):(?:\s+(.*?))?\s*$")


def parse_flint_query(text: str) -> Facts:
    facts: dict[str, Any] = {}
    last: str | None = None
    guid_columns: list[str] | None = None
    for raw in lines(text):
        s = raw.strip()
        if not s or is_elision(s) or is_prompt(raw) or re.match(r"^(sudo\s+)?(m?flint)\s", s):
            continue
        if s.startswith("-E-"):
            facts.setdefault("errors", []).append(s)
            continue
        m = _FLINT_KV_RE.match(s)
        if m:
            key, value = snake(m.group(1)), (m.group(2) or "")
            last = key
            if key == "description":
                # Not a description: the column header of the GUID/MAC rows that follow.
                guid_columns = value.split()
                facts["guid_columns"] = guid_columns
                continue
            if key == "rom_info":
                facts["rom_info"] = [_rom_entry(value)] if _na(value) else []
                continue
            if key in ("base_guid", "base_mac") and value:
                toks = value.split()
                facts[key] = toks[0]
                if len(toks) > 1 and is_digits(toks[1]):
                    facts[f"{key}_num"] = int(toks[1])
                continue
            facts[key] = _na(value)
            continue
        # Continuation line (indented): another ROM, or more of the previous value.
        if last == "rom_info":
            facts.setdefault("rom_info", []).append(_rom_entry(s))
        elif last is not None and isinstance(facts.get(last), str):
            facts[last] = f"{facts[last]} {s}"
    if not any(k in facts for k in ("fw_version", "psid", "image_type", "product_version")):
        if facts.get("errors"):
            return {"fw_version": None, "psid": None, "errors": facts["errors"]}
        raise ParseError("flint_query", "no `FW Version:` / `PSID:` lines found")
    facts.setdefault("fw_version", None)
    facts.setdefault("psid", None)
    facts.setdefault("image_type", None)
    facts.setdefault("product_version", None)
    facts["security"] = facts.get("security_attributes")
    return facts


def _rom_entry(value: str) -> dict[str, str]:
    entry = dict(kv.split("=", 1) for kv in value.split() if "=" in kv)
    return entry or {"raw": value}


def sniff_flint_query(text: str) -> int:
    keys = set()
    for ln in lines(text):
        m = _FLINT_KV_RE.match(ln.strip())
        if m:
            keys.add(snake(m.group(1)))
    if "fw_version" in keys and "psid" in keys:
        if keys & {"image_type", "rom_info", "security_attributes", "fw_release_date", "product_version"}:
            return 90
        return 60
    if "fw_version" in keys and "image_type" in keys:
        return 60
    return 0
