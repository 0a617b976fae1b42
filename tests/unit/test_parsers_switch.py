"""Switch parsers (roce_wizard/parsers/switch/) on real outputs, the seeds, and the lab's switches.

Three sources for every kind the checks read:
  - tests/data/corpus (Onyx `show dcb priority-flow-control` text and json-print, Onyx `show interfaces`
    json-print, Cumulus `nv show qos roce` and the per-interface counters, SONiC `show pfc priority`
    and a triage paste with `show pfc counters`);
  - the seeds, sliced out of the seed files by their own lines (seed 004's `show interfaces status`,
    `show priority-flow-control` and the config typed at `wedge(config-if-Et1/1-3/4)#`; seed 001's
    EOS and Onyx PFC config);
  - the lab's vendor CLIs, driven directly (`SwitchCli.run`), healthy and with each fault.
Nothing here is hand-written except where a test says so.
"""

from __future__ import annotations

import pytest

from roce_wizard.lab import faults as faults_mod
from roce_wizard.lab.scenarios import fresh, healthy
from roce_wizard.lab.switch import SwitchCli
from roce_wizard.parsers import PARSERS
from roce_wizard.parsers.base import ParseError
from roce_wizard.parsers.detect import detect
from roce_wizard.parsers.switch import port_key, switch_prompt_command
from tests.conftest import SEEDS, corpus_text

SWITCH_KINDS = ("arista_pfc", "eos_qos_interfaces", "eos_interfaces", "eos_interfaces_status", "eos_flowcontrol",
                "eos_qos_maps", "eos_running_config", "onyx_pfc", "onyx_interfaces", "onyx_qos_interface",
                "onyx_running_config", "os10_running_config", "os10_interfaces", "nvue_qos_roce", "nvue_interfaces",
                "sonic_pfc", "sonic_show_pfc", "sonic_queue_counters")


def parse(kind: str, text: str) -> dict:
    return PARSERS[kind].parse(text)


def detected(text: str) -> str:
    return detect(text).kind


# ------------------------------------------------------------------------------------------ seeds


def _seed(prefix: str) -> list[str]:
    return next(SEEDS.glob(f"{prefix}_*.txt")).read_text(encoding="utf-8").split("\n")


def seed004_status() -> str:
    s = _seed("004")
    i = s.index("wedge>show interfaces status")
    return "\n".join(s[i:i + 18])


def seed004_pfc() -> str:
    s = _seed("004")
    i = s.index("wedge(config-if-Et1/1-3/4)#show priority-flow-control")
    return "\n".join(s[i:i + 31])


def seed004_config() -> str:
    return "\n".join(x for x in _seed("004") if x.startswith("wedge(config") and "#show" not in x)


def seed001_eos() -> str:
    s = _seed("001")
    i = next(n for n, x in enumerate(s) if x.startswith("ccorel(config)#priority-flow-control mode on"))
    return "\n".join(s[i:i + 8])


def seed001_onyx() -> str:
    s = _seed("001")
    i = next(n for n, x in enumerate(s) if "dcb priority-flow-control enable force" in x)
    return "\n".join(s[i:i + 11])


def test_seed004_show_priority_flow_control():
    text = seed004_pfc()
    assert detected(text) == "arista_pfc"
    facts = parse("arista_pfc", text)
    assert facts["global_enabled"] is True
    assert facts["hardware_priorities"] == list(range(8))
    assert [p["port"] for p in facts["ports"]] == [f"Et{a}/{b}" for a in (1, 2, 3) for b in (1, 2, 3, 4)]
    assert all(p["enabled"] and p["active"] and p["watchdog"] and p["priorities"] == [3] for p in facts["ports"])
    assert facts["ports"][0]["note"] == "DCBX disabled"  # the first row has a trailing space in the seed


def test_seed004_show_interfaces_status_with_squeezed_columns():
    text = seed004_status()
    assert detected(text) == "eos_interfaces_status"
    ports = parse("eos_interfaces_status", text)["ports"]
    assert len(ports) == 16
    assert ports[0] == {"port": "Et1/1", "name": None, "status": "connected", "connected": True, "vlan": "trunk",
                        "duplex": "full", "speed": "25G", "type": "100GBASE-CR4"}
    assert ports[-1]["status"] == "notconnect" and ports[-1]["type"] == "Not Present"


def test_seed004_typed_config_names_the_range_once():
    text = seed004_config()
    assert detected(text) == "eos_running_config"
    facts = parse("eos_running_config", text)
    assert list(facts["interfaces"]) == ["Ethernet1/1-3/4"]  # `interface ethernet 1/1-3/4` and the prompt's Et1/1-3/4
    block = facts["interfaces"]["Ethernet1/1-3/4"]
    assert block["trust"] == "dscp" and block["pfc_enabled"] is True and block["no_drop"] == [3]


def test_seed001_eos_config_pasted_on_one_line():
    text = seed001_eos()
    assert detected(text) == "eos_running_config"
    facts = parse("eos_running_config", text)
    assert facts["interfaces"] == {}
    assert facts["global"]["pfc_enabled"] is True and facts["global"]["no_drop"] == list(range(8))


def test_seed001_onyx_config_with_its_priority_8_typo():
    text = seed001_onyx()
    assert detected(text) == "onyx_running_config"
    facts = parse("onyx_running_config", text)
    assert facts["pfc_enabled"] is True
    assert facts["pfc_priorities"] == list(range(8))
    assert facts["ignored"] == ["dcb priority-flow-control priority 8 enable"] * 2  # the switch refuses priority 8


# ------------------------------------------------------------------------------------------ corpus


def test_onyx_smartx_pfc_with_elision_and_trailing_spaces():
    text = corpus_text("onyx_show_dcb_pfc/smartx-onyx-pfc-prio3-elided.txt")
    assert detected(text) == "onyx_pfc"
    facts = parse("onyx_pfc", text)
    assert facts["enabled"] is True and facts["priorities"] == [3]
    assert facts["disabled_priorities"] == [0, 1, 2, 4, 5, 6, 7]
    assert facts["elided"] is True
    assert facts["ports"] == [
        {"port": "Eth1/1", "admin": "Auto", "oper": "Enabled", "enabled": True},
        {"port": "Eth1/2", "admin": "Auto", "oper": "Enabled", "enabled": True},
    ]


def test_onyx_json_print_pfc_admin_auto_oper_disabled():
    text = corpus_text("onyx_show_dcb_pfc/ansible-fixture-json-pfc-admin-auto-oper-disabled.txt")
    assert detected(text) == "onyx_pfc"
    facts = parse("onyx_pfc", text)
    assert facts["enabled"] is None and facts["priorities"] is None  # not printed: never guessed
    assert [(p["port"], p["admin"], p["oper"], p["enabled"]) for p in facts["ports"]] == [
        ("Eth1/1", "Auto", "Disabled", False), ("Eth1/1/2", "Auto", "Disabled", False),
        ("Po1", "Auto", "Disabled", False), ("Mpo2", "Auto", "Disabled", False)]


def test_onyx_json_print_interfaces():
    text = corpus_text("onyx_show_interfaces/ansible-fixture-json-eth1-1-mtu1500-down-vlans.txt")
    assert detected(text) == "onyx_interfaces"
    eth, vlan10, vlan1002 = parse("onyx_interfaces", text)["interfaces"]
    assert eth == {"port": "Eth1/1", "type": "ethernet", "admin_up": True, "link_up": False, "description": None,
                   "mtu": 1500, "max_packet": 1522, "flowcontrol_rx": False, "flowcontrol_tx": False,
                   "speed": "40 Gbps", "switchport_mode": "access"}
    assert vlan10["port"] == "Vlan 10" and vlan10["type"] == "vlan" and vlan10["mtu"] == 1500 and vlan10["link_up"]
    assert vlan1002["link_up"] is False and vlan1002["max_packet"] is None


def test_nvue_qos_roce_lossy_mode():
    text = corpus_text("cumulus_nv_show_qos_roce/nvue-cmdref-lossy-mode-no-pfc.txt")
    assert detected(text) == "nvue_qos_roce"
    facts = parse("nvue_qos_roce", text)
    assert facts["enabled"] is True and facts["mode"] == "lossy"
    assert facts["pfc_priorities"] == []  # `pfc-priority -`
    assert facts["trust_mode"] == ["pcp", "dscp"]
    assert facts["congestion_mode"] == "ECN" and facts["ecn_tcs"] == [0, 3]
    assert facts["dscp_to_switch_priority"][26] == 3 and facts["dscp_to_switch_priority"][63] == 7
    assert facts["switch_priority_to_tc"] == {0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 0, 6: 6, 7: 0}
    assert facts["tree"]["lldp-app-tlv"]["protocol-id"] == {"operational": "4791"}


def test_nvue_roce_counters_three_levels():
    text = corpus_text("cumulus_nv_show_qos_roce/cl514-interface-swp16-roce-counters-tx-discards.txt")
    assert detected(text) == "nvue_qos_roce"
    facts = parse("nvue_qos_roce", text)
    c = facts["counters"]
    assert c["tx-stats.tx-roce-stats.unicast-no-buffer-discard"] == "663060754115"
    assert c["tx-stats.tx-pfc-stats.pause-packets"] == "0" and c["rx-stats.rx-pfc-stats.pause-packets"] == "0"
    assert c["tx-stats.tx-roce-stats.roce-bytes"] == "92824.38 GB"
    assert "mode" not in facts  # the counters say nothing about the configuration


def test_sonic_show_pfc_priority():
    text = corpus_text("sonic_show_pfc/sonic-utilities-796-show-pfc-priority.txt")
    assert detected(text) == "sonic_pfc"
    assert parse("sonic_pfc", text) == {"ports": [{"port": "Ethernet0", "priorities": [3, 4]}]}


def test_sonic_triage_paste_pfc_and_queue_counters():
    text = corpus_text("sonic_show_pfc/lossless-pg-triage-uc3-drops-zero-pfc.txt")
    assert detected(text) == "sonic_pfc"
    facts = parse("sonic_pfc", text)
    assert facts["pfc_counters"]["rx"]["Ethernet4"] == [0] * 8 and facts["pfc_counters"]["tx"]["Ethernet120"] == [0] * 8
    assert facts["queue_counters"] == [{"port": "Ethernet4", "queue": "UC3", "packets": 8193, "bytes": 852072,
                                        "drop_packets": 91786, "drop_bytes": 9545744}]


def test_sonic_triage_paste_counters_read_by_the_counter_kinds_too():
    """The triage paste's own `show pfc counters` and `show queue counters` tables, read by the dedicated kinds
    (the paste as a whole stays sonic_pfc): the same numbers, per port and priority / queue."""
    text = corpus_text("sonic_show_pfc/lossless-pg-triage-uc3-drops-zero-pfc.txt")
    pfc = parse("sonic_show_pfc", text)
    assert [(p["port"], p["rx_pfc"], p["tx_pfc"]) for p in pfc["ports"]] == [
        ("Ethernet4", [0] * 8, [0] * 8), ("Ethernet120", [0] * 8, [0] * 8)]
    queues = parse("sonic_queue_counters", text)["queues"]
    assert queues == [{"port": "Ethernet4", "queue": "UC3", "type": "UC", "index": 3, "packets": 8193,
                       "bytes": 852072, "drop_packets": 91786, "drop_bytes": 9545744}]


def test_sonic_counters_unreadable_cells_are_unknown():
    """`N/A`, a superscript or an Arabic-Indic digit in a counter cell is unknown (null), never 0 or 3."""
    head = "  Port Rx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7\n" + "---------  " + "  ".join(["------"] * 8)
    row = "Ethernet0       0     N/A       ²       ٣       4       5       6   1,007"
    (port,) = parse("sonic_show_pfc", head + "\n" + row + "\n")["ports"]
    assert port["rx_pfc"] == [0, None, None, None, 4, 5, 6, 1007] and port["tx_pfc"] is None


def test_onyx_json_api_envelope_and_repr_of_show_interfaces():
    """`show interfaces ethernet 1/1` through the Onyx JSON API, printed by a script as a Python dict: the corpus
    json-print answer wrapped the way the API wraps it (hand-made from the real answer, for the envelope)."""
    import json as _json

    real = _json.loads(corpus_text("onyx_show_interfaces/ansible-fixture-json-eth1-1-mtu1500-down-vlans.txt"))
    wrapped = repr({"results": [{"status": "OK", "executed_command": "show interfaces ethernet 1/1",
                                 "status_message": "", "data": real}]})
    assert "'Operational state': 'Down'" in wrapped
    assert detected(wrapped) == "onyx_interfaces"
    assert parse("onyx_interfaces", wrapped) == parse("onyx_interfaces", _json.dumps(real))


# ------------------------------------------------------------------------------------------ the lab's CLIs


def cli(vendor: str, world=None, *, fault: str | None = None) -> SwitchCli:
    world = world or healthy(2, vendor)
    if fault:
        faults_mod.inject(world, fault)
    c = SwitchCli(world, f"sw-{vendor}-1")
    if vendor != "os10":
        c.run("enable")
    return c


def test_lab_eos_outputs():
    c = cli("eos")
    pfc = parse("arista_pfc", c.run("show priority-flow-control"))
    assert pfc["global_enabled"] and [p["priorities"] for p in pfc["ports"]] == [[3]] * 4
    qos = parse("eos_qos_interfaces", c.run("show qos interfaces"))
    assert [(i["port"], i["trust"], i["ecn_queues"]) for i in qos["interfaces"]] == [
        (f"Ethernet{n}", "dscp", [3]) for n in range(1, 5)]
    ifs = parse("eos_interfaces", c.run("show interfaces"))["interfaces"]
    assert [(i["port"], i["mtu"], i["mtu_kind"], i["routed"]) for i in ifs] == [
        (f"Ethernet{n}", 9216, "ethernet", False) for n in range(1, 5)]
    flow = parse("eos_flowcontrol", c.run("show flowcontrol"))["ports"]
    assert [(p["port"], p["send"], p["receive"]) for p in flow] == [(f"Et{n}", False, False) for n in range(1, 5)]
    maps = parse("eos_qos_maps", c.run("show qos maps"))
    assert maps["dscp_tc"][26] == 3 and maps["dscp_tc"][0] == 1 and maps["dscp_tc"][8] == 0
    assert maps["tc_cos"] == {0: 1, 1: 0, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7}
    run = parse("eos_running_config", c.run("show running-config"))
    e3 = run["interfaces"]["Ethernet3"]
    assert (e3["trust"], e3["pfc_enabled"], e3["no_drop"], e3["ecn_queues"]) == ("dscp", True, [3], [3])
    status = parse("eos_interfaces_status", c.run("show interfaces status"))["ports"]
    assert [p["name"] for p in status] == ["esx-01 vmnic2", "esx-01 vmnic3", "esx-02 vmnic2", "esx-02 vmnic3"]


@pytest.mark.parametrize("fault,kind,command,check", [
    ("RW501", "arista_pfc", "show priority-flow-control",
     lambda f: (f["ports"][2]["enabled"], f["ports"][2]["active"]) == (False, False)),
    ("RW502", "arista_pfc", "show priority-flow-control", lambda f: f["ports"][2]["priorities"] == [4]),
    ("RW503", "eos_qos_interfaces", "show qos interfaces Ethernet3", lambda f: f["interfaces"][0]["trust"] == "pcp"),
    ("RW504", "eos_interfaces", "show interfaces Ethernet3", lambda f: f["interfaces"][0]["mtu"] == 1500),
    ("RW505", "eos_flowcontrol", "show flowcontrol", lambda f: f["ports"][2]["receive"] is True),
    ("RW506", "eos_qos_interfaces", "show qos interfaces Ethernet3", lambda f: f["interfaces"][0]["ecn_queues"] == []),
    ("RW507", "eos_qos_maps", "show qos maps", lambda f: f["dscp_tc"][26] == 4 and f["dscp_tc"][27] == 3),
    ("RW507", "eos_running_config", "show running-config", lambda f: f["dscp_tc"] == {26: 4}),
])
def test_lab_eos_faults_read(fault, kind, command, check):
    text = cli("eos", fault=fault).run(command)
    assert detected(text) == kind
    assert check(parse(kind, text))


def test_lab_eos_routed_port_reads_the_ip_mtu():
    # HAND-WRITTEN from the lab's own block: a routed EOS port prints `IP MTU` (with the Ethernet
    # MTU in brackets on newer releases) and its `mtu` is the IP MTU
    text = cli("eos").run("show interfaces Ethernet1").replace(
        "  Ethernet MTU 9216 bytes , BW 100000000 kbit",
        "  Internet address is 10.0.0.1/31\n  IP MTU 1500 bytes (Ethernet MTU 1522 bytes), BW 100000000 kbit")
    (port,) = parse("eos_interfaces", text)["interfaces"]
    assert port["routed"] and port["ip_mtu"] == 1500 and port["ethernet_mtu"] == 1522
    assert port["mtu"] == 1500 and port["mtu_kind"] == "ip"


def test_lab_onyx_outputs():
    c = cli("onyx")
    pfc = parse("onyx_pfc", c.run("show dcb priority-flow-control"))
    assert pfc["enabled"] and pfc["priorities"] == [3] and not pfc["elided"]
    assert [(p["port"], p["admin"], p["enabled"]) for p in pfc["ports"]] == [(f"Eth1/{n}", "On", True) for n in range(1, 5)]
    ifs = parse("onyx_interfaces", c.run("show interfaces ethernet"))["interfaces"]
    assert [(i["port"], i["mtu"], i["max_packet"], i["flowcontrol_rx"], i["description"]) for i in ifs] == [
        (f"Eth1/{n}", 9216, 9238, False, f"esx-0{(n + 1) // 2} vmnic{2 + (n + 1) % 2}") for n in range(1, 5)]
    qos = parse("onyx_qos_interface", c.run("show qos interface ethernet 1/3"))["interfaces"]
    assert qos == [{"port": "Eth1/3", "trust": "dscp", "trust_raw": "L3", "default_switch_priority": 0}]
    run = parse("onyx_running_config", c.run("show running-config"))
    assert run["pfc_enabled"] and run["pfc_priorities"] == [3] and run["dscp_to_switch_priority"] == {}
    assert run["hostname"] == "sw-onyx-1"
    assert run["interfaces"]["Eth1/3"] == {"pfc_mode": "on", "trust": "dscp", "mtu": 9216, "flowcontrol_rx": None,
                                           "flowcontrol_tx": None, "ecn_queues": [3], "red_queues": [],
                                           "description": "esx-02 vmnic2", "shutdown": False}


def test_lab_onyx_faults_read():
    assert parse("onyx_pfc", cli("onyx", fault="RW501").run("show dcb priority-flow-control"))["ports"][2] == {
        "port": "Eth1/3", "admin": "Auto", "oper": "Disabled", "enabled": False}
    assert parse("onyx_pfc", cli("onyx", fault="RW502").run("show dcb priority-flow-control"))["priorities"] == [4]
    run = lambda fault: parse("onyx_running_config", cli("onyx", fault=fault).run("show running-config"))
    assert run("RW503")["interfaces"]["Eth1/3"]["trust"] is None  # back to the L2 default: no line printed
    assert run("RW506")["interfaces"]["Eth1/3"]["ecn_queues"] == []
    assert run("RW507")["dscp_to_switch_priority"] == {26: 4}
    ifs = lambda fault: parse("onyx_interfaces", cli("onyx", fault=fault).run("show interfaces ethernet 1/3"))
    assert ifs("RW504")["interfaces"][0]["mtu"] == 1500
    assert ifs("RW505")["interfaces"][0]["flowcontrol_rx"] is True


def test_lab_os10_outputs_and_faults():
    c = cli("os10")
    run = parse("os10_running_config", c.run("show running-configuration"))
    e3 = run["interfaces"]["ethernet1/1/3"]
    assert (e3["mtu"], e3["pfc_mode"], e3["no_drop"], e3["ecn_queues"], e3["trust"], e3["trust_map"]) == (
        9216, True, [3], [3], "dscp", "default")
    assert run["policy_maps"]["pfc-cos-3"] == {"type": "network-qos", "classes": {"pfcdot1p3": {
        "pause": True, "pfc_cos": [3], "ecn": False, "wred_profile": None, "bandwidth": None}}}
    assert run["class_maps"]["queuing:q3"]["queue"] == 3
    assert "mgmt1/1/1" in run["interfaces"]
    ifs = parse("os10_interfaces", c.run("show interface"))["interfaces"]
    assert [(i["port"], i["mtu"], i["ip_mtu"], i["flowcontrol_rx"]) for i in ifs] == [
        (f"ethernet1/1/{n}", 9216, 9184, False) for n in range(1, 5)]
    faulty = {code: parse("os10_running_config", cli("os10", fault=code).run("show running-configuration"))
              for code in ("RW501", "RW502", "RW503", "RW504", "RW505", "RW506", "RW507")}
    port = {code: f["interfaces"]["ethernet1/1/3"] for code, f in faulty.items()}
    assert port["RW501"]["pfc_mode"] is False
    assert port["RW502"]["no_drop"] == [4]
    assert port["RW503"]["trust"] is None and port["RW503"]["trust_map"] is None
    assert port["RW504"]["mtu"] == 1500
    assert port["RW505"]["flowcontrol_rx"] is True
    assert port["RW506"]["ecn_queues"] == []
    assert port["RW507"]["trust_map"] == "dscp-tc-custom" and faulty["RW507"]["dscp_maps"] == {"dscp-tc-custom": {26: 4}}


def test_lab_fresh_switches_read_as_unconfigured():
    eos = cli("eos", fresh(2, "eos"))
    assert not any(p["enabled"] for p in parse("arista_pfc", eos.run("show priority-flow-control"))["ports"])
    onyx = parse("onyx_pfc", cli("onyx", fresh(2, "onyx")).run("show dcb priority-flow-control"))
    assert onyx["enabled"] is False and onyx["priorities"] == []
    os10 = parse("os10_running_config", cli("os10", fresh(2, "os10")).run("show running-configuration"))
    assert all(not i["pfc_mode"] and i["no_drop"] == [] and i["trust"] is None and i["mtu"] == 1500
               for n, i in os10["interfaces"].items() if n.startswith("ethernet"))


@pytest.mark.parametrize("vendor,commands", [
    ("eos", ["show priority-flow-control", "show qos interfaces", "show interfaces", "show flowcontrol",
             "show qos maps", "show running-config", "show interfaces status"]),
    ("onyx", ["show dcb priority-flow-control", "show interfaces ethernet", "show running-config",
              "show qos interface ethernet 1/1"]),
    ("os10", ["show running-configuration", "show interface"]),
])
def test_every_lab_output_is_detected_as_one_kind(vendor, commands):
    c = cli(vendor)
    kinds = [detected(c.run(cmd)) for cmd in commands]
    assert "unknown" not in kinds and len(set(kinds)) == len(kinds), kinds


# ------------------------------------------------------------------------------------------ hand-written


def test_nvue_interfaces_json_and_table():
    # HAND-WRITTEN in NVUE's layouts (`nv show interface -o json`, `nv show interface`): no corpus sample
    text = '{"eth0": {"link": {"mtu": 1500, "state": {"up": {}}}, "type": "eth"},' \
           ' "swp1": {"link": {"mtu": 9216, "state": {"up": {}}}, "type": "swp"}}'
    assert detected(text) == "nvue_interfaces"
    assert parse("nvue_interfaces", text)["interfaces"][1] == {"port": "swp1", "mtu": 9216, "link_up": True,
                                                               "type": "swp"}
    table = ("Interface  MTU   Speed  State  Remote Host  Remote Port  Type      Summary\n"
             "---------  ----  -----  -----  -----------  -----------  --------  -------\n"
             "+ eth0     1500  1G     up                               eth       IP Address: 192.0.2.5/24\n"
             "+ swp1     9216  100G   up     esx-01       vmnic2       swp\n")
    assert detected(table) == "nvue_interfaces"
    assert [(i["port"], i["mtu"]) for i in parse("nvue_interfaces", table)["interfaces"]] == [("eth0", 1500),
                                                                                              ("swp1", 9216)]


def test_os10_running_config_system_qos_and_wred_profile():
    # HAND-WRITTEN in OS10's syntax: the trust map and the policies applied switch-wide, ECN via a wred profile
    text = "\n".join([
        "wred ecn-prof", " random-detect ecn", " random-detect color green minimum-threshold 150 maximum-threshold 1500",
        "!", "class-map type network-qos c3", " match qos-group 3", "!", "class-map type queuing q3", " match queue 3",
        "!", "policy-map type network-qos pfc", " !", " class c3", "  pause", "  pfc-cos 3", "!",
        "policy-map type queuing ecn", " !", " class q3", "  random-detect ecn-prof", "!",
        "system qos", " trust-map dscp default", " service-policy input type network-qos pfc",
        " service-policy output type queuing ecn", "!",
        "interface ethernet1/1/1", " no shutdown", " mtu 9216", " priority-flow-control mode on", "!",
    ])
    assert detected(text) == "os10_running_config"
    e1 = parse("os10_running_config", text)["interfaces"]["ethernet1/1/1"]
    assert (e1["no_drop"], e1["ecn_queues"], e1["trust"], e1["effective_trust_map"]) == ([3], [3], "dscp", "default")


def test_port_keys_and_prompts():
    assert port_key("Et3") == port_key("Ethernet3") == port_key("ethernet 3") == ("eth", (3,))
    assert port_key("Eth1/3") == port_key("ethernet 1/3") == port_key("1/3") == ("eth", (1, 3))
    assert port_key("ethernet1/1/3") == port_key("Ethernet 1/1/3") == ("eth", (1, 1, 3))
    assert port_key("swp16") == ("swp", (16,)) and port_key("Po1") == ("po", (1,))
    assert port_key("Vlan 10") == ("vlan", (10,)) and port_key("foo") is None
    assert switch_prompt_command("wedge>show interfaces status") == (None, "show interfaces status")
    assert switch_prompt_command("sw [standalone: master] (config) # dcb x") == ("config", "dcb x")
    assert switch_prompt_command("Et1/1      E A W      3") is None


@pytest.mark.parametrize("kind", SWITCH_KINDS)
def test_unrelated_text_is_a_parse_error(kind):
    with pytest.raises(ParseError):
        parse(kind, "We rebooted the rack on Tuesday.\n")
