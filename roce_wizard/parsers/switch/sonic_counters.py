"""SONiC counters: `show pfc counters [--history]` (kind sonic_show_pfc) and `show queue counters` (kind
sonic_queue_counters; also `--voq`, the trim columns of newer releases, and `--json`).

Both are tabulate tables (sonic-utilities scripts/pfcstat and scripts/queuestat). Columns are read by their
header, so a release that adds or drops a column (Trim/pkts, Credit-WD-Del/pkts) reads the same; a cell that
says `N/A` or is not an ASCII number is unknown (null), never 0. Thousands separators (`1,200`) are removed.
Port names are kept as printed (`Ethernet0`, `Ethernet-BP256`, a chassis' `testsw|Ethernet0`).
The `show pfc priority` table (lossless priorities, what RW501/RW502 judge) stays kind `sonic_pfc`
(switch/sonic.py), also when a triage paste holds it with these counters.
"""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.parsers.base import Facts, ParseError, Parser, is_digits, lines
from roce_wizard.parsers.switch.structured import load_structured

_RULE = re.compile(r"^\s*-+(\s+-+)+\s*$")
_PFC_HEAD = re.compile(r"^\s*Port (Rx|Tx)\s+PFC0\s+PFC1\s+PFC2\s+PFC3\s+PFC4\s+PFC5\s+PFC6\s+PFC7\s*$")
_HISTORY_HEAD = re.compile(r"^\s*Port\s+Priority\s+RX Pause Transitions\s+Total RX Pause Time (US|MS)\s+"
                           r"Recent RX Pause Time (US|MS)\s+Recent RX Pause Timestamp\s*$")
_QUEUE_HEAD = re.compile(r"^\s*Port\s+(TxQ|Voq)\s+(Counter/pkts|Trim/pkts)\b")
_QUEUE_NAME = re.compile(r"^(UC|MC|ALL|VOQ)([0-9]+)$")
_LOSSLESS_HEAD = re.compile(r"^\s*Interface\s+Lossless priorities", re.MULTILINE)

# table column -> fact key; a column not listed is kept under its header lowercased
_QUEUE_COLUMNS = {"Counter/pkts": "packets", "Counter/bytes": "bytes", "Drop/pkts": "drop_packets",
                  "Drop/bytes": "drop_bytes", "Trim/pkts": "trim_packets", "TrimSent/pkts": "trim_sent_packets",
                  "TrimDrop/pkts": "trim_drop_packets", "Credit-WD-Del/pkts": "credit_wd_del_packets"}
# `--json` keys (queuestat's json output) -> the same fact keys
_QUEUE_JSON = {"totalpacket": "packets", "totalbytes": "bytes", "droppacket": "drop_packets",
               "dropbytes": "drop_bytes", "trimpacket": "trim_packets", "trimsentpacket": "trim_sent_packets",
               "trimdroppacket": "trim_drop_packets", "creditWDPkts": "credit_wd_del_packets"}


def _count(cell: Any) -> int | None:
    """`1,200` -> 1200; `N/A`, `٣`, anything else -> None (unknown)."""
    if isinstance(cell, int) and not isinstance(cell, bool):
        return cell
    if not isinstance(cell, str):
        return None
    s = cell.strip().replace(",", "")
    return int(s) if is_digits(s) else None


# --------------------------------------------------------------------------------------------
# show pfc counters


def parse_sonic_show_pfc(text: str) -> Facts:
    ports: dict[str, dict[str, Any]] = {}
    history: list[dict[str, Any]] = []
    mode: str | None = None
    unit = 1
    for ln in lines(text):
        m = _PFC_HEAD.match(ln)
        if m:
            mode = m.group(1).lower()
            continue
        m = _HISTORY_HEAD.match(ln)
        if m:
            mode, unit = "history", 1000 if m.group(2) == "MS" else 1
            continue
        if not ln.strip() or _RULE.match(ln):
            continue
        tokens = ln.split()
        if mode in ("rx", "tx") and len(tokens) == 9:
            row = ports.setdefault(tokens[0], {"port": tokens[0], "rx_pfc": None, "tx_pfc": None})
            row[f"{mode}_pfc"] = [_count(t) for t in tokens[1:]]
        elif mode == "history" and len(tokens) >= 5 and re.fullmatch(r"PFC[0-7]", tokens[1]):
            total, recent = _count(tokens[3]), _count(tokens[4])
            stamp = " ".join(tokens[5:]) or None
            history.append({"port": tokens[0], "priority": int(tokens[1][3]),
                            "rx_pause_transitions": _count(tokens[2]),
                            "total_rx_pause_time_us": total * unit if total is not None else None,
                            "recent_rx_pause_time_us": recent * unit if recent is not None else None,
                            "recent_rx_pause_timestamp": None if stamp in (None, "N/A") else stamp})
        elif mode is not None:
            mode = None  # another table (a paste with more than one command): not PFC counters
    if not ports and not history:
        raise ParseError("sonic_show_pfc", "no `Port Rx/Tx  PFC0 … PFC7` table nor `--history` table found")
    facts: Facts = {"ports": list(ports.values())}
    if history:
        facts["history"] = history
    return facts


def sniff_sonic_show_pfc(text: str) -> int:
    pfc = any(_PFC_HEAD.match(ln) or _HISTORY_HEAD.match(ln) for ln in lines(text))
    if not pfc:
        return 0
    # a triage paste with the lossless-priority or queue table too is sonic_pfc's (it reads them together)
    others = _LOSSLESS_HEAD.search(text) or any(_QUEUE_HEAD.match(ln) for ln in lines(text))
    return 80 if others else 92


# --------------------------------------------------------------------------------------------
# show queue counters


def _queue_row(port: str, queue: str) -> dict[str, Any]:
    m = _QUEUE_NAME.match(queue)
    return {"port": port, "queue": queue, "type": m.group(1) if m else None,
            "index": int(m.group(2)) if m else None}


def _queues_from_json(data: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if not isinstance(data, dict):
        return out
    for port, queues in data.items():
        if not isinstance(queues, dict):
            continue
        for queue, counters in queues.items():
            if not isinstance(counters, dict) or not _QUEUE_NAME.match(str(queue)):
                continue
            row = _queue_row(str(port), str(queue))
            for key, fact in _QUEUE_JSON.items():
                if key in counters:
                    row[fact] = _count(counters[key])
            out.append(row)
    return out


def parse_sonic_queue_counters(text: str) -> Facts:
    data = load_structured(text)
    if data is not None:
        queues = _queues_from_json(data)
        if not queues:
            raise ParseError("sonic_queue_counters", "JSON without {port: {UCn/MCn/VOQn: counters}}")
        return {"queues": queues, "columns": None, "format": "json"}
    queues: list[dict[str, Any]] = []
    columns: list[str] | None = None
    seen_columns: list[str] = []
    for ln in lines(text):
        if _QUEUE_HEAD.match(ln):
            columns = ln.split()
            seen_columns = seen_columns or columns
            continue
        if columns is None or not ln.strip() or _RULE.match(ln):
            continue
        tokens = ln.split()
        if len(tokens) != len(columns) or not _QUEUE_NAME.match(tokens[1]):
            columns = None if not ln.startswith("For namespace") else columns  # the table ended
            continue
        row = _queue_row(tokens[0], tokens[1])
        for name, cell in zip(columns[2:], tokens[2:], strict=True):
            row[_QUEUE_COLUMNS.get(name, name.lower())] = _count(cell)
        queues.append(row)
    if not queues:
        raise ParseError("sonic_queue_counters", "no `Port  TxQ  Counter/pkts …` table rows found")
    return {"queues": queues, "columns": seen_columns, "format": "table"}


def sniff_sonic_queue_counters(text: str) -> int:
    if any(_QUEUE_HEAD.match(ln) for ln in lines(text)):
        others = _LOSSLESS_HEAD.search(text) or any(_PFC_HEAD.match(ln) for ln in lines(text))
        return 80 if others else 92
    if text.lstrip().startswith("{") and re.search(r"[\"'](totalpacket|droppacket|trimpacket)[\"']", text):
        return 90 if _queues_from_json(load_structured(text)) else 0
    return 0


PARSERS: dict[str, Parser] = {
    p.kind: p
    for p in (
        Parser("sonic_show_pfc", parse_sonic_show_pfc, sniff_sonic_show_pfc,
               "SONiC show pfc counters: PFC frames per port and priority (Rx/Tx, --history)"),
        Parser("sonic_queue_counters", parse_sonic_queue_counters, sniff_sonic_queue_counters,
               "SONiC show queue counters: packets, bytes and drops per port and queue"),
    )
}
