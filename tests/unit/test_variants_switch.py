"""Issue 13, class 5 (vendor and version drift), the switch part: real switch outputs as JSON, as the Python repr
an automation script prints, and SONiC's counter tables across releases. Samples and their provenance:
tests/data/variants/switch/ (README.md there).

Each sample is read by its parser (detect + parse) and through `roce-wizard analyze --json` (one file at a time),
which must give the same kind and facts.
"""

from __future__ import annotations

import pytest

from roce_wizard.parsers import PARSERS
from roce_wizard.parsers.detect import detect
from roce_wizard.parsers.switch.structured import MAX_REPR_CHARS, load_structured
from tests.unit.test_variants import VARIANTS, analyze, check_facts

SWITCH = VARIANTS / "switch"

EXPECT: dict[str, tuple[str, dict[str, object]]] = {
    # Onyx JSON API answer printed by a script as a Python dict: single quotes, `data` a list of two tables
    "onyx-json-api-pfc-python-repr-single-quotes.txt": (
        "onyx_pfc", {"enabled": True, "priorities": [3, 4], "disabled_priorities": [0, 1, 2, 5, 6, 7],
                     "ports#": 16, "ports.0.port": "Eth1/11", "ports.0.oper": "Disabled", "ports.0.enabled": False,
                     "ports.6.port": "Eth1/16", "ports.6.enabled": True}),
    # EOS eAPI `show interfaces` (JSON): `mtu` is the IP MTU; a bridged port's L2 MTU is not in it -> unknown
    "eos-show-interfaces-json-napalm-routed-mgmt-bridged.txt": (
        "eos_interfaces", {"interfaces#": 6, "interfaces.0.port": "Management1", "interfaces.0.routed": True,
                           "interfaces.0.mtu": 1500, "interfaces.0.mtu_kind": "ip", "interfaces.1.port": "Ethernet2",
                           "interfaces.1.routed": False, "interfaces.1.ip_mtu": 9214, "interfaces.1.mtu": None,
                           "interfaces.1.link_up": True, "interfaces.1.pause_input": 0}),
    "eos-show-interfaces-json-napalm-datalink-notconnect-subif.txt": (
        "eos_interfaces", {"interfaces#": 3, "interfaces.0.port": "Ethernet1", "interfaces.0.link_up": False,
                           "interfaces.0.admin_up": True, "interfaces.0.forwarding_model": "dataLink",
                           "interfaces.0.mtu": None, "interfaces.2.port": "Port-Channel1.20",
                           "interfaces.2.mtu": 1500}),
    # SONiC `show pfc counters`: Rx and Tx tables joined per port; thousands separators; N/A is unknown
    "sonic-show-pfc-counters-rx-tx-thousands-separators.txt": (
        "sonic_show_pfc", {"ports#": 3, "ports.0.port": "Ethernet0",
                           "ports.0.rx_pfc": [1200, 201, 202, 203, 204, 205, 206, 207],
                           "ports.2.tx_pfc": [1810, 811, 812, 813, 814, 815, 816, 817]}),
    "sonic-show-pfc-counters-all-backplane-na.txt": (
        "sonic_show_pfc", {"ports#": 6, "ports.2.port": "Ethernet-BP0", "ports.2.rx_pfc.3": 603,
                           "ports.4.port": "Ethernet-BP256", "ports.4.rx_pfc": [None] * 8,
                           "ports.5.tx_pfc": [None] * 8}),
    # `show pfc counters --history` (pause time in microseconds in this release)
    "sonic-show-pfc-counters-history-us.txt": (
        "sonic_show_pfc", {"ports#": 0, "history#": 24, "history.0.port": "Ethernet0", "history.0.priority": 0,
                           "history.0.rx_pause_transitions": 12, "history.0.total_rx_pause_time_us": 12000000,
                           "history.0.recent_rx_pause_timestamp": "01/10/2008, 21:20:00",
                           "history.-1.port": "Ethernet8", "history.-1.priority": 7}),
    # SONiC `show queue counters`: the classic columns, the JSON form, VOQs on a chassis, the trim columns
    "sonic-show-queue-counters-port-ethernet8.txt": (
        "sonic_queue_counters", {"format": "table", "queues#": 30, "queues.3.port": "Ethernet8",
                                 "queues.3.queue": "UC3", "queues.3.type": "UC", "queues.3.index": 3,
                                 "queues.3.packets": 11, "queues.3.drop_packets": 63, "queues.-1.queue": "ALL29",
                                 "queues.-1.packets": None}),
    "sonic-show-queue-counters-port-ethernet8-json.txt": (
        "sonic_queue_counters", {"format": "json", "queues#": 30, "queues.0.queue": "ALL20",
                                 "queues.0.drop_bytes": None}),
    "sonic-show-queue-counters-voq-chassis-credit-wd.txt": (
        "sonic_queue_counters", {"queues#": 8, "queues.2.port": "testsw|Ethernet0", "queues.2.type": "VOQ",
                                 "queues.2.packets": 82, "queues.2.credit_wd_del_packets": 19}),
    "sonic-show-queue-counters-trim-ethernet8.txt": (
        "sonic_queue_counters", {"queues#": 30, "queues.1.trim_packets": 100, "queues.1.trim_sent_packets": 50,
                                 "queues.2.trim_drop_packets": None, "queues.1.packets": None}),
}


def test_every_switch_sample_is_expected_and_has_provenance():
    on_disk = {p.name for p in SWITCH.glob("*.txt")}
    assert on_disk == set(EXPECT)
    readme = (SWITCH / "README.md").read_text(encoding="utf-8")
    assert all(name in readme for name in on_disk)


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_parser_reads_the_switch_sample(name):
    text = (SWITCH / name).read_text(encoding="utf-8")
    kind, expected = EXPECT[name]
    assert detect(text).kind == kind
    check_facts(PARSERS[kind].parse(text), expected)


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_analyze_json_gives_kind_and_facts_for_switch_sample(name):
    kind, expected = EXPECT[name]
    entry = analyze(f"switch/{name}")
    assert entry["kind"] == kind
    check_facts(entry["facts"], expected)


def test_queue_counters_table_and_json_of_the_same_port_agree():
    """sonic-utilities prints the same counters for `show queue counters Ethernet8` and its `--json`."""
    table = PARSERS["sonic_queue_counters"].parse((SWITCH / "sonic-show-queue-counters-port-ethernet8.txt").read_text())
    js = PARSERS["sonic_queue_counters"].parse((SWITCH / "sonic-show-queue-counters-port-ethernet8-json.txt").read_text())

    def key(q: dict) -> tuple:
        return q["port"], q["queue"]

    assert sorted(table["queues"], key=key) == sorted(js["queues"], key=key)


def test_onyx_repr_judged_like_its_json():
    """The same Onyx answer as a Python repr: RW501 judges the ports it lists (Eth1/16 is the only one with PFC
    operational), as it does for the json-print form."""
    got = [(f["status"], f["summary"]) for f in
           analyze("switch/onyx-json-api-pfc-python-repr-single-quotes.txt")["findings"] if f["check"] == "RW501"]
    assert got, "RW501 did not judge the repr"
    assert any(status == "fail" for status, _ in got), got


def test_repr_is_read_as_literals_only():
    """A repr is read with ast.literal_eval: a call or a name is not a literal and is never evaluated."""
    assert load_structured("{'PFC': 'enabled', 'x': None, 'y': True}") == {"PFC": "enabled", "x": None, "y": True}
    assert load_structured("{'PFC': __import__('os').getcwd()}") is None
    assert load_structured("{'a': '" + "x" * MAX_REPR_CHARS + "'}") is None


def test_combined_sonic_triage_paste_stays_sonic_pfc():
    """A paste of `show pfc priority`-era triage tables together stays the kind that reads them together."""
    text = (SWITCH.parent.parent / "parser_seeds/sonic_pfc/lossless-pg-triage-uc3-drops-zero-pfc.txt").read_text()
    assert detect(text).kind == "sonic_pfc"
