"""RW211 ecn-enabled — nmlx5_core has ECN (DCQCN congestion control) on

What it checks
    `esxcli system module parameters list -m nmlx5_core` → `ecn` is 1, set explicitly. Unset WARNS
    "could not tell": the default is not assumed, because it differs across nmlx5 versions — NVIDIA's
    "ESXi 6.7/6.7 U1: NVIDIA ConnectX-4/ConnectX-5 NATIVE ESXi Driver for VMware vSphere User Manual
    v4.17.15.16" (https://docs.nvidia.com/networking/display/VMwarev4171516/Introduction) lists
    `ecn` "0 - disabled (Default)", while seed 000 on 4.21.71.101 says "The ecn=1 is set by default,
    but we explicitly set it to clarify that the feature is turned on".

Why it matters
    With ECN the switch marks instead of dropping or pausing early, and the RoCE senders slow down
    (DCQCN). Without it PFC alone carries congestion, pause storms spread across the fabric and
    tail latency grows.

How to fix by hand
    `parameters set` REPLACES the whole string: read the current string, change only ecn, write it
    all back:
        esxcli system module parameters list -m nmlx5_core
        esxcli system module parameters set -m nmlx5_core -p "<current params> ecn=1"
    then reboot the host.
    Sources: both commands — the NVIDIA manual above ("Module Parameters": `esxcli system module
    parameters set -m nmlx5_core -p <parameter>=<value>`, `… list -m <module name>`, reboot for the
    change to take effect) and seed 000 (`parameters set -m nmlx5_core -p "pfctx=0x08 … ecn=1"`).

Fix safety
    disruptive: driver parameters take effect at the next host reboot; a string written without
    the other keys loses max_vfs, PFC and trust.
    The tool writes the ONE desired nmlx5_core string (every policy key put right, every other key
    such as max_vfs kept); the preview shows the full string before and after.
"""

from roce_wizard.checklib.esxi import merged_params_fix, module_params, params_details, params_fix_plan
from roce_wizard.checklib.findings import bad, excerpt, good
from roce_wizard.model import (
    Check,
    Facts,
    Finding,
    FixPlan,
    Policy,
    RebootKind,
    Severity,
    Stage,
    TargetKind,
)

CHECK = Check(
    code="RW211",
    slug="ecn-enabled",
    title="ECN enabled (nmlx5_core)",
    stage=Stage.ESXI,
    target=TargetKind.ESXI,
    severity=Severity.WARN,
    probes=("esxi_module_params",),
    depends_on=(),
    reboot=RebootKind.HOST,
    fix_hint='esxcli system module parameters set -m nmlx5_core -p "<all current params> ecn=1"',
)


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    options = module_params(facts)
    value = options.get("ecn")
    ev = excerpt(facts.raw.get("esxi_module_params"), r"\becn\b", r"options\s*=")
    if value is None:
        # no assumed default. NVIDIA's 4.17 manual says "0 - disabled (Default)"; seed 000
        # (4.21) says the driver sets ecn=1 by default: which one this host's driver uses is unknown
        changes = {"ecn": "1"}
        f = bad(CHECK, facts, "ecn is not set: could not tell whether ECN is on (the nmlx5_core default differs "
                "across driver versions: 0 in NVIDIA's 4.17 manual, 1 per seed 000 on 4.21); set ecn=1 explicitly",
                observed=None, expected="1, set explicitly", excerpt=ev, fix=merged_params_fix(facts, policy, changes),
                details=params_details(facts, policy, changes))
        return [f]
    if str(value).strip() == "1":
        return [good(CHECK, facts, "ecn=1", observed=value, expected="1", excerpt=ev)]
    changes = {"ecn": "1"}
    return [bad(CHECK, facts, f"ecn={value}: ECN / DCQCN congestion control is off", observed=value,
                expected="1", excerpt=ev, fix=merged_params_fix(facts, policy, changes),
                details=params_details(facts, policy, changes))]


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """Write the one desired nmlx5_core parameter string (before/after: the full strings)."""
    return params_fix_plan(CHECK, facts, policy, "ecn=1 (full nmlx5_core string)")
