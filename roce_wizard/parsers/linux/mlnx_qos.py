"""`mlnx_qos -i <if>` (MLNX_OFED)."""

from __future__ import annotations

import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    is_elision,
    lines,
    prompt_command,
    to_int,
)
from roce_wizard.parsers.linux.common import _commands

# ---------------------------------------------------------------------------------------------
# mlnx_qos -i <if>

_QOS_START = re.compile(r"^\s*DCBX mode:")
_QOS_TRUST = re.compile(r"^\s*Priority trust (?:state|mode):\s*(\S+)\s*$")
_QOS_TC = re.compile(
    r"^\s*tc:\s*([0-9]+)\s+ratelimit:\s*([^,]+?)\s*,\s*tsa:\s*(\w+)?(?:\s*,\s*bw:\s*([0-9]+)\s*%)?"
)
_QOS_PRIO = re.compile(r"^\s*priority:\s*([0-9]+)\s*$")
_QOS_DSCP = re.compile(r"^\s*prio:\s*([0-9]+)\s+dscp:\s*([0-9,\s]*)$")
# PDF/HTML copies leave tag residue (`1</`) on wrapped number rows
_RESIDUE = re.compile(r"</?[A-Za-z]*>?")


def _int_row(ln: str) -> list[int] | None:
    s = _RESIDUE.sub(" ", ln).strip()
    if not s or not re.fullmatch(r"[0-9]+(?:\s+[0-9]+)*", s):
        return None
    return [int(x) for x in s.split()]


def _qos_segments(src: list[str]) -> list[list[str]]:
    """One segment per mlnx_qos report (people paste several runs): a new report starts at
    `DCBX mode:`, or at `Priority trust state:` when the current one already has one."""
    segments: list[list[str]] = [[]]
    has_trust = False
    for ln in src:
        starts = _QOS_START.match(ln) or (_QOS_TRUST.match(ln) and has_trust)
        if starts and any(_QOS_TRUST.match(x) or "PFC configuration" in x or _QOS_START.match(x)
                          for x in segments[-1]):
            segments.append([])
            has_trust = False
        if _QOS_TRUST.match(ln):
            has_trust = True
        segments[-1].append(ln)
    return [s for s in segments if s]


def _parse_qos_segment(src: list[str]) -> Facts:
    facts: Facts = {"trust": None, "pfc": None, "pfc_buffer": None, "dcbx": None, "tcs": []}
    warnings: list[str] = []
    dscp2prio: dict[int, int] | None = None
    rows: dict[str, list[int]] = {}
    section = None  # "dscp" | "pfc" | None
    row_key: str | None = None
    tc: dict | None = None
    for ln in src:
        if not ln.strip() or is_elision(ln):
            continue
        if (m := re.match(r"^\s*DCBX mode:\s*(.+?)\s*$", ln)):
            facts["dcbx"] = m.group(1).lower()
            section = None
            continue
        if (m := _QOS_TRUST.match(ln)):
            facts["trust"] = m.group(1).lower()
            section = None
            continue
        if re.match(r"^\s*Priority trust state is not supported", ln):
            warnings.append(ln.strip())
            continue
        if re.match(r"^\s*dscp2prio mapping:", ln):
            dscp2prio = dscp2prio or {}
            section = "dscp"
            continue
        if (m := _QOS_DSCP.match(ln)):
            dscp2prio = dscp2prio if dscp2prio is not None else {}
            for d in re.findall(r"[0-9]+", m.group(2)):
                dscp2prio[int(d)] = int(m.group(1))
            continue
        if (m := re.match(r"^\s*Receive buffer size \(bytes\):\s*(.*)$", ln)):
            sizes, extra = [], {}
            for part in (p.strip() for p in m.group(1).split(",")):
                if re.fullmatch(r"[0-9]+", part):
                    sizes.append(int(part))
                elif (kv := re.fullmatch(r"(\w+)=([0-9]*)", part)):
                    extra[kv.group(1)] = to_int(kv.group(2)) if kv.group(2) else None
            facts["receive_buffer"] = sizes
            facts.update(extra)
            section = None
            continue
        if (m := re.match(r"^\s*Cable len:\s*([0-9]+)", ln)):
            facts["cable_len"] = int(m.group(1))
            section = None
            continue
        if re.match(r"^\s*PFC configuration:", ln):
            section, row_key = "pfc", None
            continue
        if (m := _QOS_TC.match(ln)):
            tc = {"tc": int(m.group(1)), "ratelimit": m.group(2).strip(), "tsa": m.group(3),
                  "bw": int(m.group(4)) if m.group(4) else None, "priorities": []}
            facts["tcs"].append(tc)
            section = None
            continue
        if (m := _QOS_PRIO.match(ln)):
            if tc is not None:
                tc["priorities"].append(int(m.group(1)))
            continue
        if section == "pfc":
            m = re.match(r"^\s*(priority|enabled|buffer)\b(.*)$", ln)
            if m:
                row_key = m.group(1)
                rows[row_key] = _int_row(m.group(2)) or []
                continue
            more = _int_row(ln)
            if more is not None and row_key is not None:
                rows[row_key].extend(more)  # a row wrapped onto the next lines
                continue
    if dscp2prio is not None:
        facts["dscp2prio"] = dscp2prio
    n = len(rows.get("priority") or []) or 8
    for key, out in (("enabled", "pfc"), ("buffer", "pfc_buffer")):
        vals = rows.get(key)
        if not vals:
            continue
        if len(vals) == n:
            facts[out] = vals
        elif len(vals) > n and len(set(vals)) == 1:
            # a mangled copy repeated the row's values; all equal, so any alignment reads the same
            facts[out] = vals[:n]
            warnings.append(f"PFC `{key}` row has {len(vals)} values for {n} priorities "
                            f"(all {vals[0]}); read as {n}")
        else:
            warnings.append(f"PFC `{key}` row has {len(vals)} values for {n} priorities; not read")
    if warnings:
        facts["warnings"] = warnings
    return facts


def parse_mlnx_qos(text: str) -> Facts:
    src = [ln for ln in lines(text) if prompt_command(ln) is None]
    interface = None
    for c in _commands(text, ("mlnx_qos",)):
        m = re.search(r"\bmlnx_qos\b.*?(?:-i|--interface)[=\s]\s*(\S+)", c)
        if m:
            interface = m.group(1)
    reports = [f for f in (_parse_qos_segment(s) for s in _qos_segments(src))
               if f["trust"] or f["pfc"] is not None or f["tcs"] or "dscp2prio" in f]
    if not reports:
        raise ParseError("mlnx_qos", "no `Priority trust state`, `PFC configuration` or `tc:` block found")
    facts = reports[-1]
    facts["interface"] = interface
    if len(reports) > 1:
        facts["reports"] = len(reports)
    return facts


def sniff_mlnx_qos(text: str) -> int:
    ls = lines(text)
    if any(_QOS_TRUST.match(ln) for ln in ls) or any(re.match(r"^\s*PFC configuration:", ln) for ln in ls):
        return 95
    if any(re.match(r"^\s*DCBX mode:", ln) for ln in ls) or any(re.match(r"^\s*dscp2prio mapping:", ln) for ln in ls):
        return 85
    if any(_QOS_TC.match(ln) for ln in ls):
        return 60
    return 0
