"""MLNX_OFED's per-priority DCQCN switches (RW413): `/sys/class/net/<if>/ecn/roce_np/enable/<p>` (notification
point: the receiver marks CNPs) and `…/ecn/roce_rp/enable/<p>` (reaction point: the sender slows down).

Source: NVIDIA MLNX_OFED / DOCA documentation, "Explicit Congestion Notification (ECN)": "To query whether
ECN is enabled per Priority X: cat /sys/class/net/<interface>/ecn/<protocol>/enable/X … X – priority {0..7},
protocol – roce_rp; roce_np" (docs.nvidia.com/networking/display/MLNXOFEDv497100LTS/Explicit+Congestion+
Notification+(ECN) and docs.nvidia.com/doca/sdk/explicit+congestion+notification). The files exist with
MLNX_OFED's mlx5 only; the upstream kernel has no `ecn/` directory.

Kind ``roce_ecn_sysfs``. Shapes: `grep . /sys/class/net/ens1f0/ecn/roce_*/enable/*` (`path:value`), `grep -H`,
`for f in …; do echo $f $(cat $f); done` (`path value`), and a `cat <one file>` with its value on the next line.
Values `1`/`0` are enabled/disabled; anything else is unreadable (listed, never guessed). `No such file or
directory` for an ecn path is recorded in `missing` (no MLNX_OFED ecn sysfs), which is a fact, not a parse error.
Facts: `interfaces{if: {"np": {prio: bool}, "rp": {prio: bool}}}`, and `np`/`rp`/`interface` when one interface
was read; `unreadable{path: raw}`; `missing[paths]`.
"""

from __future__ import annotations

import re

from roce_wizard.parsers.base import Facts, ParseError, is_bare_command, lines, prompt_command
from roce_wizard.parsers.unwrap import per_host

_PATH = re.compile(r"/sys/class/net/([^/\s]+)/ecn/roce_(np|rp)/enable/([0-7*?\[\]-]+)")
_KV = re.compile(r"^\s*(?P<path>/sys/class/net/\S+?/ecn/roce_(?:np|rp)/enable/\S+?)(?::|\s+)(?P<v>.*?)\s*$")
_MISSING = re.compile(r"(/sys/class/net/\S*ecn\S*?):?\s+No such file or directory")
_VALUE = re.compile(r"^\s*(\S+)\s*$")


def _store(facts: dict, path: str, raw: str) -> None:
    m = _PATH.fullmatch(path)
    if not m or not re.fullmatch(r"[0-7]", m.group(3)):
        facts["unreadable"][path] = raw
        return
    if raw not in ("0", "1"):
        facts["unreadable"][path] = raw
        return
    facts["interfaces"].setdefault(m.group(1), {"np": {}, "rp": {}})[m.group(2)][int(m.group(3))] = raw == "1"


def _roce_ecn_sysfs_one(text: str) -> Facts:
    facts: Facts = {"interfaces": {}, "unreadable": {}, "missing": []}
    cat_path: str | None = None
    glob = False
    for ln in lines(text):
        if (m := _MISSING.search(ln)):
            facts["missing"].append(m.group(1))
            continue
        cmd = prompt_command(ln)
        if cmd is None and is_bare_command(ln, ("cat", "grep", "for")):
            cmd = ln.strip()
        if cmd is not None:
            paths = _PATH.findall(cmd)
            single = re.search(r"\bcat\s+(\S+)\s*$", cmd)
            cat_path = single.group(1) if single and len(paths) == 1 and _PATH.fullmatch(single.group(1)) else None
            if cat_path is not None and not re.fullmatch(r"[0-7]", _PATH.fullmatch(cat_path).group(3)):
                # `cat …/enable/*`: values in glob order with no names; which priority printed which is not said
                facts.setdefault("glob_reads", []).append({"path": cat_path, "values": []})
                cat_path = None
                glob = True
            else:
                glob = False
            continue
        if not ln.strip():
            continue
        if (m := _KV.match(ln)) and _PATH.fullmatch(m.group("path")):
            _store(facts, m.group("path"), m.group("v"))
            cat_path = None
            continue
        if cat_path is not None and (m := _VALUE.match(ln)):
            _store(facts, cat_path, m.group(1))
            cat_path = None
        elif glob and (m := _VALUE.match(ln)):
            facts["glob_reads"][-1]["values"].append(m.group(1))
    if not facts["interfaces"] and not facts["unreadable"] and not facts["missing"] and not any(
            g["values"] for g in facts.get("glob_reads", [])):
        raise ParseError("roce_ecn_sysfs", "no /sys/class/net/<if>/ecn/roce_{np,rp}/enable/<p> value")
    for intf in facts["interfaces"].values():
        for point in ("np", "rp"):
            intf[point] = dict(sorted(intf[point].items()))
    if len(facts["interfaces"]) == 1:
        (name, intf), = facts["interfaces"].items()
        facts.update(interface=name, np=intf["np"], rp=intf["rp"])
    return facts


parse_roce_ecn_sysfs = per_host(_roce_ecn_sysfs_one)


def sniff_roce_ecn_sysfs(text: str) -> int:
    ls = lines(text)
    if any(_KV.match(ln) and _PATH.search(ln) for ln in ls):
        return 95
    if any(_PATH.search(ln) for ln in ls) and any(_VALUE.match(ln) and ln.strip() in ("0", "1") for ln in ls):
        return 90
    if any(_MISSING.search(ln) and "/ecn/" in ln for ln in ls):
        return 80
    return 0
