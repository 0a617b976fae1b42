"""`esxcli system ...` and `hardware ...`: module parameters, advanced settings, uptime, CPU, version, maintenance mode, shutdown."""

from __future__ import annotations

from typing import Any

from roce_wizard.lab.esxi.common import CPU_POLICIES, _err
from roce_wizard.lab.esxi.esxcli_model import Out, _fields
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.world import EsxiHost, World

# ---------------------------------------------------------------------------- system module


NMLX5_CORE_PARAMS: list[tuple[str, str, str]] = [
    ("DRSS", "int", "Number of RSS queues to use for the default queue. Valid values: [0-16]"),
    ("DYN_RSS", "int", "Enable dynamic RSS. Values: 0 - disabled (default), 1 - enabled"),
    ("GEN_RSS", "int", "Requested max number of generic RSS engines. Values: 0 - disabled, 2 (default), 3 - max"),
    ("RSS", "int", "Number of RSS queues to use for the NetQ. Valid values: [0-16]"),
    # no default claimed: NVIDIA's 4.17.15.16 manual says 0 (Default), seed 000 says 4.21 enables it
    ("ecn", "int", "Enable the ECN support. Values: 0 - disabled, 1 - enabled"),
    ("enable_nmlx_debug", "int",
     "Enable debug prints for the core module. Values: 0 - disabled (default), 1 - enabled"),
    ("geneve_offload_enable", "int", "Enable GENEVE offloads. Values: 0 - disabled, 1 - enabled (default)"),
    ("max_vfs", "array of int",
     "Number of PCI VFs to initialize. Values: 0 - disabled (default), N - number of VFs per port"),
    ("mst_recovery", "int",
     "Enable recovery mode (only NMST module is loaded). Values: 0 - disabled (default), 1 - enabled"),
    ("pfcrx", "int", "Priority based Flow Control policy on RX. Values: 0-255 bitmask, 0x00 - disabled (default)"),
    ("pfctx", "int", "Priority based Flow Control policy on TX. Values: 0-255 bitmask, 0x00 - disabled (default)"),
    ("trust_state", "int",
     "Port policy to calculate the switch priority and packet color. Values: 1 - TRUST_PCP (default), 2 - TRUST_DSCP"),
]
NMLX5_RDMA_PARAMS: list[tuple[str, str, str]] = [
    ("dscp_force", "int", "Set DSCP value for all RoCE traffic. Values: 0-63, -1 - disabled (default)"),
    ("pcp_force", "int", "Set PCP value for all RoCE traffic. Values: 0-7, -1 - disabled (default)"),
]
MODULES = {"nmlx5_core": NMLX5_CORE_PARAMS, "nmlx5_rdma": NMLX5_RDMA_PARAMS}


def parse_options(text: str) -> dict[str, str]:
    """`pfctx=0x08 max_vfs=0,0,8,7` -> {"pfctx": "0x08", ...}; whitespace (newlines too) separates."""
    out: dict[str, str] = {}
    for tok in text.split():
        key, _, value = tok.partition("=")
        out[key] = value
    return out


def format_options(params: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" if v != "" else k for k, v in params.items())


def _module_values(host: EsxiHost, module: str) -> dict[str, str]:
    return host.module_params if module == "nmlx5_core" else {}


def _params_list(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    module = opts["module"]
    if module not in MODULES:
        return _err(f"Error: Unable to find module {module}")
    values = _module_values(host, module)
    rows = [{"Name": name, "Type": typ, "Value": values.get(name, ""), "Description": desc}
            for name, typ, desc in sorted(MODULES[module])]
    return Out("table", "ModuleParameter", _fields("Name", "Type", "Value", "Description"), rows)


def _params_set(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    module = opts["module"]
    if module not in MODULES:
        return _err(f"Error: Unable to find module {module}")
    new = parse_options(opts["parameter-string"])
    if not opts.get("force"):
        known = {name for name, _, _ in MODULES[module]}
        unknown = [k for k in new if k not in known]
        if unknown:
            return _err(f"Error: Invalid parameter name(s) for module {module}: {', '.join(unknown)}. "
                        "Use -f|--force to skip parameter name validation.")
    if module != "nmlx5_core":
        return Out("none")
    if opts.get("append"):
        merged = dict(host.module_params)
        merged.update(new)
        new = merged
    # esxcli stores the string as given: the WHOLE option string is replaced (RW209's docstring)
    host.module_params = new
    return Out("none")


def _module_list(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out:
    active = {v.name for v in host.vibs_active.values()}
    names = ["i40en", "igbn", "nvme_pcie", "vmkusb"]
    names += ["nmlx5_core", "nmlx5_rdma"] if "nmlx5-core" in active else []
    names += ["nmst"] if "nmst" in active else []
    rows = [{"Name": n, "IsLoaded": True, "IsEnabled": True} for n in sorted(names)]
    return Out("table", "Module", _fields("Name", "Is Loaded", "Is Enabled"), rows)


# ---------------------------------------------------------------------------- system settings / stats / hardware


def _advanced_options(host: EsxiHost) -> dict[str, dict[str, Any]]:
    return {
        "/Power/CpuPolicy": {
            "Path": "/Power/CpuPolicy", "Type": "string", "IntValue": 0, "DefaultIntValue": 0, "MinValue": 0,
            "MaxValue": 0, "StringValue": host.power_policy, "DefaultStringValue": "Balanced", "ValidCharacters": "*",
            "Description": 'CPU power management policy: "High Performance", "Balanced", "Low Power", "Custom"',
            "HostSpecific": False, "Impact": "none"},
        "/UserVars/SuppressShellWarning": {
            "Path": "/UserVars/SuppressShellWarning", "Type": "integer", "IntValue": 0, "DefaultIntValue": 0,
            "MinValue": 0, "MaxValue": 1, "StringValue": "", "DefaultStringValue": "", "ValidCharacters": "",
            "Description": "Don't show warning for enabled local and remote shell access", "HostSpecific": False,
            "Impact": "none"},
    }


_ADV_FIELDS = _fields("Path", "Type", "Int Value", "Default Int Value", "Min Value", "Max Value", "String Value",
                      "Default String Value", "Valid Characters", "Description", "Host Specific", "Impact")


def _adv_list(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    options = _advanced_options(host)
    if "option" in opts:
        path = opts["option"]
        match = next((v for k, v in options.items() if k.lower() == path.lower()), None)
        if match is None:
            return _err(f"Error: Unable to find option {path.rsplit('/', 1)[-1]}")
        return Out("structs", "SettingsAdvancedOption", _ADV_FIELDS, [match])
    return Out("structs", "SettingsAdvancedOption", _ADV_FIELDS, list(options.values()))


def _adv_set(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    path = opts["option"]
    if path.lower() == "/power/cpupolicy":
        if opts.get("default"):
            host.power_policy = "Balanced"
            return Out("none")
        if "string-value" not in opts:
            return _err("Error: Invalid value for option /Power/CpuPolicy: a string value is required (-s)")
        value = next((p for p in CPU_POLICIES if p.lower() == opts["string-value"].strip().lower()), None)
        if value is None:
            return _err(f"Error: Invalid value for option /Power/CpuPolicy: '{opts['string-value']}'. "
                        f"Valid values: {', '.join(CPU_POLICIES)}")
        host.power_policy = value
        return Out("none")
    if path.lower() in (k.lower() for k in _advanced_options(host)):
        return Out("none")
    return _err(f"Error: Unable to find option {path.rsplit('/', 1)[-1]}")


def _uptime(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out:
    return Out("scalar", "Uptime", value=host.uptime_us())


def _hv_support(host: EsxiHost) -> int:
    if host.bios.get("ProcVirtualization") == "Disabled":
        return 2  # the CPU supports VT-x, the BIOS disabled it
    return host.hv_support


def _cpu_global(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out:
    row = {"CPUPackages": 2, "CPUCores": 36, "CPUThreads": 72, "HyperthreadingActive": True,
           "HyperthreadingSupported": True, "HyperthreadingEnabled": True, "HVSupport": _hv_support(host),
           "HVReplayCapable": False, "HVReplayDisabledReasons": "HV Replay is not supported on this CPU"}
    return Out("structs", "CPUGlobal", [("CPU Packages", "CPUPackages"), ("CPU Cores", "CPUCores"),
                                        ("CPU Threads", "CPUThreads"),
                                        ("Hyperthreading Active", "HyperthreadingActive"),
                                        ("Hyperthreading Supported", "HyperthreadingSupported"),
                                        ("Hyperthreading Enabled", "HyperthreadingEnabled"),
                                        ("HV Support", "HVSupport"), ("HV Replay Capable", "HVReplayCapable"),
                                        ("HV Replay Disabled Reasons", "HVReplayDisabledReasons")], [row])


def _version_get(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out:
    update = host.esxi_version.split(".")[2] if host.esxi_version.count(".") >= 2 else "0"
    row = {"Product": "VMware ESXi", "Version": host.esxi_version, "Build": f"Releasebuild-{host.esxi_build}",
           "Update": update, "Patch": "0"}
    return Out("structs", "VersionGet", _fields("Product", "Version", "Build", "Update", "Patch"), [row])


def _mm_get(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out:
    return Out("scalar", "MaintenanceMode", value="Enabled" if host.maintenance_mode else "Disabled")


def _powered_on_vms(world: World, host: EsxiHost) -> list[str]:
    return sorted(vm.name for vm in world.vms.values() if vm.host == host.name and vm.powered_on)


def _mm_set(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    enable = opts["enable"]
    if enable and not host.maintenance_mode:
        running = _powered_on_vms(ctx.world, host)
        if running:
            # a standalone host cannot evacuate VMs: they must be powered off or migrated first
            return _err("Error: A general system error occurred: Unable to enter maintenance mode: "
                        f"{len(running)} powered-on virtual machine(s) on this host ({', '.join(running)}). "
                        "Power them off or migrate them first.")
    host.maintenance_mode = enable
    return Out("none")


def _shutdown_reboot(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    if not host.maintenance_mode:
        return _err("Error: This operation is not allowed in the current state: the host is not in maintenance "
                    "mode (esxcli system maintenanceMode set --enable true).")
    return Reply(action="reboot")


def _shutdown_poweroff(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    if not host.maintenance_mode:
        return _err("Error: This operation is not allowed in the current state: the host is not in maintenance "
                    "mode (esxcli system maintenanceMode set --enable true).")
    return Reply(action="reboot")  # the lab powers the host back on: a cold boot
