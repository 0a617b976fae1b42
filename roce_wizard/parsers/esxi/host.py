"""Host settings and state: esxcli network nic pauseParams list, esxcli system settings advanced list -o
<option> (power policy), esxcli system stats uptime get, vim-cmd hostsvc/hostsummary, esxcli hardware cpu global get.
"""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    lone_integers,
    snake,
)
from roce_wizard.parsers.esxi.tables import (
    _bool_or_none,
    _camel_snake,
    _csv_tables,
    _has_header,
    _int_or_none,
    _key_values,
    _norm,
    _records,
    _scalar,
)

# ---------------------------------------------------------------------------------------------
# esxcli network nic pauseParams list


def parse_esxi_pause_params(text: str) -> Facts:
    rows, found = _records(text, ("NIC", "Pause RX", "Pause TX"))
    if not found:
        raise ParseError("esxi_pause_params", "no `NIC  Pause Params Supported  Pause RX  Pause TX` table found")
    nics = []
    for r in rows:
        if not r.get("nic"):
            continue
        nics.append({
            "name": r["nic"],
            "pause_rx": _bool_or_none(r.get("pauserx")),
            "pause_tx": _bool_or_none(r.get("pausetx")),
            "autoneg": _bool_or_none(r.get("autonegotiation")),
            "supported": _bool_or_none(r.get("pauseparamssupported")),
            # several outputs pasted together: which one (0-based) and the host its prompt named
            "block": r["_table"],
            "host": r["_host"],
        })
    return {"nics": nics}


def sniff_esxi_pause_params(text: str) -> int:
    return 95 if _has_header(text, ("NIC", "Pause RX", "Pause TX")) else 0


# ---------------------------------------------------------------------------------------------
# esxcli system settings advanced list -o <option>


def parse_esxi_power_policy(text: str) -> Facts:
    # One record per option: csv rows, or `Path:`-led blocks of the human output.  Several options
    # pasted (a full `advanced list`): the CPU policy's record, else the first.
    rows, found = _records(text, ("Path", "StringValue"))
    records: list[dict[str, str]] = [dict(r) for r in rows] if found else []
    if not records:
        for key, value in _key_values(text):
            k = _norm(key)
            if k == "path" or not records:
                records.append({})
            records[-1].setdefault(k, value)
    records = [r for r in records if "path" in r]
    kv = next((r for r in records if r["path"].strip() == "/Power/CpuPolicy"), records[0] if records else {})
    if "path" not in kv:
        raise ParseError("esxi_power_policy", "no `Path:` / `String Value:` block found")
    typ = (kv.get("type") or "").strip().lower() or None
    if typ == "integer":
        value: Any = _int_or_none(kv.get("intvalue"))
        default: Any = _int_or_none(kv.get("defaultintvalue"))
    else:
        value = kv.get("stringvalue", "").strip() if "stringvalue" in kv else None
        default = kv.get("defaultstringvalue", "").strip() if "defaultstringvalue" in kv else None
    return {
        "path": kv["path"].strip(),
        "type": typ,
        "value": value,
        "default": default,
        "int_value": _int_or_none(kv.get("intvalue")),
        "description": (kv.get("description") or "").strip() or None,
    }


def sniff_esxi_power_policy(text: str) -> int:
    if re.search(r"^\s*Path:\s*/Power/CpuPolicy\s*$", text, re.M):
        return 95
    if re.search(r"^\s*Path:\s*/", text, re.M) and re.search(r"^\s*Default String Value:", text, re.M):
        return 70
    if _has_header(text, ("Path", "StringValue", "DefaultStringValue")):
        return 90 if "/Power/CpuPolicy" in text else 70
    return 0


# ---------------------------------------------------------------------------------------------
# esxcli system stats uptime get


def _lone_integers(text: str) -> tuple[list[int], list[str]]:
    return lone_integers(text, ("esxcli", "cat", "vim-cmd"), skip=r"Value|-+")


def parse_esxi_uptime(text: str) -> Facts:
    values, _ = _lone_integers(text)
    if len(values) != 1:
        raise ParseError("esxi_uptime", "expected one integer (microseconds since boot)")
    return {"uptime_us": values[0]}


def sniff_esxi_uptime(text: str) -> int:
    values, commands = _lone_integers(text)
    if len(values) != 1 or values[0] <= 10**6:
        return 0
    if any("uptime" in c for c in commands):
        return 30
    return 1


# ---------------------------------------------------------------------------------------------
# vim-cmd hostsvc/hostsummary


def _vmodl_value(text: str, key: str) -> str | None:
    m = re.search(r"^\s*" + re.escape(key) + r"\s*=\s*(\"(?:[^\"\\]|\\.)*\"|<unset>|[^,\s]+)\s*,?\s*$", text, re.M)
    if not m:
        return None
    v = m.group(1)
    if v == "<unset>":
        return None
    return v[1:-1] if v.startswith('"') else v


def parse_esxi_host_summary(text: str) -> Facts:
    if not re.search(r"\(vim\.host\.Summary\)|rebootRequired\s*=|bootTime\s*=", text):
        raise ParseError("esxi_host_summary", "no vim.host.Summary dump found")
    rr = _vmodl_value(text, "rebootRequired")
    mm = _vmodl_value(text, "inMaintenanceMode")
    return {
        "reboot_required": _bool_or_none(rr),
        "boot_time": _vmodl_value(text, "bootTime"),
        "uuid": _vmodl_value(text, "uuid"),
        "in_maintenance_mode": _bool_or_none(mm),
        "connection_state": _vmodl_value(text, "connectionState"),
        "power_state": _vmodl_value(text, "powerState"),
        "vendor": _vmodl_value(text, "vendor"),
        "model": _vmodl_value(text, "model"),
        "product": _vmodl_value(text, "fullName"),
    }


def sniff_esxi_host_summary(text: str) -> int:
    if "(vim.host.Summary)" in text:
        return 95
    if re.search(r"^\s*rebootRequired\s*=\s*(true|false)", text, re.M):
        return 50
    return 0


# ---------------------------------------------------------------------------------------------
# esxcli hardware cpu global get

_CPU_KEYS = {
    "cpupackages": "cpu_packages",
    "cpucores": "cpu_cores",
    "cputhreads": "cpu_threads",
    "hyperthreadingactive": "hyperthreading_active",
    "hyperthreadingsupported": "hyperthreading_supported",
    "hyperthreadingenabled": "hyperthreading_enabled",
    "hvsupport": "hv_support",
    "hvreplaycapable": "hv_replay_capable",
    "hvreplaydisabledreasons": "hv_replay_disabled_reasons",
}


def parse_esxi_cpu_global(text: str) -> Facts:
    facts: dict[str, Any] = {}
    csv_tables = [t for t in _csv_tables(text) if "hvsupport" in t["norm"] and t["rows"]]
    if csv_tables:
        t = csv_tables[0]
        for name in t["names"]:
            n = _norm(name)
            facts[_CPU_KEYS.get(n, _camel_snake(name))] = _scalar(t["rows"][0].get(n, ""))
    else:
        for key, value in _key_values(text):
            facts[_CPU_KEYS.get(_norm(key), snake(key))] = _scalar(value)
    if "hv_support" not in facts and "cpu_packages" not in facts:
        raise ParseError("esxi_cpu_global", "no `CPU Packages:` / `HV Support:` lines found")
    if not isinstance(facts.get("hv_support"), int):
        facts["hv_support"] = None
    return facts


def sniff_esxi_cpu_global(text: str) -> int:
    has_hv = bool(re.search(r"^\s*HV Support:\s*[0-9]", text, re.M))
    if has_hv and re.search(r"^\s*CPU Packages:", text, re.M):
        return 95
    if has_hv:
        return 60
    if _has_header(text, ("HVSupport", "CPUPackages")):
        return 90
    return 0
