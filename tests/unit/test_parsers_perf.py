"""perf parsers: perftest, OSU micro-benchmarks, UCX logs of an MPI run (roce_wizard/parsers/perf/).

Every corpus sample of the three kinds is asserted on real facts; the seed texts are copied exactly; the
unit-conversion and UCX-format fixtures that are not from the corpus say where they come from.
"""

from __future__ import annotations

import pytest

import roce_wizard.parsers.perf as perf
from tests.conftest import CORPUS, corpus_files, corpus_text


ParseError = perf.ParseError
PARSERS = perf.PARSERS
KINDS = ("perftest", "osu", "openmpi_ucx_log")
CORPUS_KIND = {"perftest": "perftest", "osu_benchmarks": "osu", "openmpi_ucx_log": "openmpi_ucx_log"}
PERF_CORPUS = [(f, CORPUS_KIND[d]) for d in CORPUS_KIND for f in corpus_files(d)]
OTHER_CORPUS = sorted(
    f"{p.parent.name}/{p.name}" for p in CORPUS.glob("*/*.txt") if p.parent.name not in CORPUS_KIND
)


def scores(text: str) -> dict[str, int]:
    return {kind: PARSERS[kind].sniff(text) for kind in KINDS}



# Seed 000 (VMware RoCE SR-IOV study), Figure 21, lines 440-491, copied exactly (trailing spaces and tabs kept).
SEED000_SEND_BW = "\n".join([
    '```',
    '[root@compute-02 ~]$ ib_send_bw -a -report_gbits -d mlx5_1 compute-03',
    '```',
    '',
    '```',
    '-----  ',
    '                Send BW Test  ',
    'Dual-port       : OFF      Device           : mlx5_1  ',
    'Number of qps  : 1        Transport type  : IB  ',
    'Connection type: RC       Using SRQ       : OFF  ',
    'PCIe relax order: ON  ',
    'ibv_wr* API    : ON  ',
    'TX depth       : 128  ',
    'CQ Moderation  : 100  ',
    'Mtu            : 4096[B]  ',
    'Link type      : Ethernet  ',
    'GID index      : 3  ',
    'Max inline data: 0[B]  ',
    'rdma_cm QPs   : OFF  ',
    'Data ex. Method: Ethernet  ',
    '-----  ',
    'local address: LID 0000 QPN 0x00e9 PSN 0xba8f4c  ',
    'GID: 00:00:00:00:00:00:00:00:255:255:192:168:04:02  ',
    'remote address: LID 0000 QPN 0x00e9 PSN 0x296312  ',
    'GID: 00:00:00:00:00:00:00:00:255:255:192:168:04:03  ',
    '  ',
    '#bytes  #iterations  BW peak[Gb/sec]  BW average[Gb/sec]  MsgRate[Mpps]  ',
    '2       1000         0.085666         0.082800            5.175012  ',
    '4       1000         0.17             0.17                5.228020  ',
    '8       1000         0.35             0.35                5.443561  ',
    '16      1000         0.70             0.70                5.437884  ',
    '32      1000         1.40             1.27                4.955672  ',
    '64      1000         2.79             2.78                5.436817  ',
    '128     1000         5.58             5.57                5.443363  ',
    '256     1000         11.17            10.25               5.003909  ',
    '512     1000         22.21            22.16               5.410438  ',
    '1024    1000         43.78            43.69               5.333671  ',
    '2048    1000         69.26            64.76               3.952334  ',
    '4096    1000         91.23            88.17               2.690763  ',
    '8192    1000         93.85            93.84               1.431817  ',
    '16384   1000         95.31            95.30               0.727082  ',
    '32768   1000         96.56            96.56               0.368339  ',
    '65536   1000         96.64            96.63               0.184312  ',
    '131072  1000         96.73            96.73               0.092252  ',
    '262144  1000         96.40            96.39               0.045963  ',
    '524288  1000         94.98            94.98               0.022644  ',
    '1048576 1000         95.49            95.20               0.011349  ',
    '2097152 1000         95.78            95.51               0.005693  ',
    '4194304 1000         96.06            95.85               0.002857  ',
    '8388608 1000         96.33            96.15               0.001433  ',
    '-----',
    '```',
])

# Seed 000, Figure 22, lines 497-558, copied exactly (trailing spaces and tabs kept).
SEED000_SEND_LAT = "\n".join([
    '```',
    '[root@compute-02 ~]$ ib_send_lat -a --report_gbits -d mlx5_1 compute-03',
    '```',
    '',
    '---',
    '',
    '```',
    '',
    'Send Latency Test',
    'Dual-port      : OFF      Device       : mlx5_1',
    'Number of qps  : 1        Transport type : IB',
    'Connection type : RC      Using SRQ    : OFF',
    'PCIe relax order: ON',
    'ibv_wr* API    : ON',
    'TX depth       : 1',
    'Mtu            : 4096[B]',
    'Link type      : Ethernet',
    'GID index      : 3',
    'Max inline data : 236[B]',
    'rdma_cm QPs   : OFF',
    'Data ex. method : Ethernet',
    '',
    '```',
    '',
    '---',
    '',
    '```',
    '',
    'local address: LID 0000 QPN 0x00ea PSN 0x8b939c',
    'GID: 00:00:00:00:00:00:00:00:255:255:192:168:04:02',
    'remote address: LID 0000 QPN 0x00ea PSN 0x6214c1',
    'GID: 00:00:00:00:00:00:00:00:255:255:192:168:04:03',
    '',
    '```',
    '',
    '---',
    '',
    '#bytes\t#iterations\tt_min[usec]\tt_max[usec]\tt_typical[usec]\tt_avg[usec]\tt_stdev[usec]\t99%[usec]\t99.9%[usec]',
    '2\t1000\t1.98\t5.08\t2.04\t2.06\t0.11\t2.28\t5.08',
    '4\t1000\t1.99\t4.41\t2.03\t2.04\t0.10\t2.20\t4.41',
    '8\t1000\t1.98\t4.39\t2.03\t2.04\t0.12\t2.17\t4.39',
    '16\t1000\t1.99\t3.79\t2.04\t2.05\t0.07\t2.18\t3.79',
    '32\t1000\t2.02\t6.10\t2.07\t2.08\t0.10\t2.23\t6.10',
    '64\t1000\t2.09\t4.55\t2.14\t2.15\t0.12\t2.26\t4.55',
    '128\t1000\t2.12\t4.14\t2.18\t2.19\t0.12\t2.42\t4.14',
    '256\t1000\t2.56\t4.89\t2.62\t2.63\t0.12\t2.82\t4.89',
    '512\t1000\t2.63\t4.91\t2.68\t2.71\t0.13\t3.33\t4.91',
    '1024\t1000\t2.76\t6.15\t2.83\t2.86\t0.15\t3.10\t6.15',
    '2048\t1000\t3.01\t5.15\t3.11\t3.14\t0.15\t3.63\t5.15',
    '4096\t1000\t3.55\t5.83\t3.67\t3.69\t0.11\t3.91\t5.83',
    '8192\t1000\t4.23\t5.98\t4.41\t4.41\t0.10\t4.63\t5.98',
    '16384\t1000\t5.58\t8.74\t5.86\t5.88\t0.18\t6.65\t8.74',
    '32768\t1000\t7.73\t9.22\t7.98\t7.98\t0.11\t8.23\t9.22',
    '65536\t1000\t10.42\t12.25\t10.66\t10.67\t0.11\t10.93\t12.25',
    '131072\t1000\t15.78\t18.00\t16.04\t16.06\t0.14\t16.38\t18.00',
    '262144\t1000\t27.24\t31.29\t27.89\t27.92\t0.26\t28.68\t31.29',
    '524288\t1000\t49.03\t51.14\t49.92\t49.94\t0.33\t50.87\t51.14',
    '1048576\t1000\t93.67\t97.21\t95.21\t95.25\t0.60\t96.73\t97.21',
    '2097152\t1000\t180.64\t184.85\t182.59\t182.56\t0.71\t184.18\t184.85',
    '4194304\t1000\t354.99\t361.64\t356.99\t357.02\t0.76\t359.06\t361.64',
    '8388608\t1000\t703.53\t712.74\t706.95\t706.86\t1.06\t709.32\t712.74',
    '',
])

# Seed 001 (Sandia), appendix A.1 incast script: the seed's only perftest content is this driver, no output, lines 448-457, copied exactly (trailing spaces and tabs kept).
SEED001_INCAST_SCRIPT = "\n".join([
    ' parser.add_argument("--sources", default="", help="source hostnames in slurm format")',
    ' parser.add_argument("--outfile", default="traffic.out", help="output filename")',
    ' parser.add_argument("--max-streams", default="10", help="max number of streams (default 10)")',
    ' parser.add_argument("--options", default="", help="additional arguments to test program")',
    '  parser.add_argument("--client-options", default="", help="additional arguments to test client")',
    ' parser.add_argument("--server-options", default="", help="additional arguments to test server")',
    ' parser.add_argument("--port", default=11000, type=int, help="first in sequential block of ports used")',
    ' parser.add_argument("--test", default="ib_write_bw", help="should be ib_write_bw, ib_send_bw or iperf3")',
    ' args = parser.parse_args()',
    ' buffsize=0',
])

# Seed 004: the RoCE test is described in prose; the seed holds no perftest output, lines 172-174, copied exactly (trailing spaces and tabs kept).
SEED004_TEST_PROSE = "\n".join([
    'Test RoCE connection',
    '',
    'To test the connection, execute ib_send_lat --disable_pcie_relaxed -F on one node (the server) and ib_send_lat --disable_pcie_relaxed -F <ip-of-the-server> on another one. On my cluster, I have latencies around 2 micro seconds. If yours are a lot higher, then it might mean that RoCE is not working properly.',
])

# Seed 004: the mpirun line with the UCX variables; no UCX log and no OSU output follow it in the seed, lines 316-320, copied exactly (trailing spaces and tabs kept).
SEED004_MPIRUN = "\n".join([
    '$ mpirun --np 12 --hostfile /path/to/hostfile \\',
    '       --mca plm_rsh_agent "ssh -q -o StrictHostKeyChecking=no" \\',
    '       -x UCX_NET_DEVICES=mlx5_0:1 \\',
    '       -x UCX_IB_SL=3 \\',
    '       -x UCX_IB_TRAFFIC_CLASS=124 \\',
])


# ------------------------------------------------------------------------------------------------
# every corpus sample: parses, and its own sniffer wins
# ------------------------------------------------------------------------------------------------


def test_corpus_has_the_samples_these_tests_name():
    assert len(corpus_files("perftest")) >= 4
    assert len(corpus_files("osu_benchmarks")) >= 2
    assert len(corpus_files("openmpi_ucx_log")) >= 2


@pytest.mark.parametrize(("relpath", "kind"), PERF_CORPUS)
def test_corpus_sample_sniffs_as_its_kind(relpath, kind):
    got = scores(corpus_text(relpath))
    assert got[kind] > 0
    assert all(got[kind] > score for other, score in got.items() if other != kind), got


@pytest.mark.parametrize(("relpath", "kind"), PERF_CORPUS)
def test_corpus_sample_parses(relpath, kind):
    facts = PARSERS[kind].parse(corpus_text(relpath))
    assert isinstance(facts, dict)
    assert isinstance(facts.get("rows", []), list)


@pytest.mark.parametrize("relpath", OTHER_CORPUS)
def test_unrelated_corpus_samples_score_zero(relpath):
    assert scores(corpus_text(relpath)) == {kind: 0 for kind in KINDS}


UNRELATED = """hca_id:\tmlx5_0
\ttransport:\t\t\tInfiniBand (0)
\tfw_ver:\t\t\t\t16.35.2000
\t\tport:\t1
\t\t\tstate:\t\t\tPORT_ACTIVE (4)
\t\t\tactive_mtu:\t\t4096 (5)
\t\t\tlink_layer:\t\tEthernet
"""


@pytest.mark.parametrize("kind", KINDS)
def test_unrelated_text_scores_zero_and_does_not_parse(kind):
    assert PARSERS[kind].sniff(UNRELATED) == 0
    assert PARSERS[kind].sniff("") == 0
    with pytest.raises(ParseError):
        PARSERS[kind].parse(UNRELATED)


# ------------------------------------------------------------------------------------------------
# perftest corpus facts
# ------------------------------------------------------------------------------------------------


def test_pve_ib_write_bw_bidirectional():
    f = perf.parse_perftest(corpus_text("perftest/blog-pve-ib_write_bw-bidir-100g-cpufreq-warning.txt"))
    assert f["test"] == "ib_write_bw"
    assert f["bidirectional"] is True
    assert f["device"] == "mlx5_0"
    assert f["connection"] == "RC"
    assert f["link_type"] == "Ethernet"
    assert f["mtu"] == 4096
    assert f["gid_index"] == 4
    assert f["rdma_cm"] is False
    assert f["unit"] == "Gb/sec"
    assert f["local_gid"] == "00:00:00:00:00:00:00:00:00:00:255:255:192:168:06:116"
    assert f["remote_gid"] == "00:00:00:00:00:00:00:00:00:00:255:255:192:168:06:106"
    assert f["local_gid_ipv4"] == "192.168.6.116"
    assert f["remote_gid_ipv4"] == "192.168.6.106"
    assert f["local_gid_zero"] is False
    assert len(f["rows"]) == 1
    row = f["rows"][0]
    assert row["bytes"] == 65536
    assert row["iterations"] == 560845
    assert row["bw_avg_gbps"] == pytest.approx(98.02)
    assert row["msg_rate_mpps"] == pytest.approx(0.186950)
    # "WARNING: BW peak won't be measured": the printed 0.00 is not a peak
    assert row["bw_peak"] == 0.0
    assert row["bw_peak_gbps"] is None
    assert f["peak_measured"] is False
    # the CPU-frequency line sits inside the table: a warning, not a row, not an error
    assert any(w.startswith("Conflicting CPU frequency values detected") for w in f["warnings"])
    assert any("BW peak won't be measured" in w for w in f["warnings"])
    assert f["error"] is None and f["errors"] == []


def test_dgx_spark_force_link_ib_latency():
    f = perf.parse_perftest(corpus_text("perftest/dgx-spark-ib_write_lat-forcelink-IB.txt"))
    assert f["test"] == "ib_write_lat"
    # --force-link IB: perftest prints IB on an Ethernet port; the parser reports what is printed
    assert f["link_type"] == "IB"
    assert f["device"] == "rocep1s0f1"
    assert f["mtu"] == 1024
    assert f["rdma_cm"] is True
    assert f["data_exchange"] == "rdma_cm"
    assert f["gid_index"] is None  # not printed
    assert f["local_gid"] is None and f["remote_gid"] is None
    assert f["unit"] == "usec"
    assert f["bidirectional"] is None
    [row] = f["rows"]
    assert row["bytes"] == 2
    assert row["iterations"] == 1000
    assert row["t_min_us"] == pytest.approx(1.42)
    assert row["t_max_us"] == pytest.approx(1.93)
    assert row["t_typical_us"] == pytest.approx(1.47)
    assert row["t_avg_us"] == pytest.approx(1.47)
    assert row["t_stdev_us"] == pytest.approx(0.0)
    assert row["p99_us"] == pytest.approx(1.57)
    assert row["p999_us"] == pytest.approx(1.93)
    assert "bw_avg_gbps" not in row
    assert f["error"] is None


def test_k8s_zero_gid_rtr_failure():
    f = perf.parse_perftest(corpus_text("perftest/k8s-rdma-shared-72-zero-gid-rtr-fail.txt"))
    assert f["test"] == "ib_write_bw"  # from the banner (no leading dashed line in this paste)
    assert f["device"] == "mlx5_2"
    assert f["link_type"] == "Ethernet"
    assert f["gid_index"] == 0
    assert f["mtu"] == 1024
    zero = ":".join(["00"] * 16)
    assert f["local_gid"] == zero and f["remote_gid"] == zero
    assert f["local_gid_zero"] is True and f["remote_gid_zero"] is True
    assert f["local_gid_ipv4"] is None
    assert f["local_address"]["qpn"] == "0x003b"
    assert f["rows"] == []
    assert f["error"] == "Failed to modify QP 59 to RTR"
    assert f["errors"] == ["Failed to modify QP 59 to RTR", "Unable to Connect the HCA's through the link"]


def test_couldnt_connect():
    f = perf.parse_perftest(corpus_text("perftest/perftest-228-couldnt-connect.txt"))
    assert f["error"] == "Couldn't connect to 192.168.125.211:18515"
    assert f["errors"][1] == "Unable to open file descriptor for socket connection Unable to init the socket connection"
    assert f["test"] is None  # no banner and no command line in the paste: not guessed
    assert f["rows"] == [] and f["device"] is None and f["link_type"] is None


# ------------------------------------------------------------------------------------------------
# perftest seed facts (exact seed text)
# ------------------------------------------------------------------------------------------------


def test_seed000_ib_send_bw_table():
    got = scores(SEED000_SEND_BW)
    assert got["perftest"] > got["osu"] and got["perftest"] > got["openmpi_ucx_log"]
    f = perf.parse_perftest(SEED000_SEND_BW)
    assert f["test"] == "ib_send_bw"
    assert f["command"] == "ib_send_bw -a -report_gbits -d mlx5_1 compute-03"
    assert f["server"] == "compute-03" and f["side"] == "client"
    assert f["device"] == "mlx5_1"
    assert f["gid_index"] == 3
    assert f["mtu"] == 4096
    assert f["link_type"] == "Ethernet"
    assert f["connection"] == "RC"
    assert f["rdma_cm"] is False
    assert f["bidirectional"] is False
    assert f["unit"] == "Gb/sec"
    # the seed's document lost two bytes of each GID: kept as printed, no IPv4 guessed
    assert f["local_gid"] == "00:00:00:00:00:00:00:00:255:255:192:168:04:02"
    assert f["local_gid_ipv4"] is None
    sizes = [r["bytes"] for r in f["rows"]]
    assert sizes == [2 ** n for n in range(1, 24)]
    assert all(r["iterations"] == 1000 for r in f["rows"])
    by_size = {r["bytes"]: r for r in f["rows"]}
    assert by_size[2]["bw_peak_gbps"] == pytest.approx(0.085666)
    assert by_size[2]["bw_avg_gbps"] == pytest.approx(0.082800)
    assert by_size[65536]["bw_avg_gbps"] == pytest.approx(96.63)
    assert by_size[8388608]["bw_peak_gbps"] == pytest.approx(96.33)
    assert by_size[8388608]["bw_avg_gbps"] == pytest.approx(96.15)
    assert by_size[8388608]["msg_rate_mpps"] == pytest.approx(0.001433)
    # RW601's reading of the seed: ~95-96 Gb/s at the large sizes of a 100 Gb/s link
    assert min(r["bw_avg_gbps"] for r in f["rows"] if r["bytes"] >= 1048576) == pytest.approx(95.20)
    assert f["error"] is None and f["warnings"] == []


def test_seed000_ib_send_lat_table():
    got = scores(SEED000_SEND_LAT)
    assert got["perftest"] > got["osu"] and got["perftest"] > got["openmpi_ucx_log"]
    f = perf.parse_perftest(SEED000_SEND_LAT)
    assert f["test"] == "ib_send_lat"
    assert f["command"] == "ib_send_lat -a --report_gbits -d mlx5_1 compute-03"
    assert f["device"] == "mlx5_1" and f["gid_index"] == 3 and f["mtu"] == 4096
    assert f["unit"] == "usec"
    assert len(f["rows"]) == 23
    first, last = f["rows"][0], f["rows"][-1]
    assert first["bytes"] == 2
    assert first["t_typical_us"] == pytest.approx(2.04)  # RW602 reads this value
    assert first["t_min_us"] == pytest.approx(1.98)
    assert first["t_avg_us"] == pytest.approx(2.06)
    assert first["p99_us"] == pytest.approx(2.28)  # header printed as "99%[usec]" in this seed
    assert first["p999_us"] == pytest.approx(5.08)
    assert last["bytes"] == 8388608
    assert last["t_typical_us"] == pytest.approx(706.95)
    assert last["t_stdev_us"] == pytest.approx(1.06)


def test_seed000_bw_and_lat_pasted_together_are_two_runs():
    f = perf.parse_perftest(SEED000_SEND_BW + "\n" + SEED000_SEND_LAT)
    assert f["test"] == "ib_send_bw"
    assert [r["test"] for r in f["runs"]] == ["ib_send_bw", "ib_send_lat"]
    assert len(f["runs"][0]["rows"]) == 23 and "bw_avg_gbps" in f["runs"][0]["rows"][0]
    assert len(f["runs"][1]["rows"]) == 23 and "t_typical_us" in f["runs"][1]["rows"][0]


def test_seed001_and_seed004_hold_no_perftest_or_osu_output():
    # Seeds 001 and 004 name the tools (incast driver, prose, an mpirun line) but print no output of
    # them: nothing here may be taken for a result.
    for text in (SEED001_INCAST_SCRIPT, SEED004_TEST_PROSE, SEED004_MPIRUN):
        assert scores(text) == {kind: 0 for kind in KINDS}
        for kind in KINDS:
            with pytest.raises(ParseError):
                PARSERS[kind].parse(text)


# ------------------------------------------------------------------------------------------------
# perftest bandwidth units: hand-written fixtures, one per unit
# ------------------------------------------------------------------------------------------------

# Hand-written fixture (layout of perftest's RESULT_FMT with --report_gbits; values invented).
HAND_GBITS = """\
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF\t\tDevice         : mlx5_0
 Number of qps   : 1\t\tTransport type : IB
 Connection type : RC\t\tUsing SRQ      : OFF
 Mtu             : 4096[B]
 Link type       : Ethernet
 GID index       : 3
 rdma_cm QPs\t : OFF
 Data ex. method : Ethernet
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      5000             92.50              90.00\t\t     0.171661
---------------------------------------------------------------------------------------
"""

# Hand-written fixture: perftest before 2024 labelled its default unit "MB/sec" (values invented).
HAND_MB = HAND_GBITS.replace("[Gb/sec]", "[MB/sec]").replace("92.50 ", "11000.00").replace(
    "90.00\t", "10000.00\t")

# Hand-written fixture: perftest since 2024 prints the same default unit as "MiB/sec" (values invented).
HAND_MIB = HAND_MB.replace("[MB/sec]", "[MiB/sec]")


def test_unit_gbits_is_taken_as_is():
    f = perf.parse_perftest(HAND_GBITS)
    assert f["unit"] == "Gb/sec"
    assert f["gid_index"] == 3 and f["rdma_cm"] is False and f["device"] == "mlx5_0"
    assert f["rows"][0]["bw_avg_gbps"] == pytest.approx(90.0)
    assert f["rows"][0]["bw_peak_gbps"] == pytest.approx(92.5)


def test_unit_mib_per_sec_converts_with_2_pow_20():
    f = perf.parse_perftest(HAND_MIB)
    assert f["unit"] == "MiB/sec"
    row = f["rows"][0]
    assert row["bw_avg"] == pytest.approx(10000.0)  # as printed
    assert row["bw_avg_gbps"] == pytest.approx(10000.0 * 8 * 1.048576 / 1000)  # 83.886 Gb/s
    assert row["bw_peak_gbps"] == pytest.approx(11000.0 * 8 * 1.048576 / 1000)


def test_unit_mb_per_sec_is_perftests_old_label_for_mib():
    # perftest computes this column as bytes / 0x100000 whatever the label (src/perftest_parameters.c
    # format_factor; renamed MB/sec -> MiB/sec in 2024, "MB is for Megabytes, this is Mebibyte"), so
    # "MB/sec" converts like "MiB/sec", not with 10^6.
    f = perf.parse_perftest(HAND_MB)
    assert f["unit"] == "MB/sec"
    assert f["rows"][0]["bw_avg_gbps"] == pytest.approx(83.88608)
    assert f["rows"][0]["bw_avg_gbps"] == pytest.approx(perf.parse_perftest(HAND_MIB)["rows"][0]["bw_avg_gbps"])


def test_bw_to_gbps_helper():
    assert perf.bw_to_gbps(100.0, "Gb/sec") == pytest.approx(100.0)
    assert perf.bw_to_gbps(1000.0, "MiB/sec") == pytest.approx(8.388608)
    assert perf.bw_to_gbps(1000.0, "MB/sec") == pytest.approx(8.388608)
    assert perf.bw_to_gbps(1000.0, "furlongs") is None
    assert perf.bw_to_gbps(None, "Gb/sec") is None


# Hand-written fixture: server side of ib_send_bw (perftest prints the waiting box, then the header).
HAND_SERVER = """
************************************
* Waiting for client to connect... *
************************************
---------------------------------------------------------------------------------------
                    Send BW Test
 Dual-port       : OFF\t\tDevice         : mlx5_1
 Number of qps   : 1\t\tTransport type : IB
 Connection type : RC\t\tUsing SRQ      : OFF
 RX depth        : 512
 CQ Moderation   : 100
 Mtu             : 4096[B]
 Link type       : Ethernet
 GID index       : 5
 Max inline data : 0[B]
 rdma_cm QPs\t : OFF
 Data ex. method : Ethernet
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      1000             0.00               23.10\t\t   0.044060
---------------------------------------------------------------------------------------
"""


def test_server_side():
    f = perf.parse_perftest(HAND_SERVER)
    assert f["side"] == "server"
    assert f["test"] == "ib_send_bw"
    assert f["gid_index"] == 5
    assert f["rx_depth"] == 512
    assert f["rows"][0]["bw_avg_gbps"] == pytest.approx(23.10)


# Hand-written fixture: a client that never got a header, pasted with its command line and prompt.
HAND_CMD_ONLY = """[root@node1 ~]# ib_write_bw -d mlx5_0 -x 3 --force-link IB -F --report_gbits 10.1.1.2
Couldn't connect to 10.1.1.2:18515
"""


def test_command_line_supplies_what_the_output_does_not():
    f = perf.parse_perftest(HAND_CMD_ONLY)
    assert f["test"] == "ib_write_bw"
    assert f["device"] == "mlx5_0"
    assert f["gid_index"] == 3
    assert f["force_link"] == "IB"
    assert f["server"] == "10.1.1.2" and f["side"] == "client"
    assert f["error"] == "Couldn't connect to 10.1.1.2:18515"
    assert f["link_type"] is None  # never printed: not taken from --force-link


# ------------------------------------------------------------------------------------------------
# OSU
# ------------------------------------------------------------------------------------------------


def test_azure_osu_bw_with_kernel_line_and_time_output():
    f = perf.parse_osu(corpus_text("osu_benchmarks/azure-flux-osu-bw-with-kernel-createqp-warning.txt"))
    assert f["benchmark"] == "osu_bw"
    assert f["version"] == "5.8"
    assert f["unit"] == "MB/s"
    assert len(f["rows"]) == 23
    assert f["rows"][0] == {"bytes": 1, "value": pytest.approx(3.88), "unit": "MB/s"}
    assert f["rows"][-1]["bytes"] == 4194304 and f["rows"][-1]["value"] == pytest.approx(24453.38)
    assert max(r["value"] for r in f["rows"]) == pytest.approx(24617.71)
    assert all(r["unit"] == "MB/s" for r in f["rows"])


def test_impi_tcp_osu_latency():
    f = perf.parse_osu(corpus_text("osu_benchmarks/impi-tcp-osu-latency-13us-reference-for-fallback.txt"))
    assert f["benchmark"] == "osu_latency"
    assert f["version"] == "5.4.3"
    assert f["rows"][0] == {"bytes": 0, "value": pytest.approx(13.55), "unit": "us"}
    assert len(f["rows"]) == 24
    assert f["rows"][-1]["bytes"] == 4194304 and f["rows"][-1]["value"] == pytest.approx(1607.94)
    assert "I_MPI_FABRICS shm:tcp" in f["command"]


# Hand-written fixtures in the layouts of OMB's print_header (c/util/osu_util.c); values invented.
HAND_OSU_MBW_MR = """# OSU MPI Multiple Bandwidth / Message Rate Test v5.8
# [ pairs: 1 ] [ window size: 64 ]
# Size                  MB/s        Messages/s
1                       2.55        2548675.34
2                       5.12        2558331.12
"""
HAND_OSU_ALLREDUCE_FULL = """# OSU MPI Allreduce Latency Test v7.1
# Datatype: MPI_INT.
# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations
4                       3.10              2.95              3.31        1000
8                       3.12              2.97              3.30        1000
"""
HAND_OSU_CUDA = """# OSU MPI-CUDA Bi-Directional Bandwidth Test v5.6.2
# Send Buffer on DEVICE (D) and Receive Buffer on DEVICE (D)
# Size      Bandwidth (MB/s)
1                       0.45
"""
HAND_OSU_BARRIER = """# OSU MPI Barrier Latency Test v5.8
# Avg Latency(us)
             4.21
"""


def test_osu_multi_column_and_variants():
    f = perf.parse_osu(HAND_OSU_MBW_MR)
    assert f["benchmark"] == "osu_mbw_mr"
    assert f["rows"][0]["value"] == pytest.approx(2.55) and f["rows"][0]["unit"] == "MB/s"
    assert f["rows"][0]["values"]["messages_per_s"] == pytest.approx(2548675.34)

    f = perf.parse_osu(HAND_OSU_ALLREDUCE_FULL)
    assert f["benchmark"] == "osu_allreduce" and f["version"] == "7.1"
    assert f["rows"][1]["bytes"] == 8 and f["rows"][1]["value"] == pytest.approx(3.12)
    assert f["rows"][1]["unit"] == "us"
    assert f["rows"][1]["values"]["max_latency_us"] == pytest.approx(3.30)
    assert f["rows"][1]["values"]["iterations"] == 1000

    f = perf.parse_osu(HAND_OSU_CUDA)
    assert f["benchmark"] == "osu_bibw" and f["accelerator"] == "CUDA"

    f = perf.parse_osu(HAND_OSU_BARRIER)
    assert f["benchmark"] == "osu_barrier"
    assert f["rows"] == [{"bytes": None, "value": pytest.approx(4.21), "unit": "us"}]


# ------------------------------------------------------------------------------------------------
# UCX logs
# ------------------------------------------------------------------------------------------------


def test_ucx_4742_no_rdma_transport_offered():
    f = perf.parse_openmpi_ucx_log(corpus_text("openmpi_ucx_log/ucx-4742-no-am-transport-shm-only.txt"))
    assert f["transports"] == ["posix", "sysv", "self", "sockcm", "rdmacm", "cma"]
    assert not {"rc_mlx5", "rc_verbs", "ud_mlx5", "ud_verbs", "dc_mlx5"} & set(f["transports"])
    assert f["rdma"] is False
    assert f["tcp"] is False
    assert f["devices"] == []
    assert f["error_lines"] == 3  # one per rank
    assert len(f["errors"]) == 1 and f["errors"][0].startswith("no active messages transport to <no debug data>:")
    [failure] = f["unreachable"]
    assert failure["criteria"] == "active messages"
    assert failure["remote_peer"] is True  # shared memory 'Destination is unreachable': another node
    assert {"transport": "rdmacm", "device": "sockaddr", "reason": "no am bcopy"} in failure["transports"]
    assert f["hosts"] == ["daishan"]
    assert any(x.startswith("Abort(1091471)") for x in f["fatal"])


def test_ucx_hcn1_reg_mr_enomem():
    f = perf.parse_openmpi_ucx_log(corpus_text("openmpi_ucx_log/hcn1-ibv-reg-mr-enomem-rndv-assert.txt"))
    assert len(f["errors"]) == 3
    assert f["errors"][0].startswith("ibv_reg_mr(address=0xeda6ab0")
    assert f["errors"][0].endswith("failed: Cannot allocate memory")
    assert f["errors"][2] == ("failed to register user buffer datatype 0x8 address 0xeda6ab0 len 593920: "
                              "Input/output error")
    assert f["memory_domains"] == ["mlx5_0"]
    assert any("Assertion `status == UCS_OK' failed" in x for x in f["fatal"])
    assert f["hosts"] == ["hcn1"]
    # nothing says which transport a remote peer used
    assert f["rdma"] is None and f["tcp"] is None
    assert f["transports"] == [] and f["warnings"] == []


# UCX 1.10-1.13 INFO lines as quoted in open-mpi/ompi issue #9080 (one rank per node shown).
UCX_OLD_RC = """\
[1624984398.083715] [r39c2t5n1:22453:0]     ucp_worker.c:1720 UCX  INFO  ep_cfg[0]: tag(self/memory rc_mlx5/mlx5_0:1 rc_mlx5/mlx5_1:1);
[1624984398.153330] [r39c2t5n4:22213:0]     ucp_worker.c:1720 UCX  INFO  ep_cfg[1]: tag(rc_mlx5/mlx5_0:1 rc_mlx5/mlx5_1:1);
"""

# ep_cfg lines as quoted in openucx/ucx issue #9560: intra-node shared memory, inter-node over tcp.
UCX_OLD_TCP = """\
ucp_worker.c:1783 UCX INFO ep_cfg[1]: tag(sysv/memory cma/memory cuda_copy/cuda)
ucp_worker.c:1783 UCX INFO ep_cfg[2]: tag(sysv/memory cma/memory tcp/ib1)
ucp_worker.c:1783 UCX INFO ep_cfg[3]: tag(tcp/ib1 tcp/ib0)
"""

# UCX >= 1.14 naming, first three lines as quoted in openucx/ucx issue #10996; the last line's lane
# groups were hand-written after src/ucp/core/ucp_worker.c (ka = keepalive lane).
UCX_NEW_RC = """\
[1762437137.627751] [ccdev0010:4015937:0]     ucp_context.c:2339 UCX  INFO  Version 1.19.0 (loaded from /usr/local/ucx/lib/libucp.so.0)
[1762437137.734692] [ccdev0010:4015937:0]          parser.c:2368 UCX  INFO  UCX_* env variable: UCX_LOG_LEVEL=info
[1762437137.903705] [ccdev0010:4015937:0]      ucp_worker.c:1903 UCX  INFO    ucp_context_0 self cfg#0 tag(self/memory rc_mlx5/mlx5_0:1 cma/memory)
[1762437137.926940] [ccdev0010:4015937:0]      ucp_worker.c:1903 UCX  INFO    ucp_context_0 inter-node cfg#1 tag(rc_mlx5/mlx5_0:1) rma(rc_mlx5/mlx5_0:1) am(rc_mlx5/mlx5_0:1) ka(ud_mlx5/mlx5_0:1)
"""

# Hand-written: the silent fallback. The WARN text is UCX's ucp_report_unavailable format
# (as quoted in ai-dynamo/dynamo issue #1209); the endpoint then goes over tcp, and osu_latency follows.
UCX_FALLBACK_WITH_OSU = """\
[1748330000.000000] [node1:1234 :0]     ucp_context.c:1321 UCX  WARN  network device 'mlx5_0:1' is not available, please use one or more of: 'eth0'(tcp), 'lo'(tcp)
[1748330000.100000] [node1:1234 :0]      ucp_worker.c:1903 UCX  INFO    ucp_context_0 inter-node cfg#1 tag(tcp/eth0) rma(tcp/eth0) am(tcp/eth0)
# OSU MPI Latency Test v7.3
# Size          Latency (us)
# Datatype: MPI_CHAR.
1                      12.81
2                      13.04
"""

# UCX_PROTO_INFO table rows as quoted in openucx/ucx pull request #7950 (endpoint named ep_cfg[3]).
UCX_PROTO_TABLE = """\
[1645019897.519920] [vulcan04:13202:0]     proto_debug.c:406  UCX  INFO  | mpi ep_cfg[3] | tagged message by ucp_tag_send*() from host memory           |
[1645019897.519924] [vulcan04:13202:0]     proto_debug.c:406  UCX  INFO  +---------------+-------------------------------------------+------------------+
[1645019897.519927] [vulcan04:13202:0]     proto_debug.c:406  UCX  INFO  |       0..2007 | eager short                               | rc_mlx5/mlx5_0:1 |
[1645019897.519937] [vulcan04:13202:0]     proto_debug.c:406  UCX  INFO  |    17298..inf | (?) rendezvous zero-copy read from remote | rc_mlx5/mlx5_0:1 |
[1645019897.519941] [vulcan04:13202:0]     proto_debug.c:406  UCX  INFO  +---------------+-------------------------------------------+------------------+
"""


def test_ucx_old_ep_cfg_rc_is_rdma():
    f = perf.parse_openmpi_ucx_log(UCX_OLD_RC)
    assert f["rdma"] is True and f["tcp"] is False
    assert f["transports"] == ["self", "rc_mlx5"]
    assert f["devices"] == ["mlx5_0:1", "mlx5_1:1"]
    assert [c["type"] for c in f["ep_configs"]] == ["self", "inter-node"]
    assert f["remote_transports"] == ["rc_mlx5"]


def test_ucx_old_ep_cfg_tcp_between_nodes_is_not_rdma():
    f = perf.parse_openmpi_ucx_log(UCX_OLD_TCP)
    assert [c["type"] for c in f["ep_configs"]] == ["intra-node", "intra-node", "inter-node"]
    assert f["rdma"] is False and f["tcp"] is True
    assert f["devices"] == ["ib1", "ib0"]


def test_ucx_new_cfg_naming_and_keepalive_lane():
    f = perf.parse_openmpi_ucx_log(UCX_NEW_RC)
    assert f["version"] == "1.19.0"
    assert f["env"] == {"UCX_LOG_LEVEL": "info"}
    assert f["rdma"] is True and f["tcp"] is False
    assert f["remote_transports"] == ["rc_mlx5"]  # the ud_mlx5 keepalive lane carries no data
    assert "ud_mlx5" in f["transports"]
    assert f["devices"] == ["mlx5_0:1"]


def test_ucx_silent_fallback_to_tcp():
    text = UCX_FALLBACK_WITH_OSU
    got = scores(text)
    assert got["openmpi_ucx_log"] > got["osu"] > 0  # the transport evidence decides the kind
    f = perf.parse_openmpi_ucx_log(text)
    assert f["unavailable"] == [{"kind": "network device", "name": "mlx5_0:1"}]
    assert {"kind": "network device", "name": "eth0", "type": "tcp"} in f["available"]
    assert f["warnings"][0].startswith("network device 'mlx5_0:1' is not available")
    assert f["rdma"] is False and f["tcp"] is True
    assert f["transports"] == ["tcp"] and f["devices"] == ["eth0"]
    assert f["osu"]["benchmark"] == "osu_latency"
    assert f["osu"]["rows"][0] == {"bytes": 1, "value": pytest.approx(12.81), "unit": "us"}


def test_ucx_proto_info_table():
    f = perf.parse_openmpi_ucx_log(UCX_PROTO_TABLE)
    assert f["rdma"] is True
    assert f["transports"] == ["rc_mlx5"] and f["devices"] == ["mlx5_0:1"]
    assert f["ep_configs"][0]["index"] == 3 and f["ep_configs"][0]["source"] == "proto_info"


def test_ucx_text_that_says_nothing_about_transports():
    f = perf.parse_openmpi_ucx_log(
        "[1737024891.886842] [node13:2797867:0]        perftest.c:800  UCX  WARN  CPU affinity is not set "
        "(bound to 96 cpus). Performance may be impacted.\n")
    assert f["rdma"] is None and f["tcp"] is None
    assert f["warnings"] == ["CPU affinity is not set (bound to 96 cpus). Performance may be impacted."]


def test_ucx_version_from_both_spellings():
    # hand-written in UCX's log layout: ucp_context prints "Version X" (1.10), ucp_worker "UCP version is X"
    old = "[1637011234.123456] [node1:1234:0]     ucp_context.c:1468 UCX  INFO  Version 1.10.0 (loaded from x)\n"
    new = "[1637011234.123456] [node1:1234:0]     ucp_context.c:2190 UCX  INFO  UCP version is 1.12 (release 1)\n"
    assert PARSERS["openmpi_ucx_log"].parse(old)["version"] == "1.10.0"
    assert PARSERS["openmpi_ucx_log"].parse(new)["version"] == "1.12"
