"""`ibdev2netdev [-v]` (MLNX_OFED script): RDMA device -> netdev."""

from __future__ import annotations

import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    body_lines,
    fraction,
)

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
