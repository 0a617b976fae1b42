"""Probes of vCenter targets: named property-collector queries (`transports/vsphere.py` QUERIES).

Each is one RetrieveContents; the transport prints JSON that `parsers/vsphere.py` reads.
"""

from __future__ import annotations

from roce_wizard.model import TargetKind
from roce_wizard.probes import Probe

VCENTER = (TargetKind.VCENTER,)

PROBES = (
    Probe("vsphere_hosts", VCENTER, lambda t, f: "vsphere hosts", "vsphere_hosts"),
    Probe("vsphere_vms", VCENTER, lambda t, f: "vsphere vms", "vsphere_vms"),
    Probe("vsphere_dvs", VCENTER, lambda t, f: "vsphere dvs", "vsphere_dvs"),
)
