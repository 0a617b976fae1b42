"""Other ESXi commands: esxcfg-module, esxcfg-nics, vim-cmd, reboot, uname, vmware."""

from __future__ import annotations

import zlib

from roce_wizard.lab.esxi.common import _err, _host, _iso, _ok
from roce_wizard.lab.esxi.esxcli_network import _nic_rows
from roce_wizard.lab.esxi.esxcli_system import MODULES, _module_values, _powered_on_vms, format_options, parse_options
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.world import EsxiHost, World

# ==================================================================================== esxcfg-*, vim-cmd, misc


def esxcfg_module(ctx: Ctx, argv: list[str]) -> Reply:
    host = _host(ctx)
    args = argv[1:]
    usage = ("esxcfg-module <options> <module>\n"
             "   -g|--get-options     Get the options for a given module and whether it is loaded on boot.\n"
             "   -s|--set-options     Set the options for a given module. Will be used on next boot.\n"
             "   -l|--list            List the modules loaded.\n"
             "   -h|--help            Show this message.\n")
    if not args or args[0] in ("-h", "--help"):
        return _ok(usage)
    if args[0] in ("-g", "--get-options") and len(args) == 2:
        module = args[1]
        if module not in MODULES:
            return _err(f"Unable to get options for module {module}: Not found")
        options = format_options(_module_values(host, module))
        return _ok(f"{module} enabled = 1 options = '{options}'\n")
    if args[0] in ("-s", "--set-options") and len(args) == 3:
        module = args[2]
        if module not in MODULES:
            return _err(f"Unable to set options for module {module}: Not found")
        if module == "nmlx5_core":
            host.module_params = parse_options(args[1])
        return _ok()
    if args[0] in ("-l", "--list") and len(args) == 1:
        active = {v.name for v in host.vibs_active.values()}
        names = ["i40en", "igbn", "vmkusb"] + (["nmlx5_core", "nmlx5_rdma"] if "nmlx5-core" in active else [])
        names += ["nmst"] if "nmst" in active else []
        lines = ["Name                     Used Size (kb)"] + [f"{n:<25}{2:<5}{128}" for n in sorted(names)]
        return _ok("\n".join(lines) + "\n")
    return _err("Invalid usage.\n" + usage)


def esxcfg_nics(ctx: Ctx, argv: list[str]) -> Reply:
    if argv[1:] != ["-l"] and argv[1:] != ["--list"]:
        return _err("esxcfg-nics <options> [nic]\n   -l|--list          Print the list of NICs and their settings.\n")
    host = _host(ctx)
    lines = ["Name    PCI          Driver      Link Speed      Duplex MAC Address       MTU    Description"]
    for r in _nic_rows(ctx.world, host):
        lines.append(f"{r['Name']:<8}{r['PCIDevice']:<13}{r['Driver']:<12}{r['LinkStatus']:<5}"
                     f"{str(r['Speed']) + 'Mbps':<11}{r['Duplex']:<7}{r['MACAddress']:<18}{r['MTU']:<7}"
                     f"{r['Description']}")
    return _ok("\n".join(lines) + "\n")


def _host_summary(world: World, host: EsxiHost) -> str:
    uid = host.system_uuid
    up_s = int(host.uptime_us() / 1_000_000)
    rr = "true" if host.reboot_required() else "false"
    mm = "true" if host.maintenance_mode else "false"
    return f"""(vim.host.Summary) {{
   host = 'vim.HostSystem:ha-host',
   hardware = (vim.host.Summary.HardwareSummary) {{
      vendor = "Dell Inc.",
      model = "PowerEdge R740",
      uuid = "{uid}",
      otherIdentifyingInfo = (vim.host.SystemIdentificationInfo) [
         (vim.host.SystemIdentificationInfo) {{
            identifierValue = "LAB{zlib.crc32(host.system_uuid.encode()) % 10**7:07d}",
            identifierType = (vim.ElementDescription) {{
               label = "Service tag",
               summary = "Service tag of the system",
               key = "ServiceTag"
            }}
         }}
      ],
      memorySize = 412202483712,
      cpuModel = "Intel(R) Xeon(R) Gold 6240 CPU @ 2.60GHz",
      cpuMhz = 2594,
      numCpuPkgs = 2,
      numCpuCores = 36,
      numCpuThreads = 72,
      numNics = {len(host.vmnics)},
      numHBAs = 4
   }},
   runtime = (vim.host.RuntimeInfo) {{
      connectionState = "connected",
      powerState = "poweredOn",
      standbyMode = <unset>,
      inMaintenanceMode = {mm},
      inQuarantineMode = <unset>,
      bootTime = "{_iso(host.boot_time)}",
      healthSystemRuntime = (vim.host.HealthStatusSystem.Runtime) null,
   }},
   rebootRequired = {rr},
   quickStats = (vim.host.Summary.QuickStats) {{
      overallCpuUsage = 1432,
      overallMemoryUsage = 52012,
      uptime = {up_s}
   }},
   overallStatus = "green",
   config = (vim.host.Summary.ConfigSummary) {{
      name = "{host.name}",
      port = 443,
      product = (vim.AboutInfo) {{
         name = "VMware ESXi",
         fullName = "VMware ESXi {host.esxi_version} build-{host.esxi_build}",
         vendor = "VMware, Inc.",
         version = "{host.esxi_version}",
         build = "{host.esxi_build}"
      }}
   }}
}}
"""


_INVALID_STATE = """(vim.fault.InvalidState) {
   faultCause = (vmodl.MethodFault) null,
   faultMessage = <unset>
   msg = "The operation is not allowed in the current state."
}
"""


def vim_cmd(ctx: Ctx, argv: list[str]) -> Reply:
    host = _host(ctx)
    if len(argv) < 2:
        return _ok("Commands available under /:\nhbrsvc/       internalsvc/  solo/         vmsvc/\n"
                   "hostsvc/      proxysvc/     vimsvc/       help\n")
    command = argv[1].strip("/")
    if command == "hostsvc/hostsummary":
        return _ok(_host_summary(ctx.world, host))
    if command == "hostsvc/maintenance_mode_enter":
        if host.maintenance_mode:
            return _err(_INVALID_STATE)
        running = _powered_on_vms(ctx.world, host)
        if running:
            return _err(_INVALID_STATE)
        host.maintenance_mode = True
        return _ok()
    if command == "hostsvc/maintenance_mode_exit":
        if not host.maintenance_mode:
            return _err(_INVALID_STATE)
        host.maintenance_mode = False
        return _ok()
    if command in ("hostsvc", "vmsvc", "vimsvc", "solo", "proxysvc", "internalsvc", "hbrsvc"):
        return _ok(f"Commands available under {command}/:\n")
    return _err(f"Unknown command: '{argv[1]}'")


def reboot(ctx: Ctx, argv: list[str]) -> Reply:
    if any(a not in ("-f", "-n", "-d") and not a.isdigit() for a in argv[1:]):
        return _err(f"reboot: invalid option -- '{argv[1].lstrip('-')}'\nUsage: reboot [-d DELAY] [-n] [-f]")
    return Reply(action="reboot")


def uname(ctx: Ctx, argv: list[str]) -> Reply:
    host = _host(ctx)
    parts = {"s": "VMkernel", "n": host.name, "r": host.esxi_version,
             "v": f"#1 SMP Release build-{host.esxi_build} Mar 11 2021 20:41:48", "m": "x86_64", "p": "x86_64",
             "i": "x86_64", "o": "ESXi"}
    flags = "".join(a.lstrip("-") for a in argv[1:]) or "s"
    if "a" in flags:
        flags = "snrvmpio"
    unknown = [f for f in flags if f not in parts]
    if unknown:
        return _err(f"uname: invalid option -- '{unknown[0]}'\nUsage: uname [-amnrspvio]")
    return _ok(" ".join(parts[f] for f in "snrvmpio" if f in flags) + "\n")


def vmware(ctx: Ctx, argv: list[str]) -> Reply:
    host = _host(ctx)
    flags = "".join(a.lstrip("-") for a in argv[1:])
    version = f"VMware ESXi {host.esxi_version} build-{host.esxi_build}"
    major = ".".join(host.esxi_version.split(".")[:2])
    upd = host.esxi_version.split(".")[2] if host.esxi_version.count(".") >= 2 else "0"
    level = f"VMware ESXi {major} Update {upd}" if upd != "0" else f"VMware ESXi {major} GA"
    if not flags or set(flags) - {"v", "l"}:
        return _err("Usage: vmware [-v|--version] [-l|--level]")
    lines = ([version] if "v" in flags else []) + ([level] if "l" in flags else [])
    return _ok("\n".join(lines) + "\n")
