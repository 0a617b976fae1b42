"""The validate stage (RW601-RW606) on the lab: real SSH sessions into simulated guests and bare-metal
hosts, perftest and MPI orchestrated between node pairs, judged by the real parsers and checks.

One lab for the module (2 ESXi hosts with their guests, 2 bare-metal hosts, a switch model); between
tests the world is put back to healthy in place.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from roce_wizard.catalog import load_catalog
from roce_wizard.engine import RunReport, run_checks
from roce_wizard.inventory import Inventory, load_inventory
from roce_wizard.lab.server import read_env
from roce_wizard.model import Finding, Policy, Stage, Status, TargetKind

CATALOG = load_catalog([])
VALIDATE = {code: c for code, c in CATALOG.items() if c.meta.stage is Stage.VALIDATE}
SERVICES = ("roce_wizard.lab.esxi", "roce_wizard.lab.guest")


def _world():
    from roce_wizard.lab import guest, scenarios

    world = scenarios.healthy(2)
    guest.add_baremetal(world, 2)
    return world


@dataclasses.dataclass
class ValidateLab:
    lab: object
    runner: object
    inventory: Inventory
    directory: Path

    def reset(self) -> None:
        self.runner.call(self.lab.reset(_world()))

    def inject(self, spec: str) -> tuple[str, str]:
        return self.runner.call(self.lab.inject(spec))

    def run(self, kind: TargetKind = TargetKind.GUEST, policy: Policy | None = None, codes=None,
            targets=None) -> RunReport:
        from roce_wizard.session import live_transports

        chosen = {c: VALIDATE[c] for c in (codes or VALIDATE)}
        targets = targets or [t for t in self.inventory.targets if t.kind is kind]
        transports = live_transports(
            {t.kind for t in targets}, known_hosts=None, trust_on_first_use=False, concurrency=8,
            connect_timeout=5, timeout=20, run_dir=self.directory / "run")
        return asyncio.run(run_checks(targets, chosen, transports, policy or self.inventory.policy,
                                      command_timeout=20))

    def sh(self, target: str, line: str) -> str:
        """One command over the lab's real SSH, as an operator would type it."""
        from roce_wizard.session import live_transports

        t = next(t for t in self.inventory.targets if t.name == target)
        transports = live_transports({t.kind}, known_hosts=None, trust_on_first_use=False, concurrency=1,
                                    connect_timeout=5, timeout=20, run_dir=self.directory / "run")

        async def go() -> str:
            session = await transports[t.kind].session(t)
            result = await session.run(line, timeout=10)
            await transports[t.kind].close()
            return result.stdout

        return asyncio.run(go())


@pytest.fixture(scope="module")
def vlab(tmp_path_factory) -> Iterator[ValidateLab]:
    from roce_wizard.lab.control import BackgroundLab
    from roce_wizard.lab.scenarios import Scenario

    directory = tmp_path_factory.mktemp("validatelab")
    runner = BackgroundLab(Scenario("healthy", _world()), directory, services=SERVICES)
    lab = runner.start()
    saved = dict(os.environ)
    os.environ.update(read_env(directory))
    try:
        yield ValidateLab(lab, runner, load_inventory(directory / "inventory.yaml"), directory)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        runner.stop()


def _show(findings: list[Finding]) -> str:
    return "\n".join(f"  {f.check}@{f.target}/{f.subject} {f.status.value}: {f.summary}"
                     + (f" [blocked by {f.blocked_by}]" if f.blocked_by else "") for f in findings)


def _by_code(report: RunReport) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for f in report.findings:
        out.setdefault(f.check, []).append(f)
    return out


@pytest.mark.parametrize("kind", [TargetKind.GUEST, TargetKind.LINUX], ids=["guests", "baremetal"])
def test_healthy_pair_passes_with_real_numbers(vlab, kind):
    vlab.reset()
    report = vlab.run(kind)
    found = _by_code(report)
    assert set(found) == set(VALIDATE), _show(report.findings)
    bad = [f for f in report.findings if f.status not in (Status.PASS, Status.SKIP)
           or (f.status is Status.SKIP and f.blocked_by)]
    assert not bad, _show(report.findings)
    names = [t.name for t in vlab.inventory.targets if t.kind is kind]
    pair = f"{names[0]}<->{names[1]}"
    bw = found["RW601"][0]
    assert bw.status is Status.PASS and bw.subject == pair and bw.target == names[1]
    rows = bw.details["table"]["rows"]
    assert len(rows) >= 20 and all(isinstance(r[1], float) for r in rows)
    assert bw.details["link_gbps"] == 100.0 and 90 <= bw.details["avg_large_gbps"] <= 100
    lat = found["RW602"][0]
    assert lat.status is Status.PASS and 0.5 < lat.details["t_typical_us"] < 3.0
    mpi = found["RW603"][0]
    says = {row[0]: row[3] for row in mpi.details["table"]["rows"]}
    assert mpi.status is Status.PASS and set(says.values()) == {"rdma"}, mpi.details["table"]
    env = found["RW604"][0]
    assert env.status is Status.PASS and env.details["mpirun"].startswith("mpirun ")
    assert "UCX_IB_TRAFFIC_CLASS=106" in env.details["mpirun"] and "UCX_IB_SL=3" in env.details["mpirun"]
    assert env.details["hostfile"].splitlines() == [f"{n} slots=1" for n in names[:2]]
    incast = found["RW605"][0]
    assert incast.status is Status.PASS
    steps = incast.details["incast"]
    assert {s["streams"] for s in steps} == {1, 2, 4} and all(s["gbps"] > 50 for s in steps)
    pfc = found["RW606"][0]
    if kind is TargetKind.LINUX:  # the PF shows the port's priority counters
        assert pfc.status is Status.PASS and sum(r[2] + r[3] for r in pfc.details["table"]["rows"]) > 0
    else:  # a VF does not
        assert pfc.status is Status.SKIP and pfc.blocked_by is None
    # nothing is left running on the receiver
    assert vlab.sh(names[1], "pgrep -af ib_ ; echo rc=$?").strip().endswith("rc=1")


def _rw603(report: RunReport) -> Finding:
    (f,) = [f for f in report.findings if f.check == "RW603"]
    return f


def _kinds_saying_tcp(f: Finding) -> set[str]:
    return {row[0] for row in f.details["table"]["rows"] if row[3] == "tcp"}


def test_rw603_fails_with_three_kinds_of_evidence_when_a_guest_has_no_rdma_device(vlab):
    vlab.reset()
    vlab.inject("RW402@compute-02")  # MLNX_OFED installed, its driver never loaded
    f = _rw603(vlab.run(codes=["RW603"]))
    assert f.status is Status.FAIL, f.summary
    assert _kinds_saying_tcp(f) == {"UCX transports", "counters", "latency"}, f.details["table"]
    assert "not available" in f.summary or "no RDMA" in f.summary or "UCX" in f.summary
    assert len(f.evidence) >= 4  # UCX lines, counters on both nodes, the latency


def test_rw603_fails_when_ucx_net_devices_names_the_wrong_device(vlab):
    vlab.reset()
    f = _rw603(vlab.run(codes=["RW603"], policy=Policy(mpi_env="UCX_NET_DEVICES=mlx5_1:1")))
    assert f.status is Status.FAIL, f.summary
    assert _kinds_saying_tcp(f) == {"UCX transports", "counters", "latency"}, f.details["table"]
    assert "mlx5_1:1" in f.summary  # UCX's own warning is quoted


def test_rw603_fails_when_the_gid_index_points_at_a_link_local_gid(vlab):
    vlab.reset()
    # index 1: the MAC-derived link-local GID (RoCE v2 type, no IPv4)
    gids = vlab.sh("compute-02", "show_gids")
    assert re.search(r"^mlx5_0\s+1\s+1\s+fe80:", gids, re.M), gids
    f = _rw603(vlab.run(codes=["RW603"], policy=Policy(mpi_env="UCX_IB_GID_INDEX=1")))
    assert f.status is Status.FAIL, f.summary
    assert _kinds_saying_tcp(f) == {"UCX transports", "counters", "latency"}, f.details["table"]


def test_incast_collapses_without_switch_pfc_and_holds_with_it(vlab):
    vlab.reset()
    vlab.inject("RW501")  # the switch has PFC off
    collapsed = next(f for f in vlab.run(codes=["RW605"]).findings if f.check == "RW605")
    assert collapsed.status is Status.FAIL and "collapses" in collapsed.summary, collapsed.summary
    by = {(s["size"], s["streams"]): s["gbps"] for s in collapsed.details["incast"]}
    assert by[(1048576, 4)] < 0.5 * by[(1048576, 1)]
    vlab.reset()
    held = next(f for f in vlab.run(codes=["RW605"]).findings if f.check == "RW605")
    assert held.status is Status.PASS, held.summary
    by = {(s["size"], s["streams"]): s["gbps"] for s in held.details["incast"]}
    assert by[(1048576, 4)] >= 0.9 * by[(1048576, 1)]


def test_no_perftest_server_is_left_after_a_failed_client(vlab):
    vlab.reset()
    # the sender lacks ib_send_bw: the receiver's server was started first and waits for a client that
    # never comes; the wizard kills it and says so
    vlab.lab.world.guests["compute-01"].missing_tools.add("ib_send_bw")
    try:
        report = vlab.run(codes=["RW601"])
    finally:
        vlab.lab.world.guests["compute-01"].missing_tools.discard("ib_send_bw")
    f = next(f for f in report.findings if f.check == "RW601")
    assert f.status is Status.FAIL and "leftover server was killed" in f.summary, f.summary
    assert vlab.sh("compute-02", "pgrep -af ib_send_bw; echo rc=$?").strip().endswith("rc=1")
    # the sender's port is down: the client fails after connecting; nothing is left either
    vlab.reset()
    vlab.inject("RW403@compute-01")
    f = next(f for f in vlab.run(codes=["RW601"]).findings if f.check == "RW601")
    assert f.status is Status.FAIL, f.summary
    assert vlab.sh("compute-02", "pgrep -af ib_; echo rc=$?").strip().endswith("rc=1")
