"""Small helpers check modules share: building findings and reading common facts.

Checks stay pure: these functions only read `Facts` and build `Finding`s.
"""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.model import Check, Evidence, Facts, Finding, Severity, Status
from roce_wizard.parsers.esxi import format_options_string, parse_options_string

__all__ = [
    "bad",
    "excerpt",
    "format_options_string",
    "good",
    "mlxconfig_devices",
    "mlx_value",
    "module_params",
    "nmlx5_vmnics",
    "parse_options_string",
    "skip",
    "version_tuple",
]


def _finding(check: Check, facts: Facts, status: Status, summary: str, **kw: Any) -> Finding:
    probes = kw.pop("probes", None) or check.probes[:1]
    evidence = kw.pop("evidence", None)
    if evidence is None:
        ex = kw.pop("excerpt", None)
        evidence = [Evidence(probe=p, command=facts.commands.get(p), excerpt=ex if i == 0 else None) for i, p in enumerate(probes)]
    else:
        kw.pop("excerpt", None)
    return Finding(check=check.code, status=status, summary=summary, target=facts.target_name, evidence=evidence, **kw)


def good(check: Check, facts: Facts, summary: str, **kw: Any) -> Finding:
    return _finding(check, facts, Status.PASS, summary, **kw)


def bad(check: Check, facts: Facts, summary: str, **kw: Any) -> Finding:
    """A failing finding at the check's severity (fail, or warn for warn-level checks)."""
    status = Status.WARN if check.severity is Severity.WARN else Status.FAIL
    return _finding(check, facts, status, summary, **kw)


def skip(check: Check, facts: Facts, summary: str, **kw: Any) -> Finding:
    """Not applicable here (e.g. QoS in a VF guest belongs to the PF)."""
    return _finding(check, facts, Status.SKIP, summary, **kw)


def excerpt(raw: str | None, *patterns: str, limit: int = 6) -> str | None:
    """The raw output lines that carry the observation (for the evidence)."""
    if not raw:
        return None
    regexes = [re.compile(p, re.I) for p in patterns]
    hits = [ln.rstrip() for ln in raw.splitlines() if any(r.search(ln) for r in regexes)]
    return "\n".join(hits[:limit]) or None


def version_tuple(version: str | None) -> tuple[int, ...] | None:
    """'4.21.71.101-1OEM.702.0.0.17473468' -> (4, 21, 71, 101); None when unreadable."""
    if not version:
        return None
    m = re.match(r"^\s*(\d+(?:\.\d+)*)", version)
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


# ---------------------------------------------------------------------------- mlxconfig


def mlxconfig_devices(facts: Facts) -> list[dict[str, Any]]:
    """The devices of the mlxconfig query (doctor queries only the RoCE card; analyze, all)."""
    return list(facts.need("mlxconfig_query").get("devices", []))


def mlx_value(device: dict[str, Any], name: str, column: str = "next_boot") -> Any:
    """A parameter's value in a column; for `current` fall back to the only column printed."""
    param = (device.get("params") or {}).get(name)
    if param is None:
        return None
    if column in param:
        return param[column]
    return None


def device_label(device: dict[str, Any]) -> str:
    return device.get("device") or device.get("device_type") or "device"


# ---------------------------------------------------------------------------- ESXi nmlx5


def module_params(facts: Facts) -> dict[str, str]:
    """nmlx5_core parameters that are set (name -> value string)."""
    return dict(facts.need("esxi_module_params").get("params", {}))


def nmlx5_vmnics(facts: Facts) -> list[dict[str, Any]]:
    """nmlx5_core vmnics in driver enumeration order (PCI address order): max_vfs positions."""
    nics = facts.need("esxi_nic_list").get("nics", [])
    nmlx5 = [n for n in nics if (n.get("driver") or "").startswith("nmlx5")]
    return sorted(nmlx5, key=lambda n: _pci_key(n.get("pci") or ""))


def _pci_key(pci: str) -> tuple[int, ...]:
    parts = re.split(r"[:.]", pci.lower())
    try:
        nums = tuple(int(p, 16) for p in parts)
    except ValueError:
        return (1 << 30,)
    return nums if len(nums) == 4 else (0, *nums)


def parse_int_list(value: str | None) -> list[int] | None:
    """'0,0,8,7' -> [0, 0, 8, 7]; None when absent or unreadable."""
    if value is None:
        return None
    try:
        return [int(x, 0) for x in value.split(",") if x.strip() != ""]
    except ValueError:
        return None
