"""The switch stage against the lab's real switch CLIs (EOS, Onyx, OS10) over netmiko.

One lab per vendor (`scenarios.healthy(2, vendor)`: 2 ESXi hosts, their guests, one switch with the
hosts' RoCE vmnics cabled to 4 ports), served with the switch service. Each run is `doctor`'s
production path: the catalog, the playbook's switch stage plus what RW507 joins (RW209/RW210 on the
ESXi hosts), the engine, the real SwitchTransport (host keys from the lab's known_hosts, the password
from DIR/lab.env) and the real SshTransport.

- healthy: every switch check passes on every RoCE port, and every host-switch pair agrees;
- each lab fault RW501–RW507, on each vendor: exactly that check fails (warns, for RW506) on that
  switch, everything else passes or is a skip blocked by that check on that switch.
All seven faults run on all three vendors (one doctor run per fault; Onyx's netmiko login alone
takes ~2.6 s, so its runs dominate the ~35 s of this file).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from roce_wizard.catalog import load_catalog
from roce_wizard.engine import RunReport, run_checks
from roce_wizard.inventory import Inventory, load_inventory, resolve_secret
from roce_wizard.model import Finding, Severity, Stage, Status, TargetKind
from roce_wizard.playbook import load_playbook
from roce_wizard.transports.ssh import SshTransport
from roce_wizard.transports.switch import SwitchTransport

VENDORS = ("eos", "onyx", "os10")
FAULTS = ("RW501", "RW502", "RW503", "RW504", "RW505", "RW506", "RW507")
HOST_CHECKS = ("RW001", "RW209", "RW210")  # reachability, and the host end RW507 joins


@dataclass
class SwitchLab:
    vendor: str
    runner: object
    lab: object
    inventory: Inventory
    directory: Path
    checks: dict
    stage_of: dict
    env: dict  # DIR/lab.env: ROCE_LAB_SWITCH_PASSWORD (each lab has its own)

    @property
    def switch(self) -> str:
        return f"sw-{self.vendor}-1"

    def reset(self) -> None:
        from roce_wizard.lab.scenarios import healthy

        self.runner.call(self.lab.reset(healthy(2, self.vendor)))

    def password(self, target) -> str | None:
        """The inventory's `{env: ROCE_LAB_SWITCH_PASSWORD}`, resolved against this lab's lab.env."""
        ref = target.credentials.password
        return self.env.get(ref.name) if ref is not None and ref.name in self.env else (
            resolve_secret(ref) if ref is not None else None)

    def run(self) -> RunReport:
        targets = [t for t in self.inventory.targets if t.kind in (TargetKind.SWITCH, TargetKind.ESXI)]
        ssh = SshTransport(connect_timeout=30, command_timeout=60, max_concurrent_connects=8)
        switches = SwitchTransport(
            password_resolver=self.password,
            connect_timeout=30, command_timeout=60, max_concurrent_connects=8,
            session_log_dir=self.directory / "sessions")
        return asyncio.run(run_checks(targets, self.checks, {TargetKind.ESXI: ssh, TargetKind.SWITCH: switches},
                                      self.inventory.policy, stage_of=self.stage_of, command_timeout=20))


_LABS: dict[str, SwitchLab] = {}


@pytest.fixture(scope="module")
def labs(tmp_path_factory) -> Iterator[dict[str, SwitchLab]]:
    yield _LABS
    for lab in _LABS.values():
        lab.runner.stop()
    _LABS.clear()


def _lab(labs: dict[str, SwitchLab], vendor: str, tmp_path_factory) -> SwitchLab:
    if vendor in labs:
        return labs[vendor]
    from roce_wizard.lab.control import BackgroundLab
    from roce_wizard.lab.scenarios import Scenario, healthy
    from roce_wizard.lab.server import read_env

    directory = tmp_path_factory.mktemp(f"switchlab-{vendor}")
    runner = BackgroundLab(Scenario("healthy", healthy(2, vendor)), directory, services=("roce_wizard.lab.switch",))
    lab = runner.start()
    book = load_playbook("vsphere-sriov")
    catalog = load_catalog([])
    chosen = {code: c for code, c in catalog.items() if book.stage_of(code) is Stage.SWITCH or code in HOST_CHECKS}
    assert [c for c in chosen if c.startswith("RW5")] == list(FAULTS)  # the playbook's switch stage
    labs[vendor] = SwitchLab(vendor, runner, lab, load_inventory(directory / "inventory.yaml"), directory, chosen,
                             {code: book.stage_of(code) for code in chosen}, read_env(directory))
    return labs[vendor]


def _show(findings: list[Finding]) -> str:
    return "\n".join(f"  {f.check}@{f.target}{'/' + f.subject if f.subject else ''} {f.status.value}: {f.summary}"
                     + (f" [blocked by {f.blocked_by[0]}@{f.blocked_by[1]}]" if f.blocked_by else "")
                     for f in findings)


@pytest.mark.parametrize("vendor", VENDORS)
def test_healthy_switch_passes_every_switch_check(labs, tmp_path_factory, vendor):
    lab = _lab(labs, vendor, tmp_path_factory)
    lab.reset()
    report = lab.run()
    bad = [f for f in report.findings if f.status is not Status.PASS]
    assert not bad, f"healthy {vendor} lab:\n{_show(bad)}"
    assert int(report.exit_code) == 0
    mine = [f for f in report.findings if f.target == lab.switch]
    ports = {f.subject for f in mine if f.check == "RW501"}
    assert len(ports) == 4  # the four RoCE ports the inventory cables to the switch
    for code in FAULTS:
        assert {f.subject for f in mine if f.check == code} >= ports, code
    pairs = [f for f in mine if f.check == "RW507" and f.subject]
    assert len(pairs) == 4 and all("at both ends" in f.summary for f in pairs)  # joined with RW209/RW210
    log = (lab.directory / "sessions" / f"{lab.switch}.log").read_text()
    assert lab.env["ROCE_LAB_SWITCH_PASSWORD"] not in log and "show" in log


@pytest.mark.parametrize("vendor,code", [(v, c) for v in VENDORS for c in FAULTS])
def test_switch_fault_fails_exactly_its_check(labs, tmp_path_factory, vendor, code):
    lab = _lab(labs, vendor, tmp_path_factory)
    lab.reset()
    try:
        _, where = lab.runner.call(lab.lab.inject(code))
        report = lab.run()
    finally:
        lab.reset()
    assert where == lab.switch
    expected = Status.WARN if lab.checks[code].meta.severity is Severity.WARN else Status.FAIL
    mine = [f for f in report.findings if f.check == code and f.target == where]
    assert any(f.status is expected for f in mine), f"{code} on {vendor}: expected {expected.value}:\n{_show(mine)}"
    wrong = []
    for f in report.findings:
        if f.check == code and f.target == where:
            if f.status not in (expected, Status.PASS):
                wrong.append(f)
            continue
        if f.status is Status.PASS or (f.status is Status.SKIP and f.blocked_by == (code, where)):
            continue
        wrong.append(f)
    assert not wrong, f"{code} on {vendor}: besides {code}, these are not pass nor blocked by it:\n{_show(wrong)}"
    failing = {f.subject for f in mine if f.status is expected}
    if code == "RW507":  # the DSCP map is switch-wide (OS10: the trust map on every port): every pair
        assert len(failing - {None}) == 4 and None in failing
    elif code == "RW502" and vendor == "onyx":  # Onyx's no-drop list is switch-wide
        assert len(failing) == 4
    else:  # the one port the fault breaks: esx-02's VF port
        assert len(failing) == 1
        (port,) = failing
        assert port in {"Ethernet3", "Eth1/3", "ethernet1/1/3"}
        assert all(f.fix and "interface" in f.fix for f in mine if f.status is expected)
