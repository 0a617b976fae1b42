"""The lab vCenter's names, files and account, and its one error type."""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger("roce_wizard.lab.vcenter")

VCSIM_SOURCE = Path(__file__).parent.with_name("vcsim")  # lab/vcsim, beside this package
SOURCE_FILES = ("main.go", "go.mod", "go.sum")
MIN_GO = (1, 22)  # govmomi v0.46.3's go.mod says `go 1.22`
BINARY = "roce-wizard-vcsim"

PASSWORD_ENV = "ROCE_LAB_VCENTER_PASSWORD"  # the inventory's password reference
USERNAME = "administrator@vsphere.local"
STATE_FILE = "vcenter-state.json"
CA_FILE = "vcenter-ca.pem"
LOG_FILE = "vcenter.log"
ENV_FILE = "lab.env"
DATACENTER = "RoCE-DC"
CLUSTER = "RoCE-Cluster"
DATASTORE = "datastore1"

# lspci names vSphere shows for the PFs (by mst device type)
PCI_DEVICE_NAMES = {
    "ConnectX5": "MT27800 Family [ConnectX-5]",
    "ConnectX4LX": "MT27710 Family [ConnectX-4 Lx]",
}


class VCenterUnavailable(RuntimeError):
    """The lab cannot run vCenter here (no Go, Go too old, the simulator did not start)."""
