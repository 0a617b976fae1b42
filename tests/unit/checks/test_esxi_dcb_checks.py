"""RW216 (operational DCB state) and RW212's use of it, on the only real `esxcli network nic dcb status get`
outputs found (tests/data/esxi_dcb_status/, provenance in tests/data/PROVENANCE.md) and the lab's answers.

On nmlx5, "When PFC is enabled, global pause will be operationally disabled (no matter what is configured for
global pause flow control)" (Mellanox, "HowTo Run RoCE over L2 Enabled with PFC (ESXi)"): RW212 must consult
the DCB state before failing pause shown on.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_wizard.engine.fixes import plan_for as planned_fix
from roce_wizard.lab import faults, scenarios
from roce_wizard.model import Policy, Status
from tests.checkcases import Case, esxi, run_case
from tests.fixkit import apply, plan_for, statuses
from tests.unit.checks.test_esxi_checks import PARAMS_SEED, PAUSE_SEED_OFF_CSV, esxcfg_module

PASS, FAIL, WARN, SKIP = Status.PASS, Status.FAIL, Status.WARN, Status.SKIP
DATA = Path(__file__).resolve().parents[2] / "data" / "esxi_dcb_status"
HOST1 = (DATA / "cx4lx-host1-ieee-pfc-prio3.txt").read_text(encoding="utf-8")  # vmnic3/4: PFC on prio 3
HOST2 = (DATA / "cx4lx-host2-cee-pfc-off.txt").read_text(encoding="utf-8")  # vmnic5/6: CEE, PFC off

# the seed host's pause list with vmnic3 and vmnic4 on, and with vmnic5/vmnic6 (the capture's names) on
PAUSE_34_ON = PAUSE_SEED_OFF_CSV.replace("false,false,vmnic3,true,false,false,", "false,false,vmnic3,true,true,true,")
PAUSE_34_ON += "false,false,vmnic4,true,true,true,false,false,\n"
PAUSE_56_ON = ("AutoNegotiation,AutoNegotiationResolutionAvail,NIC,PauseParamsSupported,PauseRX,PauseTX,"
               "RXAutoNegotiationResolution,TXAutoNegotiationResolution,\n"
               "false,false,vmnic5,true,true,true,false,false,\nfalse,false,vmnic6,true,true,true,false,false,\n")


def _block(text: str, name: str) -> str:
    """One vmnic's block of a capture, as the per-vmnic probe would have read it."""
    return text.split(f"{name}:\n", 1)[1].split("\n\n", 1)[0] + "\n"


CASES = [
    # RW216 dcb-operational
    Case("RW216", "real-host1-pfc-prio3", PASS, {"esxi_dcb_status": HOST1}, summary_has="operational on priority 3"),
    Case("RW216", "real-host2-cee-pfc-off", FAIL, {"esxi_dcb_status": HOST2}, summary_has="PFC is not operational"),
    Case("RW216", "real-host2-configured-not-operational", FAIL,
         {"esxi_dcb_status": HOST2, "esxi_module_params": esxcfg_module("pfctx=0x08 pfcrx=0x08 trust_state=2")},
         summary_has="pfctx=0x08 configured: not in effect"),
    Case("RW216", "real-host1-policy-prio4", FAIL, {"esxi_dcb_status": HOST1}, policy=Policy(pfc_priority=4),
         summary_has="priority 3, not 4"),
    Case("RW216", "per-vmnic-probe", PASS,
         {"esxi_dcb_status": {"vmnic2": _block(HOST1, "vmnic3"), "vmnic3": _block(HOST1, "vmnic4")},
          "esxi_module_params": PARAMS_SEED}, target=esxi()),
    Case("RW216", "per-vmnic-probe-one-missing-could-not-tell", SKIP,
         {"esxi_dcb_status": {"vmnic2": _block(HOST1, "vmnic3")}}, target=esxi(), summary_has="no DCB status"),
    # RW212 consults it: pause shown on + PFC operational passes; + PFC not operational fails
    Case("RW212", "pause-on-pfc-operational-real", PASS,
         {"esxi_pause_params": PAUSE_34_ON, "esxi_dcb_status": HOST1, "esxi_module_params": PARAMS_SEED},
         target=esxi(vmnics=("vmnic3", "vmnic4")), summary_has="operationally"),
    Case("RW212", "pause-on-pfc-not-operational-real", FAIL,
         {"esxi_pause_params": PAUSE_56_ON, "esxi_dcb_status": HOST2}, summary_has="PFC is not operational"),
    Case("RW212", "pause-on-pfc-configured-no-dcb-could-not-tell", WARN,
         {"esxi_pause_params": PAUSE_34_ON, "esxi_module_params": PARAMS_SEED},
         target=esxi(vmnics=("vmnic3", "vmnic4")), summary_has="could not tell"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case(case: Case):
    run_case(case)


def test_pause_shown_on_with_pfc_operational_plans_nothing():
    case = next(c for c in CASES if c.name == "pause-on-pfc-operational-real")
    from tests.checkcases import CATALOG, build_facts

    assert planned_fix(CATALOG["RW212"], build_facts(case), case.policy) is None
    assert all(f.status is PASS for f in run_case(case))


def test_lab_rw216_fault_is_priority_4_and_global_pause_stays_off():
    world = scenarios.healthy()
    faults.inject(world, "RW216@esx-01")
    assert statuses(world, "esx-01", "RW216") == {FAIL, PASS}  # vmnic2 on priority 4, vmnic3 fine
    assert statuses(world, "esx-01", "RW212") == {PASS}  # PFC operational (on 4): global pause is off
    assert statuses(world, "esx-01", "RW209") == {PASS}  # the driver's own setting is right


def test_lab_nmlx5_refuses_pause_set_while_pfc_is_on_and_rw212_fix_only_before_the_reboot():
    from tests.unit.data.after_fix.record import rw212_pfc_not_loaded

    world = scenarios.healthy()
    rw212_pfc_not_loaded(world)  # pfctx in the string, not loaded; vmnic2 pause on
    assert FAIL in statuses(world, "esx-01", "RW212") and FAIL in statuses(world, "esx-01", "RW216")
    plan = plan_for(world, "esx-01", "RW212")
    assert [s.command for s in plan.steps] == ["esxcli network nic pauseParams set -n vmnic2 -r false -t false"]
    apply(world, "esx-01", plan)
    assert statuses(world, "esx-01", "RW212") == {PASS}
    world.reboot_host(world.hosts["esx-01"])  # PFC loads: pause now cannot be set at all
    from tests.fixkit import run_line

    out = run_line(world, "esx-01", "esxcli network nic pauseParams set -n vmnic2 -r true -t true")
    assert out.exit_status == 1 and "Unable to complete Sysinfo operation" in out.stderr
    assert statuses(world, "esx-01", "RW216") == {PASS}
