"""plan_fix of the vsphere checks RW301–RW307 on recorded outputs (tests/unit/fixtures/vsphere):
the exact `vsphere …` action lines on each lab fault, nothing on the healthy lab, on the fresh lab
what can be planned before the BIOS / host side is done, and nothing right after each fix
(after-fix-*: recorded by record.py --after-fix, which applies each plan against the lab's vCenter,
the host reboot included where the plan names one).

The action lines are applied against the real vcsim in tests/lab/test_vsphere_fix.py.
"""

from __future__ import annotations

import dataclasses

import pytest

from roce_wizard.checklib.vsphere import action
from roce_wizard.engine.fixes import plan_for as planned_fix
from roce_wizard.model import Policy, RebootKind, Safety, Status
from roce_wizard.probes import UnsafeValue
from roce_wizard.transports.vsphere import parse_action
from tests.checkcases import CATALOG, Case, build_facts, run_case
from tests.unit.checks.test_vsphere_checks import FRESH, HEALTHY, doctor, inventory, rec

FAULT = {  # code -> (the fault's recordings, safety, reboot, needs, exact step commands)
    "RW301": ({"vsphere_hosts": rec("rw301.hosts")}, Safety.DISRUPTIVE, RebootKind.HOST, (),
              ["vsphere host-sriov esx-02 0000:3b:00.0 8"]),
    "RW302": ({"vsphere_dvs": rec("rw302.dvs"), "vsphere_hosts": rec("healthy.hosts")}, Safety.SAFE,
              RebootKind.NONE, (), ["vsphere dvs-create RoCE-DVS roce-pg 9000 esx-02=vmnic2,vmnic3"]),
    "RW303": ({"vsphere_dvs": rec("rw303.dvs")}, Safety.SAFE, RebootKind.NONE, (), ["vsphere dvs-mtu RoCE-DVS 9000"]),
    "RW304": ({**HEALTHY, "vsphere_vms": rec("rw304.vms")}, Safety.DISRUPTIVE, RebootKind.VM_POWER_OFF,
              ("RW301", "RW305"), ["vsphere vm-power shutdown compute-02",
                                   "vsphere vm-add-vf compute-02 0000:3b:00.0 roce-pg",
                                   "vsphere vm-power on compute-02"]),
    "RW305": ({"vsphere_vms": rec("rw305.vms")}, Safety.SAFE, RebootKind.NONE, (),
              ["vsphere vm-reserve-memory compute-02"]),
    "RW306": ({"vsphere_vms": rec("rw306.vms")}, Safety.DISRUPTIVE, RebootKind.VM_POWER_OFF, (),
              ["vsphere vm-latency-high compute-02"]),
    "RW307": ({"vsphere_hosts": rec("rw307.hosts")}, Safety.SAFE, RebootKind.NONE, (),
              ["vsphere host-power-policy esx-02 'High Performance'"]),
}
AFTER = {  # code -> what the after-fix recording replaces
    "RW301": {"vsphere_hosts": rec("after-fix-rw301.hosts")},
    "RW302": {"vsphere_dvs": rec("after-fix-rw302.dvs"), "vsphere_hosts": rec("healthy.hosts")},
    "RW303": {"vsphere_dvs": rec("after-fix-rw303.dvs")},
    "RW304": {**HEALTHY, "vsphere_vms": rec("after-fix-rw304.vms")},
    "RW305": {"vsphere_vms": rec("after-fix-rw305.vms")},
    "RW306": {"vsphere_vms": rec("after-fix-rw306.vms")},
    "RW307": {"vsphere_hosts": rec("after-fix-rw307.hosts")},
}

# the state right after each fix (RW301: after the host reboot its plan names): the check passes
CASES: list[Case] = [dataclasses.replace(doctor(code, "after-fix", Status.PASS, outputs), after_fix=True)
                     for code, outputs in AFTER.items()]
# RW301 right after UpdatePassthruConfig, before the reboot: failing, and nothing more to plan
CASES.append(dataclasses.replace(
    doctor("RW301", "after-fix-before-reboot", Status.FAIL, {"vsphere_hosts": rec("reboot-pending.hosts")},
           "waits for a reboot", facts=inventory(hosts=("esx-01",), vfs=(4, 7))), after_fix=True))


def plan(code: str, outputs: dict[str, str], facts: dict | None = None):
    case = doctor(code, "plan", Status.PASS, outputs, facts=facts)
    return planned_fix(CATALOG[code], build_facts(case), Policy())


@pytest.mark.parametrize("code", sorted(FAULT))
def test_plan_on_the_lab_fault(code):
    outputs, safety, reboot, needs, commands = FAULT[code]
    p = plan(code, outputs)
    assert p is not None
    assert (p.check, p.target, p.safety, p.reboot, p.needs) == (code, "vcenter", safety, reboot, needs)
    assert [s.command for s in p.steps] == commands
    assert all(parse_action(s.command) is not None for s in p.steps)  # lines the transport takes
    assert all(s.before is not None and s.after for s in p.steps)
    if reboot is not RebootKind.NONE:
        assert p.reboot_reason
        # whose reboot / power cycle it waits for: the host or VM the fault is on, not vCenter
        assert {s.host for s in p.steps} == {"esx-02" if code == "RW301" else "compute-02"}


@pytest.mark.parametrize("code", sorted(FAULT))
def test_nothing_to_plan_when_healthy(code):
    assert plan(code, HEALTHY) is None


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_after_fix_cases_pass_and_plan_nothing(case):
    run_case(case)
    assert planned_fix(CATALOG[case.code], build_facts(case), case.policy) is None


def test_the_fresh_lab_plans_what_vcenter_alone_can_do():
    """Day 0: SR-IOV is off in the BIOS (sriovCapable false: RW301 waits for the host side), there is
    no VDS (RW302 creates it with both hosts; RW304 has no port group to put a VF on yet)."""
    assert plan("RW301", FRESH) is None
    [create] = plan("RW302", FRESH).steps
    assert create.command == ("vsphere dvs-create RoCE-DVS roce-pg 9000 esx-01=vmnic2,vmnic3 "
                              "esx-02=vmnic2,vmnic3")
    assert plan("RW303", FRESH) is None  # no VDS to judge yet (RW302)
    assert plan("RW304", FRESH) is None
    assert [s.command for s in plan("RW305", FRESH).steps] == ["vsphere vm-reserve-memory compute-01",
                                                                "vsphere vm-reserve-memory compute-02"]
    assert [s.command for s in plan("RW307", FRESH).steps] == [
        "vsphere host-power-policy esx-01 'High Performance'", "vsphere host-power-policy esx-02 'High Performance'"]


def test_the_inventory_names_the_vds_and_port_group():
    outputs = {"vsphere_dvs": rec("fresh.dvs"), "vsphere_hosts": rec("fresh.hosts")}
    case = dataclasses.replace(doctor("RW302", "named", Status.FAIL, outputs))
    case = dataclasses.replace(case, target=dataclasses.replace(case.target, options={"dvs": "HPC DVS",
                                                                                      "portgroup": "hpc-pg"}))
    [step] = planned_fix(CATALOG["RW302"], build_facts(case), Policy()).steps
    assert step.command.startswith("vsphere dvs-create 'HPC DVS' hpc-pg 9000 ")


def test_names_that_do_not_fit_are_refused():
    with pytest.raises(UnsafeValue):
        action("vm-power", "off", "vm; reboot")
    with pytest.raises(UnsafeValue):
        action("host-sriov", "esx-01", "0000:3b:00.0", "-1")


def _requested_not_active(doc):
    """esx-02's RoCE PFs: SR-IOV on and the inventory's counts requested, but no VF instantiated and vCenter
    asks for no reboot (the firmware offers none: RW208's NUM_OF_VFS, RW215). HAND-EDITED from healthy."""
    host = next(h for h in doc["hosts"] if h["name"] == "esx-02")
    host["summary.rebootRequired"] = False
    for pf in host["config.pciPassthruInfo"]:
        if pf["id"].startswith("0000:3b:"):
            pf["numVirtualFunction"], pf["sriovActive"] = 0, False


def test_a_count_already_requested_plans_no_step_that_changes_nothing():
    """`fix` showed `vsphere host-sriov esx-02 0000:3b:00.0 8` with before = after (requested 8, wants 8):
    re-requesting the same count changes nothing; the VFs are missing for another reason (the finding says so)."""
    from tests.unit.checks.test_vsphere_checks import edited  # noqa: PLC0415

    outputs = {"vsphere_hosts": edited("healthy.hosts", _requested_not_active)}
    case = doctor("RW301", "requested-not-active", Status.FAIL, outputs, "does not ask for a reboot")
    run_case(case)
    p = planned_fix(CATALOG["RW301"], build_facts(case), Policy())
    assert p is None
