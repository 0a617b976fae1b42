"""RW303 vds-mtu — the RoCE VDS carries jumbo frames (maxMtu ≥ eth_mtu, 9000)

What it checks
    `dvs.config.maxMtu` of the VDS the VFs use (RW302 picks it: `options.dvs`, else the one that
    carries the RoCE vmnics) is at least the policy's `eth_mtu` (9000, seed 000 figure 16). One
    finding on the vcenter target, subject the VDS. No VDS: nothing to judge here (RW302 says so).

Why it matters
    The VDS default is 1500. RoCE MTU 4096 needs an Ethernet MTU of at least 4200 on every hop;
    below that `active_mtu` in the guest drops to 1024 (RW404) and large-message bandwidth falls —
    far from the cause.

How to fix by hand
    vSphere Client: Networking > RoCE-DVS > Configure > Settings > Properties > Edit > Advanced >
    MTU (Bytes) 9000.
    pyVmomi: dvs.ReconfigureDvs_Task(vim.dvs.VmwareDistributedVirtualSwitch.ConfigSpec(
        configVersion=dvs.config.configVersion, maxMtu=9000))
    Sources: ReconfigureDvs_Task with VMwareDVSConfigSpec(configVersion, maxMtu) and the probe's
        config.maxMtu — "vSphere Web Services API" reference, https://developer.broadcom.com/xapis/vsphere-web-services-api/8.0U3/; the client path (Distributed
        Switch > Settings > Edit Settings > Advanced > MTU) — the vSphere Networking guide, distributed switch
        settings (a copy of the 6.0 edition: https://fdocuments.in/document/vsphere-esxi-vcenter-server-60-
        networking-guide.html).

Fix safety
    safe: no reboot; the uplinks renegotiate their MTU (a brief blip on the VDS).
"""

from __future__ import annotations

from roce_wizard.checklib.findings import bad, good, skip
from roce_wizard.checklib.vsphere import action, chosen_dvs, failing_findings, vsphere_plan, wanted_names
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
    Step,
    TargetKind,
)
from roce_wizard.parsers.vsphere import fragment

CHECK = Check(
    code="RW303",
    slug="vds-mtu",
    title="VDS MTU 9000",
    stage=Stage.VSPHERE,
    target=TargetKind.VCENTER,
    severity=Severity.FAIL,
    probes=("vsphere_dvs",),
    reboot=RebootKind.NONE,
    fix_hint="VDS > Configure > Settings > Properties > Advanced > MTU 9000 (ReconfigureDvs_Task(maxMtu=9000))",
)


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    facts.need("vsphere_dvs")
    dvs = chosen_dvs(facts)
    if dvs is None:
        name, _pg = wanted_names(facts)
        return [skip(CHECK, facts, f"no VDS {name + ' ' if name else ''}to judge: RW302 reports what is missing",
                     observed=None, expected=f"maxMtu >= {policy.eth_mtu}")]
    name, mtu = dvs.get("name"), dvs.get("max_mtu")
    ev = [Evidence("vsphere_dvs", facts.commands.get("vsphere_dvs"),
                   fragment(facts.raw.get("vsphere_dvs"), name, "config.maxMtu"))]
    expected = f">= {policy.eth_mtu}"
    if isinstance(mtu, int) and mtu >= policy.eth_mtu:
        return [good(CHECK, facts, f"{name} maxMtu is {mtu}", subject=name, observed=mtu, expected=expected,
                     evidence=ev)]
    shown = mtu if mtu is not None else "not readable"
    roce = " (RoCE MTU 4096 needs >= 4200: the guests' active_mtu drops to 1024)" if isinstance(mtu, int) and mtu < 4200 else ""
    fix = (f"vSphere Client: Networking > {shown_name(name)} > Configure > Settings > Properties > Edit > Advanced > MTU (Bytes): "
           f"{policy.eth_mtu}\n"
           "pyVmomi: wait_for_task(dvs.ReconfigureDvs_Task(vim.dvs.VmwareDistributedVirtualSwitch.ConfigSpec("
           f"configVersion=dvs.config.configVersion, maxMtu={policy.eth_mtu})))")
    return [bad(CHECK, facts, f"{name} maxMtu is {shown}, not {policy.eth_mtu}{roce}", subject=name, observed=mtu,
                expected=expected, evidence=ev, fix=fix)]


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """ReconfigureDvs_Task(maxMtu = eth_mtu) on the VDS the RoCE VFs use."""
    steps = [Step(f"set {f.subject}'s maxMtu to {policy.eth_mtu}", action("dvs-mtu", f.subject, policy.eth_mtu),
                  before=str(f.observed), after=str(policy.eth_mtu))
             for f in failing_findings(evaluate, facts, policy) if f.subject]
    return vsphere_plan(CHECK, facts, f"VDS maxMtu {policy.eth_mtu}", steps, safety=Safety.SAFE)
