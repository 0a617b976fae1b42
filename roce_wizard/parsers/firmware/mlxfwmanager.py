"""mlxfwmanager / mlxup."""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    is_elision,
    is_prompt,
    lines,
    snake,
)
from roce_wizard.parsers.firmware.common import _na
from roce_wizard.parsers.firmware.mlxconfig import _DEVICE_BLOCK_RE

# ---------------------------------------------------------------------------------------------
# mlxfwmanager / mlxup

_FWM_KV_RE = re.compile(r"^\s*([A-Z][A-Za-z0-9 ]{0,30}?):\s*(.*?)\s*$")
_FWM_VERSIONS_RE = re.compile(r"^\s*Versions:\s+Current\s+Available\s*$")

_FWM_KEYS = {
    "device_type": "device_type",
    "part_number": "part_number",
    "description": "description",
    "psid": "psid",
    "pci_device_name": "pci",
    "status": "status",
    "base_mac": "base_mac",
    "base_guid": "base_guid",
}


def _new_fwm_device() -> dict[str, Any]:
    return {"device_type": None, "part_number": None, "description": None, "psid": None,
            "pci": None, "versions": {}, "fw_current": None, "fw_available": None, "status": None}


def parse_mlxfwmanager(text: str) -> Facts:
    blocks: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    in_versions = False
    last_key: str | None = None
    restart_needed = False
    seen = False
    errors: list[str] = []
    for raw in lines(text):
        s = raw.strip()
        if not s:
            in_versions = False
            last_key = None
            continue
        if s.startswith("-E-"):
            errors.append(s)
            continue
        if is_elision(s) or set(s) <= {"-"}:
            continue
        if re.search(r"Querying Mellanox devices firmware", s):
            seen = True
            continue
        if re.search(r"Restart needed for updates to take effect", s, re.I):
            restart_needed = True
            continue
        if is_prompt(raw):
            in_versions, last_key, cur = False, None, None
            continue
        if _DEVICE_BLOCK_RE.match(raw):
            cur = _new_fwm_device()
            blocks.append(cur)
            in_versions, last_key = False, None
            continue
        if cur is None:
            continue
        if _FWM_VERSIONS_RE.match(raw):
            in_versions = True
            seen = True
            continue
        m = _FWM_KV_RE.match(raw)
        if m:
            in_versions = False
            key, value = snake(m.group(1)), m.group(2)
            last_key = key
            target = _FWM_KEYS.get(key, key)
            if target == "versions":  # a `Versions: …` header of another layout: the rows follow, no value
                in_versions = True
                continue
            cur[target] = _na(value) if target != "description" else value
            if target in ("psid", "pci", "device_type", "part_number"):
                seen = True
            continue
        toks = s.split()
        if in_versions and len(toks) >= 2:
            # `FW  16.32.1010  N/A`, `UEFI Virtio net  21.4.0010  N/A`: the last two are the columns.
            if len(toks) >= 3:
                name, current, available = " ".join(toks[:-2]), toks[-2], toks[-1]
            else:
                name, current, available = toks[0], toks[1], None
            cur["versions"][name] = {"current": _na(current), "available": _na(available)}
            continue
        if last_key == "description":
            # A description wrapped onto the next line by the paste.
            cur["description"] = f"{cur['description']} {s}".strip()
    # The same device queried twice in one paste (update, then re-query): keep its latest state.
    blocks = [b for b in blocks if b["psid"] or b["pci"] or b["part_number"] or b["versions"]]
    latest: dict[Any, dict[str, Any]] = {}
    for i, d in enumerate(blocks):
        fw = d["versions"].get("FW")
        if fw:
            d["fw_current"], d["fw_available"] = fw["current"], fw["available"]
        latest[d["pci"] or d["psid"] or i] = d
    devices = list(latest.values())
    if not devices and not (seen and errors):
        raise ParseError("mlxfwmanager", "no `Device #N:` block with PSID / PCI Device Name found")
    return {"devices": devices, "restart_needed": restart_needed, "errors": errors}


def sniff_mlxfwmanager(text: str) -> int:
    score = 0
    has_psid = has_pci_name = False
    for ln in lines(text):
        if re.search(r"Querying Mellanox devices firmware", ln):
            return 95
        if _FWM_VERSIONS_RE.match(ln):
            score = 90
        if re.match(r"^\s*PSID:", ln):
            has_psid = True
        if re.match(r"^\s*PCI Device Name:", ln):
            has_pci_name = True
    if has_psid and has_pci_name:
        score = max(score, 70)
    return score
