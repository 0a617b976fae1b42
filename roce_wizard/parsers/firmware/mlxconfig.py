"""mlxconfig query / set (MFT)."""

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
    to_int,
)

# ---------------------------------------------------------------------------------------------
# mlxconfig

# `WORD(n)` enum rendering: True(1), ETH(2), _256KB(1), per_mkey(0), IPv4(0) ...
_ENUM_RE = re.compile(r"^(.+?)\((-?[0-9]+)\)$")
_INT_RE = re.compile(r"^-?[0-9]+$|^0[xX][0-9a-fA-F]+$")
# A value token as mlxconfig prints it (no spaces): 8, True(1), Array[0..15], 0x08, _4_VLs(3).
_VALUE_TOKEN_RE = re.compile(r"^[\w.:/\[\]+-]+(\([^()\s]*\))?$")
# A parameter row: optional `*` (changed marker of `-e q`), NAME, then the value column(s).
_PARAM_ROW_RE = re.compile(r"^\s*(\*)?\s*([A-Z][A-Z0-9_]*[A-Z0-9](?:\[[0-9.]+\])?)\s+(\S.*)$")
_DEVICE_BLOCK_RE = re.compile(r"^\s*Device\s+#([0-9]+):\s*$")
_CONFIG_HDR_RE = re.compile(r"^\s*Configurations:\s*(.*)$")
_HEADER_KV_RE = re.compile(r"^\s*([A-Z][A-Za-z ]{0,30}?):\s+(\S.*?)\s*$")
_APPLY_RE = re.compile(r"Apply new Configuration\?\s*\(y/n\)\s*(?:\[[yn]\])?\s*:?\s*(\S*)", re.I)

# Parameters every mlxconfig user meets; used only to recognise egrep'd rows with no header.
_KNOWN_MLXCONFIG_PARAMS = frozenset(
    {
        "SRIOV_EN", "NUM_OF_VFS", "LINK_TYPE_P1", "LINK_TYPE_P2", "ADVANCED_PCI_SETTINGS",
        "NUM_OF_PF", "PF_LOG_BAR_SIZE", "VF_LOG_BAR_SIZE", "NUM_PF_MSIX", "NUM_VF_MSIX",
        "ROCE_CC_PRIO_MASK_P1", "ROCE_CC_PRIO_MASK_P2", "CNP_802P_PRIO_P1", "CNP_DSCP_P1",
        "LLDP_NB_DCBX_P1", "LLDP_NB_RX_MODE_P1", "LLDP_NB_TX_MODE_P1", "DCBX_IEEE_P1",
        "DCBX_CEE_P1", "DCBX_WILLING_P1", "ROCE_CONTROL", "KEEP_ETH_LINK_UP_P1",
        "RPG_THRESHOLD_P1", "DCE_TCP_G_P1", "PCI_ATOMIC_MODE", "LOG_BAR_SIZE", "CQ_TIMESTAMP",
        "INT_LOG_MAX_PAYLOAD_SIZE", "MEMIC_BAR_SIZE", "PORT_OWNER", "UEFI_HII_EN",
    }
)

_COLUMN_NAMES = {"next boot": "next_boot", "current": "current", "default": "default", "new": "new"}


def normalize_mlxconfig_value(value: str) -> Any:
    """`True(1)` -> True, `False(0)` -> False, `ETH(2)` -> "ETH", `16` -> 16, else the string."""
    v = value.strip()
    m = _ENUM_RE.match(v)
    if m:
        word = m.group(1)
        if word == "True":
            return True
        if word == "False":
            return False
        return word
    if _INT_RE.match(v):
        return to_int(v)
    return v


def _config_columns(header_rest: str) -> list[str]:
    """`Default   Current   Next Boot` -> ["default", "current", "next_boot"]."""
    names = [c for c in re.split(r"\s{2,}", header_rest.strip()) if c]
    return [_COLUMN_NAMES.get(c.lower(), snake(c)) for c in names]


def _headerless_columns(n: int) -> list[str]:
    if n >= 3:
        return ["default", "current", "next_boot"]
    if n == 2:  # only a `set` table prints two value columns
        return ["next_boot", "new"]
    return ["next_boot"]


def _value_tokens(rest: str) -> list[str]:
    """The leading run of value-looking tokens; stops at an author's note like `==> Change to ...`."""
    out = []
    for tok in rest.split():
        if not _VALUE_TOKEN_RE.match(tok):
            break
        out.append(tok)
    return out


def _new_mlx_device() -> dict[str, Any]:
    return {"device": None, "device_type": None, "name": None, "description": None,
            "columns": [], "params": {}}


def _parse_mlxconfig(kind: str, text: str) -> dict[str, Any]:
    """Shared reader for `mlxconfig q` and `mlxconfig set` tables."""
    devices: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    in_config = False
    errors: list[str] = []
    apply_answer: str | None = None
    apply_seen = False
    tail: list[str] = []  # lines after the apply prompt
    elided = False
    for raw in lines(text):
        s = raw.strip()
        if is_elision(s):
            elided = True  # an author left rows out: a parameter not shown is unknown, not absent
            continue
        if not s:
            continue
        if apply_seen:
            tail.append(s)
        if is_prompt(raw):
            in_config = False
            continue
        if s.startswith("-E-"):
            errors.append(s)
            continue
        m = _APPLY_RE.search(s)
        if m:
            apply_seen = True
            apply_answer = m.group(1) or None
            in_config = False
            continue
        if _DEVICE_BLOCK_RE.match(raw):
            cur = _new_mlx_device()
            devices.append(cur)
            in_config = False
            continue
        m = _CONFIG_HDR_RE.match(raw)
        if m:
            if cur is None or cur["params"]:
                cur = _new_mlx_device()
                devices.append(cur)
            cur["columns"] = _config_columns(m.group(1))
            in_config = True
            continue
        if not in_config:
            m = _HEADER_KV_RE.match(raw)
            if m:
                key = snake(m.group(1))
                if cur is None:
                    cur = _new_mlx_device()
                    devices.append(cur)
                if key == "pci_device":  # older MFT printed `PCI device:` where newer prints `Device:`
                    key = "device"
                if key in ("device", "device_type", "name", "description"):
                    cur[key] = m.group(2)
                continue
        m = _PARAM_ROW_RE.match(raw)
        if not m:
            continue
        star, name, rest = m.groups()
        values = _value_tokens(rest)
        if not values:
            continue
        if in_config and cur is not None and cur["columns"]:
            cols = cur["columns"]
        else:
            # A row with no `Configurations:` header above (egrep'd output): only accept it when it
            # looks like an mlxconfig parameter, and read the column count from the row itself.
            if "_" not in name and name not in _KNOWN_MLXCONFIG_PARAMS:
                continue
            if cur is None:
                cur = _new_mlx_device()
                devices.append(cur)
            cols = _headerless_columns(len(values))
            if not cur["columns"]:
                cur["columns"] = cols
            cur["headerless"] = True  # grep'd or an excerpt: which rows are missing is unknown
        entry: dict[str, Any] = {}
        raw_values: dict[str, str] = {}
        for col, val in zip(cols, values):
            entry[col] = normalize_mlxconfig_value(val)
            raw_values[col] = val
        if len(cols) > 1 and kind == "mlxconfig_query":
            entry["changed"] = bool(star)
        entry["raw"] = raw_values
        cur["params"][name] = entry
    return {"devices": devices, "errors": errors, "apply_seen": apply_seen,
            "apply_answer": apply_answer, "tail": tail, "elided": elided}


def parse_mlxconfig_query(text: str) -> Facts:
    res = _parse_mlxconfig("mlxconfig_query", text)
    devices = [d for d in res["devices"] if d["params"] or d["device"]]
    if not devices:
        if res["errors"]:
            return {"devices": [], "columns": [], "errors": res["errors"]}
        raise ParseError("mlxconfig_query", "no `Configurations:` table or mlxconfig parameter rows found")
    columns: list[str] = []
    for d in devices:
        for p in d["params"].values():
            p.setdefault("next_boot", None)
        for c in d["columns"]:
            if c not in columns:
                columns.append(c)
    facts: Facts = {"devices": devices, "columns": columns, "errors": res["errors"]}
    if res["elided"]:
        facts["elided"] = True
    return facts


def parse_mlxconfig_set(text: str) -> Facts:
    res = _parse_mlxconfig("mlxconfig_set", text)
    devices = [d for d in res["devices"] if d["params"] or d["device"]]
    if not devices and not res["apply_seen"]:
        raise ParseError("mlxconfig_set", "no mlxconfig set confirmation table found")
    dev = devices[0] if devices else _new_mlx_device()
    changes = {name: {k: v for k, v in p.items()} for name, p in dev["params"].items()}
    tail = " ".join(res["tail"])
    answer = (res["apply_answer"] or "").lower()
    applied: bool | None
    if re.search(r"Applying\.\.\.\s*Done", tail, re.I):
        applied = True
    elif re.search(r"abort", tail, re.I) or answer.startswith("n"):
        applied = False
    elif re.search(r"Applying\.\.\.\s*Fail", tail, re.I) or res["errors"]:
        applied = False
    else:
        applied = None  # prompt unanswered (or the paste stops before the result)
    reboot_printed = bool(re.search(r"Please reboot machine to load new configurations", text, re.I))
    reboot_needed: bool | None = True if reboot_printed else (None if applied is None else False)
    return {
        "device": dev["device"],
        "device_type": dev["device_type"],
        "name": dev["name"],
        "description": dev["description"],
        "columns": dev["columns"],
        "changes": changes,
        "applied": applied,
        "reboot_needed": reboot_needed,
        "errors": res["errors"],
    }


def _sniff_mlxconfig_headers(text: str) -> tuple[bool, bool]:
    """(has a query-style `Configurations:` header, has a set-style header/prompt)."""
    query = set_ = False
    for ln in lines(text):
        m = _CONFIG_HDR_RE.match(ln)
        if m:
            cols = _config_columns(m.group(1))
            if "new" in cols:
                set_ = True
            elif cols and set(cols) <= {"next_boot", "current", "default"}:
                query = True
        if _APPLY_RE.search(ln):
            set_ = True
    return query, set_


def sniff_mlxconfig_query(text: str) -> int:
    query, set_ = _sniff_mlxconfig_headers(text)
    if query and not set_:
        return 90
    if set_:
        return 0
    # egrep'd rows with no header: NAME  VALUE rows of known parameters or `WORD(n)` values.
    rows = known = other = 0
    for ln in lines(text):
        s = ln.strip()
        if not s or is_elision(s) or is_prompt(ln) or s.startswith("#"):
            continue
        m = _PARAM_ROW_RE.match(ln)
        if m and "_" in m.group(2) and _value_tokens(m.group(3)):
            rows += 1
            vals = _value_tokens(m.group(3))
            if m.group(2) in _KNOWN_MLXCONFIG_PARAMS or _ENUM_RE.match(vals[0]):
                known += 1
        elif "mlxconfig" not in s:
            other += 1
    if rows and known and rows >= other:
        return 40
    return 0


def sniff_mlxconfig_set(text: str) -> int:
    _, set_ = _sniff_mlxconfig_headers(text)
    return 95 if set_ else 0
