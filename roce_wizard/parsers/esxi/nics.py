"""esxcli network nic list / esxcli network sriovnic list [vf list -n vmnicN] / esxcfg-nics -l."""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    is_elision,
    is_prompt,
    lines,
)
from roce_wizard.parsers.esxi.tables import _blank_none, _bool_or_none, _has_header, _int_or_none, _records

# ---------------------------------------------------------------------------------------------
# esxcli network nic list / esxcli network sriovnic list / esxcfg-nics -l


def _nic_from_record(r: dict[str, str]) -> dict[str, Any]:
    link = r.get("linkstatus", r.get("link"))
    return {
        "name": _blank_none(r.get("name")),
        "pci": _blank_none(r.get("pcidevice", r.get("pci"))),
        "driver": _blank_none(r.get("driver")),
        "admin": _blank_none(r.get("adminstatus")),
        "link": _blank_none(link),
        "speed_mbps": _int_or_none(r.get("speed")),
        "duplex": _blank_none(r.get("duplex")),
        "mac": _blank_none(r.get("macaddress")),
        "mtu": _int_or_none(r.get("mtu")),
        "description": _blank_none(r.get("description")),
    }


def _grep_rows(text: str, row_re: re.Pattern[str]) -> tuple[list[re.Match[str]], int]:
    """Rows of a table pasted without its header (`esxcli … | grep vmnic`): the matching lines, and how many
    output lines there were (prompts, blanks and elisions left out)."""
    body = [ln for ln in lines(text) if ln.strip() and not is_prompt(ln) and not is_elision(ln)]
    return [m for m in (row_re.match(ln) for ln in body) if m], len(body)


# `esxcli network nic list` row: name, PCI, driver, admin, link, speed, duplex, MAC, MTU, description
_NIC_ROW_RE = re.compile(
    r"^\s*(?P<name>\S+)\s+(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]|Pseudo)\s+(?P<driver>\S+)\s+"
    r"(?P<admin>Up|Down)\s+(?P<link>Up|Down)\s+(?P<speed>[0-9]+)\s+(?P<duplex>Full|Half)\s+"
    r"(?P<mac>(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2})\s+(?P<mtu>[0-9]+)\s*(?P<description>.*?)\s*$"
)


def parse_esxi_nic_list(text: str) -> Facts:
    rows, found = _records(text, ("Name", "PCI Device", "Driver", "MAC Address", "MTU"))
    if not found:
        matches, _ = _grep_rows(text, _NIC_ROW_RE)
        if not matches:
            raise ParseError("esxi_nic_list", "no `Name  PCI Device  Driver ... MTU` table (or csv) found")
        # header-less (grep-filtered): the rows are read by their shape; NICs the filter dropped are unknown
        return {"nics": [_nic_from_record({**m.groupdict(), "pcidevice": m["pci"], "linkstatus": m["link"],
                                           "adminstatus": m["admin"], "macaddress": m["mac"]})
                         for m in matches], "header": False}
    return {"nics": [_nic_from_record(r) for r in rows if r.get("name")]}


def sniff_esxi_nic_list(text: str) -> int:
    if _has_header(text, ("Name", "PCI Device", "Driver", "Admin Status", "Link Status", "MAC Address")):
        return 90
    matches, total = _grep_rows(text, _NIC_ROW_RE)
    return round(60 * len(matches) / total) if matches else 0


def parse_esxi_sriovnic_list(text: str) -> Facts:
    rows, found = _records(text, ("Name", "PCI Device", "Driver", "MAC Address"))
    if not found:
        raise ParseError("esxi_sriovnic_list", "no `Name  PCI Device  Driver  Link ...` table (or csv) found")
    return {"nics": [_nic_from_record(r) for r in rows if r.get("name")]}


def sniff_esxi_sriovnic_list(text: str) -> int:
    if _has_header(text, ("Name", "PCI Device", "Driver", "Link", "MAC Address"), ("Admin Status", "Link Status")):
        return 85
    return 0


_ESXCFG_HEADER_RE = re.compile(r"^\s*Name\s+PCI\s+Driver\s+Link\s+Speed\s+Duplex\s+MAC Address\s+MTU\s+Description\s*$")
_ESXCFG_ROW_RE = re.compile(
    r"^\s*(?P<name>\S+)\s+(?P<pci>\S+)\s+(?P<driver>\S+)\s+(?P<link>Up|Down)\s+"
    r"(?P<speed>[0-9]+)(?:Mbps)?\s+(?P<duplex>Full|Half|\S+)\s+(?P<mac>(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2})\s+"
    r"(?P<mtu>[0-9]+)\s+(?P<desc>.*?)\s*$"
)


def parse_esxi_esxcfg_nics(text: str) -> Facts:
    nics = []
    header = False
    for raw in lines(text):
        if _ESXCFG_HEADER_RE.match(raw):
            header = True
            continue
        m = _ESXCFG_ROW_RE.match(raw)
        if not m or is_prompt(raw):
            continue
        nics.append({
            "name": m["name"],
            "pci": m["pci"],
            "driver": m["driver"],
            "admin": None,  # esxcfg-nics prints no admin status
            "link": m["link"],
            "speed_mbps": int(m["speed"]),
            "duplex": m["duplex"],
            "mac": m["mac"],
            "mtu": int(m["mtu"]),
            "description": m["desc"] or None,
        })
    if not nics and not header:
        raise ParseError("esxi_esxcfg_nics", "no `esxcfg-nics -l` header or rows found")
    return {"nics": nics}


def sniff_esxi_esxcfg_nics(text: str) -> int:
    if any(_ESXCFG_HEADER_RE.match(ln) for ln in lines(text)):
        return 90
    if any(re.match(r"^\s*vmnic[0-9]+\s", ln) and re.search(r"\s[0-9]+Mbps\s", ln) for ln in lines(text)):
        return 50
    return 0


# ---------------------------------------------------------------------------------------------
# esxcli network sriovnic vf list -n vmnicN


def parse_esxi_sriovnic_vf_list(text: str) -> Facts:
    rows, found = _records(text, ("VF ID", "Active", "PCI Address"))
    if not found:
        raise ParseError("esxi_sriovnic_vf_list", "no `VF ID  Active  PCI Address  Owner World ID` table found")
    vfs = []
    for r in rows:
        vf_id = _int_or_none(r.get("vfid"))
        if vf_id is None:
            continue
        vfs.append({
            "vf_id": vf_id,
            "active": _bool_or_none(r.get("active")),
            "pci": _blank_none(r.get("pciaddress")),
            "owner_world_id": _int_or_none(_blank_none(r.get("ownerworldid"))),
        })
    nic = None
    m = re.search(r"sriovnic\s+vf\s+list\b.*?(?:-n\s*|--nic-name[= ])(\S+)", text)
    if m:
        nic = m.group(1)
    return {"nic": nic, "vfs": vfs}


def sniff_esxi_sriovnic_vf_list(text: str) -> int:
    return 95 if _has_header(text, ("VF ID", "Active", "PCI Address")) else 0
