"""`ibv_devinfo [-v]` (rdma-core verbs)."""

from __future__ import annotations

import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    is_elision,
    lines,
    prompt_command,
    to_int,
)
from roce_wizard.parsers.rdma.common import _HTML_TAG, _first_int, _gid_facts, _name_and_num, _numbered, _ver_of

# ---------------------------------------------------------------------------------------------
# ibv_devinfo

_DEV_KEYS = {
    "transport", "fw_ver", "node_guid", "sys_image_guid", "vendor_id", "vendor_part_id",
    "hw_ver", "board_id", "phys_port_cnt",
}
# Values that are one token by format; a copy that split them (PDF extraction) cannot be read.
_ONE_TOKEN = {"fw_ver", "node_guid", "sys_image_guid", "vendor_id", "vendor_part_id", "hw_ver",
              "board_id", "phys_port_cnt"}
_PORT_KEYS = {
    "state", "max_mtu", "active_mtu", "sm_lid", "port_lid", "port_lmc", "link_layer", "phys_state",
    "active_width", "active_speed", "gid_tbl_len", "max_msg_sz", "port_cap_flags", "sm_sl",
}
_KV = re.compile(r"^\s*([A-Za-z_][\w ]*?)\s*:\s*(.*)$")
_GID_LINE = re.compile(r"^\s*GID\[\s*([0-9]+)\]:\s*(\S+?)\s*(?:,\s*(.+?))?\s*$")


def parse_ibv_devinfo(text: str) -> Facts:
    devices: list[dict] = []
    hca_list: list[str] = []
    warnings: list[str] = []
    dev: dict | None = None
    port: dict | None = None
    in_list = False
    no_devices = False
    errors: list[str] = []
    loose: list[dict] = []  # port lines of a grep-filtered output, device unknown
    for n, raw in _numbered(text):
        ln = _HTML_TAG.sub("", raw).rstrip()
        if not ln.strip() or is_elision(ln) or prompt_command(ln) is not None:
            in_list = False
            continue
        if re.match(r"^\s*[0-9]+\s+HCAs?\s+found:", ln):
            in_list = True
            continue
        if in_list:
            m = re.fullmatch(r"\s+(\S+)", ln)
            if m:
                hca_list.append(m.group(1))
                continue
            in_list = False
        if re.search(r"No IB devices found", ln):
            no_devices = True
            continue
        if re.match(r"^\s*Failed to (?:get|open)", ln):
            errors.append(ln.strip())
            continue
        m = re.match(r"^\s*hca_id:\s*(\S+)", ln)
        if m:
            dev = {"hca_id": m.group(1), "ports": []}
            # a device printed twice (two runs pasted): the later block is the current state
            devices[:] = [d for d in devices if d["hca_id"] != dev["hca_id"]]
            devices.append(dev)
            port = None
            continue
        if dev is None:
            # `ibv_devinfo | grep -E 'state|mtu'`: port lines with no `hca_id:` above them
            m = _KV.match(ln)
            key = m.group(1).strip().lower().replace(" ", "_") if m else ""
            if key in _PORT_KEYS:
                if not loose or key in loose[-1]:
                    loose.append({"port": None, "gids": []})
                loose[-1][key] = re.sub(r"\s+", " ", m.group(2).strip())
            continue
        m = re.match(r"^\s*port:\s*([0-9]+)\s*$", ln)
        if m:
            port = {"port": int(m.group(1)), "gids": []}
            dev["ports"].append(port)
            continue
        m = _GID_LINE.match(ln)
        if m and port is not None:
            gid = {"index": int(m.group(1)), "gid": m.group(2)}
            if m.group(3):
                gid["type"] = m.group(3)
                gid["ver"] = _ver_of(m.group(3))
            gid.update(_gid_facts(m.group(2)))
            port["gids"].append(gid)
            continue
        m = _KV.match(ln)
        if not m:
            continue
        key = m.group(1).strip().lower().replace(" ", "_")
        value = re.sub(r"\s+", " ", m.group(2).strip())
        if port is not None and key in _PORT_KEYS:
            port[key] = value
        elif port is None and key in _DEV_KEYS:
            if key in _ONE_TOKEN and " " in value:
                warnings.append(f"line {n}: {key} value {value!r} is split; not read")
                dev[key] = None
            else:
                dev[key] = value or None
    if not devices and not hca_list and not no_devices and not errors and loose:
        # which device (and port) each line belongs to is not in the paste: the ports are reported, unattributed,
        # and marked partial so no check judges them as the host's whole device list
        ports = _ibv_device({"hca_id": None, "ports": loose}, warnings)["ports"]
        return {"devices": [], "ports_unattributed": ports, "header": False, "partial": True}
    if not devices and not hca_list and not no_devices and not errors:
        raise ParseError("ibv_devinfo", "no `hca_id:` block, device list or ibv_devinfo message found")
    devices = [_ibv_device(d, warnings) for d in devices]
    facts: Facts = {"devices": devices}
    if hca_list:
        facts["hca_list"] = hca_list
    if no_devices:
        facts["no_devices"] = True
    if errors:
        facts["errors"] = errors
    if warnings:
        facts["warnings"] = warnings
    return facts


def _ibv_device(d: dict, warnings: list[str]) -> dict:
    """Raw key/values of one `hca_id:` block -> facts, in a stable key order."""
    transport, transport_num = None, None
    raw = d.get("transport")
    if raw:
        m = re.fullmatch(r"(\S+)(?: \(([0-9]+)\))?", raw)
        if m:
            transport, transport_num = m.group(1), to_int(m.group(2))
        else:
            warnings.append(f"{d['hca_id']}: transport value {raw!r} not read")
    out = {"hca_id": d["hca_id"], "transport": transport, "transport_num": transport_num}
    for k in ("fw_ver", "node_guid", "sys_image_guid", "vendor_id"):
        out[k] = d.get(k)
    out["vendor_part_id"] = to_int(d.get("vendor_part_id"))
    out["hw_ver"] = d.get("hw_ver")
    out["board_id"] = d.get("board_id")
    out["phys_port_cnt"] = to_int(d.get("phys_port_cnt"))
    out["ports"] = []
    for p in d["ports"]:
        state, state_num = _name_and_num(p.get("state", ""))
        phys, phys_num = _name_and_num(p.get("phys_state", ""))
        port = {"port": p["port"], "state": state, "state_num": state_num,
                "phys_state": phys, "phys_state_num": phys_num,
                "max_mtu": _first_int(p.get("max_mtu")), "active_mtu": _first_int(p.get("active_mtu")),
                "link_layer": p.get("link_layer") or None,
                "sm_lid": to_int(p.get("sm_lid")), "port_lid": to_int(p.get("port_lid"))}
        for k in ("port_lmc", "active_width", "active_speed", "port_cap_flags", "max_msg_sz"):
            if k in p:
                port[k] = p[k]
        for k in ("gid_tbl_len", "sm_sl"):
            if k in p:
                port[k] = to_int(p[k])
        port["gids"] = p["gids"]
        out["ports"].append(port)
    return out


def sniff_ibv_devinfo(text: str) -> int:
    ls = lines(text)
    has_hca = any(re.match(r"^\s*hca_id:\s*\S+", ln) for ln in ls)
    if has_hca and any(re.match(r"^\s*(?:transport|fw_ver|port):", ln) for ln in ls):
        return 95
    if has_hca:
        return 70
    if any(re.match(r"^\s*[0-9]+\s+HCAs?\s+found:", ln) for ln in ls):
        return 70
    if any("No IB devices found" in ln for ln in ls):
        return 50
    return 0
