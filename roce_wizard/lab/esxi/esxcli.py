"""esxcli itself: the command table, namespace help and dispatch."""

from __future__ import annotations

from roce_wizard.lab.esxi.common import _err, _host, _ok
from roce_wizard.lab.esxi.esxcli_model import Cmd, Opt, _cmd_usage, _parse_opts, _render, _UsageError
from roce_wizard.lab.esxi.esxcli_network import (
    _dcb_status,
    _nic_list,
    _pause_list,
    _pause_set,
    _sriovnic_list,
    _vf_list,
)
from roce_wizard.lab.esxi.esxcli_software import _vib_install, _vib_list, _vib_remove
from roce_wizard.lab.esxi.esxcli_system import (
    _adv_list,
    _adv_set,
    _cpu_global,
    _mm_get,
    _mm_set,
    _module_list,
    _params_list,
    _params_set,
    _shutdown_poweroff,
    _shutdown_reboot,
    _uptime,
    _version_get,
)
from roce_wizard.lab.proto import Ctx, Reply

_N = Opt("n", "nic-name", required=True, help="The name of the NIC to configure.")
COMMANDS: list[Cmd] = [
    Cmd(("network", "nic", "list"), "Lists the Physical NICs currently installed and loaded on the system.", (),
        _nic_list),
    Cmd(("network", "nic", "pauseParams", "list"), "List pause parameters of all NICs", (), _pause_list),
    Cmd(("network", "nic", "pauseParams", "set"), "Set pause parameters for NIC",
        (Opt("a", "auto", "bool", help="Set pause autonegotiate"), _N,
         Opt("r", "rx", "bool", help="Set Pause RX"), Opt("t", "tx", "bool", help="Set Pause TX")), _pause_set),
    Cmd(("network", "nic", "dcb", "status", "get"), "Get the DCB status of a NIC.", (_N,), _dcb_status),
    Cmd(("network", "sriovnic", "list"), "List SRIOV enabled NICs.", (), _sriovnic_list),
    Cmd(("network", "sriovnic", "vf", "list"), "List the VFs of a SR-IOV NIC.",
        (Opt("n", "nic-name", required=True, help="The name of the SR-IOV NIC to list the VFs of."),), _vf_list),
    Cmd(("software", "vib", "list"), "Lists the installed VIB packages.",
        (Opt(None, "rebooting-image", "flag", help="Displays information for the ESXi image which becomes "
                                                   "active after a reboot."),), _vib_list),
    Cmd(("software", "vib", "install"), "Installs VIB packages from a URL or depot.",
        (Opt("d", "depot", multi=True, help="Specifies full remote URLs of the depot index.xml or server file path "
                                            "pointing to an offline bundle .zip file."),
         Opt(None, "dry-run", "flag", help="Performs a dry-run only."),
         Opt("f", "force", "flag", help="Bypasses checks for package dependencies, conflicts, obsolescence, and "
                                        "acceptance levels."),
         Opt(None, "maintenance-mode", "flag", help="Pretends that maintenance mode is in effect."),
         Opt(None, "no-sig-check", "flag", help="Bypasses signing verification."),
         Opt(None, "no-live-install", "flag", help="Forces an install to /altbootbank even if the VIBs are eligible "
                                                   "for live installation."),
         Opt("n", "vibname", multi=True, help="Specifies VIBs from a depot, using one of the following forms: name, "
                                              "name:version, vendor:name, or vendor:name:version."),
         Opt("v", "viburl", multi=True, help="Specifies one or more URLs to VIB packages to install.")),
        _vib_install),
    Cmd(("software", "vib", "remove"), "Removes VIB packages from the host.",
        (Opt(None, "dry-run", "flag", help="Performs a dry-run only."),
         Opt("f", "force", "flag", help="Bypasses checks for package dependencies, conflicts, obsolescence, and "
                                        "acceptance levels."),
         Opt(None, "maintenance-mode", "flag", help="Pretends that maintenance mode is in effect."),
         Opt("n", "vibname", required=True, multi=True, help="Specifies one or more VIBs on the host to remove.")),
        _vib_remove),
    Cmd(("system", "module", "list"), "List the VMkernel modules that the system knows about.",
        (Opt("e", "enabled", "bool", help="List only enabled modules."),
         Opt("l", "loaded", "bool", help="List only loaded modules.")), _module_list),
    Cmd(("system", "module", "parameters", "list"), "List the parameters supported by a module.",
        (Opt("m", "module", required=True, help="The name of the module to list parameters for."),),
        _params_list),
    Cmd(("system", "module", "parameters", "set"), "Set the load time parameters for the given module.",
        (Opt("a", "append", "flag", help="Append the specified parameter string to the current parameter string."),
         Opt("f", "force", "flag", help="Skip module validation for the given parameter string."),
         Opt("m", "module", required=True, help="The name of the module to set parameters for."),
         Opt("p", "parameter-string", required=True,
             help="The string containing the parameters for this module.")), _params_set),
    Cmd(("system", "settings", "advanced", "list"), "List the advanced options available from the VMkernel.",
        (Opt("d", "delta", "flag", help="Only display options whose values differ from their default."),
         Opt("o", "option", help="Only get the information for a single VMkernel advanced option."),
         Opt("t", "tree", help="Limit the list of advanced option to a specific sub tree.")), _adv_list),
    Cmd(("system", "settings", "advanced", "set"), "Set the value of an advanced option.",
        (Opt("d", "default", "flag", help="Reset the option to its default value."),
         Opt("i", "int-value", "long", help="If the option is an integer value use this option."),
         Opt("o", "option", required=True, help="The name of the option to set the value of."),
         Opt("s", "string-value", help="If the option is a string use this option.")), _adv_set),
    Cmd(("system", "stats", "uptime", "get"), "Display the number of microseconds the system has been running.",
        (), _uptime),
    Cmd(("system", "version", "get"), "Display the product name, version and build information.", (),
        _version_get),
    Cmd(("system", "maintenanceMode", "get"), "Get the maintenance mode state of the system.", (), _mm_get),
    Cmd(("system", "maintenanceMode", "set"), "Enable or disable the maintenance mode of the system.",
        (Opt("e", "enable", "bool", required=True, help="Maintenance mode state."),
         Opt("t", "timeout", "long", help="Time to perform operation in seconds."),
         Opt("m", "vsanmode", help="Action the VSAN service must take before the host can enter maintenance mode.")),
        _mm_set),
    Cmd(("system", "shutdown", "reboot"), "Reboot the system. The system must be in maintenance mode.",
        (Opt("d", "delay", "long", help="Delay interval in seconds."),
         Opt("r", "reason", required=True, help="Reason for performing the operation.")), _shutdown_reboot),
    Cmd(("system", "shutdown", "poweroff"), "Power off the system. The host must be in maintenance mode.",
        (Opt("d", "delay", "long", help="Delay interval in seconds."),
         Opt("r", "reason", required=True, help="Reason for performing the operation.")), _shutdown_poweroff),
    Cmd(("hardware", "cpu", "global", "get"), "Get properties that are global to all CPUs.", (), _cpu_global),
]
_BY_PATH = {tuple(p.lower() for p in c.path): c for c in COMMANDS}
_NAMESPACE_HELP = {
    "network": "Operations that pertain to the maintenance of networking on an ESX host.",
    "nic": "Operations having to do with the configuration of Network Interface Card and getting and updating "
           "the NIC settings.",
    "pauseParams": "Operations having to do with the configuration of Network Interface Card pause parameters.",
    "dcb": "Operations having to do with Data Center Bridging (DCB) of a NIC.",
    "status": "The DCB status of a NIC.",
    "sriovnic": "Operations having to do with the configuration of SRIOV enabled Network Interface Card.",
    "vf": "Operations having to do with the configuration of SRIOV Virtual Functions.",
    "software": "Manage the ESXi software image and packages",
    "vib": "Install, update, remove, or display individual VIB packages",
    "system": "Operations for configuring the VMkernel and system settings.",
    "module": "Operations that allow the user to manipulate VMkernel modules.",
    "parameters": "Operations that allow the user to manipulate VMkernel module parameters.",
    "settings": "Operations for configuring VMkernel settings.",
    "advanced": "The advanced settings are a set of VMkernel options that can be configured by the user.",
    "stats": "Operations for getting system statistics.",
    "uptime": "System uptime.",
    "version": "Commands to get version information.",
    "maintenanceMode": "System wide maintenance mode operations.",
    "shutdown": "Perform operations which put the system into shutdown.",
    "hardware": "VMKernel hardware properties and commands for configuring hardware.",
    "cpu": "Information and operations on the system CPUs.",
    "global": "Information and operations global to all CPUs.",
}


def _children(prefix: tuple[str, ...]) -> tuple[dict[str, str], dict[str, Cmd]]:
    """(namespaces, commands) directly under a namespace path (lower-case keys -> display name)."""
    spaces: dict[str, str] = {}
    cmds: dict[str, Cmd] = {}
    n = len(prefix)
    for cmd in COMMANDS:
        low = tuple(p.lower() for p in cmd.path)
        if low[:n] != prefix or len(low) <= n:
            continue
        if len(low) == n + 1:
            cmds[low[n]] = cmd
        else:
            spaces[low[n]] = cmd.path[n]
    return spaces, cmds


def _namespace_usage(prefix: tuple[str, ...], display: list[str]) -> str:
    spaces, cmds = _children(prefix)
    path = " ".join(display)
    lines = [f"Usage: esxcli {path + ' ' if path else ''}{{cmd}} [cmd options]", ""]
    if spaces:
        lines.append("Available Namespaces:")
        for name in sorted(spaces.values(), key=str.lower):
            lines.append(f"  {name:<22}{_NAMESPACE_HELP.get(name, '')}")
        lines.append("")
    if cmds:
        lines.append("Available Commands:")
        for low in sorted(cmds):
            lines.append(f"  {cmds[low].path[-1]:<22}{cmds[low].help}")
        lines.append("")
    return "\n".join(lines)


def esxcli(ctx: Ctx, argv: list[str]) -> Reply:
    args = list(argv[1:])
    formatter: str | None = None
    while args and args[0].startswith("--"):
        tok = args.pop(0)
        name, eq, value = tok[2:].partition("=")
        if name == "formatter":
            if not eq:
                if not args:
                    return _err("Error: Missing value for option --formatter")
                value = args.pop(0)
            if value not in ("csv", "keyvalue", "xml", "table", "simple", "tree", "python", "json", "html"):
                return _err(f"Error: Invalid formatter '{value}'. Valid formatters: csv, keyvalue, xml")
            formatter = None if value in ("table", "simple", "tree") else value
            if formatter in ("python", "json", "html"):
                formatter = "xml" if formatter == "html" else formatter
        elif name == "debug":
            continue
        elif name == "version":
            return _ok("Script 'esxcli' version: 1.0\n")
        else:
            return _err(f"Error: Invalid option --{name}\n\n" + _namespace_usage((), []))
    if formatter in ("python", "json"):
        formatter = "keyvalue"
    prefix: tuple[str, ...] = ()
    display: list[str] = []
    cmd: Cmd | None = None
    while args and not args[0].startswith("-"):
        word = args[0]
        spaces, cmds = _children(prefix)
        low = word.lower()
        if low in cmds:
            cmd = cmds[low]
            args.pop(0)
            display.append(cmd.path[-1])
            break
        if low in spaces:
            prefix = (*prefix, low)
            display.append(spaces[low])
            args.pop(0)
            continue
        return _err(f"Error: Unknown command or namespace {' '.join([*display, word])}")
    if cmd is None:
        usage = _namespace_usage(prefix, display)
        if args:  # options after a namespace
            return _err(f"Error: Invalid option {args[0]}\n\n" + usage)
        return _ok(usage)
    if any(a in ("-h", "--help") for a in args):
        return _ok(_cmd_usage(cmd))
    try:
        opts = _parse_opts(cmd, args)
    except _UsageError as exc:
        return _err(f"{exc}\n\n{_cmd_usage(cmd)}")
    host = _host(ctx)
    result = cmd.run(ctx, host, opts)
    if isinstance(result, Reply):
        return result
    return _ok(_render(result, formatter))
