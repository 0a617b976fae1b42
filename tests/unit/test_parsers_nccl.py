"""nccl_log on real NCCL_DEBUG=INFO logs and nccl-tests tables (tests/data/corpus/nccl_log, sources in INDEX.md)."""

from __future__ import annotations

import pytest

from roce_wizard.parsers import ParseError, parse
from roce_wizard.parsers.detect import detect
from tests.conftest import corpus_files, corpus_text


def nccl(name: str) -> dict:
    return parse("nccl_log", corpus_text(f"nccl_log/{name}.txt"))


@pytest.mark.parametrize("path", corpus_files("nccl_log"))
def test_every_nccl_sample_is_detected_and_parsed(path):
    text = corpus_text(path)
    assert detect(text).kind == "nccl_log"
    assert parse("nccl_log", text)


def test_roce_two_nodes_net_ib_devices_and_link_layer():
    f = nccl("nccl-tests-185-roce-dgxh100-two-nodes-mlx5-10-11")
    assert f["net"] == "IB" and f["link_layer"] == "RoCE"
    assert f["devices"] == ["mlx5_10:1", "mlx5_11:1"]
    assert f["device_details"][0] == {"name": "mlx5_10", "port": 1, "link_layer": "RoCE", "sharp": False}
    assert f["net_by_host"] == {"dgxh100-4": "IB", "dgxh100-3": "IB"}
    assert f["oob"] == ["enp220s0np0:11.1.128.136", "enp220s0np0:11.1.128.128"]
    assert f["version"] == "2.19.3+cuda12.3" and f["network"] == "IB"


def test_rccl_roce_single_line():
    f = nccl("hpe-cray-rccl-roce-mlx5-0-using-network-ib")
    assert (f["net"], f["devices"], f["link_layer"], f["oob"]) == ("IB", ["mlx5_0:1"], "RoCE", ["nmn0:10.252.1.70"])


def test_old_nccl_prints_socket_and_ib_init_lines_ib_wins():
    f = nccl("nccl-tests-29-ib-and-socket-init-lines-4-nodes")
    assert f["net"] == "IB" and f["link_layer"] == "IB"
    assert f["devices"] == ["mlx5_0:1", "mlx5_1:1"] and f["oob"] == ["enp41s0f1"]


def test_socket_fallback_without_libibverbs():
    f = nccl("nccl-428-socket-no-libibverbs-two-t4")
    assert f["net"] == "Socket" and f["link_layer"] is None
    assert f["devices"] == ["em1", "tunl0"]
    assert f["device_details"] == [{"name": "em1", "address": "10.193.84.3"},
                                   {"name": "tunl0", "address": "10.227.47.12"}]
    assert f["warnings"] == ["Failed to open libibverbs.so[.1]"]
    assert f["version"] == "2.8.3+cuda10.0" and [r["rank"] for r in f["ranks"]] == [0, 1]


def test_socket_channels_alone_decide():
    f = nccl("esm2-k8s-socket-channels-via-net-socket")
    assert f["net"] == "Socket" and f["channels"] == {"Socket": 4} and f["devices"] == []


def test_two_node_socket_run_with_collapsed_table_and_avg():
    f = nccl("bcm-manual-2node-socket-ib-disabled-collapsed-whitespace")
    assert f["net"] == "Socket" and f["net_by_host"] == {"node001": "Socket", "node002": "Socket"}
    assert f["env"] == {"NCCL_IB_DISABLE": "1"} and f["channels"] == {"Socket": 8}
    assert f["avg_busbw_gbs"] == 0.810575 and f["out_of_bounds"] == {"values": 0, "ok": True}
    assert len(f["rows"]) == 13
    first = f["rows"][0]
    assert first == {"bytes": 1048576, "count": 262144, "type": "float", "redop": "sum", "root": None,
                     "out_of_place": {"time_us": 1491.5, "algbw_gbs": 0.70, "busbw_gbs": 0.70, "error": 0.0},
                     "in_place": {"time_us": 1421.3, "algbw_gbs": 0.74, "busbw_gbs": 0.74, "error": 0.0}}
    assert f["busbw_by_size"][4294967296] == 0.72
    assert f["wrong_total"] is None  # this layout prints an error magnitude, not a #wrong count


def test_table_with_header_wrong_column_and_root():
    f = nccl("nccl-tests-150-table-header-2-nodes-slurm")
    assert [r["bytes"] for r in f["rows"]] == [8, 16, 32, 64]
    assert f["rows"][1]["root"] == -1 and f["rows"][1]["in_place"]["time_us"] == 19.10
    assert f["wrong_total"] == 0 and f["net"] is None and f["avg_busbw_gbs"] is None


def test_rows_without_column_names_use_the_nccl_tests_layout():
    f = nccl("nccl-tests-293-table-ib-header-units")
    assert len(f["rows"]) == 10 and f["busbw_by_size"][4096] == 0.18 and f["rows"][9]["in_place"]["busbw_gbs"] == 0.18


def test_ib_sharp_plugin_and_failures():
    f = nccl("nccl-tests-294-ib-sharp-ibext-plugin-failure")
    assert f["net"] == "IB" and f["network"] == "IBext_v6" and f["link_layer"] == "IB"
    assert len(f["devices"]) == 8 and all(d["sharp"] for d in f["device_details"])
    assert f["failures"] == ["Test NCCL failure common.cu:1057 'internal error / '", "Test failure common.cu:893"]
    assert f["env"] == {"NCCL_IB_MERGE_VFS": "0"}


def test_nodes_that_disagree_make_net_unknown():
    text = (corpus_text("nccl_log/hpe-cray-rccl-roce-mlx5-0-using-network-ib.txt") + "\n"
            + corpus_text("nccl_log/nccl-428-socket-no-libibverbs-two-t4.txt"))
    f = parse("nccl_log", text)
    assert f["net"] is None
    assert f["net_by_host"] == {"nid000014": "IB", "ai-vtraining-prd-10-193-84-3": "Socket"}


@pytest.mark.parametrize("shape", ["crlf", "ansi", "mpirun-tag", "pdsh", "prompt"])
def test_pasted_shapes(shape):
    text = corpus_text("nccl_log/nccl-tests-185-roce-dgxh100-two-nodes-mlx5-10-11.txt")
    body = [ln for ln in text.split("\n") if ln.strip()]
    if shape == "crlf":
        text = text.replace("\n", "\r\n")
    elif shape == "ansi":
        text = text.replace("NET/IB", "\x1b[1;32mNET/IB\x1b[0m")
    elif shape == "mpirun-tag":
        text = "\n".join(f"[1,0]<stdout>:{ln}" for ln in body)
    elif shape == "pdsh":
        text = "\n".join(f"login01: {ln}" for ln in body)
    else:
        text = "user@login01:~$ mpirun -np 2 -x NCCL_DEBUG=INFO ./build/all_reduce_perf -b 8 -e 8G -f 2\n" + text
    f = parse("nccl_log", text)
    assert (f["net"], f["devices"], f["link_layer"]) == ("IB", ["mlx5_10:1", "mlx5_11:1"], "RoCE")


@pytest.mark.parametrize("garbage", ["", "hello\nworld", "     rx_prio3_bytes: 5\n", "8 2 float sum"])
def test_garbage_raises(garbage):
    with pytest.raises(ParseError):
        parse("nccl_log", garbage)
