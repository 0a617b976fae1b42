"""The lab's perftest measures the class it was given (issue 12, item 1): the traffic class decides the
priority the packets land in at the receiver and whether that priority is lossless there. Without
`--tclass` perftest sends DSCP 0: on a healthy fabric whose lossless priority is 3, an incast on DSCP 0 is
lossy and collapses, one on `--tclass=106` (DSCP 26, ECT(0)) holds; and a bare-metal node's per-priority
byte counters (`ethtool -S` rx_prio<p>_bytes) count the bytes on the priority their class mapped to.
"""

from __future__ import annotations

import re

import pytest

from roce_wizard.lab import guest as lab_guest
from roce_wizard.lab import scenarios
from roce_wizard.parsers import PARSERS
from tests.fixkit import run_line

PORTS = "18610 18611 18612 18613"


def _world(default_class: bool = True):
    """The healthy lab; `default_class=False`: the guests' tc/1/traffic_class left unset (no boot hook), so
    a perftest run without --tclass really sends DSCP 0 (with it set, mlx5 applies the default to every QP)."""
    world = scenarios.healthy()
    lab_guest.add_baremetal(world, 2)
    if not default_class:
        for guest in world.guests.values():
            guest.traffic_class = None
    return world


def _incast(world, sender: str, receiver: str, ip: str, cls: str) -> float:
    """Four ib_write_bw streams into the receiver, as the validate stage runs them; their summed Gb/s."""
    args = f"-D 5 -s 1048576 {cls} --report_gbits -d mlx5_0 -x 3"
    started = run_line(world, receiver, f"for p in {PORTS}; do nohup timeout 60 ib_write_bw {args} -p $p </dev/null "
                                        f">/tmp/s$p.log 2>&1 & done; sleep 0.1; cat /tmp/s18613.log")
    assert "Waiting for client to connect" in started.stdout, started.stderr
    out = run_line(world, sender, f"for p in {PORTS}; do timeout 60 ib_write_bw {args} -p $p {ip} >/tmp/c$p.log 2>&1 & "
                                  f"done; wait; for p in {PORTS}; do echo '### stream'; cat /tmp/c$p.log; done")
    total = 0.0
    for chunk in out.stdout.split("### stream")[1:]:
        rows = PARSERS["perftest"].parse(chunk)["rows"]
        total += rows[-1]["bw_avg_gbps"]
    return total


@pytest.mark.parametrize(("sender", "receiver", "ip"), [("compute-01", "compute-02", "192.168.100.12"),
                                                       ("node-01", "node-02", "192.168.101.12")])
def test_an_incast_on_dscp_0_collapses_and_on_the_roce_class_holds(sender, receiver, ip):
    lossless = _incast(_world(), sender, receiver, ip, "--tclass=106")
    lossy = _incast(_world(default_class=False), sender, receiver, ip, "")
    assert lossless > 0.9 * 100 * 0.965  # four streams share the 100 Gb/s link
    assert lossy < 0.5 * lossless


def _prio_bytes(world, node: str) -> dict[int, int]:
    text = run_line(world, node, "ethtool -S ens1f0np0").stdout
    return {int(p): int(v) for p, v in re.findall(r"rx_prio(\d)_bytes: (\d+)", text)}


@pytest.mark.parametrize(("cls", "prio"), [("--tclass=106", 3), ("", 0)])
def test_per_priority_counters_follow_the_class(cls, prio):
    world = _world(default_class=False)
    before = _prio_bytes(world, "node-02")
    run_line(world, "node-02", f"nohup timeout 60 ib_send_bw -a -F --report_gbits {cls} -d mlx5_0 -x 3 -p 18600 "
                               "</dev/null >/tmp/s.log 2>&1 &")
    client = run_line(world, "node-01", f"ib_send_bw -a -F --report_gbits {cls} -d mlx5_0 -x 3 -p 18600 192.168.101.12")
    assert client.exit_status == 0, client.stderr
    after = _prio_bytes(world, "node-02")
    moved = {p: after[p] - before[p] for p in after}
    assert moved[prio] > 10**9 and all(v < 10**6 for p, v in moved.items() if p != prio), moved
