"""Small helpers shared by the RDMA-stack parsers."""

from __future__ import annotations

import ipaddress
import re

from roce_wizard.parsers.base import (
    lines,
)

# ---------------------------------------------------------------------------------------------
# helpers

_HTML_TAG = re.compile(r"</?(?:pre|code|b|i|br|span|tt)\s*/?>", re.I)


def _numbered(text: str) -> list[tuple[int, str]]:
    return list(enumerate(lines(text), start=1))


def _num(value: str | None) -> int | float | None:
    """`25` -> 25, `2.5` -> 2.5, anything else -> None."""
    if value is None:
        return None
    m = re.fullmatch(r"\s*(-?[0-9]+(?:\.[0-9]+)?)\s*", value)
    if not m:
        return None
    f = float(m.group(1))
    return int(f) if f.is_integer() and "." not in m.group(1) else f


def _first_int(value: str | None) -> int | None:
    if value is None:
        return None
    m = re.match(r"\s*(-?[0-9]+)\b", value)
    return int(m.group(1)) if m else None


def _name_and_num(value: str) -> tuple[str | None, int | None]:
    """`PORT_ACTIVE (4)` -> ("PORT_ACTIVE", 4); `4: ACTIVE` -> ("ACTIVE", 4)."""
    v = value.strip()
    m = re.fullmatch(r"(\S+)\s*\(([0-9]+)\)", v)
    if m:
        return m.group(1), int(m.group(2))
    m = re.fullmatch(r"([0-9]+)\s*:\s*(\S+)", v)
    if m:
        return m.group(2), int(m.group(1))
    return (v or None), None


def _gid_facts(gid: str) -> dict:
    """The exploded form of a GID and the IPv4 address it carries when it is IPv4-mapped."""
    out: dict = {"gid_full": None, "ipv4": None}
    try:
        addr = ipaddress.IPv6Address(gid)
    except ValueError:
        return out
    out["gid_full"] = addr.exploded
    if addr.ipv4_mapped is not None:
        out["ipv4"] = str(addr.ipv4_mapped)
    return out


def _ver_of(gid_type: str | None) -> str | None:
    if not gid_type:
        return None
    m = re.search(r"\b[vV]([0-9])\b", gid_type)
    return f"v{m.group(1)}" if m else None
