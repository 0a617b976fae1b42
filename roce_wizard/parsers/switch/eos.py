"""Arista EOS outputs: PFC, qos interfaces/maps, interfaces (status), flowcontrol, running-config."""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.parsers.base import Facts, ParseError, is_elision, lines, to_bool, to_int
from roce_wizard.parsers.switch.common import _has, _ints, _json, _output_lines, switch_prompt_command
from roce_wizard.parsers.switch.structured import (
    eos_interfaces_from_json,
    looks_like_eos_interfaces_json,
)

# --------------------------------------------------------------------------------------------
# EOS `show priority-flow-control`

_EOS_PORT = r"(?:Et|Ethernet|Po|Port-Channel)[0-9][\w/.]*"
_EOS_PFC_ROW = re.compile(rf"^\s*(?P<port>{_EOS_PORT})\s+(?P<rest>.*)$")


def parse_arista_pfc(text: str) -> Facts:
    out = _output_lines(text)
    facts: Facts = {"global_enabled": None, "ports": []}
    seen = False
    for ln in out:
        m = re.match(r"^\s*Global PFC\s*:\s*(\w+)", ln)
        if m:
            facts["global_enabled"] = to_bool(m.group(1))
            seen = True
            continue
        m = re.match(r"^\s*The hardware supports PFC on priorities\s*(.*)$", ln)
        if m:
            facts["hardware_priorities"] = _ints(m.group(1))
            seen = True
            continue
        m = re.match(r"^\s*PFC receive processing is (enabled|disabled) on priorities\s*(.*)$", ln)
        if m:
            facts["rx_processing_priorities"] = _ints(m.group(2)) if m.group(1) == "enabled" else []
            continue
        m = _EOS_PFC_ROW.match(ln)
        if not m:
            continue
        tokens = m.group("rest").split()
        flags: list[str] = []
        while tokens and tokens[0] in ("E", "D", "A", "W"):
            flags.append(tokens.pop(0))
        if not flags:
            continue
        prios: list[int] = []
        if tokens and tokens[0] == "-":
            tokens.pop(0)
        else:
            while tokens and re.fullmatch(r"[0-9](?:,[0-9])*", tokens[0]):
                prios.extend(_ints(tokens.pop(0)))
        note = re.search(r"\s((?:DCBX|PFC|Watchdog|LLDP)\b[^/]*?)\s*$", m.group("rest"))
        facts["ports"].append({"port": m.group("port"), "enabled": "E" in flags and "D" not in flags,
                               "active": "A" in flags, "watchdog": "W" in flags, "priorities": sorted(set(prios)),
                               "note": note.group(1) if note else None})
        seen = True
    if not seen:
        raise ParseError("arista_pfc", "no `Global PFC :` line nor PFC port rows (E/D A W flags) found")
    return facts


def sniff_arista_pfc(text: str) -> int:
    if _has(text, r"^\s*Global PFC\s*:") or _has(text, r"E: PFC Enabled, D: PFC Disabled"):
        return 95
    if _has(text, r"^\s*The hardware supports PFC on priorities"):
        return 90
    return 0


# --------------------------------------------------------------------------------------------
# EOS `show qos interfaces`

_TRUST = {"dscp": "dscp", "cos": "pcp", "pcp": "pcp", "untrusted": "untrusted", "l3": "dscp", "l2": "pcp",
          "both": "both", "port": "port"}


def parse_eos_qos_interfaces(text: str) -> Facts:
    interfaces: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    for ln in _output_lines(text):
        m = re.match(rf"^\s*({_EOS_PORT})\s*:\s*$", ln)
        if m:
            cur = {"port": m.group(1), "trust": None, "queues": [], "ecn_queues": [], "wred_queues": []}
            interfaces.append(cur)
            continue
        if cur is None:
            continue
        m = re.match(r"^\s*Trust Mode\s*:\s*(\S+)", ln)
        if m:
            cur["trust_raw"] = m.group(1)
            cur["trust"] = _TRUST.get(m.group(1).lower(), m.group(1).lower())
            continue
        m = re.match(r"^\s*Default (COS|DSCP)\s*:\s*([0-9]+)", ln)
        if m:
            cur[f"default_{m.group(1).lower()}"] = int(m.group(2))
            continue
        m = re.match(r"^\s*([0-7])\s+\S.*\s(\S+)\s*$", ln)
        if m:
            flag, q = m.group(2), int(m.group(1))
            ecn = "L" in flag or flag.upper() in ("E", "ECN") or "ECN" in flag.upper().split("/")[:1]
            wred = "W" in flag.upper()
            cur["queues"].append({"queue": q, "ecn_wred": flag, "ecn": ecn, "wred": wred})
            if ecn:
                cur["ecn_queues"].append(q)
            if wred:
                cur["wred_queues"].append(q)
    interfaces = [i for i in interfaces if i["trust"] is not None or i["queues"]]
    if not interfaces:
        raise ParseError("eos_qos_interfaces", "no `EthernetN:` block with `Trust Mode:` or tx-queue rows found")
    for i in interfaces:
        i["ecn_queues"] = sorted(set(i["ecn_queues"]))
        i["wred_queues"] = sorted(set(i["wred_queues"]))
    return {"interfaces": interfaces}


def sniff_eos_qos_interfaces(text: str) -> int:
    if _has(text, r"^\s*Trust Mode\s*:\s*(DSCP|COS|UNTRUSTED)", r"ECN/WRED|Tx\s+Bandwidth|Queue"):
        return 92
    if _has(text, r"^\s*Trust Mode\s*:\s*(DSCP|COS|UNTRUSTED)"):
        return 70
    return 0


# --------------------------------------------------------------------------------------------
# EOS `show interfaces`

_EOS_IF_HEAD = re.compile(r"^(\S+) is ([\w ,-]+?), line protocol is (\w+)")


def parse_eos_interfaces(text: str) -> Facts:
    data = _json(text)
    if data is not None:  # `show interfaces | json` (eAPI)
        facts = eos_interfaces_from_json(data)
        if facts is None:
            raise ParseError("eos_interfaces", "JSON without `interfaces` entries (`lineProtocolStatus`)")
        return facts
    interfaces: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    for ln in _output_lines(text):
        m = _EOS_IF_HEAD.match(ln)
        if m:
            cur = {"port": m.group(1), "admin_up": "administratively down" not in m.group(2),
                   "link_up": m.group(3) == "up", "description": None, "ethernet_mtu": None, "ip_mtu": None,
                   "routed": False, "mtu": None}
            interfaces.append(cur)
            continue
        if cur is None or not ln.startswith(" "):
            continue
        s = ln.strip()
        m = re.match(r"^Description:\s*(.*)$", s)
        if m:
            cur["description"] = m.group(1)
            continue
        m = re.match(r"^IP MTU ([0-9]+) bytes(?:\s*\(Ethernet MTU ([0-9]+) bytes\))?", s)
        if m:
            cur["ip_mtu"] = int(m.group(1))
            if m.group(2):
                cur["ethernet_mtu"] = int(m.group(2))
            cur["routed"] = True
            continue
        m = re.match(r"^Ethernet MTU ([0-9]+) bytes", s)
        if m:
            cur["ethernet_mtu"] = int(m.group(1))
            continue
        if re.match(r"^Internet address is [0-9]", s):
            cur["routed"] = True
            continue
        m = re.match(r"^([0-9]+) PAUSE (input|output)", s)
        if m:
            cur[f"pause_{m.group(2)}"] = int(m.group(1))
    if not interfaces:
        raise ParseError("eos_interfaces", "no `<interface> is up, line protocol is up` line found")
    for i in interfaces:
        # a routed port's `mtu` is the IP MTU; a switchport's is the Ethernet (L2) MTU
        i["mtu"] = i["ip_mtu"] if i["routed"] and i["ip_mtu"] is not None else i["ethernet_mtu"]
        i["mtu_kind"] = "ip" if i["routed"] and i["ip_mtu"] is not None else "ethernet" if i["mtu"] else None
    return {"interfaces": interfaces}


def sniff_eos_interfaces(text: str) -> int:
    if text.lstrip().startswith("{") and looks_like_eos_interfaces_json(_json(text)):
        return 88
    if _has(text, r"^\S+ is [\w ,-]+, line protocol is \w+", r"^\s+(Ethernet|IP) MTU [0-9]+ bytes"):
        return 90
    if _has(text, r"^\s+Hardware is Ethernet, address is"):
        return 70
    return 0


# --------------------------------------------------------------------------------------------
# EOS `show interfaces status` (seed 004)

_EOS_STATUS = ("connected", "notconnect", "disabled", "errdisabled", "inactive", "sfpAbsent", "notconnected",
               "monitoring", "down", "up")


def parse_eos_interfaces_status(text: str) -> Facts:
    ports = []
    header = False
    for ln in _output_lines(text):
        if re.match(r"^\s*Port\s+Name\s+Status\s+Vlan", ln):
            header = True
            continue
        m = re.match(rf"^\s*({_EOS_PORT}|Ma[0-9]\S*|Management\S+)\s+(.*)$", ln)
        if not m:
            continue
        tokens = m.group(2).split()
        idx = next((i for i, t in enumerate(tokens) if t in _EOS_STATUS), None)
        if idx is None:
            continue
        rest = tokens[idx + 1:]
        ports.append({
            "port": m.group(1), "name": " ".join(tokens[:idx]) or None, "status": tokens[idx],
            "connected": tokens[idx] == "connected",
            "vlan": rest[0] if len(rest) > 0 else None, "duplex": rest[1] if len(rest) > 1 else None,
            "speed": rest[2] if len(rest) > 2 else None, "type": " ".join(rest[3:]) or None,
        })
    if not ports:
        raise ParseError("eos_interfaces_status", "no port rows (`Et1/1  connected  trunk …`) found")
    return {"ports": ports, "header": header}


def sniff_eos_interfaces_status(text: str) -> int:
    if _has(text, r"^\s*Port\s+Name\s+Status\s+Vlan\s+Duplex\s+Speed"):
        return 90
    return 0


# --------------------------------------------------------------------------------------------
# EOS `show flowcontrol`


def parse_eos_flowcontrol(text: str) -> Facts:
    ports = []
    for ln in _output_lines(text):
        m = re.match(rf"^\s*({_EOS_PORT})\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)(?:\s+([0-9]+))?(?:\s+([0-9]+))?\s*$", ln)
        if not m:
            continue
        send_admin, send_oper, rx_admin, rx_oper = (m.group(i).lower() for i in (2, 3, 4, 5))
        ports.append({
            "port": m.group(1), "send_admin": send_admin, "send_oper": send_oper, "receive_admin": rx_admin,
            "receive_oper": rx_oper, "rx_pause": to_int(m.group(6)), "tx_pause": to_int(m.group(7)),
            # on when configured on (or desired) or operating on
            "send": send_admin in ("on", "desired") or send_oper == "on",
            "receive": rx_admin in ("on", "desired") or rx_oper == "on",
        })
    if not ports:
        raise ParseError("eos_flowcontrol", "no flow-control port rows found")
    return {"ports": ports}


def sniff_eos_flowcontrol(text: str) -> int:
    return 95 if _has(text, r"Send FlowControl\s+Receive FlowControl") else 0


# --------------------------------------------------------------------------------------------
# EOS `show qos maps`


def _map_rows(block: list[str], key_word: str, value_word: str) -> dict[int, int]:
    keys = vals = None
    for ln in block:
        m = re.match(rf"^\s*{key_word}\s*:\s*([0-9\s]+)$", ln)
        if m:
            keys = [int(x) for x in m.group(1).split()]
        m = re.match(rf"^\s*{value_word}\s*:\s*([0-9\s]+)$", ln)
        if m:
            vals = [int(x) for x in m.group(1).split()]
    if keys is None or vals is None:
        return {}
    return dict(zip(keys, vals))


def parse_eos_qos_maps(text: str) -> Facts:
    out = _output_lines(text)
    sections: dict[str, list[str]] = {}
    name = None
    for ln in out:
        m = re.match(r"^\s*([A-Za-z][\w -]*?\bmap)\s*:\s*$", ln)
        if m:
            name = re.sub(r"\s+", " ", m.group(1).strip().lower())
            sections[name] = []
            continue
        if name is not None:
            sections[name].append(ln)
    facts: Facts = {}
    if "dscp tc map" in sections:
        grid: dict[int, int] = {}
        for ln in sections["dscp tc map"]:
            m = re.match(r"^\s*([0-9])\s*:\s+([0-9\s]+)$", ln)
            if m:
                for i, v in enumerate(m.group(2).split()):
                    grid[int(m.group(1)) * 10 + i] = int(v)
        facts["dscp_tc"] = grid
    if "cos tc map" in sections:
        facts["cos_tc"] = _map_rows(sections["cos tc map"], "cos", "tc")
    if "tc - cos map" in sections:
        facts["tc_cos"] = _map_rows(sections["tc - cos map"], "tc", "cos")
    for key in ("tc - tx-queue map", "tc - queue map"):
        if key in sections:
            facts["tc_queue"] = _map_rows(sections[key], "tc", r"tx-queue|queue")
    if not facts.get("dscp_tc") and not facts.get("cos_tc"):
        raise ParseError("eos_qos_maps", "no `Dscp Tc map:` or `Cos Tc map:` block found")
    return facts


def sniff_eos_qos_maps(text: str) -> int:
    return 95 if _has(text, r"^\s*Dscp Tc map\s*:") else 80 if _has(text, r"^\s*Cos Tc map\s*:") else 0


# --------------------------------------------------------------------------------------------
# EOS running-config (and config lines typed at the prompt: seeds 001 and 004)

_EOS_PROMPT_SPLIT = re.compile(r"[\w.-]+\((config[^)]*)\)#")


def _eos_config_commands(text: str) -> list[tuple[str | None, int, str]]:
    """(prompt mode or None, indent, command) per config command; a prompt mid-line starts a new
    command (seed 001 pasted several prompts on one line)."""
    cmds: list[tuple[str | None, int, str]] = []
    for raw in lines(text):
        if not raw.strip() or is_elision(raw) or raw.strip().startswith("!"):
            continue
        parts = _EOS_PROMPT_SPLIT.split(raw)
        if len(parts) > 1:  # [before, mode1, cmd1, mode2, cmd2, ...]
            for i in range(1, len(parts), 2):
                if parts[i + 1].strip():
                    cmds.append((parts[i], 0, parts[i + 1].strip()))
            continue
        p = switch_prompt_command(raw)
        if p is not None:
            if p[1]:
                cmds.append((p[0] or "exec", 0, p[1]))
            continue
        cmds.append((None, len(raw) - len(raw.lstrip()), raw.strip()))
    return cmds


def _eos_if_name(spec: str) -> str:
    """`ethernet 1/1-3/4`, `Et1/1-3/4` (the prompt's label) and `Ethernet1/1-3/4` name one thing."""
    spec = re.sub(r"\s+", "", spec.strip())
    m = re.match(r"^(ethernet|ether|eth|et)(?=[0-9])", spec, re.IGNORECASE)
    return "Ethernet" + spec[m.end():] if m else spec


def _eos_new_if() -> dict[str, Any]:
    return {"pfc_enabled": None, "no_drop": [], "drop": [], "trust": None, "mtu": None, "flowcontrol_send": None,
            "flowcontrol_receive": None, "ecn_queues": [], "description": None, "shutdown": False}


def parse_eos_running_config(text: str) -> Facts:
    interfaces: dict[str, dict[str, Any]] = {}
    glob = _eos_new_if()
    dscp_tc: dict[int, int] = {}
    cur: dict[str, Any] | None = None
    txq: tuple[int, int] | None = None  # (queue, indent of its `tx-queue` line)
    seen = False
    for mode, indent, cmd in _eos_config_commands(text):
        low = re.sub(r"\s+", " ", cmd.lower())
        if mode is not None:  # typed at a prompt: the prompt says where
            m = re.match(r"^config(?:-s-[^-]+)?-if-(.+?)(?:-txq-([0-9]))?$", mode)
            if m:
                cur = interfaces.setdefault(_eos_if_name(m.group(1)), _eos_new_if())
                txq = (int(m.group(2)), -1) if m.group(2) else None
            else:
                cur, txq = None, None
        else:  # running-config text: indentation says where
            if indent == 0:
                cur, txq = None, None
            elif txq is not None and indent <= txq[1]:
                txq = None
        if low.startswith("show ") or low in ("end", "exit", "configure", "configure terminal", "enable"):
            continue
        m = re.match(r"^interface (.+)$", cmd.strip(), re.IGNORECASE)
        if m:
            cur = interfaces.setdefault(_eos_if_name(m.group(1)), _eos_new_if())
            txq = None
            seen = True
            continue
        m = re.match(r"^qos map dscp ([0-9 ]+) to traffic-class ([0-9])$", low)
        if m:
            for d in _ints(m.group(1)):
                dscp_tc[d] = int(m.group(2))
            seen = True
            continue
        target = cur if cur is not None else glob
        m = re.match(r"^tx-queue ([0-9])$", low)
        if m:
            txq = (int(m.group(1)), indent if mode is None else -1)
            continue
        if low.startswith("random-detect ecn") and txq is not None:
            target["ecn_queues"] = sorted(set(target["ecn_queues"]) | {txq[0]})
            seen = True
            continue
        m = re.match(r"^(no )?priority-flow-control(?: mode)?(?: (on|off))?$", low)
        if m:
            target["pfc_enabled"] = not m.group(1) and m.group(2) != "off"
            seen = True
            continue
        m = re.match(r"^(no )?priority-flow-control priority ([0-9]+)(?: (no-drop|drop))?$", low)
        if m:
            prio = int(m.group(2))
            if prio <= 7:
                if m.group(1) or m.group(3) == "drop":
                    target["no_drop"] = [p for p in target["no_drop"] if p != prio]
                    target["drop"] = sorted(set(target["drop"]) | {prio})
                else:
                    target["no_drop"] = sorted(set(target["no_drop"]) | {prio})
            seen = True
            continue
        m = re.match(r"^(no )?qos trust(?: (dscp|cos))?$", low)
        if m:
            target["trust"] = "pcp" if m.group(1) or m.group(2) == "cos" else "dscp"
            seen = True
            continue
        m = re.match(r"^mtu ([0-9]+)$", low)
        if m:
            target["mtu"] = int(m.group(1))
            seen = True
            continue
        m = re.match(r"^(no )?flowcontrol (send|receive)(?: (on|off))?$", low)
        if m:
            target[f"flowcontrol_{m.group(2)}"] = not m.group(1) and m.group(3) == "on"
            seen = True
            continue
        m = re.match(r"^description (.*)$", cmd.strip(), re.IGNORECASE)
        if m and cur is not None:
            cur["description"] = m.group(1)
            continue
        if low == "shutdown" and cur is not None:
            cur["shutdown"] = True
    if not seen:
        raise ParseError("eos_running_config", "no interface, priority-flow-control, qos or mtu configuration found")
    facts: Facts = {"interfaces": interfaces, "dscp_tc": dscp_tc}
    if any(v not in (None, [], False) for v in glob.values()):
        facts["global"] = glob  # commands typed outside an interface (seed 001 shows them at `(config)#`)
    return facts


def sniff_eos_running_config(text: str) -> int:
    if _has(text, r"^! Command: show running-config") or _has(text, r"^! device: .*EOS-"):
        return 90
    if _has(text, r"\(config[^)]*\)#\s*priority-flow-control (mode on|on|priority [0-9]+ no-drop)"):
        return 85
    if _has(text, r"^\s+priority-flow-control priority [0-9]+ no-drop") and _has(text, r"^interface \S"):
        return 80
    return 0
