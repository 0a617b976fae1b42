"""RW213 host-power-policy — the ESXi CPU power policy is High Performance

What it checks
    `esxcli system settings advanced list -o /Power/CpuPolicy` → `String Value` is
    `High Performance` (seed 000 best practice, set with the BIOS profile "Performance Per Watt
    (OS)" so that the OS decides).

Why it matters
    Balanced (the default) lets cores drop into deep C-states and lower P-states between
    messages: small-message RDMA latency grows and jitters, which MPI collectives amplify.

How to fix by hand
    esxcli system settings advanced set -o /Power/CpuPolicy -s "High Performance"
    (or vSphere Client: host > Configure > Hardware > Overview > Power Management > Edit Power
    Policy > High Performance). Takes effect at once.

Fix safety
    safe: no reboot, no traffic impact; the host draws more power.
    The tool runs the `advanced set` above; takes effect at once.
"""

from roce_wizard.checkkit import bad, excerpt, failing, good
from roce_wizard.model import (
    Check,
    Facts,
    Finding,
    FixPlan,
    MissingFact,
    Policy,
    RebootKind,
    Safety,
    Severity,
    Stage,
    Step,
    TargetKind,
)

CHECK = Check(
    code="RW213",
    slug="host-power-policy",
    title="Host power policy High Performance",
    stage=Stage.ESXI,
    target=TargetKind.ESXI,
    severity=Severity.WARN,
    probes=("esxi_power_policy",),
    depends_on=(),
    reboot=RebootKind.NONE,
    fix_hint='esxcli system settings advanced set -o /Power/CpuPolicy -s "High Performance"',
)

WANT = "High Performance"


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    pp = facts.need("esxi_power_policy")
    value = pp.get("value")
    ev = excerpt(facts.raw.get("esxi_power_policy"), r"String Value|Path:", r"/Power/CpuPolicy")
    if isinstance(value, str) and value.strip().lower() == WANT.lower():
        return [good(CHECK, facts, f"CPU power policy is {value}", observed=value, expected=WANT, excerpt=ev)]
    shown = value if value not in (None, "") else "not readable"
    return [bad(CHECK, facts, f"CPU power policy is {shown}, not {WANT}", observed=value, expected=WANT,
                excerpt=ev, fix=f'esxcli system settings advanced set -o /Power/CpuPolicy -s "{WANT}"')]


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """Set /Power/CpuPolicy to High Performance (at once, no reboot)."""
    try:
        bad_findings = failing(evaluate(facts, policy))
    except MissingFact:
        return None
    if not bad_findings:
        return None
    before = bad_findings[0].observed
    return FixPlan(check=CHECK.code, target=facts.target_name, summary=f"CPU power policy {WANT}",
                   steps=(Step(f"set the CPU power policy to {WANT}",
                               f'esxcli system settings advanced set -o /Power/CpuPolicy -s "{WANT}"',
                               before=str(before) if before not in (None, "") else None, after=WANT),),
                   safety=Safety.SAFE, reboot=RebootKind.NONE)
