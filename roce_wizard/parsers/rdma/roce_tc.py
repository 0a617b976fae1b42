"""roce_tc_sysfs: /sys/class/infiniband/<dev>/tc/<n>/traffic_class (MLNX_OFED)."""

from __future__ import annotations

import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    body_lines,
    is_bare_command,
    is_elision,
    lines,
    prompt_command,
)
from roce_wizard.parsers.rdma.common import _numbered

# ---------------------------------------------------------------------------------------------
# roce_tc_sysfs (/sys/class/infiniband/<dev>/tc/<n>/traffic_class, MLNX_OFED)

_TC_PATH = re.compile(r"/sys/class/infiniband/([^/\s]+)/tc/([0-9]+)/traffic_class")
_TC_VALUE = re.compile(r"^\s*Global tclass=([0-9]+)\s*$")
_CAT_ERROR = re.compile(r"^\s*cat:\s*(\S+):\s*(.+)$")


def parse_roce_tc_sysfs(text: str) -> Facts:
    reads: list[dict] = []
    writes: list[dict] = []
    current: dict | None = None
    unknown: list[tuple[int, str]] = []
    for n, ln in _numbered(text):
        cmd = prompt_command(ln)
        if cmd is None and is_bare_command(ln, ("cat", "echo")):
            cmd = ln.strip()
        if cmd is not None:
            current = None
            path = _TC_PATH.search(cmd)
            if re.search(r"\becho\b", cmd) and ">" in cmd:
                m = re.search(r"\becho\s+(?:-n\s+)?['\"]?([0-9]+)", cmd)
                writes.append({"value": int(m.group(1)) if m else None,
                               "path": path.group(0) if path else None})
            elif re.search(r"\bcat\b", cmd) and path:
                current = {"path": path.group(0), "device": path.group(1), "tc": int(path.group(2)),
                           "traffic_class": None, "set": False}
                reads.append(current)
            continue
        if not ln.strip() or is_elision(ln):
            continue
        m = _TC_VALUE.match(ln)
        if m:
            if current is None:  # output pasted without its command
                current = {"traffic_class": None, "set": False}
                reads.append(current)
            current["traffic_class"] = int(m.group(1))
            current["set"] = True
            continue
        m = _CAT_ERROR.match(ln)
        if m and _TC_PATH.search(m.group(1)):
            path = _TC_PATH.search(m.group(1))
            if current is None:
                current = {"path": path.group(0), "device": path.group(1), "tc": int(path.group(2)),
                           "traffic_class": None, "set": False}
                reads.append(current)
            current["error"] = m.group(2).strip()
            continue
        unknown.append((n, ln))
    if unknown and not reads:
        n, ln = unknown[0]
        raise ParseError("roce_tc_sysfs", f"not a traffic_class read: {ln.strip()[:60]!r}", n)
    if not reads:
        if any(c for c in (prompt_command(ln) for ln in lines(text))) and not writes:
            raise ParseError("roce_tc_sysfs", "no command reads a tc/<n>/traffic_class file")
        # the file was read and printed nothing: tclass not set
        reads.append({"traffic_class": None, "set": False})
    last = reads[-1]
    facts: Facts = {"traffic_class": last["traffic_class"], "set": last["set"], "reads": reads}
    if "device" in last:
        facts["device"] = last["device"]
        facts["tc"] = last["tc"]
    if writes:
        facts["writes"] = writes
    if "error" in last:
        facts["error"] = last["error"]
    return facts


def sniff_roce_tc_sysfs(text: str) -> int:
    body = body_lines(text, ("cat", "echo"))
    cmds = [c for c in (prompt_command(ln) for ln in lines(text)) if c]
    has_path = any(_TC_PATH.search(c) for c in cmds) or any(
        _TC_PATH.search(ln) for ln in lines(text) if is_bare_command(ln, ("cat", "echo")))
    if body and all(_TC_VALUE.match(ln) for ln in body):
        return 95
    if has_path and all(_TC_VALUE.match(ln) or _CAT_ERROR.match(ln) for ln in body):
        return 90
    return 0
