"""vSphere property-collector reads (the JSON `transports/vsphere.py` prints) -> facts.

The transport prints vSphere's own property names (``config.pciPassthruInfo``,
``summary.rebootRequired``, …) with one host / VM / switch per line; these parsers give the checks
snake_case facts (docs/facts.md "vSphere"). A document is recognised by its ``query`` line, else by
its shape; a prompt or command line pasted before it is skipped. A property vSphere did not return
is null, never guessed.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from roce_wizard.parsers.base import Facts, ParseError, Parser, lines

__all__ = ["PARSERS", "find_object", "fragment"]

QUERY_OF = {"vsphere_hosts": "vsphere hosts", "vsphere_vms": "vsphere vms", "vsphere_dvs": "vsphere dvs"}
LIST_OF = {"vsphere_hosts": "hosts", "vsphere_vms": "vms", "vsphere_dvs": "switches"}
# a key only that query's objects carry: how a document without its `query` line is recognised
MARK_OF = {"vsphere_hosts": "config.pciPassthruInfo", "vsphere_vms": "sriovAdapters", "vsphere_dvs": "config.maxMtu"}


def _load(kind: str, text: str) -> dict[str, Any]:
    src = lines(text)
    start = next((i for i, ln in enumerate(src) if ln.lstrip().startswith("{")), None)
    if start is None:
        raise ParseError(kind, "no JSON object found (expected the output of `roce-wizard`'s "
                               f"`{QUERY_OF[kind]}` query)")
    chunk = "\n".join(src[start:])
    try:
        doc, end = json.JSONDecoder().raw_decode(chunk, chunk.index("{"))
    except json.JSONDecodeError as exc:
        raise ParseError(kind, f"invalid JSON: {exc.msg}", start + exc.lineno) from None
    rest = chunk[end:].strip()
    if rest:
        raise ParseError(kind, f"unexpected text after the JSON document: {rest.splitlines()[0][:60]!r}",
                         start + chunk[:end].count("\n") + 1)
    if not isinstance(doc, dict):
        raise ParseError(kind, "expected a JSON object", start + 1)
    query = doc.get("query")
    items = doc.get(LIST_OF[kind])
    if query not in (None, QUERY_OF[kind]):
        raise ParseError(kind, f"this is the output of `{query}`, not `{QUERY_OF[kind]}`", start + 1)
    if not isinstance(items, list) or not all(isinstance(o, dict) for o in items):
        raise ParseError(kind, f"no `{LIST_OF[kind]}` list of objects in the document", start + 1)
    return doc


def _about(doc: dict[str, Any]) -> dict[str, Any] | None:
    about = doc.get("about")
    if not isinstance(about, dict):
        return None
    return {"full_name": about.get("fullName"), "api_version": about.get("apiVersion")}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _list(value: Any) -> list[Any]:
    """A list property; anything else (null, a number, an object) reads as no entries."""
    return value if isinstance(value, list) else []


def _ref_name(value: Any) -> str | None:
    if isinstance(value, dict):
        return _str(value.get("name"))
    return _str(value)


# ---------------------------------------------------------------------------- hosts


def _passthru(entry: dict[str, Any]) -> dict[str, Any]:
    sriov = entry.get("_type") == "HostSriovInfo" or "sriovEnabled" in entry
    out = {
        "id": _str(entry.get("id")),
        "sriov": sriov,  # a HostSriovInfo (an SR-IOV capable PF), not a plain passthrough device
        "passthru_capable": _bool(entry.get("passthruCapable")),
        "passthru_enabled": _bool(entry.get("passthruEnabled")),
        "passthru_active": _bool(entry.get("passthruActive")),
    }
    if sriov:
        out.update({
            "sriov_capable": _bool(entry.get("sriovCapable")),
            "sriov_enabled": _bool(entry.get("sriovEnabled")),
            "sriov_active": _bool(entry.get("sriovActive")),
            "num_vfs_requested": _int(entry.get("numVirtualFunctionRequested")),
            "num_vfs": _int(entry.get("numVirtualFunction")),
            "max_vfs_supported": _int(entry.get("maxVirtualFunctionSupported")),
        })
    return out


def parse_vsphere_hosts(text: str) -> Facts:
    doc = _load("vsphere_hosts", text)
    hosts = []
    for h in doc["hosts"]:
        policy = h.get("config.powerSystemInfo.currentPolicy")
        hosts.append({
            "name": _str(h.get("name")),
            "connection_state": _str(h.get("runtime.connectionState")),
            "boot_time": _str(h.get("runtime.bootTime")),
            "in_maintenance_mode": _bool(h.get("runtime.inMaintenanceMode")),
            "reboot_required": _bool(h.get("summary.rebootRequired")),
            "power_policy": ({"key": _int(policy.get("key")), "short_name": _str(policy.get("shortName"))}
                             if isinstance(policy, dict) else None),
            "pnics": [{"device": _str(p.get("device")), "pci": _str(p.get("pci")), "driver": _str(p.get("driver"))}
                      for p in _list(h.get("config.network.pnic")) if isinstance(p, dict)],
            "pci_passthru": [_passthru(e) for e in _list(h.get("config.pciPassthruInfo")) if isinstance(e, dict)],
        })
    return {"vcenter": _about(doc), "hosts": hosts}


# ---------------------------------------------------------------------------- VMs


def _adapter(card: dict[str, Any]) -> dict[str, Any]:
    backing = card.get("backing") if isinstance(card.get("backing"), dict) else {}
    btype = _str(backing.get("_type")) or ""
    if "port.portgroupKey" in backing or "DistributedVirtualPort" in btype:
        network = {"backing": "dvs", "switch": _str(backing.get("switchName")),
                   "switch_uuid": _str(backing.get("port.switchUuid")),
                   "portgroup": _str(backing.get("portgroupName")),
                   "portgroup_key": _str(backing.get("port.portgroupKey")), "network": None}
    elif backing:
        network = {"backing": "network" if "NetworkBacking" in btype else (btype or "unknown"),
                   "switch": None, "switch_uuid": None, "portgroup": None, "portgroup_key": None,
                   "network": _str(backing.get("deviceName"))}
    else:
        network = {"backing": None, "switch": None, "switch_uuid": None, "portgroup": None, "portgroup_key": None,
                   "network": None}
    return {
        "label": _str(card.get("deviceInfo.label")),
        "key": _int(card.get("key")),
        "pf_id": _str(card.get("sriovBacking.physicalFunctionBacking.id")),
        "allow_guest_mtu_change": _bool(card.get("allowGuestOSMtuChange")),
        **network,
    }


def parse_vsphere_vms(text: str) -> Facts:
    doc = _load("vsphere_vms", text)
    cpu_mhz = {_str(h.get("name")): _int(h.get("summary.hardware.cpuMhz"))
               for h in _list(doc.get("hostSystems")) if isinstance(h, dict)}
    vms = []
    for v in doc["vms"]:
        host = _ref_name(v.get("runtime.host"))
        vms.append({
            "name": _str(v.get("name")),
            "host": host,
            "power_state": _str(v.get("runtime.powerState")),
            "memory_mb": _int(v.get("config.hardware.memoryMB")),
            "num_cpu": _int(v.get("config.hardware.numCPU")),
            "memory_reservation_locked_to_max": _bool(v.get("config.memoryReservationLockedToMax")),
            "memory_reservation_mb": _int(v.get("config.memoryAllocation.reservation")),
            "cpu_reservation_mhz": _int(v.get("config.cpuAllocation.reservation")),
            "latency_sensitivity": _str(v.get("config.latencySensitivity.level")),
            "host_cpu_mhz": cpu_mhz.get(host),
            "sriov_adapters": [_adapter(c) for c in _list(v.get("sriovAdapters")) if isinstance(c, dict)],
        })
    return {"vcenter": _about(doc), "vms": vms}


# ---------------------------------------------------------------------------- distributed switches


# the name vSphere gives a VDS's uplink port group ("RoCE-DVS-DVUplinks-31"): a fallback for a vCenter
# (govmomi's simulator) that sets neither config.uplink nor the switch's config.uplinkPortgroup
_UPLINK_NAME = re.compile(r"-DVUplinks(?:-[0-9]+)?$")


def parse_vsphere_dvs(text: str) -> Facts:
    doc = _load("vsphere_dvs", text)
    switches = []
    for s in doc["switches"]:
        members: dict[str, list[str]] = {}
        for m in _list(s.get("config.host")):
            if not isinstance(m, dict):
                continue
            name = _ref_name(m.get("config.host"))
            if name is None:
                continue
            members[name] = [p["pnicDevice"] for p in _list(m.get("config.backing.pnicSpec"))
                             if isinstance(p, dict) and isinstance(p.get("pnicDevice"), str)]
        switches.append({
            "name": _str(s.get("name")),
            "uuid": _str(s.get("uuid")),
            "max_mtu": _int(s.get("config.maxMtu")),
            "portgroups": [{"name": _str(p.get("name")), "key": _str(p.get("key")),
                            "uplink": bool(p.get("config.uplink"))
                            or bool(_UPLINK_NAME.search(_str(p.get("name")) or ""))}
                           for p in _list(s.get("portgroup")) if isinstance(p, dict)],
            "members": members,
        })
    datacenters = [d for d in _list(doc.get("datacenters")) if isinstance(d, str)]
    return {"vcenter": _about(doc), "datacenters": datacenters, "switches": switches}


# ---------------------------------------------------------------------------- sniffing


def _sniffer(kind: str):
    def sniff(text: str) -> int:
        head = text.lstrip()[:4000]
        if re.search(r'"query"\s*:\s*"' + re.escape(QUERY_OF[kind]) + '"', head):
            return 100
        if re.search(r'"' + LIST_OF[kind] + r'"\s*:\s*\[', text) and f'"{MARK_OF[kind]}"' in text:
            return 80
        return 0

    return sniff


# ---------------------------------------------------------------------------- evidence helpers


def find_object(raw: str | None, name: str) -> tuple[int, dict[str, Any]] | None:
    """(1-based line, object) of the host / VM / switch called `name` in a raw query output: the first
    object line that names it (`"name": "…"` as json.dumps writes it) and whose own name it is."""
    if not raw:
        return None
    return _objects_by_name(raw).get(name)


@functools.lru_cache(maxsize=8)
def _objects_by_name(raw: str) -> dict[str, tuple[int, dict[str, Any]]]:
    """Every named object line of one raw output, read once: a check asks for each host and VM in it,
    and scanning the whole output per host made the evidence quadratic in the hosts. Not to be mutated."""
    out: dict[str, tuple[int, dict[str, Any]]] = {}
    for number, line in enumerate(lines(raw), 1):
        s = line.strip().rstrip(",")
        if not (s.startswith("{") and '"name": ' in s):
            continue
        try:
            obj = json.loads(s)
        except (json.JSONDecodeError, RecursionError):
            continue
        name = obj.get("name") if isinstance(obj, dict) else None
        if isinstance(name, str) and name not in out and f'"name": {json.dumps(name)}' in s:
            out[name] = number, obj
    return out


def fragment(raw: str | None, name: str, *keys: str, match: dict[str, Any] | None = None) -> str | None:
    """The part of a raw query output about one object, for a finding's evidence: `name` then the
    given top-level keys of its line (e.g. "summary.rebootRequired"); a list's entries are narrowed
    to those that carry every `match` item (e.g. {"id": "0000:3b:00.0"})."""
    found = find_object(raw, name)
    if found is None:
        return None
    number, obj = found
    picked: dict[str, Any] = {}
    for key in keys:
        if key not in obj:
            continue
        value = obj[key]
        if match and isinstance(value, list):
            value = [v for v in value if isinstance(v, dict) and all(v.get(k) == w for k, w in match.items())]
        picked[key] = value
    return f"line {number}: {name}: " + json.dumps(picked)


PARSERS: dict[str, Parser] = {
    "vsphere_hosts": Parser("vsphere_hosts", parse_vsphere_hosts, _sniffer("vsphere_hosts"),
                            "vSphere hosts (property collector): SR-IOV per PF, reboot required, boot time, "
                            "power policy, pnics"),
    "vsphere_vms": Parser("vsphere_vms", parse_vsphere_vms, _sniffer("vsphere_vms"),
                          "vSphere VMs (property collector): SR-IOV adapters, reservations, latency sensitivity"),
    "vsphere_dvs": Parser("vsphere_dvs", parse_vsphere_dvs, _sniffer("vsphere_dvs"),
                          "vSphere distributed switches (property collector): MTU, port groups, host uplinks"),
}
