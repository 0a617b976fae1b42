"""RW413 dcqcn-enabled on recorded outputs (CASES) and its fix on the lab world.

Sources: corpus mlxconfig_query/* are real captures (the congestion-control keys and NVIDIA's defaults); the MLNX_OFED
ecn sysfs reads are hand-written in the documented form (tests/data/parser_seeds/roce_ecn_sysfs, PROVENANCE.md: no
public capture of a read exists). Two inputs are real captures with one value edited, said where they are made.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from roce_wizard.lab import faults, scenarios
from roce_wizard.lab import guest as lab_guest
from roce_wizard.model import Policy, RebootKind, Safety, Status, TargetKind
from tests import fixkit
from tests.checkcases import CATALOG, Case, build_facts, esxi, guest, run_case
from tests.conftest import corpus_text

SEEDS = Path(__file__).parents[2] / "data" / "parser_seeds" / "roce_ecn_sysfs"
GREP = (SEEDS / "test-fixture-grep-np-rp-nvidia-doc-shape.txt").read_text(encoding="utf-8")  # np 3; rp 3, 4
CAT_AND_MISSING = (SEEDS / "test-fixture-cat-one-and-missing.txt").read_text(encoding="utf-8")
FULL = corpus_text("mlxconfig_query/cx4lx-mcx4121a-full-next-boot-trailing-pad.txt")  # 255 / 48 / 6
EGREP = corpus_text("mlxconfig_query/cx6-egrep-roce-cc-lldp-dcbx-off-9-space-indent.txt")  # mask 255, CNP prio 6
# the real egrep capture with ROCE_CC_PRIO_MASK_P1 edited to 247 (priority 3's bit cleared)
EGREP_MASK_247 = EGREP.replace("ROCE_CC_PRIO_MASK_P1                        255", "ROCE_CC_PRIO_MASK_P1                        247")


def node(netdev: str = "ens1f0", **roce):
    return guest("node-01", TargetKind.LINUX, netdev=netdev, **roce)


CASES = [
    Case("RW413", "np-rp-on-prio3-firmware-defaults", Status.PASS, {"roce_ecn_sysfs": GREP, "mlxconfig_query": FULL},
         target=node(), summary_has="enabled on priority 3"),
    Case("RW413", "np-off-on-prio4", Status.FAIL, {"roce_ecn_sysfs": GREP, "mlxconfig_query": FULL}, target=node(),
         policy=Policy(pfc_priority=4), summary_has="notification point (roce_np) disabled on priority 4"),
    Case("RW413", "inbox-no-ecn-sysfs", Status.PASS, {"roce_ecn_sysfs": CAT_AND_MISSING}, target=node("ens1f1"),
         summary_has="no MLNX_OFED ecn sysfs"),
    Case("RW413", "only-rp-read-np-unknown", Status.SKIP, {"roce_ecn_sysfs": CAT_AND_MISSING}, target=node("ens1f0"),
         summary_has="no value for priority 3"),
    Case("RW413", "vf-guest-na", Status.SKIP, {}, target=guest(), summary_has="n/a in a VF guest"),
    Case("RW413", "esxi-firmware-defaults", Status.PASS, {"mlxconfig_query": FULL}, target=esxi(),
         summary_has="ROCE_CC_PRIO_MASK covers priority 3"),
    Case("RW413", "cnp-priority-not-the-sites", Status.FAIL, {"mlxconfig_query": EGREP}, target=esxi(),
         policy=Policy(cnp_priority=5), summary_has="CNP_802P_PRIO_P1 6, expected 5"),
    Case("RW413", "mask-without-prio3", Status.FAIL, {"mlxconfig_query": EGREP_MASK_247},
         target=node(pf_pci="0000:3b:00.0"),
         summary_has="ROCE_CC_PRIO_MASK_P1 247 leaves priority 3 out"),
]


def test_cases():
    for case in CASES:
        run_case(case)


def test_firmware_fix_sets_only_the_missing_bit():
    case = CASES[-1]
    plan = CATALOG["RW413"].plan_fix(build_facts(case), case.policy)
    assert plan is not None and plan.safety is Safety.DISRUPTIVE and plan.reboot is RebootKind.HOST
    assert [s.command for s in plan.steps] == ["mlxconfig -d 0000:3b:00.0 -y set ROCE_CC_PRIO_MASK_P1=255"]


def test_no_device_name_no_firmware_step():
    """The egrep'd capture names no device and the inventory no roce.pf_pci: the finding shows a placeholder line,
    the plan writes nothing (never `mlxconfig -d <pci>`)."""
    case = dataclasses.replace(CASES[-1], target=node())
    (f,) = run_case(case)
    assert f.fix.startswith("mlxconfig -d <pci> -y set ROCE_CC_PRIO_MASK_P1=255")
    assert CATALOG["RW413"].plan_fix(build_facts(case), case.policy) is None


def test_esxi_firmware_fix_uses_mft_and_the_mst_device():
    case = CASES[6]
    plan = CATALOG["RW413"].plan_fix(build_facts(case), case.policy)
    assert plan is not None and plan.needs == ("RW201", "RW202")
    (step,) = plan.steps
    assert step.command.startswith("/opt/mellanox/bin/mlxconfig -d ") and step.command.endswith(
        "-y set CNP_802P_PRIO_P1=5")


# ------------------------------------------------------------------ on the lab world

NODE = "node-01"


def _world():
    world = scenarios.healthy()
    lab_guest.add_baremetal(world, 1)
    return world


def _statuses(world, code="RW413"):
    return {f.status for f in fixkit.run(world, NODE, [code]).findings if f.check == code}


def test_sysfs_fix_now_at_boot_and_idempotent():
    world = _world()
    faults.inject(world, f"RW413@{NODE}")
    assert Status.FAIL in _statuses(world)
    plan = fixkit.plan_for(world, NODE, "RW413")
    assert plan is not None and plan.safety is Safety.SAFE and plan.reboot is RebootKind.NONE
    assert plan.steps[0].command == "echo 1 > /sys/class/net/ens1f0np0/ecn/roce_rp/enable/3"
    assert "roce-wizard-dcqcn.service" in plan.steps[1].command
    fixkit.apply(world, NODE, plan)
    assert _statuses(world) == {Status.PASS}
    world.reboot_guest(world.guests[NODE])  # the fault's boot script turns it off again; the hook turns it on
    assert _statuses(world) == {Status.PASS}
    assert fixkit.plan_for(world, NODE, "RW413") is None


def test_firmware_mask_fix_waits_for_the_reboot():
    world = _world()
    t = fixkit.target_for(world, NODE)
    t = dataclasses.replace(t, roce=dataclasses.replace(t.roce, pf_pci="0000:3b:00.0"))
    assert fixkit.run_line(world, NODE, "mlxconfig -d 0000:3b:00.0 -y set ROCE_CC_PRIO_MASK_P1=247").exit_status == 0
    world.reboot_guest(world.guests[NODE])
    import asyncio

    from roce_wizard.engine import run_checks

    def report():
        return asyncio.run(run_checks([t], {"RW413": CATALOG["RW413"]}, fixkit.WorldTransport(world), Policy()))

    bad = [f for f in report().findings if f.status is Status.FAIL]
    assert [f.subject for f in bad] == ["0000:3b:00.0"] and "247 leaves priority 3 out" in bad[0].summary
    plan = CATALOG["RW413"].plan_fix(report().runs[0].facts, Policy())
    assert [s.command for s in plan.steps] == ["mlxconfig -d 0000:3b:00.0 -y set ROCE_CC_PRIO_MASK_P1=255"]
    fixkit.apply(world, NODE, plan)
    pending = [f for f in report().findings if f.status is Status.FAIL]
    assert pending and "reboot pending" in pending[0].summary
    assert CATALOG["RW413"].plan_fix(report().runs[0].facts, Policy()) is None  # the reboot ledger carries it
    world.reboot_guest(world.guests[NODE])
    assert {f.status for f in report().findings} == {Status.PASS}
