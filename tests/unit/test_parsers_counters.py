"""Issue 15 counter parsers on real outputs: `ethtool -S` per-priority counters and `hw_counters` listings,
as captured and as people paste them (grep-filtered, prompt-prefixed, CRLF, ANSI colour, pdsh `host: `)."""

from __future__ import annotations

import pytest

from roce_wizard.parsers import ParseError, parse
from tests.conftest import corpus_text

BYTEPS = "ethtool_stats/byteps-179-prio-all-on-prio0.txt"
PAUSE = "ethtool_stats/mlx5-pause-grep-global-pause-all-zero.txt"


def test_ethtool_stats_per_priority_dict_from_real_grep_prio():
    f = parse("ethtool_stats", corpus_text(BYTEPS))
    assert sorted(f["prio"]) == list(range(8))
    assert f["prio"][0] == {"rx_bytes": 88034564921216, "rx_packets": 419873392068,
                            "tx_bytes": 13906677385186, "tx_packets": 40177770079}
    assert f["prio"][3] == {"rx_bytes": 0, "rx_packets": 0, "tx_bytes": 0, "tx_packets": 0}
    assert f["counters"]["rx_prio0_bytes"] == 88034564921216  # the flat contract stays


def test_ethtool_stats_without_priority_counters_has_no_prio_key():
    f = parse("ethtool_stats", corpus_text(PAUSE))
    assert "prio" not in f
    assert f["counters"]["tx_pause_storm_error_events"] == 0 and f["interface"] == "eth03"


def test_ethtool_stats_pause_and_congestion_names_land_per_priority():
    # the names en_stats.c prints (pfc group + per-prio traffic group), on one host in the mlx5 indentation
    text = ("NIC statistics:\n     rx_prio3_pause: 41927\n     rx_prio3_pause_duration: 8134\n"
            "     tx_prio3_pause: 1290418\n     rx_prio3_pause_transition: 39218\n     rx_prio3_discards: 2\n"
            "     np_cnp_sent: 7\n")
    f = parse("ethtool_stats", text)
    assert f["prio"] == {3: {"rx_pause": 41927, "rx_pause_duration": 8134, "tx_pause": 1290418,
                             "rx_pause_transition": 39218, "rx_discards": 2}}
    assert f["counters"]["np_cnp_sent"] == 7


@pytest.mark.parametrize("shape", ["crlf", "ansi", "prompt", "unindented"])
def test_ethtool_stats_pasted_shapes(shape):
    text = corpus_text(BYTEPS)
    if shape == "crlf":
        text = text.replace("\n", "\r\n")
    elif shape == "ansi":
        text = text.replace("rx_prio0_bytes", "\x1b[01;31m\x1b[Krx_prio0_bytes\x1b[m\x1b[K")
    elif shape == "prompt":
        text = "[root@gpu01 ~]# ethtool -S enp178s0f0 | grep prio\n" + text
    else:
        text = "\n".join(ln.strip() for ln in text.split("\n"))
    f = parse("ethtool_stats", text)
    assert f["prio"][0]["rx_bytes"] == 88034564921216 and f["prio"][7]["tx_packets"] == 0
    assert "host" not in f and "hosts" not in f
    if shape == "prompt":
        assert f["interface"] == "enp178s0f0"


def test_ethtool_stats_pdsh_prefix_one_host_and_two_hosts():
    body = [ln for ln in corpus_text(BYTEPS).split("\n") if ln.strip()]
    one = parse("ethtool_stats", "\n".join(f"gpu01: {ln}" for ln in body))
    assert one["host"] == "gpu01" and one["prio"][0]["tx_bytes"] == 13906677385186
    two = parse("ethtool_stats", "\n".join([f"gpu01: {ln}" for ln in body] +
                                           ["gpu02:      rx_prio3_bytes: 5", "gpu02:      tx_prio3_bytes: 9"]))
    assert "prio" not in two and "counters" not in two  # two machines are never merged into one
    assert two["hosts"]["gpu01"]["prio"][0]["rx_packets"] == 419873392068
    assert two["hosts"]["gpu02"]["prio"] == {3: {"rx_bytes": 5, "tx_bytes": 9}}


def test_ethtool_stats_non_ascii_priority_digit_is_not_a_priority():
    f = parse("ethtool_stats", "     rx_prio３_bytes: 5\n     rx_prio1_bytes: 6\n")
    assert f["prio"] == {1: {"rx_bytes": 6}}


@pytest.mark.parametrize("garbage", ["", "hello world\nthis is not ethtool", "rx_prio3_bytes: lots"])
def test_ethtool_stats_garbage_raises(garbage):
    with pytest.raises(ParseError):
        parse("ethtool_stats", garbage)


# --- hw_counters ------------------------------------------------------------------------------

def test_hw_counters_echo_header_cat_loop_names_device_from_cwd_prompt():
    f = parse("hw_counters", corpus_text("hw_counters/gpud-943-mlx5-counters-echo-header-cat-loop.txt"))
    dev = f["by_device"]["mlx5_1/1"]
    assert len(dev) == 21
    assert dev["port_xmit_data"] == 205143497464492 and dev["excessive_buffer_overrun_errors"] == 15
    assert dev["port_xmit_wait"] == 4294967295 and f["counters"]["symbol_error"] == 0


def test_hw_counters_printf_columns_after_cd():
    f = parse("hw_counters", corpus_text("hw_counters/netdata-9091-omnipath-printf-name-value-columns.txt"))
    assert f["by_device"]["hfi1_0/1"]["PktDrop"] == 134 and f["counters"]["RcResend"] == 2079
    assert len(f["counters"]) == 37


def test_hw_counters_na_values_are_unreadable_not_zero():
    f = parse("hw_counters", corpus_text("hw_counters/node-exporter-966-i40iw-grep-na-no-pma.txt"))
    assert f["counters"] == {} and f["values"] == []
    assert f["unreadable"]["port_rcv_data"] == "N/A (no PMA)" and len(f["unreadable"]) == 8


def test_hw_counters_echo_path_and_value_shape():
    # `for f in /sys/class/infiniband/mlx5_0/ports/1/hw_counters/*; do echo $f $(cat $f); done`
    text = ("$ for f in /sys/class/infiniband/mlx5_0/ports/1/hw_counters/*; do echo $f $(cat $f); done\n"
            "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent 3773741\n"
            "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/rp_cnp_handled 43305\n")
    f = parse("hw_counters", text)
    assert f["by_device"] == {"mlx5_0/1": {"np_cnp_sent": 3773741, "rp_cnp_handled": 43305}}
    assert f["counters"] == {"np_cnp_sent": 3773741, "rp_cnp_handled": 43305}


@pytest.mark.parametrize("shape", ["crlf", "ansi", "pdsh"])
def test_hw_counters_pasted_shapes(shape):
    text = corpus_text("hw_counters/gpud-943-mlx5-counters-echo-header-cat-loop.txt")
    if shape == "crlf":
        text = text.replace("\n", "\r\n")
    elif shape == "ansi":
        text = text.replace("=== ./port_xmit_data ===", "\x1b[1m=== ./port_xmit_data ===\x1b[0m")
    else:
        text = "\n".join(f"gpu07: {ln}" for ln in text.split("\n") if ln.strip())
    f = parse("hw_counters", text)
    assert f["by_device"]["mlx5_1/1"]["port_xmit_data"] == 205143497464492
    assert f.get("host") == ("gpu07" if shape == "pdsh" else None)


@pytest.mark.parametrize("garbage", ["", "no counters here\njust words", "=== ./np_cnp_sent ===\nmany\n"])
def test_hw_counters_garbage_raises(garbage):
    with pytest.raises(ParseError):
        parse("hw_counters", garbage)
