"""RW607-RW609 judged on a lab WITH its switch (EOS): a 2-node bare-metal pair from the hosts' counters, a 2-host
vSphere pair of VF guests through the switch ports towards the ESXi hosts' uplinks (the VFs show no per-priority
counters), and RW607's fault on a VF guest found on exactly that guest.

One lab for the module (every service: the ESXi hosts, guests, bare-metal hosts and the EOS switch), reset to
healthy between tests; the run includes the switch and the ESXi hosts (whose cabling the inventory holds)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from roce_wizard.catalog import load_catalog
from roce_wizard.engine import RunReport, run_checks
from roce_wizard.inventory import load_inventory
from roce_wizard.model import Finding, Status, TargetKind

pytestmark = pytest.mark.lab

CATALOG = load_catalog([])
CODES = ("RW607", "RW608", "RW609")


def _world(switch: str = "eos"):
    from roce_wizard.lab import guest, scenarios

    world = scenarios.healthy(2, switch=switch)
    guest.add_baremetal(world, 2)
    return world


class SwitchLab:
    def __init__(self, runner, directory: Path, switch: str):
        self.runner, self.directory, self.switch = runner, directory, switch
        self.inventory = load_inventory(directory / "inventory.yaml")

    def reset(self) -> None:
        self.runner.call(self.runner.lab.reset(_world(self.switch)))

    def inject(self, spec: str) -> None:
        self.runner.call(self.runner.lab.inject(spec))

    def run(self, kind: TargetKind) -> dict[str, list[Finding]]:
        from roce_wizard.session import live_transports

        targets = [t for t in self.inventory.targets if t.kind in (kind, TargetKind.ESXI, TargetKind.SWITCH)]
        transports = live_transports({t.kind for t in targets}, known_hosts=None, trust_on_first_use=False,
                                     concurrency=8, connect_timeout=5, timeout=20, run_dir=self.directory / "run")
        report: RunReport = asyncio.run(run_checks(targets, {c: CATALOG[c] for c in CODES}, transports,
                                                   self.inventory.policy, command_timeout=20))
        out: dict[str, list[Finding]] = {}
        for f in report.findings:
            out.setdefault(f.check, []).append(f)
        return out


def _start(tmp_path_factory, switch: str) -> Iterator[SwitchLab]:
    from roce_wizard.lab.control import BackgroundLab
    from roce_wizard.lab.scenarios import Scenario
    from roce_wizard.lab.server import read_env

    directory = tmp_path_factory.mktemp(f"switchlab-{switch}")
    runner = BackgroundLab(Scenario("healthy", _world(switch)), directory)
    runner.start()
    saved = dict(os.environ)
    os.environ.update(read_env(directory))
    try:
        yield SwitchLab(runner, directory, switch)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        runner.stop()


@pytest.fixture(scope="module")
def eos(tmp_path_factory) -> Iterator[SwitchLab]:
    yield from _start(tmp_path_factory, "eos")


def _said(found: dict[str, list[Finding]]) -> str:
    return "\n".join(f"  {f.check}@{f.target} {f.status.value}: {f.summary}" for fs in found.values() for f in fs)


def test_baremetal_pair_judged_from_the_hosts_and_the_switch(eos):
    eos.reset()
    found = eos.run(TargetKind.LINUX)
    (f607,), (f608,) = found["RW607"], found["RW608"]
    assert f607.status is Status.PASS and "priority 3 both ways" in f607.summary, _said(found)
    assert f608.status is Status.PASS, _said(found)
    (f609,) = found["RW609"]
    assert f609.status is Status.PASS, _said(found)
    # the switch queued traffic towards BOTH nodes on TC3: the data into node-02, the latency pongs and MPI
    # replies back into node-01 (the lab counts both directions through the switch, each in its sender's class)
    sent = {r[1]: r[2] for r in f609.details["table"]["rows"]}
    assert sent.get("node-01") and sent.get("node-02"), f609.details["table"]["rows"]


def test_vsphere_pair_judged_through_the_switch(eos):
    eos.reset()
    found = eos.run(TargetKind.GUEST)
    (f607,), (f608,) = found["RW607"], found["RW608"]
    # the VFs show no per-priority counters: the switch ports towards the ESXi uplinks do (EOS: priority 3 -> TC3)
    assert f607.status is Status.PASS and "through the switch" in f607.summary and "TC3" in f607.summary, _said(found)
    rows = f607.details["table"]["rows"]
    assert len(rows) == 2 and all(r[5] == "TC3" and r[4] and r[6] >= 0.9 * r[4] for r in rows), rows
    # EOS shows no ECN column and its PFC counters are not read: congestion cannot be told there, said so
    assert f608.status is Status.SKIP and "EOS" in f608.summary and "ECN marked +" in f608.summary, _said(found)
    assert found["RW609"] and all(f.status is Status.PASS for f in found["RW609"]), _said(found)


def test_vf_whose_switch_port_remarks_fails_rw607_on_that_node(eos):
    eos.reset()
    eos.inject("RW607@compute-02")  # the port towards esx-02's uplink re-marks what compute-02 sends to DSCP 0
    found = eos.run(TargetKind.GUEST)
    (f607,) = found["RW607"]
    # compute-02's replies (latency pongs, MPI) ride EOS's DSCP-0 class, TC1, on the port towards compute-01
    assert f607.status is Status.FAIL and f607.target == "compute-02", _said(found)
    assert "from compute-02 crossed the switch on TC1, not TC3" in f607.summary, f607.summary


@pytest.fixture(scope="module")
def nvue(tmp_path_factory) -> Iterator[SwitchLab]:
    yield from _start(tmp_path_factory, "nvue")


def test_vsphere_pair_on_nvue_judges_congestion_control_through_the_switch(nvue):
    nvue.reset()
    found = nvue.run(TargetKind.GUEST)
    (f607,), (f608,) = found["RW607"], found["RW608"]
    # NVUE's RoCE view: the RoCE packets towards each node against the packets its VF counted arriving
    assert f607.status is Status.PASS and "on the RoCE queue" in f607.summary, _said(found)
    # pauses and ECN marks on the switch ports, CNPs from the VFs' hw_counters
    assert f608.status is Status.PASS and "through the switch" in f608.summary, _said(found)
    assert f608.details["switch"]["ecn_marked"] > 0 and f608.details["switch"]["pauses"] > 0, f608.details
    assert found["RW609"] and all(f.status is Status.PASS for f in found["RW609"]), _said(found)


def test_late_ecn_towards_a_vf_fails_rw608_on_that_node(nvue):
    nvue.reset()
    nvue.inject("RW608@compute-02")  # the queue towards esx-02's uplink marks only above its PFC XOFF point
    found = nvue.run(TargetKind.GUEST)
    (f608,) = found["RW608"]
    assert f608.status is Status.FAIL and f608.target == "compute-02", _said(found)
    assert "no ECN mark on the switch" in f608.summary and "pause frames" in f608.summary, f608.summary
    (f607,) = found["RW607"]
    assert f607.status is Status.PASS, _said(found)
