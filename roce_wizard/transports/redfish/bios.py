"""Staging BIOS settings (`bios_set`) and reading them (`bios_document`, `vendor_of`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from roce_wizard.transports.redfish.client import _http_error, _json, _path, redfish_message
from roce_wizard.transports.redfish.features import SETTINGS_SELECT

if TYPE_CHECKING:
    from roce_wizard.transports.redfish.session import RedfishSession

# Manufacturer strings and Oem keys -> the vendor names checks know
_VENDORS = (("dell", "dell"), ("hpe", "hpe"), ("hewlett", "hpe"), ("hp", "hpe"), ("lenovo", "lenovo"),
            ("supermicro", "supermicro"), ("fujitsu", "fujitsu"), ("cisco", "cisco"), ("inspur", "inspur"))


# ---------------------------------------------------------------------------- staging BIOS settings

class _Refused(Exception):
    def __init__(self, message: str, status: int = 1):
        super().__init__(message)
        self.status = status


async def _get_json(session: RedfishSession, path: str) -> dict[str, Any]:
    resp = await session._get(path)
    body = _json(resp)
    if not 200 <= resp.status_code < 300 or not isinstance(body, dict):
        raise _Refused(_http_error(path, resp))
    return body


async def _registry(session: RedfishSession, bios_uri: str, bios: dict[str, Any]) -> dict[str, dict[str, Any]] | None:
    """The BIOS attribute registry by attribute name: iDRAC serves it at …/Bios/BiosRegistry, others
    through /redfish/v1/Registries (the registry named by Bios.AttributeRegistry); None when neither."""
    candidates = [bios_uri.rstrip("/") + "/BiosRegistry"]
    name = bios.get("AttributeRegistry")
    if isinstance(name, str) and name:
        try:
            registries = await _get_json(session, "/redfish/v1/Registries")
            for member in registries.get("Members") or []:
                uri = member.get("@odata.id") if isinstance(member, dict) else None
                if uri and uri.rstrip("/").rsplit("/", 1)[-1] in (name, name.rsplit(".", 1)[0]):
                    info = await _get_json(session, _path(uri))
                    candidates += [loc.get("Uri") for loc in info.get("Location") or [] if isinstance(loc, dict)
                                   and loc.get("Uri")]
        except _Refused:
            pass
    for uri in candidates:
        resp = await session._get(_path(uri))
        body = _json(resp)
        if 200 <= resp.status_code < 300 and isinstance(body, dict):
            entries = ((body.get("RegistryEntries") or {}).get("Attributes")) or []
            return {e["AttributeName"]: e for e in entries if isinstance(e, dict) and e.get("AttributeName")}
    return None


def _typed(name: str, value: str, entry: dict[str, Any] | None, current: Any) -> Any:
    """The value as the BIOS takes it (registry Type, else the current value's type); _Refused(2)
    when the registry says no."""
    kind = (entry or {}).get("Type") or ("Integer" if isinstance(current, int) and not isinstance(current, bool)
                                         else "Boolean" if isinstance(current, bool) else "String")
    if kind == "Enumeration" and entry is not None:
        names = [v.get("ValueName") for v in entry.get("Value") or [] if isinstance(v, dict)]
        if value not in names:
            raise _Refused(f"redfish bios-set: {value!r} is not a value of {name} (the BIOS registry allows "
                           f"{', '.join(map(str, names))})", 2)
        return value
    if kind == "Integer":
        if not re.fullmatch(r"-?\d+", value):
            raise _Refused(f"redfish bios-set: {name} takes an integer, not {value!r}", 2)
        number = int(value)
        low, high = (entry or {}).get("LowerBound"), (entry or {}).get("UpperBound")
        if (isinstance(low, int) and number < low) or (isinstance(high, int) and number > high):
            raise _Refused(f"redfish bios-set: {name}={number} is outside {low}..{high}", 2)
        return number
    if kind == "Boolean":
        if value.lower() not in ("true", "false"):
            raise _Refused(f"redfish bios-set: {name} takes true or false, not {value!r}", 2)
        return value.lower() == "true"
    return value


async def _scheduled_bios_jobs(session: RedfishSession, manager: str) -> list[dict[str, Any]]:
    jobs = await _get_json(session, manager.rstrip("/") + "/Jobs")
    out = []
    for member in jobs.get("Members") or []:
        uri = member.get("@odata.id") if isinstance(member, dict) else None
        if not uri:
            continue
        job = await _get_json(session, _path(uri))
        if job.get("JobState") in ("Scheduled", "New") and job.get("JobType") in ("BIOSConfiguration", None):
            out.append({**job, "@odata.id": uri})
    return out


async def bios_set(session: RedfishSession, wanted: dict[str, str]) -> str:
    """Stage `wanted` BIOS attributes to apply at the server's next reboot; the one-line outcome.

    Names and values are checked against the BIOS attribute registry (else the attributes the BIOS
    shows) before anything is sent. iDRAC: the values staged so far and the new ones go into one
    PATCH of Bios/Settings, then one BIOS configuration job (`POST …/Jobs {TargetSettingsURI}`);
    a job already scheduled is replaced by one holding both (iDRAC refuses a PATCH while one is
    scheduled, SYS011). Other BMCs (iLO): the PATCH itself is applied at the next reset. Values
    already current, or already staged with a scheduled job, send nothing."""
    try:  # what the BIOS has: as `redfish bios` reads it ($expand / $select where the BMC has them)
        system_uri, system = await session._system()
        bios_uri = (system.get("Bios") or {}).get("@odata.id")
        if not bios_uri:
            raise _Refused(f"{session._bmc.name}: system {system_uri} has no Bios resource")
        bios = await session._object(_path(bios_uri))
        settings_uri = _path(((bios.get("@Redfish.Settings") or {}).get("SettingsObject") or {}).get("@odata.id")
                              or bios_uri.rstrip("/") + "/Settings")
        settings = await session._selected(settings_uri, SETTINGS_SELECT)
    except _Refused as exc:
        raise _Refused(str(exc)) from None  # exit 1: the BMC refused
    doc = bios_document(session._bmc.root, system, bios, settings)
    current, pending = doc["attributes"], doc["pending"] or {}
    registry = await _registry(session, _path(bios_uri), bios)
    values: dict[str, Any] = {}
    for name, text in wanted.items():
        entry = (registry or {}).get(name)
        if (registry is not None and entry is None) or (registry is None and name not in current):
            where = "the BIOS attribute registry" if registry is not None else "the attributes the BIOS shows"
            raise _Refused(f"redfish bios-set: {name} is not in {where} of {session._bmc.name}", 2)
        values[name] = _typed(name, text, entry, current.get(name))
    host = doc["system"].get("host_name") or session.target.host or "the server"
    shown = " ".join(f"{k}={v}" for k, v in values.items())
    # what must change: not current yet, or something else staged for it
    change = {k: v for k, v in values.items() if current.get(k) != v or pending.get(k, v) != v}
    if not change:
        return f"{shown}: already the current BIOS settings"
    dell = doc["vendor"] == "dell"
    manager = doc["system"].get("manager_uri")
    jobs = await _scheduled_bios_jobs(session, manager) if dell and manager else []
    if all(pending.get(k) == v for k, v in change.items()) and (jobs or not dell):
        where = f" by job {jobs[0].get('Id')}" if jobs else ""
        return f"{shown}: already staged{where}; applies at the next reboot of {host}"
    body = {**pending, **change} if dell else change
    for job in jobs:  # iDRAC: one job at a time; the new one commits the old one's values too
        resp = await session._call("DELETE", _path(job["@odata.id"]))
        if not 200 <= resp.status_code < 300:
            raise _Refused(f"DELETE {job['@odata.id']}: HTTP {resp.status_code}: {redfish_message(resp)}")
    resp = await session._call("PATCH", settings_uri, {"Attributes": body})
    if not 200 <= resp.status_code < 300:
        raise _Refused(f"PATCH {settings_uri}: HTTP {resp.status_code}: {redfish_message(resp)}")
    if not dell:
        return f"staged {shown} in {settings_uri}; applies at the next reset of {host}"
    resp = await session._call("POST", manager.rstrip("/") + "/Jobs", {"TargetSettingsURI": settings_uri})
    if not 200 <= resp.status_code < 300:
        raise _Refused(f"POST {manager}/Jobs: HTTP {resp.status_code}: {redfish_message(resp)}")
    job_uri = resp.headers.get("Location") or ""
    replaced = f" (replacing {', '.join(str(j.get('Id')) for j in jobs)})" if jobs else ""
    return (f"staged {shown} in {settings_uri}; BIOS configuration job {job_uri.rsplit('/', 1)[-1] or '?'} "
            f"scheduled{replaced}: applies at the next reboot of {host}")


def bios_document(root: dict[str, Any], system: dict[str, Any], bios: dict[str, Any],
                  settings: dict[str, Any] | None) -> dict[str, Any]:
    """The `redfish bios` JSON: vendor, system identity, current attributes and pending changes.

    Pending = what Bios/Settings would change (iDRAC lists only staged values there; iLO lists the
    whole future BIOS, so unchanged ones are left out); None when Bios/Settings could not be read."""
    attributes = bios.get("Attributes") if isinstance(bios.get("Attributes"), dict) else {}
    future = (settings or {}).get("Attributes") if isinstance((settings or {}).get("Attributes"), dict) else {}
    # no readable Bios/Settings: what is staged is unknown (None), not "nothing"
    pending = {k: v for k, v in future.items() if attributes.get(k) != v} if settings is not None else None
    managers = [m.get("@odata.id") for m in (system.get("Links") or {}).get("ManagedBy") or [] if isinstance(m, dict)]
    return {
        "vendor": vendor_of(root, system),
        "system": {
            "id": system.get("Id"),
            "manufacturer": system.get("Manufacturer"),
            "model": system.get("Model"),
            "serial": system.get("SerialNumber") or system.get("SKU"),
            "bios_version": system.get("BiosVersion"),
            "host_name": system.get("HostName"),
            "power_state": system.get("PowerState"),
            "manager_uri": managers[0] if managers else None,
            "reset_uri": ((system.get("Actions") or {}).get("#ComputerSystem.Reset") or {}).get("target"),
        },
        "product": root.get("Product"),
        "attribute_registry": bios.get("AttributeRegistry"),
        "attributes": attributes,
        "pending": pending,
    }


def vendor_of(root: dict[str, Any], system: dict[str, Any]) -> str | None:
    """"dell", "hpe", … from the service root's Oem section, else the system's Manufacturer."""
    candidates = [*((root.get("Oem") or {}) if isinstance(root.get("Oem"), dict) else {}),
                  *((system.get("Oem") or {}) if isinstance(system.get("Oem"), dict) else {}),
                  system.get("Manufacturer") or "", root.get("Vendor") or ""]
    for text in candidates:
        word = str(text).strip().lower()
        for prefix, vendor in _VENDORS:
            if word == prefix or word.startswith(prefix + " ") or (len(prefix) > 2 and word.startswith(prefix)):
                return vendor
    manufacturer = (system.get("Manufacturer") or "").strip()
    return manufacturer.split()[0].lower() if manufacturer else None
