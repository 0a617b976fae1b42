"""lspci / lspci -nn (device list) and lspci -vvv."""

from __future__ import annotations

import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    body_lines,
    lines,
)
from roce_wizard.parsers.unwrap import per_host

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


def _lspci_vvv_one(text: str) -> Facts:
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


parse_lspci_vvv = per_host(_lspci_vvv_one)


def sniff_lspci_vvv(text: str) -> int:
    ls = lines(text)
    head = any(_LSPCI.match(ln) for ln in ls)
    detail = sum(1 for ln in ls if re.match(
        r"^\s+(?:Subsystem|Capabilities|LnkCap|LnkSta|Kernel driver in use|Control|Status):", ln))
    if head and detail >= 2:
        return 92
    return 0
