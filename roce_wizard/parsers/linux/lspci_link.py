"""RW415 pcie-link from a grep-filtered `lspci -vv`: only the LnkCap/LnkSta lines.

Kind ``lspci_link``. People (and scripts) keep only the link lines: `lspci -s <bdf> -vv | grep Lnk` per device,
or a loop printing each BDF on its own line before its `LnkCap:`/`LnkSta:` lines (real captures in
tests/data/corpus/lspci_link/). The device is the `-s <bdf>` of the command line or the bare BDF line before
the link lines (None when neither is shown). A kind of its own, not `lspci_vvv`: grep hid the capabilities,
so nothing here may read as "no SR-IOV capability" to a check of the full listing.
Facts: `devices[]` ({pci, link_cap, link_status}: speed_gts, width, speed_downgraded/width_downgraded when
lspci printed `(downgraded)`), and `pci`, `link_cap`, `link_status` of the first device.
"""

from __future__ import annotations

import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    body_lines,
    fraction,
    is_bare_command,
    is_elision,
    lines,
    prompt_command,
)
from roce_wizard.parsers.linux.lspci import _link
from roce_wizard.parsers.unwrap import per_host

_BDF = r"(?:[0-9a-fA-F]{4,}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
_BDF_ONLY = re.compile(rf"^\s*({_BDF})\s*$")
_LNK = re.compile(r"^\s*Lnk(Cap|Sta):\s*(.*)$")


def _lspci_link_one(text: str) -> Facts:
    devices: list[dict] = []
    dev: dict | None = None
    pending: str | None = None
    for ln in lines(text):
        if not ln.strip() or is_elision(ln):
            continue
        cmd = prompt_command(ln)
        if cmd is None and is_bare_command(ln, ("lspci", "pdsh", "clush")):
            cmd = ln.strip()
        if cmd is not None:
            m = re.search(r"\blspci\b.*?\s-s\s*(\S+)", cmd)
            pending = m.group(1) if m and re.fullmatch(_BDF, m.group(1)) else None
            dev = None
            continue
        if (m := _BDF_ONLY.match(ln)):
            dev = {"pci": m.group(1), "link_cap": None, "link_status": None}
            devices.append(dev)
            continue
        m = _LNK.match(ln)
        if not m:
            continue
        key = "link_cap" if m.group(1) == "Cap" else "link_status"
        if dev is None or dev[key] is not None:  # a second LnkCap without a new command: another device
            dev = {"pci": pending if dev is None else None, "link_cap": None, "link_status": None}
            devices.append(dev)
        dev[key] = _link(m.group(2))
    devices = [d for d in devices if d["link_cap"] is not None or d["link_status"] is not None]
    if not devices:
        raise ParseError("lspci_link", "no `LnkCap:`/`LnkSta:` line found")
    first = devices[0]
    return {"devices": devices, "pci": first["pci"], "link_cap": first["link_cap"], "link_status": first["link_status"]}


parse_lspci_link = per_host(_lspci_link_one)


def sniff_lspci_link(text: str) -> int:
    body = body_lines(text, ("lspci",))
    caps = any(re.match(r"^\s*LnkCap:", ln) for ln in body)
    stas = any(re.match(r"^\s*LnkSta:", ln) for ln in body)
    if not (caps and stas):
        return 0
    return round(88 * fraction(body, lambda ln: bool(_LNK.match(ln) or _BDF_ONLY.match(ln))))
