"""RW305 vm-memory-reserved — each compute VM has all its memory reserved (locked to max)

What it checks
    Every compute VM (the inventory's guests' `vm:`; without them, every VM with an SR-IOV adapter)
    has all its memory reserved: `config.memoryReservationLockedToMax` true ("Reserve all guest
    memory (All locked)") passes; a fixed `config.memoryAllocation.reservation` equal to
    `config.hardware.memoryMB` without the lock also passes, with a note (it powers on; a later
    memory resize breaks it; no VMware page was found that says a fixed full reservation is enough, an
    expert reviewer reported it); less fails. One finding per VM, on its name.

Why it matters
    A VM with a passthrough device (an SR-IOV VF) does not power on unless all its memory is
    reserved: the device DMAs into guest memory, which must never be swapped or ballooned. A fixed
    reservation equal to today's memory breaks the next time someone adds memory; "locked to max"
    follows the VM's size (seed 000 §2.3.2: "the VM requires reserved memory").

How to fix by hand
    vSphere Client: VM > Edit Settings > Virtual Hardware > Memory > Reservation: check "Reserve all
    guest memory (All locked)".
    pyVmomi: vm.ReconfigVM_Task(vim.vm.ConfigSpec(memoryReservationLockedToMax=True))
    Sources: the properties and ConfigSpec.memoryReservationLockedToMax — "vSphere Web Services API"
    reference (https://developer.broadcom.com/xapis/vsphere-web-services-api/8.0U3/), data objects
    vim.vm.ConfigInfo / vim.vm.ConfigSpec (pyVmomi's names are the same); "the VM requires reserved
    memory" for an SR-IOV passthrough adapter — seed 000 (Assign a Virtual Function as SR-IOV
    Passthrough Adapter to a Virtual Machine).

Fix safety
    safe: allowed while the VM runs (if the host lacks the free memory, vCenter refuses the change);
    the host must have the memory to back it.
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
    code="RW305",
    slug="vm-memory-reserved",
    title="VM memory reserved (locked to max)",
    stage=Stage.VSPHERE,
    target=TargetKind.VCENTER,
    severity=Severity.FAIL,
    probes=("vsphere_vms",),
    reboot=RebootKind.NONE,
    fix_hint="VM > Edit Settings > Memory > Reserve all guest memory (ReconfigVM_Task(memoryReservationLockedToMax=True))",
)

KEYS = ("config.hardware.memoryMB", "config.memoryReservationLockedToMax", "config.memoryAllocation.reservation")


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    vms, _from_inventory = judged_vms(facts)
    if not vms:
        return [skip_on(facts.target_name, CHECK, facts, "no compute VM to judge: no inventory guest names its VM "
                        "(`vm:`) and no VM has an SR-IOV adapter", observed=[], expected="memory reserved")]
    findings: list[Finding] = []
    for name, vm, entry in vms:
        if vm is None:
            findings.append(skip_on(name, CHECK, facts, f"vCenter has no VM {name} (RW304 reports it)",
                                    host=(entry or {}).get("host"), observed=None, expected="memory reserved"))
            continue
        host = vm.get("host")
        locked, reserved, memory = (vm.get("memory_reservation_locked_to_max"), vm.get("memory_reservation_mb"),
                                    vm.get("memory_mb"))
        observed = {"memory_reservation_locked_to_max": locked, "reservation_mb": reserved, "memory_mb": memory}
        expected = {"memory_reservation_locked_to_max": True, "or reservation_mb": memory}
        ev = [Evidence("vsphere_vms", facts.commands.get("vsphere_vms"), vm_fragment(facts, name, *KEYS))]
        if locked is True:
            findings.append(good_on(name, CHECK, facts, f"{name}: all guest memory reserved ({reserved} of {memory} MB, "
                                    "locked to max)", host=host, observed=observed, expected=expected, evidence=ev))
            continue
        if isinstance(reserved, int) and isinstance(memory, int) and memory and reserved >= memory:
            # a full fixed reservation is enough to power on with a passthrough VF (a reviewer's report)
            findings.append(good_on(name, CHECK, facts, f"{name}: all guest memory reserved ({reserved} of {memory} "
                                    "MB) as a fixed reservation, not locked to max: enough to power on, but a later "
                                    "memory resize leaves part of it unreserved (tick 'Reserve all guest memory "
                                    "(All locked)' to follow resizes)", host=host, observed=observed,
                                    expected=expected, evidence=ev))
            continue
        partial = (f"; a fixed reservation of {reserved} of {memory} MB" if reserved else "")
        off = " (if vCenter refuses while it runs, power the VM off first)" if vm.get("power_state") == "poweredOn" else ""
        findings.append(bad_on(
            name, CHECK, facts, f"{name}: memory is not reserved (memoryReservationLockedToMax {locked}){partial}: a VM "
            "with an SR-IOV VF does not power on", host=host, observed=observed, expected=expected, evidence=ev,
            fix=(f"vSphere Client: {shown_name(name)} > Edit Settings > Virtual Hardware > Memory > Reservation: Reserve all "
                 f"guest memory (All locked){off}\n"
                 "pyVmomi: wait_for_task(vm.ReconfigVM_Task(vim.vm.ConfigSpec(memoryReservationLockedToMax=True)))")))
    return findings


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """ReconfigVM_Task(memoryReservationLockedToMax=True) on each failing VM (allowed while it runs)."""
    steps = [Step(f"reserve all of {f.target}'s memory (locked to max)", action("vm-reserve-memory", f.target),
                  before=f"memoryReservationLockedToMax={f.observed.get('memory_reservation_locked_to_max')} "
                         f"reservation={f.observed.get('reservation_mb')} MB",
                  after=f"memoryReservationLockedToMax=True reservation={f.observed.get('memory_mb')} MB")
             for f in failing_findings(evaluate, facts, policy) if isinstance(f.observed, dict)]
    return vsphere_plan(CHECK, facts, "all guest memory reserved on " + ", ".join(
        s.command.rsplit(" ", 1)[-1] for s in steps), steps, safety=Safety.SAFE)
