"""RW211 ecn-enabled — nmlx5_core has ECN (DCQCN congestion control) on

What it checks
    `esxcli system module parameters list -m nmlx5_core` → `ecn` is 1. Unset passes with a note:
    the driver default is ecn=1 (seed 000: "The ecn=1 is set by default, but we explicitly set it
    to clarify that the feature is turned on").

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

Fix safety
    disruptive: driver parameters take effect at the next host reboot; a string written without
    the other keys loses max_vfs, PFC and trust.
    The tool writes the ONE desired nmlx5_core string (every policy key put right, every other key
    such as max_vfs kept); the preview shows the full string before and after.
"""

from roce_wizard.checkkit import (
    bad,
    excerpt,
    failing,
    good,
    merged_params_fix,
    module_params,
    params_details,
    params_fix_plan,
)
from roce_wizard.model import (
    Check,
    Facts,
    Finding,
    FixPlan,
    MissingFact,
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
        return [good(CHECK, facts, "ecn is not set: the driver default is ecn=1 (seed 000)", observed=None,
                     expected="1", excerpt=ev)]
    if str(value).strip() == "1":
        return [good(CHECK, facts, "ecn=1", observed=value, expected="1", excerpt=ev)]
    changes = {"ecn": "1"}
    return [bad(CHECK, facts, f"ecn={value}: ECN / DCQCN congestion control is off", observed=value,
                expected="1", excerpt=ev, fix=merged_params_fix(facts, policy, changes),
                details=params_details(facts, policy, changes))]


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """Write the one desired nmlx5_core parameter string (before/after: the full strings)."""
    try:
        if not failing(evaluate(facts, policy)):
            return None
    except MissingFact:
        return None
    return params_fix_plan(CHECK, facts, policy, "ecn=1 (full nmlx5_core string)")
