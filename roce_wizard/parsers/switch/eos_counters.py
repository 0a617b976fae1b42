"""Arista EOS egress queue counters (RW609: no drops on the lossless priority's queue).

Kind ``eos_queue_counters``: `show interfaces counters queue [detail]` as EOS prints it, e.g. (real capture in
tests/data/corpus/eos_queue_counters/, from networktocode/ntc-templates):

    Egress Queue Counters
    Port               Traffic   DropPrec   DestType        OutEnqPkts      OutEnqOctets       OutDropPkts     OutDropOctets
                        Class
    Et3/1/1                TC1      DP0-3         UC             67521           7523778                 0                 0

Columns are read from the header line (`OutEnqPkts`, `OutDropPkts`, … wherever they are), rows are
`<port> TC<n> …`. Facts: `rows[]` ({port, tc, drop_prec, dest_type, enq_pkts, enq_octets, drop_pkts,
drop_octets}) and `ports{port: {tc: {enq_pkts, enq_octets, drop_pkts, drop_octets}}}` summed over the drop
precedences and destination types of that queue (a count that cannot be read leaves the sum unknown).
`show priority-flow-control counters` (pauses per port) has no public capture: not parsed (tests/data/README-issue15.md).
"""

from __future__ import annotations

import re

from roce_wizard.parsers.base import Facts, ParseError, to_int
from roce_wizard.parsers.paste import clean
from roce_wizard.parsers.switch.common import _output_lines

_HEAD = re.compile(r"^\s*Port\s+Traffic\b.*\bOut(?:Enq|Drop)Pkts\b")
_ROW = re.compile(r"^\s*(?P<port>(?:Et|Ethernet|Po|Port-Channel|Cpu)\S*)\s+TC(?P<tc>[0-7])\s+(?P<rest>.+?)\s*$")
_COUNTS = {"OutEnqPkts": "enq_pkts", "OutEnqOctets": "enq_octets", "OutDropPkts": "drop_pkts",
           "OutDropOctets": "drop_octets"}


def parse_eos_queue_counters(text: str) -> Facts:
    names: list[str] | None = None
    rows: list[dict] = []
    for ln in _output_lines(clean(text)):
        if _HEAD.match(ln):
            names = ln.split()[2:]  # after `Port Traffic`; `Class` wraps onto the next line
            continue
        m = _ROW.match(ln)
        if not m or names is None:
            continue
        cells = m.group("rest").split()
        if len(cells) != len(names):
            continue
        row: dict = {"port": m.group("port"), "tc": int(m.group("tc"))}
        for name, cell in zip(names, cells):
            if name in _COUNTS:
                row[_COUNTS[name]] = to_int(cell) if re.fullmatch(r"[0-9]+", cell) else None
            elif name == "DropPrec":
                row["drop_prec"] = cell
            elif name == "DestType":
                row["dest_type"] = cell
        rows.append(row)
    if not rows:
        raise ParseError("eos_queue_counters", "no `Port  Traffic Class … OutDropPkts` table with `<port> TC<n>` rows")
    ports: dict[str, dict[int, dict]] = {}
    for row in rows:
        q = ports.setdefault(row["port"], {}).setdefault(row["tc"], {k: 0 for k in _COUNTS.values()})
        for key in _COUNTS.values():
            q[key] = None if q[key] is None or row.get(key) is None else q[key] + row[key]
    return {"rows": rows, "ports": ports}


def sniff_eos_queue_counters(text: str) -> int:
    ls = _output_lines(clean(text))
    if any(_HEAD.match(ln) for ln in ls) and any(_ROW.match(ln) for ln in ls):
        return 95 if any(ln.strip() == "Egress Queue Counters" for ln in ls) else 90
    return 0
