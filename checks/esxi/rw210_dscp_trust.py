"""RW210 dscp-trust — nmlx5_core classifies traffic by DSCP

What it checks
    `esxcli system module parameters list -m nmlx5_core` → `trust_state` is 2 (trust DSCP) when
    the site policy's trust is `dscp` (1 = trust PCP when the policy says `pcp`). Unset means the
    driver default: trust PCP.

Why it matters
    RoCE v2 from a VF is routable and usually untagged: there is no VLAN PCP to read, so with
    PCP trust every RoCE packet lands in priority 0 and never uses the lossless priority. With DSCP
    trust the RoCE DSCP (26 by default) maps to priority 3, where PFC is on.

How to fix by hand
    `parameters set` REPLACES the whole string: read the current string, change only trust_state,
    write it all back:
        esxcli system module parameters list -m nmlx5_core
        esxcli system module parameters set -m nmlx5_core -p "<current params> trust_state=2"
    then reboot the host.
    Sources: both commands and the keys — "ESXi 7.0: NVIDIA NATIVE Driver for VMware vSphere User Manual v4.19.71.1", "Module Parameters"
        (`esxcli system module parameters set -m nmlx5_core -p <parameter>=<value>`, `… list -m <module name>`,
        reboot to apply), https://docs.nvidia.com/networking/display/VMwareUMv419711/Module+Parameters;
        the full string as written — seed 000 (`parameters set -m nmlx5_core -p "pfctx=0x08 pfcrx=0x08
        trust_state=2 max_vfs=0,0,8,7 ecn=1"`).

Fix safety
    disruptive: driver parameters take effect at the next host reboot; a string written without
    the other keys loses max_vfs and PFC.
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
    code="RW210",
    slug="dscp-trust",
    title="DSCP trust (nmlx5_core)",
    stage=Stage.ESXI,
    target=TargetKind.ESXI,
    severity=Severity.FAIL,
    probes=("esxi_module_params",),
    depends_on=(),
    reboot=RebootKind.HOST,
    fix_hint='esxcli system module parameters set -m nmlx5_core -p "<all current params> trust_state=2"',
)


TRUST_STATE = {"pcp": 1, "dscp": 2}


def _as_int(value: str | None) -> int | None:
    try:
        return int(str(value).strip(), 10) if value is not None else None
    except ValueError:
        return None


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    options = module_params(facts)
    want = TRUST_STATE.get(policy.trust.lower(), 2)
    value = options.get("trust_state")
    observed = value
    ev = excerpt(facts.raw.get("esxi_module_params"), r"\btrust_state\b", r"options\s*=")
    names = {1: "PCP", 2: "DSCP"}
    if _as_int(value) == want:
        return [good(CHECK, facts, f"trust_state={value} (trust {names[want]})", observed=observed,
                     expected=str(want), excerpt=ev)]
    if value is None:
        summary = f"trust_state is not set (driver default: trust PCP); the policy wants {names[want]}"
    else:
        summary = f"trust_state={value} (trust {names.get(_as_int(value), 'unknown')}); the policy wants {names[want]}"
    changes = {"trust_state": str(want)}
    return [bad(CHECK, facts, summary, observed=observed, expected=str(want), excerpt=ev,
                fix=merged_params_fix(facts, policy, changes), details=params_details(facts, policy, changes))]


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """Write the one desired nmlx5_core parameter string (before/after: the full strings)."""
    return params_fix_plan(CHECK, facts, policy, f"trust {policy.trust.upper()} (trust_state, full nmlx5_core string)")
