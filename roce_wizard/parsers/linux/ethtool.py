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
from roce_wizard.parsers.unwrap import per_host

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
#
# mlx5 names its per-priority counters `rx_prio<p>_bytes`, `_packets`, `_discards`, `tx_prio<p>_bytes`,
# `_packets` (physical port, per priority: what left/arrived on each PCP priority) and, for PFC,
# `rx_prio<p>_pause`, `_pause_duration`, `_pause_transition`, `tx_prio<p>_pause`, `_pause_duration`; the
# congestion counters `rx_out_of_buffer`, `rx_discards_phy`, `np_ecn_marked_roce_packets`, `np_cnp_sent`,
# `rp_cnp_handled` sit beside them. Source: the kernel's
# Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst ("Priority Port Counters") and
# drivers/net/ethernet/mellanox/mlx5/core/en_stats.c (`pport_per_prio_traffic_stats_desc`: rx_prio%d_bytes,
# rx_prio%d_packets, rx_prio%d_discards, tx_prio%d_bytes, tx_prio%d_packets; the pfc group: rx/tx_prio%d_pause,
# _pause_duration, rx_prio%d_pause_transition). Every `(rx|tx)_prio<p>_<what>` line lands in
# `prio[p]["<rx|tx>_<what>"]`, whatever <what> a driver version adds.

_STAT_LINE = re.compile(r"^\s*([A-Za-z0-9_][\w.\-\[\]/]*):\s+(-?[0-9]+)\s*$")
_PRIO_NAME = re.compile(r"^(rx|tx)_prio([0-7])_([a-z0-9_]+)$")


def _ethtool_stats_one(text: str) -> Facts:
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
    prio: dict[int, dict[str, int]] = {}
    for name, value in counters.items():
        m = _PRIO_NAME.match(name)
        if m:
            prio.setdefault(int(m.group(2)), {})[f"{m.group(1)}_{m.group(3)}"] = value
    if prio:
        facts["prio"] = dict(sorted(prio.items()))
    return facts


parse_ethtool_stats = per_host(_ethtool_stats_one)


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
