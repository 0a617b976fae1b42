"""BIOS evidence: Redfish BIOS documents (BMC) and the Linux IOMMU class directory.

Kinds:
- ``redfish_bios``: the JSON document the Redfish transport's ``redfish bios`` prints ({vendor,
  system, attributes, pending, …}), or a Redfish ``Bios`` resource as ``curl …/Bios`` prints it
  (then ``pending`` is unknown and the vendor is told by the attribute names).
- ``sysfs_iommu``: ``ls /sys/class/iommu`` — the IOMMU units the kernel registered (``dmar0`` …
  on Intel, ``ivhd0`` … on AMD); no entry (or no directory) means no IOMMU in use.
"""

from __future__ import annotations

import json
import re
from typing import Any

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    Parser,
    body_lines,
    is_bare_command,
    is_elision,
    lines,
    prompt_command,
)

__all__ = ["PARSERS", "guess_vendor", "parse_redfish_bios", "parse_sysfs_iommu"]

# attribute names only one vendor's BIOS uses (DELL: iDRAC, HPE: iLO)
_DELL_NAMES = ("SriovGlobalEnable", "SysProfile", "SystemServiceTag", "ProcPwrPerf")
_HPE_NAMES = ("IntelProcVtd", "PowerRegulator", "Sriov", "WorkloadProfile")


def _json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in a paste (prompt and command lines before it are skipped)."""
    start = text.find("{")
    while start != -1:
        try:
            value, _ = json.JSONDecoder().raw_decode(text[start:])
        except ValueError:
            start = text.find("{", start + 1)
            continue
        return value if isinstance(value, dict) else None
    return None


def guess_vendor(attributes: dict[str, Any], registry: str | None = None) -> str | None:
    """"dell" / "hpe" from BIOS attribute names (or the manufacturer attribute), else None."""
    manufacturer = str(attributes.get("SystemManufacturer") or "").lower()
    if manufacturer.startswith("dell"):
        return "dell"
    if any(n in attributes for n in _DELL_NAMES):
        return "dell"
    if any(n in attributes for n in _HPE_NAMES):
        return "hpe"
    return None


def parse_redfish_bios(text: str) -> Facts:
    doc = _json_object(text)
    if doc is None:
        raise ParseError("redfish_bios", "no JSON object found")
    if isinstance(doc.get("attributes"), dict):  # the transport's `redfish bios` document
        pending = doc.get("pending")
        facts: Facts = {k: v for k, v in doc.items() if k not in ("attributes", "pending", "vendor")}
        facts["attributes"] = doc["attributes"]
        facts["pending"] = pending if isinstance(pending, dict) else None
        facts["vendor"] = doc.get("vendor") or guess_vendor(doc["attributes"])
        facts["source"] = "redfish bios"
        return facts
    if isinstance(doc.get("Attributes"), dict):  # a Bios resource (GET …/Bios)
        odata = str(doc.get("@odata.id") or "")
        if doc.get("Id") == "Settings" or odata.rstrip("/").endswith("/Settings"):
            raise ParseError("redfish_bios", "this is Bios/Settings (pending values only), not the current Bios")
        attributes = doc["Attributes"]
        settings = ((doc.get("@Redfish.Settings") or {}).get("SettingsObject") or {}).get("@odata.id")
        return {
            "vendor": guess_vendor(attributes, doc.get("AttributeRegistry")),
            "attributes": attributes,
            "pending": None,  # a Bios resource does not say what is staged
            "attribute_registry": doc.get("AttributeRegistry"),
            "bios_uri": odata or None,
            "settings_uri": settings,
            "system": {},
            "source": "Bios resource",
        }
    raise ParseError("redfish_bios", "a JSON object without BIOS attributes (`attributes` or `Attributes`)")


def sniff_redfish_bios(text: str) -> int:
    if "{" not in text or "ttributes" not in text:
        return 0
    doc = _json_object(text)
    if doc is None:
        return 0
    if isinstance(doc.get("attributes"), dict) and ("pending" in doc or "vendor" in doc):
        return 95
    if isinstance(doc.get("Attributes"), dict) and "#Bios." in str(doc.get("@odata.type") or ""):
        return 0 if doc.get("Id") == "Settings" else 90
    return 0


# ---------------------------------------------------------------------------------------------
# ls /sys/class/iommu

# dmar0 (Intel), ivhd0 (AMD), smmu3.0x0000000009050000 (Arm), others by their device name
_UNIT = re.compile(r"^[A-Za-z0-9][\w.:-]{0,63}(?<!:)$")
_NO_DIR = re.compile(r"^ls: (?:cannot access )?'?/sys/class/iommu/?'?: No such file or directory$")
_TOTAL = re.compile(r"^total [0-9]+$")
_LONG = re.compile(r"^[l-][rwxsStT-]{9}[.+@]?\s+[0-9]+\s+\S+\s+\S+\s+[0-9]+\s+.+?\s(?P<name>\S+)(?:\s+->\s+\S+)?$")


def _listing(text: str) -> list[tuple[int, str]]:
    """(line number, text) of the lines `ls` printed: no blanks, prompts, elisions or the command."""
    return [(n, ln.strip()) for n, ln in enumerate(lines(text), 1)
            if ln.strip() and prompt_command(ln) is None and not is_elision(ln) and not is_bare_command(ln, ("ls",))]


def parse_sysfs_iommu(text: str) -> Facts:
    units: list[str] = []
    present = True
    for n, s in _listing(text):
        if _NO_DIR.match(s):
            present = False
            continue
        if _TOTAL.match(s):
            continue
        long = _LONG.match(s)  # `ls -l`: lrwxrwxrwx 1 root root 0 May  3 10:00 dmar0 -> ../../devices/…
        names = [long.group("name")] if long else s.split()
        if all(_UNIT.match(name) for name in names):
            units.extend(names)
            continue
        raise ParseError("sysfs_iommu", f"not an IOMMU unit name: {s[:60]!r}", n)
    return {"present": present, "units": units, "count": len(units)}


def sniff_sysfs_iommu(text: str) -> int:
    mentions = "/sys/class/iommu" in text
    body = body_lines(text, ("ls",))
    if not body:
        return 0
    if all(_NO_DIR.match(ln.strip()) for ln in body):
        return 90
    names = []
    for ln in body:
        long = _LONG.match(ln.strip())
        if not _TOTAL.match(ln.strip()):
            names += [long.group("name")] if long else ln.split()
    if all(re.match(r"^(?:dmar|ivhd)[0-9]+$", name) for name in names):
        return 90 if mentions else 70
    if mentions and all(_UNIT.match(name) for name in names):
        return 60
    return 0


PARSERS: dict[str, Parser] = {
    "redfish_bios": Parser("redfish_bios", parse_redfish_bios, sniff_redfish_bios,
                           "Redfish BIOS: `redfish bios` document or a GET …/Bios resource"),
    "sysfs_iommu": Parser("sysfs_iommu", parse_sysfs_iommu, sniff_sysfs_iommu,
                          "ls /sys/class/iommu: IOMMU units the kernel registered"),
}
