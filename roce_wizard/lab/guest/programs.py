"""The program table of a simulated guest: command name -> implementation."""

from __future__ import annotations

from roce_wizard.lab.guest.ethtool import prog_ethtool
from roce_wizard.lab.guest.host_limits import prog_lspci, prog_mkdir, prog_ulimit
from roce_wizard.lab.guest.ip import prog_ip
from roce_wizard.lab.guest.mft import prog_mlxconfig
from roce_wizard.lab.guest import nccl
from roce_wizard.lab.guest.mpi import prog_mpirun, prog_ucx_info
from roce_wizard.lab.guest.ofed import prog_mlnxofedinstall, prog_ofed_info, prog_openibd
from roce_wizard.lab.guest.perftest import _PT_VERBS, _perftest
from roce_wizard.lab.guest.procs import prog_nohup, prog_pgrep, prog_pkill, prog_rm, prog_timeout
from roce_wizard.lab.guest.rdma_tools import (
    prog_cma_roce_mode,
    prog_ibdev2netdev,
    prog_ibv_devices,
    prog_ibv_devinfo,
    prog_mlnx_qos,
    prog_rdma,
    prog_show_gids,
)
from roce_wizard.lab.guest.state import OFED_DIR, _gs, _guest
from roce_wizard.lab.guest.system import (
    prog_dmesg,
    prog_dnf,
    prog_hostname,
    prog_nmcli,
    prog_reboot,
    prog_shutdown,
    prog_systemctl,
    prog_tar,
    prog_uname,
)
from roce_wizard.lab.proto import Program
from roce_wizard.lab.world import World

# ---------------------------------------------------------------------------- program table

_PATHS = {
    "ip": "/usr/sbin/ip", "ethtool": "/usr/sbin/ethtool", "uname": "/usr/bin/uname", "hostname": "/usr/bin/hostname",
    "reboot": "/usr/sbin/reboot", "shutdown": "/usr/sbin/shutdown", "systemctl": "/usr/bin/systemctl",
    "nmcli": "/usr/bin/nmcli", "rdma": "/usr/sbin/rdma", "dnf": "/usr/bin/dnf", "yum": "/usr/bin/yum",
    "tar": "/usr/bin/tar", "ofed_info": "/usr/bin/ofed_info", "ibv_devinfo": "/usr/bin/ibv_devinfo",
    "ibv_devices": "/usr/bin/ibv_devices", "show_gids": "/usr/sbin/show_gids", "ibdev2netdev": "/usr/sbin/ibdev2netdev",
    "cma_roce_mode": "/usr/sbin/cma_roce_mode", "mlnx_qos": "/usr/sbin/mlnx_qos", "mpirun": "/usr/bin/mpirun",
    "ucx_info": "/usr/bin/ucx_info", "mlxconfig": "/usr/bin/mlxconfig", "dmesg": "/usr/bin/dmesg",
    "rm": "/usr/bin/rm", "pkill": "/usr/bin/pkill", "pgrep": "/usr/bin/pgrep", "lspci": "/usr/sbin/lspci",
    **{t: f"/usr/bin/{t}" for t in _PT_VERBS},
}
_BASE: dict[str, Program] = {"ip": prog_ip, "ethtool": prog_ethtool, "uname": prog_uname, "hostname": prog_hostname,
                             "reboot": prog_reboot, "shutdown": prog_shutdown, "systemctl": prog_systemctl,
                             "nmcli": prog_nmcli, "rdma": prog_rdma, "dnf": prog_dnf, "yum": prog_dnf, "tar": prog_tar,
                             "timeout": prog_timeout, "nohup": prog_nohup, "pgrep": prog_pgrep, "pkill": prog_pkill,
                             "rm": prog_rm, "ulimit": prog_ulimit, "mkdir": prog_mkdir}  # ulimit: bash's builtin, answered here
_VERBS: dict[str, Program] = {"ibv_devinfo": prog_ibv_devinfo, "ibv_devices": prog_ibv_devices,
                              **dict.fromkeys(_PT_VERBS, _perftest)}
_OFED: dict[str, Program] = {**_VERBS, "ofed_info": prog_ofed_info, "show_gids": prog_show_gids,
                             "ibdev2netdev": prog_ibdev2netdev, "cma_roce_mode": prog_cma_roce_mode,
                             "mlnx_qos": prog_mlnx_qos, "mpirun": prog_mpirun, "ucx_info": prog_ucx_info}


def programs(world: World, guest_name: str) -> dict[str, Program]:
    """The programs installed on the guest right now, by bare name and by full path.

    MLNX_OFED's binaries are there as soon as `mlnxofedinstall` ran (its kernel stack loads with
    `/etc/init.d/openibd force-restart` or the next boot: `World.guest_rdma` decides the device);
    inbox rdma-core gives the verbs tools and perftest only. `mlnx_qos` is installed in a VF guest
    too and fails there as on a VF. Bare metal has NVIDIA MFT's mlxconfig.
    """
    guest = _guest(world, guest_name)
    _gs(world, guest)
    table: dict[str, Program] = dict(_BASE)
    if guest.ofed_version:
        table.update(_OFED)
    elif guest.rdma_core:
        table.update(_VERBS)
    if guest.vm is None:
        table["mlxconfig"] = prog_mlxconfig
        table["dmesg"] = prog_dmesg
        table["lspci"] = prog_lspci
    table.update(nccl.programs(world, guest))  # ldconfig; all_reduce_perf when the scenario installs NCCL
    for tool in guest.missing_tools:
        table.pop(tool, None)
    out: dict[str, Program] = {}
    for name, prog in table.items():
        out[name] = prog
        out[_PATHS.get(name) or nccl.PATHS.get(name) or f"/usr/bin/{name}"] = prog
    if guest.ofed_version:
        out["/etc/init.d/openibd"] = prog_openibd
    for path in ("mlnxofedinstall", "./mlnxofedinstall", f"{OFED_DIR}/mlnxofedinstall"):
        out[path] = prog_mlnxofedinstall
    return out
