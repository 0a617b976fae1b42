"""Faults of BMCs (BIOS settings), named by the check that detects each."""

from __future__ import annotations

from roce_wizard.lab.faults import Fault
from roce_wizard.lab.redfish.vendors import set_bmc_vendor
from roce_wizard.lab.world import EsxiHost, World

# ---------------------------------------------------------------------------- faults


def _host_of(world: World, target: str) -> EsxiHost:
    name = target.removeprefix("bmc-")
    if name not in world.hosts:
        raise ValueError(f"{target}: no ESXi host {name!r} in the world")
    return world.hosts[name]


def _rw101(world: World, target: str) -> None:
    # the ESXi shell derives `HV Support: 2` (disabled in BIOS) from this attribute
    _host_of(world, target).bios["ProcVirtualization"] = "Disabled"


def _rw102(world: World, target: str) -> None:
    host = _host_of(world, target)
    set_bmc_vendor(host, "hpe")  # only servers with a VT-d knob of its own can lose VT-d alone
    host.bios["IntelProcVtd"] = "Disabled"


def _rw103(world: World, target: str) -> None:
    _host_of(world, target).bios["SriovGlobalEnable"] = "Disabled"


def _rw104(world: World, target: str) -> None:
    _host_of(world, target).bios["SysProfile"] = "PerfPerWattOptimizedDapc"


FAULTS: dict[str, Fault] = {f.code: f for f in (
    Fault("RW101", "bmc", "BIOS Virtualization Technology (ProcVirtualization) disabled (ESXi shows HV Support 2)",
          _rw101),
    Fault("RW102", "bmc", "an HPE iLO server with Intel VT-d (IntelProcVtd) disabled (Dell PowerEdge has no "
                          "separate VT-d knob: ProcVirtualization covers it)", _rw102),
    Fault("RW103", "bmc", "BIOS SR-IOV Global Enable (SriovGlobalEnable) disabled: the host gets no VFs, its "
                          "guests no RDMA device", _rw103),
    Fault("RW104", "bmc", "BIOS System Profile left at the factory PerfPerWattOptimizedDapc (BIOS-controlled "
                          "power management)", _rw104),
)}
