"""RW307 host-power-policy-api — each ESXi host's power policy is High Performance, as vCenter shows it

What it checks
    `host.config.powerSystemInfo.currentPolicy` is key 1 (`static`, "High Performance") on every
    ESXi host of the inventory (without one, every host vCenter shows). A warning, one finding per
    host on the host's name. It is the same setting RW213 reads over SSH (`/Power/CpuPolicy`), and
    RW213 depends on this check: with a vCenter in the inventory a host's power policy is reported
    once, here, where the tool can fix it through vCenter's documented API; RW213 reports it (in
    words, manual) only where no vCenter judged the host.

Why it matters
    Balanced (the default) lets cores drop into deep C-states and lower P-states between messages:
    small-message RDMA latency grows and jitters (seed 000 best practice: High Performance, with
    the BIOS profile "Performance Per Watt (OS)" so that the OS decides).

How to fix by hand
    vSphere Client: host > Configure > Hardware > Overview > Power Management > Edit Power Policy >
    High Performance.
    pyVmomi: ConfigurePowerPolicy(key) on host.configManager.powerSystem, with the key of the policy
    whose shortName is "static" (High Performance) in powerSystem.capability.availablePolicy — what
    the tool's `vsphere host-power-policy <host> "High Performance"` action runs.
    Sources: the client path — VMware vSphere 6.7 Resource Management, "Select a CPU Power Management Policy",
        https://docs.vmware.com/en/VMware-vSphere/6.7/com.vmware.vsphere.resmgmt.doc/GUID-F48D75C7-2461-4643-
        8A3A-B0383146F3AA.html; the API — "vSphere Web Services API" reference: HostPowerSystem
        (vim.host.PowerSystem: property capability, a PowerSystemCapability whose availablePolicy lists the
        host's HostPowerPolicy; ConfigurePowerPolicy(key), "a key from one of the policies in availablePolicy",
        privilege Host.Config.Power), https://developer.broadcom.com/xapis/virtual-storage-lifecycle-management-api/
        8.0U3/vim.host.PowerSystem.html and https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/
        latest/host-power-system/; HostPowerPolicy (key, name, shortName "not localizable … can be used to
        identify specific power managing policies"), https://developer.broadcom.com/xapis/vsphere-web-services-api/
        7.0U3/vim.host.PowerSystem.PowerPolicy.html; the probe's config.powerSystemInfo.currentPolicy —
        PowerSystemInfo, same reference. shortName "static" = High Performance ("dynamic" Balanced, "low"
        Low Power, "custom"): Ansible's community.vmware vmware_host_powermgmt_policy module (pyVmomi, same
        call) and govmomi's simulator (esx/host_config_info.go) name them so.
        The esxcli form is not given: no VMware page for it was found (RW213).

Fix safety
    safe: takes effect at once, no reboot; the host draws more power.
"""

from __future__ import annotations

from roce_wizard.checklib.vsphere import (
    POLICY_NAMES,
    action,
    bad_on,
    failing_findings,
    good_on,
    host_fragment,
    judged_hosts,
    vsphere_plan,
)
from roce_wizard.commands.handfix import shown_name
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

CHECK = Check(
    code="RW307",
    slug="host-power-policy-api",
    title="Host power policy High Performance (vCenter)",
    stage=Stage.VSPHERE,
    target=TargetKind.VCENTER,
    severity=Severity.WARN,
    probes=("vsphere_hosts",),
    reboot=RebootKind.NONE,
    fix_hint="host > Configure > Hardware > Overview > Power Management > High Performance (ConfigurePowerPolicy)",
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
        # shortName is the policy's non-localized name ("static" = High Performance); the key, host-generated
        if (current.get("short_name") == "static") if current.get("short_name") else key == HIGH_PERFORMANCE:
            findings.append(good_on(name, CHECK, facts, f"{name}: power policy High Performance", observed=observed,
                                    expected=expected, evidence=ev))
            continue
        findings.append(bad_on(
            name, CHECK, facts, f"{name}: power policy is {shown} (key {key}), not High Performance", observed=observed,
            expected=expected, evidence=ev,
            fix=(f"vSphere Client: {shown_name(name)} > Configure > Hardware > Overview > Power Management > Edit Power Policy > "
                 "High Performance\n"
                 "pyVmomi: host.configManager.powerSystem.ConfigurePowerPolicy(key=<the key of the policy whose "
                 'shortName is "static" in powerSystem.capability.availablePolicy>)')))
    return findings


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """ConfigurePowerPolicy (High Performance's key from capability.availablePolicy) on each host that is
    not High Performance (at once, no reboot)."""
    steps = [Step(f"set {f.target}'s power policy to High Performance", action(
        "host-power-policy", f.target, POLICY_NAMES[HIGH_PERFORMANCE]),
        before=str((f.observed or {}).get("name")), after=POLICY_NAMES[HIGH_PERFORMANCE])
        for f in failing_findings(evaluate, facts, policy)]
    return vsphere_plan(CHECK, facts, "host power policy High Performance", steps, safety=Safety.SAFE)
