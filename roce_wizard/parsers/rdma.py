"""RDMA-stack tools: verbs, MLNX_OFED scripts, iproute2 `rdma`, infiniband-diags, UCX.

Kinds: ibv_devinfo, show_gids, ibdev2netdev, rdma_link, ibstat, ibstatus, cma_roce_mode,
roce_tc_sysfs, ofed_info, hw_counters, rdma_statistic, ucx_info.

Every parser reads the text a person pastes: prompts and command lines are used only as context
(which device a `cat` read, which interface), never as data; `...` elisions are skipped. Sniffer
scores: ~95 for a tool's own signature (a header or a line only that tool prints), lower and
proportional to the share of matching lines for formats that are only line-shaped.
"""

from __future__ import annotations

import ipaddress
import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    Parser,
    body_lines,
    fraction,
    is_bare_command,
    is_digits,
    is_elision,
    lines,
    prompt_command,
    to_int,
)
from roce_wizard.parsers import sysfs_rdma

# ---------------------------------------------------------------------------------------------
# helpers

_HTML_TAG = re.compile(r"</?(?:pre|code|b|i|br|span|tt)\s*/?>", re.I)


def _numbered(text: str) -> list[tuple[int, str]]:
    return list(enumerate(lines(text), start=1))


def _num(value: str | None) -> int | float | None:
    """`25` -> 25, `2.5` -> 2.5, anything else -> None."""
    if value is None:
        return None
    m = re.fullmatch(r"\s*(-?[0-9]+(?:\.[0-9]+)?)\s*", value)
    if not m:
        return None
    f = float(m.group(1))
    return int(f) if f.is_integer() and "." not in m.group(1) else f


def _first_int(value: str | None) -> int | None:
    if value is None:
        return None
    m = re.match(r"\s*(-?[0-9]+)\b", value)
    return int(m.group(1)) if m else None


def _name_and_num(value: str) -> tuple[str | None, int | None]:
    """`PORT_ACTIVE (4)` -> ("PORT_ACTIVE", 4); `4: ACTIVE` -> ("ACTIVE", 4)."""
    v = value.strip()
    m = re.fullmatch(r"(\S+)\s*\(([0-9]+)\)", v)
    if m:
        return m.group(1), int(m.group(2))
    m = re.fullmatch(r"([0-9]+)\s*:\s*(\S+)", v)
    if m:
        return m.group(2), int(m.group(1))
    return (v or None), None


def _gid_facts(gid: str) -> dict:
    """The exploded form of a GID and the IPv4 address it carries when it is IPv4-mapped."""
    out: dict = {"gid_full": None, "ipv4": None}
    try:
        addr = ipaddress.IPv6Address(gid)
    except ValueError:
        return out
    out["gid_full"] = addr.exploded
    if addr.ipv4_mapped is not None:
        out["ipv4"] = str(addr.ipv4_mapped)
    return out


def _ver_of(gid_type: str | None) -> str | None:
    if not gid_type:
        return None
    m = re.search(r"\b[vV]([0-9])\b", gid_type)
    return f"v{m.group(1)}" if m else None


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


# ---------------------------------------------------------------------------------------------
# show_gids

_SG_HEADER = re.compile(r"^\s*DEV\s+PORT\s+INDEX\s+GID\b")
_SG_FOOTER = re.compile(r"n_gids_+found=([0-9]+)")
_IPV4 = re.compile(r"^[0-9]{1,3}(?:\.[0-9]{1,3}){3}$")
_GIDISH = re.compile(r"^[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7}(?::[0-9]{1,3}(?:\.[0-9]{1,3}){3})?$")


def _show_gids_row(ln: str) -> dict | None:
    tok = ln.split()
    if len(tok) < 4 or not is_digits(tok[1]) or not is_digits(tok[2]) or not _GIDISH.match(tok[3]):
        return None
    row = {"dev": tok[0], "port": int(tok[1]), "index": int(tok[2]), "gid": tok[3],
           "ipv4": None, "ver": None, "netdev": None}
    rest = tok[4:]
    if rest and _IPV4.match(rest[0]):
        row["ipv4"] = rest.pop(0)
    if rest and re.fullmatch(r"[vV][0-9]", rest[0]):
        row["ver"] = rest.pop(0).lower()
    if rest:
        row["netdev"] = rest.pop(0)
    if rest:  # more columns than show_gids prints: not a row of it
        return None
    return row


def parse_show_gids(text: str) -> Facts:
    if sysfs_rdma.is_sysfs_gids(text):  # inbox rdma-core: the same facts read from sysfs
        return sysfs_rdma.parse_sysfs_gids(text)
    gids: list[dict] = []
    header = False
    n_found: int | None = None
    for ln in lines(text):
        if not ln.strip() or is_elision(ln) or prompt_command(ln) is not None:
            continue
        if _SG_HEADER.match(ln):
            header = True
            continue
        if re.fullmatch(r"[\s-]+", ln):
            continue
        m = _SG_FOOTER.search(re.sub(r"\s+", "", ln))
        if m:
            n_found = int(m.group(1))
            continue
        row = _show_gids_row(ln)
        if row:
            gids.append(row)
    if not gids and not header and n_found is None:
        raise ParseError("show_gids", "no show_gids header, GID row or n_gids_found footer found")
    facts: Facts = {"gids": gids}
    if n_found is not None:
        facts["n_gids_found"] = n_found
    return facts


def sniff_show_gids(text: str) -> int:
    if sysfs_rdma.is_sysfs_gids(text):
        return 90
    ls = lines(text)
    if any(_SG_HEADER.match(ln) for ln in ls):
        return 95
    if any(_SG_FOOTER.search(re.sub(r"\s+", "", ln)) for ln in ls):
        return 90
    body = body_lines(text, ("show_gids",))
    return round(70 * fraction(body, lambda ln: _show_gids_row(ln) is not None))


# ---------------------------------------------------------------------------------------------
# ibdev2netdev

_I2N_VERBOSE = re.compile(
    r"^\s*(?P<pci>[0-9a-fA-F]{4,}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])?\s*(?P<dev>\S+)\s+"
    r"\((?P<devid>[^)]*?)\s+-\s+(?P<partid>[^)]*?)\)\s*(?P<desc>.*?)\s*\bfw\s+(?P<fw>\S+)\s+"
    r"port\s+(?P<port>[0-9]+)\s+\((?P<pstate>[^)]*)\)\s+==>\s+(?P<netdev>\S*)\s*\((?P<state>[^)]*)\)\s*$"
)
# `| column -t` widens the gaps; an author's `# note` after the state is not the tool's
_I2N_PLAIN = re.compile(
    r"^\s*(?P<dev>\S+)\s+port\s+(?P<port>[0-9]+)\s+==>\s+(?P<netdev>\S+)\s+\((?P<state>[^)]*)\)\s*(?:#.*)?$"
)
_I2N_OLD = re.compile(r"^\s*(?P<dev>\S+)\s+port\s+(?P<port>[0-9]+)\s+<===>\s+(?P<netdev>\S+)\s*$")


def _netdev_or_none(name: str | None) -> str | None:
    return None if not name or name in ("N/A", "NA") else name


def parse_ibdev2netdev(text: str) -> Facts:
    links: list[dict] = []
    for ln in body_lines(text, ("ibdev2netdev",)):
        m = _I2N_VERBOSE.match(ln)
        if m:
            desc = m.group("desc").strip()
            links.append({
                "dev": m.group("dev"), "port": int(m.group("port")),
                "netdev": _netdev_or_none(m.group("netdev")),
                "state": m.group("state").strip() or None,
                "pci": m.group("pci"),
                "description": desc or None,
                "device_id": m.group("devid").strip() or None,
                "part_id": m.group("partid").strip() or None,
                "fw_ver": m.group("fw"),
                "port_state": m.group("pstate").strip() or None,
            })
            continue
        m = _I2N_PLAIN.match(ln)
        if m:
            links.append({"dev": m.group("dev"), "port": int(m.group("port")),
                          "netdev": _netdev_or_none(m.group("netdev")),
                          "state": m.group("state").strip() or None})
            continue
        m = _I2N_OLD.match(ln)
        if m:
            links.append({"dev": m.group("dev"), "port": int(m.group("port")),
                          "netdev": _netdev_or_none(m.group("netdev")), "state": None})
    if not links and any(ln.strip() for ln in body_lines(text, ("ibdev2netdev",))):
        raise ParseError("ibdev2netdev", "no `<dev> port <n> ==> <netdev> (<state>)` line found")
    return {"links": links}  # empty output: no RDMA device


def _is_i2n(ln: str) -> bool:
    return bool(_I2N_VERBOSE.match(ln) or _I2N_PLAIN.match(ln) or _I2N_OLD.match(ln))


def sniff_ibdev2netdev(text: str) -> int:
    body = body_lines(text, ("ibdev2netdev",))
    f = fraction(body, _is_i2n)
    return round(90 * f) if f else 0


# ---------------------------------------------------------------------------------------------
# rdma link show

_RL_LINE = re.compile(
    r"^\s*(?:(?P<idx>[0-9]+)/(?P<iport>[0-9]+):\s+)?(?:link\s+)?(?P<dev>[^\s/:]+)/(?P<port>[0-9]+):?\s+(?P<rest>.*)$"
)
_RL_KEYS = {"state", "physical_state", "netdev", "netdev_index", "subnet_prefix", "lid", "sm_lid",
            "lmc", "type", "parent"}


def _rdma_link_line(ln: str) -> dict | None:
    m = _RL_LINE.match(ln)
    if not m:
        return None
    tok = m.group("rest").split()
    attrs: dict = {}
    i = 0
    while i < len(tok):
        if tok[i] in _RL_KEYS and i + 1 < len(tok):
            attrs[tok[i]] = tok[i + 1]
            i += 2
        else:
            i += 1
    if "state" not in attrs and "physical_state" not in attrs:
        return None
    link = {"dev": m.group("dev"), "port": int(m.group("port")),
            "state": attrs.get("state"), "physical_state": attrs.get("physical_state"),
            "netdev": attrs.get("netdev")}
    if m.group("idx"):
        link["index"] = int(m.group("idx"))
    for k in ("netdev_index", "lid", "sm_lid", "lmc"):
        if k in attrs:
            link[k] = to_int(attrs[k])
    if "subnet_prefix" in attrs:
        link["subnet_prefix"] = attrs["subnet_prefix"]
    return link


def parse_rdma_link(text: str) -> Facts:
    body = body_lines(text, ("rdma",))
    links = [lk for lk in (_rdma_link_line(ln) for ln in body) if lk]
    if not links and any(ln.strip() for ln in body):
        raise ParseError("rdma_link", "no `link <dev>/<port> state …` line found")
    # empty output is what `rdma link show` prints on a host without RDMA devices
    return {"links": links}


def sniff_rdma_link(text: str) -> int:
    body = body_lines(text, ("rdma",))
    f = fraction(body, lambda ln: _rdma_link_line(ln) is not None)
    return round(90 * f) if f else 0


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


# ---------------------------------------------------------------------------------------------
# cma_roce_mode (MLNX_OFED script: prints the content of configfs default_roce_mode)

_CMA_MODE = re.compile(r"^\s*(IB/RoCE v1|RoCE v2|RoCE v1)\s*$")
_CMA_ERRORS = re.compile(
    r"^\s*(You must be root to run this|Failed to .*|Module rdma_cm is not loaded.*|"
    r"Device \S+ port \S+ does not exist)\s*$"
)


def _cma_args(cmd: str) -> dict:
    # the script's own defaults (mlnx-tools sbin/cma_roce_mode: DEVICE=mlx5_0, PORT=1): a command line
    # without -d/-p still says which device and port it read
    out: dict = {"device": "mlx5_0", "port": 1}
    for flag, key in (("-d", "device"), ("-p", "port"), ("-m", "set_mode")):
        m = re.search(rf"(?:^|\s){flag}\s*(\S+)", cmd)
        if m:
            out[key] = to_int(m.group(1)) if key != "device" else m.group(1)
    return out


_CMA_CONFIGFS = re.compile(r"/rdma_cm/([^/\s]+)/ports/([0-9]+)/default_roce_mode\b")


def _cma_context(cmd: str) -> dict:
    """Which device/port a command reads: `cma_roce_mode -d D -p P` (without -d/-p the script prints only
    the mode, for its defaults mlx5_0 and port 1), or `cat /sys/kernel/config/rdma_cm/D/ports/P/default_roce_mode`
    (the file cma_roce_mode itself reads). No command line: unknown."""
    m = _CMA_CONFIGFS.search(cmd)
    if m:
        return {"device": m.group(1), "port": to_int(m.group(2))}
    return _cma_args(cmd) if "cma_roce_mode" in cmd else {}


def parse_cma_roce_mode(text: str) -> Facts:
    if sysfs_rdma.is_configfs_mode(text):  # inbox rdma-core: rdma_cm's configfs file itself
        return sysfs_rdma.parse_configfs_roce_mode(text)
    reads: list[dict] = []
    errors: list[str] = []
    ctx: dict = {}
    answered = True  # whether the last command line got its answer
    for ln in lines(text):
        cmd = prompt_command(ln)
        if cmd is None and (is_bare_command(ln, ("cma_roce_mode",)) or _CMA_CONFIGFS.search(ln)):
            cmd = ln.strip()
        if cmd is not None:
            # two commands in a row with one answer after them (`... -d mlx5_0`, `... -d mlx5_1`, `RoCE v2`):
            # the answer belongs to one of them, which one cannot be told
            ctx = {} if not answered and cmd else _cma_context(cmd)
            answered = not cmd
            continue
        if _CMA_MODE.match(ln) or _CMA_ERRORS.match(ln):
            answered = True
        m = _CMA_MODE.match(ln)
        if m:
            reads.append({"mode": m.group(1), **ctx})
            continue
        m = _CMA_ERRORS.match(ln)
        if m:
            errors.append(m.group(1))
    if not reads and not errors:
        raise ParseError("cma_roce_mode", "no `IB/RoCE v1` / `RoCE v2` line found")
    facts: Facts = {"mode": reads[-1]["mode"] if reads else None,
                    "modes": [r["mode"] for r in reads], "reads": reads}
    if reads and "device" in reads[-1]:
        facts["device"] = reads[-1]["device"]
    if reads and "port" in reads[-1]:
        facts["port"] = reads[-1]["port"]
    if errors:
        facts["errors"] = errors
    return facts


def sniff_cma_roce_mode(text: str) -> int:
    if sysfs_rdma.is_configfs_mode(text):
        return 95
    body = body_lines(text, ("cma_roce_mode",))
    if body and all(_CMA_MODE.match(ln) for ln in body):
        return 95
    cmds = [c for c in (prompt_command(ln) for ln in lines(text)) if c]
    if any("cma_roce_mode" in c for c in cmds) and body:
        f = fraction(body, lambda ln: bool(_CMA_MODE.match(ln) or _CMA_ERRORS.match(ln)))
        return round(80 * f)
    return 0


# ---------------------------------------------------------------------------------------------
# roce_tc_sysfs (/sys/class/infiniband/<dev>/tc/<n>/traffic_class, MLNX_OFED)

_TC_PATH = re.compile(r"/sys/class/infiniband/([^/\s]+)/tc/([0-9]+)/traffic_class")
_TC_VALUE = re.compile(r"^\s*Global tclass=([0-9]+)\s*$")
_CAT_ERROR = re.compile(r"^\s*cat:\s*(\S+):\s*(.+)$")


def parse_roce_tc_sysfs(text: str) -> Facts:
    reads: list[dict] = []
    writes: list[dict] = []
    current: dict | None = None
    unknown: list[tuple[int, str]] = []
    for n, ln in _numbered(text):
        cmd = prompt_command(ln)
        if cmd is None and is_bare_command(ln, ("cat", "echo")):
            cmd = ln.strip()
        if cmd is not None:
            current = None
            path = _TC_PATH.search(cmd)
            if re.search(r"\becho\b", cmd) and ">" in cmd:
                m = re.search(r"\becho\s+(?:-n\s+)?['\"]?([0-9]+)", cmd)
                writes.append({"value": int(m.group(1)) if m else None,
                               "path": path.group(0) if path else None})
            elif re.search(r"\bcat\b", cmd) and path:
                current = {"path": path.group(0), "device": path.group(1), "tc": int(path.group(2)),
                           "traffic_class": None, "set": False}
                reads.append(current)
            continue
        if not ln.strip() or is_elision(ln):
            continue
        m = _TC_VALUE.match(ln)
        if m:
            if current is None:  # output pasted without its command
                current = {"traffic_class": None, "set": False}
                reads.append(current)
            current["traffic_class"] = int(m.group(1))
            current["set"] = True
            continue
        m = _CAT_ERROR.match(ln)
        if m and _TC_PATH.search(m.group(1)):
            path = _TC_PATH.search(m.group(1))
            if current is None:
                current = {"path": path.group(0), "device": path.group(1), "tc": int(path.group(2)),
                           "traffic_class": None, "set": False}
                reads.append(current)
            current["error"] = m.group(2).strip()
            continue
        unknown.append((n, ln))
    if unknown and not reads:
        n, ln = unknown[0]
        raise ParseError("roce_tc_sysfs", f"not a traffic_class read: {ln.strip()[:60]!r}", n)
    if not reads:
        if any(c for c in (prompt_command(ln) for ln in lines(text))) and not writes:
            raise ParseError("roce_tc_sysfs", "no command reads a tc/<n>/traffic_class file")
        # the file was read and printed nothing: tclass not set
        reads.append({"traffic_class": None, "set": False})
    last = reads[-1]
    facts: Facts = {"traffic_class": last["traffic_class"], "set": last["set"], "reads": reads}
    if "device" in last:
        facts["device"] = last["device"]
        facts["tc"] = last["tc"]
    if writes:
        facts["writes"] = writes
    if "error" in last:
        facts["error"] = last["error"]
    return facts


def sniff_roce_tc_sysfs(text: str) -> int:
    body = body_lines(text, ("cat", "echo"))
    cmds = [c for c in (prompt_command(ln) for ln in lines(text)) if c]
    has_path = any(_TC_PATH.search(c) for c in cmds) or any(
        _TC_PATH.search(ln) for ln in lines(text) if is_bare_command(ln, ("cat", "echo")))
    if body and all(_TC_VALUE.match(ln) for ln in body):
        return 95
    if has_path and all(_TC_VALUE.match(ln) or _CAT_ERROR.match(ln) for ln in body):
        return 90
    return 0


# ---------------------------------------------------------------------------------------------
# ofed_info

_OFED_LINE = re.compile(
    r"^\s*(?P<prefix>[A-Za-z][\w]*(?:-[A-Za-z][\w]*)*)-(?P<ver>[0-9]+(?:\.[0-9]+)+(?:-[\w.]+)*?)"
    r"(?:\s*\((?P<base>[^)]*)\))?\s*:?\s*$"
)
_OFED_FLAVORS = {"MLNX_OFED_LINUX": "MLNX_OFED", "MLNX_EN": "MLNX_EN", "mlnx-en": "MLNX_EN",
                 "OFED-internal": "OFED-internal", "OFED": "OFED", "DOCA": "DOCA"}


def parse_ofed_info(text: str) -> Facts:
    for n, ln in _numbered(text):
        if not ln.strip() or prompt_command(ln) is not None or is_bare_command(ln, ("ofed_info",)):
            continue
        m = _OFED_LINE.match(ln)
        if m:
            prefix = m.group("prefix")
            facts: Facts = {"version": m.group("ver"), "flavor": _OFED_FLAVORS.get(prefix, prefix),
                            "raw": ln.strip()}
            if m.group("base"):
                facts["base"] = m.group("base")
            return facts
        m = re.fullmatch(r"\s*([0-9]+\.[0-9]+-[0-9.]+)\s*", ln)  # ofed_info -n
        if m:
            return {"version": m.group(1), "flavor": None, "raw": ln.strip()}
    raise ParseError("ofed_info", "no `<FLAVOR>-<version>:` line found")


def sniff_ofed_info(text: str) -> int:
    body = body_lines(text, ("ofed_info",))
    if not body:
        return 0
    m = _OFED_LINE.match(body[0])
    if m and m.group("prefix") in _OFED_FLAVORS:
        return 95
    if m and len(body) == 1:
        return 40
    return 0


# ---------------------------------------------------------------------------------------------
# hw_counters (`cat /sys/class/infiniband/<dev>/ports/<p>/hw_counters/<name>`, `grep -H`, …)

_HWC_PATH = re.compile(r"/sys/class/infiniband/([^/\s]+)/ports/([0-9]+)/(?:hw_)?counters/([\w*?\[\]-]+)")
_HWC_GREP = re.compile(r"^\s*(?P<path>/\S+?):\s*(?P<v>-?[0-9]+)\s*$")
# `name: 12`, `name=12`, `name 12` (a `for f in *; do echo $f $(cat $f); done` listing)
_HWC_NAMED = re.compile(r"^\s*(?P<name>[A-Za-z_][\w-]*)(?:\s*[:=]\s*|\s+)(?P<v>-?[0-9]+)\s*$")
_HWC_VALUE = re.compile(r"^\s*(-?[0-9]+)\s*$")


def parse_hw_counters(text: str) -> Facts:
    values: list[int] = []
    entries: list[dict] = []
    reads: list[dict] = []
    current: dict | None = None
    for ln in lines(text):
        cmd = prompt_command(ln)
        if cmd is None and is_bare_command(ln, ("cat", "grep")):
            cmd = ln.strip()
        if cmd is not None:
            current = None
            paths = _HWC_PATH.findall(cmd)
            if re.search(r"\bcat\b", cmd) and len(paths) == 1:
                dev, port, name = paths[0]
                current = {"command": cmd, "path": _HWC_PATH.search(cmd).group(0),
                           "name": name if not re.search(r"[*?\[]", name) else None,
                           "device": dev if not re.search(r"[*?\[]", dev) else None,
                           "port": int(port), "values": []}
                reads.append(current)
            continue
        if not ln.strip() or is_elision(ln):
            continue
        m = _HWC_VALUE.match(ln)
        if m:
            v = int(m.group(1))
            values.append(v)
            if current is not None:
                current["values"].append(v)
            continue
        m = _HWC_GREP.match(ln)
        if m:
            v = int(m.group("v"))
            values.append(v)
            p = _HWC_PATH.search(m.group("path"))
            entry = {"path": m.group("path"), "name": m.group("path").rsplit("/", 1)[-1], "value": v}
            if p:
                entry.update(device=p.group(1), port=int(p.group(2)))
            entries.append(entry)
            continue
        m = _HWC_NAMED.match(ln)
        if m:
            values.append(int(m.group("v")))
            entries.append({"name": m.group("name"), "value": int(m.group("v"))})
    # a single-file cat names its value
    for r in reads:
        if r["name"] and r["device"] and len(r["values"]) == 1:
            entries.append({"path": r["path"], "name": r["name"], "value": r["values"][0],
                            "device": r["device"], "port": r["port"]})
    if not values:
        raise ParseError("hw_counters", "no counter value found")
    counters: dict[str, int] = {}
    by_device: dict[str, dict[str, int]] = {}
    seen: dict[str, set] = {}
    for e in entries:
        seen.setdefault(e["name"], set()).add((e.get("device"), e.get("port")))
        if e.get("device"):
            by_device.setdefault(f"{e['device']}/{e['port']}", {})[e["name"]] = e["value"]
    for e in entries:
        if len(seen[e["name"]]) == 1:  # a name read on several devices is not one counter
            counters[e["name"]] = e["value"]
    facts: Facts = {"values": values, "counters": counters}
    by_name: dict[str, list[int]] = {}
    for r in reads:  # a glob over devices: the values in glob order, devices unnamed
        if r["name"]:
            by_name.setdefault(r["name"], []).extend(r["values"])
    if by_name:
        facts["by_name"] = by_name
    if by_device:
        facts["by_device"] = by_device
    if reads:
        facts["reads"] = reads
    return facts


def sniff_hw_counters(text: str) -> int:
    commands = [c for c in (prompt_command(ln) for ln in lines(text)) if c]
    commands += [ln for ln in lines(text) if is_bare_command(ln, ("cat", "grep"))]
    cmd_paths = [c for c in commands if _HWC_PATH.search(c)]
    body = body_lines(text, ("cat", "grep"))
    numeric = fraction(body, lambda ln: bool(_HWC_VALUE.match(ln) or _HWC_GREP.match(ln)
                                          or _HWC_NAMED.match(ln)))
    if any(_HWC_GREP.match(ln) and _HWC_PATH.search(ln) for ln in body):
        return round(90 * numeric)
    if cmd_paths and body:
        return round(90 * numeric)
    return 0


# ---------------------------------------------------------------------------------------------
# rdma statistic show

_RS_LINE = re.compile(r"^\s*(?:[0-9]+/[0-9]+:\s+)?link\s+(?P<dev>[^\s/]+)/(?P<port>[0-9]+):?\s*(?P<rest>.*)$")


def _pairs(tokens: list[str]) -> tuple[dict[str, int], dict[str, str]]:
    counters: dict[str, int] = {}
    attrs: dict[str, str] = {}
    for i in range(0, len(tokens) - 1, 2):
        name, value = tokens[i], tokens[i + 1]
        if re.fullmatch(r"-?[0-9]+", value):
            counters[name] = int(value)
        else:
            attrs[name] = value
    return counters, attrs


def parse_rdma_statistic(text: str) -> Facts:
    links: list[dict] = []
    last: dict | None = None
    for ln in body_lines(text, ("rdma",)):
        m = _RS_LINE.match(ln)
        if m:
            counters, attrs = _pairs(m.group("rest").split())
            last = {"dev": m.group("dev"), "port": int(m.group("port")), "counters": counters}
            if attrs:
                last["attrs"] = attrs
            links.append(last)
            continue
        # `rdma -p statistic show` puts counters on indented continuation lines
        if last is not None and ln[:1].isspace():
            counters, _ = _pairs(ln.split())
            last["counters"].update(counters)
            continue
        last = None
    links = [lk for lk in links if lk["counters"] and "state" not in lk.get("attrs", {})]
    if not links:
        raise ParseError("rdma_statistic", "no `link <dev>/<port> <counter> <value> …` line found")
    return {"links": links}


def _is_stat_line(ln: str) -> bool:
    m = _RS_LINE.match(ln)
    if not m:
        return False
    counters, attrs = _pairs(m.group("rest").split())
    return len(counters) >= 3 and "state" not in attrs


def sniff_rdma_statistic(text: str) -> int:
    body = body_lines(text, ("rdma",))
    if any(_is_stat_line(ln) for ln in body):
        return 92
    return 0


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


# ---------------------------------------------------------------------------------------------

PARSERS: dict[str, Parser] = {
    "ibv_devinfo": Parser("ibv_devinfo", parse_ibv_devinfo, sniff_ibv_devinfo,
                          "ibv_devinfo [-v] [-l]: devices, ports, MTUs, link layer, GIDs"),
    "show_gids": Parser("show_gids", parse_show_gids, sniff_show_gids,
                        "show_gids (MLNX_OFED): GID table with IPv4, RoCE version, netdev"),
    "ibdev2netdev": Parser("ibdev2netdev", parse_ibdev2netdev, sniff_ibdev2netdev,
                           "ibdev2netdev [-v]: RDMA device/port to netdev"),
    "rdma_link": Parser("rdma_link", parse_rdma_link, sniff_rdma_link,
                        "rdma link show: port state and netdev"),
    "ibstat": Parser("ibstat", parse_ibstat, sniff_ibstat, "ibstat: CA and port state, rate, link layer"),
    "ibstatus": Parser("ibstatus", parse_ibstatus, sniff_ibstatus,
                       "ibstatus: port state, rate, link layer"),
    "cma_roce_mode": Parser("cma_roce_mode", parse_cma_roce_mode, sniff_cma_roce_mode,
                            "cma_roce_mode: default RoCE mode of rdma_cm"),
    "roce_tc_sysfs": Parser("roce_tc_sysfs", parse_roce_tc_sysfs, sniff_roce_tc_sysfs,
                            "/sys/class/infiniband/<dev>/tc/<n>/traffic_class"),
    "ofed_info": Parser("ofed_info", parse_ofed_info, sniff_ofed_info, "ofed_info -s: OFED version"),
    "hw_counters": Parser("hw_counters", parse_hw_counters, sniff_hw_counters,
                          "RDMA port (hw_)counters read from sysfs"),
    "rdma_statistic": Parser("rdma_statistic", parse_rdma_statistic, sniff_rdma_statistic,
                             "rdma statistic show: per-port RDMA counters"),
    "ucx_info": Parser("ucx_info", parse_ucx_info, sniff_ucx_info,
                       "ucx_info -d: UCX transports per device"),
}
