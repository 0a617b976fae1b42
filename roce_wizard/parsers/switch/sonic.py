"""SONiC `show pfc priority` (the counters are in sonic_counters.py)."""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.parsers.base import Facts, ParseError, is_digits
from roce_wizard.parsers.switch.common import _has, _ints, _output_lines

# --------------------------------------------------------------------------------------------
# SONiC `show pfc priority`, `show pfc counters`, `show queue counters`


def _num(s: str) -> int | None:
    s = s.replace(",", "")
    return int(s) if is_digits(s) else None


def parse_sonic_pfc(text: str) -> Facts:
    out = _output_lines(text)
    facts: Facts = {}
    ports: list[dict[str, Any]] = []
    counters: dict[str, dict[str, list[int | None]]] = {}
    queues: list[dict[str, Any]] = []
    mode = None
    for ln in out:
        s = ln.strip()
        if re.match(r"^Interface\s+Lossless priorities", s):
            mode = "prio"
            continue
        m = re.match(r"^Port (Rx|Tx)\s+PFC0", s)
        if m:
            mode = "pfc_" + m.group(1).lower()
            counters.setdefault(m.group(1).lower(), {})
            continue
        if re.match(r"^Port\s+TxQ\s+Counter/pkts", s):
            mode = "queue"
            continue
        if not s or re.match(r"^-+(\s+-+)*$", s):
            continue
        if re.match(r"^(Port|IFACE|Ingress|Egress|For namespace)\b", s) or s.startswith("#"):
            mode = None if not s.startswith("For namespace") else mode
            continue
        tokens = s.split()
        if mode == "prio" and len(tokens) >= 1 and re.match(r"^Ethernet[0-9]+", tokens[0]):
            ports.append({"port": tokens[0], "priorities": _ints(tokens[1]) if len(tokens) > 1 else []})
        elif mode and mode.startswith("pfc_") and len(tokens) == 9:
            counters[mode[4:]][tokens[0]] = [_num(t) for t in tokens[1:]]
        elif mode == "queue" and len(tokens) >= 6:
            queues.append({"port": tokens[0], "queue": tokens[1], "packets": _num(tokens[2]),
                           "bytes": _num(tokens[3]), "drop_packets": _num(tokens[4]), "drop_bytes": _num(tokens[5])})
    if ports:
        facts["ports"] = ports
    if counters:
        facts["pfc_counters"] = counters
    if queues:
        facts["queue_counters"] = queues
    if not facts:
        raise ParseError("sonic_pfc", "no `Lossless priorities` table nor `Port Rx/Tx PFC0…` counters found")
    return facts


def sniff_sonic_pfc(text: str) -> int:
    if _has(text, r"^\s*Interface\s+Lossless priorities"):
        return 95
    if _has(text, r"^\s*Port (Rx|Tx)\s+PFC0\s+PFC1"):
        return 88
    return 0
