"""`vsphere <verb> <args…>` action lines: what each does (the line's format and validation: commands/vsphere.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pyVmomi import vim

from roce_wizard.commands.vsphere import POWER_POLICY_SHORT_NAMES, SYNTAX, Malformed, action_line, parse_action_line
from roce_wizard.transports.vsphere.tasks import wait_for_task

__all__ = ["ACTIONS", "POWER_POLICY_SHORT_NAMES", "ActionFault", "Malformed", "action_line", "parse_action"]

# ---------------------------------------------------------------------------- actions
# `vsphere <verb> <args…>` lines a fix step or the reboot orchestration runs (contracts.md §2).
# Parsed by commands/vsphere.py; every name is validated before it reaches vCenter; one line of output
# on success. Lines that would change nothing (enter maintenance mode on a host already in it,
# power off a VM that is off) succeed and say so: a resumed run may repeat them.


class ActionFault(Exception):
    """A refusal the action itself detects before calling vCenter (exit 1, `vSphere fault <name>`)."""

    def __init__(self, name: str, message: str):
        super().__init__(message)
        self.name = name
        self.message = message


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


# verb -> the call that does it (the line's syntax, usage and validation: commands/vsphere.py SYNTAX)
_CALLS: dict[str, Callable[..., str]] = {
    "host-maintenance": _host_maintenance,
    "host-reboot": _host_reboot,
    "vm-power": _vm_power,
    "host-sriov": _host_sriov,
    "host-power-policy": _host_power_policy,
    "dvs-create": _dvs_create,
    "dvs-mtu": _dvs_mtu,
    "vm-add-vf": _vm_add_vf,
    "vm-reserve-memory": _vm_reserve_memory,
    "vm-latency-high": _vm_latency_high,
}
# verb -> (usage, parse(args) -> tuple of call arguments, the call)
ACTIONS: dict[str, tuple[str, Callable[[list[str]], tuple[Any, ...]], Callable[..., str]]] = {
    verb: (usage, parse, _CALLS[verb]) for verb, (usage, parse) in SYNTAX.items()
}


def parse_action(command: str) -> tuple[Callable[..., str], tuple[Any, ...]] | None:
    """(the call, its arguments) for a `vsphere <verb> …` action line; None when the line is no action
    (a query, or not vSphere at all); Malformed when it is one but does not parse."""
    parsed = parse_action_line(command)
    if parsed is None:
        return None
    verb, args = parsed
    return _CALLS[verb], args
