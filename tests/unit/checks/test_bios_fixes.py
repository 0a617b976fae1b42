"""plan_fix of the bios checks RW101–RW104 on recorded `redfish bios` documents (tests/unit/data/
redfish, with one attribute changed as in test_bios_checks): `redfish bios-set NAME=VALUE` on the
bmc target, reboot kind bios riding the host's next reboot; nothing when the value is right, when it
is staged already (only the reboot is left), or off a bmc target (the OS cannot change the BIOS).

After-fix cases: the document as the lab's BMC shows it right after `bios-set` (the value staged by
the configuration job, HAND-EDITED from the recording the same way) and after the reboot (the
recording itself). tests/lab/test_bios_fix.py applies the steps to the lab's BMCs over Redfish.
"""

from __future__ import annotations

import pytest

from roce_wizard.engine.fixes import plan_for as planned_fix
from roce_wizard.model import Policy, RebootKind, Safety, Status
from tests.checkcases import CATALOG, Case, build_facts, esxi, run_case
from tests.unit.checks.test_bios_checks import CPU_GLOBAL, bmc, dell, hpe

PASS, FAIL, WARN = Status.PASS, Status.FAIL, Status.WARN

# code -> (document with the setting wrong, the step command, the healthy value's document staged)
DELL = {
    "RW101": (dell(ProcVirtualization="Disabled"), "redfish bios-set ProcVirtualization=Enabled",
              dell({"ProcVirtualization": "Enabled"}, ProcVirtualization="Disabled")),
    "RW103": (dell(SriovGlobalEnable="Disabled"), "redfish bios-set SriovGlobalEnable=Enabled",
              dell({"SriovGlobalEnable": "Enabled"}, SriovGlobalEnable="Disabled")),
    "RW104": (dell(SysProfile="PerfPerWattOptimizedDapc"), "redfish bios-set SysProfile=PerfPerWattOptimizedOs",
              dell({"SysProfile": "PerfPerWattOptimizedOs"}, SysProfile="PerfPerWattOptimizedDapc")),
}
HPE_VTD_OFF = hpe()  # the recording: an iLO server with IntelProcVtd disabled


def plan(code: str, doc: str, target=None):
    case = Case(code, "plan", PASS, {"redfish_bios": doc}, target=target or bmc())
    return planned_fix(CATALOG[code], build_facts(case), Policy())


CASES: list[Case] = [
    *(Case(code, "after-fix-staged", WARN if code == "RW104" else FAIL, {"redfish_bios": staged}, target=bmc(),
           summary_has="staged", after_fix=True) for code, (_bad, _cmd, staged) in DELL.items()),
    *(Case(code, "after-fix-rebooted", PASS, {"redfish_bios": dell()}, target=bmc(), after_fix=True)
      for code in ("RW101", "RW103", "RW104")),
    Case("RW102", "after-fix-staged-ilo", FAIL, {"redfish_bios": hpe({"IntelProcVtd": "Enabled"})}, target=bmc(),
         summary_has="staged", after_fix=True),
    Case("RW102", "after-fix-rebooted-ilo", PASS, {"redfish_bios": hpe(IntelProcVtd="Enabled")}, target=bmc(),
         after_fix=True),
]


@pytest.mark.parametrize("code", sorted(DELL))
def test_plan_on_idrac(code):
    bad, command, _staged = DELL[code]
    p = plan(code, bad)
    assert p is not None and (p.check, p.target) == (code, "bmc-esx-01")
    assert (p.safety, p.reboot, p.needs) == (Safety.DISRUPTIVE, RebootKind.BIOS, ())
    assert [s.command for s in p.steps] == [command]
    assert "esx-01" in p.reboot_reason and "ride" in p.reboot_reason
    assert p.steps[0].host == "esx-01"  # the server whose next reboot applies it (the bmc target's host)
    assert p.steps[0].before.split(" ")[0].endswith(("Disabled", "PerfPerWattOptimizedDapc"))


def test_plan_on_ilo_vtd():
    p = plan("RW102", HPE_VTD_OFF)
    assert [s.command for s in p.steps] == ["redfish bios-set IntelProcVtd=Enabled"]


def test_something_else_staged_is_overwritten():
    """Enabled now, Disabled staged for the next reboot: the fix stages Enabled again."""
    p = plan("RW103", dell({"SriovGlobalEnable": "Disabled"}))
    assert [s.command for s in p.steps] == ["redfish bios-set SriovGlobalEnable=Enabled"]
    assert "staged: Disabled" in p.steps[0].before


@pytest.mark.parametrize("code", ["RW101", "RW102", "RW103", "RW104"])
def test_nothing_when_healthy(code):
    assert plan(code, dell()) is None


def test_nothing_from_the_os_side():
    """An ESXi host without a BMC in the run: the BIOS setup menu is the way (the finding says so)."""
    case = Case("RW101", "esxi", FAIL, {"esxi_cpu_global": CPU_GLOBAL.format(hv=2)}, target=esxi(),
                facts={"bmc_of_host": None})
    assert run_case(case)
    assert planned_fix(CATALOG["RW101"], build_facts(case), Policy()) is None
