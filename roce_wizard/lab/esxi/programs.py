"""The program table and the files of a simulated ESXi host."""

from __future__ import annotations

from roce_wizard.lab.esxi.commands import esxcfg_module, esxcfg_nics, reboot, uname, vim_cmd, vmware
from roce_wizard.lab.esxi.common import MLX_BIN
from roce_wizard.lab.esxi.esxcli import esxcli
from roce_wizard.lab.esxi.esxcli_software import datastore
from roce_wizard.lab.esxi.esxcli_system import format_options
from roce_wizard.lab.esxi.mft import flint, mlxconfig, mlxfwmanager, mst
from roce_wizard.lab.proto import Program
from roce_wizard.lab.world import World

# ==================================================================================== the tables


_BASE_PROGRAMS: dict[str, Program] = {
    "esxcli": esxcli,
    "vim-cmd": vim_cmd,
    "esxcfg-module": esxcfg_module,
    "esxcfg-nics": esxcfg_nics,
    "reboot": reboot,
    "uname": uname,
    "vmware": vmware,
}
_PATHS = {"esxcli": "/bin/esxcli", "vim-cmd": "/bin/vim-cmd", "esxcfg-module": "/sbin/esxcfg-module",
          "esxcfg-nics": "/sbin/esxcfg-nics", "reboot": "/bin/reboot", "uname": "/bin/uname",
          "vmware": "/bin/vmware"}
_MFT_PROGRAMS: dict[str, Program] = {"mst": mst, "mlxconfig": mlxconfig, "mlxfwmanager": mlxfwmanager,
                                     "flint": flint}


def programs(world: World, host_name: str) -> dict[str, Program]:
    """The programs installed on this host right now, by bare name and by full path."""
    host = world.hosts[host_name]
    table: dict[str, Program] = {}
    for name, prog in _BASE_PROGRAMS.items():
        table[name] = prog
        table[_PATHS[name]] = prog
    if host.has_tools():
        for name, prog in _MFT_PROGRAMS.items():
            table[name] = prog  # seed 000 appends /opt/mellanox/bin to PATH in /etc/profile.local
            table[f"{MLX_BIN}/{name}"] = prog
    return table


def files(world: World, host_name: str) -> dict[str, str]:
    """Virtual files: the packages on the shared datastore, and a small esx.conf excerpt."""
    host = world.hosts[host_name]
    out = dict(datastore(world))
    conf = [f'/adv/Misc/HostName = "{host.name}"',
            f'/adv/Power/CpuPolicy = "{host.power_policy}"']
    if host.module_params:
        conf.append(f'/vmkernel/module/nmlx5_core/options = "{format_options(host.module_params)}"')
    out["/etc/vmware/esx.conf"] = "\n".join(conf) + "\n"
    out["/etc/profile.local"] = "# profile.local\n"
    return out
