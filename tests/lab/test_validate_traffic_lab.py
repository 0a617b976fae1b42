"""RW607/RW608 on the lab over real SSH: a 2-node bare-metal lab and a 2-host vSphere lab (VF guests) judged,
the node at fault named, the doctor report's per-pair sentence with its numbers.

Reuses test_validate_stage's lab (one lab for the module, reset to healthy between tests)."""

from __future__ import annotations

import io

from rich.console import Console

from roce_wizard.lab.guest.state import _gs
from roce_wizard.model import Status, TargetKind
from roce_wizard.records.report import render_terminal
from tests.lab import test_validate_stage as stage
from tests.lab.test_validate_stage import _by_code, _show

vlab = stage.vlab  # the validate stage's lab fixture, shared

CODES = ["RW605", "RW606", "RW607", "RW608"]


def test_baremetal_pair_rides_priority_3_and_congestion_control_acts(vlab):
    vlab.reset()
    report = vlab.run(TargetKind.LINUX, codes=CODES)
    found = _by_code(report)
    (f607,), (f608,) = found["RW607"], found["RW608"]
    assert f607.status is Status.PASS and "priority 3 both ways" in f607.summary, _show(report.findings)
    rows = f607.details["table"]["rows"]
    assert {r[0] for r in rows} == {"ib_send_bw", "ib_send_lat", "osu_latency (MPI)", "ib_write_bw incast"}
    assert f608.status is Status.PASS, _show(report.findings)
    cols = f608.details["table"]["columns"]
    big = f608.details["table"]["rows"][-1]
    assert big[cols.index("np_ecn_marked_roce_packets")] > 0 and big[cols.index("rp_cnp_handled (sender)")] > 0
    out = io.StringIO()
    render_terminal(report, Console(file=out, width=400, color_system=None))
    text = out.getvalue()
    assert "Fabric" in text and "node-01<->node-02 is lossless" in text and "congestion-controlled (RW608" in text


def test_vsphere_pair_vf_guests_say_what_they_cannot_read(vlab):
    vlab.reset()
    report = vlab.run(TargetKind.GUEST, codes=CODES)
    found = _by_code(report)
    (f607,), (f608,) = found["RW607"], found["RW608"]
    # a VF shows no per-priority counters: n/a, in words, not a guess
    assert f607.status is Status.SKIP and f607.blocked_by is None and "VF" in f607.summary, f607.summary
    # nor pause counters: whether the incast congested cannot be told; the marks and CNPs it shows are reported
    assert f608.status is Status.SKIP and f608.blocked_by is None and "ECN marked +" in f608.summary, f608.summary


def test_remarking_towards_the_receiver_fails_rw607_there_and_explains_the_collapse(vlab):
    vlab.reset()
    vlab.inject("RW607@node-02")
    report = vlab.run(TargetKind.LINUX, codes=CODES)
    found = _by_code(report)
    (f607,) = found["RW607"]
    assert f607.status is Status.FAIL and f607.target == "node-02" and "priority 0" in f607.summary, f607.summary
    (f605,) = found["RW605"]
    assert f605.status is Status.SKIP and f605.blocked_by == ("RW607", "node-02"), _show(report.findings)


def test_remarking_towards_the_sender_names_the_sender(vlab):
    vlab.reset()
    vlab.inject("RW607@node-01")  # the latency pongs and MPI replies arrive on priority 0 at the sender
    found = _by_code(vlab.run(TargetKind.LINUX, codes=["RW602", "RW607"]))
    (f607,) = found["RW607"]
    assert f607.status is Status.FAIL and f607.target == "node-01" and "reverse" in f607.summary, f607.summary


def test_a_sender_without_its_reaction_point_is_named(vlab):
    vlab.reset()
    world = vlab.lab.world
    _gs(world, world.guests["node-01"])["dcqcn_rp"] = [0] * 8  # roce_rp/enable/* = 0 on the sender
    found = _by_code(vlab.run(TargetKind.LINUX, codes=["RW608"]))
    (f608,) = found["RW608"]
    assert f608.status is Status.FAIL and f608.target == "node-01" and "rp_cnp_handled" in f608.summary, f608.summary
