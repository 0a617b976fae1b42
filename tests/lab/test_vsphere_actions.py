"""vSphere ACTION lines (contracts.md §2) against the lab's real vCenter (vcsim over TLS, pyVmomi):
maintenance mode, host reboot, VM power — and the lab's World, ESXi shells and guests following what
vCenter did (a powered-off VM's guest refuses SSH; a powered-on one boots with a new boot id; the
ESXi shell reports the maintenance mode vCenter set). Malformed lines exit 2, faults exit 1.

One lab (2 ESXi hosts, their VMs and guests, vCenter) for the module; the tests run in order and
leave the lab as they found it.
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

from roce_wizard.inventory import Inventory, load_inventory
from roce_wizard.model import Target, TargetKind
from roce_wizard.transports.base import CommandResult, TransportError
from roce_wizard.transports.ssh import SshTransport
from roce_wizard.transports.vsphere import VSphereTransport

pytestmark = pytest.mark.skipif(shutil.which("go") is None,
                                reason="Go is not installed: the lab's vCenter simulator cannot be built")


def _world():
    from roce_wizard.lab import scenarios

    world = scenarios.healthy(2)
    world.reboot_delay_s = 0.3
    return world


@dataclasses.dataclass
class Lab:
    lab: Any
    runner: Any
    inventory: Inventory
    password: str

    def target(self, name: str) -> Target:
        return next(t for t in self.inventory.targets if t.name == name)

    def vsphere(self, *lines: str) -> list[CommandResult]:
        async def go() -> list[CommandResult]:
            async with VSphereTransport(password_resolver=lambda t: self.password, command_timeout=30) as transport:
                session = await transport.session(self.target("vcenter"))
                return [await session.run(line) for line in lines]
        return asyncio.run(go())

    def ssh(self, name: str, line: str) -> CommandResult:
        async def go() -> CommandResult:
            transport = SshTransport(connect_timeout=3, command_timeout=10)
            try:
                session = await transport.session(self.target(name))
                return await session.run(line)
            finally:
                await transport.close()
        return asyncio.run(go())

    @property
    def world(self):
        return self.lab.world


def _until(what: str, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
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

    directory = tmp_path_factory.mktemp("vsphere-actions")
    runner = BackgroundLab(Scenario("healthy", _world()), directory, services=("roce_wizard.lab.vcenter",))
    running = runner.start()
    try:
        inventory = load_inventory(Path(directory) / "inventory.yaml")
        assert any(t.kind is TargetKind.VCENTER for t in inventory.targets), running.notes
        yield Lab(running, runner, inventory, read_env(directory)[PASSWORD_ENV])
    finally:
        runner.stop()


def test_malformed_and_unknown_lines(lab):
    malformed, unknown_verb, no_vm, quoted = lab.vsphere(
        "vsphere vm-power reboot compute-01", "vsphere vm-explode compute-01", "vsphere vm-power off no-such-vm",
        "vsphere host-reboot 'esx-01; rm -rf /'")
    assert malformed.exit_status == 2 and "usage: vsphere vm-power off|on|shutdown <vm>" in malformed.stderr
    assert unknown_verb.exit_status == 2 and "vsphere host-maintenance" in unknown_verb.stderr
    assert no_vm.exit_status == 1 and no_vm.stderr.startswith("vSphere fault NotFound: vCenter has no VM named")
    assert quoted.exit_status == 2 and "not a valid host name" in quoted.stderr


def test_maintenance_mode_needs_the_vms_off_and_the_host_reboot_needs_maintenance(lab):
    refused, not_in_mm = lab.vsphere("vsphere host-maintenance enter esx-02", "vsphere host-reboot esx-02")
    assert refused.exit_status == 1 and refused.stderr.startswith("vSphere fault InvalidState:"), refused.stderr
    assert "compute-02" in refused.stderr
    assert not_in_mm.exit_status == 1 and "not in maintenance mode" in not_in_mm.stderr
    assert lab.world.hosts["esx-02"].maintenance_mode is False


def test_shutdown_maintenance_reboot_exit_power_on(lab):
    guest = lab.world.guests["compute-02"]
    boot_id, host_boots = guest.boot_id, lab.world.hosts["esx-02"].boot_count
    assert lab.ssh("compute-02", "true").exit_status == 0

    shutdown, again = lab.vsphere("vsphere vm-power shutdown compute-02", "vsphere vm-power off compute-02")
    assert shutdown.exit_status == 0 and shutdown.stdout == "compute-02: guest shut down, powered off\n"
    assert again.exit_status == 0 and again.stdout == "compute-02: already powered off\n"
    _until("the World shows compute-02 off", lambda: not lab.world.vms["compute-02"].powered_on)
    _until("compute-02's guest is down", lambda: not guest.up)
    _until("compute-02 refuses SSH", lambda: _refuses(lab, "compute-02"))

    enter, twice = lab.vsphere("vsphere host-maintenance enter esx-02", "vsphere host-maintenance enter esx-02")
    assert enter.exit_status == 0 and enter.stdout == "esx-02: entered maintenance mode\n", enter.stderr
    assert twice.stdout == "esx-02: already in maintenance mode\n"
    _until("the World shows esx-02 in maintenance mode", lambda: lab.world.hosts["esx-02"].maintenance_mode)
    mm = lab.ssh("esx-02", "esxcli system maintenanceMode get")
    assert mm.stdout.strip() == "Enabled"
    [power_on_in_mm] = lab.vsphere("vsphere vm-power on compute-02")
    assert power_on_in_mm.exit_status == 1 and "maintenance mode" in power_on_in_mm.stderr

    [reboot] = lab.vsphere("vsphere host-reboot esx-02")
    assert reboot.exit_status == 0 and reboot.stdout.startswith("esx-02: reboot started"), reboot.stderr
    _until("esx-02 booted once more", lambda: lab.world.hosts["esx-02"].boot_count == host_boots + 1)
    _until("esx-02 answers SSH again", lambda: not _refuses(lab, "esx-02"))
    assert not guest.up and guest.boot_id == boot_id  # a powered-off VM stays off across its host's reboot

    exit_mm, power_on = lab.vsphere("vsphere host-maintenance exit esx-02", "vsphere vm-power on compute-02")
    assert exit_mm.stdout == "esx-02: exited maintenance mode\n", exit_mm.stderr
    assert power_on.exit_status == 0 and power_on.stdout == "compute-02: powered on\n", power_on.stderr
    _until("compute-02's guest booted", lambda: guest.up)
    _until("compute-02 answers SSH", lambda: not _refuses(lab, "compute-02"))
    assert guest.boot_id != boot_id
    assert lab.ssh("esx-02", "esxcli system maintenanceMode get").stdout.strip() == "Disabled"
    assert lab.world.hosts["esx-02"].maintenance_mode is False


def _refuses(lab: Lab, name: str) -> bool:
    try:
        lab.ssh(name, "true")
    except TransportError:
        return True
    return False
