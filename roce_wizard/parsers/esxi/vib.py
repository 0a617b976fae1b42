"""esxcli software vib list / install."""

from __future__ import annotations

import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    is_prompt,
)
from roce_wizard.parsers.esxi.nics import _grep_rows
from roce_wizard.parsers.esxi.tables import _blank_none, _bool_or_none, _has_header, _key_values, _norm, _records

# ---------------------------------------------------------------------------------------------
# esxcli software vib list / install


# `esxcli software vib list` row: the acceptance level is a closed set, which makes a header-less row
# recognisable; ESXi 8 adds a Platforms column after the install date
_VIB_ROW_RE = re.compile(
    r"^\s*(?P<name>\S+)\s+(?P<version>\S+)\s+(?P<vendor>\S+)\s+"
    r"(?P<acceptancelevel>VMwareCertified|VMwareAccepted|PartnerSupported|CommunitySupported)"
    r"(?:\s+(?P<installdate>[0-9]{4}-[0-9]{2}-[0-9]{2}))?(?:\s+(?P<platforms>\S+))?\s*$"
)


def parse_esxi_vib_list(text: str) -> Facts:
    rows, found = _records(text, ("Name", "Version", "Vendor"))
    if not found:
        matches, _ = _grep_rows(text, _VIB_ROW_RE)
        if not matches:
            raise ParseError("esxi_vib_list", "no `Name  Version  Vendor  Acceptance Level` table (or csv) found")
        # header-less (grep-filtered): VIBs the filter dropped are unknown, not absent
        rows = [{k: v or "" for k, v in m.groupdict().items()} for m in matches]
    vibs = []
    for r in rows:
        if not r.get("name"):
            continue
        vib = {
            "name": r["name"],
            "version": _blank_none(r.get("version")),
            "vendor": _blank_none(r.get("vendor")),
            "acceptance": _blank_none(r.get("acceptancelevel")),
            "install_date": _blank_none(r.get("installdate")),
        }
        if r.get("platforms"):
            vib["platforms"] = r["platforms"]
        vibs.append(vib)
    return {"vibs": vibs} if found else {"vibs": vibs, "header": False}


def sniff_esxi_vib_list(text: str) -> int:
    if _has_header(text, ("Name", "Version", "Vendor", "Acceptance Level")):
        return 90
    matches, total = _grep_rows(text, _VIB_ROW_RE)
    return round(60 * len(matches) / total) if matches else 0


def _vib_ids(value: str | None) -> list[str]:
    if not value:
        return []
    return [v for v in re.split(r"[,\s]+", value.strip().strip("[]")) if v]


def parse_esxi_vib_install(text: str) -> Facts:
    kv: dict[str, str] = {}
    rows, found = _records(text, ("Message", "RebootRequired"))
    if found and rows:
        r = rows[0]
        kv = {"message": r.get("message", ""), "rebootrequired": r.get("rebootrequired", ""),
              "vibsinstalled": r.get("vibsinstalled", ""), "vibsremoved": r.get("vibsremoved", ""),
              "vibsskipped": r.get("vibsskipped", "")}
    else:
        for key, value in _key_values(text):
            kv.setdefault(_norm(key), value)
    error = None
    m = re.search(r"^\s*\[(\w+(?:Error|Exception))\]\s*$", text, re.M)
    if m:
        error = m.group(1)
    if "message" not in kv and "rebootrequired" not in kv and error is None:
        raise ParseError("esxi_vib_install", "no `Installation Result` block found")
    message = kv.get("message") or None
    if error and not message:
        # The error text follows the `[SomeError]` line.
        after = text[m.end():].strip().splitlines() if m else []
        message = " ".join(s.strip() for s in after if s.strip() and not is_prompt(s)) or None
    return {
        "message": message,
        "reboot_required": _bool_or_none(kv.get("rebootrequired")),
        "vibs_installed": _vib_ids(kv.get("vibsinstalled")),
        "vibs_removed": _vib_ids(kv.get("vibsremoved")),
        "vibs_skipped": _vib_ids(kv.get("vibsskipped")),
        "error": error,
    }


def sniff_esxi_vib_install(text: str) -> int:
    t = text
    if re.search(r"^\s*(Installation|Removal) Result\s*$", t, re.M) and "Reboot Required:" in t:
        return 95
    if re.search(r"^\s*VIBs Installed:", t, re.M) and "Reboot Required:" in t:
        return 85
    if _has_header(t, ("Message", "RebootRequired", "VIBsInstalled")):
        return 90
    if re.search(r"^\s*\[\w+(?:Error|Exception)\]\s*$", t, re.M) and re.search(r"\bVIB\b|software vib", t):
        return 60
    return 0
