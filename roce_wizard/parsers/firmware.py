"""NVIDIA/Mellanox firmware tools (MFT / NMST): mlxconfig, mst, mlxfwmanager/mlxup, flint, and the
sysfs SR-IOV VF count.

Every parser reads the output as people paste it: with the shell prompt and the command line, with
`...` cuts, trailing padding, markdown indentation, several outputs in one paste.  Lines a parser does
not recognise are ignored; a parser raises ``ParseError`` only when nothing of its tool is found.
"""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    Parser,
    is_digits,
    is_elision,
    is_prompt,
    lines,
    snake,
    to_int,
)

# ---------------------------------------------------------------------------------------------
# shared helpers

def _na(value: str | None) -> str | None:
    """`N/A`, `NA`, `-` and empty -> None; anything else stripped."""
    if value is None:
        return None
    s = value.strip()
    return None if s in ("", "N/A", "NA", "n/a", "-", "--") else s


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


# ---------------------------------------------------------------------------------------------
# flint query

_FLINT_KV_RE = re.compile(r"^([A-Za-z][A-Za-z0-9 ()/._-]{0,40}?):(?:\s+(.*?))?\s*$")


def parse_flint_query(text: str) -> Facts:
    facts: dict[str, Any] = {}
    last: str | None = None
    guid_columns: list[str] | None = None
    for raw in lines(text):
        s = raw.strip()
        if not s or is_elision(s) or is_prompt(raw) or re.match(r"^(sudo\s+)?(m?flint)\s", s):
            continue
        if s.startswith("-E-"):
            facts.setdefault("errors", []).append(s)
            continue
        m = _FLINT_KV_RE.match(s)
        if m:
            key, value = snake(m.group(1)), (m.group(2) or "")
            last = key
            if key == "description":
                # Not a description: the column header of the GUID/MAC rows that follow.
                guid_columns = value.split()
                facts["guid_columns"] = guid_columns
                continue
            if key == "rom_info":
                facts["rom_info"] = [_rom_entry(value)] if _na(value) else []
                continue
            if key in ("base_guid", "base_mac") and value:
                toks = value.split()
                facts[key] = toks[0]
                if len(toks) > 1 and is_digits(toks[1]):
                    facts[f"{key}_num"] = int(toks[1])
                continue
            facts[key] = _na(value)
            continue
        # Continuation line (indented): another ROM, or more of the previous value.
        if last == "rom_info":
            facts.setdefault("rom_info", []).append(_rom_entry(s))
        elif last is not None and isinstance(facts.get(last), str):
            facts[last] = f"{facts[last]} {s}"
    if not any(k in facts for k in ("fw_version", "psid", "image_type", "product_version")):
        if facts.get("errors"):
            return {"fw_version": None, "psid": None, "errors": facts["errors"]}
        raise ParseError("flint_query", "no `FW Version:` / `PSID:` lines found")
    facts.setdefault("fw_version", None)
    facts.setdefault("psid", None)
    facts.setdefault("image_type", None)
    facts.setdefault("product_version", None)
    facts["security"] = facts.get("security_attributes")
    return facts


def _rom_entry(value: str) -> dict[str, str]:
    entry = dict(kv.split("=", 1) for kv in value.split() if "=" in kv)
    return entry or {"raw": value}


def sniff_flint_query(text: str) -> int:
    keys = set()
    for ln in lines(text):
        m = _FLINT_KV_RE.match(ln.strip())
        if m:
            keys.add(snake(m.group(1)))
    if "fw_version" in keys and "psid" in keys:
        if keys & {"image_type", "rom_info", "security_attributes", "fw_release_date", "product_version"}:
            return 90
        return 60
    if "fw_version" in keys and "image_type" in keys:
        return 60
    return 0


# ---------------------------------------------------------------------------------------------
# sriov_numvfs / sriov_totalvfs

_SRIOV_ATTR_RE = re.compile(r"\b(sriov_numvfs|sriov_totalvfs)\b")


def _lone_integers(text: str) -> tuple[list[int], list[str]]:
    """The integer lines of a paste and the command lines around them; ([], ...) if other text."""
    values: list[int] = []
    commands: list[str] = []
    for raw in lines(text):
        s = raw.strip()
        if not s:
            continue
        if re.fullmatch(r"-?[0-9]+", s):
            values.append(int(s))
            continue
        if is_prompt(raw) or re.match(r"^(sudo\s+)?(cat|esxcli|echo|less|more|head)\s", s) or s.startswith("#"):
            commands.append(s)
            continue
        return [], commands
    return values, commands


def parse_sriov_numvfs(text: str) -> Facts:
    values, commands = _lone_integers(text)
    if not values:
        raise ParseError("sriov_numvfs", "expected a bare integer (the content of sriov_numvfs/sriov_totalvfs)")
    facts: dict[str, Any] = {"value": values[0] if len(values) == 1 else None, "values": values}
    for c in commands:
        m = _SRIOV_ATTR_RE.search(c)
        if m:
            facts["attribute"] = m.group(1)
            p = re.search(r"(/sys/\S*" + m.group(1) + r")", c)
            if p:
                facts["path"] = p.group(1)
            b = re.search(r"/([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9a-fA-F])/", c)
            if b:
                facts["pci"] = b.group(1)
            break
    return facts


def sniff_sriov_numvfs(text: str) -> int:
    values, commands = _lone_integers(text)
    if len(values) != 1 or not 0 <= values[0] < 10**5:
        return 0
    if any(_SRIOV_ATTR_RE.search(c) for c in commands):
        return 30
    return 1


# ---------------------------------------------------------------------------------------------

PARSERS: dict[str, Parser] = {
    "mlxconfig_query": Parser("mlxconfig_query", parse_mlxconfig_query, sniff_mlxconfig_query,
                              "mlxconfig -d <dev> query / -e query"),
    "mlxconfig_set": Parser("mlxconfig_set", parse_mlxconfig_set, sniff_mlxconfig_set,
                            "mlxconfig -d <dev> set ... (confirmation table)"),
    "mst_status": Parser("mst_status", parse_mst_status, sniff_mst_status, "mst status [-v|-vv]"),
    "mlxfwmanager": Parser("mlxfwmanager", parse_mlxfwmanager, sniff_mlxfwmanager,
                           "mlxfwmanager / mlxup query"),
    "flint_query": Parser("flint_query", parse_flint_query, sniff_flint_query, "flint -d <dev> query"),
    "sriov_numvfs": Parser("sriov_numvfs", parse_sriov_numvfs, sniff_sriov_numvfs,
                           "cat /sys/.../sriov_numvfs or sriov_totalvfs"),
}
