"""The lab's vCenter: govmomi's simulator extended by a small Go program (``lab/vcsim/``).

``build_vcsim`` compiles that program on first use (pinned to govmomi v0.46.3; modules come from
the Go module proxy) into the user's cache directory, keyed by a hash of its sources and the Go
version, so later labs start at once. Without Go the lab runs without vCenter and says why
(``VCenterUnavailable``).

``start_vcenter`` writes the world's vSphere view to ``DIR/vcenter-state.json`` (the inventory
the simulator builds: a datacenter, one cluster, the ESXi hosts with their ConnectX PFs and SR-IOV
state, the compute VMs with or without a VF, the VDS), starts the simulator on 127.0.0.1 with an
ephemeral port and waits for its ready line. TLS stays verified: the simulator signs its server
certificate with a CA made for this lab and writes the CA to ``DIR/vcenter-ca.pem``, which the
inventory names as ``options.ca_file``. The password is random per lab; the simulator gets it in
its environment, the inventory by reference (``password: {env: ROCE_LAB_VCENTER_PASSWORD}``),
and ``DIR/lab.env`` (mode 0600) holds ``ROCE_LAB_VCENTER_PASSWORD=…`` for a shell to source
(``set -a; . DIR/lab.env; set +a``) before running ``roce-wizard doctor -i DIR/inventory.yaml``.

World and vCenter stay in step both ways (``VCenterHandle.sync``, also run every
``poll_interval`` seconds): what a vSphere client changed (SR-IOV VF counts, power policy,
maintenance mode, VM devices and reservations, the VDS, host reboots) is folded into the World,
and what changed in the World (a host rebooted over SSH, a power policy set with esxcli, VIBs
waiting for a reboot) is sent to the simulator. It is a three-way merge against what each side
showed at the last sync, so neither side overwrites a change it did not see. Inside the lab
(``serve``, the hook `lab/server/` calls) a host vCenter reboots goes through ``Lab.reboot``, so
SSH, guests and vCenter see one reboot with one boot time.

Faults RW301-RW307 (kind ``vcenter``) land on the second host (esx-02) or its VM (compute-02):
SR-IOV off on its RoCE PF, the host out of the VDS, VDS maxMtu 1500, no VF on the VM, memory not
reserved, latency sensitivity normal, power policy Balanced.
"""

from __future__ import annotations

from roce_wizard.lab.vcenter.build import build_vcsim, default_cache_dir, go_problem, go_version, source_hash
from roce_wizard.lab.vcenter.config import (
           BINARY,
           CA_FILE,
           CLUSTER,
           DATACENTER,
           DATASTORE,
           ENV_FILE,
           LOG_FILE,
           MIN_GO,
           PASSWORD_ENV,
           PCI_DEVICE_NAMES,
           SOURCE_FILES,
           STATE_FILE,
           USERNAME,
           VCSIM_SOURCE,
           VCenterUnavailable,
)
from roce_wizard.lab.vcenter.faults import FAULTS
from roce_wizard.lab.vcenter.fold import fold_into_world
from roce_wizard.lab.vcenter.handle import VCenterHandle
from roce_wizard.lab.vcenter.service import inventory_entry, serve, start_vcenter
from roce_wizard.lab.vcenter.view import Event, flatten, pf_id, unflatten, vsphere_view

__all__ = [
           "BINARY",
           "CA_FILE",
           "CLUSTER",
           "DATACENTER",
           "DATASTORE",
           "ENV_FILE",
           "FAULTS",
           "LOG_FILE",
           "MIN_GO",
           "PASSWORD_ENV",
           "PCI_DEVICE_NAMES",
           "SOURCE_FILES",
           "STATE_FILE",
           "USERNAME",
           "VCSIM_SOURCE",
           "Event",
           "VCenterHandle",
           "VCenterUnavailable",
           "build_vcsim",
           "default_cache_dir",
           "flatten",
           "fold_into_world",
           "go_problem",
           "go_version",
           "inventory_entry",
           "pf_id",
           "serve",
           "source_hash",
           "start_vcenter",
           "unflatten",
           "vsphere_view",
]
