"""The lab's switches: vendor CLIs (EOS, Onyx, OS10) that real netmiko drives, with show outputs in
the vendors' formats (held against seed 004 and the corpus) and config commands that change the world.

Part one drives `SwitchCli` directly (no network); part two starts an SSH server per vendor on
127.0.0.1 and runs netmiko's own drivers against it: connect, show, `send_config_set`, the show
output changing, `save_config`, `disconnect`.
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import Any

import asyncssh
import pytest

from roce_wizard.lab import faults as faults_mod
from roce_wizard.lab import switch as sw_mod
from roce_wizard.lab.scenarios import fresh, healthy
from roce_wizard.lab.switch import FAULTS, SwitchCli, cli_state, fault_port, roce_lossless, switch_priority
from roce_wizard.lab.world import World
from tests.conftest import SEEDS, corpus_text

PASSWORD = "lab-Sw1tch-pw"
SWITCH = {"eos": "sw-eos-1", "onyx": "sw-onyx-1", "os10": "sw-os10-1"}


def _cli(world: World, vendor: str, *, enable: bool = True) -> SwitchCli:
    cli = SwitchCli(world, SWITCH[vendor])
    if enable and vendor != "os10":
        assert cli.run("enable") == ""
    return cli


def _seed004() -> list[str]:
    return next(SEEDS.glob("004_*.txt")).read_text(encoding="utf-8").split("\n")


# =========================================================================================== formats


def test_eos_show_pfc_has_seed_004_layout():
    seed = [x.rstrip() for x in _seed004()]
    start = seed.index("wedge(config-if-Et1/1-3/4)#show priority-flow-control") + 1
    seed_header = seed[start:start + 16]
    seed_rows = [x for x in seed[start + 16:start + 30] if x.startswith("Et")]
    out = _cli(healthy(2, "eos"), "eos").run("show priority-flow-control").split("\n")
    assert out[:16] == seed_header  # the same banner, legend and two header lines, word for word
    row = re.compile(r"^Et\S+\s+(E A W|E\s+W|D)\s+(\S+)\s+-\s+-\s+- / -\s+- / -\s+DCBX disabled$")
    assert all(row.match(x) for x in seed_rows)  # the pattern reads the seed's rows …
    rows = out[16:]
    assert [row.match(x).group(1, 2) for x in rows] == [("E A W", "3")] * 4  # … and ours
    # column positions as the seed prints them
    assert rows[0].index("E A W") == seed_rows[0].index("E A W")
    assert rows[0].index("DCBX") == seed_rows[0].index("DCBX")


def test_eos_show_interfaces_status_header_is_seed_004s():
    seed = [x.rstrip() for x in _seed004()]
    header = seed[seed.index("wedge>show interfaces status") + 1]
    out = _cli(healthy(2, "eos"), "eos", enable=False).run("show interfaces status").split("\n")
    # the seed's column widths were squeezed by its author; a real EOS 4.27 capture has ours
    assert out[0].split() == header.split()
    assert out[0] == "Port       Name              Status       Vlan     Duplex Speed  Type         Flags Encapsulation"
    assert re.match(r"^Et1\s+esx-01 vmnic2\s+connected\s+trunk\s+full\s+100G\s+100GBASE-CR4$", out[1])


def test_eos_show_interfaces_mtu_qos_flowcontrol():
    world = healthy(2, "eos")
    cli = _cli(world, "eos")
    out = cli.run("show interfaces Ethernet1")
    assert out.startswith("Ethernet1 is up, line protocol is up (connected)\n")
    assert "\n  Ethernet MTU 9216 bytes , BW 100000000 kbit\n" in out
    qos = cli.run("show qos interfaces Ethernet3")
    assert "   Trust Mode: DSCP\n" in qos
    ecn = {m.group(1): m.group(2) for m in re.finditer(r"^\s+(\d)\s+-.*\s(\w)$", qos, re.M)}
    assert ecn == {"7": "D", "6": "D", "5": "D", "4": "D", "3": "L", "2": "D", "1": "D", "0": "D"}
    assert "ECN/WRED: L -> Queue Length ECN Enabled     W -> WRED Enabled     D -> Disabled" in qos
    flow = cli.run("show flowcontrol").split("\n")
    assert flow[0].split() == ["Port", "Send", "FlowControl", "Receive", "FlowControl", "RxPause", "TxPause"]
    assert flow[3].split() == ["Et1", "off", "off", "off", "off", "0", "0"]
    assert cli.run("show interfaces Ethernet2 flowcontrol").split("\n")[3].startswith("Et2 ")
    maps = cli.run("show qos maps")
    assert "    2 :     2  2  2  2  3  3  3  3  3  3" in maps  # DSCP 20-23 -> TC2, 24-29 -> TC3


def test_onyx_show_dcb_pfc_has_the_corpus_layout():
    sample = [x.rstrip() for x in corpus_text("onyx_show_dcb_pfc/smartx-onyx-pfc-prio3-elided.txt").split("\n")]
    out = _cli(healthy(2, "onyx"), "onyx", enable=False).run("show dcb priority-flow-control").split("\n")
    assert out[:6] == sample[:6]  # PFC: enabled / enabled list 3 / disabled list / the table header
    row = re.compile(r"^(Eth\d+/\d+)\s+(On|Auto)\s+(Enabled|Disabled)$")
    assert all(row.match(x) for x in sample[6:8])
    assert [row.match(x).group(1, 2, 3) for x in out[6:]] == [(f"Eth1/{i}", "On", "Enabled") for i in range(1, 5)]
    assert out[6].index("On") == sample[6].index("Auto")  # same columns


def test_onyx_show_interfaces_reads_like_the_corpus_fields():
    fixture = corpus_text("onyx_show_interfaces/ansible-fixture-json-eth1-1-mtu1500-down-vlans.txt")
    cli = _cli(fresh(2, "onyx"), "onyx", enable=False)
    out = cli.run("show interfaces ethernet 1/1")
    fields = dict(re.findall(r"^  ([^:\n]+?): (.*)$", out, re.M))
    for key in ("Admin state", "Operational state", "Description", "Mac address", "MTU", "Fec", "Flow-control",
                "Actual speed", "Width reduction mode", "Switchport mode", "MAC learning mode"):
        assert f'"{key}"' in fixture and key in fields, key
    assert fields["MTU"] == "1500 bytes(Maximum packet size 1522 bytes)"  # the fixture's very value
    assert fields["Flow-control"] == "receive off send off"
    assert out.startswith("Eth1/1\n")
    qos = cli.run("show qos interface ethernet 1/1")
    assert "  Trust mode: L2\n" in qos


def test_os10_show_interface_and_running_configuration():
    world = healthy(2, "os10")
    cli = _cli(world, "os10")
    assert cli.prompt == "sw-os10-1#"
    out = cli.run("show interface ethernet1/1/1")
    assert out.startswith("Ethernet 1/1/1 is up, line protocol is up\n")
    assert "\nMTU 9216 bytes, IP MTU 9184 bytes\n" in out
    assert "\nFlowcontrol rx off tx off\n" in out
    run = cli.run("show running-configuration")
    block = run[run.index("interface ethernet1/1/3\n"):].split("!\n")[0]
    assert block.split("\n")[1:-1] == [
        ' description "esx-02 vmnic2"', " no shutdown", " switchport access vlan 1", " mtu 9216",
        " priority-flow-control mode on", " service-policy input type network-qos pfc-cos-3",
        " service-policy output type queuing ecn-q3", " trust-map dscp default",
    ]
    assert "policy-map type network-qos pfc-cos-3\n !\n class pfcdot1p3\n  pause\n  pfc-cos 3\n" in run
    assert "class-map type network-qos pfcdot1p3\n match qos-group 3\n" in run
    # ECN through a WRED profile, as Dell's OS10 10.5.0 guide ("Configure RoCE on the switch") writes it
    assert "policy-map type queuing ecn-q3\n !\n class q3\n  bandwidth percent 50\n  random-detect wred-ecn\n" in run
    assert ("wred wred-ecn\n random-detect ecn\n random-detect color green minimum-threshold 150 maximum-threshold 1500"
            " drop-probability 100\n!\n") in run
    section = cli.run("show running-configuration interface ethernet1/1/2")
    assert section.startswith("interface ethernet1/1/2\n") and section.endswith("!") and "ethernet1/1/3" not in section


def test_fresh_switches_show_no_pfc_no_trust_mtu_1500():
    eos = _cli(fresh(2, "eos"), "eos")
    assert all(" D " in x for x in eos.run("show priority-flow-control").split("\n")[16:])
    assert "Trust Mode: COS" in eos.run("show qos interfaces Ethernet1")
    assert "Ethernet MTU 1500 bytes" in eos.run("show interfaces Ethernet1")
    onyx = _cli(fresh(2, "onyx"), "onyx")
    out = onyx.run("show dcb priority-flow-control")
    assert out.startswith("PFC: disabled\nPriority Enabled List: \nPriority Disabled List: 0 1 2 3 4 5 6 7\n")
    assert "Eth1/1           Auto             Disabled" in out
    os10 = _cli(fresh(2, "os10"), "os10")
    run = os10.run("show running-configuration")
    assert "priority-flow-control" not in run and "trust-map" not in run and "service-policy" not in run
    assert "MTU 1500 bytes, IP MTU 1468 bytes" in os10.run("show interface ethernet1/1/1")


def test_lldp_shows_hosts_whose_vds_advertises():
    cli = _cli(healthy(2, "eos"), "eos")
    rows = cli.run("show lldp neighbors").split("\n")[8:]
    assert [r.split()[:2] for r in rows] == [["Et1", "esx-01"], ["Et2", "esx-01"], ["Et3", "esx-02"], ["Et4", "esx-02"]]
    assert rows[0].split()[2] == "0c:42:a1:01:02:12"  # the vmnic's MAC as the port id
    # a VDS uplink's LLDP description as real switches print it ("port 19 on dvSwitch EU-SPDC-R3DC (cswitch)")
    onyx = _cli(healthy(2, "onyx"), "onyx", enable=False).run("show lldp remote").split("\n")
    assert re.search(r"esx-01\s+port 1 on dvSwitch \S+ \(cswitch\)$", onyx[3]), onyx
    assert _cli(fresh(2, "eos"), "eos").run("show lldp neighbors").split("\n")[8:] == []  # no VDS yet: no LLDP
    os10 = _cli(healthy(2, "os10"), "os10").run("show lldp neighbors").split("\n")
    assert os10[2].split()[:2] == ["ethernet1/1/1", "esx-01"]


@pytest.mark.parametrize("vendor,line,error", [
    ("eos", "foo", "% Invalid input (at token 0: 'foo')"),  # EOS' own text (public eAPI/CLI fixtures)
    ("eos", "show foo", "% Invalid input (at token 1: 'foo')"),
    ("onyx", "foo", '% Unrecognized command "foo".\nType "?" for help.'),
    ("onyx", "show foo", '% Unrecognized command "foo".\nType "?" for help.'),
    ("os10", "foo", "% Error: Unrecognized command."),
])
def test_unknown_commands_print_the_vendor_error(vendor, line, error):
    cli = _cli(healthy(1, vendor), vendor)
    prompt = cli.prompt
    assert cli.run(line) == error
    assert cli.prompt == prompt  # and the same prompt follows
    assert cli.run("") == "" and cli.run("   ") == ""  # a bare line: just the prompt again


def test_exec_mode_needs_enable_for_config_and_running_config():
    eos = SwitchCli(healthy(1, "eos"), "sw-eos-1")
    assert eos.prompt == "sw-eos-1>"
    assert eos.run("configure terminal") == "% Invalid input (privileged mode required)"
    assert eos.run("show running-config") == "% Invalid input (privileged mode required)"
    assert eos.run("show priority-flow-control").startswith("The hardware supports PFC")  # fine unprivileged
    assert eos.run("enable") == "" and eos.prompt == "sw-eos-1#"
    onyx = SwitchCli(healthy(1, "onyx"), "sw-onyx-1")
    assert onyx.prompt == "sw-onyx-1 [standalone: master] > "
    assert onyx.run("enable") == "" and onyx.prompt == "sw-onyx-1 [standalone: master] # "  # no password asked


def test_netmiko_handshake_answers():
    eos = SwitchCli(healthy(1, "eos"), "sw-eos-1")
    assert eos.run("terminal width 511") == "Width set to 511 columns."
    assert eos.run("terminal length 0") == "Pagination disabled."
    onyx = SwitchCli(healthy(1, "onyx"), "sw-onyx-1")
    assert onyx.run("no cli session paging enable") == ""
    os10 = SwitchCli(healthy(1, "os10"), "sw-os10-1")
    assert os10.run("terminal length 0") == ""
    for cli in (eos, onyx, os10):
        assert cli.run("exit") == "" and cli.closed


# =========================================================================================== config


def test_eos_config_changes_the_world_and_the_show():
    world = fresh(2, "eos")
    cli = _cli(world, "eos")
    for line, prompt in [
        ("conf t", "sw-eos-1(config)#"),
        ("interface Ethernet1-4", "sw-eos-1(config-if-Et1-4)#"),
        ("mtu 9216", None), ("qos trust dscp", None), ("priority-flow-control on", None),
        ("priority-flow-control priority 3 no-drop", None), ("flowcontrol receive off", None),
        ("tx-queue 3", "sw-eos-1(config-if-Et1-4-txq-3)#"),
        ("random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes", None),
        ("exit", "sw-eos-1(config-if-Et1-4)#"),
        ("exit", "sw-eos-1(config)#"),
        ("int Et1", "sw-eos-1(config-if-Et1)#"),
        ("description uplink to esx-01", None),
        ("end", "sw-eos-1#"),
    ]:
        assert cli.run(line) == "", line
        if prompt:
            assert cli.prompt == prompt, line
    ports = world.switches["sw-eos-1"].ports
    assert all(p.mtu == 9216 and p.trust == "dscp" and p.pfc_enabled and p.no_drop == {3} and p.ecn for p in ports)
    assert ports[0].description == "uplink to esx-01"
    assert "E A W      3" in cli.run("show priority-flow-control")
    run = cli.run("sh run int Et1")
    assert run.split("\n") == [
        "interface Ethernet1", "   description uplink to esx-01", "   mtu 9216", "   qos trust dscp",
        "   priority-flow-control on", "   priority-flow-control priority 3 no-drop", "   tx-queue 3",
        "      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes",
    ]
    # seed 004 spells the range `interface ethernet 1/1-3/4`; on 1/1-style ports it selects them all
    world2 = fresh(2, "eos")
    for i, p in enumerate(world2.switches["sw-eos-1"].ports):
        p.name = f"Ethernet{1 + i // 2}/{1 + i % 2}"
    cli2 = _cli(world2, "eos")
    cli2.run("configure")
    assert cli2.run("interface ethernet 1/1-2/2") == "" and cli2.prompt == "sw-eos-1(config-if-Et1/1-2/2)#"
    assert cli2.run("qos trust dscp") == ""
    assert all(p.trust == "dscp" for p in world2.switches["sw-eos-1"].ports)
    assert cli.run("configure terminal") == "" and cli.run("mtu 9216") == "% Invalid input (at token 0: 'mtu')"  # not global
    assert cli.run("interface Ethernet1") == "" and cli.run("mtu 99999").startswith("% Invalid input (at token ")


def test_eos_config_session_commit_and_abort():
    world = fresh(2, "eos")
    sw = world.switches["sw-eos-1"]
    cli = _cli(world, "eos")
    assert cli.run("configure session roce") == "" and cli.prompt == "sw-eos-1(config-s-roce)#"
    assert cli.run("interface Ethernet1") == "" and cli.prompt == "sw-eos-1(config-s-roce-if-Et1)#"
    assert cli.run("priority-flow-control on") == ""
    assert not sw.ports[0].pfc_enabled  # pending until commit
    diffs = cli.run("show session-config diffs")
    assert "+   priority-flow-control on" in diffs
    assert cli.run("commit") == "" and cli.prompt == "sw-eos-1#"
    assert sw.ports[0].pfc_enabled
    cli.run("configure session undo")
    cli.run("interface Ethernet1")
    cli.run("no priority-flow-control")
    assert cli.run("abort") == "" and cli.prompt == "sw-eos-1#"
    assert sw.ports[0].pfc_enabled
    assert cli_state(sw).eos_sessions == {}


def test_onyx_config_global_and_per_interface():
    world = fresh(2, "onyx")
    sw = world.switches["sw-onyx-1"]
    cli = _cli(world, "onyx")
    assert cli.run("config term") == "" and cli.prompt == "sw-onyx-1 [standalone: master] (config) # "
    # interface PFC typed before the global switch waits for it (admin On, oper Disabled)
    assert cli.run("interface ethernet 1/1-1/4 dcb priority-flow-control mode on force") == ""
    assert not any(p.pfc_enabled for p in sw.ports)
    assert "Eth1/1           On               Disabled" in cli.run("show dcb priority-flow-control")
    for line in ["dcb priority-flow-control enable force", "dcb priority-flow-control priority 3 enable",
                 "interface ethernet 1/1-1/4 qos trust L3",
                 "interface ethernet 1/1-1/4 traffic-class 3 congestion-control ecn minimum-absolute 150 "
                 "maximum-absolute 1500"]:
        assert cli.run(line) == "", line
    assert cli.run("interface ethernet 1/2") == "" and cli.prompt.endswith("(config interface ethernet 1/2) # ")
    assert cli.run("mtu 9216 force") == ""
    assert cli.run("exit") == "" and cli.prompt.endswith("(config) # ")
    assert all(p.pfc_enabled and p.no_drop == {3} and p.trust == "dscp" and p.ecn for p in sw.ports)
    assert [p.mtu for p in sw.ports] == [1500, 9216, 1500, 1500]
    out = cli.run("show dcb priority-flow-control")
    assert out.startswith("PFC: enabled\nPriority Enabled List: 3\nPriority Disabled List: 0 1 2 4 5 6 7\n")
    assert cli.run("dcb priority-flow-control priority 9 enable").startswith('% Unrecognized command "9"')
    assert cli.run("configuration write") == "" and sw.saved_config and "priority 3 enable" in sw.saved_config
    assert cli.run("exit") == "" and cli.prompt.endswith("] # ")


def test_os10_config_class_and_policy_maps():
    world = fresh(2, "os10")
    sw = world.switches["sw-os10-1"]
    cli = _cli(world, "os10")
    steps = [
        ("configure terminal", "sw-os10-1(config)#"),
        ("class-map type network-qos ROCE_CLASS", "sw-os10-1(config-cmap-nqos)#"),
        ("match qos-group 3", None),
        ("exit", "sw-os10-1(config)#"),
        ("policy-map type network-qos ROCE_PFC", "sw-os10-1(config-pmap-network-qos)#"),
        ("class ROCE_CLASS", "sw-os10-1(config-pmap-c-nqos)#"),
        ("pause", None), ("pfc-cos 3", None),
        ("exit", "sw-os10-1(config-pmap-network-qos)#"),
        ("exit", "sw-os10-1(config)#"),
        ("interface range ethernet1/1/1-1/1/4", "sw-os10-1(conf-range-eth1/1/1-1/1/4)#"),
        ("mtu 9216", None), ("priority-flow-control mode on", None),
        ("service-policy input type network-qos ROCE_PFC", None), ("trust-map dscp default", None),
        ("flowcontrol receive off", None),
        ("end", "sw-os10-1#"),
    ]
    for line, prompt in steps:
        assert cli.run(line) == "", line
        if prompt:
            assert cli.prompt == prompt, line
    assert all(p.pfc_enabled and p.no_drop == {3} and p.trust == "dscp" and p.mtu == 9216 for p in sw.ports)
    run = cli.run("show running-configuration")
    assert " service-policy input type network-qos ROCE_PFC\n" in run  # the operator's names, not the lab's
    assert "policy-map type network-qos ROCE_PFC\n !\n class ROCE_CLASS\n  pause\n  pfc-cos 3\n" in run
    # editing the policy moves every port attached to it
    for line in ["configure terminal", "policy-map type network-qos ROCE_PFC", "class ROCE_CLASS", "pfc-cos 4", "end"]:
        assert cli.run(line) == "", line
    assert all(p.no_drop == {4} for p in sw.ports)
    assert cli.run("configure terminal") == ""
    assert cli.run("interface ethernet1/1/1") == "" and cli.prompt == "sw-os10-1(conf-if-eth1/1/1)#"
    assert cli.run("service-policy input type network-qos NOPE") == "% Error: Policy-map NOPE does not exist."
    assert cli.run("do show running-configuration interface ethernet1/1/1").startswith("interface ethernet1/1/1")
    assert cli.run("end") == ""
    assert cli.run("copy running-configuration startup-configuration") == ""
    assert sw.saved_config == cli.run("show running-configuration")


def test_write_memory_saves_a_snapshot_and_abbreviations_work():
    world = healthy(1, "eos")
    sw = world.switches["sw-eos-1"]
    cli = _cli(world, "eos")
    assert sw.saved_config is None
    assert cli.run("wr mem") == "Copy completed successfully."
    saved = sw.saved_config
    assert saved and saved.startswith("! Command: show running-config\n")
    cli.run("conf t")
    cli.run("int Ethernet1")
    cli.run("no priority-flow-control")
    cli.run("end")
    assert sw.saved_config == saved  # running changed, startup did not
    assert cli.run("show startup-config") == saved
    assert cli.run("show running-config | include priority-flow-control on").count("\n") == 0  # one line (Et2)
    assert cli.run("copy running-config startup-config") == "Copy completed successfully."
    assert sw.saved_config != saved


# =========================================================================================== faults


def test_fault_table_is_registered():
    table = faults_mod.registry()
    for code in ("RW501", "RW502", "RW503", "RW504", "RW505", "RW506", "RW507"):
        assert table[code] is FAULTS[code] and FAULTS[code].kind == "switch"


@pytest.mark.parametrize("vendor", ["eos", "onyx", "os10"])
def test_each_fault_breaks_exactly_its_field(vendor):
    name = SWITCH[vendor]
    base = healthy(2, vendor)
    port = fault_port(base, base.switches[name])
    assert port.peer == ("esx-02", "vmnic2")  # on a path RoCE uses (the second host's VF port)
    fields = ("mtu", "pfc_enabled", "no_drop", "trust", "flowcontrol_rx", "flowcontrol_tx", "ecn")
    expected = {
        "RW501": {(port.name, "pfc_enabled"): False},
        "RW502": {(p.name, "no_drop"): {4} for p in base.switches[name].ports
                  if vendor == "onyx" or p.name == port.name},
        "RW503": {(port.name, "trust"): "pcp"},
        "RW504": {(port.name, "mtu"): 1500},
        "RW505": {(port.name, "flowcontrol_rx"): True},
        "RW506": {(port.name, "ecn"): False},
        "RW507": {},
    }
    for code, changes in expected.items():
        world = healthy(2, vendor)
        assert faults_mod.inject(world, code) == (code, name)
        sw = world.switches[name]
        got = {(p.name, f): getattr(p, f) for p in sw.ports for f in fields
               if getattr(p, f) != getattr(base.switches[name].port(p.name), f)}
        assert got == changes, code
        assert code in sw.faults
        lossless = [roce_lossless(sw, p.name, 26) for p in sw.ports]
        if code == "RW507":  # every switch-side field per policy, but RoCE's DSCP lands in priority 4
            assert switch_priority(sw, port.name, 26) == 4 and not any(lossless)
        elif code in ("RW501", "RW502", "RW503"):
            assert lossless.count(False) == (4 if code == "RW502" and vendor == "onyx" else 1)


def test_faults_show_in_vendor_syntax():
    def after(vendor: str, code: str, command: str) -> str:
        world = healthy(2, vendor)
        faults_mod.inject(world, code)
        return _cli(world, vendor).run(command)

    assert "Et3        D          3" in after("eos", "RW501", "show priority-flow-control")
    assert "Et3        E A W      4" in after("eos", "RW502", "show priority-flow-control")
    assert "Trust Mode: COS" in after("eos", "RW503", "show qos interfaces Ethernet3")
    assert "Ethernet MTU 1500 bytes" in after("eos", "RW504", "show interfaces Ethernet3")
    assert after("eos", "RW505", "show flowcontrol").split("\n")[5].split() == ["Et3", "off", "off", "on", "on",
                                                                                 "0", "0"]
    assert re.search(r"^\s+3\s.*\sD$", after("eos", "RW506", "show qos interfaces Ethernet3"), re.M)
    assert "qos map dscp 26 to traffic-class 4\n" in after("eos", "RW507", "show running-config")
    assert "    2 :     2  2  2  2  3  3  4  3  3  3" in after("eos", "RW507", "show qos maps")
    assert "Eth1/3           Auto             Disabled" in after("onyx", "RW501", "show dcb priority-flow-control")
    assert "Priority Enabled List: 4\n" in after("onyx", "RW502", "show dcb priority-flow-control")
    assert "Trust mode: L2" in after("onyx", "RW503", "show qos interface ethernet 1/3")
    assert "MTU: 1500 bytes(Maximum packet size 1522 bytes)" in after("onyx", "RW504", "show interfaces ethernet 1/3")
    assert "Flow-control: receive on send off" in after("onyx", "RW505", "show interfaces ethernet 1/3")
    assert "Mode: ECN" not in after("onyx", "RW506", "show interfaces ethernet 1/3 congestion-control")
    assert "dscp-to-switch-priority dscp 26 switch-priority 4" in after("onyx", "RW507", "show running-config")
    run = {code: after("os10", code, "show running-configuration interface ethernet1/1/3")
           for code in ("RW501", "RW502", "RW503", "RW504", "RW505", "RW506", "RW507")}
    assert "priority-flow-control mode on" not in run["RW501"]
    assert "service-policy input type network-qos pfc-cos-4" in run["RW502"]
    assert "trust-map" not in run["RW503"]
    assert " mtu 1500\n" in run["RW504"]
    assert " flowcontrol receive on\n" in run["RW505"]
    assert "service-policy output type queuing" not in run["RW506"]
    assert " trust-map dscp dscp-tc-custom\n" in run["RW507"]
    assert "trust dscp-map dscp-tc-custom\n qos-group 4 dscp 26\n" in after("os10", "RW507",
                                                                           "show running-configuration")


@pytest.mark.parametrize("vendor,fix", [
    ("eos", ["configure", "interface Ethernet3", "priority-flow-control on", "end"]),
    ("onyx", ["configure terminal", "interface ethernet 1/3 dcb priority-flow-control mode on force", "exit"]),
    ("os10", ["configure terminal", "interface ethernet1/1/3", "priority-flow-control mode on", "end"]),
])
def test_the_fix_by_hand_undoes_rw501(vendor, fix):
    world = healthy(2, vendor)
    faults_mod.inject(world, "RW501")
    cli = _cli(world, vendor)
    for line in fix:
        assert cli.run(line) == "", line
    clean = healthy(2, vendor)
    assert [vars(p) for p in world.switches[SWITCH[vendor]].ports] == \
        [vars(p) for p in clean.switches[SWITCH[vendor]].ports]


# =========================================================================================== netmiko


async def _server(world: World, vendor: str) -> asyncssh.SSHAcceptor:
    return await sw_mod.start_switch_server(world, SWITCH[vendor], asyncssh.generate_private_key("ssh-ed25519"),
                                            password=PASSWORD)


def _connect(vendor: str, port: int) -> Any:
    from netmiko import ConnectHandler

    return ConnectHandler(device_type=sw_mod.DEVICE_TYPES[vendor], host="127.0.0.1", port=port, username="admin",
                          password=PASSWORD, conn_timeout=10, auth_timeout=10, banner_timeout=10)


CONFIG = {
    "eos": ["interface Ethernet1-4", "mtu 9216", "qos trust dscp", "priority-flow-control on",
            "priority-flow-control priority 3 no-drop", "tx-queue 3",
            "random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes"],
    "onyx": ["dcb priority-flow-control enable force", "dcb priority-flow-control priority 3 enable",
             "interface ethernet 1/1-1/4 dcb priority-flow-control mode on force",
             "interface ethernet 1/1-1/4 qos trust L3",
             "interface ethernet 1/1-1/4 traffic-class 3 congestion-control ecn minimum-absolute 150 "
             "maximum-absolute 1500",
             "interface ethernet 1/1", "mtu 9216 force", "exit",
             "interface ethernet 1/2-1/4", "mtu 9216 force"],  # left in interface mode: exit twice
    "os10": ["class-map type network-qos pfc3", "match qos-group 3", "exit",
             "class-map type queuing q3", "match queue 3", "exit",
             "policy-map type network-qos pfc-p3", "class pfc3", "pause", "pfc-cos 3", "exit", "exit",
             "wred ecn-prof", "random-detect ecn",
             "random-detect color green minimum-threshold 150 maximum-threshold 1500 drop-probability 100", "exit",
             "policy-map type queuing ecn-q3", "class q3", "bandwidth percent 50", "random-detect ecn-prof", "exit",
             "exit",
             "interface range ethernet1/1/1-1/1/4", "mtu 9216", "priority-flow-control mode on",
             "service-policy input type network-qos pfc-p3", "service-policy output type queuing ecn-q3",
             "trust-map dscp default"],
}
SHOW_PFC = {"eos": "show priority-flow-control", "onyx": "show dcb priority-flow-control",
            "os10": "show running-configuration interface ethernet1/1/2"}
PFC_OFF = {"eos": re.compile(r"^Et1\s+D\s", re.M), "onyx": re.compile(r"^Eth1/1\s+Auto\s+Disabled$", re.M),
           "os10": re.compile(r"^interface ethernet1/1/2\n(?!.*priority-flow-control)", re.S)}
PFC_ON = {"eos": re.compile(r"^Et1\s+E A W\s+3\s", re.M), "onyx": re.compile(r"^Eth1/1\s+On\s+Enabled$", re.M),
          "os10": re.compile(r"^ priority-flow-control mode on$", re.M)}


@pytest.mark.parametrize("vendor", ["eos", "onyx", "os10"])
async def test_netmiko_drives_the_switch(vendor):
    world = fresh(2, vendor)
    sw = world.switches[SWITCH[vendor]]
    acceptor = await _server(world, vendor)
    port = acceptor.sockets[0].getsockname()[1]
    assert sw.ssh_port == port

    def session() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        t0 = time.monotonic()
        conn = _connect(vendor, port)
        seen["connect_s"] = time.monotonic() - t0
        conn.enable()  # EOS and Onyx land at '>': no password is asked
        seen["prompt"] = conn.find_prompt()
        seen["before"] = conn.send_command(SHOW_PFC[vendor])
        seen["bad"] = conn.send_command("show nonsense")
        seen["config"] = conn.send_config_set(CONFIG[vendor])
        seen["after"] = conn.send_command(SHOW_PFC[vendor])
        seen["mtu"] = conn.send_command({"eos": "show interfaces Ethernet2", "onyx": "show interfaces ethernet 1/2",
                                         "os10": "show interface ethernet1/1/2"}[vendor])
        seen["save"] = conn.save_config()
        seen["prompt_after"] = conn.find_prompt()
        t1 = time.monotonic()
        conn.disconnect()
        seen["disconnect_s"] = time.monotonic() - t1
        seen["total_s"] = time.monotonic() - t0
        return seen

    try:
        seen = await asyncio.wait_for(asyncio.to_thread(session), timeout=30)
    finally:
        acceptor.close()
    print(f"{vendor}: connect {seen['connect_s']:.2f}s disconnect {seen['disconnect_s']:.2f}s "
          f"total {seen['total_s']:.2f}s")
    assert seen["prompt"] == {"eos": "sw-eos-1#", "onyx": "sw-onyx-1 [standalone: master] #",
                              "os10": "sw-os10-1#"}[vendor]
    assert seen["prompt_after"] == seen["prompt"]  # save_config left config mode again
    assert PFC_OFF[vendor].search(seen["before"]), seen["before"]
    assert PFC_ON[vendor].search(seen["after"]), seen["after"]
    assert {"eos": "% Invalid input", "onyx": '% Unrecognized command "nonsense".',
            "os10": "% Error: Unrecognized command."}[vendor] in seen["bad"]
    for bad in ("% Invalid", "% Unrecognized", "% Error", "% Incomplete"):
        assert bad not in seen["config"], seen["config"]
    mtu_line = {"eos": "Ethernet MTU 9216 bytes", "onyx": "MTU: 9216 bytes", "os10": "MTU 9216 bytes"}[vendor]
    assert mtu_line in seen["mtu"]
    assert all(p.pfc_enabled and p.no_drop == {3} and p.trust == "dscp" and p.mtu == 9216 for p in sw.ports)
    assert sw.saved_config == sw_mod.render_running_config(world, sw)
    assert seen["disconnect_s"] < 3  # Onyx's disconnect hangs 10 s when config/enable handling is off
    assert seen["total_s"] < 12


async def test_password_and_key_auth():
    from netmiko import ConnectHandler
    from netmiko.exceptions import NetmikoAuthenticationException

    world = healthy(1, "eos")
    client = asyncssh.generate_private_key("ssh-ed25519")
    acceptor = await sw_mod.start_switch_server(world, "sw-eos-1", asyncssh.generate_private_key("ssh-ed25519"),
                                                password=PASSWORD, client_keys=[client])
    port = acceptor.sockets[0].getsockname()[1]
    try:
        def wrong() -> None:
            ConnectHandler(device_type="arista_eos", host="127.0.0.1", port=port, username="admin",
                           password="nope", conn_timeout=5, auth_timeout=5)

        with pytest.raises(NetmikoAuthenticationException):
            await asyncio.to_thread(wrong)
        async with asyncssh.connect("127.0.0.1", port, username="admin", client_keys=[client],
                                    known_hosts=None) as conn:
            result = await conn.run("show interfaces Ethernet1", check=True)
            assert "Ethernet MTU 9216 bytes" in result.stdout
    finally:
        acceptor.close()


async def test_serve_registers_switches_with_the_lab(tmp_path: Path):
    world = healthy(2, "os10")

    class FakeLab:
        def __init__(self) -> None:
            self.world = world
            self.directory = tmp_path
            self.host = "127.0.0.1"
            self.inventory: dict[str, Any] = {"targets": {"esxi": [
                {"name": "esx-01", "roce": {"vmnics": ["vmnic2", "vmnic3"]}},
                {"name": "esx-02", "roce": {"vmnics": ["vmnic2", "vmnic3"]}},
            ]}}
            self.registered: list[tuple[str, list[dict[str, Any]], dict[str, Any]]] = []
            self.notes: list[str] = []
            self.secrets: dict[str, str] = {}

        def secret(self, env_name: str, value: str) -> None:
            self.secrets[env_name] = value

        def register(self, kind, entries, *, status=None, stop=None, defaults=None):
            self.registered.append((kind, entries, {"status": status, "stop": stop, "defaults": defaults}))

        def note(self, message: str) -> None:
            self.notes.append(message)

    (tmp_path / "known_hosts").write_text("[127.0.0.1]:2222 ssh-ed25519 AAAA esx-01\n")
    lab = FakeLab()
    await sw_mod.serve(lab)
    (kind, entries, extra), = lab.registered
    try:
        assert kind == "switch"
        port = world.switches["sw-os10-1"].ssh_port
        assert entries == [{"name": "sw-os10-1", "address": "127.0.0.1", "port": port, "device_type": "dell_os10",
                            "username": "admin", "password": {"env": "ROCE_LAB_SWITCH_PASSWORD"}}]
        password = lab.secrets["ROCE_LAB_SWITCH_PASSWORD"]  # Lab.secret keeps it in DIR/lab.env
        assert lab.inventory["targets"]["esxi"][1]["roce"]["switch_ports"] == [
            "sw-os10-1:ethernet1/1/3", "sw-os10-1:ethernet1/1/4"]
        known = (tmp_path / "known_hosts").read_text().split("\n")
        assert known[0].endswith("esx-01") and known[1].startswith(f"[127.0.0.1]:{port} ssh-ed25519 ")
        assert not any(password in n for n in lab.notes)
        assert extra["status"]()[0]["state"] == "up"
        async with asyncssh.connect("127.0.0.1", port, username="admin", password=password,
                                    known_hosts=str(tmp_path / "known_hosts")) as conn:
            result = await conn.run("show running-configuration interface ethernet1/1/1", check=True)
            assert "priority-flow-control mode on" in result.stdout
    finally:
        await extra["stop"]()


def test_os10_takes_ecn_only_through_a_wred_profile():
    """Dell SmartFabric OS10 User Guide 10.5.0 "Configure RoCE on the switch": ECN is a line of a
    `wred` profile that the queuing class names; `random-detect ecn` typed in the class is not OS10's."""
    world = fresh(2, "os10")
    cli = _cli(world, "os10")
    for line in ("configure terminal", "class-map type queuing q3", "match queue 3", "exit",
                 "policy-map type queuing roce", "class q3"):
        assert cli.run(line) == "", line
    assert cli.run("random-detect ecn") == "% Error: Unrecognized command."
    assert cli.run("random-detect nosuch").startswith("% Error: ")
    assert cli.prompt == "sw-os10-1(config-pmap-c-que)#"
    for line in ("wred roce-ecn", "random-detect ecn",
                 "random-detect color green minimum-threshold 150 maximum-threshold 1500 drop-probability 100"):
        assert cli.run(line) == "", line
    assert cli.prompt == "sw-os10-1(config-wred)#"
    for line in ("policy-map type queuing roce", "class q3", "random-detect roce-ecn", "interface ethernet1/1/1",
                 "service-policy output type queuing roce", "end"):
        assert cli.run(line) == "", line
    run = cli.run("show running-configuration")
    assert "wred roce-ecn\n random-detect ecn\n random-detect color green minimum-threshold 150" in run
    assert " class q3\n  random-detect roce-ecn\n" in run
    assert world.switches["sw-os10-1"].ports[0].ecn is True


@pytest.mark.parametrize("vendor,lines,error", [
    ("eos", ["configure", "hostname leaf9"], "% Invalid input (at token 0: 'hostname')"),
    ("eos", ["configure", "interface Ethernet1", "switchport mode trunk"], "% Invalid input (at token 0: 'switchport')"),
    ("eos", ["configure", "interface Ethernet1", "tx-queue 3", "bandwidth percent 30"],
     "% Invalid input (at token 0: 'bandwidth')"),
    ("onyx", ["configure terminal", "lldp"], '% Unrecognized command "lldp".\nType "?" for help.'),
    ("onyx", ["configure terminal", "interface ethernet 1/1 speed 100G"], '% Unrecognized command "speed".'),
    ("os10", ["configure terminal", "dcbx enable"], "% Error: Unrecognized command."),
    ("os10", ["configure terminal", "interface ethernet1/1/1", "fec off"], "% Error: Unrecognized command."),
    ("os10", ["configure terminal", "system qos", "service-policy input type network-qos p"],
     "% Error: Unrecognized command."),
])
def test_what_the_lab_cannot_vouch_for_is_refused_in_the_vendors_words(vendor, lines, error):
    """Issue 12 item 4: the lab used to take these lines and do nothing; a strict device answers with its error."""
    cli = _cli(healthy(1, vendor), vendor)
    if vendor == "onyx":
        cli.run("enable")
    for line in lines[:-1]:
        assert cli.run(line) == "", line
    assert cli.run(lines[-1]).startswith(error)
