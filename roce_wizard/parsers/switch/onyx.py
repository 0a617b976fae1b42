"""NVIDIA Onyx outputs: dcb PFC, interfaces, qos interface, running-config (text or `| json-print`)."""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.parsers.base import Facts, ParseError, is_elision, lines, to_bool, to_int
from roce_wizard.parsers.switch.common import _has, _ints, _json, _output_lines, switch_prompt_command
from roce_wizard.parsers.switch.eos import _TRUST
from roce_wizard.parsers.switch.structured import (
    onyx_unwrap,
)

# --------------------------------------------------------------------------------------------
# Onyx `show dcb priority-flow-control`


def _onyx_port_row(port: str, admin: Any, oper: Any) -> dict[str, Any]:
    admin, oper = (v if isinstance(v, str) else None for v in (admin, oper))  # another type: unknown
    return {"port": port, "admin": admin, "oper": oper, "enabled": (oper or "").lower() == "enabled"}


def parse_onyx_pfc(text: str) -> Facts:
    data = onyx_unwrap(_json(text))
    if data is not None:
        facts: Facts = {"enabled": None, "priorities": None, "ports": []}
        items = data.items() if isinstance(data, dict) else []
        for key, value in items:
            if isinstance(value, list) and value and isinstance(value[0], dict) and "PFC oper" in value[0]:
                facts["ports"].append(_onyx_port_row(key, value[0].get("PFC admin"), value[0].get("PFC oper")))
            elif key.strip().lower() == "pfc":
                facts["enabled"] = to_bool(str(value))
            elif key.strip().lower() == "priority enabled list":
                facts["priorities"] = _ints(str(value))
            elif key.strip().lower() == "priority disabled list":
                facts["disabled_priorities"] = _ints(str(value))
        if facts["enabled"] is None and facts["priorities"] is None and not facts["ports"]:
            raise ParseError("onyx_pfc", "JSON without `PFC`, `Priority Enabled List` or per-port `PFC oper`")
        facts["elided"] = False
        return facts
    facts = {"enabled": None, "priorities": None, "ports": [], "elided": False}
    seen = False
    for ln in lines(text):
        if is_elision(ln):
            facts["elided"] = True
            continue
        if switch_prompt_command(ln) is not None:
            continue
        m = re.match(r"^\s*PFC\s*:\s*(\w+)", ln)
        if m:
            facts["enabled"] = to_bool(m.group(1))
            seen = True
            continue
        m = re.match(r"^\s*Priority Enabled List\s*:\s*(.*)$", ln)
        if m:
            facts["priorities"] = _ints(m.group(1))
            seen = True
            continue
        m = re.match(r"^\s*Priority Disabled List\s*:\s*(.*)$", ln)
        if m:
            facts["disabled_priorities"] = _ints(m.group(1))
            continue
        m = re.match(r"^\s*((?:Eth|Po|Mpo)[0-9][\w/]*)\s+(\S+)\s+(\S+)\s*$", ln)
        if m:
            facts["ports"].append(_onyx_port_row(m.group(1), m.group(2), m.group(3)))
            seen = True
    if not seen:
        raise ParseError("onyx_pfc", "no `PFC:` / `Priority Enabled List:` line nor PFC admin/oper rows found")
    return facts


def sniff_onyx_pfc(text: str) -> int:
    if _has(text, r"Priority Enabled List[\"']?\s*:") or _has(text, r"PFC admin", r"PFC oper"):
        return 95
    return 0


# --------------------------------------------------------------------------------------------
# Onyx `show interfaces [ethernet X]`


def _onyx_mtu(value: str | None) -> tuple[int | None, int | None]:
    m = re.match(r"^\s*([0-9]+)\s*bytes(?:\s*\(Maximum packet size ([0-9]+) bytes\))?", value or "")
    return (int(m.group(1)), to_int(m.group(2))) if m else (None, None)


def _onyx_interface(port: str, fields: dict[str, str]) -> dict[str, Any]:
    mtu, max_packet = _onyx_mtu(fields.get("MTU"))
    fc = fields.get("Flow-control") or ""
    rx = re.search(r"receive (on|off)", fc)
    tx = re.search(r"send (on|off)", fc)
    desc = fields.get("Description")
    kind = "ethernet" if re.match(r"^(Eth|Ethernet)\s*[0-9]", port) else port.split()[0].lower()
    return {
        "port": port, "type": kind,
        "admin_up": to_bool(fields.get("Admin state")), "link_up": to_bool(fields.get("Operational state")),
        "description": None if desc in (None, "N/A", "N\\A") else desc,
        "mtu": mtu, "max_packet": max_packet,
        "flowcontrol_rx": rx.group(1) == "on" if rx else None, "flowcontrol_tx": tx.group(1) == "on" if tx else None,
        "speed": fields.get("Actual speed"), "switchport_mode": fields.get("Switchport mode"),
    }


def parse_onyx_interfaces(text: str) -> Facts:
    data = onyx_unwrap(_json(text))
    if data is not None:
        entries = data if isinstance(data, list) else [dict(v, header=k) for k, v in data.items()
                                                       if isinstance(v, dict)] if isinstance(data, dict) else []
        out = [_onyx_interface(str(e.get("header")), {k: str(v) for k, v in e.items() if isinstance(v, str)})
               for e in entries if isinstance(e, dict) and e.get("header")]
        if not out:
            raise ParseError("onyx_interfaces", "JSON without interface entries (`header`)")
        return {"interfaces": out}
    interfaces: list[dict[str, Any]] = []
    port: str | None = None
    fields: dict[str, str] = {}

    def flush() -> None:
        if port is not None and fields:
            interfaces.append(_onyx_interface(port, fields))

    for ln in _output_lines(text):
        m = re.match(r"^((?:Eth|Ethernet|Po|Mpo|Vlan|mgmt)\s?[0-9][\w/ ]*?)\s*:?\s*$", ln)
        if m and not ln.startswith(" "):
            flush()
            port, fields = m.group(1).strip(), {}
            continue
        if port is None:
            continue
        m = re.match(r"^\s{1,4}([A-Za-z][^:]*?)\s*:\s*(.*)$", ln)
        if m:
            fields.setdefault(m.group(1).strip(), m.group(2).strip())
    flush()
    if not interfaces:
        raise ParseError("onyx_interfaces", "no `Eth1/1` block with `MTU:` / `Flow-control:` fields found")
    return {"interfaces": interfaces}


def sniff_onyx_interfaces(text: str) -> int:
    if _has(text, r"MTU[\"']?\s*:\s*[\"']?[0-9]+ bytes\s*\(Maximum packet size"):
        return 92
    if _has(text, r"Flow-control[\"']?\s*:\s*[\"']?receive (on|off) send (on|off)"):
        return 90
    return 0


# --------------------------------------------------------------------------------------------
# Onyx `show qos interface ethernet X`


def parse_onyx_qos_interface(text: str) -> Facts:
    interfaces: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    for ln in _output_lines(text):
        m = re.match(r"^\s*(?:Interface\s+)?((?:Eth|Ethernet|Po|Mpo)\s?[0-9][\w/]*)\s*:?\s*$", ln)
        if m:
            cur = {"port": m.group(1), "trust": None}
            interfaces.append(cur)
            continue
        if cur is None:
            continue
        m = re.match(r"^\s*Trust mode\s*:\s*(\S+)", ln)
        if m:
            cur["trust_raw"] = m.group(1)
            cur["trust"] = _TRUST.get(m.group(1).lower(), m.group(1).lower())
            continue
        m = re.match(r"^\s*Default switch-priority\s*:\s*([0-9]+)", ln)
        if m:
            cur["default_switch_priority"] = int(m.group(1))
    interfaces = [i for i in interfaces if i["trust"] is not None]
    if not interfaces:
        raise ParseError("onyx_qos_interface", "no interface block with `Trust mode:` found")
    return {"interfaces": interfaces}


def sniff_onyx_qos_interface(text: str) -> int:
    return 90 if _has(text, r"^\s*Trust mode\s*:\s*(L2|L3|both|port)\b") else 0


# --------------------------------------------------------------------------------------------
# Onyx running-config (and config lines typed at the prompt: seed 001)


def _expand_onyx_ports(spec: str) -> list[str]:
    """`1/1` -> [Eth1/1]; `1/1-1/4` -> Eth1/1..Eth1/4 (same prefix); anything else as printed."""
    m = re.fullmatch(r"([0-9]+(?:/[0-9]+)*)/([0-9]+)-(?:\1/)?([0-9]+)", spec)
    if m:
        return [f"Eth{m.group(1)}/{n}" for n in range(int(m.group(2)), int(m.group(3)) + 1)]
    if re.fullmatch(r"[0-9]+(?:/[0-9]+)+", spec):
        return [f"Eth{spec}"]
    return [spec]


def _onyx_new_if() -> dict[str, Any]:
    return {"pfc_mode": None, "trust": None, "mtu": None, "flowcontrol_rx": None, "flowcontrol_tx": None,
            "ecn_queues": [], "red_queues": [], "description": None, "shutdown": False}


def parse_onyx_running_config(text: str) -> Facts:
    interfaces: dict[str, dict[str, Any]] = {}
    facts: Facts = {"pfc_enabled": False, "pfc_priorities": [], "dscp_to_switch_priority": {}, "interfaces": interfaces,
                    "ignored": []}
    seen = False
    ctx: list[str] = []  # interfaces of an `interface ethernet X` mode (prefix-modes on)
    for raw in lines(text):
        if re.match(r"^## Running database", raw):
            seen = True  # a whole running config, even one that configures none of this
        if not raw.strip() or raw.lstrip().startswith("#") or is_elision(raw):
            continue
        p = switch_prompt_command(raw)
        if p is not None:
            mode, cmd = p
            if mode and mode.startswith("config interface ethernet "):
                ctx = _expand_onyx_ports(mode.split()[-1])
            elif mode is not None:
                ctx = []
        else:
            cmd = raw.strip()
        if not cmd:
            continue
        low = cmd.lower()
        if low in ("exit", "end"):
            ctx = []
            continue
        m = re.match(r"^(?:hostname|## hostname:)\s+\"?([^\"\s]+)", cmd, re.IGNORECASE)
        if m:
            facts["hostname"] = m.group(1)
            continue
        m = re.match(r"^(no\s+)?interface ethernet (\S+)(?:\s+(.*))?$", cmd, re.IGNORECASE)
        if m:
            ports = _expand_onyx_ports(m.group(2))
            if not m.group(3):
                ctx = ports
                continue
            neg = "no " if m.group(1) else ""
            targets, cmd = ports, neg + m.group(3)
            low = cmd.lower()
        else:
            targets = ctx
        m = re.match(r"^(no )?dcb priority-flow-control enable( force)?$", low)
        if m:
            facts["pfc_enabled"] = not m.group(1)
            seen = True
            continue
        m = re.match(r"^(no )?dcb priority-flow-control priority ([0-9]+)(?: enable)?$", low)
        if m:
            prio = int(m.group(2))
            if prio > 7:
                facts["ignored"].append(cmd)  # seed 001 types `priority 8`: the switch refuses it
            elif m.group(1):
                facts["pfc_priorities"] = [x for x in facts["pfc_priorities"] if x != prio]
            else:
                facts["pfc_priorities"] = sorted(set(facts["pfc_priorities"]) | {prio})
            seen = True
            continue
        m = re.match(r"^(no )?qos map dscp-to-switch-priority dscp ([0-9 ,-]+) switch-priority ([0-9])$", low)
        if m:
            for d in _ints(m.group(2)):
                if m.group(1):
                    facts["dscp_to_switch_priority"].pop(d, None)
                else:
                    facts["dscp_to_switch_priority"][d] = int(m.group(3))
            seen = True
            continue
        if not targets:
            continue
        per = [interfaces.setdefault(t, _onyx_new_if()) for t in targets]
        m = re.match(r"^(no )?dcb priority-flow-control mode(?: (on|auto))?(?: force)?$", low)
        if m:
            for i in per:
                i["pfc_mode"] = "auto" if m.group(1) or m.group(2) == "auto" else "on"
            seen = True
            continue
        m = re.match(r"^(no )?qos trust(?: (l2|l3|both|port))?$", low)
        if m:
            for i in per:
                i["trust"] = "pcp" if m.group(1) else _TRUST.get(m.group(2) or "l2", "pcp")
            seen = True
            continue
        m = re.match(r"^mtu ([0-9]+)(?: force)?$", low)
        if m:
            for i in per:
                i["mtu"] = int(m.group(1))
            seen = True
            continue
        m = re.match(r"^(no )?flowcontrol (send|receive)(?: (on|off))?(?: force)?$", low)
        if m:
            for i in per:
                i["flowcontrol_tx" if m.group(2) == "send" else "flowcontrol_rx"] = (
                    not m.group(1) and m.group(3) == "on")
            seen = True
            continue
        m = re.match(r"^(no )?traffic-class ([0-9])(?: congestion-control(?: (ecn|red|both))?.*)?$", low)
        if m:
            tc = int(m.group(2))
            for i in per:
                ecn, red = set(i["ecn_queues"]), set(i["red_queues"])
                ecn.discard(tc)
                red.discard(tc)
                if not m.group(1) and m.group(3) in ("ecn", "both"):
                    ecn.add(tc)
                if not m.group(1) and m.group(3) in ("red", "both"):
                    red.add(tc)
                i["ecn_queues"], i["red_queues"] = sorted(ecn), sorted(red)
            seen = True
            continue
        m = re.match(r"^description\s+\"?(.*?)\"?$", cmd, re.IGNORECASE)
        if m:
            for i in per:
                i["description"] = m.group(1)
            continue
        if low == "shutdown":
            for i in per:
                i["shutdown"] = True
    if not seen:
        raise ParseError("onyx_running_config", "no dcb priority-flow-control, qos or interface ethernet configuration")
    return facts


def sniff_onyx_running_config(text: str) -> int:
    if _has(text, r"^## Running database") or _has(text, r"^\s*## (DCBX PFC|Interface Ethernet) configuration"):
        return 92
    if _has(text, r"dcb priority-flow-control (enable|priority [0-9])"):
        return 88
    if _has(text, r"^\s*interface ethernet [0-9]+/[0-9]+\S* (qos trust|mtu [0-9]+ force|dcb priority-flow-control)"):
        return 85
    return 0
