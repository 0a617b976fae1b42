"""The RDMA files a guest's kernel shows without MLNX_OFED (inbox rdma-core reads them instead of show_gids and
cma_roce_mode): the whole GID table in sysfs, and rdma_cm's configfs group of a device.

- GID table: the kernel exposes every entry up to the port's table length (the lab's `ibv_devinfo -v` says
  gid_tbl_len 255); an unused entry's `gids/<i>` reads all zeros, its `gid_attrs/types/<i>` and
  `gid_attrs/ndevs/<i>` fail with EINVAL "Invalid argument" (UCX PR openucx/ucx#11237; NCCL issue
  NVIDIA/nccl#1573). Used entries are guest.files()'s (the same table show_gids prints).
- configfs (Linux Documentation/ABI/testing/configfs-rdma_cm): `/sys/kernel/config/rdma_cm/<dev>/ports/<p>/
  default_roce_mode` ("IB/RoCE v1" / "RoCE v2") exists only after `mkdir /sys/kernel/config/rdma_cm/<dev>`
  (MLNX_OFED's cma_roce_mode does that mkdir itself). configfs lives in memory: a group made before the last
  boot is gone (Guest.rdma_cm_groups holds the boot it was made in).
"""

from __future__ import annotations

from roce_wizard.lab.world import Guest

GID_TBL_LEN = 255
ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"
CONFIGFS = "/sys/kernel/config/rdma_cm"


def unused_gid_files(port_dir: str, used: set[int]) -> dict[str, str]:
    """The unused entries of a port's GID table: listed like the used ones (ls and globs see them)."""
    out: dict[str, str] = {}
    for i in range(GID_TBL_LEN):
        if i not in used:
            out[f"{port_dir}/gids/{i}"] = ZERO_GID + "\n"
            out[f"{port_dir}/gid_attrs/types/{i}"] = ""
            out[f"{port_dir}/gid_attrs/ndevs/{i}"] = ""
    return out


def unused_gid_errors(port_dir: str, used: set[int]) -> dict[str, str]:
    """What reading an unused entry's type or netdev says: EINVAL."""
    return {f"{port_dir}/gid_attrs/{what}/{i}": "Invalid argument"
            for i in range(GID_TBL_LEN) if i not in used for what in ("types", "ndevs")}


def group_exists(guest: Guest, dev: str) -> bool:
    return guest.rdma_cm_groups.get(dev) == guest.boot_count


def make_group(guest: Guest, dev: str) -> None:
    """`mkdir /sys/kernel/config/rdma_cm/<dev>` (or MLNX_OFED's cma_roce_mode doing it)."""
    guest.rdma_cm_groups[dev] = guest.boot_count


def configfs_files(guest: Guest, ports: list[tuple[str, int]]) -> dict[str, str]:
    """default_roce_mode of each (dev, port) whose device's group exists this boot."""
    return {f"{CONFIGFS}/{dev}/ports/{port}/default_roce_mode": guest.cma_roce_mode + "\n"
            for dev, port in ports if group_exists(guest, dev)}


def make_inbox(guest: Guest, *, configfs_group: str | None = None) -> None:
    """The inbox variant of a guest: rdma-core's verbs stack instead of MLNX_OFED (no show_gids, no
    cma_roce_mode, no ofed_info); `configfs_group` names a device whose rdma_cm group a boot hook made."""
    guest.ofed_version, guest.ofed_pending, guest.rdma_core = None, False, True
    if configfs_group:
        make_group(guest, configfs_group)
    else:  # no boot hook made the group, so it sets no default_roce_tos either
        guest.rdma_cm_tos = None
