"""plan_fix of the esxi checks, against the lab world in-process (tests/fixkit.py):
inject the check's fault, plan, apply, reboot when the plan says so, the check passes, a second plan is None."""

from __future__ import annotations

import pytest

from roce_wizard.lab import faults, scenarios
from roce_wizard.model import Facts, Policy, RebootKind, Safety, Status
from roce_wizard.probes import UnsafeValue
from tests.fixkit import CATALOG, apply, plan_for, reboot_if_needed, run_line, statuses

HOST = "esx-01"
MLXCONFIG = "/opt/mellanox/bin/mlxconfig"
PARAMS_SET = 'esxcli system module parameters set -m nmlx5_core -p "{}"'
HEALTHY_PARAMS = "ecn=1 max_vfs=0,0,8,7 pfcrx=0x08 pfctx=0x08 trust_state=2"

# code -> (safety, reboot, needs, exact commands of the steps)
EXPECTED = {
    "RW201": (Safety.DISRUPTIVE, RebootKind.HOST, (), [
        "if ls /vmfs/volumes/datastore1/mellanox/MEL_bootbank_mft_*.vib >/dev/null 2>&1; then esxcli software vib "
        "install -v /vmfs/volumes/datastore1/mellanox/MEL_bootbank_mft_*.vib -f; else esxcli software vib install -d "
        "/vmfs/volumes/datastore1/mellanox/*[Mm][Ff][Tt]*.zip; fi",
        "if ls /vmfs/volumes/datastore1/mellanox/MEL_bootbank_nmst_*.vib >/dev/null 2>&1; then esxcli software vib "
        "install -v /vmfs/volumes/datastore1/mellanox/MEL_bootbank_nmst_*.vib -f; else esxcli software vib install -d "
        "/vmfs/volumes/datastore1/mellanox/*[Nn][Mm][Ss][Tt]*.zip; fi"]),
    "RW202": (Safety.SAFE, RebootKind.NONE, ("RW201",), ["/opt/mellanox/bin/mst start"]),
    "RW203": (Safety.DISRUPTIVE, RebootKind.FW_RESET, ("RW201", "RW202"), [
        "/opt/mellanox/bin/mlxfwmanager --online -u -d 3b:00.0 -f -y"]),
    "RW204": (Safety.DISRUPTIVE, RebootKind.HOST, (), [
        "esxcli software vib install -d /vmfs/volumes/datastore1/mellanox/Mellanox-nmlx5_*.zip"]),
    "RW205": (Safety.DISRUPTIVE, RebootKind.HOST, ("RW201", "RW202"), [
        f"{MLXCONFIG} -d mt4119_pciconf1 -y set LINK_TYPE_P2=2"]),
    "RW206": (Safety.DISRUPTIVE, RebootKind.HOST, ("RW201", "RW202"), [
        f"{MLXCONFIG} -d mt4119_pciconf1 -y set SRIOV_EN=1"]),
    "RW207": (Safety.DISRUPTIVE, RebootKind.HOST, ("RW201", "RW202"), [
        f"{MLXCONFIG} -d mt4119_pciconf1 -y set ADVANCED_PCI_SETTINGS=0"]),
    "RW208": (Safety.DISRUPTIVE, RebootKind.HOST, ("RW201", "RW202"), [
        f"{MLXCONFIG} -d mt4119_pciconf1 -y set NUM_OF_VFS=16"]),
    "RW209": (Safety.DISRUPTIVE, RebootKind.HOST, (), [
        PARAMS_SET.format("ecn=1 max_vfs=0,0,8,7 trust_state=2 pfctx=0x08 pfcrx=0x08")]),
    "RW210": (Safety.DISRUPTIVE, RebootKind.HOST, (), [PARAMS_SET.format(HEALTHY_PARAMS)]),
    "RW211": (Safety.DISRUPTIVE, RebootKind.HOST, (), [PARAMS_SET.format(HEALTHY_PARAMS)]),
}
ESXI_CODES = sorted(c for c, v in CATALOG.items() if c.startswith("RW2"))


def _start_mst_after_boot(world) -> None:
    """A host reboot stops mst (the lab, like ESXi): what RW202's own plan does, so RW205… can be judged."""
    plan = plan_for(world, HOST, "RW202")
    if plan is not None:
        apply(world, HOST, plan)


def _fix(world, code: str):
    plan = plan_for(world, HOST, code)
    assert plan is not None, f"{code}: no plan on the fail case"
    apply(world, HOST, plan)
    reboot_if_needed(world, HOST, plan)
    _start_mst_after_boot(world)
    return plan


def test_fixable_esxi_checks():
    # RW212 has no lab fault of its own (global pause is in effect only while PFC is not operational):
    # its fix is tested in tests/unit/checks/test_esxi_dcb_checks.py
    # RW213's plan is manual words (no vendor source for its esxcli write): test_rw213_plan_is_manual_words
    assert {c for c in ESXI_CODES if CATALOG[c].plan_fix is not None} == set(EXPECTED) | {"RW212", "RW213"}
    assert CATALOG["RW214"].plan_fix is None and CATALOG["RW215"].plan_fix is None


@pytest.mark.parametrize("code", sorted(EXPECTED))
def test_fix_fault(code):
    world = scenarios.healthy()
    faults.inject(world, f"{code}@{HOST}")
    assert statuses(world, HOST, code) & {Status.FAIL, Status.WARN}
    plan = plan_for(world, HOST, code)
    safety, reboot, needs, commands = EXPECTED[code]
    assert plan is not None
    assert (plan.check, plan.target) == (code, HOST)
    assert (plan.safety, plan.reboot, plan.needs) == (safety, reboot, needs)
    assert [s.command for s in plan.steps] == commands
    assert plan.summary
    if reboot is not RebootKind.NONE:
        assert plan.reboot_reason
    apply(world, HOST, plan)
    reboot_if_needed(world, HOST, plan)
    _start_mst_after_boot(world)
    assert statuses(world, HOST, code) == {Status.PASS}
    assert plan_for(world, HOST, code) is None


def test_rw213_plan_is_manual_words():
    # issue 12 item 2: no VMware document gives `esxcli system settings advanced set -o /Power/CpuPolicy`, so
    # the plan says the documented client path in words, is manual (never run) and emits no esxcli line
    world = scenarios.healthy()
    faults.inject(world, f"RW213@{HOST}")
    plan = plan_for(world, HOST, "RW213")
    assert (plan.safety, plan.reboot) == (Safety.MANUAL, RebootKind.NONE)
    (step,) = plan.steps
    assert step.command.startswith("# set the host's CPU power policy to High Performance: vSphere Client")
    assert "esxcli" not in step.command and (step.before, step.after) == ("Balanced", "High Performance")


def test_params_plan_shows_full_strings():
    world = scenarios.healthy()
    faults.inject(world, f"RW211@{HOST}")
    (step,) = plan_for(world, HOST, "RW211").steps
    assert step.before == "ecn=0 max_vfs=0,0,8,7 pfcrx=0x08 pfctx=0x08 trust_state=2"
    assert step.after == HEALTHY_PARAMS


def test_module_params_trap_keeps_max_vfs_and_trust():
    world = scenarios.healthy()
    host = world.hosts[HOST]
    host.module_params = {"max_vfs": "0,0,8,7", "trust_state": "2"}
    host.module_params_active = dict(host.module_params)
    assert statuses(world, HOST, "RW209") == {Status.FAIL}
    plan = plan_for(world, HOST, "RW209")
    (step,) = plan.steps
    assert step.before == "max_vfs=0,0,8,7 trust_state=2"
    # ecn=1 too: an unset ecn is not assumed to be on (RW211), and the one desired string sets every key
    assert step.after == "max_vfs=0,0,8,7 trust_state=2 pfctx=0x08 pfcrx=0x08 ecn=1"
    assert step.command == PARAMS_SET.format("max_vfs=0,0,8,7 trust_state=2 pfctx=0x08 pfcrx=0x08 ecn=1")
    _fix(world, "RW209")
    assert host.module_params == {"max_vfs": "0,0,8,7", "trust_state": "2", "pfctx": "0x08", "pfcrx": "0x08",
                                  "ecn": "1"}
    for code in ("RW208", "RW209", "RW210", "RW211", "RW215"):
        assert statuses(world, HOST, code) == {Status.PASS}, code
        assert CATALOG[code].plan_fix is None or plan_for(world, HOST, code) is None


def test_params_fixes_agree_in_any_order():
    world = scenarios.healthy()
    for code in ("RW209", "RW210", "RW211"):
        faults.inject(world, f"{code}@{HOST}")
    plans = [plan_for(world, HOST, c) for c in ("RW211", "RW209", "RW210")]
    assert len({p.steps[0].command for p in plans}) == 1  # the ONE desired string
    for plan in plans:
        apply(world, HOST, plan)
    reboot_if_needed(world, HOST, plans[0])
    for code in ("RW209", "RW210", "RW211"):
        assert statuses(world, HOST, code) == {Status.PASS}
        assert plan_for(world, HOST, code) is None


def test_rw208_puts_inventory_vfs_into_max_vfs():
    world = scenarios.healthy()
    host = world.hosts[HOST]
    host.module_params["max_vfs"] = host.module_params_active["max_vfs"] = "0,0,4,4"
    plan = plan_for(world, HOST, "RW208")
    assert plan is not None
    assert [s.command for s in plan.steps] == [PARAMS_SET.format(HEALTHY_PARAMS)]
    assert plan.steps[0].before == "ecn=1 max_vfs=0,0,4,4 pfcrx=0x08 pfctx=0x08 trust_state=2"
    _fix(world, "RW208")
    assert host.module_params["max_vfs"] == "0,0,8,7"
    assert statuses(world, HOST, "RW208") == {Status.PASS}
    assert plan_for(world, HOST, "RW208") is None


def test_rw212_without_pfc_plans_nothing():
    """Global pause on and no PFC: the fix follows from RW209 (+ reboot); pause off alone would leave
    the port with no flow control."""
    world = scenarios.healthy()
    faults.inject(world, f"RW209@{HOST}")
    nic = next(n for n in world.hosts[HOST].vmnics if n.name == "vmnic2")
    nic.pause_rx = nic.pause_tx = True  # the driver's default (ESXi 8 + ConnectX-5)
    assert Status.FAIL in statuses(world, HOST, "RW212")
    assert plan_for(world, HOST, "RW212") is None
    _fix(world, "RW209")
    assert statuses(world, HOST, "RW212") == {Status.PASS}


def test_mlxconfig_pending_plans_nothing():
    """Set for next boot but not yet current: the reboot is RW214's, no second set."""
    world = scenarios.healthy()
    faults.inject(world, f"RW206@{HOST}")
    apply(world, HOST, plan_for(world, HOST, "RW206"))
    assert plan_for(world, HOST, "RW206") is None


def test_healthy_host_plans_nothing():
    world = scenarios.healthy()
    for code in ESXI_CODES:
        if CATALOG[code].plan_fix is not None:
            assert plan_for(world, HOST, code) is None, code


def test_lab_datastore_holds_what_the_plans_install():
    world = scenarios.healthy()
    for pattern in ("MEL_bootbank_mft_*.vib", "MEL_bootbank_nmst_*.vib", "Mellanox-nmlx5_*.zip"):
        out = run_line(world, HOST, f"ls /vmfs/volumes/datastore1/mellanox/{pattern}").stdout.split()
        assert len(out) == 1, pattern


def test_unsafe_values_never_reach_a_command():
    facts = Facts(data={"esxi_module_params": {"params": {"max_vfs": '0";reboot;"', "trust_state": "2"}}})
    with pytest.raises(UnsafeValue):
        CATALOG["RW209"].plan_fix(facts, Policy())
    bad_store = Policy(vib_datastore="/vmfs/volumes/ds1/$(reboot)")
    facts = Facts(data={"esxi_vib_list": {"vibs": []}})
    with pytest.raises(UnsafeValue):
        CATALOG["RW201"].plan_fix(facts, bad_store)


def test_rw201_installs_mft_and_nmst_from_offline_bundle_zips_when_the_datastore_has_no_vibs():
    """NVIDIA ships MFT/NMST for ESXi as offline-bundle / component zips as well as VIBs.
    The datastore here holds only zips (names HAND-WRITTEN in NVIDIA's capitalised style)."""
    from roce_wizard.lab import esxi as lab_esxi

    world = scenarios.healthy()
    faults.inject(world, f"RW201@{HOST}")
    store = lab_esxi.datastore(world)
    for path in [p for p in store if p.endswith(".vib")]:
        del store[path]
    folder = "/vmfs/volumes/datastore1/mellanox"
    store[f"{folder}/Mellanox-MFT-Tools_4.18.1.14-1OEM.700.1.0.15843807.zip"] = "(offline bundle: mft)\n"
    store[f"{folder}/Mellanox-NATIVE-NMST_4.18.1.14-1OEM.700.1.0.15843807.zip"] = "(offline bundle: nmst)\n"
    plan = plan_for(world, HOST, "RW201")
    apply(world, HOST, plan)
    reboot_if_needed(world, HOST, plan)
    assert statuses(world, HOST, "RW201") == {Status.PASS}
    assert plan_for(world, HOST, "RW201") is None
