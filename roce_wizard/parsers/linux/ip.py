"""iproute2: `ip -j link / addr` (JSON) and text `ip link show` with VF lines."""

from __future__ import annotations

import json
import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    body_lines,
    is_elision,
    lines,
    prompt_command,
    to_bool,
    to_int,
)
from roce_wizard.parsers.linux.common import _commands

# ---------------------------------------------------------------------------------------------
# ip -j link / addr (JSON)

_IP_CMD = re.compile(r"^\s*(?:sudo\s+)?(?:\S*/)?ip\s")


def _vf_from_json(v: dict) -> dict:
    vlan = v.get("vlan")
    if vlan is None and isinstance(v.get("vlan_list"), list) and v["vlan_list"]:
        vlan = v["vlan_list"][0].get("vlan")
    rate = v.get("rate") if isinstance(v.get("rate"), dict) else {}
    out = {
        "vf": v.get("vf"),
        "mac": v.get("address", v.get("mac")),
        "spoof_check": v.get("spoofchk"),
        "link_state": v.get("link_state"),
        "trust": v.get("trust"),
    }
    if "query_rss_en" in v:
        out["query_rss"] = v["query_rss_en"]
    if vlan is not None:
        out["vlan"] = vlan
    if rate:
        out["max_tx_rate"] = rate.get("max_tx")
        out["min_tx_rate"] = rate.get("min_tx")
    return out


def _addresses(addrs: object, family: str) -> list[str]:
    """`local/prefixlen` of each address of a family; an entry missing either is left out (unknown)."""
    if not isinstance(addrs, list):
        return []
    return [f"{a['local']}/{a['prefixlen']}" for a in addrs
            if isinstance(a, dict) and a.get("family") == family and isinstance(a.get("local"), str)
            and isinstance(a.get("prefixlen"), int) and not isinstance(a.get("prefixlen"), bool)]


def _iface_from_json(o: dict) -> dict:
    addrs = o.get("addr_info") or []
    iface: dict = {
        "name": o.get("ifname"),
        "ifindex": o.get("ifindex"),
        "mtu": o.get("mtu"),
        "state": o.get("operstate"),
        "mac": o.get("address"),
        "link_type": o.get("link_type"),
        "flags": o.get("flags"),
        "master": o.get("master"),
        "ipv4": _addresses(addrs, "inet"),
        "ipv6": _addresses(addrs, "inet6"),
    }
    if isinstance(o.get("vfinfo_list"), list):
        iface["vfs"] = [_vf_from_json(v) for v in o["vfinfo_list"] if isinstance(v, dict)]
    if "num_vf" in o:
        iface["num_vf"] = o["num_vf"]
    for src, dst in (("min_mtu", "min_mtu"), ("max_mtu", "max_mtu"), ("parentbus", "parentbus"),
                     ("parentdev", "parentdev"), ("link", "link")):
        if src in o:
            iface[dst] = o[src]
    kind = (o.get("linkinfo") or {}).get("info_kind") if isinstance(o.get("linkinfo"), dict) else None
    if kind:
        iface["kind"] = kind
    return iface


def _merge_iface(into: dict, new: dict) -> None:
    """`ip -j link` then `ip -j addr` for the same interface: fill what the first one lacked."""
    for k, v in new.items():
        if k in ("ipv4", "ipv6"):
            into[k] = into.get(k) or v
        elif into.get(k) in (None, [], "") and v not in (None, [], ""):
            into[k] = v


def parse_ip_json(text: str) -> Facts:
    src = lines(text)
    interfaces: list[dict] = []
    by_name: dict[str, dict] = {}
    i = 0
    found = False
    decoder = json.JSONDecoder()
    while i < len(src):
        ln = src[i]
        s = ln.strip()
        if not s or is_elision(ln) or prompt_command(ln) is not None or _IP_CMD.match(ln):
            i += 1
            continue
        if not s.startswith(("[", "{")):
            raise ParseError("ip_json", f"not JSON: {s[:60]!r}", i + 1)
        chunk = "\n".join(src[i:])
        try:
            value, end = decoder.raw_decode(chunk, chunk.index(s[0]))
        except json.JSONDecodeError as exc:
            raise ParseError("ip_json", f"invalid JSON: {exc.msg}", i + exc.lineno) from None
        found = True
        objs = value if isinstance(value, list) else [value]
        for o in objs:
            if not isinstance(o, dict) or not isinstance(o.get("ifname"), str):
                continue  # no name: nothing to say which interface it is
            iface = _iface_from_json(o)
            if iface["name"] in by_name:
                _merge_iface(by_name[iface["name"]], iface)
            else:
                by_name[iface["name"]] = iface
                interfaces.append(iface)
        # continue after the decoded value: on the line where it ended, anything left must be blank
        consumed = chunk[:end].count("\n")
        rest = chunk[end:].split("\n", 1)[0].strip()
        if rest:
            raise ParseError("ip_json", f"unexpected text after JSON: {rest[:60]!r}", i + consumed + 1)
        i += consumed + 1
    if not found:
        raise ParseError("ip_json", "no JSON array found")
    return {"interfaces": interfaces}


def sniff_ip_json(text: str) -> int:
    body = body_lines(text, ("ip",))
    if not body or not body[0].lstrip().startswith(("[", "{")):
        return 0
    joined = "\n".join(body)
    if '"ifname"' in joined:
        return 95
    if any(re.search(r"\bip\s+(?:-\w+\s+)*-j", c) for c in _commands(text, ("ip",))):
        return 70
    return 0


# ---------------------------------------------------------------------------------------------
# ip link show (text) with VF lines

# `4: enp1s0np0: <FLAGS> mtu …`; the index is optional because people trim it when they paste
_IF_HEAD = re.compile(r"^(?:([0-9]+):\s+)?([^\s:@]+)(?:@([^\s:]+))?:\s+<([^>]*)>\s*(.*)$")
_LINK_LINE = re.compile(r"^\s+link/(\S+)(?:\s+(\S+))?(?:\s+brd\s+(\S+))?(.*)$")
_VF_LINE = re.compile(
    r"^\s+vf\s+([0-9]+)\s+(?:link/\S+\s+(\S+)(?:\s+brd\s+\S+)?|MAC\s+([0-9a-fA-F:]+))\s*,?\s*(.*)$"
)
_HEAD_KEYS = {"mtu", "qdisc", "master", "state", "mode", "group", "qlen"}


def _vf_from_text(m: re.Match) -> dict:
    vf: dict = {"vf": int(m.group(1)), "mac": m.group(2) or m.group(3),
                "spoof_check": None, "link_state": None, "trust": None}
    for part in (p.strip() for p in m.group(4).split(",")):
        if not part:
            continue
        if (a := re.fullmatch(r"spoof checking (\S+)", part)):
            vf["spoof_check"] = to_bool(a.group(1))
        elif (a := re.fullmatch(r"link-state (\S+)", part)):
            vf["link_state"] = a.group(1)
        elif (a := re.fullmatch(r"trust (\S+)", part)):
            vf["trust"] = to_bool(a.group(1))
        elif (a := re.fullmatch(r"query_rss (\S+)", part)):
            vf["query_rss"] = to_bool(a.group(1))
        elif (a := re.fullmatch(r"vlan ([0-9]+)", part)):
            vf["vlan"] = int(a.group(1))
        elif (a := re.fullmatch(r"qos ([0-9]+)", part)):
            vf["qos"] = int(a.group(1))
        elif (a := re.fullmatch(r"max_tx_rate ([0-9]+)\s*Mbps", part)):
            vf["max_tx_rate"] = int(a.group(1))
        elif (a := re.fullmatch(r"min_tx_rate ([0-9]+)\s*Mbps", part)):
            vf["min_tx_rate"] = int(a.group(1))
        elif (a := re.fullmatch(r"tx rate ([0-9]+) \(Mbps\)", part)):
            vf["tx_rate"] = int(a.group(1))
    return vf


def parse_ip_link_vf(text: str) -> Facts:
    interfaces: list[dict] = []
    cur: dict | None = None
    for ln in lines(text):
        if not ln.strip() or is_elision(ln) or prompt_command(ln) is not None:
            continue
        m = _IF_HEAD.match(ln)
        if m:
            tok = m.group(5).split()
            attrs = {tok[i]: tok[i + 1] for i in range(len(tok) - 1) if tok[i] in _HEAD_KEYS}
            cur = {"name": m.group(2), "ifindex": to_int(m.group(1)), "flags": m.group(4).split(","),
                   "mtu": to_int(attrs.get("mtu")), "state": attrs.get("state"), "mac": None,
                   "master": attrs.get("master"), "ipv4": [], "ipv6": [], "vfs": []}
            if m.group(3):
                cur["link"] = m.group(3)
            interfaces.append(cur)
            continue
        if not ln[:1].isspace():  # an unindented line that is not a header ends the interface
            cur = None
            continue
        if cur is None:
            continue
        m = _VF_LINE.match(ln)
        if m:
            cur["vfs"].append(_vf_from_text(m))
            continue
        m = _LINK_LINE.match(ln)
        if m:
            cur["link_type"] = m.group(1)
            if m.group(2) and re.fullmatch(r"[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2})+", m.group(2)):
                cur["mac"] = m.group(2)
            extra = m.group(4) or ""
            for key, name in (("minmtu", "min_mtu"), ("maxmtu", "max_mtu")):
                if (a := re.search(rf"\b{key} ([0-9]+)", extra)):
                    cur[name] = int(a.group(1))
            for key in ("parentbus", "parentdev", "portname", "switchid"):
                if (a := re.search(rf"\b{key} (\S+)", extra)):
                    cur[key] = a.group(1)
            continue
        m = re.match(r"^\s+inet\s+([0-9]+\.[0-9]+\.[0-9]+\.[0-9]+/[0-9]+)", ln)
        if m:
            cur["ipv4"].append(m.group(1))
            continue
        m = re.match(r"^\s+inet6\s+(\S+/[0-9]+)", ln)
        if m:
            cur["ipv6"].append(m.group(1))
            continue
        m = re.match(r"^\s+altname\s+(\S+)", ln)
        if m:
            cur.setdefault("altnames", []).append(m.group(1))
    if not interfaces:
        raise ParseError("ip_link_vf", "no `N: <ifname>: <FLAGS> mtu …` line found")
    return {"interfaces": interfaces}


def sniff_ip_link_vf(text: str) -> int:
    ls = lines(text)
    heads = [ln for ln in ls if _IF_HEAD.match(ln) and " mtu " in ln]
    if not heads:
        return 0
    if any(_VF_LINE.match(ln) for ln in ls):
        return 90
    return 60
