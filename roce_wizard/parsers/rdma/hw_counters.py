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
from roce_wizard.parsers.unwrap import per_host

# ---------------------------------------------------------------------------------------------
# hw_counters (`cat /sys/class/infiniband/<dev>/ports/<p>/hw_counters/<name>`, `grep -H`, …)
#
# Shapes (real ones in tests/data/corpus/hw_counters/): `cat <glob>` values alone; `grep [-H|-s] . <paths>`
# as `path:value` (a value the driver cannot give, e.g. i40iw's `N/A (no PMA)`, is unreadable: listed in
# `unreadable`, never a number); `for f in *; do echo $f $(cat $f)` / `printf "%-20s %s"` as `name value` or
# `path value`; `echo "=== $file ==="; cat "$file"` as a header line then the value. The directory a
# `cd …/hw_counters` or a `…/counters$ ` prompt names gives the device and port of bare names.
# Counter names (np_ecn_marked_roce_packets, np_cnp_sent, rp_cnp_handled, out_of_buffer, …): NVIDIA's
# "Understanding mlx5 Linux Counters and Status Parameters" and the kernel's mlx5 ib counters.

_IB_DIR = r"/sys/(?:class/infiniband|devices/\S*?/infiniband)/([^/\s]+)/ports/([0-9]+)/(?:hw_)?counters"
_HWC_PATH = re.compile(_IB_DIR + r"/([\w*?\[\]-]+)")
_HWC_DIR = re.compile(r"(?:^|\s)(" + _IB_DIR + r")/?(?:\$|\s|$)")
_HWC_GREP = re.compile(r"^\s*(?P<path>/\S+?):\s*(?P<v>-?[0-9]+)\s*$")
_HWC_GREP_NA = re.compile(r"^\s*(?P<path>/\S*?/(?:hw_)?counters/[\w-]+):(?P<raw>.*\S.*)$")
_HWC_PATH_SPACE = re.compile(r"^\s*(?P<path>/\S+/(?:hw_)?counters/[\w-]+)\s+(?P<v>-?[0-9]+)\s*$")
_HWC_HEADER = re.compile(r"^\s*=+\s*(?:\./|\S*/)?(?P<name>[A-Za-z_][\w-]*)\s*=+\s*$")
# `name: 12`, `name=12`, `name 12` (a `for f in *; do echo $f $(cat $f); done` listing)
_HWC_NAMED = re.compile(r"^\s*(?P<name>[A-Za-z_][\w-]*)(?:\s*[:=]\s*|\s+)(?P<v>-?[0-9]+)\s*$")
_HWC_VALUE = re.compile(r"^\s*(-?[0-9]+)\s*$")


def _hw_counters_one(text: str) -> Facts:
    values: list[int] = []
    entries: list[dict] = []
    reads: list[dict] = []
    unreadable: dict[str, str] = {}
    current: dict | None = None
    cwd: tuple[str, int] | None = None  # (device, port) of a `cd …/hw_counters` or a cwd prompt
    header: str | None = None
    for ln in lines(text):
        dm = _HWC_DIR.search(ln)
        if dm and re.match(r"^\s*(?:(?:sudo\s+)?cd\s|\S*counters/?\$)", ln):
            cwd = (dm.group(2), int(dm.group(3))) if not re.search(r"[*?\[]", dm.group(2)) else None
            current = None
            continue
        cmd = prompt_command(ln)
        if cmd is None and is_bare_command(ln, ("cat", "grep", "cd", "for")):
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
        m = _HWC_HEADER.match(ln)
        if m:
            header = m.group("name")
            continue
        m = _HWC_VALUE.match(ln)
        if m:
            v = int(m.group(1))
            values.append(v)
            if header is not None:
                entry = {"name": header, "value": v}
                if cwd:
                    entry.update(device=cwd[0], port=cwd[1])
                entries.append(entry)
                header = None
            elif current is not None:
                current["values"].append(v)
            continue
        header = None
        m = _HWC_GREP.match(ln) or _HWC_PATH_SPACE.match(ln)
        if m:
            v = int(m.group("v"))
            values.append(v)
            p = _HWC_PATH.search(m.group("path"))
            entry = {"path": m.group("path"), "name": m.group("path").rsplit("/", 1)[-1], "value": v}
            if p:
                entry.update(device=p.group(1), port=int(p.group(2)))
            entries.append(entry)
            continue
        m = _HWC_GREP_NA.match(ln)
        if m:
            unreadable[m.group("path").rsplit("/", 1)[-1]] = m.group("raw").strip()
            continue
        m = _HWC_NAMED.match(ln)
        if m:
            values.append(int(m.group("v")))
            entry = {"name": m.group("name"), "value": int(m.group("v"))}
            if cwd:
                entry.update(device=cwd[0], port=cwd[1])
            entries.append(entry)
    # a single-file cat names its value
    for r in reads:
        if r["name"] and r["device"] and len(r["values"]) == 1:
            entries.append({"path": r["path"], "name": r["name"], "value": r["values"][0],
                            "device": r["device"], "port": r["port"]})
    if not values and not unreadable:
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
    if unreadable:
        facts["unreadable"] = unreadable
    return facts


parse_hw_counters = per_host(_hw_counters_one)


def sniff_hw_counters(text: str) -> int:
    ls = lines(text)
    commands = [c for c in (prompt_command(ln) for ln in ls) if c]
    commands += [ln for ln in ls if is_bare_command(ln, ("cat", "grep", "cd"))]
    cmd_paths = [c for c in commands if _HWC_PATH.search(c) or _HWC_DIR.search(c)]
    body = body_lines(text, ("cat", "grep", "cd", "for"))
    numeric = fraction(body, lambda ln: bool(_HWC_VALUE.match(ln) or _HWC_GREP.match(ln) or _HWC_HEADER.match(ln)
                                          or _HWC_NAMED.match(ln) or _HWC_PATH_SPACE.match(ln)))
    if any((_HWC_GREP.match(ln) or _HWC_GREP_NA.match(ln) or _HWC_PATH_SPACE.match(ln)) and _HWC_PATH.search(ln)
           for ln in body):
        return round(90 * max(numeric, fraction(body, lambda ln: bool(_HWC_GREP_NA.match(ln)))))
    cwd = any(_HWC_DIR.search(ln) and re.match(r"^\s*(?:(?:sudo\s+)?cd\s|\S*counters/?\$)", ln) for ln in ls)
    if (cmd_paths or cwd) and body:
        return round(90 * numeric)
    return 0
