"""The lab's perftest against the real one (issue 12, item 3b): a table of valid and invalid option lines run
through Debian's perftest (no RDMA device here: an accepted line ends at " Did not detect devices") and through
the lab's guest (its shell, as its sshd runs it: an accepted server line waits for its client). Both must
accept or refuse alike, and refuse with the same text (stderr exactly; stdout too, except the long usage
listing that follows a getopt error, where the lab prints only its first lines).
"""

from __future__ import annotations

import shlex

import pytest

from roce_wizard.lab import scenarios
from tests.fixkit import run_line
from tests.oracle import real

ACCEPTED = [
    "ib_write_bw -D 5 -s 1048576 --tclass=106 --report_gbits -d mlx5_0 -x 3 -p 18610",  # RW605's line
    "ib_send_bw -a -F --report_gbits --tclass=106 -d mlx5_0 -x 3 -p 18600",  # RW601's
    "ib_send_lat -a -F --tclass 106 -d mlx5_0 -x 3 -p 18601",  # RW602's, the value as a separate word
    "ib_write_bw -R -T 104",  # -T is for rdma_cm QPs
    "ib_write_bw -R --tos=104 --tclass=106",
    "ib_write_bw -aF -x3 --gid-index=3",  # bundled flags, attached values, the last -x wins
    "ib_write_bw -x 300",  # read into a uint8_t: 44
    "ib_write_bw --tclass=65536",  # read into a uint16_t
    "ib_write_bw -s 64k -n 5 -p 70000",
]
REFUSED = [
    "ib_write_bw -D 5 -s 1048576 -T 104 --report_gbits -d mlx5_0 -x 3 -p 18610",  # RW605's old line
    "ib_write_bw --tos=104",
    "ib_write_bw -T 300 -R",
    "ib_write_bw -T abc -R",
    "ib_write_bw --tclass=abc",
    "ib_write_bw --tclass",
    "ib_write_bw -T",
    "ib_write_bw -x 65",
    "ib_write_bw -x abc",
    "ib_write_bw -x 3abc",
    "ib_write_bw -s 0",
    "ib_write_bw -s abc",
    "ib_write_bw -n 2",
    "ib_write_bw -n abc",
    "ib_write_bw -D 0",
    "ib_write_bw -D abc",
    "ib_write_bw -p abc",
    "ib_send_bw -D 5 -a",
    "ib_write_bw -T 104 -D 5 -a",  # -D with -a is judged before -T
    "ib_send_lat -b",
    "ib_send_lat -x abc -b",  # the first bad option is the message
    "ib_write_bw -e",
    "ib_write_bw -H",
    "ib_write_bw --bogus",
    "ib_write_bw -Y",
    "ib_write_bw -d",
    "ib_write_bw --report_gbits=1",
    "ib_write_bw 192.168.100.12 192.168.100.13",
]


def _lab(line: str):
    world = scenarios.healthy()
    guest = next(name for name, g in world.guests.items() if g.vm is not None)
    return run_line(world, guest, line)


def _head(text: str, n: int = 3) -> list[str]:
    return text.splitlines()[:n]


@pytest.mark.parametrize("line", ACCEPTED)
def test_both_accept(line):
    answer = real.run(shlex.split(line))
    assert answer.accepted, answer.why()
    lab = _lab(line)
    assert lab.exit_status == 0 and "Waiting for client to connect" in lab.stdout, lab.stderr or lab.stdout


@pytest.mark.parametrize("line", REFUSED)
def test_both_refuse_with_the_same_text(line):
    answer = real.run(shlex.split(line))
    assert not answer.accepted and answer.exit == 1, answer.why()
    lab = _lab(line)
    assert lab.exit_status == answer.exit
    assert lab.stderr == answer.stderr
    if answer.stdout.startswith("Usage:"):  # the usage listing after a getopt error: its first lines
        assert _head(lab.stdout) == _head(answer.stdout)
    else:
        assert lab.stdout == answer.stdout


def test_an_unknown_device_is_named_as_perftest_names_it():
    """No oracle here (this machine has no device to be different from): the text is perftest's own,
    ctx_find_dev in src/perftest_resources.c (linux-rdma/perftest) — `"IB device %s not found\\n"` — then the
    test's main: `" Unable to find the Infiniband/RoCE device\\n"`."""
    lab = _lab("ib_write_bw -d mlx5_9 -x 3")
    assert (lab.exit_status, lab.stderr) == (1, "IB device mlx5_9 not found\n Unable to find the Infiniband/RoCE device\n")
