"""Fixes of the bios checks RW101–RW104 against the lab's real BMCs (Redfish over verified TLS):
plan_fix on the lab fault, `fixes.apply_plans` running `redfish bios-set NAME=VALUE` through
`RedfishTransport` (registry-checked PATCH of Bios/Settings, and on iDRAC the configuration job),
the value staged until the host reboots (reboot kind bios: no plan in between), then the check
passes and plans nothing.

One lab (2 ESXi hosts, one BMC each) for the module; each test starts from the healthy world.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from roce_wizard.catalog import load_catalog
from roce_wizard.engine import RunReport, run_checks
from roce_wizard.engine.fixes import FixRun, Planned, apply_plans, plan_fixes
from roce_wizard.inventory import load_inventory, resolve_secret
from roce_wizard.model import Policy, RebootKind, Safety, Status, Target, TargetKind
from roce_wizard.transports.base import CommandResult
from roce_wizard.transports.redfish import RedfishTransport

CATALOG = load_catalog([])
BIOS = ("RW101", "RW102", "RW103", "RW104")
ALLOW = {Safety.SAFE, Safety.DISRUPTIVE}
BMC = "bmc-esx-02"
EXPECTED = {  # code -> the step's command, what the transport says it did
    "RW101": ("redfish bios-set ProcVirtualization=Enabled", "BIOS configuration job"),
    "RW102": ("redfish bios-set IntelProcVtd=Enabled", "applies at the next reset"),
    "RW103": ("redfish bios-set SriovGlobalEnable=Enabled", "BIOS configuration job"),
    "RW104": ("redfish bios-set SysProfile=PerfPerWattOptimizedOs", "BIOS configuration job"),
}


def _world():
    from roce_wizard.lab import scenarios

    world = scenarios.healthy(2)
    world.reboot_delay_s = 0.2
    return world


@dataclasses.dataclass
class Bench:
    runner: object
    lab: object
    targets: list[Target]
    policy: Policy

    def reset(self) -> None:
        self.runner.call(self.lab.reset(_world()))

    def inject(self, spec: str) -> None:
        self.runner.call(self.lab.inject(spec))

    def reboot(self, host: str) -> None:
        self.runner.call(self.lab.reboot(host))

    def transport(self) -> RedfishTransport:
        return RedfishTransport(password_resolver=lambda t: resolve_secret(t.credentials.password),
                                connect_timeout=5, command_timeout=20)

    def run(self, codes: tuple[str, ...]) -> RunReport:
        checks = {c: CATALOG[c] for c in ("RW001", *codes)}
        bmcs = [t for t in self.targets if t.kind is TargetKind.BMC]
        return asyncio.run(run_checks(bmcs, checks, {TargetKind.BMC: self.transport()}, self.policy,
                                      concurrency=4, command_timeout=20))

    def status(self, code: str, target: str = BMC) -> Status:
        [f] = [f for f in self.run((code,)).findings if f.check == code and f.target == target]
        return f.status

    def plan(self, *codes: str) -> list[Planned]:
        planned, errors = plan_fixes(self.run(codes), self.policy, ALLOW)
        assert not errors, errors
        return planned

    def apply(self, planned: list[Planned]) -> FixRun:
        return asyncio.run(apply_plans(planned, {TargetKind.BMC: self.transport()}, command_timeout=30))

    def line(self, command: str) -> CommandResult:
        async def go() -> CommandResult:
            async with self.transport() as transport:
                session = await transport.session(next(t for t in self.targets if t.name == BMC))
                return await session.run(command)
        return asyncio.run(go())


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Iterator[Bench]:
    from roce_wizard.lab.control import BackgroundLab
    from roce_wizard.lab.scenarios import Scenario
    from roce_wizard.lab.server import read_env

    directory = tmp_path_factory.mktemp("bios-fix")
    runner = BackgroundLab(Scenario("healthy", _world()), directory, services=("roce_wizard.lab.redfish",))
    lab = runner.start()
    env = read_env(directory)
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the inventory's password: {env: ROCE_LAB_BMC_PASSWORD}
    try:
        inventory = load_inventory(Path(directory) / "inventory.yaml")
        yield Bench(runner, lab, [t for t in inventory.targets if t.kind is TargetKind.BMC], inventory.policy)
    finally:
        runner.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def test_every_bios_check_is_fixable():
    assert all(CATALOG[c].plan_fix is not None for c in BIOS)


@pytest.mark.parametrize("code", BIOS)
def test_fix_fault(bench, code):
    bench.reset()
    bench.inject(f"{code}@{BMC}")
    assert bench.status(code) in (Status.FAIL, Status.WARN)
    [planned] = bench.plan(code)
    plan = planned.plan
    command, outcome = EXPECTED[code]
    assert (plan.check, plan.target, plan.safety, plan.reboot) == (code, BMC, Safety.DISRUPTIVE, RebootKind.BIOS)
    assert [s.command for s in plan.steps] == [command] and planned.allowed
    assert "esx-02" in plan.reboot_reason and "ride" in plan.reboot_reason
    run = bench.apply([planned])
    assert [r.exit_status for r in run.results] == [0], [(r.command, r.output) for r in run.results]
    assert outcome in run.results[0].output
    # staged, not applied: the check still fails, saying so, and nothing more is planned
    [f] = [f for f in bench.run((code,)).findings if f.check == code and f.target == BMC]
    assert f.status in (Status.FAIL, Status.WARN) and "staged" in f.summary
    assert bench.plan(code) == []
    bench.reboot("esx-02")
    assert bench.status(code) is Status.PASS
    assert bench.plan(code) == []


def test_two_settings_on_one_idrac_share_one_job(bench):
    """iDRAC refuses a PATCH while a BIOS job is scheduled (SYS011): the second fix replaces the job by
    one holding both values, and one reboot applies both."""
    bench.reset()
    bench.inject(f"RW101@{BMC}")
    bench.inject(f"RW103@{BMC}")
    planned = bench.plan("RW101", "RW103")
    assert [p.plan.check for p in planned] == ["RW101", "RW103"]
    run = bench.apply(planned)
    assert [r.exit_status for r in run.results] == [0, 0], [(r.command, r.output) for r in run.results]
    assert "replacing JID_" in run.results[1].output
    host = bench.lab.world.hosts["esx-02"]
    assert host.bios_pending == {"ProcVirtualization": "Enabled", "SriovGlobalEnable": "Enabled"}
    bench.reboot("esx-02")
    assert bench.status("RW101") is Status.PASS and bench.status("RW103") is Status.PASS


def test_bad_lines_are_refused_before_anything_is_sent(bench):
    bench.reset()
    unknown = bench.line("redfish bios-set NoSuchKnob=Enabled")
    bad_value = bench.line("redfish bios-set SriovGlobalEnable=Maybe")
    malformed = bench.line("redfish bios-set SriovGlobalEnable")
    assert unknown.exit_status == 2 and "not in the BIOS attribute registry" in unknown.stderr
    assert bad_value.exit_status == 2 and "allows Enabled, Disabled" in bad_value.stderr
    assert malformed.exit_status == 2
    again = bench.line("redfish bios-set SriovGlobalEnable=Enabled")
    assert again.exit_status == 0 and "already the current BIOS settings" in again.stdout
    assert bench.lab.world.hosts["esx-02"].bios_pending == {}
