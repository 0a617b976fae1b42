"""What the ESXi checks (RW2xx) share: the mlxconfig query and `mlxconfig -d … set` steps, the installed
VIBs, the nmlx5_core parameter string (read, merged with every policy key, written whole) and the
nmlx5 vmnics in max_vfs order.

Checks stay pure: these functions only read `Facts` and build `Step`s and `FixPlan`s.
"""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.commands.handfix import NMLX5_PARAMS, pasteable
from roce_wizard.commands.shell import UnsafeValue, safe
from roce_wizard.model import Check, Facts, FixPlan, MissingFact, Policy, RebootKind, Safety, Step
from roce_wizard.parsers.esxi import format_options_string, parse_options_string
from roce_wizard.probes import roce_mst_device, short_pci

__all__ = [
    "MLXCONFIG",
    "PARAMS_REBOOT_REASON",
    "dcb_by_vmnic",
    "desired_params",
    "device_label",
    "find_vib",
    "format_options_string",
    "inventory_max_vfs",
    "merged_params_fix",
    "mlx_device_name",
    "mlx_value",
    "mlxconfig_devices",
    "mlxconfig_fix_plan",
    "mlxconfig_set_step",
    "module_params",
    "nmlx5_vmnics",
    "params_details",
    "params_fix_plan",
    "params_set_command",
    "parse_int_list",
    "parse_options_string",
    "safe_datastore",
    "safe_mlx_device",
    "safe_vmnic",
    "shown_mlx_device",
]


MLXCONFIG = "/opt/mellanox/bin/mlxconfig"  # where the MFT VIB puts it on ESXi
PARAMS_SET = 'esxcli system module parameters set -m nmlx5_core -p "{}"'
NO_MST_DEVICE = "<mst device>"


# ---------------------------------------------------------------------------- mlxconfig


def mlxconfig_devices(facts: Facts) -> list[dict[str, Any]]:
    """The devices of the mlxconfig query (doctor queries only the RoCE card; analyze, all)."""
    return list(facts.need("mlxconfig_query").get("devices", []))


def mlx_value(device: dict[str, Any], name: str, column: str = "next_boot") -> Any:
    """A parameter's value in a column; for `current` fall back to the only column printed."""
    param = (device.get("params") or {}).get(name)
    if param is None:
        return None
    if column in param:
        return param[column]
    return None


def device_label(device: dict[str, Any]) -> str:
    return device.get("device") or device.get("device_type") or "device"


def mlx_device_name(facts: Facts, device: dict[str, Any]) -> str:
    """What to pass to `mlxconfig -d`: the device the query printed, else the RoCE card's mst name."""
    if device.get("device"):
        return device["device"]
    if facts.target is not None:
        mst = roce_mst_device(facts.target, facts.data)
        if mst:
            return mst
        if facts.target.roce.pf_pci:
            return short_pci(facts.target.roce.pf_pci)
    return NO_MST_DEVICE


# ---------------------------------------------------------------------------- ESXi nmlx5


def find_vib(facts: Facts, *names: str) -> dict[str, Any] | None:
    """The first installed VIB (esxcli software vib list) named one of `names` (lower case), else None."""
    vibs = facts.need("esxi_vib_list").get("vibs", [])
    return next((v for v in vibs if (v.get("name") or "").strip().lower() in names), None)


def module_params(facts: Facts) -> dict[str, str]:
    """nmlx5_core parameters as set now (name -> value string): the `options` string when the output
    shows one (in its order), else the parameter table."""
    mp = facts.need("esxi_module_params")
    modules = mp.get("modules") or [mp]
    core = next((m for m in modules if m.get("module") == "nmlx5_core"), None)
    if core is None and mp.get("module") not in (None, "nmlx5_core"):
        # another module's parameters (nmlx5_rdma, ...) say nothing about nmlx5_core's
        raise MissingFact("esxi_module_params", "could not tell: the output shows the parameters of "
                          + ", ".join(str(m.get("module")) for m in modules) + ", not nmlx5_core")
    core = core or mp
    placeholders = core.get("placeholders") or []
    if placeholders:
        # `max_vfs=<value>`: a document's example, not a host's setting; judging (or rewriting the whole
        # -p string from) the rest would drop or invent the unknown ones
        raise MissingFact("esxi_module_params", "could not tell: the output holds placeholder values ("
                          + ", ".join(f"{k}={parse_options_string(core.get('options_string') or '').get(k)}"
                                      for k in placeholders) + "), not a host's parameters")
    if mp.get("elided") and core.get("options_string") is None:
        raise MissingFact("esxi_module_params", "could not tell: lines of the parameter table were left out (`...`), "
                          "so a parameter it does not show may well be set")
    if core.get("unreadable"):
        raise MissingFact("esxi_module_params", "could not tell: the table's columns were collapsed, so the values of "
                          + ", ".join(core["unreadable"]) + " cannot be told from their descriptions")
    if core.get("options_string") is not None:
        return parse_options_string(core["options_string"])
    return dict(core.get("params") or {})


def dcb_by_vmnic(facts: Facts) -> dict[str | None, dict[str, Any]]:
    """vmnic -> its DCB status block, from per-vmnic probe output ({vmnic: {"nics": [...]}}) or one pasted
    output ({"nics": [...]}; a block without a name is keyed None). Read by RW216 and RW212."""
    data = facts.get("esxi_dcb_status")
    if not isinstance(data, dict):
        return {}
    out: dict[str | None, dict[str, Any]] = {}
    if isinstance(data.get("nics"), list):
        for nic in data["nics"]:
            out[nic.get("name")] = nic
        return out
    for vmnic, blocks in data.items():
        for nic in (blocks or {}).get("nics", []) if isinstance(blocks, dict) else []:
            if nic.get("name") in (None, vmnic):
                out[vmnic] = nic
    return out


def desired_params(facts: Facts, policy: Policy, changes: dict[str, str] | None = None) -> dict[str, str]:
    """The nmlx5_core parameter string every params fix writes: the current parameters with EVERY
    policy key put right (pfctx/pfcrx, trust_state, ecn; max_vfs from the inventory when the nic list
    says where its entries go), plus the caller's own changes.

    `-p` replaces the whole string, so fixes that each changed only their own key would undo each
    other when run one after another; with one desired string they are safe in any order.
    """
    current = module_params(facts)
    out = dict(current)
    mask = policy.pfc_bitmask
    for key in ("pfctx", "pfcrx"):
        if _int(current.get(key)) != mask:
            out[key] = f"0x{mask:02x}"
    trust = "2" if policy.trust == "dscp" else "1"
    if current.get("trust_state") != trust:
        out["trust_state"] = trust
    if current.get("ecn") != "1":  # unset too: the driver default is not assumed (RW211)
        out["ecn"] = "1"
    wanted = inventory_max_vfs(facts)
    if wanted is not None:
        out["max_vfs"] = wanted
    out.update(changes or {})
    return out


def inventory_max_vfs(facts: Facts) -> str | None:
    """max_vfs with the inventory's VF counts at its RoCE vmnics' positions (other entries kept),
    or None when the inventory or the nic list does not say."""
    target = facts.target
    nics = nmlx5_vmnics(facts) if (facts.has("esxi_nic_list") or facts.has("esxi_esxcfg_nics")) else None
    if target is None or not target.roce.vfs or not target.roce.vmnics or not nics:
        return None
    order = [n.get("name") for n in nics]
    if any(v not in order for v in target.roce.vmnics):
        return None
    current = parse_int_list(module_params(facts).get("max_vfs")) or []
    entries = current + [0] * max(0, len(order) - len(current))
    for vmnic, want in zip(target.roce.vmnics, target.roce.vfs):
        entries[order.index(vmnic)] = want
    return ",".join(str(x) for x in entries)


def _int(value: str | None) -> int | None:
    try:
        return int(value, 0) if value is not None else None
    except ValueError:
        return None


def merged_params_fix(facts: Facts, policy: Policy, changes: dict[str, str] | None = None) -> str:
    """The full `esxcli system module parameters set -m nmlx5_core -p "…"` command (and the reboot it needs),
    every key and value validated as for the executed step; a sentence instead when one is unsafe."""
    params = desired_params(facts, policy, changes)
    # a placeholder of the caller's own (`<one-entry-per-…>`) is for the reader to fill in: not validated
    blanks = {k for k, v in (changes or {}).items() if re.fullmatch(r"<[a-z0-9-]+>", str(v))}

    def build() -> str:
        params_set_command({k: v for k, v in params.items() if k not in blanks})
        return PARAMS_SET.format(format_options_string(params)) + "  # then reboot the host"
    return pasteable(build, NMLX5_PARAMS)


def params_details(facts: Facts, policy: Policy, changes: dict[str, str] | None = None) -> dict[str, str]:
    """A finding's details for a merged_params_fix: the full parameter string before and after."""
    return {"params_before": format_options_string(module_params(facts)),
            "params_after": format_options_string(desired_params(facts, policy, changes))}


def nmlx5_vmnics(facts: Facts) -> list[dict[str, Any]] | None:
    """nmlx5_core vmnics in driver enumeration order (PCI address order): max_vfs positions.

    From `esxcli network nic list`, else `esxcfg-nics -l`; None without either.
    """
    for kind in ("esxi_nic_list", "esxi_esxcfg_nics"):
        if facts.has(kind):
            nics = [n for n in facts.get(kind).get("nics", []) if (n.get("driver") or "").startswith("nmlx5")]
            return sorted(nics, key=lambda n: _pci_key(n.get("pci") or ""))
    return None


def _pci_key(pci: str) -> tuple[int, ...]:
    """A sort key for PCI addresses ('0000:3b:00.1' or '3b:00.1'), unreadable ones last."""
    parts = re.split(r"[:.]", pci.lower())
    try:
        nums = tuple(int(p, 16) for p in parts)
    except ValueError:
        return (1 << 30,)
    return nums if len(nums) == 4 else (0, *nums)


def parse_int_list(value: str | None) -> list[int] | None:
    """'0,0,8,7' -> [0, 0, 8, 7]; None when absent or unreadable."""
    if value is None:
        return None
    try:
        return [int(x, 0) for x in value.split(",") if x.strip() != ""]
    except ValueError:
        return None


# ---------------------------------------------------------------------------- fix plans (ESXi)
# plan_fix functions build shell lines from facts and policy: every value is validated first
# (UnsafeValue when it does not fit), then quoted where the shell could read it.

_PARAM_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_PARAM_VALUE = re.compile(r"^[A-Za-z0-9_.,:+-]{0,256}$")
_VMNIC = re.compile(r"^vmnic\d{1,4}$")
_MST_DEVICE = re.compile(r"^(?:/dev/mst/)?[A-Za-z0-9_.:-]{1,64}$")
_DATASTORE = re.compile(r"^/vmfs/volumes/[A-Za-z0-9_. ()+:@-]+(?:/[A-Za-z0-9_. ()+:@-]+)*$")
PARAMS_REBOOT_REASON = "nmlx5_core reads its parameters when the driver loads at boot"


def safe_vmnic(name: str) -> str:
    return safe(name, _VMNIC)


def safe_mlx_device(name: str) -> str:
    """An mst device name (mt4119_pciconf1, /dev/mst/…) or a PCI address, validated for `mlxconfig -d`."""
    return safe(name, _MST_DEVICE)


def shown_mlx_device(facts: Facts, device: dict[str, Any]) -> str:
    """`mlx_device_name` validated for a fix-by-hand line (UnsafeValue when it does not fit); the
    placeholder it gives when nothing names the device stays as it is, for the reader to fill in."""
    name = mlx_device_name(facts, device)
    return name if name == NO_MST_DEVICE and not device.get("device") else safe_mlx_device(name)


def safe_datastore(path: str) -> str:
    """A datastore folder (/vmfs/volumes/<name>/<dir>), validated and quoted; a glob may follow it."""
    path = path.rstrip("/")
    if len(path) > 200:
        raise UnsafeValue(f"refusing to put {path!r} into a remote command")
    return safe(path, _DATASTORE)


def params_set_command(params: dict[str, str]) -> str:
    """`esxcli system module parameters set -m nmlx5_core -p "<the whole string>"`, every key and value
    validated (they come from the host's own parameter list and go inside double quotes)."""
    for key, value in params.items():
        if not _PARAM_KEY.match(key) or (value is not None and not _PARAM_VALUE.match(str(value))):
            raise UnsafeValue(f"refusing to put nmlx5_core parameter {key}={value!r} into a remote command")
    return PARAMS_SET.format(format_options_string(params))


def params_fix_plan(check: Check, facts: Facts, policy: Policy, summary: str,
                    changes: dict[str, str] | None = None) -> FixPlan | None:
    """The plan every nmlx5_core params fix shares: write the ONE desired string (desired_params) whole.

    None when the desired string is what is set already."""
    before = module_params(facts)
    after = desired_params(facts, policy, changes)
    if after == before:
        return None
    return FixPlan(
        check=check.code, target=facts.target_name, summary=summary,
        steps=(Step("write the full nmlx5_core parameter string (-p replaces it whole: every key is kept)",
                    params_set_command(after), before=format_options_string(before),
                    after=format_options_string(after)),),
        safety=Safety.DISRUPTIVE, reboot=RebootKind.HOST, reboot_reason=PARAMS_REBOOT_REASON)


def mlxconfig_set_step(device: str, sets: dict[str, Any], before: dict[str, Any], what: str) -> Step:
    """ONE `mlxconfig -d DEV -y set K=V …` for everything wrong on a device (values are ints)."""
    for key, value in sets.items():
        if not _PARAM_KEY.match(key) or not isinstance(value, int):
            raise UnsafeValue(f"refusing to put {key}={value!r} into a remote command")
    args = " ".join(f"{k}={v}" for k, v in sets.items())
    return Step(f"{what} on {device} (firmware configuration, applied at the next boot)",
                f"{MLXCONFIG} -d {safe_mlx_device(device)} -y set {args}",
                before=" ".join(f"{k}={before.get(k)}" for k in sets), after=args)


def mlxconfig_fix_plan(check: Check, facts: Facts, summary: str, steps: list[Step]) -> FixPlan | None:
    """The plan of an mlxconfig-based ESXi check: disruptive, applied at the next host reboot, after the
    MFT tools and the mst device are there (RW201, RW202). None when there is nothing to set."""
    if not steps:
        return None
    return FixPlan(check=check.code, target=facts.target_name, summary=summary, steps=tuple(steps),
                   safety=Safety.DISRUPTIVE, reboot=RebootKind.HOST,
                   reboot_reason="firmware configuration (mlxconfig) is read at boot", needs=("RW201", "RW202"))
