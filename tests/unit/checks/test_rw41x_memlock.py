"""RW414 memlock on recorded outputs (CASES: real `ulimit` captures from tests/data/corpus/ulimit_memlock, hand-written
`systemctl show` lines in the documented form, tests/data/issue15_host/README.md) and its fix on the lab world."""

from __future__ import annotations

from pathlib import Path

from roce_wizard.lab import faults, scenarios
from roce_wizard.model import RebootKind, Safety, Status, TargetKind
from tests import fixkit
from tests.checkcases import CATALOG, Case, build_facts, guest, run_case
from tests.conftest import corpus_text

HOST15 = Path(__file__).parents[2] / "data" / "issue15_host"
UNLIMITED = corpus_text("ulimit_memlock/docker-1099-centos7-ulimit-Ha-unlimited.txt")
L64 = corpus_text("ulimit_memlock/clearlinux-2372-ulimit-l-64.txt")
A64 = corpus_text("ulimit_memlock/telegraf-12980-ubuntu2204-ulimit-a-memlock-64.txt")
PROC_64M = corpus_text("ulimit_memlock/systemd-11448-proc-1-limits-locked-64m.txt")
SLURMD_8M = (HOST15 / "systemctl-show-slurmd-loaded-8m.txt").read_text(encoding="utf-8")
NO_SLURMD = (HOST15 / "systemctl-show-slurmd-not-found.txt").read_text(encoding="utf-8")

CASES = [
    Case("RW414", "unlimited", Status.PASS, {"ulimit_memlock": UNLIMITED, "systemd_limit_memlock": NO_SLURMD},
         target=guest(), summary_has="unlimited"),
    Case("RW414", "ulimit-l-64", Status.FAIL, {"ulimit_memlock": L64}, target=guest(), summary_has="64 KiB"),
    Case("RW414", "ulimit-a-64", Status.FAIL, {"ulimit_memlock": A64}, target=guest(), summary_has="64 KiB"),
    Case("RW414", "proc-limits-64m", Status.FAIL, {"ulimit_memlock": PROC_64M}, target=guest(),
         summary_has="65536 KiB"),
    Case("RW414", "login-unlimited-slurmd-8m", Status.FAIL,
         {"ulimit_memlock": UNLIMITED, "systemd_limit_memlock": SLURMD_8M},
         target=guest("node-01", TargetKind.LINUX), summary_has="slurmd.service: LimitMEMLOCK=8388608"),
    Case("RW414", "two-reads-that-differ", Status.SKIP, {"ulimit_memlock": "$ ulimit -l\n64\n$ ulimit -l\nunlimited\n"},
         target=guest(), summary_has="no readable limit"),
]


def test_cases():
    for case in CASES:
        run_case(case)


def test_slurmd_fix_is_a_drop_in_and_a_reload():
    case = CASES[4]
    plan = CATALOG["RW414"].plan_fix(build_facts(case), case.policy)
    assert plan is not None and plan.safety is Safety.SAFE and plan.reboot is RebootKind.NONE
    assert [s.command for s in plan.steps] == [
        ("mkdir -p /etc/systemd/system/slurmd.service.d && printf '%s\\n' '[Service]' LimitMEMLOCK=infinity > "
         "/etc/systemd/system/slurmd.service.d/99-roce-wizard-memlock.conf"),
        "systemctl daemon-reload"]


GUEST, NODE = "compute-01", "node-01"


def _statuses(world, name):
    return {f.status for f in fixkit.run(world, name, ["RW414"]).findings if f.check == "RW414"}


def test_limits_file_fix_on_the_lab():
    world = scenarios.healthy()
    faults.inject(world, f"RW414@{GUEST}")
    assert _statuses(world, GUEST) == {Status.FAIL}
    plan = fixkit.plan_for(world, GUEST, "RW414")
    assert [s.command for s in plan.steps] == [
        ("printf '%s\\n' '* soft memlock unlimited' '* hard memlock unlimited' > "
         "/etc/security/limits.d/99-roce-wizard-memlock.conf")]
    fixkit.apply(world, GUEST, plan)
    assert _statuses(world, GUEST) == {Status.PASS}
    world.reboot_guest(world.guests[GUEST])
    assert _statuses(world, GUEST) == {Status.PASS} and fixkit.plan_for(world, GUEST, "RW414") is None


def test_slurmd_unit_limit_on_the_lab():
    """A host with slurmd (its unit file present): the manager's default limit fails, the drop-in fixes it."""
    from roce_wizard.lab import guest as lab_guest

    world = scenarios.healthy()
    lab_guest.add_baremetal(world, 1)
    line = "printf '%s\\n' '[Service]' 'ExecStart=/usr/sbin/slurmd -D' > /etc/systemd/system/slurmd.service"
    assert fixkit.run_line(world, NODE, line).exit_status == 0
    assert _statuses(world, NODE) == {Status.PASS, Status.FAIL}  # the login is fine, slurmd is not
    plan = fixkit.plan_for(world, NODE, "RW414")
    fixkit.apply(world, NODE, plan)
    assert _statuses(world, NODE) == {Status.PASS}
