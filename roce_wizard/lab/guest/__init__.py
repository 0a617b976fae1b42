"""The simulated Linux guest (a VM with an SR-IOV VF) and bare-metal Linux host of the practice lab.

Every output is computed from the world model and printed the way the real tool prints it (held
against the project's corpus of real captures and the published guides the checks cite), so roce-wizard's
production parsers and checks read the lab exactly as they read real machines. This module never imports
`roce_wizard.parsers` or `checks/`.

What the world decides:
- The RoCE netdev (`guest.roce_netdev`) exists in a VM only while the VM has its VF (vCenter gave
  it a VirtualSriovEthernetCard, the VM is on, and the host instantiated VFs on that port); its
  configuration (MTU, addresses) is the NetworkManager profile that applies when it appears.
- The RDMA device (`mlx5_0` on that netdev) exists only when `World.guest_rdma` says so (VF present,
  host SR-IOV active, a verbs stack loaded).
- `active_mtu` is local, as mlx5 computes it (mlx5_query_port_roce): min(max_mtu 4096, iboe_get_mtu(the
  RDMA port's OWN netdev MTU)), i.e. the netdev MTU less 96 bytes of RoCE headers rounded down to
  4096/2048/1024/512/256. In a VM that netdev is the VF's, in the guest: neither the host's uplink vmnic,
  the VDS nor a switch port lowers it (a small hop drops the jumbo frames instead).
- The GID table: index 0/1 the MAC-derived link-local (v1, v2), then one v1/v2 pair per address in
  the order the addresses appeared (a non-EUI-64 link-local comes up before the IPv4 at boot, which
  is how the RoCE v2 IPv4 GID ends up at index 5 instead of 3).
- perftest and MPI results come from both ends' state: link speed, active MTU, GID indexes, UCX
  device names, PFC agreement along the path (incast), and the counters they move.

State the world model has no field for (per-guest counters, NetworkManager profiles, boot hooks,
perftest servers, the bare-metal card) lives in ``world.lab_guest_state`` (see ``_lab``). A reboot
(`World.reboot_guest`) is noticed by the boot id changing and applied on the next call here
(``sync`` applies it at once).

Faults: ``FAULTS``, one per failable guest/preflight check, named by the check that detects it.
"""

from __future__ import annotations

from roce_wizard.lab.guest import nccl
from roce_wizard.lab.guest.baremetal import add_baremetal
from roce_wizard.lab.guest.faults import FAULTS
from roce_wizard.lab.guest.faults import VALIDATE_FAULTS as _VALIDATE
from roce_wizard.lab.guest.files import file_errors, files, write_file
from roce_wizard.lab.guest.programs import programs
from roce_wizard.lab.guest.rdma import gid_table, rdma_ports, roce_mtu, visible_interfaces
from roce_wizard.lab.guest.state import OFED_BUNDLE, OFED_DIR, sync, wire
from roce_wizard.lab.world import World


def _programs(world: World, guest_name: str) -> dict:
    """The package's `programs` as it is when called (a test may wrap the package's name)."""
    return programs(world, guest_name)


def _write_file(world: World, guest_name: str, path: str, content: str) -> str | None:
    return write_file(world, guest_name, path, content)


VALIDATE_FAULTS = {**_VALIDATE, **nccl.VALIDATE_FAULTS}  # RW610's lives with the lab's NCCL (lab/guest/nccl.py)

wire(_programs, _write_file)  # boot hooks, `timeout` and `systemctl start` run programs (see state._Wired)

__all__ = ["FAULTS", "OFED_BUNDLE", "OFED_DIR", "VALIDATE_FAULTS", "add_baremetal", "file_errors", "files",
           "gid_table", "programs", "rdma_ports", "roce_mtu", "sync", "visible_interfaces", "write_file"]
