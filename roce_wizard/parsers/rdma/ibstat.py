"""`ibstat` and `ibstatus` (infiniband-diags)."""

from __future__ import annotations

import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    body_lines,
    lines,
    to_int,
)
from roce_wizard.parsers.rdma.common import _name_and_num, _num

# ---------------------------------------------------------------------------------------------
# ibstat (infiniband-diags)

_IBSTAT_DEV_KEYS = {
    "ca type": "ca_type", "number of ports": "num_ports", "firmware version": "fw_ver",
    "hardware version": "hw_ver", "node guid": "node_guid", "system image guid": "sys_image_guid",
}
_IBSTAT_PORT_KEYS = {
    "state": "state", "physical state": "physical_state", "rate": "rate", "base lid": "base_lid",
    "lmc": "lmc", "sm lid": "sm_lid", "capability mask": "capability_mask", "port guid": "port_guid",
    "link layer": "link_layer",
}


def parse_ibstat(text: str) -> Facts:
    devices: list[dict] = []
    dev: dict | None = None
    port: dict | None = None
    for ln in body_lines(text, ("ibstat",)):
        m = re.match(r"^\s*CA:?\s+'([^']+)'", ln)
        if m:
            dev = {"hca_id": m.group(1), "ports": []}
            devices.append(dev)
            port = None
            continue
        m = re.match(r"^\s*Port\s+([0-9]+):\s*$", ln)
        if m:
            if dev is None:
                dev = {"hca_id": None, "ports": []}
                devices.append(dev)
            port = {"port": int(m.group(1))}
            dev["ports"].append(port)
            continue
        m = re.match(r"^\s*([A-Za-z][A-Za-z ]*?)\s*:\s*(.*)$", ln)
        if not m or dev is None:
            continue
        key, value = m.group(1).lower(), m.group(2).strip()
        if port is not None and key in _IBSTAT_PORT_KEYS:
            port[_IBSTAT_PORT_KEYS[key]] = value
        elif port is None and key in _IBSTAT_DEV_KEYS:
            dev[_IBSTAT_DEV_KEYS[key]] = value
    if not devices:
        raise ParseError("ibstat", "no `CA '<name>'` block found")
    for d in devices:
        if "num_ports" in d:
            d["num_ports"] = to_int(d["num_ports"])
        for p in d["ports"]:
            p["rate"] = _num(p.get("rate"))
            for k in ("base_lid", "lmc", "sm_lid"):
                if k in p:
                    p[k] = to_int(p[k])
            for k in ("state", "physical_state", "link_layer"):
                p.setdefault(k, None)
    return {"devices": devices}


def sniff_ibstat(text: str) -> int:
    ls = lines(text)
    ca = any(re.match(r"^\s*CA:?\s+'[^']+'", ln) for ln in ls)
    detail = any(re.match(r"^\s*(?:CA type|Port [0-9]+|Physical state|Link layer):", ln) for ln in ls)
    if ca and detail:
        return 95
    return 60 if ca else 0


# ---------------------------------------------------------------------------------------------
# ibstatus (the infiniband-diags script)

_IBSTATUS_HEAD = re.compile(r"^\s*Infiniband device '([^']+)' port ([0-9]+) status:")


def parse_ibstatus(text: str) -> Facts:
    devices: dict[str, dict] = {}
    port: dict | None = None
    for ln in body_lines(text, ("ibstatus",)):
        m = _IBSTATUS_HEAD.match(ln)
        if m:
            dev = devices.setdefault(m.group(1), {"hca_id": m.group(1), "ports": []})
            port = {"port": int(m.group(2))}
            dev["ports"].append(port)
            continue
        m = re.match(r"^\s*([a-z_ ]+?):\s*(.*)$", ln)
        if not m or port is None:
            continue
        key, value = m.group(1).strip().replace(" ", "_"), m.group(2).strip()
        if key == "state":
            port["state"], port["state_num"] = _name_and_num(value)
        elif key == "phys_state":
            port["physical_state"], port["physical_state_num"] = _name_and_num(value)
        elif key == "rate":
            r = re.match(r"([0-9.]+)\s*Gb/sec", value)
            port["rate"] = _num(r.group(1)) if r else None
            port["rate_text"] = value
        elif key in ("base_lid", "sm_lid"):
            port[key] = to_int(value)
        elif key == "default_gid":
            port["default_gid"] = value
        elif key == "link_layer":
            port["link_layer"] = value or None
    if not devices:
        raise ParseError("ibstatus", "no `Infiniband device '<dev>' port <n> status:` block found")
    for d in devices.values():
        for p in d["ports"]:
            for k in ("state", "physical_state", "rate", "link_layer"):
                p.setdefault(k, None)
    return {"devices": list(devices.values())}


def sniff_ibstatus(text: str) -> int:
    return 95 if any(_IBSTATUS_HEAD.match(ln) for ln in lines(text)) else 0
