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


def _sriov_off(world: World, target: str) -> None:
    host = _pick_host(world)
    pci = host.roce_card.pci(1)
    host.sriov_config.pop(pci, None)
    host.sriov_config_active.pop(pci, None)


def _not_member(world: World, target: str) -> None:
    assert world.vcenter is not None
    world.vcenter.dvs_members.pop(_pick_host(world).name, None)


def _dvs_mtu(world: World, target: str) -> None:
    assert world.vcenter is not None
    world.vcenter.dvs_max_mtu = 1500


def _no_vf(world: World, target: str) -> None:
    _pick_vm(world).vf_port = None


def _memory_not_reserved(world: World, target: str) -> None:
    _pick_vm(world).memory_reserved = False


def _latency_normal(world: World, target: str) -> None:
    _pick_vm(world).latency_sensitivity = "normal"


def _power_balanced(world: World, target: str) -> None:
    _pick_host(world).power_policy = "Balanced"


FAULTS = {f.code: f for f in (
    Fault("RW301", "vcenter", "SR-IOV is not enabled in vSphere on esx-02's RoCE PF 0000:3b:00.0 (no VFs)", _sriov_off),
    Fault("RW302", "vcenter", "esx-02 is not a member of the VDS (its VM's VF sits on the standard VM Network)",
          _not_member),
    Fault("RW303", "vcenter", "the VDS maxMtu is 1500", _dvs_mtu),
    Fault("RW304", "vcenter", "compute-02 has no SR-IOV network adapter (no VF)", _no_vf),
    Fault("RW305", "vcenter", "compute-02's memory is not reserved (memoryReservationLockedToMax false)",
          _memory_not_reserved),
    Fault("RW306", "vcenter", "compute-02's latency sensitivity is normal", _latency_normal),
    Fault("RW307", "vcenter", "esx-02's power policy is Balanced (the same setting as RW213's /Power/CpuPolicy)",
          _power_balanced),
)}
