"""ethtool: `ethtool -a` and `ethtool -S`."""

from __future__ import annotations

import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    body_lines,
    fraction,
    to_bool,
)
from roce_wizard.parsers.linux.common import _commands

# ---------------------------------------------------------------------------------------------
# ethtool -a

_PAUSE_HEAD = re.compile(r"^\s*Pause parameters for\s+(\S+?):?\s*$")
_PAUSE_KV = re.compile(r"^\s*(Autonegotiate|RX|TX|RX negotiated|TX negotiated):\s*(\S+)\s*$")


def parse_ethtool_pause(text: str) -> Facts:
    facts: Facts = {"interface": None, "rx": None, "tx": None, "autoneg": None}
    seen = False
    for c in _commands(text, ("ethtool",)):
        m = re.search(r"\bethtool\s+(?:-a|--show-pause)\s+(\S+)", c)
        if m:
            facts["interface"] = m.group(1)
    for ln in body_lines(text, ("ethtool",)):
        m = _PAUSE_HEAD.match(ln)
        if m:
            facts["interface"] = m.group(1)
            seen = True
            continue
        m = _PAUSE_KV.match(ln)
        if m:
            key = {"Autonegotiate": "autoneg", "RX": "rx", "TX": "tx",
                   "RX negotiated": "rx_negotiated", "TX negotiated": "tx_negotiated"}[m.group(1)]
            facts[key] = to_bool(m.group(2))
            seen = True
            continue
        m = re.match(r"^\s*(Cannot get device pause settings.*|netlink error.*)$", ln)
        if m:
            facts["error"] = m.group(1).strip()
            seen = True
    if not seen:
        raise ParseError("ethtool_pause", "no `Pause parameters for` block or RX/TX line found")
    return facts


def sniff_ethtool_pause(text: str) -> int:
    body = body_lines(text, ("ethtool",))
    if any(_PAUSE_HEAD.match(ln) for ln in body):
        return 95
    f = fraction(body, lambda ln: bool(_PAUSE_KV.match(ln)))
    return round(70 * f) if f else 0


# ---------------------------------------------------------------------------------------------
# ethtool -S

_STAT_LINE = re.compile(r"^\s*([A-Za-z0-9_][\w.\-\[\]/]*):\s+(-?[0-9]+)\s*$")


def parse_ethtool_stats(text: str) -> Facts:
    counters: dict[str, int] = {}
    facts: Facts = {}
    for c in _commands(text, ("ethtool",)):
        m = re.search(r"\bethtool\s+(?:-\w+\s+)*(?:-S|--statistics)\s+(?:--\S+\s+)*(\S+)", c)
        if m:
            facts["interface"] = m.group(1)
    for ln in body_lines(text, ("ethtool",)):
        m = _STAT_LINE.match(ln)
        if m:
            counters[m.group(1)] = int(m.group(2))
    if not counters:
        raise ParseError("ethtool_stats", "no `name: value` counter line found")
    facts["counters"] = counters
    return facts


def sniff_ethtool_stats(text: str) -> int:
    body = body_lines(text, ("ethtool",))
    f = fraction(body, lambda ln: bool(_STAT_LINE.match(ln)) or ln.strip() == "NIC statistics:")
    if not f:
        return 0
    if any(ln.strip() == "NIC statistics:" for ln in body) or any(
            re.search(r"\bethtool\s+(?:-\w+\s+)*(?:-S|--statistics)\b", c)
            for c in _commands(text, ("ethtool",))):
        return round(95 * f)
    return round(70 * f)
