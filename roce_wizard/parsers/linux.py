"""Linux host tools: iproute2 (`ip -j`, text `ip link`), ethtool, mlnx_qos, dmesg, lspci, sysfs probes.

Kinds: ip_json, ip_link_vf, ethtool_pause, ethtool_stats, mlnx_qos, linux_dmesg, lspci_list,
lspci_vvv, boot_id, tool_presence.

Prompts and command lines are context only (which interface `ethtool -S` read), never data.
Sniffer scores: ~95 for a tool's own signature line, lower and proportional to the share of
matching lines for formats that are only line-shaped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    Parser,
    body_lines,
    fraction,
    is_bare_command,
    is_elision,
    lines,
    prompt_command,
    to_bool,
    to_int,
)

# ---------------------------------------------------------------------------------------------
# helpers


def _commands(text: str, tools: Iterable[str] = ()) -> list[str]:
    tools = tuple(tools)
    out = []
    for ln in lines(text):
        c = prompt_command(ln)
        if c is None and tools and is_bare_command(ln, tools):
            c = ln.strip()
        if c:
            out.append(c)
    return out


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


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


# ---------------------------------------------------------------------------------------------
# ethtool -a

_PAUSE_HEAD = re.compile(r"^\s*Pause parameters for\s+(\S+?):?\s*$")
_PAUSE_KV = re.compile(r"^\s*(Autonegotiate|RX|TX|RX negotiated|TX negotiated):\s*(\S+)\s*$")


def parse_ethtool_pause(text: str) -> Facts:
    facts: Facts = {"interface": None, "rx": None, "tx": None, "autoneg": None}
    seen = False
    for c in _commands(text, ("ethtool",)):
        m = re.search(r"\bethtool\s+(?:-a|--show-pause)\s+(\S+)", c)
        if m:
            facts["interface"] = m.group(1)
    for ln in body_lines(text, ("ethtool",)):
        m = _PAUSE_HEAD.match(ln)
        if m:
            facts["interface"] = m.group(1)
            seen = True
            continue
        m = _PAUSE_KV.match(ln)
        if m:
            key = {"Autonegotiate": "autoneg", "RX": "rx", "TX": "tx",
                   "RX negotiated": "rx_negotiated", "TX negotiated": "tx_negotiated"}[m.group(1)]
            facts[key] = to_bool(m.group(2))
            seen = True
            continue
        m = re.match(r"^\s*(Cannot get device pause settings.*|netlink error.*)$", ln)
        if m:
            facts["error"] = m.group(1).strip()
            seen = True
    if not seen:
        raise ParseError("ethtool_pause", "no `Pause parameters for` block or RX/TX line found")
    return facts


def sniff_ethtool_pause(text: str) -> int:
    body = body_lines(text, ("ethtool",))
    if any(_PAUSE_HEAD.match(ln) for ln in body):
        return 95
    f = fraction(body, lambda ln: bool(_PAUSE_KV.match(ln)))
    return round(70 * f) if f else 0


# ---------------------------------------------------------------------------------------------
# ethtool -S

_STAT_LINE = re.compile(r"^\s*([A-Za-z0-9_][\w.\-\[\]/]*):\s+(-?[0-9]+)\s*$")


def parse_ethtool_stats(text: str) -> Facts:
    counters: dict[str, int] = {}
    facts: Facts = {}
    for c in _commands(text, ("ethtool",)):
        m = re.search(r"\bethtool\s+(?:-\w+\s+)*(?:-S|--statistics)\s+(?:--\S+\s+)*(\S+)", c)
        if m:
            facts["interface"] = m.group(1)
    for ln in body_lines(text, ("ethtool",)):
        m = _STAT_LINE.match(ln)
        if m:
            counters[m.group(1)] = int(m.group(2))
    if not counters:
        raise ParseError("ethtool_stats", "no `name: value` counter line found")
    facts["counters"] = counters
    return facts


def sniff_ethtool_stats(text: str) -> int:
    body = body_lines(text, ("ethtool",))
    f = fraction(body, lambda ln: bool(_STAT_LINE.match(ln)) or ln.strip() == "NIC statistics:")
    if not f:
        return 0
    if any(ln.strip() == "NIC statistics:" for ln in body) or any(
            re.search(r"\bethtool\s+(?:-\w+\s+)*(?:-S|--statistics)\b", c)
            for c in _commands(text, ("ethtool",))):
        return round(95 * f)
    return round(70 * f)


# ---------------------------------------------------------------------------------------------
# mlnx_qos -i <if>

_QOS_START = re.compile(r"^\s*DCBX mode:")
_QOS_TRUST = re.compile(r"^\s*Priority trust (?:state|mode):\s*(\S+)\s*$")
_QOS_TC = re.compile(
    r"^\s*tc:\s*([0-9]+)\s+ratelimit:\s*([^,]+?)\s*,\s*tsa:\s*(\w+)?(?:\s*,\s*bw:\s*([0-9]+)\s*%)?"
)
_QOS_PRIO = re.compile(r"^\s*priority:\s*([0-9]+)\s*$")
_QOS_DSCP = re.compile(r"^\s*prio:\s*([0-9]+)\s+dscp:\s*([0-9,\s]*)$")
# PDF/HTML copies leave tag residue (`1</`) on wrapped number rows
_RESIDUE = re.compile(r"</?[A-Za-z]*>?")


def _int_row(ln: str) -> list[int] | None:
    s = _RESIDUE.sub(" ", ln).strip()
    if not s or not re.fullmatch(r"[0-9]+(?:\s+[0-9]+)*", s):
        return None
    return [int(x) for x in s.split()]


def _qos_segments(src: list[str]) -> list[list[str]]:
    """One segment per mlnx_qos report (people paste several runs): a new report starts at
    `DCBX mode:`, or at `Priority trust state:` when the current one already has one."""
    segments: list[list[str]] = [[]]
    has_trust = False
    for ln in src:
        starts = _QOS_START.match(ln) or (_QOS_TRUST.match(ln) and has_trust)
        if starts and any(_QOS_TRUST.match(x) or "PFC configuration" in x or _QOS_START.match(x)
                          for x in segments[-1]):
            segments.append([])
            has_trust = False
        if _QOS_TRUST.match(ln):
            has_trust = True
        segments[-1].append(ln)
    return [s for s in segments if s]


def _parse_qos_segment(src: list[str]) -> Facts:
    facts: Facts = {"trust": None, "pfc": None, "pfc_buffer": None, "dcbx": None, "tcs": []}
    warnings: list[str] = []
    dscp2prio: dict[int, int] | None = None
    rows: dict[str, list[int]] = {}
    section = None  # "dscp" | "pfc" | None
    row_key: str | None = None
    tc: dict | None = None
    for ln in src:
        if not ln.strip() or is_elision(ln):
            continue
        if (m := re.match(r"^\s*DCBX mode:\s*(.+?)\s*$", ln)):
            facts["dcbx"] = m.group(1).lower()
            section = None
            continue
        if (m := _QOS_TRUST.match(ln)):
            facts["trust"] = m.group(1).lower()
            section = None
            continue
        if re.match(r"^\s*Priority trust state is not supported", ln):
            warnings.append(ln.strip())
            continue
        if re.match(r"^\s*dscp2prio mapping:", ln):
            dscp2prio = dscp2prio or {}
            section = "dscp"
            continue
        if (m := _QOS_DSCP.match(ln)):
            dscp2prio = dscp2prio if dscp2prio is not None else {}
            for d in re.findall(r"[0-9]+", m.group(2)):
                dscp2prio[int(d)] = int(m.group(1))
            continue
        if (m := re.match(r"^\s*Receive buffer size \(bytes\):\s*(.*)$", ln)):
            sizes, extra = [], {}
            for part in (p.strip() for p in m.group(1).split(",")):
                if re.fullmatch(r"[0-9]+", part):
                    sizes.append(int(part))
                elif (kv := re.fullmatch(r"(\w+)=([0-9]*)", part)):
                    extra[kv.group(1)] = to_int(kv.group(2)) if kv.group(2) else None
            facts["receive_buffer"] = sizes
            facts.update(extra)
            section = None
            continue
        if (m := re.match(r"^\s*Cable len:\s*([0-9]+)", ln)):
            facts["cable_len"] = int(m.group(1))
            section = None
            continue
        if re.match(r"^\s*PFC configuration:", ln):
            section, row_key = "pfc", None
            continue
        if (m := _QOS_TC.match(ln)):
            tc = {"tc": int(m.group(1)), "ratelimit": m.group(2).strip(), "tsa": m.group(3),
                  "bw": int(m.group(4)) if m.group(4) else None, "priorities": []}
            facts["tcs"].append(tc)
            section = None
            continue
        if (m := _QOS_PRIO.match(ln)):
            if tc is not None:
                tc["priorities"].append(int(m.group(1)))
            continue
        if section == "pfc":
            m = re.match(r"^\s*(priority|enabled|buffer)\b(.*)$", ln)
            if m:
                row_key = m.group(1)
                rows[row_key] = _int_row(m.group(2)) or []
                continue
            more = _int_row(ln)
            if more is not None and row_key is not None:
                rows[row_key].extend(more)  # a row wrapped onto the next lines
                continue
    if dscp2prio is not None:
        facts["dscp2prio"] = dscp2prio
    n = len(rows.get("priority") or []) or 8
    for key, out in (("enabled", "pfc"), ("buffer", "pfc_buffer")):
        vals = rows.get(key)
        if not vals:
            continue
        if len(vals) == n:
            facts[out] = vals
        elif len(vals) > n and len(set(vals)) == 1:
            # a mangled copy repeated the row's values; all equal, so any alignment reads the same
            facts[out] = vals[:n]
            warnings.append(f"PFC `{key}` row has {len(vals)} values for {n} priorities "
                            f"(all {vals[0]}); read as {n}")
        else:
            warnings.append(f"PFC `{key}` row has {len(vals)} values for {n} priorities; not read")
    if warnings:
        facts["warnings"] = warnings
    return facts


def parse_mlnx_qos(text: str) -> Facts:
    src = [ln for ln in lines(text) if prompt_command(ln) is None]
    interface = None
    for c in _commands(text, ("mlnx_qos",)):
        m = re.search(r"\bmlnx_qos\b.*?(?:-i|--interface)[=\s]\s*(\S+)", c)
        if m:
            interface = m.group(1)
    reports = [f for f in (_parse_qos_segment(s) for s in _qos_segments(src))
               if f["trust"] or f["pfc"] is not None or f["tcs"] or "dscp2prio" in f]
    if not reports:
        raise ParseError("mlnx_qos", "no `Priority trust state`, `PFC configuration` or `tc:` block found")
    facts = reports[-1]
    facts["interface"] = interface
    if len(reports) > 1:
        facts["reports"] = len(reports)
    return facts


def sniff_mlnx_qos(text: str) -> int:
    ls = lines(text)
    if any(_QOS_TRUST.match(ln) for ln in ls) or any(re.match(r"^\s*PFC configuration:", ln) for ln in ls):
        return 95
    if any(re.match(r"^\s*DCBX mode:", ln) for ln in ls) or any(re.match(r"^\s*dscp2prio mapping:", ln) for ln in ls):
        return 85
    if any(_QOS_TC.match(ln) for ln in ls):
        return 60
    return 0


# ---------------------------------------------------------------------------------------------
# dmesg

# `[    8.387515] …` (seconds since boot, so never the 10-digit epoch of a UCX log line
# `[1621436784.119617] [host:pid] …`), `dmesg -T` dates, and `journalctl -k` lines
_DMESG_TS = re.compile(r"^\s*\[\s*[0-9]{1,9}\.[0-9]{6}\]\s+(?!\[)"
                       r"|^\s*\[[A-Z][a-z]{2} [A-Z][a-z]{2}\s+[0-9]+ [0-9:]+ [0-9]{4}\]"
                       r"|^[A-Z][a-z]{2}\s+[0-9]+ [0-9:]+ \S+ kernel:")
_IOMMU_ON = re.compile(
    r"DMAR: IOMMU enabled|DMAR: Intel\(R\) Virtualization Technology for Directed I/O|"
    r"AMD-Vi: (?:Interrupt remapping enabled|Found IOMMU|AMD IOMMUv2 (?:loaded|driver))|"
    r"AMD-Vi: IOMMU performance counters supported|"
    r"iommu: Default domain type: (?:Translated|Passthrough)|Adding to iommu group|"
    r"iommu: Adding device \S+ to group|arm-smmu(?:-v3)? \S+: (?:probing|[0-9]+ context banks)"
)
_IOMMU_OFF = re.compile(r"DMAR: IOMMU disabled|AMD-Vi: (?:AMD )?IOMMU disabled|"
                        r"\b(?:intel_iommu|amd_iommu)=off\b|No IOMMU found|IOMMU not enabled")
_PCIE_LIMITED = re.compile(
    r"(?:(?P<drv>[\w-]+)\s+)?(?P<dev>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]):\s+"
    r"(?P<avail>[0-9.]+) Gb/s available PCIe bandwidth, limited by (?P<lim>.+?) at (?P<at>\S+)"
    r"(?: \(capable of (?P<cap>[0-9.]+) Gb/s with (?P<caplink>.+?)\))?\s*$"
)
_PCIE_OK = re.compile(
    r"(?:(?P<drv>[\w-]+)\s+)?(?P<dev>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]):\s+"
    r"(?P<avail>[0-9.]+) Gb/s available PCIe bandwidth \((?P<link>[^)]+)\)"
)


def parse_linux_dmesg(text: str) -> Facts:
    body = body_lines(text, ("dmesg", "journalctl"))
    on, off, evidence = False, False, []
    passthrough = None
    acpi_table = None  # the firmware's DMAR (Intel VT-d) / IVRS (AMD-Vi) table: the BIOS has the IOMMU on
    limited: list[dict] = []
    links: list[dict] = []
    kernelish = 0
    for ln in body:
        if _DMESG_TS.match(ln) or re.search(r"\b(?:mlx5_core|DMAR|AMD-Vi|iommu|pci)\b", ln):
            kernelish += 1
        if _IOMMU_ON.search(ln):
            on = True
            evidence.append(ln.strip())
        elif _IOMMU_OFF.search(ln):
            off = True
            evidence.append(ln.strip())
        if acpi_table is None and (m := re.search(r"ACPI: (DMAR|IVRS) 0x[0-9A-Fa-f]+", ln)):
            acpi_table = m.group(1)
        if re.search(r"Default domain type: Passthrough|\biommu=pt\b", ln):
            passthrough = True
        elif re.search(r"Default domain type: Translated", ln) and passthrough is None:
            passthrough = False
        m = _PCIE_LIMITED.search(ln)
        if m:
            limited.append({"device": m.group("dev"), "driver": m.group("drv"),
                            "available_gbps": _float(m.group("avail")), "limited_by": m.group("lim"),
                            "limited_at": m.group("at"), "capable_gbps": _float(m.group("cap")),
                            "capable_link": m.group("caplink")})
            continue
        m = _PCIE_OK.search(ln)
        if m:
            links.append({"device": m.group("dev"), "driver": m.group("drv"),
                          "available_gbps": _float(m.group("avail")), "link": m.group("link")})
    if not kernelish:
        raise ParseError("linux_dmesg", "no kernel log line found")
    facts: Facts = {"iommu_enabled": True if on else (False if off else None),
                    "pcie_limited": limited, "lines": len(body)}
    if evidence:
        facts["iommu_evidence"] = evidence[:10]
    if passthrough is not None:
        facts["iommu_passthrough"] = passthrough
    if acpi_table is not None:
        facts["iommu_acpi_table"] = acpi_table
    if links:
        facts["pcie_bandwidth"] = links
    return facts


def sniff_linux_dmesg(text: str) -> int:
    body = body_lines(text, ("dmesg", "journalctl"))
    f = fraction(body, lambda ln: bool(_DMESG_TS.match(ln)))
    return round(80 * f) if f else 0


# ---------------------------------------------------------------------------------------------
# lspci / lspci -nn

_LSPCI = re.compile(
    r"^(?P<pci>(?:[0-9a-fA-F]{4,}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+"
    r"(?P<cls>[^\[\]:]+?)(?:\s+\[(?P<cls_id>[0-9a-fA-F]{4})\])?:\s+"
    r"(?P<desc>.*?)(?:\s+\[(?P<vd>[0-9a-fA-F]{4}:[0-9a-fA-F]{4})\])?"
    r"(?:\s+\(rev\s+(?P<rev>[0-9a-fA-F]+)\))?(?:\s+\(prog-if\s+[^)]*\))?\s*$"
)


def _lspci_device(m: re.Match) -> dict:
    vd = m.group("vd")
    desc = m.group("desc").strip()
    return {"pci": m.group("pci"), "class": m.group("cls").strip(), "class_id": m.group("cls_id"),
            "vendor_device": vd.lower() if vd else None,
            "vendor_id": vd.split(":")[0].lower() if vd else None,
            "device_id": vd.split(":")[1].lower() if vd else None,
            "description": desc, "rev": m.group("rev"),
            "is_vf": "Virtual Function" in desc}


def parse_lspci_list(text: str) -> Facts:
    devices = [_lspci_device(m) for m in (_LSPCI.match(ln) for ln in body_lines(text, ("lspci",))) if m]
    if not devices:
        raise ParseError("lspci_list", "no `<bdf> <class>: <description>` line found")
    return {"devices": devices}


def sniff_lspci_list(text: str) -> int:
    body = body_lines(text, ("lspci",))
    ms = [m for m in (_LSPCI.match(ln) for ln in body) if m]
    if not ms:
        return 0
    f = len(ms) / len(body)
    if any(m.group("vd") and m.group("cls_id") for m in ms):
        return round(90 * f)
    return round(50 * f)


# ---------------------------------------------------------------------------------------------
# lspci -vvv

def _link(value: str) -> dict:
    out: dict = {}
    m = re.search(r"Speed\s+([0-9.]+)GT/s(\s*\(downgraded\))?", value)
    if m:
        out["speed_gts"] = float(m.group(1))
        if m.group(2):
            out["speed_downgraded"] = True
    m = re.search(r"Width\s+x([0-9]+)(\s*\(downgraded\))?", value)
    if m:
        out["width"] = int(m.group(1))
        if m.group(2):
            out["width_downgraded"] = True
    return out


def parse_lspci_vvv(text: str) -> Facts:
    devices: list[dict] = []
    dev: dict | None = None
    in_sriov = False
    for ln in body_lines(text, ("lspci",)):
        if not ln[:1].isspace():
            m = _LSPCI.match(ln)
            if m:
                d = _lspci_device(m)
                dev = {"pci": d["pci"], "description": d["description"], "class": d["class"],
                       "vendor_device": d["vendor_device"], "rev": d["rev"], "sriov": None,
                       "driver": None}
                devices.append(dev)
                in_sriov = False
            continue
        if dev is None:
            continue
        s = ln.strip()
        if s.startswith("Capabilities:"):
            in_sriov = "SR-IOV" in s or "Single Root I/O Virtualization" in s
            if in_sriov:
                dev["sriov"] = {"initial_vfs": None, "total_vfs": None, "number_of_vfs": None,
                                "enabled": None}
            if "<access denied>" in s:
                dev["access_denied"] = True
            continue
        if (m := re.match(r"Subsystem:\s*(.+)$", s)):
            dev["subsystem"] = m.group(1)
        elif (m := re.match(r"NUMA node:\s*([0-9]+)", s)):
            dev["numa_node"] = int(m.group(1))
        elif (m := re.match(r"Kernel driver in use:\s*(\S+)", s)):
            dev["driver"] = m.group(1)
        elif (m := re.match(r"Kernel modules:\s*(.+)$", s)):
            dev["kernel_modules"] = [x.strip() for x in m.group(1).split(",")]
        elif (m := re.match(r"LnkCap:\s*(.+)$", s)):
            dev["link_cap"] = _link(m.group(1))
        elif (m := re.match(r"LnkSta:\s*(.+)$", s)):
            dev["link_status"] = _link(m.group(1))
        elif (m := re.match(r"Product Name:\s*(.+)$", s)):
            dev["product_name"] = m.group(1)
        elif (m := re.match(r"\[PN\] Part number:\s*(\S+)", s)):
            dev["part_number"] = m.group(1)
        elif (m := re.match(r"\[SN\] Serial number:\s*(\S+)", s)):
            dev["serial_number"] = m.group(1)
        elif in_sriov and dev["sriov"] is not None:
            sr = dev["sriov"]
            if (m := re.match(r"IOVCtl:\s*Enable([+-])", s)):
                sr["enabled"] = m.group(1) == "+"
            for key, name in (("Initial VFs", "initial_vfs"), ("Total VFs", "total_vfs"),
                              ("Number of VFs", "number_of_vfs")):
                if (m := re.search(rf"{key}:\s*([0-9]+)", s)):
                    sr[name] = int(m.group(1))
            if (m := re.match(r"VF offset:\s*([0-9]+),\s*stride:\s*([0-9]+),\s*Device ID:\s*(\w+)", s)):
                sr["vf_offset"], sr["vf_stride"], sr["vf_device_id"] = (
                    int(m.group(1)), int(m.group(2)), m.group(3))
    if not devices:
        raise ParseError("lspci_vvv", "no `<bdf> <class>: <description>` device header found")
    facts: Facts = dict(devices[0])
    for k in ("link_cap", "link_status"):
        facts.setdefault(k, None)
    if len(devices) > 1:
        facts["devices"] = devices
    return facts


def sniff_lspci_vvv(text: str) -> int:
    ls = lines(text)
    head = any(_LSPCI.match(ln) for ln in ls)
    detail = sum(1 for ln in ls if re.match(
        r"^\s+(?:Subsystem|Capabilities|LnkCap|LnkSta|Kernel driver in use|Control|Status):", ln))
    if head and detail >= 2:
        return 92
    return 0


# ---------------------------------------------------------------------------------------------
# /proc/sys/kernel/random/boot_id

_UUID = re.compile(r"^\s*([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\s*$")


def parse_boot_id(text: str) -> Facts:
    body = body_lines(text, ("cat",))
    ids = [m.group(1).lower() for m in (_UUID.match(ln) for ln in body) if m]
    if len(ids) != 1 or len(body) != 1:
        n = next((i for i, ln in enumerate(lines(text), 1)
                  if ln.strip() and prompt_command(ln) is None and not _UUID.match(ln)), None)
        raise ParseError("boot_id", "expected exactly one UUID line", n)
    return {"boot_id": ids[0]}


def sniff_boot_id(text: str) -> int:
    body = body_lines(text, ("cat",))
    return 95 if len(body) == 1 and _UUID.match(body[0]) else 0


# ---------------------------------------------------------------------------------------------
# /etc/machine-id (machine-id(5): 32 lowercase hex digits and a newline, one per installation)

_MACHINE_ID = re.compile(r"^\s*([0-9a-fA-F]{32})\s*$")


def parse_machine_id(text: str) -> Facts:
    body = body_lines(text, ("cat",))
    if len(body) != 1 or not _MACHINE_ID.match(body[0]):
        raise ParseError("machine_id", "expected one line of 32 hex digits (machine-id(5))", None)
    return {"machine_id": body[0].strip().lower()}


def sniff_machine_id(text: str) -> int:
    body = body_lines(text, ("cat",))
    return 60 if len(body) == 1 and _MACHINE_ID.match(body[0]) else 0


# ---------------------------------------------------------------------------------------------
# tool presence probe:
#   for t in …; do if command -v "$t" >/dev/null 2>&1; then echo "present $t $(command -v "$t")";
#   else echo "missing $t"; fi; done

_PRESENT = re.compile(r"^present\s+(\S+)\s+(.+?)\s*$")
_MISSING = re.compile(r"^missing\s+(\S+)\s*$")


def parse_tool_presence(text: str) -> Facts:
    present: dict[str, str] = {}
    missing: list[str] = []
    for n, ln in enumerate(lines(text), 1):
        if not ln.strip() or prompt_command(ln) is not None:
            continue
        if (m := _PRESENT.match(ln.strip())):
            present[m.group(1)] = m.group(2)
        elif (m := _MISSING.match(ln.strip())):
            missing.append(m.group(1))
        else:
            raise ParseError("tool_presence", f"not a `present`/`missing` line: {ln.strip()[:60]!r}", n)
    if not present and not missing:
        raise ParseError("tool_presence", "no `present`/`missing` line found")
    return {"present": present, "missing": missing}


def sniff_tool_presence(text: str) -> int:
    body = body_lines(text)
    f = fraction(body, lambda ln: bool(_PRESENT.match(ln.strip()) or _MISSING.match(ln.strip())))
    return round(95 * f) if f else 0


# ---------------------------------------------------------------------------------------------

PARSERS: dict[str, Parser] = {
    "ip_json": Parser("ip_json", parse_ip_json, sniff_ip_json,
                      "ip -j link/addr: interfaces, MTU, state, addresses, VFs"),
    "ip_link_vf": Parser("ip_link_vf", parse_ip_link_vf, sniff_ip_link_vf,
                         "ip [-d] link show (text): interfaces and their VF lines"),
    "ethtool_pause": Parser("ethtool_pause", parse_ethtool_pause, sniff_ethtool_pause,
                            "ethtool -a: global pause settings"),
    "ethtool_stats": Parser("ethtool_stats", parse_ethtool_stats, sniff_ethtool_stats,
                            "ethtool -S: NIC counters"),
    "mlnx_qos": Parser("mlnx_qos", parse_mlnx_qos, sniff_mlnx_qos,
                       "mlnx_qos -i: trust, PFC, dscp2prio, ETS"),
    "linux_dmesg": Parser("linux_dmesg", parse_linux_dmesg, sniff_linux_dmesg,
                          "dmesg: IOMMU state and PCIe bandwidth limits"),
    "lspci_list": Parser("lspci_list", parse_lspci_list, sniff_lspci_list, "lspci [-nn]: PCI devices"),
    "lspci_vvv": Parser("lspci_vvv", parse_lspci_vvv, sniff_lspci_vvv,
                        "lspci -vvv -s: SR-IOV capability, PCIe link, driver"),
    "boot_id": Parser("boot_id", parse_boot_id, sniff_boot_id, "/proc/sys/kernel/random/boot_id"),
    "machine_id": Parser("machine_id", parse_machine_id, sniff_machine_id, "/etc/machine-id: the installation's id"),
    "tool_presence": Parser("tool_presence", parse_tool_presence, sniff_tool_presence,
                            "`command -v` probe: present/missing tools"),
}
