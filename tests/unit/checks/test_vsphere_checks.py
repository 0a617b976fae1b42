"""vSphere checks RW301–RW307 on recorded outputs.

The outputs in tests/unit/fixtures/vsphere/ are what `VSphereTransport` printed against the lab's
vCenter (govmomi's simulator extended by lab/vcsim; re-record with
`python tests/unit/fixtures/vsphere/record.py`): a healthy 2-host world, the fresh (day 0) world,
each lab fault RW301–RW307 alone, an SR-IOV change waiting for a reboot, a VF whose guest may not
change its MTU. Cases marked HAND-EDITED change one value of a recording (said where).

Doctor cases carry the vcenter target and the engine-made `inventory_hosts` / `inventory_vms`
facts of the lab's inventory (esx-01/02: PF 0000:3b:00.0, vmnic2/vmnic3, 8/7 VFs; compute-01/02);
analyze cases have neither.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from roce_wizard.model import Evidence, Finding, Policy, Status, Target, TargetKind
from tests.checkcases import CATALOG, Case, build_facts, run_case

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vsphere"
PASS, FAIL, WARN, SKIP, ERROR = Status.PASS, Status.FAIL, Status.WARN, Status.SKIP, Status.ERROR
PF1 = "0000:3b:00.0"


def rec(name: str) -> str:
    return (FIXTURES / f"{name}.json").read_text(encoding="utf-8")


def edited(name: str, change) -> str:
    """A recording with one change (HAND-EDITED), printed the way the transport prints it."""
    from roce_wizard.transports.vsphere import render

    doc = json.loads(rec(name))
    change(doc)
    return render(doc)


HEALTHY = {"vsphere_hosts": rec("healthy.hosts"), "vsphere_vms": rec("healthy.vms"), "vsphere_dvs": rec("healthy.dvs")}
FRESH = {"vsphere_hosts": rec("fresh.hosts"), "vsphere_vms": rec("fresh.vms"), "vsphere_dvs": rec("fresh.dvs")}


def vcenter(**options: Any) -> Target:
    return Target(name="vcenter", kind=TargetKind.VCENTER, address="127.0.0.1", options=options)


def inventory(hosts=("esx-01", "esx-02"), vfs=(8, 7), vms=True) -> dict[str, Any]:
    spec = {h: {"pf_pci": PF1, "vmnics": ["vmnic2", "vmnic3"], "vfs": list(vfs)} for h in hosts}
    out: dict[str, Any] = {"inventory_hosts": spec}
    out["inventory_vms"] = ({f"compute-{h[-2:]}": {"host": h, "guest": f"compute-{h[-2:]}"} for h in hosts}
                            if vms else {})
    return out


def doctor(code: str, name: str, expect: Status, outputs: dict[str, str], summary_has: str | None = None,
           facts: dict[str, Any] | None = None, target: Target | None = None) -> Case:
    return Case(code, name, expect, outputs=outputs, facts=inventory() if facts is None else facts,
                target=target or vcenter(), summary_has=summary_has)


def analyze(code: str, name: str, expect: Status, outputs: dict[str, str], summary_has: str | None = None) -> Case:
    return Case(code, name, expect, outputs=outputs, summary_has=summary_has)


def _set_policy(doc: dict, host: str, key: int, short: str) -> None:
    next(h for h in doc["hosts"] if h["name"] == host)["config.powerSystemInfo.currentPolicy"] = {
        "key": key, "shortName": short}


def _too_many(doc: dict) -> None:  # esx-01's vmnic2 PF asked for 20 VFs of 16 (HAND-EDITED)
    info = next(e for e in doc["hosts"][0]["config.pciPassthruInfo"] if e["id"] == PF1)
    info["numVirtualFunctionRequested"] = info["numVirtualFunction"] = 20


def _wrong_pf(doc: dict) -> None:  # compute-01's VF from the service NIC's PF (HAND-EDITED)
    doc["vms"][0]["sriovAdapters"][0]["sriovBacking.physicalFunctionBacking.id"] = "0000:1a:00.0"


def _fixed_full_reservation(doc: dict) -> None:  # compute-01: all 16384 MB reserved, not locked (HAND-EDITED)
    doc["vms"][0]["config.memoryReservationLockedToMax"] = False


def _half_reservation(doc: dict) -> None:  # compute-01: 8192 of 16384 MB reserved (HAND-EDITED)
    doc["vms"][0]["config.memoryReservationLockedToMax"] = False
    doc["vms"][0]["config.memoryAllocation.reservation"] = 8192


def _disconnected(doc: dict) -> None:  # esx-02 rebooting (HAND-EDITED)
    doc["hosts"][1]["runtime.connectionState"] = "notResponding"


CASES: list[Case] = [
    # RW301 sriov-on-pf
    doctor("RW301", "healthy", PASS, {"vsphere_hosts": rec("healthy.hosts")}),
    doctor("RW301", "lab-fault-sriov-off", FAIL, {"vsphere_hosts": rec("rw301.hosts")}, "SR-IOV is disabled"),
    doctor("RW301", "reboot-pending", FAIL, {"vsphere_hosts": rec("reboot-pending.hosts")},
           "waits for a reboot", facts=inventory(hosts=("esx-01",), vfs=(4, 7))),  # asked for 4 of 8, not rebooted yet
    doctor("RW301", "changed-away-from-inventory", FAIL, {"vsphere_hosts": rec("reboot-pending.hosts")},
           "4 VFs requested, the inventory wants 8"),
    doctor("RW301", "fresh-bios-off", FAIL, {"vsphere_hosts": rec("fresh.hosts")}, "sriovCapable false"),
    doctor("RW301", "inventory-wants-other-count", FAIL, {"vsphere_hosts": rec("healthy.hosts")},
           "the inventory wants 4", facts=inventory(vfs=(4, 7))),
    doctor("RW301", "host-not-in-vcenter", FAIL, {"vsphere_hosts": rec("healthy.hosts")}, "does not manage esx-03",
           facts=inventory(hosts=("esx-01", "esx-03"))),
    doctor("RW301", "more-than-supported", FAIL, {"vsphere_hosts": edited("healthy.hosts", _too_many)},
           "more than the PF supports", facts=inventory(vfs=(20, 7))),
    doctor("RW301", "host-not-responding", ERROR, {"vsphere_hosts": edited("healthy.hosts", _disconnected)},
           "notResponding"),
    analyze("RW301", "analyze-healthy", PASS, {"vsphere_hosts": rec("healthy.hosts")}),
    analyze("RW301", "analyze-fresh", FAIL, {"vsphere_hosts": rec("fresh.hosts")}, "no PCI device"),
    # RW302 vds-exists
    doctor("RW302", "healthy", PASS, {"vsphere_dvs": rec("healthy.dvs")}),
    doctor("RW302", "lab-fault-host-not-member", FAIL, {"vsphere_dvs": rec("rw302.dvs")},
           "esx-02 is not a member of RoCE-DVS"),
    doctor("RW302", "fresh-no-vds", FAIL, {"vsphere_dvs": rec("fresh.dvs")}, "no distributed switch"),
    doctor("RW302", "named-vds-missing", FAIL, {"vsphere_dvs": rec("healthy.dvs")}, "no VDS named HPC-DVS",
           target=vcenter(dvs="HPC-DVS")),
    doctor("RW302", "named-portgroup-missing", FAIL, {"vsphere_dvs": rec("healthy.dvs")}, "no port group hpc-pg",
           target=vcenter(portgroup="hpc-pg")),
    doctor("RW302", "roce-vmnic-not-uplink", FAIL, {"vsphere_dvs": edited(
        "healthy.dvs", lambda d: d["switches"][0]["config.host"][0]["config.backing.pnicSpec"].pop())},
        "vmnic3 is not an uplink"),
    analyze("RW302", "analyze-healthy", PASS, {"vsphere_dvs": rec("healthy.dvs"), "vsphere_hosts": rec("healthy.hosts")}),
    # RW303 vds-mtu
    doctor("RW303", "healthy", PASS, {"vsphere_dvs": rec("healthy.dvs")}),
    doctor("RW303", "lab-fault-mtu-1500", FAIL, {"vsphere_dvs": rec("rw303.dvs")}, "maxMtu is 1500"),
    doctor("RW303", "fresh-no-vds", SKIP, {"vsphere_dvs": rec("fresh.dvs")}, "RW302"),
    analyze("RW303", "analyze-mtu-1500", FAIL, {"vsphere_dvs": rec("rw303.dvs")}),
    # RW304 vm-has-vf
    doctor("RW304", "healthy", PASS, HEALTHY),
    doctor("RW304", "lab-fault-no-vf", FAIL, {**HEALTHY, "vsphere_vms": rec("rw304.vms")},
           "compute-02 has no SR-IOV network adapter"),
    doctor("RW304", "vf-on-standard-network", FAIL, {**HEALTHY, "vsphere_vms": rec("rw302.vms"),
                                                     "vsphere_dvs": rec("rw302.dvs")}, "VM Network"),
    doctor("RW304", "guest-mtu-locked", FAIL, {**HEALTHY, "vsphere_vms": rec("mtu-locked.vms")},
           "Guest OS MTU Change is not allowed"),
    doctor("RW304", "vf-of-the-service-nic", FAIL, {**HEALTHY, "vsphere_vms": edited("healthy.vms", _wrong_pf)},
           "not the RoCE PF"),
    doctor("RW304", "fresh-no-vf", FAIL, FRESH, "no SR-IOV network adapter"),
    doctor("RW304", "vm-not-in-vcenter", FAIL, HEALTHY, "no VM compute-03",
           facts={**inventory(), "inventory_vms": {"compute-03": {"host": "esx-01", "guest": "node-3"}}}),
    analyze("RW304", "analyze-healthy", PASS, {"vsphere_vms": rec("healthy.vms")}),
    analyze("RW304", "analyze-no-vm-with-vf", SKIP, {"vsphere_vms": rec("fresh.vms")}, "no compute VM"),
    # RW305 vm-memory-reserved
    doctor("RW305", "healthy", PASS, {"vsphere_vms": rec("healthy.vms")}),
    doctor("RW305", "lab-fault-not-reserved", FAIL, {"vsphere_vms": rec("rw305.vms")}, "memory is not reserved"),
    doctor("RW305", "fresh-not-reserved", FAIL, {"vsphere_vms": rec("fresh.vms")}),
    analyze("RW305", "analyze-healthy", PASS, {"vsphere_vms": rec("healthy.vms")}),
    # a full fixed reservation without the lock powers on: pass, with a note
    doctor("RW305", "full-fixed-reservation-not-locked", PASS,
           {"vsphere_vms": edited("healthy.vms", _fixed_full_reservation)}, "not locked to max: enough to power on"),
    doctor("RW305", "half-reservation", FAIL, {"vsphere_vms": edited("healthy.vms", _half_reservation)},
           "a fixed reservation of 8192 of 16384 MB"),
    # RW306 vm-latency-sensitivity
    doctor("RW306", "healthy", PASS, {"vsphere_vms": rec("healthy.vms")}),
    doctor("RW306", "lab-fault-normal", WARN, {"vsphere_vms": rec("rw306.vms")}, "latency sensitivity is normal"),
    doctor("RW306", "high-without-cpu-reservation", WARN, {"vsphere_vms": edited(
        "healthy.vms", lambda d: d["vms"][1].update({"config.cpuAllocation.reservation": 0}))},
        "below 8 vCPU × 2294 MHz"),
    # RW307 host-power-policy-api
    doctor("RW307", "healthy", PASS, {"vsphere_hosts": rec("healthy.hosts")}),
    doctor("RW307", "lab-fault-balanced", WARN, {"vsphere_hosts": rec("rw307.hosts")}, "esx-02: power policy is Balanced"),
    doctor("RW307", "fresh-balanced", WARN, {"vsphere_hosts": rec("fresh.hosts")}),
    analyze("RW307", "analyze-low-power", WARN, {"vsphere_hosts": edited(
        "healthy.hosts", lambda d: _set_policy(d, "esx-01", 3, "low"))}, "Low Power"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case(case: Case):
    run_case(case)


def _case(case_id: str) -> Case:
    return next(c for c in CASES if c.id == case_id)


def _findings(case_id: str) -> list[Finding]:
    return run_case(_case(case_id))


def _bad(case_id: str) -> Finding:
    return next(f for f in _findings(case_id) if f.status in (Status.FAIL, Status.WARN, Status.ERROR))


# ------------------------------------------------------------------------------------ per subject


def test_findings_are_about_hosts_and_vms_by_name():
    """The engine finds `host:` / `vm:` root causes by these names (a guest's RW402 needs vm:RW304)."""
    assert {(f.target, f.subject) for f in _findings("RW301-healthy")} == {
        ("esx-01", f"{PF1} (vmnic2)"), ("esx-01", "0000:3b:00.1 (vmnic3)"),
        ("esx-02", f"{PF1} (vmnic2)"), ("esx-02", "0000:3b:00.1 (vmnic3)")}
    assert [f.target for f in _findings("RW302-healthy")] == ["esx-01", "esx-02"]
    for code in ("RW304", "RW305", "RW306"):
        found = _findings(f"{code}-healthy")
        assert [(f.target, f.details.get("host")) for f in found] == [("compute-01", "esx-01"), ("compute-02", "esx-02")]
    assert [f.target for f in _findings("RW307-healthy")] == ["esx-01", "esx-02"]
    assert [f.target for f in _findings("RW303-healthy")] == ["vcenter"]


def test_only_the_faulty_subject_fails():
    for case_id, where in (("RW301-lab-fault-sriov-off", ("esx-02", f"{PF1} (vmnic2)")),
                           ("RW302-lab-fault-host-not-member", ("esx-02", None)),
                           ("RW304-lab-fault-no-vf", ("compute-02", None)),
                           ("RW305-lab-fault-not-reserved", ("compute-02", None)),
                           ("RW306-lab-fault-normal", ("compute-02", None)),
                           ("RW307-lab-fault-balanced", ("esx-02", None))):
        bad = [(f.target, f.subject if where[1] else None) for f in _findings(case_id) if f.status is not PASS]
        assert bad == [where], case_id


# ------------------------------------------------------------------------------------ fixes


def test_rw301_fix_is_the_client_path_and_the_pyvmomi_call():
    fix = _bad("RW301-lab-fault-sriov-off").fix
    assert fix.startswith("vSphere Client: esx-02 > Configure > Hardware > PCI Devices > 0000:3b:00.0 > Configure "
                          "SR-IOV: Enabled, 8 virtual functions; then reboot esx-02")
    assert ("pyVmomi: host.configManager.pciPassthruSystem.UpdatePassthruConfig([vim.host.SriovConfig("
            "id='0000:3b:00.0', sriovEnabled=True, numVirtualFunction=8, passthruEnabled=False)])") in fix
    assert CATALOG["RW301"].meta.reboot.value == "host"


def test_rw301_pending_change_asks_for_the_reboot_only():
    f = _bad("RW301-reboot-pending")
    assert f.target == "esx-01" and f.observed["num_vfs_requested"] == 4 and f.observed["num_vfs"] == 8
    assert "RebootHost_Task" in f.fix and "EnterMaintenanceMode_Task" in f.fix and "UpdatePassthruConfig" not in f.fix
    assert f.details["reboot_pending"] is True


def test_rw301_evidence_quotes_the_pf_as_vsphere_printed_it():
    ev = _bad("RW301-lab-fault-sriov-off").evidence[0]
    assert ev.probe == "vsphere_hosts"
    assert '"sriovEnabled": false' in ev.excerpt and PF1 in ev.excerpt and "0000:3b:00.1" not in ev.excerpt


def test_rw302_fixes_name_the_vds_the_host_and_its_vmnics():
    fix = _bad("RW302-lab-fault-host-not-member").fix
    assert "Networking > RoCE-DVS > Actions > Add and Manage Hosts > Add hosts: esx-02, assign vmnic2, vmnic3" in fix
    assert "ReconfigureDvs_Task" in fix and "operation='add', host=<HostSystem esx-02>" in fix
    assert "pnicDevice='vmnic2'" in fix and "pnicDevice='vmnic3'" in fix
    create = _bad("RW302-fresh-no-vds").fix
    assert "Networking > RoCE-DC > Actions > Distributed Switch > New Distributed Switch: RoCE-DVS" in create
    assert "CreateDVS_Task" in create and "AddDVPortgroup_Task" in create and "maxMtu=9000" in create
    assert "vhpc_toolkit dvs --create --name RoCE-DVS --datacenter RoCE-DC" in create


def test_rw303_fix_reconfigures_the_mtu():
    f = _bad("RW303-lab-fault-mtu-1500")
    assert f.subject == "RoCE-DVS" and f.observed == 1500
    assert "maxMtu=9000" in f.fix and "MTU (Bytes): 9000" in f.fix and "4200" in f.summary


def test_rw304_fix_adds_the_vf_on_the_port_group_with_the_vm_off():
    fix = _bad("RW304-lab-fault-no-vf").fix
    assert fix.startswith("power off compute-02")
    assert "Adapter Type SR-IOV passthrough, Physical function 0000:3b:00.0" in fix
    assert "operation='add'" in fix and "portgroupKey='dvportgroup-35'" in fix and "allowGuestOSMtuChange=True" in fix
    assert "vhpc_toolkit sriov --add --vm compute-02 --sriov_port_group roce-pg --dvs_name RoCE-DVS --pf 0000:3b:00.0" in fix
    edit = _bad("RW304-guest-mtu-locked").fix
    assert "operation='edit'" in edit and "key=203" in edit
    assert CATALOG["RW304"].meta.depends_on == ("host:RW302",)
    assert CATALOG["RW304"].meta.reboot.value == "vm-power-off"


def test_rw305_and_rw306_fixes():
    assert "memoryReservationLockedToMax=True" in _bad("RW305-lab-fault-not-reserved").fix
    f = _bad("RW306-lab-fault-normal")
    assert "level='high'" in f.fix and "reservation=18352" in f.fix and f.fix.startswith("power off compute-02")


def test_rw307_fix_configures_the_power_policy():
    f = _bad("RW307-lab-fault-balanced")
    # the key is the host's: the one of the policy whose shortName is "static" in capability.availablePolicy
    assert f.fix.endswith('pyVmomi: host.configManager.powerSystem.ConfigurePowerPolicy(key=<the key of the policy '
                          'whose shortName is "static" in powerSystem.capability.availablePolicy>)')
    assert "Power Management > Edit Power Policy > High Performance" in f.fix


# ------------------------------------------------------------------------------------ across targets


def _rw208(host: str, entries: dict[str, int], num: int, status: Status = PASS) -> Finding:
    return Finding("RW208", status, "NUM_OF_VFS covers max_vfs", target=host, subject="mt4119_pciconf1",
                   observed={"NUM_OF_VFS": num, "SRIOV_EN": True, "max_vfs": "0,0,8,7", "card": "3b:00",
                             "card_entries": entries, "sum": sum(entries.values())},
                   evidence=[Evidence("esxi_module_params", excerpt="max_vfs=0,0,8,7")])


def test_rw301_agrees_with_max_vfs_and_num_of_vfs_when_they_agree():
    mine = _findings("RW301-analyze-healthy")  # no inventory VF counts: the host's own counts decide
    assert CATALOG["RW301"].compare(mine, [*mine, _rw208("esx-01", {"vmnic2": 8, "vmnic3": 7}, 16)]) == []
    assert all(f.status is PASS for f in mine)


def test_rw301_fails_when_vsphere_and_max_vfs_disagree():
    mine = _findings("RW301-healthy")
    rw208 = _rw208("esx-02", {"vmnic2": 6, "vmnic3": 7}, 16)
    CATALOG["RW301"].compare(mine, [*mine, rw208])
    bad = [f for f in mine if f.status is FAIL]
    assert [(f.target, f.subject) for f in bad] == [("esx-02", f"{PF1} (vmnic2)")]
    assert "nmlx5_core max_vfs gives vmnic2 6" in bad[0].summary and "numVirtualFunction=6" in bad[0].fix
    assert any(e.probe == "esxi_module_params" for e in bad[0].evidence)


def test_rw301_compares_each_pf_with_num_of_vfs_not_the_ports_summed():
    # NUM_OF_VFS is a per-PF ceiling. 8 + 7 = 15 VFs on the card with NUM_OF_VFS=15 (RW208
    # passed it, e.g. under policy per_port): each PF is covered, nothing fails here
    mine = _findings("RW301-healthy")
    CATALOG["RW301"].compare(mine, [*mine, _rw208("esx-01", {"vmnic2": 8, "vmnic3": 7}, 15)])
    assert all(f.status is PASS for f in mine)
    # NUM_OF_VFS=7: the 8 VFs vSphere requests on vmnic2's PF exceed the ceiling; vmnic3's 7 do not
    mine = _findings("RW301-healthy")
    CATALOG["RW301"].compare(mine, [*mine, _rw208("esx-01", {"vmnic2": 8, "vmnic3": 7}, 7)])
    bad = [f for f in mine if f.status is FAIL]
    assert [(f.target, f.subject) for f in bad] == [("esx-01", f"{PF1} (vmnic2)")]
    assert "more than firmware NUM_OF_VFS=7 offers each PF" in bad[0].summary


def test_rw301_leaves_a_failing_rw208_to_itself():
    mine = _findings("RW301-healthy")
    CATALOG["RW301"].compare(mine, [*mine, _rw208("esx-02", {"vmnic2": 6}, 16, status=FAIL)])
    assert all(f.status is PASS for f in mine)


def _power_policy_run(with_vcenter: bool) -> tuple[dict[str, Finding], list[Finding]]:
    """RW213 warns on both hosts (Balanced over SSH); with a vCenter, RW307 read the day-0 hosts too
    (esx-01 and esx-02 Balanced). Root causes resolved by the engine, as in a run."""
    from roce_wizard.engine import TargetRun, resolve_root_causes
    from roce_wizard.model import Facts

    runs, codes = [], ["RW213"]
    rw213 = {}
    for host in ("esx-01", "esx-02"):
        rw213[host] = Finding("RW213", WARN, "CPU power policy is Balanced, not High Performance", target=host)
        runs.append(TargetRun(Target(name=host, kind=TargetKind.ESXI, address="127.0.0.1"), Facts(), [rw213[host]]))
    rw307 = _findings("RW307-fresh-balanced") if with_vcenter else []
    if with_vcenter:
        runs.append(TargetRun(vcenter(), Facts(), rw307))
        codes.append("RW307")
    resolve_root_causes(runs, {c: CATALOG[c] for c in codes})
    return rw213, rw307


def test_rw213_defers_to_vcenters_rw307_so_a_host_is_reported_once_where_it_is_fixed():
    assert CATALOG["RW213"].meta.depends_on == ("vcenter:RW307",)
    assert CATALOG["RW307"].compare is None  # RW307 no longer defers to RW213
    rw213, rw307 = _power_policy_run(with_vcenter=True)
    assert [(f.target, f.status) for f in rw307] == [("esx-01", WARN), ("esx-02", WARN)]
    for host, f in rw213.items():
        assert f.status is SKIP and f.blocked_by == ("RW307", host), f
        assert f.summary == f"blocked by RW307 on {host}" and f.fix is None
        assert f.details["unjudged"].startswith("warn: CPU power policy is Balanced")


def test_rw213_reports_alone_without_a_vcenter():
    rw213, _ = _power_policy_run(with_vcenter=False)
    assert {h: f.status for h, f in rw213.items()} == {"esx-01": WARN, "esx-02": WARN}
    assert all(f.blocked_by is None for f in rw213.values())


def test_rw213_is_not_masked_when_vcenter_shows_high_performance():
    """vCenter and the host disagree (a stale view): RW307 passes, RW213's own warning stands."""
    from roce_wizard.engine import TargetRun, resolve_root_causes
    from roce_wizard.model import Facts

    rw213 = Finding("RW213", WARN, "CPU power policy is Balanced, not High Performance", target="esx-01")
    rw307 = _findings("RW307-healthy")
    runs = [TargetRun(Target(name="esx-01", kind=TargetKind.ESXI, address="127.0.0.1"), Facts(), [rw213]),
            TargetRun(vcenter(), Facts(), rw307)]
    resolve_root_causes(runs, {c: CATALOG[c] for c in ("RW213", "RW307")})
    assert rw213.status is WARN and rw213.blocked_by is None


def test_vms_of_the_inventory_only():
    """A VM no guest names (vCLS, a management VM) is not judged; without guests, VMs with a VF are."""
    facts = build_facts(_case("RW305-lab-fault-not-reserved"))
    facts.data["inventory_vms"] = {"compute-01": {"host": "esx-01", "guest": "compute-01"}}
    assert [f.status for f in CATALOG["RW305"].evaluate(facts, Policy())] == [PASS]


def test_a_vm_finding_finds_its_host_dependency_without_a_guest_target():
    """A vCenter-only run: compute-02 is no target, its RW304 finding says where it runs (details.host)."""
    from roce_wizard.engine import TargetRun, resolve_root_causes
    from roce_wizard.model import Facts

    rw302 = _findings("RW302-lab-fault-host-not-member")
    rw304 = CATALOG["RW304"].evaluate(build_facts(_case("RW304-vf-on-standard-network")), Policy())
    assert [(f.target, f.status) for f in rw304] == [("compute-01", PASS), ("compute-02", FAIL)]
    run = TargetRun(vcenter(), Facts(), [*rw302, *rw304])
    resolve_root_causes([run], {c: CATALOG[c] for c in ("RW302", "RW304")})
    blocked = next(f for f in rw304 if f.target == "compute-02")
    assert blocked.status is SKIP and blocked.blocked_by == ("RW302", "esx-02")
    assert "VM Network" in blocked.details["unjudged"]
