"""mst status (MFT / NMST)."""

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

# ---------------------------------------------------------------------------------------------
# mst status

_MST_ENTRY_RE = re.compile(r"^\s*((?:/dev/mst/)?mt[0-9]+_[\w.]+)\s+-\s+(.*?)\s*$")
_MST_BARE_RE = re.compile(r"^\s*((?:/dev/mst/)?mt[0-9]+_[A-Za-z0-9_]+(?:\.[0-9]+)?)\s*$")
_BDF_RE = re.compile(r"^(?:[0-9a-fA-F]{4,5}:)?[0-9a-fA-F]{2,3}:[0-9a-fA-F]{2}\.[0-9a-fA-F]$")
_DEVTYPE_RE = re.compile(r"^(\S+?)(?:\(rev:(\w+)\))?$")


def _mst_device(devs: dict[str, dict[str, Any]], key: str) -> dict[str, Any]:
    if key not in devs:
        devs[key] = {"device_type": None, "mst": None, "pci": None, "net": None, "rdma": None,
                     "numa": None}
    return devs[key]


def parse_mst_status(text: str) -> Facts:
    devs: dict[str, dict[str, Any]] = {}
    pci_loaded: bool | None = None
    conf_loaded: bool | None = None
    cur: dict[str, Any] | None = None
    section: str | None = None  # "modules" | "devices" | "table" | "pci"
    seen = False
    for raw in lines(text):
        s = raw.strip()
        if not s or is_elision(s) or set(s) <= {"-"}:
            continue
        if is_prompt(raw):
            section, cur = None, None
            continue
        m = re.match(r"MST PCI (configuration )?module (is not loaded|loaded)", s)
        if m:
            seen = True
            loaded = m.group(2) == "loaded"
            if m.group(1):
                conf_loaded = loaded
            else:
                pci_loaded = loaded
            continue
        low = s.lower()
        if low == "mst modules:":
            section, seen = "modules", True
            continue
        if low == "mst devices:":
            section, seen = "devices", True
            continue
        if low == "pci devices:":
            section, seen = "pci", True
            continue
        if re.match(r"DEVICE_TYPE\s+MST\b", s):
            section, seen = "table", True
            continue
        if section == "table":
            if s.endswith(":"):  # another section (e.g. `Cables:`)
                section = None
                continue
            toks = s.split()
            if len(toks) < 2:
                continue
            dm = _DEVTYPE_RE.match(toks[0])
            mst = None if toks[1] in ("NA", "N/A", "-") else toks[1]
            rest = toks[2:]
            pci = next((t for t in rest if _BDF_RE.match(t)), None)
            key = mst or pci or toks[0]
            dev = _mst_device(devs, key)
            dev["device_type"] = dm.group(1) if dm else toks[0]
            if dm and dm.group(2) is not None:
                dev["rev"] = dm.group(2)
            dev["mst"] = mst
            for t in rest:
                if t == pci:
                    dev["pci"] = t
                elif t.startswith("net-"):
                    dev["net"] = t[4:]
                elif re.match(r"^-?[0-9]+$", t):
                    dev["numa"] = int(t)
                elif t not in ("NA", "N/A", "-"):
                    dev["rdma"] = t
            continue
        m = _MST_ENTRY_RE.match(raw)
        if m:
            cur = _mst_device(devs, m.group(1))
            cur["mst"] = m.group(1)
            cur["access"] = m.group(2).rstrip(".")
            seen = True
            continue
        m = _MST_BARE_RE.match(raw)
        if m and section in ("devices", None):
            cur = _mst_device(devs, m.group(1))
            cur["mst"] = m.group(1)
            seen = True
            continue
        if cur is not None:
            m = re.search(r"domain:bus:dev\.fn=(\S+)", s)
            if m:
                cur["pci"] = m.group(1)
                continue
            m = re.search(r"Chip revision is:\s*(\S+)", s)
            if m:
                cur["chip_revision"] = m.group(1)
                continue
        if section == "pci" and _BDF_RE.match(s):
            # `mst status` before `mst start`: PCI functions listed without MST device names.
            dev = _mst_device(devs, s)
            dev["pci"] = s
            continue
    if not seen:
        raise ParseError("mst_status", "no `MST modules:`/`MST devices:` section or mst device found")
    return {"devices": list(devs.values()), "pci_module_loaded": pci_loaded,
            "config_module_loaded": conf_loaded}


def sniff_mst_status(text: str) -> int:
    score = 0
    for ln in lines(text):
        s = ln.strip()
        if s in ("MST modules:", "MST devices:") or re.match(r"MST PCI (configuration )?module", s):
            return 90
        if re.match(r"DEVICE_TYPE\s+MST\s+PCI", s):
            return 90
        if _MST_ENTRY_RE.match(ln) and "PCI" in ln:
            score = max(score, 80)
    return score
