"""`lab up --detach` waits for readiness in proportion to the lab's size (issue 16, item 4): 120 s up to 480
hosts (256 hosts were ready in 8 s here), 0.25 s a host beyond (1000 hosts: 37 s to ready on 2 loaded cores,
benchmarks/PROFILE.md), so a big lab on a busy machine is not stopped while it is still starting."""

from __future__ import annotations

from roce_wizard.lab.control import ready_timeout


def _argv(*extra: str) -> list[str]:  # as `lab up --detach` hands it on (cli.py lab_up)
    return ["--scenario", "healthy", "--command-delay", "0.0", *extra]


def test_small_labs_keep_the_120_s_wait():
    assert ready_timeout(_argv()) == 120.0
    assert ready_timeout(_argv("--hosts", "1")) == 120.0
    assert ready_timeout(_argv("--hosts", "256")) == 120.0


def test_big_labs_wait_longer():
    assert ready_timeout(_argv("--hosts", "1000")) == 250.0
    assert ready_timeout(_argv("--hosts=2000")) == 500.0
    assert ready_timeout(_argv("--fault", "RW208@esx-1000", "--hosts", "4000")) == 1000.0


def test_a_host_count_that_is_no_number_changes_nothing():
    assert ready_timeout(_argv("--hosts")) == 120.0
    assert ready_timeout(_argv("--hosts", "many")) == 120.0
    assert ready_timeout(["--scenario", "--hosts"]) == 120.0
