"""One rule for a reboot's verdict (engine.rounds.reboot_verdict), used by `fix --reboot`, "fix everything"
and the wizard's own reboots: a change waiting for the reboot is current when its check passes (or is not
applicable) where the change was made or on the host it is about; a blocked check is not judged yet, unless
this is the final look."""

from __future__ import annotations

from roce_wizard.engine.judge import RunReport
from roce_wizard.engine.rounds import reboot_verdict
from roce_wizard.model import Finding, Status


def report(*findings: Finding) -> RunReport:
    return RunReport({}, [], [], {}, 0.0, 0.0, cross_target=list(findings))


WAITING = [("esx-01", "esx-01", "RW209"), ("esx-01", "bmc-01", "RW103")]  # (host, made on, check)


def test_passing_and_not_applicable_are_current_a_failure_is_named():
    done = report(Finding("RW209", Status.PASS, "pfc on", target="esx-01"),
                  Finding("RW103", Status.SKIP, "not applicable: no BMC answers", target="bmc-01"))
    assert reboot_verdict(done, WAITING, final=False) == []  # the wizard's old rule called the skip a failure
    still = report(Finding("RW209", Status.FAIL, "pfc off", target="esx-01"),
                   Finding("RW103", Status.PASS, "on", target="bmc-01"))
    assert reboot_verdict(still, WAITING, final=False) == ["RW209"]


def test_a_blocked_check_waits_a_round_and_the_final_look_counts_it_as_not_current():
    blocked = report(Finding("RW209", Status.SKIP, "blocked by RW202", target="esx-01", blocked_by=("RW202", "esx-01")),
                     Finding("RW103", Status.PASS, "on", target="bmc-01"))
    assert reboot_verdict(blocked, WAITING, final=False) is None
    assert reboot_verdict(blocked, WAITING, final=True) == ["RW209"]
