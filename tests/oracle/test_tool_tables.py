"""The lab's ethtool, ip, ibv_devinfo and ucx_info against the real ones (issue 12, item 3b): the same line
through Debian's binary (ip and ethtool inside a network namespace holding a veth named like the lab guest's
RoCE netdev) and through the lab guest's shell must be accepted or refused alike, a refusal with the same exit
status and the same error text (stderr exactly; of a usage listing on stdout, its first lines)."""

from __future__ import annotations

import shlex

import pytest

from roce_wizard.lab import scenarios
from tests.fixkit import run_line
from tests.oracle import real

NETDEV = "ens256"  # compute-01's RoCE netdev (a VF) in the lab
ACCEPTED = [
    "ethtool -a ens256", "ethtool -A ens256 rx off tx off", "ethtool -A ens256 autoneg off rx on tx on",
    "ethtool -A ens256", "ethtool -S ens256", "ethtool -i ens256", "ethtool ens256",
    "ip link set dev ens256 mtu 9000", "ip link set ens256 up", "ip addr add 10.9.9.9/24 dev ens256",
    "ip -j addr show", "ip -j addr show dev ens256",
    "ibv_devinfo", "ibv_devinfo -v", "ibv_devinfo -d mlx5_0", "ibv_devinfo -l",
    "ucx_info -c", "ucx_info -v",
]
REFUSED = [
    "ethtool -A ens256 rx bogus", "ethtool -A ens256 rx", "ethtool -A ens256 rx on tx", "ethtool -A ens256 foo on",
    "ethtool -A ens256 rx ON", "ethtool -Z ens256", "ethtool", "ethtool -a", "ethtool --bogus ens256",
    "ip link set dev ens256 mtux 9000", "ip link set dev ens256 mtu abc", "ip link set dev ens256 mtu",
    "ip addr add 10.9.9.300/24 dev ens256", "ip addr add 10.9.9.9/24", "ip bogus",
    "ibv_devinfo --bogus", "ibv_devinfo -i", "ibv_devinfo -d", "ibv_devinfo -Z",
    "ucx_info -Z", "ucx_info", "ucx_info -m",
    # mpirun: real.py runs the real one on localhost (--host localhost), the lab on its guests
    "mpirun --allow-run-as-root --bogus osu_latency", "mpirun --allow-run-as-root -np",
    "mpirun --allow-run-as-root -np 2 -x", "mpirun --allow-run-as-root -np abc osu_latency",
    "mpirun --allow-run-as-root -np 1 --host compute-02",
]


def _lab(line: str):
    return run_line(scenarios.healthy(), "compute-01", line)


@pytest.mark.parametrize("line", ACCEPTED)
def test_both_accept(line):
    answer = real.run(shlex.split(line), [NETDEV])
    assert answer.accepted, answer.why()
    lab = _lab(line)
    if line.startswith("ethtool -A") and answer.exit != 0:  # the options passed, the device refused: the
        # namespace's veth, like the lab's mlx5 VF, cannot set pause (EOPNOTSUPP) — the same refusal, the same text
        assert (lab.exit_status, lab.stderr) == (answer.exit, answer.stderr)
    else:
        assert lab.exit_status == 0, lab.stderr


@pytest.mark.parametrize("line", REFUSED)
def test_both_refuse_with_the_same_text(line):
    answer = real.run(shlex.split(line), [NETDEV])
    assert not answer.accepted, answer.why()
    lab = _lab(line)
    assert (lab.exit_status, lab.stderr) == (answer.exit, answer.stderr)
    assert lab.stdout.splitlines()[:2] == answer.stdout.splitlines()[:2]
