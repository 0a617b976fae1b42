"""Fixes of the vsphere checks RW301–RW307 against the lab's real vCenter (vcsim over TLS, pyVmomi):
the catalog's plan_fix on the lab fault, `fixes.apply_plans` running the `vsphere …` action lines
through `VSphereTransport`, the reboot / power cycle the plan names (done with the same action
lines the reboot orchestration uses), the check passing, a second plan being None — and the World
(what the ESXi shells and guests show) following what vCenter did.

One lab (2 ESXi hosts, their VMs and guests, vCenter) for the module; each test starts from the
healthy world (the lab swaps it back in place; vCenter follows within a sync).
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from roce_wizard.catalog import load_catalog
from roce_wizard.engine import RunReport, run_checks
from roce_wizard.engine.fixes import FixRun, Planned, apply_plans, plan_fixes
from roce_wizard.inventory import Inventory, load_inventory
from roce_wizard.model import RebootKind, Safety, Status, TargetKind
from roce_wizard.records.runlog import RunLog, read_events
from roce_wizard.transports.base import CommandResult
from roce_wizard.transports.ssh import SshTransport
from roce_wizard.transports.vsphere import VSphereTransport

pytestmark = pytest.mark.skipif(shutil.which("go") is None,
                                reason="Go is not installed: the lab's vCenter simulator cannot be built")

CATALOG = load_catalog([])
VSPHERE = [f"RW30{i}" for i in range(1, 8)]
ALLOW = {Safety.SAFE, Safety.DISRUPTIVE}


def _world():
    from roce_wizard.lab import scenarios

    world = scenarios.healthy(2)
    world.reboot_delay_s = 0.2
    return world


@dataclasses.dataclass
class Lab:
    lab: Any
    runner: Any
    inventory: Inventory
    password: str
    directory: Path

    @property
    def world(self):
        return self.lab.world

    # Lab.reset and Lab.inject return once vCenter has synced with the new World (awaited, not polled)
    def reset(self) -> None:
        self.runner.call(self.lab.reset(_world()))

    def inject(self, code: str) -> None:
        self.runner.call(self.lab.inject(code))

    def settle(self) -> None:
        """What vCenter changed reaches the World, what the World changed reaches vCenter, and the SSH
        listeners follow (a VM powered on or off): awaited syncs instead of waiting for vCenter's next poll."""
        async def go() -> None:
            await self.lab.sync_services()
            await self.lab.sync()
        self.runner.call(go())

    def vsphere_transport(self) -> VSphereTransport:
        return VSphereTransport(password_resolver=lambda t: self.password, command_timeout=30)

    def run(self, codes: list[str]) -> RunReport:
        ssh = SshTransport(connect_timeout=5, command_timeout=20)
        kinds = (TargetKind.VCENTER, TargetKind.ESXI, TargetKind.GUEST)
        targets = [t for t in self.inventory.targets if t.kind in kinds]
        transports = {TargetKind.VCENTER: self.vsphere_transport(), TargetKind.ESXI: ssh, TargetKind.GUEST: ssh}
        # the ESXi and guest targets tell vCenter's checks which hosts, PFs, VF counts and VMs to judge
        checks = {c: CATALOG[c] for c in ["RW001", *codes]}
        return asyncio.run(run_checks(targets, checks, transports, self.inventory.policy, concurrency=8,
                                      command_timeout=30))

    def statuses(self, code: str) -> dict[str, Status]:
        """The worst status per host / VM / vcenter the check judged."""
        order = [Status.PASS, Status.SKIP, Status.WARN, Status.ERROR, Status.FAIL]
        out: dict[str, Status] = {}
        for f in self.run([code]).findings:
            if f.check == code and order.index(f.status) >= order.index(out.get(f.target, Status.PASS)):
                out[f.target] = f.status
        return out

    def plan(self, code: str) -> list[Planned]:
        planned, errors = plan_fixes(self.run([code]), self.inventory.policy, ALLOW)
        assert not errors, errors
        return [p for p in planned if p.plan.check == code]

    def apply(self, planned: list[Planned], runlog: RunLog | None = None) -> FixRun:
        return asyncio.run(apply_plans(planned, {TargetKind.VCENTER: self.vsphere_transport()}, runlog=runlog,
                                       command_timeout=60))

    def vsphere(self, *lines: str) -> list[CommandResult]:
        async def go() -> list[CommandResult]:
            async with self.vsphere_transport() as transport:
                session = await transport.session(next(t for t in self.inventory.targets if t.name == "vcenter"))
                return [await session.run(line) for line in lines]
        results = asyncio.run(go())
        for r in results:
            assert r.exit_status == 0, f"{r.command}: {r.stderr}"
        return results

    def reboot_host(self, host: str) -> None:
        """What the reboot orchestration does for a host reboot: its VMs' guests shut down, maintenance
        mode, RebootHost_Task, back, exit maintenance mode, the VMs on again."""
        vms = sorted(vm.name for vm in self.world.vms.values() if vm.host == host and vm.powered_on)
        boots = self.world.hosts[host].boot_count
        self.vsphere(*(f"vsphere vm-power shutdown {vm}" for vm in vms), f"vsphere host-maintenance enter {host}",
                     f"vsphere host-reboot {host}")
        _until(f"{host} booted", lambda: self.world.hosts[host].boot_count > boots and self.world.hosts[host].up)
        self.settle()  # vCenter shows it connected again
        self.vsphere(f"vsphere host-maintenance exit {host}", *(f"vsphere vm-power on {vm}" for vm in vms))
        self.settle()


def _until(what: str, predicate: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    from roce_wizard.lab.control import BackgroundLab
    from roce_wizard.lab.scenarios import Scenario
    from roce_wizard.lab.server import read_env
    from roce_wizard.lab.vcenter import PASSWORD_ENV

    directory = tmp_path_factory.mktemp("vsphere-fix")
    runner = BackgroundLab(Scenario("healthy", _world()), directory, services=("roce_wizard.lab.vcenter",))
    running = runner.start()
    try:
        inventory = load_inventory(Path(directory) / "inventory.yaml")
        assert any(t.kind is TargetKind.VCENTER for t in inventory.targets), running.notes
        yield Lab(running, runner, inventory, read_env(directory)[PASSWORD_ENV], Path(directory))
    finally:
        runner.stop()


WHERE = {"RW301": "esx-02", "RW302": "esx-02", "RW303": "vcenter", "RW304": "compute-02", "RW305": "compute-02",
         "RW306": "compute-02", "RW307": "esx-02"}
# code -> (safety, reboot, needs, the exact action lines)
EXPECTED = {
    "RW301": (Safety.DISRUPTIVE, RebootKind.HOST, (), ["vsphere host-sriov esx-02 0000:3b:00.0 8"]),
    "RW302": (Safety.SAFE, RebootKind.NONE, (), ["vsphere dvs-create RoCE-DVS roce-pg 9000 esx-02=vmnic2,vmnic3"]),
    "RW303": (Safety.SAFE, RebootKind.NONE, (), ["vsphere dvs-mtu RoCE-DVS 9000"]),
    "RW304": (Safety.DISRUPTIVE, RebootKind.VM_POWER_OFF, ("RW301", "RW305"), [
        "vsphere vm-power shutdown compute-02", "vsphere vm-add-vf compute-02 0000:3b:00.0 roce-pg",
        "vsphere vm-power on compute-02"]),
    "RW305": (Safety.SAFE, RebootKind.NONE, (), ["vsphere vm-reserve-memory compute-02"]),
    "RW306": (Safety.DISRUPTIVE, RebootKind.VM_POWER_OFF, (), ["vsphere vm-latency-high compute-02"]),
    "RW307": (Safety.SAFE, RebootKind.NONE, (), ["vsphere host-power-policy esx-02 'High Performance'"]),
}


def test_every_vsphere_check_is_fixable():
    assert {c for c in VSPHERE if CATALOG[c].plan_fix is not None} == set(EXPECTED)


@pytest.mark.parametrize("code", VSPHERE)
def test_fix_fault(lab, code, tmp_path):
    lab.reset()
    lab.inject(code)
    where = WHERE[code]
    assert lab.statuses(code)[where] in (Status.FAIL, Status.WARN)
    [planned] = lab.plan(code)
    plan = planned.plan
    safety, reboot, needs, lines = EXPECTED[code]
    assert (plan.target, plan.safety, plan.reboot, plan.needs) == ("vcenter", safety, reboot, needs)
    assert [s.command for s in plan.steps] == lines
    assert planned.allowed and all(s.before is not None and s.after for s in plan.steps)

    runlog = RunLog.create(tmp_path, kind="fix")
    run = lab.apply([planned], runlog)
    runlog.close()
    assert not run.errors and [r.exit_status for r in run.results] == [0] * len(lines), \
        [(r.command, r.output) for r in run.results]
    steps = [e for e in read_events(runlog.path) if e["type"] == "fix-step"]
    assert [(e["target"], e["check"], e["command"]) for e in steps] == [("vcenter", code, line) for line in lines]
    if plan.reboot is not RebootKind.NONE:  # the run log names whose reboot / power cycle it waits for
        assert {e.get("host") for e in steps} == {where}
    lab.settle()
    if plan.reboot is RebootKind.HOST:
        assert lab.statuses(code)[where] is Status.FAIL  # waits for the reboot, and plans nothing more
        assert lab.plan(code) == []
        lab.reboot_host(where)
    assert lab.statuses(code)[where] is Status.PASS
    assert lab.plan(code) == []
    _world_follows(lab, code)


def _world_follows(lab: Lab, code: str) -> None:
    """What vCenter changed reached the World (and so the ESXi shells and guests)."""
    world = lab.world
    if code == "RW301":
        assert world.hosts["esx-02"].sriov_config_active["3b:00.0"] == {"enabled": True, "requested": 8}
    elif code == "RW302":
        assert world.vcenter.dvs_members["esx-02"] == ["vmnic2", "vmnic3"]
    elif code == "RW303":
        assert world.vcenter.dvs_max_mtu == 9000
    elif code == "RW304":
        vm, guest = world.vms["compute-02"], world.guests["compute-02"]
        assert vm.vf_port == 1 and vm.powered_on and vm.allow_guest_mtu_change
        _until("compute-02's guest sees its VF", lambda: guest.up and world.guest_rdma(guest))
    elif code == "RW305":
        assert world.vms["compute-02"].memory_reserved
    elif code == "RW306":
        assert world.vms["compute-02"].latency_sensitivity == "high"
    elif code == "RW307":
        assert world.hosts["esx-02"].power_policy == "High Performance"


def test_a_host_added_to_the_vds_leaves_its_vf_behind_and_rw304_moves_it(lab):
    """Adding esx-02 to the VDS does not move compute-02's VF off the standard network (vCenter does not
    either): RW304 then fails on it and its plan corrects the adapter in one power cycle."""
    lab.reset()
    lab.inject("RW302")
    lab.apply(lab.plan("RW302"))
    lab.settle()
    assert lab.statuses("RW302")["esx-02"] is Status.PASS
    [planned] = lab.plan("RW304")
    assert [s.command for s in planned.plan.steps] == EXPECTED["RW304"][3]
    assert "VM Network" in planned.plan.steps[1].before
    boot_id = lab.world.guests["compute-02"].boot_id
    run = lab.apply([planned])
    assert [r.exit_status for r in run.results] == [0, 0, 0], [(r.command, r.output) for r in run.results]
    assert "corrected its SR-IOV adapter" in run.results[1].output
    lab.settle()
    assert lab.statuses("RW304")["compute-02"] is Status.PASS and lab.plan("RW304") == []
    _until("compute-02 booted once", lambda: lab.world.guests["compute-02"].boot_id != boot_id)


def test_rw304_waits_for_the_memory_reservation(lab):
    """A VM without reserved memory does not power on with a VF: RW304's plan waits for RW305."""
    lab.reset()
    lab.inject("RW304")
    lab.inject("RW305")
    report = lab.run(["RW304", "RW305"])
    planned, _errors = plan_fixes(report, lab.inventory.policy, ALLOW)
    by_code = {p.plan.check: p for p in planned}
    assert by_code["RW304"].waits_for == ("RW305",) and not by_code["RW304"].allowed
    assert by_code["RW305"].allowed


def test_a_bad_power_policy_is_reported_once_by_rw307_and_fixed_through_vcenter(lab):
    """With a vCenter, RW213 (the policy over SSH, whose own plan is words: no vendor source for the esxcli
    write) depends on RW307: esx-02's Balanced policy is RW307's warning and plan; RW213 is blocked by it.
    vCenter's ConfigurePowerPolicy then reaches the host: esxcli's /Power/CpuPolicy shows High Performance."""
    lab.reset()
    lab.inject("RW307")
    report = lab.run(["RW213", "RW307"])
    on_esx02 = {f.check: f for f in report.findings if f.target == "esx-02"}
    assert on_esx02["RW307"].status is Status.WARN
    assert (on_esx02["RW213"].status, on_esx02["RW213"].blocked_by) == (Status.SKIP, ("RW307", "esx-02"))
    assert "Balanced" in next(r for r in report.runs if r.target.name == "esx-02").facts.raw["esxi_power_policy"]
    planned, errors = plan_fixes(report, lab.inventory.policy, ALLOW)
    assert not errors and [(p.target.name, p.plan.check, p.allowed) for p in planned] == [("vcenter", "RW307", True)]

    run = lab.apply(planned)
    assert not run.errors and [r.exit_status for r in run.results] == [0], [r.output for r in run.results]
    assert "key 1; was dynamic" in run.results[0].output  # static's key, from the host's availablePolicy
    lab.settle()
    again = lab.run(["RW213", "RW307"])
    assert {(f.check, f.status) for f in again.findings if f.target == "esx-02" and f.check != "RW001"} == {
        ("RW213", Status.PASS), ("RW307", Status.PASS)}
    esxcli = next(r for r in again.runs if r.target.name == "esx-02").facts.raw["esxi_power_policy"]
    assert "/Power/CpuPolicy,High Performance," in esxcli, esxcli
    assert plan_fixes(again, lab.inventory.policy, ALLOW) == ([], [])
