"""RW307 host-power-policy-api — each ESXi host's power policy is High Performance, as vCenter shows it

What it checks
    `host.config.powerSystemInfo.currentPolicy` is key 1 (`static`, "High Performance") on every
    ESXi host of the inventory (without one, every host vCenter shows). A warning, one finding per
    host on the host's name. It is the same setting RW213 reads over SSH (`/Power/CpuPolicy`):
    when RW213 already reported the host in this run, RW307 says "same setting as RW213" and skips,
    so that a host is reported once.

Why it matters
    Balanced (the default) lets cores drop into deep C-states and lower P-states between messages:
    small-message RDMA latency grows and jitters (seed 000 best practice: High Performance, with
    the BIOS profile "Performance Per Watt (OS)" so that the OS decides).

How to fix by hand
    vSphere Client: host > Configure > Hardware > Overview > Power Management > Edit Power Policy >
    High Performance.
    pyVmomi: host.configManager.powerSystem.ConfigurePowerPolicy(key=1)
    Sources: the client path — VMware vSphere 6.7 Resource Management, "Select a CPU Power Management Policy",
        https://docs.vmware.com/en/VMware-vSphere/6.7/com.vmware.vsphere.resmgmt.doc/GUID-F48D75C7-2461-4643-
        8A3A-B0383146F3AA.html; HostPowerSystem.ConfigurePowerPolicy(key) and the probe's
        config.powerSystemInfo.currentPolicy — "vSphere Web Services API" reference, https://developer.broadcom.com/xapis/vsphere-web-services-api/8.0U3/
        (pyVmomi's docs vim/host/PowerSystem); key 1 = High Performance: the host's capability.availablePolicy
        lists the keys, and public PowerCLI code sets High Performance with ConfigurePowerPolicy(1)
        (shimirooinfo/doyitkim, 1.host/116.set_powermgmt.ps1).
        The esxcli form is not given: no VMware page for it was found (RW213).

Fix safety
    safe: takes effect at once, no reboot; the host draws more power.
"""

from __future__ import annotations

from roce_wizard.handfix import shown_name
from roce_wizard.model import (
    Check,
    Evidence,
    Facts,
    Finding,
    FixPlan,
    Policy,
    RebootKind,
    Safety,
    Severity,
    Stage,
    Status,
    Step,
    TargetKind,
)
from roce_wizard.vspherekit import (
    POLICY_NAMES,
    action,
    bad_on,
    failing_findings,
    good_on,
    host_fragment,
    judged_hosts,
    vsphere_plan,
)

CHECK = Check(
    code="RW307",
    slug="host-power-policy-api",
    title="Host power policy High Performance (vCenter)",
    stage=Stage.VSPHERE,
    target=TargetKind.VCENTER,
    severity=Severity.WARN,
    probes=("vsphere_hosts",),
    reboot=RebootKind.NONE,
    fix_hint="host > Configure > Hardware > Overview > Power Management > High Performance (ConfigurePowerPolicy(1))",
)

HIGH_PERFORMANCE = 1


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    findings: list[Finding] = []
    for rh in judged_hosts(facts):
        name, host = rh.name, rh.facts
        if host is None:
            findings.append(Finding(CHECK.code, Status.SKIP, f"vCenter does not manage {name} (RW301 reports it)",
                                    target=name))
            continue
        current = host.get("power_policy") or {}
        key = current.get("key")
        shown = POLICY_NAMES.get(key, current.get("short_name") or "not readable")
        observed = {"key": key, "short_name": current.get("short_name"), "name": shown}
        expected = {"key": HIGH_PERFORMANCE, "name": POLICY_NAMES[HIGH_PERFORMANCE]}
        ev = [Evidence("vsphere_hosts", facts.commands.get("vsphere_hosts"),
                       host_fragment(facts, name, "config.powerSystemInfo.currentPolicy"))]
        if key == HIGH_PERFORMANCE:
            findings.append(good_on(name, CHECK, facts, f"{name}: power policy High Performance", observed=observed,
                                    expected=expected, evidence=ev))
            continue
        findings.append(bad_on(
            name, CHECK, facts, f"{name}: power policy is {shown} (key {key}), not High Performance", observed=observed,
            expected=expected, evidence=ev,
            fix=(f"vSphere Client: {shown_name(name)} > Configure > Hardware > Overview > Power Management > Edit Power Policy > "
                 "High Performance\n"
                 f"pyVmomi: host.configManager.powerSystem.ConfigurePowerPolicy(key={HIGH_PERFORMANCE})")))
    return findings


def compare_targets(findings: list[Finding], everything: list[Finding]) -> list[Finding]:
    """Report a host once: where RW213 (the same setting over SSH) already warned about the host in
    this run, RW307's warning on it becomes a skip naming RW213 (its fix is RW213's)."""
    reported = {f.target for f in everything if f.check == "RW213" and f.status in (Status.WARN, Status.FAIL)}
    for f in findings:
        if f.check == CHECK.code and f.status is Status.WARN and f.target in reported:
            f.details["unjudged"] = f"{f.status.value}: {f.summary}"
            f.status = Status.SKIP
            f.summary = f"same setting as RW213 on {f.target} (reported there)"
            f.blocked_by = ("RW213", f.target)
            f.fix = None
    return []


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """ConfigurePowerPolicy(key=1) on each host that is not High Performance (at once, no reboot)."""
    steps = [Step(f"set {f.target}'s power policy to High Performance", action(
        "host-power-policy", f.target, POLICY_NAMES[HIGH_PERFORMANCE]),
        before=str((f.observed or {}).get("name")), after=POLICY_NAMES[HIGH_PERFORMANCE])
        for f in failing_findings(evaluate, facts, policy)]
    return vsphere_plan(CHECK, facts, "host power policy High Performance", steps, safety=Safety.SAFE)
