"""Real outputs in the shapes people paste them (issue 13, classes 3, 4 and 5): benchmark variants,
tools run with other arguments, vendor and version drift. The samples are in tests/data/variants/
<class>/ with their provenance in the README.md there.

Each sample is read twice: by its parser directly (detect + parse), and by `roce-wizard analyze --json`
(the typer app, one file at a time), which must report the same kind and facts. Where a sample cannot
answer a question (a paste cut before the ports, a placeholder value, an elided table) the check must
say "could not tell", never pass or fail on a guess.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roce_wizard.cli import app
from roce_wizard.parsers import PARSERS
from roce_wizard.parsers.detect import detect
from tests.conftest import DATA

VARIANTS = DATA / "variants"

# sample -> (kind, {path: value}); a path is keys and list indexes joined by "." ("rows.-1.bytes"),
# and a trailing "#" asks for the length ("rows#").
EXPECT: dict[str, tuple[str, dict[str, object]]] = {
    # ---- class 3: benchmark variants ------------------------------------------------------------
    "3-benchmarks/ib_atomic_bw-pib-server-inline-warning-no-table.txt": (
        "perftest", {"test": "ib_atomic_bw", "link_type": "IB", "mtu": 4096, "device": "pib_0", "side": "server",
                     "rdma_cm": False, "rows#": 0, "error": None}),
    "3-benchmarks/ib_atomic_bw-rdma_cm-k8s-cpufreq.txt": (
        "perftest", {"test": "ib_atomic_bw", "rdma_cm": True, "gid_index": 3, "mtu": 1024, "rows#": 1,
                     "rows.0.bytes": 8, "rows.0.bw_avg": 16.56, "warnings#": 1, "error": None}),
    "3-benchmarks/ib_atomic_lat-rdma_cm-k8s-tabs-cpufreq.txt": (
        "perftest", {"test": "ib_atomic_lat", "rows#": 1, "rows.0.bytes": 8, "rows.0.t_typical_us": 2.65,
                     "rows.0.p999_us": 5.01, "warnings#": 2}),
    "3-benchmarks/ib_read_bw-all-sizes-report_gbits-ib.txt": (
        "perftest", {"test": "ib_read_bw", "unit": "Gb/sec", "link_type": "IB", "rows#": 23, "rows.0.bytes": 2,
                     "rows.0.bw_peak_gbps": 0.068083, "rows.-1.bytes": 8388608, "rows.-1.bw_avg_gbps": 24.26}),
    "3-benchmarks/ib_read_bw-rdma_cm-k8s-cpufreq-line-inside-table.txt": (
        "perftest", {"test": "ib_read_bw", "unit": "MB/sec", "rdma_cm": True, "rows#": 1, "rows.0.bytes": 65536,
                     "rows.0.bw_avg": 10401.68, "warnings#": 1}),
    "3-benchmarks/ib_read_lat-all-sizes-ib-tmax-spikes.txt": (
        "perftest", {"test": "ib_read_lat", "rows#": 23, "rows.8.bytes": 512, "rows.8.t_max_us": 16.49,
                     "rows.8.t_typical_us": 2.16, "rows.-1.bytes": 8388608}),
    "3-benchmarks/ib_read_lat-rdma_cm-k8s-two-cpufreq-lines-inside-table.txt": (
        "perftest", {"test": "ib_read_lat", "rows#": 1, "rows.0.t_typical_us": 2.69, "warnings#": 2}),
    "3-benchmarks/ib_send_bw-all-sizes-two-qps-server-ib.txt": (
        "perftest", {"test": "ib_send_bw", "side": "server", "link_type": "IB", "gid_index": 3, "unit": "MB/sec",
                     "rows#": 0, "error": None}),
    "3-benchmarks/ib_send_lat-rdma_cm-k8s-cpufreq.txt": (
        "perftest", {"test": "ib_send_lat", "rows#": 1, "rows.0.t_typical_us": 1.68, "rows.0.p99_us": 2.0}),
    "3-benchmarks/ib_write_bw-post-list-gbits-tabs.txt": (
        "perftest", {"test": "ib_write_bw", "device": "ib0", "link_type": "Ethernet", "gid_index": 2,
                     "unit": "Gb/sec", "rows.0.iterations": 224958464, "rows.0.bw_avg_gbps": 0.48,
                     "rows.0.msg_rate_mpps": 7.498617}),
    "3-benchmarks/ib_write_bw-rdma_cm-bidir-all-run_infinitely-server.txt": (
        "perftest", {"test": "ib_write_bw", "bidirectional": True, "rdma_cm": True, "side": "server", "mtu": 2048,
                     "rows#": 0, "error": None}),
    "3-benchmarks/osu-rocm-bw-v7.5-two-pairs-with-separators.txt": (
        "osu", {"benchmark": "osu_bw", "version": "7.5", "accelerator": "ROCM", "unit": "MB/s", "rows#": 28,
                "rows.-1.bytes": 134217728, "rows.-1.value": 139961.8, "runs#": 2, "runs.1.rows#": 7}),
    "3-benchmarks/osu-v5.6.2-init-bibw-allreduce-one-paste.txt": (
        "osu", {"benchmark": "osu_init", "runs#": 3, "runs.1.benchmark": "osu_bibw", "runs.1.rows.-1.value": 28.51,
                "runs.2.benchmark": "osu_allreduce", "runs.2.unit": "us", "runs.2.rows.0.bytes": 4}),
    "3-benchmarks/osu_bibw-v3.0-bi-bandwidth-header-one-size.txt": (
        "osu", {"benchmark": "osu_bibw", "version": "3.0", "unit": "MB/s", "rows#": 1, "rows.0.bytes": 4194304,
                "rows.0.value": 1717.43}),
    "3-benchmarks/osu_bibw-v7.5-validation-column-libnl-warnings.txt": (
        "osu", {"benchmark": "osu_bibw", "version": "7.5", "unit": "MB/s", "rows#": 23, "rows.-1.value": 46433.8,
                "rows.-1.values.validation": "Pass"}),
    "3-benchmarks/osu_bw-cuda-v7.2-buffer-and-datatype-notes.txt": (
        "osu", {"benchmark": "osu_bw", "accelerator": "CUDA", "version": "7.2", "rows#": 26,
                "rows.-1.bytes": 33554432, "rows.-1.value": 93130.52}),
    "3-benchmarks/osu_latency-cuda-v5.3.2-ompi-help-lines-inside-table.txt": (
        "osu", {"benchmark": "osu_latency", "accelerator": "CUDA", "unit": "us", "rows#": 24,
                "rows.5.bytes": 16, "rows.5.value": 54.32, "rows.-1.value": 103.12}),
    "3-benchmarks/osu_latency-v5.0-srun-hash-banner.txt": (
        "osu", {"benchmark": "osu_latency", "version": "5.0", "rows#": 24, "rows.0.bytes": 0, "rows.0.value": 1.84}),
    "3-benchmarks/osu_latency-v7.0-suffixed-version-mpirun-line.txt": (
        "osu", {"benchmark": "osu_latency", "version": "7.0-lrbison3", "rows#": 14, "rows.-1.value": 0.66}),
    "3-benchmarks/osu_latency-v7.5-avg-latency-header-validation.txt": (
        "osu", {"benchmark": "osu_latency", "unit": "us", "rows#": 23, "rows.0.value": 3.0,
                "rows.0.values.validation": "Pass"}),
    "3-benchmarks/osu_latency_mt-v5.3.2-duplicated-mpirun-line.txt": (
        "osu", {"benchmark": "osu_latency_mt", "version": "5.3.2", "rows#": 24, "rows.0.value": 4.74}),
    "3-benchmarks/osu_mbw_mr-v5.7.1-pairs-window-msgrate.txt": (
        "osu", {"benchmark": "osu_mbw_mr", "unit": "MB/s", "rows#": 12, "rows.-1.bytes": 2048,
                "rows.-1.values.messages_per_s": 48514205.09}),
    "3-benchmarks/osu_reduce-cuda-v7.3-avg-min-max-iterations.txt": (
        "osu", {"benchmark": "osu_reduce", "accelerator": "CUDA", "unit": "us", "rows#": 11,
                "rows.0.values.max_latency_us": 158.96, "rows.0.values.iterations": 1000}),
    # ---- class 4: tools run with other arguments ------------------------------------------------
    "4-arguments/cma_roce_mode-two-commands-one-answer.txt": (
        "cma_roce_mode", {"mode": "RoCE v2", "device": None, "port": None}),
    "4-arguments/default_roce_mode-configfs-cat-rhel-doc.txt": (
        "cma_roce_mode", {"mode": "RoCE v2", "device": "mlx5_0", "port": 1}),
    "4-arguments/ibv_devinfo-v-cx4-flattened-indent-cut-before-ports.txt": (
        "ibv_devinfo", {"devices.0.hca_id": "mlx5_0", "devices.0.fw_ver": "12.18.1000",
                        "devices.0.board_id": "FJT2180110032", "devices.0.ports#": 0}),
    "4-arguments/ibv_devinfo-v-cx5-mofed-exp-flags-tabs-cut-before-ports.txt": (
        "ibv_devinfo", {"devices.0.hca_id": "mlx5_1", "devices.0.fw_ver": "16.23.1020",
                        "devices.0.board_id": "MT_0000000008", "devices.0.ports#": 0}),
    "4-arguments/mlxconfig-e-q-grep-config-header-one-row.txt": (
        "mlxconfig_query", {"columns": ["default", "current", "next_boot"],
                            "devices.0.params.SRIOV_IB_ROUTING_MODE_P1.current": "GID"}),
    "4-arguments/mlxconfig-q-cx5-3col-headerless-excerpt-values-overflow.txt": (
        "mlxconfig_query", {"devices.0.headerless": True,
                            "devices.0.params.PHY_FEC_OVERRIDE_P1.next_boot": "DEVICE_DEFAULT",
                            "devices.0.params.ROCE_CONTROL.current": "DEVICE_DEFAULT",
                            "devices.0.params.ROCE_CONTROL.next_boot": "ROCE_ENABLE",
                            "devices.0.params.ROCE_CONTROL.changed": True}),
    "4-arguments/mlxconfig-q-cx5-esxi-current-only-collapsed-elided.txt": (
        "mlxconfig_query", {"elided": True, "columns": ["current"], "devices.0.device": "mt4121_pciconf0",
                            "devices.0.params.SRIOV_EN.current": False, "devices.0.params.SRIOV_EN.next_boot": None,
                            "devices.0.params.NUM_OF_VFS.current": 0}),
    "4-arguments/mlxconfig-q-cx6lx-3col-padded-misaligned-header.txt": (
        "mlxconfig_query", {"columns": ["default", "current", "next_boot"], "devices.0.device": "0108:00:00.0",
                            "devices.0.device_type": "ConnectX6LX", "devices.0.params.CRYPTO_POLICY.current":
                            "UNRESTRICTED", "devices.0.params.TRACER_ENABLE.next_boot": True}),
    "4-arguments/mlxconfig-q-cx7-next-boot-only-overflowing-enum.txt": (
        "mlxconfig_query", {"columns": ["next_boot"], "devices.0.params.MEMIC_ATOMIC.next_boot": "MEMIC_ATOMIC_ENABLE",
                            "devices.0.params.ROCE_NEXT_PROTOCOL.next_boot": 254}),
    "4-arguments/mlxconfig-query-cx3-no-d-next-boot-only.txt": (
        "mlxconfig_query", {"devices.0.device": "/dev/mst/mt4099_pciconf0", "devices.0.device_type": "ConnectX3",
                            "devices.0.params.SRIOV_EN.next_boot": True, "devices.0.params.NUM_OF_VFS.next_boot": 8}),
    "4-arguments/show_gids-macvlan-pod-tabs-index-4-to-7.txt": (
        "show_gids", {"gids#": 8, "gids.3.index": 7, "gids.3.ipv4": "10.152.0.12", "gids.3.ver": "v2",
                      "gids.3.netdev": "net1", "gids.0.ipv4": None}),
    "4-arguments/show_gids-k8s-pod-header-only-n_gids_found-0.txt": (
        "show_gids", {"gids#": 0, "n_gids_found": 0}),
    "4-arguments/show_gids-rocep-devices-space-aligned-no-ipv4.txt": (
        "show_gids", {"gids#": 10, "gids.0.dev": "rocep105s0", "gids.0.ipv4": None, "gids.0.ver": "v2",
                      "gids.8.ver": "v1", "gids.8.netdev": "enp193s0f0np0"}),
    # ---- class 5: vendor and version drift (no switches here) -----------------------------------
    "5-drift/esxcfg-module-g-nmlx5-doc-placeholder-value.txt": (
        "esxi_module_params", {"module": "nmlx5_core", "params.pfctx": "0x08", "placeholders": ["max_vfs"],
                               "modules#": 2, "modules.1.module": "nmlx5_rdma",
                               "modules.1.params.dscp_force": "26"}),
    "5-drift/esxcli-module-parameters-list-collapsed-whitespace-elided.txt": (
        "esxi_module_params", {"module": "nmlx5_core", "params": {}, "elided": True}),
    "5-drift/esxi67-ga-vib-list-full-inbox-nmlx5-4.17.9.12.txt": (
        "esxi_vib_list", {"vibs#": 136, "vibs.59.name": "nmlx5-core",
                          "vibs.59.version": "4.17.9.12-1vmw.670.0.0.8169922", "vibs.59.vendor": "VMW"}),
    "5-drift/esxi90-nic-list-admin-status-vmxnet3.txt": (
        "esxi_nic_list", {"nics#": 1, "nics.0.name": "vmnic0", "nics.0.driver": "nvmxnet3", "nics.0.link": "Up",
                          "nics.0.speed_mbps": 10000, "nics.0.mtu": 1500, "nics.0.pci": "0000:02:01.0"}),
    "5-drift/esxi90-vib-list-platforms-column-inbox-nmlx5.txt": (
        "esxi_vib_list", {"vibs#": 112, "vibs.29.name": "nmlx5-core",
                          "vibs.29.version": "4.24.0.7-16vmw.900.0.24755229", "vibs.29.vendor": "VMW",
                          "vibs.29.platforms": "host"}),
}


def dig(obj: object, path: str) -> object:
    want_len = path.endswith("#")
    for part in (path[:-1] if want_len else path).split("."):
        if isinstance(obj, list):
            obj = obj[int(part)]
        elif isinstance(obj, dict):
            obj = obj.get(part)
        else:
            return None
    return len(obj) if want_len else obj


def check_facts(facts: dict, expected: dict[str, object]) -> None:
    for path, want in expected.items():
        got = dig(facts, path)
        if isinstance(want, float):
            assert got == pytest.approx(want), path
        else:
            assert got == want, path


def test_every_sample_is_expected_and_has_provenance():
    """No sample sits in the data without an expectation here and a line in its class README."""
    # switch/ has its own expectations: tests/unit/test_variants_switch.py
    on_disk = {str(p.relative_to(VARIANTS)) for p in VARIANTS.glob("*/*.txt") if p.parent.name != "switch"}
    assert on_disk == set(EXPECT)
    for rel in on_disk:
        readme = (VARIANTS / rel).parent / "README.md"
        assert Path(rel).name in readme.read_text(encoding="utf-8"), rel


@pytest.mark.parametrize("rel", sorted(EXPECT))
def test_parser_reads_the_sample(rel):
    text = (VARIANTS / rel).read_text(encoding="utf-8")
    kind, expected = EXPECT[rel]
    assert detect(text).kind == kind
    check_facts(PARSERS[kind].parse(text), expected)


@lru_cache(maxsize=None)
def analyze(rel: str) -> dict:
    """`roce-wizard analyze --json` on one sample (alone: files of one directory are judged together)."""
    result = CliRunner().invoke(app, ["analyze", "--json", str(VARIANTS / rel)])
    assert result.stdout, result.output
    (entry,) = json.loads(result.stdout)["files"]
    return entry


@pytest.mark.parametrize("rel", sorted(EXPECT))
def test_analyze_json_gives_kind_and_facts(rel):
    kind, expected = EXPECT[rel]
    entry = analyze(rel)
    assert entry["kind"] == kind
    check_facts(entry["facts"], expected)


def findings(rel: str, code: str) -> list[tuple[str, str]]:
    return [(f["status"], f["summary"]) for f in analyze(rel)["findings"] if f["check"] == code]


# what a check must say where the sample cannot answer: "could not tell", never a verdict on a guess
COULD_NOT_TELL = [
    ("3-benchmarks/ib_write_bw-rdma_cm-bidir-all-run_infinitely-server.txt", "RW601", "skip", "waits for its client"),
    ("3-benchmarks/ib_atomic_bw-pib-server-inline-warning-no-table.txt", "RW601", "skip", "could not tell"),
    ("3-benchmarks/ib_send_bw-all-sizes-two-qps-server-ib.txt", "RW601", "skip", "ends before any result row"),
    ("4-arguments/ibv_devinfo-v-cx4-flattened-indent-cut-before-ports.txt", "RW402", "skip", "none of its ports"),
    ("4-arguments/ibv_devinfo-v-cx5-mofed-exp-flags-tabs-cut-before-ports.txt", "RW402", "skip", "none of its ports"),
    ("4-arguments/mlxconfig-q-cx5-esxi-current-only-collapsed-elided.txt", "RW205", "skip", "rows were left out"),
    ("4-arguments/mlxconfig-q-cx5-esxi-current-only-collapsed-elided.txt", "RW214", "skip", "only the Current column"),
    ("4-arguments/mlxconfig-q-cx5-esxi-current-only-collapsed-elided.txt", "RW206", "fail", "could not be told"),
    ("4-arguments/mlxconfig-q-cx5-3col-headerless-excerpt-values-overflow.txt", "RW205", "skip", "rows were left out"),
    ("5-drift/esxcfg-module-g-nmlx5-doc-placeholder-value.txt", "RW209", "error", "placeholder values (max_vfs=<value>)"),
    ("5-drift/esxcfg-module-g-nmlx5-doc-placeholder-value.txt", "RW210", "error", "could not tell"),
    ("5-drift/esxcli-module-parameters-list-collapsed-whitespace-elided.txt", "RW209", "error", "left out"),
]


@pytest.mark.parametrize("rel,code,status,words", COULD_NOT_TELL)
def test_check_says_could_not_tell(rel, code, status, words):
    got = findings(rel, code)
    assert got and all(s == status for s, _ in got), got
    assert any(words in summary for _, summary in got), got


def test_one_answer_after_two_commands_names_no_device():
    (finding,) = findings("4-arguments/cma_roce_mode-two-commands-one-answer.txt", "RW408")
    assert "mlx5_1" not in finding[1] and "mlx5_0" not in finding[1]


def test_configfs_path_names_the_device():
    (finding,) = findings("4-arguments/default_roce_mode-configfs-cat-rhel-doc.txt", "RW408")
    assert finding[0] == "pass" and "mlx5_0/1" in finding[1]


def test_inbox_nmlx5_versions_of_esxi_67_and_90_are_judged():
    """Inbox (VMW-vendor) nmlx5-core: ESXi 6.7 GA's 4.17.9.12 is older than the minimum, ESXi 9.0's 4.24 is not."""
    old = findings("5-drift/esxi67-ga-vib-list-full-inbox-nmlx5-4.17.9.12.txt", "RW204")
    new = findings("5-drift/esxi90-vib-list-platforms-column-inbox-nmlx5.txt", "RW204")
    assert old[0][0] == "fail" and "4.17.9.12" in old[0][1]
    assert new[0][0] == "pass" and "4.24.0.7" in new[0][1]


def test_benchmark_results_with_lines_inside_the_table_are_judged():
    """The rows after an Open MPI help line or a CPU-frequency warning are results, not the table's end."""
    assert findings("3-benchmarks/ib_read_lat-rdma_cm-k8s-two-cpufreq-lines-inside-table.txt", "RW602") == [
        ("pass", "2.69 us typical at 2 B")]


def test_show_gids_without_gid_types_is_could_not_tell(tmp_path):
    """show_gids prints VER from `cat .../gid_attrs/types/<i> 2>/dev/null` (mlnx-tools sbin/show_gids): empty when
    the kernel cannot read a GID's type. The macvlan pod's real table with its VER fields emptied that way: an
    IPv4 GID of unknown type is neither v1 nor v2, so RW407 cannot tell (it said "only v1 / link-local GIDs")."""
    real = (VARIANTS / "4-arguments/show_gids-macvlan-pod-tabs-index-4-to-7.txt").read_text(encoding="utf-8")
    rows = [r for r in real.split("\n") if r]
    # VER is each row's next-to-last tab field (`...\t$_type\t$_ndev`)
    untyped = "\n".join(rows[:3] + ["\t".join(r.split("\t")[:-2] + ["", r.split("\t")[-1]]) for r in rows[3:]]) + "\n"
    gids = PARSERS["show_gids"].parse(untyped)["gids"]
    assert [g["ver"] for g in gids] == [None] * 8 and gids[3]["ipv4"] == "10.152.0.12" and gids[3]["netdev"] == "net1"
    path = tmp_path / "show_gids.txt"
    path.write_text(untyped, encoding="utf-8")
    (entry,) = json.loads(CliRunner().invoke(app, ["analyze", "--json", str(path)]).stdout)["files"]
    got = [(f["status"], f["summary"]) for f in entry["findings"] if f["check"] == "RW407"]
    assert len(got) == 2 and all(st == "skip" and "could not tell" in su and "index 6, 7" in su for st, su in got), got
