"""RW213 host-power-policy — the ESXi CPU power policy is High Performance

What it checks
    `esxcli system settings advanced list -o /Power/CpuPolicy` → `String Value` is
    `High Performance` (seed 000 best practice, set with the BIOS profile "Performance Per Watt
    (OS)" so that the OS decides). With a vCenter in the inventory, vCenter's RW307 judges the same
    setting and can fix it through the documented API: RW213 depends on it (`vcenter:RW307`), so a
    host whose policy RW307 already reported is skipped here ("blocked by RW307") — reported once,
    where the tool fixes it. Without a vCenter (or one that does not manage the host) RW213 reports
    it alone, and its fix is words (manual).

Why it matters
    Balanced (the default) lets cores drop into deep C-states and lower P-states between
    messages: small-message RDMA latency grows and jitters, which MPI collectives amplify.

How to fix by hand
    Set the host's CPU power policy to High Performance: vSphere Client > host > Configure >
    Hardware > Power Management > Edit > High Performance (VMware's documented path; it takes
    effect at once, no reboot), or through vCenter's API (RW307 plans and runs it: ConfigurePowerPolicy
    with High Performance's key from the host's capability.availablePolicy).
    Sources: the read — `esxcli system settings advanced list -o /Power/CpuPolicy`: no VMware page
    or real capture of it was found (the check's unit test output is hand-written, marked so); the
    client path and the policy names — VMware vSphere 6.7 Resource Management, "Select a CPU Power
    Management Policy", https://docs.vmware.com/en/VMware-vSphere/6.7/com.vmware.vsphere.resmgmt.doc/
    GUID-F48D75C7-2461-4643-8A3A-B0383146F3AA.html; the API — RW307's sources. The esxcli write
    (`advanced set -o /Power/CpuPolicy -s …`) is seen only in third-party notes, not in a VMware
    document: the tool no longer emits it (issue 12: no line without a source) and says the intent
    in words instead.

Fix safety
    manual: on its own (no vCenter) the tool plans the change in words only, since no vendor
    document gives the esxcli line; with a vCenter, RW307's safe plan changes it through vCenter.
    The change itself takes effect at once, no reboot, no traffic impact; the host draws more power.
"""

from roce_wizard.checklib.findings import bad, excerpt, good
from roce_wizard.model import (
    Check,
    Facts,
    Finding,
    FixPlan,
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
    depends_on=("vcenter:RW307",),  # the same setting through vCenter: reported and fixed there
    reboot=RebootKind.NONE,
    fix_hint="vSphere Client: host > Configure > Hardware > Power Management > Edit > High Performance (or RW307)",
)

WANT = "High Performance"
# no vendor document gives the esxcli write (issue 12 item 2): the fix is said in words, never run
MANUAL_FIX = (f"set the host's CPU power policy to {WANT}: vSphere Client > host > Configure > Hardware > "
              f"Power Management > Edit > {WANT} (or through vCenter, RW307); takes effect at once, no reboot")


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    pp = facts.need("esxi_power_policy")
    value = pp.get("value")
    ev = excerpt(facts.raw.get("esxi_power_policy"), r"String Value|Path:", r"/Power/CpuPolicy")
    if isinstance(value, str) and value.strip().lower() == WANT.lower():
        return [good(CHECK, facts, f"CPU power policy is {value}", observed=value, expected=WANT, excerpt=ev)]
    shown = value if value not in (None, "") else "not readable"
    return [bad(CHECK, facts, f"CPU power policy is {shown}, not {WANT}", observed=value, expected=WANT,
                excerpt=ev, fix=MANUAL_FIX)]


def plan_fix(facts: Facts, policy: Policy, *, failed: list) -> FixPlan | None:
    """The policy change, in words (manual): no vendor document gives the esxcli write."""
    bad_findings = failed  # the engine's guard: this check's failing findings, never empty
    before = bad_findings[0].observed
    return FixPlan(check=CHECK.code, target=facts.target_name, summary=f"CPU power policy {WANT}",
                   steps=(Step(f"set the CPU power policy to {WANT} (by hand)", f"# {MANUAL_FIX}",
                               before=str(before) if before not in (None, "") else None, after=WANT),),
                   safety=Safety.MANUAL, reboot=RebootKind.NONE)
