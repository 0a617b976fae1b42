"""Dell OS10 outputs: `show running-configuration` and `show interface`."""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.parsers.base import Facts, ParseError, is_elision, lines, to_int
from roce_wizard.parsers.switch.common import _has, _ints, _output_lines, switch_prompt_command

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
