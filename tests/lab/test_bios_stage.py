"""The bios stage against the practice lab's real BMCs (Redfish over verified TLS) and ESXi hosts.

One lab (2 ESXi hosts with their guests, one BMC per host) serves every run; between runs the world
is swapped back to healthy in place. Runs take doctor's production path: the catalog, the playbook's
checks, the engine, the SshTransport for hosts and guests and the RedfishTransport for the BMCs, with
the lab's inventory as written (the BMCs' CA as options.ca_file, the password from DIR/lab.env).

- healthy: RW101–RW104 pass on every BMC; the ESXi hosts leave them to their BMC (one finding per setting);
- each lab fault RW101–RW104 fails exactly its check on its BMC; RW103 (SR-IOV Global off: no VFs)
  with the whole catalog: the host's RW215 and its guest's checks skip naming RW103 on the BMC;
- the fix-by-hand a finding prints works: run as printed, then the reset it names, and the check passes;
- TLS: without the CA the BMC is refused with a message naming ca_file and insecure; `insecure: true`
  connects, with a warning;
- without a BMC in the run, the hosts are judged from OS evidence (ESXi HV Support).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from roce_wizard.catalog import load_catalog
from roce_wizard.engine import RunReport, run_checks
from roce_wizard.inventory import load_inventory, resolve_secret
from roce_wizard.model import Finding, Policy, Status, Target, TargetKind
from roce_wizard.playbook import load_playbook
from roce_wizard.transports.redfish import RedfishTransport
from roce_wizard.transports.ssh import SshTransport

BIOS = ("RW101", "RW102", "RW103", "RW104")
CATALOG = load_catalog([])
BOOK = load_playbook("vsphere-sriov")


def _world():
    from roce_wizard.lab import scenarios

    world = scenarios.healthy(2)
    world.reboot_delay_s = 0.2
    return world


def _show(findings: list[Finding]) -> str:
    return "\n".join(f"  {f.check}@{f.target}{'/' + f.subject if f.subject else ''} {f.status.value}: {f.summary}"
                     + (f" [blocked by {f.blocked_by[0]}@{f.blocked_by[1]}]" if f.blocked_by else "")
                     for f in findings)


@dataclasses.dataclass
class Bench:
    runner: object
    lab: object
    directory: Path
    targets: list[Target]
    env: dict[str, str]
    policy: Policy

    def reset(self) -> None:
        self.runner.call(self.lab.reset(_world()))

    def inject(self, spec: str) -> tuple[str, str]:
        return self.runner.call(self.lab.inject(spec))

    def boot_count(self, host: str) -> int:
        async def read() -> int:
            return self.lab.world.hosts[host].boot_count

        return self.runner.call(read())

    def target(self, name: str) -> Target:
        return next(t for t in self.targets if t.name == name)

    def run(self, codes: tuple[str, ...] | None = None, targets: list[Target] | None = None,
            redfish: RedfishTransport | None = None) -> RunReport:
        """doctor: the playbook's checks (or `codes` + RW001) on the bmc, esxi and guest targets."""
        chosen = {c: v for c, v in CATALOG.items() if BOOK.stage_of(c) is not None
                  and (codes is None or c in codes or c == "RW001")}
        stage_of = {c: BOOK.stage_of(c) for c in chosen}
        ssh = SshTransport(connect_timeout=5, command_timeout=20, max_concurrent_connects=16)
        redfish = redfish or RedfishTransport(password_resolver=lambda t: resolve_secret(t.credentials.password),
                                              connect_timeout=5, command_timeout=20)
        transports = {TargetKind.ESXI: ssh, TargetKind.GUEST: ssh, TargetKind.LINUX: ssh, TargetKind.BMC: redfish}
        chosen_targets = targets if targets is not None else self.targets
        return asyncio.run(run_checks(chosen_targets, chosen, transports, self.policy, stage_of=stage_of,
                                      concurrency=16, command_timeout=20))


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Iterator[Bench]:
    from roce_wizard.lab.control import BackgroundLab
    from roce_wizard.lab.scenarios import Scenario
    from roce_wizard.lab.server import read_env

    directory = tmp_path_factory.mktemp("bioslab")
    runner = BackgroundLab(Scenario("healthy", _world()), directory, services=("roce_wizard.lab.redfish",))
    lab = runner.start()
    env = read_env(directory)
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the inventory's password: {env: ROCE_LAB_BMC_PASSWORD}
    try:
        inventory = load_inventory(Path(directory) / "inventory.yaml")
        targets = [t for t in inventory.targets if t.kind in (TargetKind.BMC, TargetKind.ESXI, TargetKind.GUEST)]
        assert {t.name for t in targets if t.kind is TargetKind.BMC} == {"bmc-esx-01", "bmc-esx-02"}
        policy = inventory.policy if BOOK.policy == {} else Policy(**{**BOOK.policy, **inventory.policy.to_dict()})
        yield Bench(runner, lab, Path(directory), targets, env, policy)
    finally:
        runner.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(scope="module")
def baseline(bench) -> RunReport:
    bench.reset()
    return bench.run()


def test_healthy_bmcs_pass_rw101_to_rw104_and_hosts_leave_it_to_them(baseline):
    bad = [f for f in baseline.findings if f.status in (Status.FAIL, Status.WARN, Status.ERROR)
           or (f.status is Status.SKIP and f.blocked_by is not None)]
    assert not bad, f"healthy lab: expected no failure, got\n{_show(bad)}"
    assert int(baseline.exit_code) == 0
    for bmc in ("bmc-esx-01", "bmc-esx-02"):
        for code in BIOS:
            mine = [f for f in baseline.findings if f.check == code and f.target == bmc]
            assert [f.status for f in mine] == [Status.PASS], (code, bmc, _show(mine))
            assert "(from iDRAC Redfish)" in mine[0].summary
        (reach,) = [f for f in baseline.findings if f.check == "RW001" and f.target == bmc]
        assert reach.status is Status.PASS and "redfish" in reach.summary
    for host in ("esx-01", "esx-02"):
        for code in BIOS:
            (f,) = [f for f in baseline.findings if f.check == code and f.target == host]
            assert f.status is Status.SKIP and f.summary.startswith(f"judged on bmc-{host} ")


# a fault's own verdict: RW104 is a warn-severity check
EXPECTED = {"RW101": Status.FAIL, "RW102": Status.FAIL, "RW103": Status.FAIL, "RW104": Status.WARN}
SOURCE = {"RW101": "iDRAC", "RW102": "iLO", "RW103": "iDRAC", "RW104": "iDRAC"}


@pytest.mark.parametrize("code", BIOS)
def test_each_bios_fault_fails_exactly_its_check_on_its_bmc(bench, baseline, code):
    bench.reset()
    try:
        _, target = bench.inject(code)
        # RW103 takes the host's VFs away: the whole catalog must name it as the root cause, once
        report = bench.run(None if code == "RW103" else BIOS)
    finally:
        bench.reset()
    assert target == "bmc-esx-02"
    mine = [f for f in report.findings if f.check == code and f.target == target]
    assert [f.status for f in mine] == [EXPECTED[code]], _show(mine)
    assert f"(from {SOURCE[code]} Redfish)" in mine[0].summary and mine[0].fix
    assert "-X PATCH" in mine[0].fix and "/Bios/Settings" in mine[0].fix
    base_skips = {(f.check, f.target, f.subject) for f in baseline.findings
                  if f.status is Status.SKIP and f.blocked_by is None}
    wrong = [f for f in report.findings
             if not (f.check == code and f.target == target) and f.status is not Status.PASS
             and not (f.status is Status.SKIP and (f.blocked_by == (code, target) or (
                 f.blocked_by is None and (f.check, f.target, f.subject) in base_skips)))]
    assert not wrong, f"{code} on {target}: besides it, these are not pass or blocked by it:\n{_show(wrong)}"
    if code == "RW103":
        blocked = {(f.check, f.target) for f in report.findings if f.blocked_by == ("RW103", "bmc-esx-02")}
        assert ("RW215", "esx-02") in blocked
        assert {("RW402", "compute-02"), ("RW405", "compute-02")} <= blocked
        for f in report.findings:
            if f.blocked_by == ("RW103", "bmc-esx-02"):
                assert f.summary == "blocked by RW103 on bmc-esx-02" and f.fix is None
    if code == "RW102":  # the iLO fix: PATCH IntelProcVtd, no configuration job
        assert '"IntelProcVtd": "Enabled"' in mine[0].fix and "/Jobs" not in mine[0].fix
    if code == "RW101":  # Dell: VT-d rides on ProcVirtualization, RW102 names RW101 as its cause
        (vtd,) = [f for f in report.findings if f.check == "RW102" and f.target == target]
        assert vtd.blocked_by == ("RW101", target)


def test_the_printed_fix_works_patch_job_and_reset(bench):
    bench.reset()
    try:
        bench.inject("RW103@bmc-esx-02")
        report = bench.run(BIOS)
        (f,) = [f for f in report.findings if f.check == "RW103" and f.target == "bmc-esx-02"]
        assert f.status is Status.FAIL
        env = {**os.environ, **bench.env}
        # the fix as printed: the PATCH and the configuration job (comments are comments)
        done = subprocess.run(["bash", "-c", f.fix], env=env, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        assert "error" not in done.stdout.lower(), done.stdout
        staged = bench.run(BIOS)
        (f2,) = [f for f in staged.findings if f.check == "RW103" and f.target == "bmc-esx-02"]
        assert f2.status is Status.FAIL and "Enabled is staged" in f2.summary
        assert "-X PATCH" not in f2.fix  # only the job (if missing) and the reboot are left
        # the reset the fix names (a comment: the operator chooses when the server reboots)
        reset = re.search(r"or: (curl .*ComputerSystem\.Reset.*)$", f.fix, re.MULTILINE)
        assert reset is not None, f.fix
        boots = bench.boot_count("esx-02")
        done = subprocess.run(["bash", "-c", reset.group(1)], env=env, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        deadline = time.monotonic() + 20
        while bench.boot_count("esx-02") == boots and time.monotonic() < deadline:
            time.sleep(0.05)
        assert bench.boot_count("esx-02") == boots + 1
        time.sleep(0.3)
        after = bench.run(("RW103", "RW215"))
        for code, target in (("RW103", "bmc-esx-02"), ("RW215", "esx-02")):
            got = [x for x in after.findings if x.check == code and x.target == target]
            assert got and all(x.status is Status.PASS for x in got), _show(got)
    finally:
        bench.reset()


def test_a_bmc_without_its_ca_is_refused_naming_ca_file_and_insecure(bench, baseline):
    bmc = bench.target("bmc-esx-01")
    no_ca = dataclasses.replace(bmc, options={k: v for k, v in bmc.options.items() if k != "ca_file"})
    report = bench.run(BIOS, targets=[no_ca])
    (reach,) = [f for f in report.findings if f.check == "RW001"]
    assert reach.status is Status.ERROR and reach.observed["error_kind"] == "tls"
    message = reach.observed["message"]
    assert "ca_file" in message and "insecure" in message and "cannot be verified" in message
    assert all(f.status is Status.SKIP and f.blocked_by == ("RW001", "bmc-esx-01")
               for f in report.findings if f.check in BIOS)


def test_insecure_true_connects_with_a_warning(bench, baseline):
    bmc = bench.target("bmc-esx-01")
    insecure = dataclasses.replace(bmc, options={"insecure": True})
    redfish = RedfishTransport(password_resolver=lambda t: resolve_secret(t.credentials.password))
    report = bench.run(BIOS, targets=[insecure], redfish=redfish)
    assert {f.check: f.status for f in report.findings} == {c: Status.PASS for c in ("RW001", *BIOS)}
    assert len(redfish.warnings) == 1
    assert "bmc-esx-01" in redfish.warnings[0] and "insecure" in redfish.warnings[0]
    assert "verification is OFF" in redfish.warnings[0]


def test_wrong_password_is_an_auth_error(bench, baseline):
    redfish = RedfishTransport(password_resolver=lambda t: "not-the-password")
    report = bench.run(BIOS, targets=[bench.target("bmc-esx-01")], redfish=redfish)
    (reach,) = [f for f in report.findings if f.check == "RW001"]
    assert reach.status is Status.ERROR and reach.observed["error_kind"] == "auth"
    assert "not-the-password" not in reach.observed["message"]


def test_without_a_bmc_in_the_run_the_host_is_judged_from_esxi_hv_support(bench):
    bench.reset()
    try:
        bench.inject("RW101@bmc-esx-02")  # ProcVirtualization off: ESXi shows HV Support 2
        hosts = [t for t in bench.targets if t.kind is TargetKind.ESXI]
        report = bench.run(BIOS, targets=hosts)
        with_bmc = bench.run(BIOS, targets=[t for t in bench.targets if t.kind is not TargetKind.GUEST])
    finally:
        bench.reset()
    (vtx,) = [f for f in report.findings if f.check == "RW101" and f.target == "esx-02"]
    assert vtx.status is Status.FAIL and vtx.summary == (
        "VT-x: HV Support 2, VT-x/AMD-V disabled in the BIOS (from ESXi HV Support)")
    assert "Processor Settings > Virtualization Technology" in vtx.fix
    (ok,) = [f for f in report.findings if f.check == "RW101" and f.target == "esx-01"]
    assert ok.status is Status.PASS
    # with the BMC in the run the same fault is reported once, on the BMC
    failing = [(f.check, f.target) for f in with_bmc.findings if f.status is Status.FAIL]
    assert failing == [("RW101", "bmc-esx-02")]
