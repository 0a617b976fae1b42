"""ESXi's operational DCB state: `esxcli network nic dcb status get -n vmnicN`.

Kind: esxi_dcb_status. The command is VMware's (vSphere 7.0 Storage, "Configure Lossless Network for
NVMe over RDMA": "You can verify the current DCB settings by running `esxcli network nic dcb status get
-n vmnicX`", https://docs.vmware.com/en/VMware-vSphere/7.0/com.vmware.vsphere.storage.doc/GUID-B764140D-BCF3-4C99-8169-E5B058757518.html).

Format: esxcli's struct layout, one `Key: value` per line (three-space indent). The only real output found
(tests/data/esxi_dcb_status/, PROVENANCE.md) is an operator's excerpt of two ConnectX-4 Lx hosts; it shows the
keys `Mode` (`IEEE Mode`, `CEE Mode`, `Unknown`), `PFC Enabled` (true/false), `PFC Configuration` (eight 0/1, one
per priority 0..7) and `Sent PFC Frames` (eight counts), a block per vmnic headed `vmnicN:` when several are
pasted. Other keys of the full output are read when they are `Key: value` lines and otherwise ignored: the
parser reads what it knows and never invents the rest (a key not printed is None).
"""

from __future__ import annotations

import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    Parser,
    is_bare_command,
    is_elision,
    is_prompt,
    lines,
    prompt_command,
    to_bool,
)

_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 ()/_.-]{0,60}?):(?:\s+(.*?))?\s*$")
_BLOCK = re.compile(r"^\s*(vmnic[0-9]+)\s*:\s*$")
_NIC_ARG = re.compile(r"\bdcb\s+status\s+get\b.*?(?:-n\s*|--nic-name[= ])(vmnic[0-9]+)")
_BITS = re.compile(r"^\s*((?:[0-9]+\s+){7}[0-9]+)(?![0-9])")


def _norm(key: str) -> str:
    return re.sub(r"[^a-z0-9]", "", key.lower())


def _eight(value: str) -> list[int] | None:
    """`0 0 0 1 0 0 0 0` (an operator's note after it is ignored) -> eight ints, else None."""
    m = _BITS.match(value)
    return [int(v) for v in m.group(1).split()] if m else None


def _mode(value: str) -> str | None:
    """The DCBX mode word: `IEEE Mode` -> IEEE, `CEE Mode` -> CEE, `Unknown` -> unknown (first one named)."""
    m = re.search(r"\b(IEEE|CEE|CIN|Unknown)\b", value, re.IGNORECASE)
    if not m:
        return None
    word = m.group(1)
    return "unknown" if word.lower() == "unknown" else word.upper()


def _new(name: str | None) -> dict:
    return {"name": name, "mode": None, "pfc_enabled": None, "pfc": None, "pfc_priorities": None,
            "sent_pfc_frames": None, "received_pfc_frames": None}


def parse_esxi_dcb_status(text: str) -> Facts:
    nics: list[dict] = []
    current: dict | None = None
    pending_name: str | None = None
    for n, ln in enumerate(lines(text), start=1):
        if not ln.strip() or is_elision(ln):
            continue
        cmd = prompt_command(ln) if is_prompt(ln) else None
        if cmd is not None or is_prompt(ln) or is_bare_command(ln, ("esxcli", "localcli")):
            m = _NIC_ARG.search(cmd or ln)
            pending_name = m.group(1) if m else None
            current = None
            continue
        m = _BLOCK.match(ln)
        if m:
            current = _new(m.group(1))
            nics.append(current)
            continue
        m = _KEY.match(ln)
        if not m:
            raise ParseError("esxi_dcb_status", f"not a `Key: value` line: {ln.strip()[:60]!r}", n)
        key, value = _norm(m.group(1)), (m.group(2) or "").strip()
        if current is None or (key == "nicname" and current.get("name") not in (None, value)):
            current = _new(pending_name)
            nics.append(current)
        if key == "nicname":
            current["name"] = value or current["name"]
        elif key == "mode":
            current["mode"] = _mode(value)
        elif key == "pfcenabled":
            current["pfc_enabled"] = to_bool(value.split()[0] if value else None)
        elif key == "pfcconfiguration":
            bits = _eight(value)
            current["pfc"] = bits
            current["pfc_priorities"] = [p for p, b in enumerate(bits) if b] if bits else None
        elif key == "sentpfcframes":
            current["sent_pfc_frames"] = _eight(value)
        elif key == "receivedpfcframes":
            current["received_pfc_frames"] = _eight(value)
    nics = [x for x in nics if any(x[k] is not None for k in ("mode", "pfc_enabled", "pfc"))]
    if not nics:
        raise ParseError("esxi_dcb_status", "no `PFC Enabled` / `PFC Configuration` / `Mode` lines")
    return {"nics": nics}


def sniff_esxi_dcb_status(text: str) -> int:
    keys = {_norm(m.group(1)) for m in (_KEY.match(ln) for ln in lines(text)) if m}
    if "pfcconfiguration" in keys and ("pfcenabled" in keys or "mode" in keys):
        return 90
    return 0


PARSERS = {
    "esxi_dcb_status": Parser("esxi_dcb_status", parse_esxi_dcb_status, sniff_esxi_dcb_status,
                              "esxcli network nic dcb status get -n vmnicN"),
}
