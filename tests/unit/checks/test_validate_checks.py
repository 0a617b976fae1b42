"""Validate-stage checks (RW601–RW606) on recorded outputs.

Analyze cases (`target=None`) read the corpus as a user pastes it. Doctor cases carry what
roce_wizard/engine/pairs.py hands a check for a pair: the engine-made `validate_pair` (both nodes, the
link speed) and the measurement (`validate_perftest`, `validate_mpi`, `validate_incast`), with
outputs rendered by the lab's guests (lab/guest/ through the lab shell) and parsed by the real
parsers.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from roce_wizard.checklib.pairs import mpi_environment
from roce_wizard.lab import guest as G
from roce_wizard.lab import scenarios, shell
from roce_wizard.lab.proto import Ctx
from roce_wizard.model import Policy, Status
from roce_wizard.probes.pairs import counter_delta, parse_counter_lines
from roce_wizard.parsers import PARSERS
from tests.checkcases import Case, guest, run_case
from tests.conftest import corpus_text

PASS, FAIL, WARN, SKIP, ERROR = Status.PASS, Status.FAIL, Status.WARN, Status.SKIP, Status.ERROR


def _node(name: str, gid: int = 3, problems: tuple[str, ...] = ()) -> dict:
    return {"node": name, "device": "mlx5_0", "port": 1, "netdev": "ens256", "ip": "192.168.100.1",
            "gid_index": gid, "speed_gbps": 100.0, "problems": list(problems)}


def _pair(link: float | None = 100.0, *problems: str) -> dict:
    return {"pair": "compute-01<->compute-02", "sender": "compute-01", "receiver": "compute-02",
            "nodes": [_node("compute-01"), _node("compute-02", problems=problems)], "link_gbps": link}


def _sh(world, name: str, line: str) -> str:
    ctx = Ctx(world=world, target=name, files=G.files(world, name), env={})
    reply = shell.run(line, ctx, G.programs(world, name),
                      write_file=lambda p, c: G.write_file(world, name, p, c), esxi=False)
    return reply.stdout + reply.stderr


def _mpi(fault: str | None = None) -> dict:
    """A lab MPI run read the way the `mpi_osu` pair probe reads it (counters around it on both nodes)."""
    world = scenarios.healthy(2)
    if fault:
        (G.FAULTS | G.VALIDATE_FAULTS)[fault].apply(world, "compute-02")
    counters = ("for f in port_xmit_data port_rcv_data; do echo \"$f $(cat /sys/class/infiniband/mlx5_0/ports/1/"
                "counters/$f 2>/dev/null || echo -)\"; done; for n in ens192 ens256; do echo \"net.$n "
                "$(cat /sys/class/net/$n/statistics/tx_bytes) $(cat /sys/class/net/$n/statistics/rx_bytes)\"; done")
    before = {n: parse_counter_lines(_sh(world, n, counters)) for n in ("compute-01", "compute-02")}
    out = _sh(world, "compute-01", "mpirun -np 2 --host 192.168.100.11,192.168.100.12 -x UCX_NET_DEVICES=mlx5_0:1 "
              "-x UCX_LOG_LEVEL=info osu_latency")
    after = {n: parse_counter_lines(_sh(world, n, counters)) for n in ("compute-01", "compute-02")}
    return {"validate_pair": _pair(),
            "validate_mpi": {"command": "mpirun …", "exit_status": 0, "output": out,
                             "deltas": {n: counter_delta({"sysfs": before[n]}, {"sysfs": after[n]}) for n in before}},
            "openmpi_ucx_log": PARSERS["openmpi_ucx_log"].parse(out), "osu": None}


def _perftest(text: str) -> dict:
    parsed = PARSERS["perftest"].parse(text)
    return {"perftest": parsed, "validate_pair": _pair(),
            "validate_perftest": {"test": parsed.get("test"), "parsed": parsed, "client_output": text,
                                  "server_output": "", "leftover_killed": False}}


def _incast(collapse: bool, drops: int = 0, pauses: int = 800, visible: bool = True) -> dict:
    steps = []
    for size in (65536, 1048576):
        for n in (1, 2, 4):
            agg = 96.0 if n == 1 or not collapse else 96.0 / (1 + 0.9 * (n - 1))
            steps.append({"streams": n, "size": size, "gbps": round(agg, 2), "failed_streams": 0,
                          "receiver": {"rx_discards_phy": drops if n > 1 else 0, "rx_out_of_buffer": 0,
                                       "tx_prio3_pause": 0} if visible else {},
                          "sender": {"rx_prio3_pause": pauses if n > 1 else 0} if visible else {}})
    return {"validate_pair": _pair(), "validate_incast": {"sender": "compute-01", "receiver": "compute-02",
                                                           "steps": steps, "pfc_visible": visible}}


BW_100G = corpus_text("perftest/blog-pve-ib_write_bw-bidir-100g-cpufreq-warning.txt")
LAT = corpus_text("perftest/dgx-spark-ib_write_lat-forcelink-IB.txt")

CASES: list[Case] = [
    # RW601: seed-like 98 Gb/s on a 100 Gb/s link; the same run judged against a 200 Gb/s link; a failed run
    Case("RW601", "corpus-98g-of-100g", PASS, facts=_perftest(BW_100G), target=guest("compute-02")),
    Case("RW601", "corpus-98g-of-200g", FAIL, facts={**_perftest(BW_100G), "validate_pair": _pair(200.0)},
         target=guest("compute-02"), summary_has="of the 200 Gb/s link"),
    Case("RW601", "corpus-rtr-fail", FAIL, facts=_perftest(corpus_text("perftest/k8s-rdma-shared-72-zero-gid-rtr-fail.txt")),
         target=guest("compute-02"), summary_has="failed"),
    Case("RW601", "node-without-device", FAIL, facts={"validate_pair": _pair(100.0, "no RDMA device serves ens256")},
         target=guest("compute-02"), summary_has="cannot measure"),
    Case("RW601", "analyze-no-link-speed", SKIP, outputs={"perftest": BW_100G}),
    # RW602: 1.47 us (DGX Spark, --force-link IB on an Ethernet port); the same against a 1 us policy
    Case("RW602", "corpus-1.47us", PASS, facts=_perftest(LAT), target=guest("compute-02")),
    Case("RW602", "corpus-1.47us-over-1us", FAIL, facts=_perftest(LAT), target=guest("compute-02"),
         policy=Policy(max_small_msg_lat_us=1.0)),
    Case("RW602", "analyze-a-bw-output", SKIP, outputs={"perftest": BW_100G}),
    # RW603: the lab's healthy run; TCP because a site ucx.conf limits UCX_TLS; the corpus' shm-only UCX log
    Case("RW603", "lab-rdma", PASS, facts=_mpi(), target=guest("compute-02")),
    Case("RW603", "lab-ucx-tls-tcp", FAIL, facts=_mpi("RW603"), target=guest("compute-02"), summary_has="over TCP"),
    Case("RW603", "lab-no-rdma-device", FAIL, facts=_mpi("RW402"), target=guest("compute-02"),
         summary_has="over TCP"),
    Case("RW603", "corpus-shm-only", FAIL,
         outputs={"openmpi_ucx_log": corpus_text("openmpi_ucx_log/ucx-4742-no-am-transport-shm-only.txt")}),
    # RW604: ucx_info -c as pasted; a pair whose node config pins a link-local GID index
    Case("RW604", "analyze-defaults", PASS, outputs={"ucx_config": "UCX_TLS=all\nUCX_NET_DEVICES=all\n"
                                                     "UCX_IB_TRAFFIC_CLASS=auto\nUCX_IB_SL=auto\n"}),
    Case("RW604", "analyze-wrong-class", FAIL, outputs={"ucx_config": "UCX_TLS=all\nUCX_NET_DEVICES=all\n"
                                                        "UCX_IB_TRAFFIC_CLASS=96\nUCX_IB_SL=auto\n"}),
    Case("RW604", "pair-ok", PASS, target=guest("compute-02"),
         facts={"validate_pair": _pair(), "ucx_config": {"compute-01": {"UCX_IB_GID_INDEX": "auto"},
                                                         "compute-02": {"UCX_IB_GID_INDEX": "3"}}}),
    Case("RW604", "pair-conf-pins-gid-0", FAIL, target=guest("compute-02"), summary_has="UCX_IB_GID_INDEX=0",
         facts={"validate_pair": _pair(), "ucx_config": {"compute-01": {}, "compute-02": {"UCX_IB_GID_INDEX": "0"}}}),
    # RW605: incast holds with PFC, collapses without
    Case("RW605", "holds", PASS, facts=_incast(False), target=guest("compute-02")),
    Case("RW605", "collapses", FAIL, facts=_incast(True), target=guest("compute-02"), summary_has="collapses"),
    # RW606: pauses on priority 3 and no drops; drops; a VF (n/a); a pasted ethtool -S without PFC lines
    Case("RW606", "pauses-no-drops", PASS, facts=_incast(False), target=guest("compute-02")),
    Case("RW606", "drops", FAIL, facts=_incast(False, drops=3000), target=guest("compute-02"),
         summary_has="rx_discards_phy"),
    Case("RW606", "vf-na", SKIP, facts=_incast(False, visible=False), target=guest("compute-02")),
    Case("RW606", "corpus-no-prio-pause", SKIP,
         outputs={"ethtool_stats": corpus_text("ethtool_stats/mlx5-pause-grep-global-pause-all-zero.txt")}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case(case: Case):
    run_case(case)


def test_rw603_names_each_kind_of_evidence():
    findings = run_case(CASES[10])  # no RDMA device on compute-02
    says = {row[0] for row in findings[0].details["table"]["rows"] if row[3] == "tcp"}
    assert says == {"UCX transports", "counters", "latency"}


def test_mpi_environment_per_node_and_from_policy():
    envs = mpi_environment([_node("a", 3), _node("b", 5)], Policy(roce_dscp=31, pfc_priority=3))
    assert envs["a"] == {"UCX_NET_DEVICES": "mlx5_0:1", "UCX_IB_GID_INDEX": "3", "UCX_IB_TRAFFIC_CLASS": "126",
                         "UCX_IB_SL": "3"}  # DSCP 31 (seed 004's) << 2 | ECT(0) -> priority 3
    assert envs["b"]["UCX_IB_GID_INDEX"] == "5"


def test_rw604_prints_an_mpmd_line_when_jobs_pin_a_gid_index_that_differs():
    pair = {**_pair(), "nodes": [_node("compute-01", 3), _node("compute-02", 5)]}
    findings = run_case(Case("RW604", "differ-pinned", WARN, target=guest("compute-02"),
                             policy=Policy(mpi_env="UCX_TLS=rc,sm UCX_IB_GID_INDEX=3"),
                             facts={"validate_pair": pair, "ucx_config": {}}, summary_has="jobs pin the GID index"))
    line = findings[0].details["mpirun"]
    assert " : " in line and "UCX_IB_GID_INDEX=3" in line and "UCX_IB_GID_INDEX=5" in line


def test_rw604_leaves_a_differing_gid_index_to_ucx_when_nothing_pins_it():
    """UCX_IB_GID_INDEX=auto (and NCCL >= 2.21.5) pick each node's RoCE v2 IPv4 GID themselves."""
    pair = {**_pair(), "nodes": [_node("compute-01", 3), _node("compute-02", 5)]}
    [f] = run_case(Case("RW604", "differ-auto", PASS, target=guest("compute-02"),
                        facts={"validate_pair": pair, "ucx_config": {"compute-01": {"UCX_IB_GID_INDEX": "auto"},
                                                                      "compute-02": {"UCX_IB_GID_INDEX": "auto"}}},
                        summary_has="matters only to a job that pins it"))
    line = f.details["mpirun"]
    assert " : " not in line and "UCX_IB_GID_INDEX" not in line and "--hostfile hostfile" in line
    # NCCL: the GID index only in the set for NCCL older than 2.21.5
    assert f.details["nccl_env"]["compute-02"] == {"NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_TC": "106",
                                                       "NCCL_SOCKET_IFNAME": "=ens256"}  # DSCP 26 with ECT(0)
    assert f.details["nccl_env_before_2_21_5"]["compute-02"]["NCCL_IB_GID_INDEX"] == "5"


@pytest.mark.skipif(shutil.which("ucx_info") is None, reason="ucx_info (Debian ucx-utils) is not installed")
def test_the_real_ucx_default_gid_index_is_auto():
    """The oracle behind RW604 leaving the index to UCX: the real ucx_info -c prints UCX_IB_GID_INDEX=auto."""
    out = subprocess.run(["ucx_info", "-c"], capture_output=True, text=True, timeout=60, check=False).stdout
    config = PARSERS["ucx_config"].parse(out)["config"]
    assert config["UCX_IB_GID_INDEX"] == "auto"


def test_rw601_mtu_hint_says_active_mtu_is_local():
    """active_mtu follows the node's own netdev; a small switch hop never lowers it."""
    case = next(c for c in CASES if c.id == "RW601-corpus-98g-of-200g")
    fix = next(f for f in run_case(case) if f.status is FAIL).fix
    assert "1024 means a hop" not in fix and "1024 means this node's own netdev MTU is below 4200" in fix
    assert "RW504: a small switch hop drops 4 KB frames without lowering active_mtu" in fix
