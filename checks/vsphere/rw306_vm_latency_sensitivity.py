"""RW306 vm-latency-sensitivity — compute VMs have latency sensitivity High with their CPU fully reserved

What it checks
    `config.latencySensitivity.level` is `high` for every compute VM (the inventory's guests' `vm:`;
    without them, every VM with an SR-IOV adapter) and `config.cpuAllocation.reservation` covers all
    its vCPUs: numCPU × the host's core MHz (`summary.hardware.cpuMhz`) — what High needs to give
    each vCPU a core of its own. One finding per VM, on the VM's name. A warning.

Why it matters
    Normal latency sensitivity lets the scheduler share and migrate the vCPUs and coalesce
    interrupts: small-message RDMA latency grows and jitters (seed 000 ran its VMs at High with 44
    vCPUs reserved). High without the full CPU reservation does not get exclusive cores.

How to fix by hand
    Power the VM off, then vSphere Client: VM > Edit Settings > VM Options > Advanced > Latency
    Sensitivity: High; Virtual Hardware > CPU > Reservation: numCPU × core MHz (e.g. 8 × 2294 = 18352
    MHz); power on.
    pyVmomi: vm.ReconfigVM_Task(vim.vm.ConfigSpec(latencySensitivity=vim.LatencySensitivity(level='high'),
        cpuAllocation=vim.ResourceAllocationInfo(reservation=18352)))
    Sources: the client path — VMware vSphere 6.7 Resource Management, "Adjust Latency Sensitivity",
        https://docs.vmware.com/en/VMware-vSphere/6.7/com.vmware.vsphere.resmgmt.doc/GUID-9F4FD589-A73B-454A-
        A5A5-FED4C0F918C3.html; the full CPU reservation numVcpus × frequency — VMware vSphere 8.0 Resource
        Management (the low-latency VM reservation formula), https://docs.vmware.com/br/VMware-vSphere/8.0/
        vsphere-resource-management/GUID-2B67DC91-1196-4368-A390-44F74149E28C.html; LatencySensitivity(level=
        'high') — "LatencySensitivity", https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/
        8.0.2.0/data-structures/LatencySensitivity; ReconfigVM_Task / ResourceAllocationInfo.reservation —
        "vSphere Web Services API" reference, https://developer.broadcom.com/xapis/vsphere-web-services-api/8.0U3/.

Fix safety
    disruptive: takes effect at the next power-on (power the VM off and on); the host must have the
    cores to reserve.
"""

from __future__ import annotations

from roce_wizard.checklib.vsphere import (
    action,
    bad_on,
    failing_findings,
    good_on,
    judged_vms,
    skip_on,
    vm_fragment,
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
    Step,
    TargetKind,
)

CHECK = Check(
    code="RW306",
    slug="vm-latency-sensitivity",
    title="VM latency sensitivity High with full CPU reservation",
    stage=Stage.VSPHERE,
    target=TargetKind.VCENTER,
    severity=Severity.WARN,
    probes=("vsphere_vms",),
    reboot=RebootKind.VM_POWER_OFF,
    fix_hint="VM Options > Advanced > Latency Sensitivity High + CPU reservation numCPU × MHz (ReconfigVM_Task), power cycle",
)

KEYS = ("config.hardware.numCPU", "config.latencySensitivity.level", "config.cpuAllocation.reservation")


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    vms, _from_inventory = judged_vms(facts)
    if not vms:
        return [skip_on(facts.target_name, CHECK, facts, "no compute VM to judge: no inventory guest names its VM "
                        "(`vm:`) and no VM has an SR-IOV adapter", observed=[], expected="latency sensitivity high")]
    findings: list[Finding] = []
    for name, vm, entry in vms:
        if vm is None:
            findings.append(skip_on(name, CHECK, facts, f"vCenter has no VM {name} (RW304 reports it)",
                                    host=(entry or {}).get("host"), observed=None, expected="latency sensitivity high"))
            continue
        host = vm.get("host")
        level, cpus, mhz, reserved = (vm.get("latency_sensitivity"), vm.get("num_cpu"), vm.get("host_cpu_mhz"),
                                      vm.get("cpu_reservation_mhz"))
        full = cpus * mhz if isinstance(cpus, int) and isinstance(mhz, int) else None
        observed = {"latency_sensitivity": level, "cpu_reservation_mhz": reserved, "num_cpu": cpus, "host_cpu_mhz": mhz}
        expected = {"latency_sensitivity": "high", "cpu_reservation_mhz": f">= {full}" if full else "all vCPUs"}
        ev = [Evidence("vsphere_vms", facts.commands.get("vsphere_vms"), vm_fragment(facts, name, *KEYS))]
        problems = []
        if (level or "").lower() != "high":
            problems.append(f"latency sensitivity is {level or 'not readable'}, not high")
        if full is not None and (not isinstance(reserved, int) or reserved < full):
            problems.append(f"CPU reservation {reserved or 0} MHz is below {cpus} vCPU × {mhz} MHz = {full} MHz")
        elif full is None and not reserved:
            problems.append("no CPU reservation")
        if not problems:
            findings.append(good_on(name, CHECK, facts, f"{name}: latency sensitivity high, {reserved} MHz of CPU "
                                    "reserved", host=host, observed=observed, expected=expected, evidence=ev))
            continue
        want = full if full is not None else "<numCPU × core MHz>"
        off = f"power off {shown_name(name)}, then " if vm.get("power_state") == "poweredOn" else ""
        findings.append(bad_on(
            name, CHECK, facts, f"{name}: " + "; ".join(problems), host=host, observed=observed, expected=expected,
            evidence=ev,
            fix=(f"{off}vSphere Client: {shown_name(name)} > Edit Settings > VM Options > Advanced > Latency Sensitivity: High; "
                 f"Virtual Hardware > CPU > Reservation: {want} MHz; power on\n"
                 "pyVmomi: wait_for_task(vm.ReconfigVM_Task(vim.vm.ConfigSpec(latencySensitivity="
                 f"vim.LatencySensitivity(level='high'), cpuAllocation=vim.ResourceAllocationInfo(reservation={want}))))")))
    return findings


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """ReconfigVM_Task: latency sensitivity high and all vCPUs' MHz reserved, on each failing VM. The
    change is allowed while the VM runs and takes effect at its next power-on: a VM restart the
    reboot plan pairs with RW304's (one restart per VM)."""
    steps = []
    for f in failing_findings(evaluate, facts, policy):
        obs = f.observed if isinstance(f.observed, dict) else {}
        cpus, mhz = obs.get("num_cpu"), obs.get("host_cpu_mhz")
        if not (isinstance(cpus, int) and isinstance(mhz, int)):
            continue  # the reservation cannot be computed: the finding's fix-by-hand says so
        steps.append(Step(f"latency sensitivity high, {cpus * mhz} MHz of CPU reserved on {f.target}",
                          action("vm-latency-high", f.target),
                          before=f"latency sensitivity {obs.get('latency_sensitivity')}, "
                                 f"{obs.get('cpu_reservation_mhz') or 0} MHz reserved",
                          after=f"latency sensitivity high, {cpus * mhz} MHz reserved", host=f.target))
    return vsphere_plan(CHECK, facts, "latency sensitivity high with full CPU reservation", steps,
                        safety=Safety.DISRUPTIVE, reboot=RebootKind.VM_POWER_OFF,
                        reason="latency sensitivity takes effect when the VM powers on next")
