"""The named property-collector queries (`QUERIES`) and the JSON the transport prints for them (`render`)."""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Callable, Iterable
from typing import Any

from pyVmomi import vim, vmodl

log = logging.getLogger("roce_wizard.transports.vsphere")

PC = vmodl.query.PropertyCollector


# ---------------------------------------------------------------------------- reading vSphere


def _retrieve(si: Any, specs: dict[type, list[str]]) -> list[tuple[Any, dict[str, Any]]]:
    """One RetrieveContents over a container view of the given types: [(object, {path: value})]."""
    content = si.RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, list(specs), True)
    try:
        spec = PC.FilterSpec(
            objectSet=[PC.ObjectSpec(obj=view, skip=True, selectSet=[
                PC.TraversalSpec(name="view", path="view", skip=False, type=vim.view.ContainerView)])],
            propSet=[PC.PropertySpec(type=t, pathSet=["name", *paths]) for t, paths in specs.items()],
        )
        out = []
        for obj in content.propertyCollector.RetrieveContents([spec]) or []:
            out.append((obj.obj, {p.name: p.val for p in obj.propSet or []}))
        return out
    finally:
        try:
            view.Destroy()
        except Exception as exc:  # noqa: BLE001 - the read is done; a leftover view expires with the session
            log.debug("could not destroy a container view: %s", exc)


def _plain(value: Any) -> Any:
    """JSON-able form of a property value (datetimes ISO 8601, enums as their strings)."""
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return str(value)


def _ref(obj: Any, names: dict[str, str]) -> dict[str, Any] | None:
    if obj is None:
        return None
    moid = getattr(obj, "_moId", None)
    return {"_moId": moid, "name": names.get(moid)}


def _attrs(obj: Any, names: Iterable[str]) -> dict[str, Any]:
    return {n: _plain(getattr(obj, n, None)) for n in names}


def _about(si: Any) -> dict[str, Any]:
    about = si.content.about
    return {"fullName": about.fullName, "apiVersion": about.apiVersion, "instanceUuid": about.instanceUuid}


PASSTHRU_FIELDS = ("id", "passthruCapable", "passthruEnabled", "passthruActive", "dependentDevice")
SRIOV_FIELDS = ("sriovCapable", "sriovEnabled", "sriovActive", "numVirtualFunctionRequested",
                "numVirtualFunction", "maxVirtualFunctionSupported")
HOST_PATHS = ["runtime.connectionState", "runtime.bootTime", "runtime.inMaintenanceMode", "summary.rebootRequired",
              "config.powerSystemInfo.currentPolicy", "config.network.pnic", "config.pciPassthruInfo"]


def query_hosts(si: Any) -> dict[str, Any]:
    hosts = []
    for _obj, props in sorted(_retrieve(si, {vim.HostSystem: HOST_PATHS}), key=lambda o: o[1].get("name", "")):
        policy = props.get("config.powerSystemInfo.currentPolicy")
        passthru = []
        for info in props.get("config.pciPassthruInfo") or []:
            entry = {"_type": getattr(info, "_wsdlName", type(info).__name__), **_attrs(info, PASSTHRU_FIELDS)}
            if isinstance(info, vim.host.SriovInfo):
                entry.update(_attrs(info, SRIOV_FIELDS))
            passthru.append(entry)
        hosts.append({
            "name": props.get("name"),
            "runtime.connectionState": _plain(props.get("runtime.connectionState")),
            "runtime.bootTime": _plain(props.get("runtime.bootTime")),
            "runtime.inMaintenanceMode": _plain(props.get("runtime.inMaintenanceMode")),
            "summary.rebootRequired": _plain(props.get("summary.rebootRequired")),
            "config.powerSystemInfo.currentPolicy": (
                {"key": _plain(policy.key), "shortName": _plain(policy.shortName)} if policy is not None else None),
            "config.network.pnic": [{"device": p.device, "pci": p.pci, "driver": p.driver}
                                    for p in props.get("config.network.pnic") or []],
            "config.pciPassthruInfo": passthru,
        })
    return {"query": "vsphere hosts", "about": _about(si), "hosts": hosts}


VM_PATHS = ["runtime.host", "runtime.powerState", "config.template", "config.hardware.memoryMB",
            "config.hardware.numCPU", "config.memoryReservationLockedToMax", "config.memoryAllocation",
            "config.cpuAllocation", "config.latencySensitivity", "config.hardware.device"]


def _backing(backing: Any, pg_names: dict[str, str], switch_names: dict[str, str]) -> dict[str, Any] | None:
    if backing is None:
        return None
    out: dict[str, Any] = {"_type": getattr(backing, "_wsdlName", type(backing).__name__)}
    port = getattr(backing, "port", None)
    if port is not None:  # on a distributed port group
        out["port.switchUuid"] = port.switchUuid
        out["port.portgroupKey"] = port.portgroupKey
        out["portgroupName"] = pg_names.get(port.portgroupKey)
        out["switchName"] = switch_names.get(port.switchUuid)
    if getattr(backing, "deviceName", None) is not None:  # a standard network
        out["deviceName"] = backing.deviceName
    return out


def query_vms(si: Any) -> dict[str, Any]:
    found = _retrieve(si, {
        vim.VirtualMachine: VM_PATHS,
        vim.HostSystem: ["summary.hardware.cpuMhz"],
        vim.dvs.DistributedVirtualPortgroup: ["key"],
        vim.DistributedVirtualSwitch: ["uuid"],
    })
    host_names = {o._moId: p.get("name") for o, p in found if isinstance(o, vim.HostSystem)}
    pg_names = {p.get("key"): p.get("name") for o, p in found if isinstance(o, vim.dvs.DistributedVirtualPortgroup)}
    switch_names = {p.get("uuid"): p.get("name") for o, p in found if isinstance(o, vim.DistributedVirtualSwitch)}
    vms = []
    for _obj, props in sorted(((o, p) for o, p in found if isinstance(o, vim.VirtualMachine)),
                              key=lambda o: o[1].get("name", "")):
        if props.get("config.template"):
            continue
        mem, cpu = props.get("config.memoryAllocation"), props.get("config.cpuAllocation")
        latency = props.get("config.latencySensitivity")
        cards = []
        for dev in props.get("config.hardware.device") or []:
            if not isinstance(dev, vim.vm.device.VirtualSriovEthernetCard):
                continue
            pf = getattr(getattr(dev, "sriovBacking", None), "physicalFunctionBacking", None)
            cards.append({
                "_type": "VirtualSriovEthernetCard",
                "key": _plain(dev.key),
                "deviceInfo.label": dev.deviceInfo.label if dev.deviceInfo is not None else None,
                "sriovBacking.physicalFunctionBacking.id": pf.id if pf is not None else None,
                "allowGuestOSMtuChange": _plain(dev.allowGuestOSMtuChange),
                "backing": _backing(dev.backing, pg_names, switch_names),
            })
        vms.append({
            "name": props.get("name"),
            "runtime.host": _ref(props.get("runtime.host"), host_names),
            "runtime.powerState": _plain(props.get("runtime.powerState")),
            "config.hardware.memoryMB": _plain(props.get("config.hardware.memoryMB")),
            "config.hardware.numCPU": _plain(props.get("config.hardware.numCPU")),
            "config.memoryReservationLockedToMax": _plain(props.get("config.memoryReservationLockedToMax")),
            "config.memoryAllocation.reservation": _plain(mem.reservation) if mem is not None else None,
            "config.cpuAllocation.reservation": _plain(cpu.reservation) if cpu is not None else None,
            "config.latencySensitivity.level": _plain(latency.level) if latency is not None else None,
            "sriovAdapters": cards,
        })
    hosts = [{"_moId": o._moId, "name": p.get("name"), "summary.hardware.cpuMhz": _plain(p.get("summary.hardware.cpuMhz"))}
             for o, p in sorted(found, key=lambda o: o[1].get("name", "")) if isinstance(o, vim.HostSystem)]
    return {"query": "vsphere vms", "about": _about(si), "vms": vms, "hostSystems": hosts}


DVS_PATHS = ["uuid", "config.maxMtu", "config.host", "config.uplinkPortgroup", "portgroup"]


def query_dvs(si: Any) -> dict[str, Any]:
    found = _retrieve(si, {
        vim.DistributedVirtualSwitch: DVS_PATHS,
        vim.dvs.DistributedVirtualPortgroup: ["key", "config.uplink"],
        vim.HostSystem: [],
        vim.Datacenter: [],
    })
    names = {o._moId: p.get("name") for o, p in found}
    pgs = {o._moId: p for o, p in found if isinstance(o, vim.dvs.DistributedVirtualPortgroup)}
    switches = []
    for _obj, props in sorted(((o, p) for o, p in found if isinstance(o, vim.DistributedVirtualSwitch)),
                              key=lambda o: o[1].get("name", "")):
        uplinks = {getattr(r, "_moId", None) for r in props.get("config.uplinkPortgroup") or []}
        portgroups = []
        for ref in props.get("portgroup") or []:
            pg = pgs.get(ref._moId, {})
            # an uplink port group says so itself (config.uplink), or the switch lists it
            uplink = bool(pg.get("config.uplink")) or ref._moId in uplinks
            portgroups.append({"_moId": ref._moId, "name": names.get(ref._moId), "key": pg.get("key"),
                               "config.uplink": uplink})
        members = []
        for member in props.get("config.host") or []:
            config = member.config
            backing = getattr(config, "backing", None) if config is not None else None
            members.append({
                "config.host": _ref(config.host if config is not None else None, names),
                "config.backing.pnicSpec": [{"pnicDevice": s.pnicDevice, "uplinkPortgroupKey": s.uplinkPortgroupKey}
                                            for s in getattr(backing, "pnicSpec", None) or []],
            })
        switches.append({
            "name": props.get("name"),
            "uuid": props.get("uuid"),
            "config.maxMtu": _plain(props.get("config.maxMtu")),
            "portgroup": portgroups,
            "config.host": members,
        })
    datacenters = sorted(p.get("name") for o, p in found if isinstance(o, vim.Datacenter))
    return {"query": "vsphere dvs", "about": _about(si), "datacenters": datacenters, "switches": switches}


QUERIES: dict[str, Callable[[Any], dict[str, Any]]] = {
    "vsphere hosts": query_hosts,
    "vsphere vms": query_vms,
    "vsphere dvs": query_dvs,
}


def render(doc: dict[str, Any]) -> str:
    """The document as the transport prints it: valid JSON with one object per line in its lists,
    so that a finding's evidence can quote the line about one host, VM or switch."""
    parts = []
    for key, value in doc.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            items = ",\n".join(" " + json.dumps(v, sort_keys=False) for v in value)
            parts.append(f"{json.dumps(key)}: [\n{items}\n]")
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value)}")
    return "{" + ",\n".join(parts) + "}\n"
