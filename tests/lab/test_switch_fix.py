"""Fixes of the switch checks RW501–RW507 (RW507: its switch end) against the lab's switch CLIs
(EOS, Onyx, OS10) over real netmiko: plan_fix on the lab fault, one `switch-config` step per switch
(interface ranges), applied by `SwitchTransport` — backup first, an EOS config session (Onyx / OS10: configure), the change read
back with the probes' own show command, then saved; the check passes and a second plan is None.
With the switch told to keep its old values (`lab.switch.freeze`), the verify fails, the change is
rolled back to the backup, nothing is saved, and the run log's fix-step says so.

A lab per vendor (`scenarios.healthy(2, vendor)`: one switch, the hosts' RoCE vmnics on 4 ports),
started on first use and shared by the module's tests; each test starts from the healthy world.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from roce_wizard.catalog import load_catalog
from roce_wizard.checklib.switch_verify import read_back
from roce_wizard.engine import RunReport, run_checks
from roce_wizard.engine.fixes import FixRun, Planned, apply_plans, plan_fixes
from roce_wizard.inventory import Inventory, load_inventory
from roce_wizard.model import RebootKind, Safety, Status, TargetKind
from roce_wizard.records.runlog import RunLog, read_events
from roce_wizard.transports.ssh import SshTransport
from roce_wizard.transports.switch import SwitchTransport

CATALOG = load_catalog([])
FIXABLE = ("RW501", "RW502", "RW503", "RW504", "RW505", "RW506", "RW507")
ALLOW = {Safety.SAFE, Safety.DISRUPTIVE}


@dataclass
class SwitchLab:
    vendor: str
    runner: object
    lab: object
    inventory: Inventory
    env: dict

    @property
    def switch(self) -> str:
        return f"sw-{self.vendor}-1"

    def reset(self) -> None:
        from roce_wizard.lab.scenarios import healthy

        self.runner.call(self.lab.reset(healthy(2, self.vendor)))

    def inject(self, code: str) -> None:
        self.runner.call(self.lab.inject(code))

    def password(self, target) -> str | None:
        ref = target.credentials.password
        return self.env.get(ref.name) if ref is not None else None

    def transports(self) -> dict:
        return {TargetKind.SWITCH: SwitchTransport(password_resolver=self.password, connect_timeout=30,
                                                   command_timeout=60, verify=read_back),
                TargetKind.ESXI: SshTransport(connect_timeout=30, command_timeout=60)}

    def run(self, codes: tuple[str, ...]) -> RunReport:
        targets = [t for t in self.inventory.targets if t.kind in (TargetKind.SWITCH, TargetKind.ESXI)]
        checks = {c: CATALOG[c] for c in ("RW001", *codes)}
        return asyncio.run(run_checks(targets, checks, self.transports(), self.inventory.policy, command_timeout=20))

    def statuses(self, code: str) -> set[Status]:
        # RW507 judges each host-switch pair with the hosts' own end (RW209 / RW210): run those along
        extra = ("RW209", "RW210") if code == "RW507" else ()
        return {f.status for f in self.run((code, *extra)).findings if f.check == code and f.target == self.switch}

    def plan(self, code: str) -> list[Planned]:
        planned, errors = plan_fixes(self.run((code,)), self.inventory.policy, ALLOW)
        assert not errors, errors
        return [p for p in planned if p.plan.check == code]

    def apply(self, planned: list[Planned], runlog: RunLog | None = None) -> FixRun:
        return asyncio.run(apply_plans(planned, self.transports(), runlog=runlog, command_timeout=60))

    @property
    def world_switch(self):
        return self.lab.world.switches[self.switch]


_LABS: dict[str, SwitchLab] = {}


@pytest.fixture(scope="module")
def labs() -> Iterator[dict[str, SwitchLab]]:
    yield _LABS
    for lab in _LABS.values():
        lab.runner.stop()
    _LABS.clear()


def _lab(labs: dict[str, SwitchLab], vendor: str, tmp_path_factory) -> SwitchLab:
    if vendor not in labs:
        from roce_wizard.lab.control import BackgroundLab
        from roce_wizard.lab.scenarios import Scenario, healthy
        from roce_wizard.lab.server import read_env

        directory = tmp_path_factory.mktemp(f"switchfix-{vendor}")
        runner = BackgroundLab(Scenario("healthy", healthy(2, vendor)), directory,
                               services=("roce_wizard.lab.switch",))
        lab = runner.start()
        labs[vendor] = SwitchLab(vendor, runner, lab, load_inventory(Path(directory) / "inventory.yaml"),
                                 read_env(directory))
    return labs[vendor]


def test_every_switch_check_is_fixable():
    assert all(CATALOG[c].plan_fix is not None for c in FIXABLE)


# EOS: every fault; Onyx (a 2.6 s netmiko login) and OS10: the ones whose config differs most
CASES = [("eos", c) for c in FIXABLE] + [("onyx", "RW501"), ("onyx", "RW502"),  # Onyx's no-drop list is switch-wide
                                         ("os10", "RW504"), ("os10", "RW505"), ("os10", "RW506"), ("os10", "RW507"),
                                         # Cumulus NVUE: nv set, nv config diff, nv config apply -y (issue 12 item 6)
                                         ("nvue", "RW501"), ("nvue", "RW504"), ("nvue", "RW507")]


@pytest.mark.parametrize(("vendor", "code"), CASES, ids=[f"{v}-{c}" for v, c in CASES])
def test_fix_fault(labs, tmp_path_factory, tmp_path, vendor, code):
    lab = _lab(labs, vendor, tmp_path_factory)
    lab.reset()
    lab.inject(code)
    assert lab.statuses(code) & {Status.FAIL, Status.WARN}
    [planned] = lab.plan(code)
    plan = planned.plan
    assert (plan.target, plan.safety, plan.reboot) == (lab.switch, Safety.DISRUPTIVE, RebootKind.NONE)
    [step] = plan.steps
    head, _, body = step.command.partition("\n")
    meta = json.loads(head.removeprefix("switch-config "))
    assert meta["vendor"] == vendor and meta["verify"] and body == step.after
    saved_before = lab.world_switch.saved_config
    runlog = RunLog.create(tmp_path, kind="fix")
    run = lab.apply([planned], runlog)
    runlog.close()
    [result] = run.results
    assert result.exit_status == 0, result.output
    assert ("backup saved as roce-wizard-" in result.output or vendor == "nvue") and \
        "applied, verified and saved" in result.output
    if vendor == "eos":
        assert "config session roce-wizard-" in result.output
    if vendor == "nvue":
        assert "nv config apply -y: applied [rev_id: 2]" in result.output
    assert lab.world_switch.saved_config not in (None, saved_before)  # written to startup
    [event] = [e for e in read_events(runlog.path) if e["type"] == "fix-step"]
    assert event["exit_status"] == 0 and "applied, verified and saved" in event["output"]
    assert lab.statuses(code) == {Status.PASS}
    assert lab.plan(code) == []


def test_one_change_covers_every_port_with_a_range(labs, tmp_path_factory):
    lab = _lab(labs, "eos", tmp_path_factory)
    lab.reset()
    for port in lab.world_switch.ports:
        if port.peer is not None:
            port.pfc_enabled = False
    [planned] = lab.plan("RW501")
    body = planned.plan.steps[0].command.split("\n")[1:]
    assert body == ["interface Ethernet1-4", "   priority-flow-control on"], body
    run = lab.apply([planned])
    assert run.results[0].exit_status == 0, run.results[0].output
    assert lab.statuses("RW501") == {Status.PASS}


@pytest.mark.parametrize("vendor", ["eos", "os10"])
def test_a_change_whose_verify_fails_is_rolled_back_and_logged(labs, tmp_path_factory, tmp_path, vendor):
    from roce_wizard.lab.switch import freeze

    lab = _lab(labs, vendor, tmp_path_factory)
    lab.reset()
    lab.inject("RW504")  # an MTU too small on one RoCE port
    port = next(p for p in lab.world_switch.ports if p.peer is not None and p.mtu < 9216)
    before_mtu, saved = port.mtu, lab.world_switch.saved_config
    [planned] = lab.plan("RW504")
    freeze(lab.world_switch, "mtu")  # the port keeps its MTU whatever the CLI is told
    try:
        runlog = RunLog.create(tmp_path, kind="fix")
        run = lab.apply([planned], runlog)
        runlog.close()
    finally:
        freeze(lab.world_switch)
    [result] = run.results
    assert result.exit_status == 1
    rolled = {"eos": "ROLLED BACK to the backup roce-wizard-rw504-",  # configure replace
              "os10": "ROLLED BACK by the inverse of the change"}[vendor]  # no documented replace on OS10
    assert "VERIFY FAILED" in result.output and rolled in result.output
    assert "not saved" in result.output
    assert port.mtu == before_mtu and lab.world_switch.saved_config == saved
    [event] = [e for e in read_events(runlog.path) if e["type"] == "fix-step"]
    assert event["exit_status"] == 1 and "ROLLED BACK" in event["output"]
    assert lab.statuses("RW504") & {Status.FAIL}


def test_os10_rollback_types_the_inverse_of_what_the_change_added(labs, tmp_path_factory):
    """OS10's copy onto the running config merges (the lab merges too), so the transport undoes
    a change by the inverse of exactly the lines it added and reads the running config back. RW506's fix
    creates a WRED profile, a class-map and a policy-map; the switch keeps the port without ECN (freeze),
    the verify fails, and afterwards none of the three is left."""
    from roce_wizard.commands.switch_undo import comparable
    from roce_wizard.lab.switch import freeze, render_running_config

    lab = _lab(labs, "os10", tmp_path_factory)
    lab.reset()
    lab.inject("RW506")
    [planned] = lab.plan("RW506")
    before = render_running_config(lab.lab.world, lab.world_switch)
    freeze(lab.world_switch, "ecn")
    try:
        run = lab.apply([planned])
    finally:
        freeze(lab.world_switch)
    [result] = run.results
    assert result.exit_status == 1, result.output
    assert "VERIFY FAILED" in result.output and "ROLLED BACK by the inverse of the change (3 lines)" in result.output
    after = render_running_config(lab.lab.world, lab.world_switch)
    assert "roce-ecn" not in after and "roce-q3" not in after
    assert comparable(after) == comparable(before)


def test_nvue_a_failed_verify_applies_the_revision_before(labs, tmp_path_factory):
    """NVUE Command Reference, "Config Commands": the change goes into a pending revision (`nv set`), is
    shown (`nv config diff`) and applied (`nv config apply -y`); when the read-back fails, the revision
    applied before (from `nv config revision`) is applied again."""
    from roce_wizard.lab.switch import freeze

    lab = _lab(labs, "nvue", tmp_path_factory)
    lab.reset()
    lab.inject("RW504")
    port = next(p for p in lab.world_switch.ports if p.mtu < 9216)
    [planned] = lab.plan("RW504")
    assert planned.plan.steps[0].command.split("\n")[1:] == [f"nv set interface {port.name} link mtu 9216"]
    freeze(lab.world_switch, "mtu")
    try:
        run = lab.apply([planned])
    finally:
        freeze(lab.world_switch)
    [result] = run.results
    assert result.exit_status == 1, result.output
    assert "applied revision before the change: 1" in result.output
    assert "VERIFY FAILED" in result.output and "ROLLED BACK to revision 1 (nv config apply 1 -y)" in result.output
    assert port.mtu == 1500


def test_os10_a_refused_line_undoes_exactly_the_lines_before_it(labs, tmp_path_factory):
    """A change the switch refuses half-way (`random-detect ecn` in a queuing class: not OS10's) leaves the
    lines typed before it; the transport types their inverse and reads the running config back."""
    import json

    from roce_wizard.commands.switch_undo import comparable
    from roce_wizard.lab.switch import render_running_config

    lab = _lab(labs, "os10", tmp_path_factory)
    lab.reset()
    lab.inject("RW504")  # ethernet1/1/3 at MTU 1500
    before = render_running_config(lab.lab.world, lab.world_switch)
    meta = {"name": "roce-wizard-test", "vendor": "os10", "verify": []}
    lines = ["interface ethernet1/1/3", " mtu 9216", " exit", "class-map type queuing q5", " match queue 5", "exit",
             "policy-map type queuing bad", " class q5", "  random-detect ecn", " exit", "exit"]
    command = "switch-config " + json.dumps(meta) + "\n" + "\n".join(lines)
    target = next(t for t in lab.inventory.targets if t.name == lab.switch)

    async def go():
        transports = lab.transports()
        try:
            session = await transports[TargetKind.SWITCH].session(target)
            return await session.run(command)
        finally:
            await transports[TargetKind.SWITCH].close()

    result = asyncio.run(go())
    assert result.exit_status == 1, result.stdout
    assert "the switch refused a line" in result.stdout and "ROLLED BACK by the inverse of the change" in result.stdout
    after = render_running_config(lab.lab.world, lab.world_switch)
    assert comparable(after) == comparable(before)
