"""hw_counters: `cat /sys/class/infiniband/<dev>/ports/<p>/hw_counters/<name>`, `grep -H`, ..."""

from __future__ import annotations

import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    body_lines,
    fraction,
    is_bare_command,
    is_elision,
    lines,
    prompt_command,
)

# ---------------------------------------------------------------------------------------------
# hw_counters (`cat /sys/class/infiniband/<dev>/ports/<p>/hw_counters/<name>`, `grep -H`, …)

_HWC_PATH = re.compile(r"/sys/class/infiniband/([^/\s]+)/ports/([0-9]+)/(?:hw_)?counters/([\w*?\[\]-]+)")
_HWC_GREP = re.compile(r"^\s*(?P<path>/\S+?):\s*(?P<v>-?[0-9]+)\s*$")
# `name: 12`, `name=12`, `name 12` (a `for f in *; do echo $f $(cat $f); done` listing)
_HWC_NAMED = re.compile(r"^\s*(?P<name>[A-Za-z_][\w-]*)(?:\s*[:=]\s*|\s+)(?P<v>-?[0-9]+)\s*$")
_HWC_VALUE = re.compile(r"^\s*(-?[0-9]+)\s*$")


def parse_hw_counters(text: str) -> Facts:
    values: list[int] = []
    entries: list[dict] = []
    reads: list[dict] = []
    current: dict | None = None
    for ln in lines(text):
        cmd = prompt_command(ln)
        if cmd is None and is_bare_command(ln, ("cat", "grep")):
            cmd = ln.strip()
        if cmd is not None:
            current = None
            paths = _HWC_PATH.findall(cmd)
            if re.search(r"\bcat\b", cmd) and len(paths) == 1:
                dev, port, name = paths[0]
                current = {"command": cmd, "path": _HWC_PATH.search(cmd).group(0),
                           "name": name if not re.search(r"[*?\[]", name) else None,
                           "device": dev if not re.search(r"[*?\[]", dev) else None,
                           "port": int(port), "values": []}
                reads.append(current)
            continue
        if not ln.strip() or is_elision(ln):
            continue
        m = _HWC_VALUE.match(ln)
        if m:
            v = int(m.group(1))
            values.append(v)
            if current is not None:
                current["values"].append(v)
            continue
        m = _HWC_GREP.match(ln)
        if m:
            v = int(m.group("v"))
            values.append(v)
            p = _HWC_PATH.search(m.group("path"))
            entry = {"path": m.group("path"), "name": m.group("path").rsplit("/", 1)[-1], "value": v}
            if p:
                entry.update(device=p.group(1), port=int(p.group(2)))
            entries.append(entry)
            continue
        m = _HWC_NAMED.match(ln)
        if m:
            values.append(int(m.group("v")))
            entries.append({"name": m.group("name"), "value": int(m.group("v"))})
    # a single-file cat names its value
    for r in reads:
        if r["name"] and r["device"] and len(r["values"]) == 1:
            entries.append({"path": r["path"], "name": r["name"], "value": r["values"][0],
                            "device": r["device"], "port": r["port"]})
    if not values:
        raise ParseError("hw_counters", "no counter value found")
    counters: dict[str, int] = {}
    by_device: dict[str, dict[str, int]] = {}
    seen: dict[str, set] = {}
    for e in entries:
        seen.setdefault(e["name"], set()).add((e.get("device"), e.get("port")))
        if e.get("device"):
            by_device.setdefault(f"{e['device']}/{e['port']}", {})[e["name"]] = e["value"]
    for e in entries:
        if len(seen[e["name"]]) == 1:  # a name read on several devices is not one counter
            counters[e["name"]] = e["value"]
    facts: Facts = {"values": values, "counters": counters}
    by_name: dict[str, list[int]] = {}
    for r in reads:  # a glob over devices: the values in glob order, devices unnamed
        if r["name"]:
            by_name.setdefault(r["name"], []).extend(r["values"])
    if by_name:
        facts["by_name"] = by_name
    if by_device:
        facts["by_device"] = by_device
    if reads:
        facts["reads"] = reads
    return facts


def sniff_hw_counters(text: str) -> int:
    commands = [c for c in (prompt_command(ln) for ln in lines(text)) if c]
    commands += [ln for ln in lines(text) if is_bare_command(ln, ("cat", "grep"))]
    cmd_paths = [c for c in commands if _HWC_PATH.search(c)]
    body = body_lines(text, ("cat", "grep"))
    numeric = fraction(body, lambda ln: bool(_HWC_VALUE.match(ln) or _HWC_GREP.match(ln)
                                          or _HWC_NAMED.match(ln)))
    if any(_HWC_GREP.match(ln) and _HWC_PATH.search(ln) for ln in body):
        return round(90 * numeric)
    if cmd_paths and body:
        return round(90 * numeric)
    return 0
