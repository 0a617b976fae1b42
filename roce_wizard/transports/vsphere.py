"""vSphere transport for vCenter targets (pyVmomi, run in threads).

- TLS is verified. The CA comes from the target's ``options.ca_file`` (else the system store); a
  certificate that does not verify is refused (`ConnectErrorKind.TLS`) with a message naming both
  ways out: ``options: {ca_file: …}`` or, knowingly, ``options: {insecure: true}``. An insecure
  target still connects, and every run appends a warning to ``transport.warnings`` (the CLI prints
  them at the end).
- One ServiceInstance (one login) per target per run, shared by every query; ``close()`` logs out.
  A semaphore bounds concurrent logins; logins and queries have timeouts.
- ``session(target).run(command)`` answers a named QUERY, not a shell command: ``vsphere hosts``,
  ``vsphere vms``, ``vsphere dvs`` (``QUERIES``). Each is one property-collector RetrieveContents
  over a container view (not a round trip per property) and prints a JSON document of what the
  vsphere checks read, in vSphere's own property names; `parsers/vsphere.py` turns it into facts.
  Managed object references print as ``{"_moId": …, "name": …}``, their names read in the same
  RetrieveContents. An unknown query exits 2; a vSphere fault exits 1 (stderr says which); only a
  lost connection raises TransportError.
- `wait_for_task` polls a task's state with a timeout (pyVim.task.WaitForTask misreads some
  simulator tasks; DESIGN.md) — for the fixes.

Passwords come from ``password_resolver(target)`` and never appear in messages or logs.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import errno
import http.client
import json
import logging
import re
import shlex
import socket
import ssl
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Self

from pyVim.connect import Disconnect, SmartConnect
from pyVmomi import vim, vmodl

from roce_wizard.model import Target
from roce_wizard.transports.base import CommandResult, ConnectErrorKind, TransportError

__all__ = ["ACTIONS", "QUERIES", "VSphereSession", "VSphereTransport", "action_line", "parse_action", "ssl_context_for",
           "wait_for_task"]

log = logging.getLogger(__name__)

DEFAULT_PORT = 443
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


# ---------------------------------------------------------------------------- tasks


def wait_for_task(task: Any, timeout: float = 300.0, poll: float = 0.1) -> Any:
    """Poll a vSphere task until it succeeds (its result), fails (raises its fault) or `timeout`
    seconds pass (TimeoutError naming the task and its state). Blocking: call it in a thread."""
    deadline = time.monotonic() + timeout
    while True:
        info = task.info
        if info.state == vim.TaskInfo.State.success:
            return info.result
        if info.state == vim.TaskInfo.State.error:
            if info.error is not None:
                raise info.error
            raise RuntimeError(f"task {info.key} failed without saying why")
        if time.monotonic() >= deadline:
            name = info.descriptionId or info.key
            raise TimeoutError(f"task {name} ({info.key}) still {info.state} after {timeout:g}s")
        time.sleep(poll)


# ---------------------------------------------------------------------------- actions
# `vsphere <verb> <args…>` lines a fix step or the reboot orchestration runs (contracts.md §2).
# Parsed with shlex.split; every name is validated before it reaches vCenter; one line of output
# on success. Lines that would change nothing (enter maintenance mode on a host already in it,
# power off a VM that is off) succeed and say so: a resumed run may repeat them.

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:@()+ -]{0,79}$")  # host / VM / VDS / port group names
_PCI_ID = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_VMNIC = re.compile(r"^vmnic\d{1,4}$")
# HostPowerPolicy.shortName ("not localizable", vSphere API) of each policy the action sets; the key is the host's
POWER_POLICY_SHORT_NAMES = {"High Performance": "static", "Balanced": "dynamic", "Low Power": "low"}


class Malformed(ValueError):
    """An action line that does not parse (exit 2)."""


class ActionFault(Exception):
    """A refusal the action itself detects before calling vCenter (exit 1, `vSphere fault <name>`)."""

    def __init__(self, name: str, message: str):
        super().__init__(message)
        self.name = name
        self.message = message


def _name(value: str, what: str) -> str:
    if not _NAME.match(value):
        raise Malformed(f"not a valid {what} name: {value!r}")
    return value


def _int(value: str, what: str, low: int, high: int) -> int:
    if not re.fullmatch(r"\d{1,6}", value) or not low <= int(value) <= high:
        raise Malformed(f"{what} must be a number from {low} to {high}, not {value!r}")
    return int(value)


def _pci_id(value: str) -> str:
    if not _PCI_ID.match(value.lower()):
        raise Malformed(f"not a PCI id (0000:3b:00.0): {value!r}")
    return value.lower()


def _find(si: Any, kind: type, name: str) -> Any:
    content = si.RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, [kind], True)
    try:
        found = [o for o in view.view if o.name == name]
    finally:
        view.Destroy()
    if not found:
        what = {vim.HostSystem: "host", vim.VirtualMachine: "VM", vim.DistributedVirtualSwitch: "distributed switch",
                vim.dvs.DistributedVirtualPortgroup: "distributed port group"}.get(kind, kind.__name__)
        raise ActionFault("NotFound", f"vCenter has no {what} named {name!r}")
    return found[0]


def _host_maintenance(si: Any, timeout: float, mode: str, host_name: str) -> str:
    host = _find(si, vim.HostSystem, host_name)
    inside = bool(host.runtime.inMaintenanceMode)
    if mode == "enter":
        if inside:
            return f"{host_name}: already in maintenance mode"
        running = sorted(vm.name for vm in host.vm or [] if vm.runtime.powerState == "poweredOn")
        if running:  # without DRS the task would wait for them forever: say which instead
            raise ActionFault("InvalidState", f"{host_name} runs powered-on VMs ({', '.join(running)}): power them "
                                              "off (vsphere vm-power shutdown|off <vm>) or migrate them first")
        wait_for_task(host.EnterMaintenanceMode_Task(timeout=0, evacuatePoweredOffVms=False), timeout)
        return f"{host_name}: entered maintenance mode"
    if not inside:
        return f"{host_name}: not in maintenance mode"
    wait_for_task(host.ExitMaintenanceMode_Task(timeout=0), timeout)
    return f"{host_name}: exited maintenance mode"


def _host_reboot(si: Any, timeout: float, host_name: str) -> str:
    host = _find(si, vim.HostSystem, host_name)
    if not host.runtime.inMaintenanceMode:
        raise ActionFault("InvalidState", f"{host_name} is not in maintenance mode: "
                                          f"vsphere host-maintenance enter {host_name} first")
    boot = host.runtime.bootTime
    wait_for_task(host.RebootHost_Task(force=False), timeout)
    return f"{host_name}: reboot started (booted {boot.isoformat() if boot else 'at an unknown time'} before)"


def _vm_power(si: Any, timeout: float, op: str, vm_name: str) -> str:
    vm = _find(si, vim.VirtualMachine, vm_name)
    state = str(vm.runtime.powerState)
    if op == "on":
        if state == "poweredOn":
            return f"{vm_name}: already powered on"
        wait_for_task(vm.PowerOnVM_Task(), timeout)
        return f"{vm_name}: powered on"
    if state == "poweredOff":
        return f"{vm_name}: already powered off"
    if op == "off":
        wait_for_task(vm.PowerOffVM_Task(), timeout)
        return f"{vm_name}: powered off"
    vm.ShutdownGuest()  # not a task: the guest OS shuts down; wait for the VM to be off
    deadline = time.monotonic() + timeout
    while str(vm.runtime.powerState) != "poweredOff":
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{vm_name} still {vm.runtime.powerState} {timeout:g}s after the guest shutdown")
        time.sleep(0.1)
    return f"{vm_name}: guest shut down, powered off"


def _host_sriov(si: Any, timeout: float, host_name: str, pf: str, count: int) -> str:
    host = _find(si, vim.HostSystem, host_name)
    info = next((i for i in host.config.pciPassthruInfo or [] if i.id == pf), None)
    if not isinstance(info, vim.host.SriovInfo):
        raise ActionFault("NotFound", f"{host_name} has no SR-IOV capable PCI device {pf}")
    config = vim.host.SriovConfig(id=pf, sriovEnabled=count > 0, numVirtualFunction=count, passthruEnabled=False)
    host.configManager.pciPassthruSystem.UpdatePassthruConfig([config])
    pending = host.summary.rebootRequired
    return (f"{host_name} {pf}: SR-IOV {'enabled with ' + str(count) + ' VFs' if count else 'disabled'} "
            f"(was {'on' if info.sriovEnabled else 'off'}, {info.numVirtualFunctionRequested} requested)"
            + ("; takes effect at the next reboot (summary.rebootRequired)" if pending else ""))


def _host_power_policy(si: Any, timeout: float, host_name: str, policy: str) -> str:
    """HostPowerSystem.ConfigurePowerPolicy(key) with "a key from one of the policies in availablePolicy"
    (vSphere Web Services API): the key is the host's, found by the policy's non-localized shortName."""
    host = _find(si, vim.HostSystem, host_name)
    power = host.configManager.powerSystem
    short = POWER_POLICY_SHORT_NAMES[policy]
    available = list(getattr(power.capability, "availablePolicy", None) or [])
    chosen = next((p for p in available if p.shortName == short), None)
    if chosen is None:
        offered = ", ".join(sorted(str(p.shortName) for p in available)) or "none"
        raise ActionFault("NotSupported", f"{host_name} offers no {policy} power policy (shortName {short!r}; "
                                          f"capability.availablePolicy: {offered})")
    before = host.config.powerSystemInfo.currentPolicy
    power.ConfigurePowerPolicy(key=chosen.key)
    return f"{host_name}: power policy {policy} (key {chosen.key}; was {before.shortName if before else 'unknown'})"


def _datacenter_of(obj: Any) -> Any:
    while obj is not None and not isinstance(obj, vim.Datacenter):
        obj = obj.parent
    return obj


def _dvs_create(si: Any, timeout: float, dvs_name: str, portgroup: str, mtu: int,
                members: list[tuple[str, list[str]]]) -> str:
    """Create the VDS (maxMtu), its VM port group and add the hosts with their RoCE vmnics as
    uplinks — what vhpc-toolkit's `dvs --create` does; on an existing VDS only what is missing."""
    done: list[str] = []
    hosts = [(_find(si, vim.HostSystem, h), h, nics) for h, nics in members]
    for host, name, nics in hosts:
        known = {p.device for p in host.config.network.pnic or []}
        missing = [n for n in nics if n not in known]
        if missing:
            raise ActionFault("NotFound", f"{name} has no physical NIC {', '.join(missing)}")
    try:
        dvs = _find(si, vim.DistributedVirtualSwitch, dvs_name)
    except ActionFault:
        datacenter = _datacenter_of(hosts[0][0]) if hosts else None
        if datacenter is None:
            content = si.RetrieveContent()
            datacenter = next(e for e in content.rootFolder.childEntity if isinstance(e, vim.Datacenter))
        spec = vim.DistributedVirtualSwitch.CreateSpec(configSpec=vim.dvs.VmwareDistributedVirtualSwitch.ConfigSpec(
            name=dvs_name, maxMtu=mtu))
        dvs = wait_for_task(datacenter.networkFolder.CreateDVS_Task(spec), timeout)
        done.append(f"created {dvs_name} (maxMtu {mtu})")
    if not any(pg.name == portgroup for pg in dvs.portgroup or []):
        wait_for_task(dvs.AddDVPortgroup_Task([vim.dvs.DistributedVirtualPortgroup.ConfigSpec(
            name=portgroup, type="earlyBinding", numPorts=128)]), timeout)
        done.append(f"added port group {portgroup}")
    current = {m.config.host._moId: m for m in dvs.config.host or [] if m.config.host is not None}
    changes = []
    for host, name, nics in hosts:
        backing = vim.dvs.HostMember.PnicBacking(pnicSpec=[vim.dvs.HostMember.PnicSpec(pnicDevice=n) for n in nics])
        member = current.get(host._moId)
        if member is None:
            changes.append(vim.dvs.HostMember.ConfigSpec(operation="add", host=host, backing=backing))
            done.append(f"added {name} with uplinks {','.join(nics)}")
            continue
        have = [s.pnicDevice for s in getattr(member.config.backing, "pnicSpec", None) or []]
        if set(nics) - set(have):
            merged = have + [n for n in nics if n not in have]
            changes.append(vim.dvs.HostMember.ConfigSpec(operation="edit", host=host, backing=vim.dvs.HostMember.PnicBacking(
                pnicSpec=[vim.dvs.HostMember.PnicSpec(pnicDevice=n) for n in merged])))
            done.append(f"gave {name} uplinks {','.join(merged)}")
    if changes:
        wait_for_task(dvs.ReconfigureDvs_Task(vim.dvs.VmwareDistributedVirtualSwitch.ConfigSpec(
            configVersion=dvs.config.configVersion, host=changes)), timeout)
    return f"{dvs_name}: " + ("; ".join(done) if done else "already has the port group and every host")


def _dvs_mtu(si: Any, timeout: float, dvs_name: str, mtu: int) -> str:
    dvs = _find(si, vim.DistributedVirtualSwitch, dvs_name)
    before = dvs.config.maxMtu
    if before == mtu:
        return f"{dvs_name}: maxMtu already {mtu}"
    wait_for_task(dvs.ReconfigureDvs_Task(vim.dvs.VmwareDistributedVirtualSwitch.ConfigSpec(
        configVersion=dvs.config.configVersion, maxMtu=mtu)), timeout)
    return f"{dvs_name}: maxMtu {before} -> {mtu}"


def _reconfigure(vm: Any, spec: Any, timeout: float) -> None:
    wait_for_task(vm.ReconfigVM_Task(spec=spec), timeout)


def _vm_add_vf(si: Any, timeout: float, vm_name: str, pf: str, portgroup: str) -> str:
    """Give the VM an SR-IOV adapter of `pf` on `portgroup` with guest MTU change allowed: add one, or
    correct the first one it has (another PF, another network, MTU change not allowed)."""
    vm = _find(si, vim.VirtualMachine, vm_name)
    pg = _find(si, vim.dvs.DistributedVirtualPortgroup, portgroup)
    switch_uuid = pg.config.distributedVirtualSwitch.uuid
    cards = [d for d in vm.config.hardware.device if isinstance(d, vim.vm.device.VirtualSriovEthernetCard)]

    def right(card: Any) -> bool:
        backing = getattr(getattr(card, "sriovBacking", None), "physicalFunctionBacking", None)
        port = getattr(card.backing, "port", None)
        return (backing is not None and backing.id == pf and port is not None and port.portgroupKey == pg.key
                and bool(card.allowGuestOSMtuChange))

    if any(right(c) for c in cards):
        return f"{vm_name}: already has an SR-IOV adapter of {pf} on {portgroup}"
    if str(vm.runtime.powerState) != "poweredOff":
        raise ActionFault("InvalidPowerState", f"{vm_name} is {vm.runtime.powerState}: an SR-IOV adapter is changed "
                                               f"with the VM powered off (vsphere vm-power shutdown {vm_name})")
    card = cards[0] if cards else vim.vm.device.VirtualSriovEthernetCard(
        key=-1, connectable=vim.vm.device.VirtualDevice.ConnectInfo(startConnected=True, allowGuestControl=True))
    card.allowGuestOSMtuChange = True
    card.backing = vim.vm.device.VirtualEthernetCard.DistributedVirtualPortBackingInfo(
        port=vim.dvs.PortConnection(switchUuid=switch_uuid, portgroupKey=pg.key))
    # vCenter wants the PF's identity as the host shows it (what vhpc-toolkit's `sriov --add` fills in)
    host = vm.runtime.host
    device = next((d for d in (host.hardware.pciDevice if host is not None else None) or [] if d.id == pf), None)
    card.sriovBacking = vim.vm.device.VirtualSriovEthernetCard.SriovBackingInfo(
        physicalFunctionBacking=vim.vm.device.VirtualPCIPassthrough.DeviceBackingInfo(
            id=pf, deviceId=format(device.deviceId & 0xFFFF, "x") if device is not None else "",
            systemId=host.hardware.systemInfo.uuid if host is not None else "",
            vendorId=device.vendorId if device is not None else 0x15B3,
            deviceName=device.deviceName if device is not None else ""))
    operation = "edit" if cards else "add"
    _reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation=operation,
                                                                                      device=card)]), timeout)
    return (f"{vm_name}: {'corrected its' if cards else 'added an'} SR-IOV adapter: {pf} on {portgroup}, "
            "guest MTU change allowed")


def _vm_reserve_memory(si: Any, timeout: float, vm_name: str) -> str:
    vm = _find(si, vim.VirtualMachine, vm_name)
    if vm.config.memoryReservationLockedToMax:
        return f"{vm_name}: memory already reserved (memoryReservationLockedToMax)"
    _reconfigure(vm, vim.vm.ConfigSpec(memoryReservationLockedToMax=True), timeout)
    return f"{vm_name}: all guest memory reserved ({vm.config.hardware.memoryMB} MB, memoryReservationLockedToMax)"


def _vm_latency_high(si: Any, timeout: float, vm_name: str) -> str:
    vm = _find(si, vim.VirtualMachine, vm_name)
    host = vm.runtime.host
    mhz = host.summary.hardware.cpuMhz if host is not None else None
    if not mhz:
        raise ActionFault("InvalidState", f"{vm_name}: its host's CPU speed is unknown, so the full CPU "
                                          "reservation cannot be computed")
    reservation = int(vm.config.hardware.numCPU) * int(mhz)
    level = vm.config.latencySensitivity.level if vm.config.latencySensitivity is not None else None
    if level == "high" and (vm.config.cpuAllocation.reservation or 0) >= reservation:
        return f"{vm_name}: latency sensitivity already high with {reservation} MHz reserved"
    _reconfigure(vm, vim.vm.ConfigSpec(latencySensitivity=vim.LatencySensitivity(level="high"),
                                       cpuAllocation=vim.ResourceAllocationInfo(reservation=reservation)), timeout)
    return f"{vm_name}: latency sensitivity high (was {level}), CPU reservation {reservation} MHz"


def _members(args: list[str]) -> list[tuple[str, list[str]]]:
    out = []
    for arg in args:
        host, sep, nics = arg.partition("=")
        names = nics.split(",") if nics else []
        if not sep or not names or not all(_VMNIC.match(n) for n in names):
            raise Malformed(f"a member is HOST=vmnicN[,vmnicM], not {arg!r}")
        out.append((_name(host, "host"), names))
    return out


def _choice(value: str, choices: tuple[str, ...], what: str) -> str:
    if value not in choices:
        raise Malformed(f"{what} must be one of {', '.join(choices)}, not {value!r}")
    return value


# verb -> (usage, parse(args) -> tuple of call arguments, the call)
ACTIONS: dict[str, tuple[str, Callable[[list[str]], tuple[Any, ...]], Callable[..., str]]] = {
    "host-maintenance": ("enter|exit <host>", lambda a: (_choice(a[0], ("enter", "exit"), "the mode"),
                                                         _name(a[1], "host")) if len(a) == 2 else _arity(),
                         _host_maintenance),
    "host-reboot": ("<host>", lambda a: (_name(a[0], "host"),) if len(a) == 1 else _arity(), _host_reboot),
    "vm-power": ("off|on|shutdown <vm>", lambda a: (_choice(a[0], ("off", "on", "shutdown"), "the operation"),
                                                     _name(a[1], "VM")) if len(a) == 2 else _arity(), _vm_power),
    "host-sriov": ("<host> <pf-pci-id> <num-vfs>", lambda a: (_name(a[0], "host"), _pci_id(a[1]),
                                                              _int(a[2], "the VF count", 0, 256))
                   if len(a) == 3 else _arity(), _host_sriov),
    "host-power-policy": ('<host> "High Performance"|Balanced|"Low Power"',
                          lambda a: (_name(a[0], "host"), _choice(a[1], tuple(POWER_POLICY_SHORT_NAMES), "the policy"))
                          if len(a) == 2 else _arity(), _host_power_policy),
    "dvs-create": ("<dvs> <portgroup> <max-mtu> <host>=<vmnic>[,<vmnic>]…",
                   lambda a: (_name(a[0], "distributed switch"), _name(a[1], "port group"),
                              _int(a[2], "maxMtu", 1280, 9000), _members(a[3:])) if len(a) >= 4 else _arity(),
                   _dvs_create),
    "dvs-mtu": ("<dvs> <max-mtu>", lambda a: (_name(a[0], "distributed switch"), _int(a[1], "maxMtu", 1280, 9000))
                if len(a) == 2 else _arity(), _dvs_mtu),
    "vm-add-vf": ("<vm> <pf-pci-id> <portgroup>", lambda a: (_name(a[0], "VM"), _pci_id(a[1]),
                                                            _name(a[2], "port group")) if len(a) == 3 else _arity(),
                  _vm_add_vf),
    "vm-reserve-memory": ("<vm>", lambda a: (_name(a[0], "VM"),) if len(a) == 1 else _arity(), _vm_reserve_memory),
    "vm-latency-high": ("<vm>", lambda a: (_name(a[0], "VM"),) if len(a) == 1 else _arity(), _vm_latency_high),
}


def _arity() -> tuple[Any, ...]:
    raise Malformed("wrong number of arguments")


def parse_action(command: str) -> tuple[Callable[..., str], tuple[Any, ...]] | None:
    """(the call, its arguments) for a `vsphere <verb> …` action line; None when the line is no action
    (a query, or not vSphere at all); Malformed when it is one but does not parse."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise Malformed(f"cannot split the line: {exc}") from exc
    if len(words) < 2 or words[0] != "vsphere" or words[1] not in ACTIONS:
        return None
    usage, parse, call = ACTIONS[words[1]]
    try:
        return call, parse(words[2:])
    except Malformed as exc:
        raise Malformed(f"{exc}; usage: vsphere {words[1]} {usage}") from exc


def action_line(verb: str, *args: str) -> str:
    """The action line for `verb` with `args`, quoted for shlex.split (what plan_fix steps carry)."""
    line = " ".join(["vsphere", verb, *(shlex.quote(str(a)) for a in args)])
    parse_action(line)  # a plan never carries a line the transport would refuse as malformed
    return line


# ---------------------------------------------------------------------------- TLS


def _insecure(target: Target) -> bool:
    value = target.options.get("insecure", False)
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1")
    return value is True


def ssl_context_for(target: Target) -> ssl.SSLContext:
    """Verified TLS with the target's `options.ca_file` (else the system CAs); unverified only with
    an explicit `options.insecure: true`."""
    if _insecure(target):
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    ca_file = target.options.get("ca_file")
    if not ca_file:
        return ssl.create_default_context()
    path = Path(str(ca_file)).expanduser()
    try:
        return ssl.create_default_context(cafile=str(path))
    except (OSError, ssl.SSLError) as exc:
        raise TransportError(
            ConnectErrorKind.TLS, target,
            f"cannot load options.ca_file {path} for {target.name}: "
            f"{exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}; it must be the PEM file "
            "of the CA that signed vCenter's certificate",
        ) from exc


# ---------------------------------------------------------------------------- sessions


class VSphereSession:
    """Queries on one vCenter over the transport's shared login."""

    def __init__(self, transport: VSphereTransport, target: Target, si: Any):
        self.transport = transport
        self.target = target
        self.service_instance = si  # for fixes: host.configManager…, ReconfigVM_Task, …
        self._closed = False

    async def run(self, command: str, timeout: float | None = None) -> CommandResult:
        if self._closed:
            raise RuntimeError(f"session to {self.target.name} is closed")
        if timeout is None:
            timeout = self.transport._command_timeout(self.target)
        query = QUERIES.get(" ".join(command.split()))
        action = None
        if query is None:
            try:
                action = parse_action(command)
            except Malformed as exc:
                return CommandResult(command, "", f"malformed vSphere action: {exc}\n", 2, 0.0)
            if action is None:
                return CommandResult(command, "", f"unknown vSphere query or action {command!r}; queries: "
                                     f"{', '.join(QUERIES)}; actions: {', '.join('vsphere ' + a for a in ACTIONS)}\n",
                                     2, 0.0)
        started = time.monotonic()
        try:
            async with asyncio.timeout(timeout):
                if action is not None:
                    call, args = action
                    # the thread gets the deadline too: a task still running there is given up on
                    line = await asyncio.to_thread(self._query, lambda si: call(si, max(1.0, timeout - 1), *args))
                    return CommandResult(command, line.rstrip("\n") + "\n", "", 0, time.monotonic() - started)
                doc = await asyncio.to_thread(self._query, query)
        except TimeoutError as exc:
            if action is not None and str(exc):  # a task or a wait gave up: say which
                return CommandResult(command, "", f"vSphere timeout: {exc}\n", 1, time.monotonic() - started,
                                     timed_out=True)
            return CommandResult(command, "", "", None, time.monotonic() - started, timed_out=True)
        except ActionFault as fault:
            return CommandResult(command, "", f"vSphere fault {fault.name}: {fault.message}\n", 1,
                                 time.monotonic() - started)
        except vmodl.MethodFault as fault:
            name = getattr(fault, "_wsdlName", type(fault).__name__)
            message = (getattr(fault, "msg", None)
                       or "; ".join(m.message for m in getattr(fault, "faultMessage", None) or [] if m.message)
                       or name)
            return CommandResult(command, "", f"vSphere fault {name}: {message}\n", 1, time.monotonic() - started)
        except (OSError, http.client.HTTPException) as exc:
            host, port = _host_port(self.target)
            raise TransportError(
                ConnectErrorKind.UNREACHABLE, self.target,
                f"lost the vSphere API connection to {self.target.name} ({host}:{port}): "
                f"{exc.strerror if isinstance(exc, OSError) and exc.strerror else exc or type(exc).__name__}",
            ) from exc
        return CommandResult(command, render(doc), "", 0, time.monotonic() - started)

    def _query(self, query: Callable[[Any], Any]) -> Any:
        try:
            return query(self.service_instance)
        except vim.fault.NotAuthenticated:  # the session expired (idle timeout): log in once more
            self.service_instance = self.transport._relogin(self.target)
            return query(self.service_instance)

    async def close(self) -> None:
        """Stop using this session; the login stays until the transport closes."""
        self._closed = True


def _host_port(target: Target) -> tuple[str, int]:
    return target.address, target.port or DEFAULT_PORT


_Key = tuple[str, int, str]


def _key(target: Target) -> _Key:
    host, port = _host_port(target)
    return host, port, target.credentials.username


class VSphereTransport:
    """One login per vCenter (address, port, user) per run; sessions share it."""

    def __init__(
        self,
        password_resolver: Callable[[Target], str | None] | None = None,
        connect_timeout: float = 10,
        command_timeout: float = 60,
        max_concurrent_connects: int = 16,
    ):
        if max_concurrent_connects < 1:
            raise ValueError("max_concurrent_connects must be at least 1")
        self.password_resolver = password_resolver
        self.connect_timeout = connect_timeout
        self.command_timeout = command_timeout
        self.max_concurrent_connects = max_concurrent_connects
        self.warnings: list[str] = []  # the CLI prints these after the run (TLS verification off, …)
        self._semaphore = asyncio.Semaphore(max_concurrent_connects)
        self._logins: dict[_Key, asyncio.Task[Any]] = {}
        self._live: dict[_Key, Any] = {}  # key -> ServiceInstance, for close() and re-login
        self.connects = 0  # logins attempted (tests check the reuse)

    async def session(self, target: Target) -> VSphereSession:
        key = _key(target)
        task = self._logins.get(key)
        if task is None:
            task = asyncio.ensure_future(self._connect(target))
            task.add_done_callback(_retrieve_exception)
            self._logins[key] = task
        try:
            si = await asyncio.shield(task)
        except BaseException:
            if self._logins.get(key) is task and task.done():
                del self._logins[key]  # a later call may try again
            raise
        return VSphereSession(self, target, si)

    async def close(self) -> None:
        live, self._live, self._logins = dict(self._live), {}, {}
        for si in live.values():
            try:
                await asyncio.wait_for(asyncio.to_thread(Disconnect, si), 5)
            except Exception as exc:  # noqa: BLE001 - best effort: the session times out on the server anyway
                log.debug("logout failed: %s", exc)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _command_timeout(self, target: Target) -> float:
        return float(target.options.get("command_timeout", self.command_timeout))

    def _connect_timeout(self, target: Target) -> float:
        return float(target.options.get("connect_timeout", self.connect_timeout))

    async def _connect(self, target: Target) -> Any:
        context = ssl_context_for(target)
        password = self.password_resolver(target) if self.password_resolver is not None else None
        if password is None:
            raise TransportError(
                ConnectErrorKind.AUTH, target,
                f"no password for {target.name}: give one in the inventory (password: {{env: NAME}}, "
                "{keyring: \"service/user\"} or prompt)",
            )
        async with self._semaphore:
            self.connects += 1
            try:
                async with asyncio.timeout(self._connect_timeout(target)):
                    si = await asyncio.to_thread(self._login, target, context, password)
            except TimeoutError as exc:
                host, port = _host_port(target)
                raise TransportError(
                    ConnectErrorKind.TIMEOUT, target,
                    f"{target.name} ({host}:{port}) did not complete the vSphere API login within "
                    f"{self._connect_timeout(target):g}s; check that vCenter is up and that no firewall drops the port",
                ) from exc
        self._live[_key(target)] = si
        if _insecure(target):
            host, port = _host_port(target)
            self.warnings.append(
                f"TLS verification is OFF for {target.name} ({host}:{port}): options.insecure is true in the "
                "inventory, so anyone on the path can pose as vCenter and read its password. Give the CA that "
                "signed its certificate instead: options: {ca_file: /path/to/vcenter-ca.pem}")
        return si

    def _login(self, target: Target, context: ssl.SSLContext, password: str) -> Any:
        host, port = _host_port(target)
        try:
            return SmartConnect(host=host, port=port, user=target.credentials.username, pwd=password,
                                sslContext=context, httpConnectionTimeout=self._command_timeout(target),
                                disableSslCertValidation=_insecure(target))
        except Exception as exc:
            raise self._map_error(exc, target) from exc

    def _relogin(self, target: Target) -> Any:
        password = self.password_resolver(target) if self.password_resolver is not None else None
        si = self._login(target, ssl_context_for(target), password or "")
        self._live[_key(target)] = si
        return si

    def _map_error(self, exc: Exception, target: Target) -> TransportError:
        if isinstance(exc, TransportError):
            return exc
        host, port = _host_port(target)
        name = f"{target.name} ({host}:{port})"
        user = target.credentials.username
        if isinstance(exc, ssl.SSLCertVerificationError):
            return TransportError(ConnectErrorKind.TLS, target, _tls_message(target, exc))
        if isinstance(exc, ssl.SSLError):
            return TransportError(ConnectErrorKind.PROTOCOL, target,
                                  f"TLS handshake with {name} failed: {exc.reason or exc}; is this the HTTPS port "
                                  "of vCenter?")
        if isinstance(exc, vim.fault.InvalidLogin):
            return TransportError(ConnectErrorKind.AUTH, target,
                                  f"{name} rejected the login of {user!r} (vim.fault.InvalidLogin); check the "
                                  f"username and the password reference {target.credentials.password or ''} "
                                  "in the inventory".replace("  ", " "))
        if isinstance(exc, (vim.fault.NoPermission, vim.fault.NotAuthenticated)):
            return TransportError(ConnectErrorKind.AUTH, target, f"{name}: {user!r} may not log in: {exc.msg}")
        if isinstance(exc, socket.gaierror):
            return TransportError(ConnectErrorKind.DNS, target,
                                  f"cannot resolve {host!r} for {target.name}: {exc.strerror or exc}")
        if isinstance(exc, TimeoutError):  # socket.timeout too; before OSError (TimeoutError is one)
            return TransportError(ConnectErrorKind.TIMEOUT, target,
                                  f"{name} did not answer within {self._connect_timeout(target):g}s; check that "
                                  "vCenter is up and that no firewall drops the port")
        if isinstance(exc, ConnectionRefusedError) or (isinstance(exc, OSError) and exc.errno == errno.ECONNREFUSED):
            return TransportError(ConnectErrorKind.REFUSED, target,
                                  f"{name} refused the connection: nothing listens on port {port} (vCenter's HTTPS "
                                  "port is 443; is the address right?)")
        if isinstance(exc, OSError):
            if exc.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
                return TransportError(ConnectErrorKind.UNREACHABLE, target,
                                      f"no route to {name}: {exc.strerror or exc}; check the address and the network")
            return TransportError(ConnectErrorKind.UNREACHABLE, target, f"cannot reach {name}: {exc.strerror or exc}")
        if isinstance(exc, vmodl.MethodFault):
            return TransportError(ConnectErrorKind.PROTOCOL, target,
                                  f"{name} refused the vSphere API login: {getattr(exc, '_wsdlName', '')} {exc.msg}")
        return TransportError(ConnectErrorKind.PROTOCOL, target,
                              f"{name} does not answer as a vSphere API endpoint (https://{host}:{port}/sdk): "
                              f"{type(exc).__name__}: {exc}")


def _tls_message(target: Target, exc: ssl.SSLCertVerificationError) -> str:
    host, port = _host_port(target)
    name = f"{target.name} ({host}:{port})"
    reason = exc.verify_message or exc.reason or str(exc)
    ca_file = target.options.get("ca_file")
    if "hostname" in str(reason).lower() or "ip address mismatch" in str(reason).lower():
        return (f"TLS certificate of {name} does not name {host!r} ({reason}): use the name the certificate "
                "carries as the target's address, or reissue the certificate; verification stays on")
    where = (f"is not signed by the CA in options.ca_file {ca_file}" if ca_file
             else "is not signed by a CA this machine trusts")
    return (f"TLS certificate of {name} {where} ({reason}); refusing to connect. Give the CA that signed it "
            "in the inventory: options: {ca_file: /path/to/vcenter-ca.pem} (vCenter's root CA is in "
            f"https://{host}/certs/download.zip), or, on a lab network only, options: {{insecure: true}} "
            "to skip verification (roce-wizard then warns on every run)")


def _retrieve_exception(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()
