"""Guest / bare-metal Linux fixes against the lab world (tests/fixkit.py): for each fixable check the
lab fault makes it fail, plan_fix plans, the steps run in the simulated guest, the check passes,
it STILL passes after one more reboot (the change was persisted), and a second plan is None."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from roce_wizard.engine import run_checks
from roce_wizard.engine.fixes import plan_for as planned_fix
from roce_wizard.lab import faults, scenarios
from roce_wizard.lab import guest as lab_guest
from roce_wizard.model import Policy, RebootKind, Safety, Status, Target
from tests import fixkit

GUEST = "compute-01"
NODE = "node-01"
GUEST_CODES = sorted(c for c, v in fixkit.CATALOG.items() if c.startswith("RW4"))
OFED_TGZ = f"/tmp/{lab_guest.OFED_BUNDLE}-rhel8.4-x86_64.tgz"


def _target(world, name: str, **changes) -> Target:
    """fixkit's target, with inventory details the lab's derived one lacks (roce.ip, pf_pci, vfs, options)."""
    t = fixkit.target_for(world, name)
    roce = {k: changes.pop(k) for k in ("ip", "pf_pci", "vfs") if k in changes}
    if roce:
        t = dataclasses.replace(t, roce=dataclasses.replace(t.roce, **roce))
    return dataclasses.replace(t, **changes)


def _report(world, target: Target, code: str):
    checks = {code: fixkit.CATALOG[code]}
    return asyncio.run(run_checks([target], checks, fixkit.WorldTransport(world), Policy()))


def statuses(world, target: Target, code: str) -> set[Status]:
    return {f.status for f in _report(world, target, code).findings if f.check == code}


def plan_for(world, target: Target, code: str):
    return planned_fix(fixkit.CATALOG[code], _report(world, target, code).runs[0].facts, Policy())


def fix_and_verify(world, target: Target, code: str, safety: Safety, reboot: RebootKind):
    """fail -> plan -> apply -> (reboot) -> pass -> reboot again -> still pass -> plan None."""
    name = target.name
    assert statuses(world, target, code) & {Status.FAIL, Status.WARN}, f"{code}: the fault did not make it fail"
    plan = plan_for(world, target, code)
    assert plan is not None and plan.check == code and plan.target == name
    assert plan.safety is safety and plan.reboot is reboot, plan
    assert plan.steps and all(s.description and s.command for s in plan.steps)
    fixkit.apply(world, name, plan)
    fixkit.reboot_if_needed(world, name, plan)
    assert statuses(world, target, code) == {Status.PASS}, _report(world, target, code).findings
    world.reboot_guest(world.guests[name])  # persistence: the fix survives a reboot
    assert statuses(world, target, code) == {Status.PASS}, f"{code}: lost at reboot"
    assert plan_for(world, target, code) is None  # idempotent
    return plan


def test_rw405_mtu_now_and_persisted():
    world = scenarios.healthy()
    faults.inject(world, f"RW405@{GUEST}")
    plan = fix_and_verify(world, _target(world, GUEST), "RW405", Safety.SAFE, RebootKind.NONE)
    assert plan.steps[0].command == "ip link set dev ens256 mtu 9000"
    assert plan.steps[0].before == "mtu 1500" and plan.steps[0].after == "mtu 9000"
    assert "802-3-ethernet.mtu 9000" in plan.steps[1].command


def test_rw401_ofed_from_the_inventory_bundle():
    world = scenarios.healthy()
    faults.inject(world, f"RW401@{GUEST}")
    target = _target(world, GUEST, options={"ofed_bundle": OFED_TGZ})
    plan = fix_and_verify(world, target, "RW401", Safety.DISRUPTIVE, RebootKind.VM_REBOOT)
    commands = [s.command for s in plan.steps]
    assert any(c.startswith(f"tar -xzf {OFED_TGZ} -C /tmp") for c in commands)
    assert any("./mlnxofedinstall --force --add-kernel-support" in c for c in commands)
    assert commands[-1] == "/etc/init.d/openibd force-restart"
    assert plan.reboot_reason


def test_rw401_without_a_bundle_is_manual():
    world = scenarios.healthy()
    faults.inject(world, f"RW401@{GUEST}")
    plan = plan_for(world, _target(world, GUEST), "RW401")
    assert plan is not None and plan.safety is Safety.MANUAL and plan.steps


def test_rw406_adds_the_inventory_ip_and_persists_it():
    world = scenarios.healthy()
    roce_ip = fixkit.target_for(world, GUEST).roce.ip
    # the address is gone from the netdev and from its NetworkManager profile (it comes up without one)
    for line in (f"ip addr del {roce_ip} dev ens256", "nmcli con mod ens256 ipv4.addresses ''"):
        assert fixkit.run_line(world, GUEST, line).exit_status == 0
    world.reboot_guest(world.guests[GUEST])
    plan = fix_and_verify(world, _target(world, GUEST, ip=roce_ip), "RW406", Safety.SAFE, RebootKind.NONE)
    assert plan.steps[0].command == f"ip addr add {roce_ip} dev ens256"
    assert f"ipv4.addresses {roce_ip}" in plan.steps[1].command


def test_rw406_replacing_another_address_is_disruptive():
    world = scenarios.healthy()
    roce_ip = fixkit.target_for(world, GUEST).roce.ip
    other = roce_ip.replace(".11/", ".77/") if ".11/" in roce_ip else "192.168.100.77/24"
    for line in (f"ip addr del {roce_ip} dev ens256", f"ip addr add {other} dev ens256",
                 f"nmcli con mod ens256 ipv4.addresses {other}"):
        assert fixkit.run_line(world, GUEST, line).exit_status == 0
    plan = fix_and_verify(world, _target(world, GUEST, ip=roce_ip), "RW406", Safety.DISRUPTIVE, RebootKind.NONE)
    assert plan.steps[0].command == f"ip addr del {other} dev ens256"


def test_rw406_manual_without_roce_ip_and_on_a_clash():
    world = scenarios.healthy()
    roce_ip = fixkit.target_for(world, GUEST).roce.ip
    assert fixkit.run_line(world, GUEST, f"ip addr del {roce_ip} dev ens256").exit_status == 0
    plan = plan_for(world, _target(world, GUEST, ip=None), "RW406")
    assert plan is not None and plan.safety is Safety.MANUAL and plan.steps

    world = scenarios.healthy()
    faults.inject(world, f"RW406@{GUEST}")  # the management NIC also has an address in the RoCE subnet
    target = _target(world, GUEST)
    assert statuses(world, target, "RW406") == {Status.FAIL}
    plan = plan_for(world, target, "RW406")
    assert plan is not None and plan.safety is Safety.MANUAL
    # the steps shown are right: run by hand, they fix it for good
    fixkit.apply(world, GUEST, plan)
    world.reboot_guest(world.guests[GUEST])
    assert statuses(world, target, "RW406") == {Status.PASS}
    assert plan_for(world, target, "RW406") is None


def test_rw408_cma_roce_mode_with_a_boot_unit():
    world = scenarios.healthy()
    faults.inject(world, f"RW408@{GUEST}")
    plan = fix_and_verify(world, _target(world, GUEST), "RW408", Safety.SAFE, RebootKind.NONE)
    assert plan.steps[0].command == "/usr/sbin/cma_roce_mode -d mlx5_0 -p 1 -m 2"
    assert "/etc/systemd/system/roce-wizard-cma-roce-mode.service" in plan.steps[1].command
    assert "systemctl enable roce-wizard-cma-roce-mode.service" in plan.steps[2].command


def test_rw410_pause_off_persisted_in_networkmanager():
    # bare metal: in a VF guest RW410 is n/a (an mlx5 VF cannot set port pause)
    world, target = _baremetal("RW410")
    plan = fix_and_verify(world, target, "RW410", Safety.SAFE, RebootKind.NONE)
    assert plan.steps[0].command == "ethtool -A ens1f0np0 rx off tx off"
    assert "ethtool.pause-rx off ethtool.pause-tx off" in plan.steps[1].command


def test_rw411_traffic_class_with_a_boot_unit():
    world = scenarios.healthy()
    faults.inject(world, f"RW411@{GUEST}")
    plan = fix_and_verify(world, _target(world, GUEST), "RW411", Safety.SAFE, RebootKind.NONE)
    assert plan.steps[0].command == "echo 104 > /sys/class/infiniband/mlx5_0/tc/1/traffic_class"
    assert plan.steps[0].before == "96" and plan.steps[0].after == "104"


def test_rw410_a_vf_guest_cannot_set_pause_and_plans_nothing():
    world = scenarios.healthy()
    reply = fixkit.run_line(world, GUEST, "ethtool -A ens256 rx off tx off")
    assert reply.exit_status != 0 and "netlink error: Operation not supported" in reply.stderr
    target = _target(world, GUEST)
    assert statuses(world, target, "RW410") == {Status.SKIP}
    assert plan_for(world, target, "RW410") is None


def _baremetal(code: str):
    world = scenarios.healthy()
    lab_guest.add_baremetal(world, 1)
    faults.inject(world, f"{code}@{NODE}")
    return world, _target(world, NODE, pf_pci="0000:3b:00.0", vfs=(8,))


def test_rw409_mlnx_qos_with_a_boot_unit():
    world, target = _baremetal("RW409")
    plan = fix_and_verify(world, target, "RW409", Safety.SAFE, RebootKind.NONE)
    assert plan.steps[0].command == "/usr/sbin/mlnx_qos -i ens1f0np0 --trust dscp --pfc 0,0,0,1,0,0,0,0"
    assert "roce-wizard-qos.service" in plan.steps[-1].command


def test_rw409_plans_nothing_in_a_vf_guest():
    world = scenarios.healthy()
    assert plan_for(world, _target(world, GUEST), "RW409") is None


def test_rw412_mlxconfig_set_then_host_reboot():
    world, target = _baremetal("RW412")
    plan = fix_and_verify(world, target, "RW412", Safety.DISRUPTIVE, RebootKind.HOST)
    assert [s.command for s in plan.steps] == ["mlxconfig -d 0000:3b:00.0 -y set SRIOV_EN=1"]
    assert plan.steps[0].before == "SRIOV_EN=False" and plan.reboot_reason


@pytest.mark.parametrize("code", GUEST_CODES)
def test_a_healthy_guest_plans_nothing(code):
    world = scenarios.healthy()
    check = fixkit.CATALOG[code]
    if check.plan_fix is None:
        assert code in {"RW402", "RW403", "RW404", "RW407", "RW415"}  # RW415: hardware, advice only
        return
    for name, target in ((GUEST, None), (NODE, "bm")):
        if target == "bm":
            lab_guest.add_baremetal(world, 1)
            t = _target(world, NODE, pf_pci="0000:3b:00.0", vfs=(8,), options={"ofed_bundle": OFED_TGZ})
        else:
            t = _target(world, GUEST, options={"ofed_bundle": OFED_TGZ})
        if t.kind not in check.meta.target_kinds:
            continue
        assert plan_for(world, t, code) is None, f"{code} on {name}"
