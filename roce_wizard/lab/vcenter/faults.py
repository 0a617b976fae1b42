"""Faults of vCenter, named by the check that detects each."""

from __future__ import annotations

from roce_wizard.lab.faults import Fault
from roce_wizard.lab.world import EsxiHost, World

# ------------------------------------------------------------------------------ faults


def _pick_host(world: World) -> EsxiHost:
    """The host a vcenter fault lands on: the second host (esx-02), as `--fault` picks targets."""
    hosts = list(world.hosts.values())
    return hosts[1] if len(hosts) > 1 else hosts[0]


def _pick_vm(world: World):
    host = _pick_host(world)
    return next(vm for vm in world.vms.values() if vm.host == host.name)


def _on_host(world: World, target: str) -> str:
    """Where doctor reports a fault of the host's vSphere settings: on the host (vCenter's checks judge it)."""
    return _pick_host(world).name


def _on_vm(world: World, target: str) -> str:
    """Where doctor reports a fault of a VM's settings: on the guest that VM runs."""
    vm = _pick_vm(world)
    return next((g.name for g in world.guests.values() if g.vm == vm.name), vm.name)


def _rw301(world: World, target: str) -> None:
    host = _pick_host(world)
    pci = host.roce_card.pci(1)
    host.sriov_config.pop(pci, None)
    host.sriov_config_active.pop(pci, None)


def _rw302(world: World, target: str) -> None:
    assert world.vcenter is not None
    world.vcenter.dvs_members.pop(_pick_host(world).name, None)


def _rw303(world: World, target: str) -> None:
    assert world.vcenter is not None
    world.vcenter.dvs_max_mtu = 1500


def _rw304(world: World, target: str) -> None:
    _pick_vm(world).vf_port = None


def _rw305(world: World, target: str) -> None:
    _pick_vm(world).memory_reserved = False


def _rw306(world: World, target: str) -> None:
    _pick_vm(world).latency_sensitivity = "normal"


def _rw307(world: World, target: str) -> None:
    _pick_host(world).power_policy = "Balanced"


FAULTS = {f.code: f for f in (
    Fault("RW301", "vcenter", "SR-IOV is not enabled in vSphere on esx-02's RoCE PF 0000:3b:00.0 (no VFs)", _rw301,
          _on_host),
    Fault("RW302", "vcenter", "esx-02 is not a member of the VDS (its VM's VF sits on the standard VM Network)",
          _rw302, _on_host),
    Fault("RW303", "vcenter", "the VDS maxMtu is 1500", _rw303),
    Fault("RW304", "vcenter", "compute-02 has no SR-IOV network adapter (no VF)", _rw304, _on_vm),
    Fault("RW305", "vcenter", "compute-02's memory is not reserved (memoryReservationLockedToMax false)",
          _rw305, _on_vm),
    Fault("RW306", "vcenter", "compute-02's latency sensitivity is normal", _rw306, _on_vm),
    Fault("RW307", "vcenter", "esx-02's power policy is Balanced (the same setting as RW213's /Power/CpuPolicy)",
          _rw307, _on_host),
)}
