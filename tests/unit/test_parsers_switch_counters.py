"""RW609 switch counters on real outputs: EOS egress queue counters (ntc-templates capture) and the Cumulus
NVUE `qos roce counters` table (Cumulus 5.14 docs capture). Vendor outputs with no public capture (EOS PFC
counters, Onyx per-priority counters, OS10 PFC/queuing statistics) have no parser: tests/data/README-issue15.md."""

from __future__ import annotations

import pytest

from roce_wizard.parsers import ParseError, parse
from roce_wizard.parsers.detect import detect
from tests.conftest import corpus_text

EOS = "eos_queue_counters/ntc-templates-eos-queue-detail-egress-tc7-drops.txt"
NVUE = "cumulus_nv_show_qos_roce/cl514-interface-swp16-roce-counters-tx-discards.txt"


def test_eos_queue_counters_rows_and_per_queue_sums():
    text = corpus_text(EOS)
    assert detect(text).kind == "eos_queue_counters"
    f = parse("eos_queue_counters", text)
    assert len(f["rows"]) == 20 and len(f["ports"]) == 18
    assert f["rows"][0] == {"port": "Et3/1/1", "tc": 1, "drop_prec": "DP0-3", "dest_type": "UC",
                            "enq_pkts": 67521, "enq_octets": 7523778, "drop_pkts": 0, "drop_octets": 0}
    assert f["ports"]["Et4/2/1"] == {7: {"enq_pkts": 0, "enq_octets": 0, "drop_pkts": 1, "drop_octets": 110}}
    assert f["ports"]["Et3/9/1"][7]["enq_octets"] == 238170896
    assert sorted(p for p, q in f["ports"].items() if any(v["drop_pkts"] for v in q.values())) == ["Et4/2/1", "Et4/4/1"]


def test_eos_queue_counters_sum_over_dest_types_and_unknown_count():
    head = corpus_text(EOS).split("\n")[:3]
    text = "\n".join(head + [
        "Et1/1                  TC3      DP0-3         UC               100              9000                 2               180",
        "Et1/1                  TC3      DP0-3         MC                10               900                 1                90",
        "Et1/2                  TC3      DP0-3         UC               100              9000                 ３                 0",
    ])
    f = parse("eos_queue_counters", text)
    assert f["ports"]["Et1/1"][3] == {"enq_pkts": 110, "enq_octets": 9900, "drop_pkts": 3, "drop_octets": 270}
    assert f["ports"]["Et1/2"][3]["drop_pkts"] is None  # not read, not summed as 0


@pytest.mark.parametrize("shape", ["crlf", "ansi", "prompt"])
def test_eos_queue_counters_pasted_shapes(shape):
    text = corpus_text(EOS)
    if shape == "crlf":
        text = text.replace("\n", "\r\n")
    elif shape == "ansi":
        text = text.replace("Et4/2/1", "\x1b[1mEt4/2/1\x1b[0m")
    else:
        text = "leaf1#show interfaces counters queue detail | grep egress\n" + text + "\nleaf1#"
    assert parse("eos_queue_counters", text)["ports"]["Et4/2/1"][7]["drop_pkts"] == 1


def test_nvue_roce_counters_as_integers():
    f = parse("nvue_qos_roce", corpus_text(NVUE))
    rc = f["roce_counters"]
    assert rc["tx_roce_unicast_no_buffer_discard"] == 663060754115
    assert rc["ecn_marked_packets"] == 693777677344
    assert (rc["rx_pause_packets"], rc["tx_pause_packets"], rc["rx_non_roce_no_buffer_discard"]) == (0, 0, 55)
    assert f["counters"]["tx-stats.tx-roce-stats.roce-bytes"] == "92824.38 GB"  # sizes stay strings, never counts
    assert "tx_roce_bytes" not in rc


def test_nvue_roce_counters_odd_value_is_unknown():
    text = corpus_text(NVUE).replace("ecn-marked-packets         693777677344", "ecn-marked-packets         ６９")
    assert parse("nvue_qos_roce", text)["roce_counters"]["ecn_marked_packets"] is None


@pytest.mark.parametrize("garbage", ["", "We rebooted the rack on Tuesday.\n",
                                     "Port  Traffic  DropPrec  DestType  OutEnqPkts\nEt1/1 nothing here\n"])
def test_eos_queue_counters_garbage_raises(garbage):
    with pytest.raises(ParseError):
        parse("eos_queue_counters", garbage)
