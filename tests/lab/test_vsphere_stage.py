"""The vsphere stage (RW301–RW307) against the lab's real vCenter: the production path — the
catalog, the engine and `VSphereTransport` (pyVmomi, TLS verified with the lab's CA file, the
password by reference from DIR/lab.env) — on the lab's inventory.

One lab (2 ESXi hosts, their VMs and guests, vCenter) serves every test; between faults the world
is swapped back to healthy in place (each test starts so) and vCenter follows within one sync (0.25 s). For each lab
fault RW301–RW307: that check fails (warns, for a warn check) on the expected host / VM, every
other finding passes or is a skip naming it. RW301 and RW307 are also run with the ESXi hosts over
SSH (the cross-checks: RW208's max_vfs / NUM_OF_VFS, the power policy reported once, by RW307).
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from roce_wizard.catalog import load_catalog
from roce_wizard.engine import RunReport, run_checks
from roce_wizard.inventory import Inventory, load_inventory
from roce_wizard.model import Finding, Severity, Status, Target, TargetKind
from roce_wizard.transports.base import ConnectErrorKind, TransportError
from roce_wizard.transports.ssh import SshTransport
from roce_wizard.transports.vsphere import VSphereTransport, wait_for_task

pytestmark = pytest.mark.skipif(shutil.which("go") is None,
                                reason="Go is not installed: the lab's vCenter simulator cannot be built")

CATALOG = load_catalog([])
VSPHERE = [f"RW30{i}" for i in range(1, 8)]
# vCenter's checks learn from the run's ESXi and guest targets which hosts, PFs, VF counts and VMs
# to judge (engine-made inventory_hosts / inventory_vms): run them along (they only get RW001 here)
ALL_KINDS = (TargetKind.VCENTER, TargetKind.ESXI, TargetKind.GUEST)


def _world():
    from roce_wizard.lab import scenarios

    world = scenarios.healthy(2)
    world.reboot_delay_s = 0.2
    return world


@dataclasses.dataclass
class Stage:
    lab: Any
    runner: Any
    inventory: Inventory
    password: str

    @property
    def vcenter(self) -> Target:
        return next(t for t in self.inventory.targets if t.kind is TargetKind.VCENTER)

    def targets(self, *kinds: TargetKind) -> list[Target]:
        return [t for t in self.inventory.targets if t.kind in kinds]

    # Lab.reset and Lab.inject return once vCenter has synced with the new World (awaited, not polled)
    def reset(self) -> None:
        self.runner.call(self.lab.reset(_world()))

    def inject(self, code: str) -> tuple[str, str]:
        return self.runner.call(self.lab.inject(code))

    def transport(self) -> VSphereTransport:
        return VSphereTransport(password_resolver=lambda t: self.password, connect_timeout=10, command_timeout=30)

    def run(self, codes: list[str], *, kinds: tuple[TargetKind, ...] = ALL_KINDS,
            targets: list[Target] | None = None, vsphere: VSphereTransport | None = None) -> RunReport:
        checks = {c: CATALOG[c] for c in ["RW001", *codes]}
        ssh = SshTransport(connect_timeout=5, command_timeout=20)
        transports = {TargetKind.VCENTER: vsphere or self.transport(), TargetKind.ESXI: ssh, TargetKind.GUEST: ssh}
        return asyncio.run(run_checks(targets if targets is not None else self.targets(*kinds), checks, transports,
                                      self.inventory.policy, concurrency=8, command_timeout=30))


@pytest.fixture(scope="module")
def stage(tmp_path_factory) -> Iterator[Stage]:
    from roce_wizard.lab.control import BackgroundLab
    from roce_wizard.lab.scenarios import Scenario
    from roce_wizard.lab.server import read_env
    from roce_wizard.lab.vcenter import PASSWORD_ENV

    directory = tmp_path_factory.mktemp("vspherelab")
    runner = BackgroundLab(Scenario("healthy", _world()), directory, services=("roce_wizard.lab.vcenter",))
    lab = runner.start()
    try:
        inventory = load_inventory(Path(directory) / "inventory.yaml")
        assert any(t.kind is TargetKind.VCENTER for t in inventory.targets), lab.notes
        yield Stage(lab, runner, inventory, read_env(directory)[PASSWORD_ENV])
    finally:
        runner.stop()


def _show(findings: list[Finding]) -> str:
    return "\n".join(f"  {f.check}@{f.target}{'/' + f.subject if f.subject else ''} {f.status.value}: {f.summary}"
                     + (f" [blocked by {f.blocked_by[0]}@{f.blocked_by[1]}]" if f.blocked_by else "")
                     for f in findings)


def _not_passing(report: RunReport) -> list[Finding]:
    return [f for f in report.findings if f.status is not Status.PASS]


# ------------------------------------------------------------------------------ healthy


def test_healthy_lab_passes_every_vsphere_check(stage):
    stage.reset()
    transport = stage.transport()
    report = stage.run(VSPHERE, vsphere=transport)
    assert not _not_passing(report), _show(_not_passing(report))
    assert {f.target for f in report.findings if f.check == "RW001"} == {
        "vcenter", "esx-01", "esx-02", "compute-01", "compute-02"}
    judged = {(f.check, f.target) for f in report.findings}
    assert {("RW301", "esx-01"), ("RW301", "esx-02"), ("RW302", "esx-02"), ("RW303", "vcenter"),
            ("RW304", "compute-02"), ("RW305", "compute-01"), ("RW306", "compute-02"), ("RW307", "esx-01")} <= judged
    assert transport.connects == 1  # one login for the three queries
    assert transport.warnings == []
    assert "vsphere-api" in next(f for f in report.findings if f.check == "RW001" and f.target == "vcenter").summary


def test_healthy_with_the_esxi_hosts_agrees_across_targets(stage):
    """vSphere's VF counts agree with max_vfs and NUM_OF_VFS (RW208 over SSH); the power policy too."""
    stage.reset()
    report = stage.run([*VSPHERE, "RW208", "RW213"])
    assert not _not_passing(report), _show(_not_passing(report))
    assert {f.target for f in report.findings if f.check == "RW208"} == {"esx-01", "esx-02"}


# ------------------------------------------------------------------------------ each fault alone

FAULT_SUBJECT = {"RW301": "esx-02", "RW302": "esx-02", "RW303": "vcenter", "RW304": "compute-02",
                 "RW305": "compute-02", "RW306": "compute-02", "RW307": "esx-02"}


@pytest.mark.parametrize("code", VSPHERE)
def test_each_fault_fails_exactly_its_check(stage, code):
    from roce_wizard.lab.faults import registry

    assert registry()[code].kind == "vcenter"
    stage.reset()
    stage.inject(code)
    report = stage.run(VSPHERE)
    expected = Status.WARN if CATALOG[code].meta.severity is Severity.WARN else Status.FAIL
    where = FAULT_SUBJECT[code]
    mine = [f for f in report.findings if f.check == code and f.target == where]
    assert any(f.status is expected for f in mine), (
        f"{code}: expected {expected.value} on {where}; got\n{_show(_not_passing(report))}")
    wrong = [f for f in report.findings
             if f.status is not Status.PASS and not (f.check == code and f.target == where and f.status is expected)
             and not (f.status is Status.SKIP and f.blocked_by == (code, where))]
    assert not wrong, f"{code}: besides {code}@{where}:\n{_show(wrong)}"
    if code == "RW302":  # compute-02's VF fell onto the standard network with its host: RW302 is the cause
        rw304 = next(f for f in report.findings if f.check == "RW304" and f.target == "compute-02")
        assert rw304.status is Status.SKIP and rw304.blocked_by == ("RW302", "esx-02")
        assert "VM Network" in rw304.details["unjudged"]
    for f in mine:
        if f.status is expected:
            assert f.fix and ("vSphere Client:" in f.fix and "pyVmomi:" in f.fix), f.fix


def test_rw307_with_the_esxi_hosts_reports_the_host_once(stage):
    stage.reset()
    stage.inject("RW307")
    report = stage.run(["RW307", "RW213"])
    rw213 = next(f for f in report.findings if f.check == "RW213" and f.target == "esx-02")
    rw307 = next(f for f in report.findings if f.check == "RW307" and f.target == "esx-02")
    # reported once, by RW307 (fixable through vCenter); RW213 (words only) depends on it: vcenter:RW307
    assert rw307.status is Status.WARN
    assert rw213.status is Status.SKIP and rw213.blocked_by == ("RW307", "esx-02")
    assert rw213.summary == "blocked by RW307 on esx-02"
    assert [f for f in _not_passing(report) if f not in (rw213, rw307)] == []


def test_rw301_with_the_esxi_hosts(stage):
    stage.reset()
    stage.inject("RW301")
    report = stage.run(["RW301", "RW208"])
    bad = _not_passing(report)
    assert [(f.check, f.target, f.subject, f.status) for f in bad] == [
        ("RW301", "esx-02", "0000:3b:00.0 (vmnic2)", Status.FAIL)], _show(bad)


def test_a_guest_without_its_vf_names_rw304_as_the_cause(stage):
    """The guest's RDMA device checks depend on `vm:RW304`: the VM's missing VF is reported once."""
    stage.reset()
    stage.inject("RW304")
    guests = [f"RW4{n:02d}" for n in range(1, 12)]
    report = stage.run(["RW304", *guests])
    bad = _not_passing(report)
    assert [(f.check, f.target) for f in bad if f.status is not Status.SKIP] == [("RW304", "compute-02")], _show(bad)
    rw402 = next(f for f in report.findings if f.check == "RW402" and f.target == "compute-02")
    assert rw402.status is Status.SKIP and rw402.blocked_by == ("RW304", "compute-02"), _show(bad)
    # every guest finding the missing VF broke names it (the others are the healthy lab's own skips)
    assert all(f.blocked_by in (None, ("RW304", "compute-02")) for f in bad), _show(bad)


# ------------------------------------------------------------------------------ TLS and connecting


def test_the_lab_ca_unknown_is_refused_naming_the_options(stage):
    bare = dataclasses.replace(stage.vcenter, options={})
    report = stage.run([], targets=[bare])
    [rw001] = report.findings
    assert rw001.status is Status.ERROR and rw001.observed["error_kind"] == "tls"
    message = rw001.observed["message"]
    assert "options: {ca_file:" in message and "insecure: true" in message and "refusing to connect" in message
    assert "ca_file" in rw001.fix and "insecure" in rw001.fix


def test_a_wrong_ca_file_is_refused_naming_it(stage):
    wrong_ca = ssl.get_default_verify_paths().cafile or "/etc/ssl/certs/ca-certificates.crt"
    if not Path(wrong_ca).is_file():
        pytest.skip("no system CA bundle to stand for a CA that did not sign the lab's certificate")
    wrong = dataclasses.replace(stage.vcenter, options={"ca_file": wrong_ca})
    with pytest.raises(TransportError) as info:
        asyncio.run(stage.transport().session(wrong))
    assert info.value.kind is ConnectErrorKind.TLS
    assert f"not signed by the CA in options.ca_file {wrong_ca}" in info.value.message
    missing = dataclasses.replace(stage.vcenter, options={"ca_file": "/nonexistent/vc-ca.pem"})
    with pytest.raises(TransportError, match="cannot load options.ca_file /nonexistent/vc-ca.pem"):
        asyncio.run(stage.transport().session(missing))


def test_insecure_connects_and_warns_every_run(stage):
    stage.reset()
    loose = dataclasses.replace(stage.vcenter, options={"insecure": True})
    for _ in range(2):
        transport = stage.transport()
        report = stage.run(["RW303"], targets=[loose], vsphere=transport)
        assert [f.status for f in report.findings] == [Status.PASS, Status.PASS]
        assert len(transport.warnings) == 1
        assert transport.warnings[0].startswith(f"TLS verification is OFF for vcenter (127.0.0.1:{loose.port})")
        assert "ca_file" in transport.warnings[0]


def test_wrong_password_and_refused_port(stage):
    bad_password = VSphereTransport(password_resolver=lambda t: "not-the-password")
    with pytest.raises(TransportError) as info:
        asyncio.run(bad_password.session(stage.vcenter))
    assert info.value.kind is ConnectErrorKind.AUTH and "InvalidLogin" in info.value.message
    assert "not-the-password" not in info.value.message
    closed = dataclasses.replace(stage.vcenter, port=1)
    with pytest.raises(TransportError) as info:
        asyncio.run(stage.transport().session(closed))
    assert info.value.kind is ConnectErrorKind.REFUSED
    nameless = dataclasses.replace(stage.vcenter, address="no-such-vcenter.invalid")
    with pytest.raises(TransportError) as info:
        asyncio.run(stage.transport().session(nameless))
    assert info.value.kind is ConnectErrorKind.DNS


def test_one_login_per_run_and_logout_on_close(stage):
    from pyVmomi import vim

    async def go() -> Any:
        transport = stage.transport()
        first, second = await asyncio.gather(transport.session(stage.vcenter), transport.session(stage.vcenter))
        assert first.service_instance is second.service_instance and transport.connects == 1
        results = await asyncio.gather(*(first.run(q) for q in ("vsphere hosts", "vsphere vms", "vsphere dvs")))
        assert all(r.ok and r.stdout.startswith("{") for r in results)
        unknown = await first.run("esxcli network nic list")
        assert unknown.exit_status == 2 and "unknown vSphere query" in unknown.stderr
        si = first.service_instance
        assert si.content.sessionManager.currentSession is not None
        await transport.close()
        return si

    si = asyncio.run(go())
    with pytest.raises(vim.fault.NotAuthenticated):
        si.RetrieveContent().rootFolder.childEntity  # noqa: B018 - logged out: the session is gone


def test_wait_for_task_polls_a_reconfigure(stage):
    from pyVmomi import vim

    async def go() -> None:
        transport = stage.transport()
        session = await transport.session(stage.vcenter)
        try:
            await asyncio.to_thread(_reconfigure, session.service_instance)
        finally:
            await transport.close()

    def _reconfigure(si) -> None:
        content = si.RetrieveContent()
        view = content.viewManager.CreateContainerView(content.rootFolder, [vim.VirtualMachine], True)
        vm = next(v for v in view.view if v.name == "compute-01")
        view.Destroy()
        assert wait_for_task(vm.ReconfigVM_Task(vim.vm.ConfigSpec(memoryReservationLockedToMax=True)), 20) is None
        assert vm.config.memoryReservationLockedToMax is True
        # a VF cannot be added while the VM runs: the task's fault is raised
        card = vim.vm.device.VirtualSriovEthernetCard(sriovBacking=vim.vm.device.VirtualSriovEthernetCard.SriovBackingInfo(
            physicalFunctionBacking=vim.vm.device.VirtualPCIPassthrough.DeviceBackingInfo(id="0000:3b:00.0")))
        add = vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation="add", device=card)])
        with pytest.raises(vim.fault.InvalidPowerState):
            wait_for_task(vm.ReconfigVM_Task(add), 20)

    stage.reset()
    asyncio.run(go())
