"""`ucx_info -d`: the transports and devices UCX sees."""

from __future__ import annotations

import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    is_elision,
    lines,
    to_int,
)
from roce_wizard.parsers.rdma.common import _first_int, _num

# ---------------------------------------------------------------------------------------------
# ucx_info -d

_SIZE_UNITS = {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}


def _size(value: str) -> int | None:
    m = re.search(r"([0-9]+)\s*([KMG]?)\b", value)
    return int(m.group(1)) * _SIZE_UNITS[m.group(2)] if m else None


def parse_ucx_info(text: str) -> Facts:
    domains: list[dict] = []
    devices: list[dict] = []
    md: dict | None = None
    dev: dict | None = None
    for ln in lines(text):
        s = re.sub(r"^\s*#", "", ln).strip()
        if not s or is_elision(s):
            continue
        m = re.match(r"^Memory domain:\s*(\S+)", s)
        if m:
            md = {"name": m.group(1), "component": None, "unsupported": False}
            domains.append(md)
            dev = None
            continue
        m = re.match(r"^Component:\s*(\S+)", s)
        if m and md is not None:
            md["component"] = m.group(1)
            continue
        if re.match(r"^<\s*no supported devices found\s*>$", s):
            if md is not None:
                md["unsupported"] = True
            dev = None
            continue
        m = re.match(r"^Transport:\s*(\S+)", s)
        if m:
            dev = {"transport": m.group(1), "device": None,
                   "memory_domain": md["name"] if md else None, "caps": {}}
            devices.append(dev)
            continue
        if dev is None:
            continue
        m = re.match(r"^([A-Za-z_][\w ]*?):\s*(.*)$", s)
        if not m:
            continue
        key, value = m.group(1).strip(), m.group(2).strip()
        if key == "Device":
            dev["device"] = value
            d = re.fullmatch(r"(\S+):([0-9]+)", value)
            if d:
                dev["ib_device"], dev["port"] = d.group(1), int(d.group(2))
        elif key == "System device":
            d = re.match(r"(\S+)(?:\s*\(([0-9]+)\))?", value)
            dev["system_device"] = d.group(1) if d else value
        elif key == "Type":
            dev["type"] = value
        elif key != "capabilities":
            dev["caps"][key] = value
    if not domains and not devices:
        raise ParseError("ucx_info", "no `Memory domain:` or `Transport:` section found")
    for d in devices:
        caps = d["caps"]
        bw = caps.get("bandwidth")
        if bw:
            m = re.match(r"([0-9.]+)/ppn\s*\+\s*([0-9.]+)\s*MB/sec", bw)
            if m:
                d["bandwidth_mbs"] = float(m.group(1)) + float(m.group(2))
            else:
                m = re.match(r"([0-9.]+)\s*MB/sec", bw)
                d["bandwidth_mbs"] = float(m.group(1)) if m else None
            d["bandwidth"] = bw
        lat = caps.get("latency")
        if lat:
            m = re.match(r"([0-9.]+)", lat)
            d["latency_ns"] = _num(m.group(1)) if m else None
            d["latency"] = lat
        if "device priority" in caps:
            d["priority"] = to_int(caps["device priority"])
        for k in ("am_align_mtu", "put_align_mtu", "get_align_mtu"):
            if k in caps:
                d["align_mtu"] = _size(caps[k])
                break
        if "device address" in caps:
            d["device_address_bytes"] = _first_int(caps["device address"])
    return {"devices": devices,
            "unsupported": [m["name"] for m in domains if m["unsupported"]],
            "memory_domains": domains}


def sniff_ucx_info(text: str) -> int:
    ls = [re.sub(r"^\s*#", "", ln).strip() for ln in lines(text)]
    md = any(ln.startswith("Memory domain:") for ln in ls)
    tr = any(ln.startswith("Transport:") for ln in ls)
    if md and tr:
        return 95
    if md or (tr and any(ln.startswith("Device:") for ln in ls)):
        return 70
    return 0
