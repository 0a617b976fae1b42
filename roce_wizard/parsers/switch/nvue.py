"""Cumulus NVUE outputs: `nv show qos roce` and `nv show interface` (table or `-o json`)."""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.parsers.base import Facts, ParseError, is_digits, to_bool, to_int
from roce_wizard.parsers.switch.common import _has, _ints, _json, _output_lines
from roce_wizard.parsers.switch.nvue_counters import roce_counters

# --------------------------------------------------------------------------------------------
# Cumulus NVUE `nv show qos roce` (table or -o json) and `nv show interface X qos roce counters`


def _nvue_columns(rule: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"-+", rule)]


def _nvue_tree(block: list[str]) -> dict[str, Any]:
    """The `key  operational  applied  [description]` table -> nested {key: {"operational", "applied"}}
    (children under their indented group header)."""
    rule_i = next((i for i, ln in enumerate(block) if re.match(r"^-+(\s+-+)+\s*$", ln)), None)
    if rule_i is None:
        return {}
    header = block[rule_i - 1] if rule_i > 0 else ""
    cols = _nvue_columns(block[rule_i])
    names = [header[a:(cols[i + 1][0] if i + 1 < len(cols) else len(header))].strip() or f"col{i}"
             for i, (a, _b) in enumerate(cols)]
    tree: dict[str, Any] = {}
    stack: list[tuple[int, dict[str, Any]]] = [(-1, tree)]
    for ln in block[rule_i + 1:]:
        if not ln.strip():
            continue
        indent = len(ln) - len(ln.lstrip())
        cells = []
        for i, (a, _b) in enumerate(cols):
            end = cols[i + 1][0] if i + 1 < len(cols) else len(ln)
            cells.append(ln[a:end].strip() if i else ln[:end].strip())
        key = cells[0]
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else tree
        values = {names[i]: cells[i] for i in range(1, len(cells)) if cells[i]}
        node: dict[str, Any] = dict(values)
        parent[key] = node
        stack.append((indent, node))
    return tree


def _nvue_value(node: Any) -> str | None:
    if isinstance(node, dict):
        for k in ("operational", "applied"):
            if node.get(k) not in (None, ""):
                return str(node[k])
        return None
    return None if node is None else str(node)


def _nvue_sections(out: list[str]) -> dict[str, list[str]]:
    """`Title\n=====\n table` sections after the main table."""
    sections: dict[str, list[str]] = {"": []}
    name = ""
    for i, ln in enumerate(out):
        if i + 1 < len(out) and re.match(r"^=+\s*$", out[i + 1]) and ln.strip():
            name = ln.strip()
            sections[name] = []
            continue
        if re.match(r"^=+\s*$", ln):
            continue
        sections.setdefault(name, []).append(ln)
    return sections


def _nvue_rows(block: list[str]) -> list[list[str]]:
    rule_i = next((i for i, ln in enumerate(block) if re.match(r"^\s*-+(\s+-+)+\s*$", ln)), None)
    if rule_i is None:
        return []
    cols = _nvue_columns(block[rule_i])
    rows = []
    for ln in block[rule_i + 1:]:
        if not ln.strip():
            continue
        rows.append([ln[a:(cols[i + 1][0] if i + 1 < len(cols) else len(ln))].strip() for i, (a, _b) in enumerate(cols)])
    return rows


def _nvue_from_json(data: dict[str, Any]) -> Facts:
    def get(*path: str) -> Any:
        node: Any = data
        for p in path:
            if not isinstance(node, dict) or p not in node:
                return None
            node = node[p]
        return node

    facts: Facts = {"tree": data}
    enable = get("enable")
    facts["enabled"] = to_bool(str(enable)) if enable is not None else None
    facts["mode"] = get("mode")
    pfc = get("pfc", "pfc-priority")
    facts["pfc_priorities"] = _ints(str(pfc)) if pfc is not None else None
    trust = get("trust", "trust-mode")
    facts["trust_mode"] = [t.strip() for t in str(trust).split(",") if t.strip()] if trust is not None else None
    facts["congestion_mode"] = get("congestion-control", "congestion-mode")
    tcs = get("congestion-control", "enabled-tc")
    facts["ecn_tcs"] = _ints(str(tcs)) if tcs is not None else None
    prio_map = get("prio-map") or get("dscp-map")
    if isinstance(prio_map, dict):
        dmap: dict[int, int] = {}
        for key, entry in prio_map.items():
            if isinstance(entry, dict) and "dscp" in entry and "switch-prio" in entry:
                for d in _ints(str(entry["dscp"])):
                    dmap[d] = int(entry["switch-prio"])
            elif is_digits(str(key)) and isinstance(entry, dict) and "switch-prio" in entry:
                dmap[int(key)] = int(entry["switch-prio"])
        facts["dscp_to_switch_priority"] = dmap or None
    return facts


def parse_nvue_qos_roce(text: str) -> Facts:
    data = _json(text)
    if isinstance(data, dict):
        return _nvue_from_json(data)
    out = [ln for ln in _output_lines(text)]
    sections = _nvue_sections(out)
    tree = _nvue_tree(sections.get("", []))
    if not tree:
        raise ParseError("nvue_qos_roce", "no `operational  applied` table found")
    facts: Facts = {"tree": tree}

    def val(*path: str) -> str | None:
        node: Any = tree
        for p in path:
            if not isinstance(node, dict) or p not in node:
                return None
            node = node[p]
        return _nvue_value(node)

    if "enable" in tree or "mode" in tree or "pfc" in tree:
        enable = val("enable")
        facts["enabled"] = to_bool(enable) if enable is not None else None
        facts["mode"] = val("mode")
        pfc = val("pfc", "pfc-priority")
        facts["pfc_priorities"] = _ints(pfc) if pfc is not None else None
        trust = val("trust", "trust-mode")
        facts["trust_mode"] = [t.strip() for t in trust.split(",") if t.strip()] if trust else None
        facts["congestion_mode"] = val("congestion-control", "congestion-mode")
        tcs = val("congestion-control", "enabled-tc")
        facts["ecn_tcs"] = _ints(tcs) if tcs is not None else None
        for title, block in sections.items():
            if "DSCP->SP" in title:
                dmap: dict[int, int] = {}
                for row in _nvue_rows(block):
                    if len(row) >= 4 and is_digits(row[3]):
                        for d in _ints(row[2]):
                            dmap[d] = int(row[3])
                facts["dscp_to_switch_priority"] = dmap or None
            elif "SP->TC" in title:
                sp_tc: dict[int, int] = {}
                for row in _nvue_rows(block):
                    if len(row) >= 3 and is_digits(row[1]) and is_digits(row[2]):
                        sp_tc[int(row[1])] = int(row[2])
                facts["switch_priority_to_tc"] = sp_tc or None
    else:  # per-interface counters: flatten to "group.sub.key": value
        counters: dict[str, str] = {}

        def walk(node: dict[str, Any], prefix: str) -> None:
            for k, v in node.items():
                if isinstance(v, dict):
                    value = _nvue_value(v)
                    children = {kk: vv for kk, vv in v.items() if isinstance(vv, dict)}
                    if value is not None:
                        counters[prefix + k] = value
                    walk(children, prefix + k + ".")

        walk(tree, "")
        facts["counters"] = counters
        facts["roce_counters"] = roce_counters(counters)  # the counts as ints (nvue_counters.py)
    return facts


def sniff_nvue_qos_roce(text: str) -> int:
    if _has(text, r"^\s+operational\s+applied") and _has(text, r"^\s*(pfc-priority|trust-mode|congestion-mode|"
                                                               r"rx-roce-stats|tx-roce-stats|rx-pfc-stats)\b"):
        return 92
    data = _json(text)
    if isinstance(data, dict) and ("pfc" in data or "congestion-control" in data) and "mode" in data:
        return 88
    return 0


# --------------------------------------------------------------------------------------------
# Cumulus NVUE `nv show interface` (table or -o json)


def parse_nvue_interfaces(text: str) -> Facts:
    data = _json(text)
    interfaces: list[dict[str, Any]] = []
    if isinstance(data, dict):
        for name, node in data.items():
            if not isinstance(node, dict):
                continue
            link = node.get("link") if isinstance(node.get("link"), dict) else {}
            mtu = link.get("mtu", node.get("mtu"))
            state = link.get("state")
            up = None
            if isinstance(state, dict):
                up = True if "up" in state else False if "down" in state else None
            elif isinstance(state, str):
                up = to_bool(state)
            interfaces.append({"port": name, "mtu": to_int(str(mtu)) if mtu is not None else None, "link_up": up,
                               "type": node.get("type")})
        if not interfaces:
            raise ParseError("nvue_interfaces", "JSON without interfaces")
        return {"interfaces": interfaces}
    out = _output_lines(text)
    head = next((i for i, ln in enumerate(out) if re.match(r"^\s*Interface\s+MTU\s+Speed\s+State", ln)), None)
    if head is None:
        raise ParseError("nvue_interfaces", "no `Interface  MTU  Speed  State` table found")
    for ln in out[head + 1:]:
        m = re.match(r"^\s*[+-]?\s*(\S+)\s+([0-9]+)\s+(\S+)\s+(up|down)\b(?:.*?\s(swp|eth|bond|loopback|svi|"
                     r"bridge|vrf)\s)?", ln)
        if m:
            interfaces.append({"port": m.group(1), "mtu": int(m.group(2)), "speed": m.group(3),
                               "link_up": m.group(4) == "up", "type": m.group(5)})
    if not interfaces:
        raise ParseError("nvue_interfaces", "no interface rows found")
    return {"interfaces": interfaces}


def sniff_nvue_interfaces(text: str) -> int:
    if _has(text, r"^\s*Interface\s+MTU\s+Speed\s+State\s+Remote Host"):
        return 90
    data = _json(text)
    if isinstance(data, dict) and data and all(isinstance(v, dict) for v in data.values()) and any(
            isinstance(v.get("link"), dict) and "mtu" in v["link"] for v in data.values()):
        return 80
    return 0
