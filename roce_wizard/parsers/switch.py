"""Ethernet switch outputs: Arista EOS, NVIDIA Onyx, Dell OS10, Cumulus NVUE, SONiC.

Kinds (docs/facts.md "## Switch" lists every key):
  arista_pfc            EOS `show priority-flow-control [interfaces X]`
  eos_qos_interfaces    EOS `show qos interfaces [X]` (trust mode, ECN/WRED per tx-queue)
  eos_interfaces        EOS `show interfaces [X]` (L2 `Ethernet MTU` vs routed `IP MTU`)
  eos_interfaces_status EOS `show interfaces status` (seed 004)
  eos_flowcontrol       EOS `show flowcontrol` / `show interfaces flowcontrol`
  eos_qos_maps          EOS `show qos maps` (DSCP -> traffic class, TC <-> CoS)
  eos_running_config    EOS `show running-config` and config typed at the prompt (seeds 001, 004)
  onyx_pfc              Onyx `show dcb priority-flow-control` (text, or `| json-print`)
  onyx_interfaces       Onyx `show interfaces [ethernet X]` (text, or `| json-print`)
  onyx_qos_interface    Onyx `show qos interface ethernet X` (trust mode)
  onyx_running_config   Onyx `show running-config` and config typed at the prompt (seed 001)
  os10_running_config   OS10 `show running-configuration` (class/policy maps, PFC, trust-map, MTU, flowcontrol)
  os10_interfaces       OS10 `show interface [ethernet X]` (MTU, flowcontrol)
  nvue_qos_roce         Cumulus `nv show qos roce` and `nv show interface X qos roce counters` (table or -o json)
  nvue_interfaces       Cumulus `nv show interface` (table or -o json): MTU per interface
  sonic_pfc             SONiC `show pfc priority` (and a paste of it with the counters below)
  sonic_show_pfc        SONiC `show pfc counters [--history]` (switch_sonic.py)
  sonic_queue_counters  SONiC `show queue counters [--voq|--trim] [--json]` (switch_sonic.py)
JSON and a script's Python repr of it (`| json`, `| json-print`, the Onyx JSON API) are read by switch_json.py.

Port names are kept as the device prints them; `port_key` turns any spelling (`Et3`, `Ethernet3`,
`eth1/3`, `ethernet 1/1/3`, `Eth 1/1/3`) into one comparable key. A switch prompt pasted with the
output (`wedge>`, `sw(config-if-Et1)#`, `sw [standalone: master] # `) is context, never data.
"""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.parsers.base import Facts, ParseError, Parser, is_digits, is_elision, lines, to_bool, to_int
from roce_wizard.parsers.switch_json import (
    eos_interfaces_from_json,
    load_structured,
    looks_like_eos_interfaces_json,
    onyx_unwrap,
)
from roce_wizard.parsers.switch_sonic import PARSERS as SONIC_COUNTER_PARSERS

__all__ = ["PARSERS", "port_key", "switch_prompt_command"]

# --------------------------------------------------------------------------------------------
# helpers

# `wedge>cmd`, `sw-eos-1#cmd`, `sw(config-if-Et1/1-3/4)#cmd`, `sw [standalone: master] (config) # cmd`,
# `100g-mlnx(config) # cmd`, `sw-os10-1(conf-if-eth1/1/1)#`.
SWITCH_PROMPT_RE = re.compile(
    r"^\s*(?P<host>[A-Za-z0-9][\w.-]*)(?:\s+\[[^\]]*\])?\s*(?:\((?P<mode>[^)]*)\))?\s*(?P<sign>[#>])\s?(?P<cmd>.*)$"
)
_TYPE_WORD = re.compile(r"^(ethernet|ether|eth|et|e|swp|port-channel|po|mpo|mlag-port-channel|vlan|mgmt|management)\s*",
                        re.IGNORECASE)


def switch_prompt_command(line: str) -> tuple[str | None, str] | None:
    """(config mode or None, command) for a switch prompt line; None for anything else."""
    m = SWITCH_PROMPT_RE.match(line)
    if m is None:
        return None
    host = m.group("host")
    # a data line is not a prompt: the host part of a prompt has no spaces and is never all digits
    if is_digits(host):
        return None
    return m.group("mode"), m.group("cmd").strip()


def port_key(name: str | None) -> tuple[str, tuple[int, ...]] | None:
    """One key for every spelling of an interface name: ("eth", (1, 3)) for Et1/3, Ethernet1/3,
    eth1/3, `ethernet 1/3`, `Eth 1/3`; ("swp", (16,)) for swp16; None when it names no port."""
    if not name:
        return None
    s = name.strip()
    m = _TYPE_WORD.match(s)
    word = m.group(1).lower() if m else ""
    rest = s[m.end():] if m else s
    if not re.fullmatch(r"[0-9]+(?:[/.:][0-9]+)*", rest):
        return None
    kind = {"ethernet": "eth", "ether": "eth", "eth": "eth", "et": "eth", "e": "eth", "": "eth",
            "port-channel": "po", "po": "po", "mlag-port-channel": "mpo", "management": "mgmt"}.get(word, word)
    return kind, tuple(int(x) for x in re.split(r"[/.:]", rest))


def _ints(text: str | None) -> list[int]:
    """`3`, `3,4`, `3 4`, `0-2,4` -> ints (0..63); `-` / empty -> []."""
    out: list[int] = []
    for part in re.split(r"[,\s]+", (text or "").strip()):
        m = re.fullmatch(r"([0-9]+)(?:-([0-9]+))?", part)
        if m:
            a, b = int(m.group(1)), int(m.group(2) or m.group(1))
            out.extend(range(a, b + 1) if a <= b else [])
    return out


def _output_lines(text: str) -> list[str]:
    """Lines without pasted prompts, command lines and author elisions (blank lines kept)."""
    out = []
    for ln in lines(text):
        if switch_prompt_command(ln) is not None or is_elision(ln):
            continue
        out.append(ln)
    return out


def _json(text: str) -> Any:
    """JSON, or the Python repr a script printed of it (switch_json.load_structured); None for text."""
    return load_structured(text)


def _has(text: str, *patterns: str, flags: int = re.MULTILINE) -> bool:
    return all(re.search(p, text, flags) for p in patterns)


def _onoff(value: str | None) -> bool | None:
    return to_bool(value) if value is not None else None


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


# --------------------------------------------------------------------------------------------
# OS10 running-configuration


def parse_os10_running_config(text: str) -> Facts:
    interfaces: dict[str, dict[str, Any]] = {}
    class_maps: dict[str, dict[str, Any]] = {}
    policy_maps: dict[str, dict[str, Any]] = {}
    dscp_maps: dict[str, dict[int, int]] = {}
    wred: dict[str, dict[str, Any]] = {}
    system_qos: dict[str, Any] = {}
    block: tuple[str, str] | None = None  # (kind, name)
    klass: dict[str, Any] | None = None
    seen = False
    for raw in lines(text):
        if not raw.strip() or is_elision(raw) or switch_prompt_command(raw) is not None:
            continue
        s = raw.strip()
        if s == "!":
            if not raw.startswith(" "):
                block, klass = None, None
            continue
        top = not raw.startswith(" ")
        if top:
            klass = None
            m = re.match(r"^interface (\S+)$", s)
            if m:
                block = ("interface", m.group(1))
                interfaces[m.group(1)] = {"mtu": None, "flowcontrol_rx": False, "flowcontrol_tx": False,
                                          "pfc_mode": False, "nqos_policy": None, "queuing_policy": None,
                                          "trust_map": None, "shutdown": None, "description": None}
                continue
            m = re.match(r"^class-map type (network-qos|queuing|qos) (\S+)", s)
            if m:
                block = ("class-map", f"{m.group(1)}:{m.group(2)}")
                class_maps[block[1]] = {"type": m.group(1), "name": m.group(2), "qos_group": None, "queue": None}
                seen = True
                continue
            m = re.match(r"^policy-map type (network-qos|queuing|qos) (\S+)", s)
            if m:
                block = ("policy-map", m.group(2))
                policy_maps[m.group(2)] = {"type": m.group(1), "classes": {}}
                seen = True
                continue
            m = re.match(r"^trust dscp-map (\S+)", s)
            if m:
                block = ("dscp-map", m.group(1))
                dscp_maps[m.group(1)] = {}
                seen = True
                continue
            m = re.match(r"^wred (\S+)", s)
            if m:
                block = ("wred", m.group(1))
                wred[m.group(1)] = {"ecn": False}
                continue
            if s == "system qos":
                block = ("system-qos", "")
                continue
            block = None
            continue
        if block is None:
            continue
        kind, name = block
        if kind == "interface":
            i = interfaces[name]
            m = re.match(r"^mtu ([0-9]+)$", s)
            if m:
                i["mtu"] = int(m.group(1))
            elif (m := re.match(r"^(no )?flowcontrol (receive|transmit)(?: (on|off))?$", s)):
                i["flowcontrol_rx" if m.group(2) == "receive" else "flowcontrol_tx"] = (
                    not m.group(1) and m.group(3) == "on")
            elif (m := re.match(r"^(no )?priority-flow-control mode(?: on)?$", s)):
                i["pfc_mode"] = not m.group(1)
                seen = True
            elif (m := re.match(r"^service-policy input type network-qos (\S+)$", s)):
                i["nqos_policy"] = m.group(1)
                seen = True
            elif (m := re.match(r"^service-policy output type queuing (\S+)$", s)):
                i["queuing_policy"] = m.group(1)
            elif (m := re.match(r"^trust-map dscp (\S+)$", s)):
                i["trust_map"] = m.group(1)
                seen = True
            elif s in ("shutdown", "no shutdown"):
                i["shutdown"] = s == "shutdown"
            elif (m := re.match(r"^description \"?(.*?)\"?$", s)):
                i["description"] = m.group(1)
        elif kind == "class-map":
            m = re.match(r"^match (qos-group|queue) ([0-9]+)", s)
            if m:
                class_maps[name]["qos_group" if m.group(1) == "qos-group" else "queue"] = int(m.group(2))
        elif kind == "policy-map":
            m = re.match(r"^class (\S+)$", s)
            if m:
                klass = {"pause": False, "pfc_cos": [], "ecn": False, "wred_profile": None, "bandwidth": None}
                policy_maps[name]["classes"][m.group(1)] = klass
                continue
            if klass is None:
                continue
            if s == "pause":
                klass["pause"] = True
            elif (m := re.match(r"^pfc-cos (.+)$", s)):
                klass["pfc_cos"] = sorted(set(_ints(m.group(1))))
            elif s == "random-detect ecn":
                klass["ecn"] = True
            elif (m := re.match(r"^random-detect (\S+)$", s)):
                klass["wred_profile"] = m.group(1)
            elif (m := re.match(r"^bandwidth percent ([0-9]+)$", s)):
                klass["bandwidth"] = int(m.group(1))
        elif kind == "dscp-map":
            m = re.match(r"^qos-group ([0-9]+) dscp (.+)$", s)
            if m:
                for d in _ints(m.group(2)):
                    dscp_maps[name][d] = int(m.group(1))
        elif kind == "wred":
            if s == "random-detect ecn":
                wred[name]["ecn"] = True
        elif kind == "system-qos":
            m = re.match(r"^trust-map dscp (\S+)$", s)
            if m:
                system_qos["trust_map"] = m.group(1)
                seen = True
            m = re.match(r"^service-policy (input|output) type (network-qos|queuing) (\S+)$", s)
            if m:
                system_qos[f"{m.group(2).replace('-', '_')}_policy"] = m.group(3)
    if not seen and not interfaces:
        raise ParseError("os10_running_config", "no interface, class-map, policy-map or trust-map configuration found")
    # what each interface amounts to (the switch applies the system-wide qos to ports with none of their own)
    for i in interfaces.values():
        nqos = policy_maps.get(i["nqos_policy"] or system_qos.get("network_qos_policy") or "")
        i["no_drop"] = sorted({c for k in (nqos or {}).get("classes", {}).values() if k["pause"] for c in k["pfc_cos"]})
        queuing = policy_maps.get(i["queuing_policy"] or system_qos.get("queuing_policy") or "")
        ecn: set[int] = set()
        for cname, k in (queuing or {}).get("classes", {}).items():
            on = k["ecn"] or bool(k["wred_profile"] and wred.get(k["wred_profile"], {}).get("ecn"))
            queue = (class_maps.get(f"queuing:{cname}") or {}).get("queue")
            if on and queue is not None:
                ecn.add(queue)
        i["ecn_queues"] = sorted(ecn)
        trust_map = i["trust_map"] or system_qos.get("trust_map")
        i["trust"] = "dscp" if trust_map else None
        i["effective_trust_map"] = trust_map
    return {"interfaces": interfaces, "class_maps": class_maps, "policy_maps": policy_maps,
            "dscp_maps": {k: dict(sorted(v.items())) for k, v in dscp_maps.items()}, "wred": wred,
            "system_qos": system_qos}


def sniff_os10_running_config(text: str) -> int:
    if _has(text, r"^! Version 10\.") or _has(text, r"^policy-map type network-qos \S+", r"^\s+pfc-cos "):
        return 92
    if _has(text, r"^interface ethernet[0-9]+/[0-9]+/[0-9]+\s*$", r"^\s+(priority-flow-control mode on|trust-map dscp|"
                                                          r"service-policy (input|output) type)"):
        return 90
    return 0


# --------------------------------------------------------------------------------------------
# OS10 `show interface`


def parse_os10_interfaces(text: str) -> Facts:
    interfaces: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    for ln in _output_lines(text):
        m = re.match(r"^(Ethernet|Eth|Port-channel|Vlan|Management)\s*([0-9/:]+) is (\w+), line protocol is (\w+)", ln)
        if m:
            name = ("ethernet" if m.group(1).lower().startswith("eth") else m.group(1).lower()) + m.group(2)
            cur = {"port": name, "printed_as": f"{m.group(1)} {m.group(2)}", "admin_up": m.group(3) == "up",
                   "link_up": m.group(4) == "up", "mtu": None, "ip_mtu": None, "flowcontrol_rx": None,
                   "flowcontrol_tx": None, "description": None}
            interfaces.append(cur)
            continue
        if cur is None:
            continue
        m = re.match(r"^\s*MTU ([0-9]+) bytes(?:, IP MTU ([0-9]+) bytes)?", ln)
        if m:
            cur["mtu"], cur["ip_mtu"] = int(m.group(1)), to_int(m.group(2))
            continue
        m = re.match(r"^\s*Flowcontrol rx (on|off) tx (on|off)", ln)
        if m:
            cur["flowcontrol_rx"], cur["flowcontrol_tx"] = m.group(1) == "on", m.group(2) == "on"
            continue
        m = re.match(r"^\s*Description:\s*(.*)$", ln)
        if m:
            cur["description"] = m.group(1)
    if not interfaces:
        raise ParseError("os10_interfaces", "no `Ethernet 1/1/1 is up, line protocol is up` line found")
    return {"interfaces": interfaces}


def sniff_os10_interfaces(text: str) -> int:
    if _has(text, r"^Ethernet [0-9]+/[0-9]+/[0-9]+ is \w+, line protocol is"):
        return 92
    if _has(text, r"^\s*Flowcontrol rx (on|off) tx (on|off)"):
        return 85
    return 0


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


# --------------------------------------------------------------------------------------------
# SONiC `show pfc priority`, `show pfc counters`, `show queue counters`


def _num(s: str) -> int | None:
    s = s.replace(",", "")
    return int(s) if is_digits(s) else None


def parse_sonic_pfc(text: str) -> Facts:
    out = _output_lines(text)
    facts: Facts = {}
    ports: list[dict[str, Any]] = []
    counters: dict[str, dict[str, list[int | None]]] = {}
    queues: list[dict[str, Any]] = []
    mode = None
    for ln in out:
        s = ln.strip()
        if re.match(r"^Interface\s+Lossless priorities", s):
            mode = "prio"
            continue
        m = re.match(r"^Port (Rx|Tx)\s+PFC0", s)
        if m:
            mode = "pfc_" + m.group(1).lower()
            counters.setdefault(m.group(1).lower(), {})
            continue
        if re.match(r"^Port\s+TxQ\s+Counter/pkts", s):
            mode = "queue"
            continue
        if not s or re.match(r"^-+(\s+-+)*$", s):
            continue
        if re.match(r"^(Port|IFACE|Ingress|Egress|For namespace)\b", s) or s.startswith("#"):
            mode = None if not s.startswith("For namespace") else mode
            continue
        tokens = s.split()
        if mode == "prio" and len(tokens) >= 1 and re.match(r"^Ethernet[0-9]+", tokens[0]):
            ports.append({"port": tokens[0], "priorities": _ints(tokens[1]) if len(tokens) > 1 else []})
        elif mode and mode.startswith("pfc_") and len(tokens) == 9:
            counters[mode[4:]][tokens[0]] = [_num(t) for t in tokens[1:]]
        elif mode == "queue" and len(tokens) >= 6:
            queues.append({"port": tokens[0], "queue": tokens[1], "packets": _num(tokens[2]),
                           "bytes": _num(tokens[3]), "drop_packets": _num(tokens[4]), "drop_bytes": _num(tokens[5])})
    if ports:
        facts["ports"] = ports
    if counters:
        facts["pfc_counters"] = counters
    if queues:
        facts["queue_counters"] = queues
    if not facts:
        raise ParseError("sonic_pfc", "no `Lossless priorities` table nor `Port Rx/Tx PFC0…` counters found")
    return facts


def sniff_sonic_pfc(text: str) -> int:
    if _has(text, r"^\s*Interface\s+Lossless priorities"):
        return 95
    if _has(text, r"^\s*Port (Rx|Tx)\s+PFC0\s+PFC1"):
        return 88
    return 0


PARSERS: dict[str, Parser] = {
    p.kind: p
    for p in (
        Parser("arista_pfc", parse_arista_pfc, sniff_arista_pfc, "EOS show priority-flow-control"),
        Parser("eos_qos_interfaces", parse_eos_qos_interfaces, sniff_eos_qos_interfaces,
               "EOS show qos interfaces: trust mode, ECN/WRED per tx-queue"),
        Parser("eos_interfaces", parse_eos_interfaces, sniff_eos_interfaces,
               "EOS show interfaces: link, L2 Ethernet MTU / routed IP MTU"),
        Parser("eos_interfaces_status", parse_eos_interfaces_status, sniff_eos_interfaces_status,
               "EOS show interfaces status"),
        Parser("eos_flowcontrol", parse_eos_flowcontrol, sniff_eos_flowcontrol, "EOS show flowcontrol"),
        Parser("eos_qos_maps", parse_eos_qos_maps, sniff_eos_qos_maps, "EOS show qos maps: DSCP/CoS -> TC"),
        Parser("eos_running_config", parse_eos_running_config, sniff_eos_running_config,
               "EOS running-config or typed config: PFC, trust, MTU, flowcontrol, ECN"),
        Parser("onyx_pfc", parse_onyx_pfc, sniff_onyx_pfc, "Onyx show dcb priority-flow-control"),
        Parser("onyx_interfaces", parse_onyx_interfaces, sniff_onyx_interfaces, "Onyx show interfaces ethernet"),
        Parser("onyx_qos_interface", parse_onyx_qos_interface, sniff_onyx_qos_interface,
               "Onyx show qos interface ethernet: trust mode"),
        Parser("onyx_running_config", parse_onyx_running_config, sniff_onyx_running_config,
               "Onyx running-config or typed config: DCB PFC, trust, MTU, ECN, DSCP map"),
        Parser("os10_running_config", parse_os10_running_config, sniff_os10_running_config,
               "OS10 show running-configuration: class/policy maps, PFC, trust-map, MTU, flowcontrol"),
        Parser("os10_interfaces", parse_os10_interfaces, sniff_os10_interfaces, "OS10 show interface"),
        Parser("nvue_qos_roce", parse_nvue_qos_roce, sniff_nvue_qos_roce, "Cumulus nv show qos roce"),
        Parser("nvue_interfaces", parse_nvue_interfaces, sniff_nvue_interfaces, "Cumulus nv show interface"),
        Parser("sonic_pfc", parse_sonic_pfc, sniff_sonic_pfc, "SONiC show pfc priority / counters"),
        *SONIC_COUNTER_PARSERS.values(),  # sonic_show_pfc, sonic_queue_counters (switch_sonic.py)
    )
}
