"""Switch-stage checks (RW501–RW507) on recorded outputs.

Doctor cases record what `doctor` asks each lab switch (the probes' own commands, run on the lab's
vendor CLI with `SwitchCli`, healthy or with one lab fault) and carry the switch's inventory target
and the engine-made `roce_ports`; analyze cases (`target=None`) read the corpus and seed outputs.
RW507's and RW504's cross-target judgements are tested on findings as the engine hands them over.
"""

from __future__ import annotations

from typing import Any

import pytest

from roce_wizard.engine.fixes import plan_for as planned_fix
from roce_wizard.lab import faults as faults_mod
from roce_wizard.lab.scenarios import fresh, healthy
from roce_wizard.lab.switch import SwitchCli
from roce_wizard.model import Finding, Policy, Status, Target, TargetKind
from roce_wizard.probes import PROBES
from tests.checkcases import CATALOG, Case, build_facts, run_case
from tests.conftest import corpus_text
from tests.unit.test_parsers_switch import seed001_eos, seed001_onyx, seed004_config, seed004_pfc

PASS, FAIL, WARN, SKIP, ERROR = Status.PASS, Status.FAIL, Status.WARN, Status.SKIP, Status.ERROR
DEVICE = {"eos": "arista_eos", "onyx": "mellanox_mlnxos", "os10": "dell_os10", "nvue": "cumulus_nvue"}
PORT = {"eos": "Ethernet{n}", "onyx": "Eth1/{n}", "os10": "ethernet1/1/{n}", "nvue": "swp{n}"}


def switch(vendor: str) -> Target:
    return Target(name=f"sw-{vendor}-1", kind=TargetKind.SWITCH, address="127.0.0.1", device_type=DEVICE[vendor])


def roce_ports(vendor: str, ports: range = range(1, 5)) -> list[dict[str, Any]]:
    """What the engine makes of the lab inventory's roce.switch_ports (host n: vmnic2 -> 2n-1, vmnic3 -> 2n)."""
    return [{"port": PORT[vendor].format(n=n), "peer": f"esx-0{(n + 1) // 2}", "peer_kind": "esxi",
             "nic": f"vmnic{2 + (n + 1) % 2}"} for n in ports]


def recorded(vendor: str, fault: str | None = None, world: Any = None) -> dict[str, str]:
    """The outputs doctor records on a lab switch: each switch probe's command, run on its CLI."""
    world = world or healthy(2, vendor)
    if fault:
        faults_mod.inject(world, fault)
    cli = SwitchCli(world, f"sw-{vendor}-1")
    if vendor != "os10":
        cli.run("enable")
    target = switch(vendor)
    out = {}
    for name, probe in PROBES.items():
        if TargetKind.SWITCH in probe.kinds and (command := probe.command(target, {})):
            out[name] = cli.run(command)
    return out


def doctor(code: str, name: str, expect: Status, vendor: str, fault: str | None = None, world: Any = None,
           ports: list[dict[str, Any]] | None = None, **kw: Any) -> Case:
    return Case(code, name, expect, recorded(vendor, fault, world),
                facts={"roce_ports": roce_ports(vendor) if ports is None else ports}, target=switch(vendor), **kw)


def seed_copy(relpath: str) -> str:
    """A real capture as the project keeps it (tests/data/parser_seeds, provenance in tests/data/PROVENANCE.md)."""
    from pathlib import Path

    return (Path(__file__).resolve().parents[2] / "data" / "parser_seeds" / relpath).read_text(encoding="utf-8")


def analyze(code: str, name: str, expect: Status, kind: str, text: str, **kw: Any) -> Case:
    return Case(code, name, expect, {kind: text}, target=None, **kw)


def _eos_mtu_9214() -> Any:
    world = healthy(2, "eos")
    for p in world.switches["sw-eos-1"].ports:
        p.mtu = 9214
    return world


CASES: list[Case] = [
    # RW501 pfc-enabled
    doctor("RW501", "eos-healthy", PASS, "eos", summary_has="PFC on and active"),
    doctor("RW501", "eos-fault", FAIL, "eos", "RW501", summary_has="Ethernet3 (to esx-02 vmnic2): PFC is off"),
    doctor("RW501", "onyx-healthy", PASS, "onyx"),
    doctor("RW501", "onyx-fault", FAIL, "onyx", "RW501", summary_has="oper Disabled"),
    doctor("RW501", "onyx-fresh-global-off", FAIL, "onyx", world=fresh(2, "onyx"), summary_has="disabled switch-wide"),
    doctor("RW501", "os10-healthy", PASS, "os10"),
    doctor("RW501", "os10-fault", FAIL, "os10", "RW501"),
    doctor("RW501", "no-roce-ports", SKIP, "eos", ports=[], summary_has="roce.switch_ports"),
    doctor("RW501", "port-not-on-switch", ERROR, "eos",
           ports=[{"port": "Ethernet9", "peer": "esx-05", "peer_kind": "esxi", "nic": "vmnic2"}],
           summary_has="the switch prints no such port"),
    analyze("RW501", "seed004-pfc", PASS, "arista_pfc", seed004_pfc()),
    analyze("RW501", "corpus-smartx-onyx", PASS, "onyx_pfc",
            corpus_text("onyx_show_dcb_pfc/smartx-onyx-pfc-prio3-elided.txt")),
    analyze("RW501", "corpus-onyx-oper-disabled", FAIL, "onyx_pfc",
            corpus_text("onyx_show_dcb_pfc/ansible-fixture-json-pfc-admin-auto-oper-disabled.txt")),
    analyze("RW501", "corpus-nvue-lossy", FAIL, "nvue_qos_roce",
            corpus_text("cumulus_nv_show_qos_roce/nvue-cmdref-lossy-mode-no-pfc.txt"), summary_has="lossy mode"),
    analyze("RW501", "seed004-config", PASS, "eos_running_config", seed004_config()),
    # RW502 no-drop-priority
    doctor("RW502", "eos-healthy", PASS, "eos", summary_has="no-drop on priority 3 only"),
    doctor("RW502", "eos-fault", FAIL, "eos", "RW502", summary_has="no-drop on priority 4, not on the RoCE priority 3"),
    doctor("RW502", "onyx-healthy", PASS, "onyx"),
    doctor("RW502", "onyx-fault-switch-wide", FAIL, "onyx", "RW502", summary_has="switch-wide on Onyx"),
    doctor("RW502", "os10-healthy", PASS, "os10"),
    doctor("RW502", "os10-fault", FAIL, "os10", "RW502"),
    doctor("RW502", "os10-fresh", FAIL, "os10", world=fresh(2, "os10"), summary_has="no network-qos policy"),
    analyze("RW502", "seed001-eos-all-priorities", FAIL, "eos_running_config", seed001_eos(),
            summary_has="only 3 should be"),
    analyze("RW502", "seed001-onyx-all-priorities", FAIL, "onyx_running_config", seed001_onyx()),
    analyze("RW502", "corpus-sonic-3-and-4", FAIL, "sonic_pfc",
            corpus_text("sonic_show_pfc/sonic-utilities-796-show-pfc-priority.txt")),
    analyze("RW502", "corpus-onyx-json-no-list", SKIP, "onyx_pfc",
            corpus_text("onyx_show_dcb_pfc/ansible-fixture-json-pfc-admin-auto-oper-disabled.txt")),
    # RW503 switch-trust-dscp
    doctor("RW503", "eos-healthy", PASS, "eos", summary_has="trusts DSCP"),
    doctor("RW503", "eos-fault", FAIL, "eos", "RW503", summary_has="CoS/PCP"),
    doctor("RW503", "onyx-healthy", PASS, "onyx"),
    doctor("RW503", "onyx-fault", FAIL, "onyx", "RW503"),
    doctor("RW503", "os10-healthy", PASS, "os10", summary_has="trust-map default"),
    doctor("RW503", "os10-fault", FAIL, "os10", "RW503", summary_has="no trust-map"),
    analyze("RW503", "corpus-nvue-pcp-dscp", PASS, "nvue_qos_roce",
            corpus_text("cumulus_nv_show_qos_roce/nvue-cmdref-lossy-mode-no-pfc.txt")),
    analyze("RW503", "seed004-config", PASS, "eos_running_config", seed004_config()),
    # the CL 5.x command-reference capture with its trust line edited to PCP only (RW503 must fail and fix it)
    analyze("RW503", "corpus-nvue-pcp-only", FAIL, "nvue_qos_roce",
            seed_copy("nvue_qos_roce/nvue-cmdref-lossy-mode-no-pfc.txt").replace(
                "trust-mode        pcp,dscp", "trust-mode        pcp     ")),
    # RW504 switch-mtu
    doctor("RW504", "eos-healthy", PASS, "eos"),
    doctor("RW504", "eos-9214-is-the-cap", PASS, "eos", world=_eos_mtu_9214(), summary_has="EOS' maximum 9214"),
    doctor("RW504", "eos-fault", FAIL, "eos", "RW504", summary_has="MTU 1500 is below 9214"),
    doctor("RW504", "onyx-healthy", PASS, "onyx"),
    doctor("RW504", "onyx-fault", FAIL, "onyx", "RW504", summary_has="below 9216"),
    doctor("RW504", "os10-healthy", PASS, "os10"),
    doctor("RW504", "os10-fault", FAIL, "os10", "RW504"),
    analyze("RW504", "corpus-onyx-json-1500", FAIL, "onyx_interfaces",
            corpus_text("onyx_show_interfaces/ansible-fixture-json-eth1-1-mtu1500-down-vlans.txt")),
    # RW505 switch-global-pause-off
    doctor("RW505", "eos-healthy", PASS, "eos"),
    doctor("RW505", "eos-fault", FAIL, "eos", "RW505", summary_has="receive is on"),
    doctor("RW505", "onyx-healthy", PASS, "onyx"),
    doctor("RW505", "onyx-fault", FAIL, "onyx", "RW505"),
    doctor("RW505", "os10-healthy", PASS, "os10"),
    doctor("RW505", "os10-fault", FAIL, "os10", "RW505"),
    analyze("RW505", "corpus-onyx-json-off", PASS, "onyx_interfaces",
            corpus_text("onyx_show_interfaces/ansible-fixture-json-eth1-1-mtu1500-down-vlans.txt")),
    # RW506 ecn-on-roce-queue
    doctor("RW506", "eos-healthy", PASS, "eos", summary_has="ECN marks queue 3"),
    doctor("RW506", "eos-fault", WARN, "eos", "RW506", summary_has="no ECN on queue 3"),
    doctor("RW506", "onyx-healthy", PASS, "onyx"),
    doctor("RW506", "onyx-fault", WARN, "onyx", "RW506"),
    doctor("RW506", "os10-healthy", PASS, "os10"),
    doctor("RW506", "os10-fault", WARN, "os10", "RW506"),
    analyze("RW506", "corpus-nvue-ecn-tc-3", PASS, "nvue_qos_roce",
            corpus_text("cumulus_nv_show_qos_roce/nvue-cmdref-lossy-mode-no-pfc.txt")),
    # RW507 host-switch-agree (the switch end here; the pairs below)
    doctor("RW507", "eos-healthy", PASS, "eos", summary_has="maps DSCP 26 to priority 3"),
    doctor("RW507", "eos-fault", FAIL, "eos", "RW507", summary_has="maps DSCP 26 to priority 4"),
    doctor("RW507", "onyx-healthy", PASS, "onyx"),
    doctor("RW507", "onyx-fault", FAIL, "onyx", "RW507", summary_has="half-lossless"),
    doctor("RW507", "os10-healthy", PASS, "os10"),
    doctor("RW507", "os10-fault", FAIL, "os10", "RW507"),
    doctor("RW507", "eos-trust-cos-is-rw503s", PASS, "eos", "RW503"),
    analyze("RW507", "eos-qos-maps-healthy", PASS, "eos_qos_maps", recorded("eos")["eos_qos_maps"]),
    analyze("RW507", "eos-qos-maps-26-to-4", FAIL, "eos_qos_maps", recorded("eos", "RW507")["eos_qos_maps"],
            summary_has="traffic-class 4"),
    analyze("RW507", "corpus-nvue-map", PASS, "nvue_qos_roce",
            corpus_text("cumulus_nv_show_qos_roce/nvue-cmdref-lossy-mode-no-pfc.txt"), summary_has="RW502"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case(case: Case):
    run_case(case)


def _case(case_id: str) -> Case:
    return next(c for c in CASES if c.id == case_id)


def _bad(case_id: str) -> Finding:
    return next(f for f in run_case(_case(case_id)) if f.status in (FAIL, WARN))


# ------------------------------------------------------------------------- fixes in the vendor's syntax


def test_rw501_fixes_in_each_vendors_syntax():
    eos = _bad("RW501-eos-fault")
    assert eos.subject == "Ethernet3" and eos.expected == "PFC enabled and active"
    assert eos.fix == ("copy running-config flash:roce-wizard-rollback.cfg   ! rollback point first\n"
                       "configure session roce-wizard\ninterface Ethernet3\n   priority-flow-control on\n"
                       "show session-config diffs\ncommit\ncopy running-config startup-config   ! once the re-check passes")
    assert _bad("RW501-onyx-fault").fix == (
        "configuration write to roce-wizard-rollback no-switch   # rollback point first\nconfigure terminal\n"
        "interface ethernet 1/3 dcb priority-flow-control mode on force\nexit\n"
        "configuration write   # once the re-check passes")
    assert "dcb priority-flow-control enable force\ninterface ethernet 1/1 dcb priority-flow-control mode on force" in \
        _bad("RW501-onyx-fresh-global-off").fix
    assert _bad("RW501-os10-fault").fix == (
        "copy running-configuration config://roce-wizard-rollback.xml   ! rollback point first\nconfigure terminal\n"
        "interface ethernet1/1/3\n priority-flow-control mode on\nend\nwrite memory   ! once the re-check passes")


def test_rw502_to_rw506_fixes():
    assert "interface Ethernet3\n   priority-flow-control priority 3 no-drop\n   no priority-flow-control priority 4 " \
           "no-drop" in _bad("RW502-eos-fault").fix
    assert "dcb priority-flow-control priority 3 enable\nno dcb priority-flow-control priority 4 enable" in \
        _bad("RW502-onyx-fault-switch-wide").fix
    os10 = _bad("RW502-os10-fault").fix
    assert "policy-map type network-qos roce-pfc\n class roce-pfc3\n  pause\n  pfc-cos 3" in os10
    assert "interface ethernet1/1/3\n service-policy input type network-qos roce-pfc" in os10
    assert "interface ethernet 1/3 qos trust L3" in _bad("RW503-onyx-fault").fix
    assert "interface ethernet1/1/3\n trust-map dscp default" in _bad("RW503-os10-fault").fix
    # NVIDIA documents no `nv set qos roce trust`; RoCE mode sets the trust with PFC and ECN
    nvue = _bad("RW503-corpus-nvue-pcp-only").fix
    assert "nv set qos roce mode lossless" in nvue and "qos roce trust" not in nvue
    assert "interface Ethernet3\n   mtu 9214" in _bad("RW504-eos-fault").fix  # EOS' maximum
    assert "interface ethernet 1/3 mtu 9216 force" in _bad("RW504-onyx-fault").fix
    assert "interface ethernet 1/3 flowcontrol receive off force" in _bad("RW505-onyx-fault").fix
    assert "interface ethernet1/1/3\n flowcontrol receive off" in _bad("RW505-os10-fault").fix
    assert ("interface Ethernet3\n   tx-queue 3\n      random-detect ecn minimum-threshold 150 kbytes "
            "maximum-threshold 1500 kbytes") in _bad("RW506-eos-fault").fix
    assert "interface ethernet 1/3 traffic-class 3 congestion-control ecn minimum-absolute 150 maximum-absolute 1500" \
        in _bad("RW506-onyx-fault").fix
    # OS10: ECN only through a WRED profile named by the queuing class (Dell OS10 10.5.0 "Configure RoCE")
    os10 = _bad("RW506-os10-fault").fix
    assert ("wred roce-ecn\n random-detect ecn\n random-detect color green minimum-threshold 150 maximum-threshold 1500 "
            "drop-probability 100\nexit\n") in os10
    assert "policy-map type queuing roce-ecn\n class roce-q3\n  random-detect roce-ecn\n exit" in os10
    assert "\n  random-detect ecn" not in os10
    assert "qos map dscp 26 to traffic-class 3" in _bad("RW507-eos-fault").fix
    assert "qos map dscp-to-switch-priority dscp 26 switch-priority 3" in _bad("RW507-onyx-fault").fix
    os10 = _bad("RW507-os10-fault").fix  # every RoCE port's trust map, in one session
    assert all(f"interface ethernet1/1/{n}\n trust-map dscp default\nexit" in os10 for n in range(1, 5))


def test_rw504_eos_routed_port_uses_the_ip_mtu():
    outputs = recorded("eos")
    outputs["eos_interfaces"] = outputs["eos_interfaces"].replace(
        "Ethernet3 is up, line protocol is up (connected)\n", "Ethernet3 is up, line protocol is up (connected)\n"
        "  Internet address is 10.0.0.1/31\n", 1).replace(
        "  Ethernet MTU 9216 bytes , BW 100000000 kbit\n  Full-duplex, 100Gb/s, auto negotiation: off, uni-link: n/a\n"
        "  Up", "  IP MTU 1500 bytes , BW 100000000 kbit\n  Full-duplex, 100Gb/s, auto negotiation: off, "
        "uni-link: n/a\n  Up")  # HAND-WRITTEN: every port routed with IP MTU 1500
    findings = CATALOG["RW504"].evaluate(build_facts(Case("RW504", "routed", FAIL, outputs,
                                                          facts={"roce_ports": roce_ports("eos")},
                                                          target=switch("eos"))), Policy())
    assert all(f.status is FAIL and "IP MTU (routed port) 1500" in f.summary for f in findings)


# ------------------------------------------------------------------------- RW507: the pairs


def _switch_end(vendor: str, fault: str | None = None) -> Finding:
    (finding,) = run_case(doctor("RW507", "x", FAIL if fault == "RW507" else PASS, vendor, fault))
    return finding


def _host(name: str, pfctx: str | None = "0x08", trust_state: str | None = "2", status: Status = PASS) -> list[Finding]:
    return [Finding("RW209", status, "pfc", target=name, observed={"pfctx": pfctx, "pfcrx": pfctx}),
            Finding("RW210", PASS, "trust", target=name, observed=trust_state)]


def _pairs(own: Finding, *others: Finding) -> list[Finding]:
    return CATALOG["RW507"].compare([own], [own, *others])


def test_rw507_pairs_agree_on_a_healthy_lab():
    own = _switch_end("eos")
    pairs = _pairs(own, *_host("esx-01"), *_host("esx-02"))
    assert [(f.target, f.subject, f.status) for f in pairs] == [("sw-eos-1", f"Ethernet{n}", PASS) for n in range(1, 5)]
    assert "Ethernet3 <-> esx-02 vmnic2: DSCP 26 is lossless on priority 3 at both ends" in pairs[2].summary


def test_rw507_half_lossless_when_the_switch_maps_dscp_26_to_4():
    own = _switch_end("eos", "RW507")
    pairs = _pairs(own, *_host("esx-01"), *_host("esx-02"))
    assert all(f.status is FAIL and "half-lossless" in f.summary for f in pairs)
    assert "DSCP 26 is priority 4 on the switch but 3 on esx-02" in pairs[2].summary
    assert "qos map dscp 26 to traffic-class 3" in own.fix
    assert pairs[2].fix == ("switch-wide, once for every port (the RW507 fix on sw-eos-1): "
                            "qos map dscp 26 to traffic-class 3")


def test_rw507_half_lossless_when_a_host_pauses_another_priority_names_the_host_check():
    own = _switch_end("eos")
    host = _host("esx-02", pfctx="0x10", status=FAIL)  # PFC on priority 4: RW209 fails on the host
    pairs = _pairs(own, *_host("esx-01"), *host)
    assert [f.status for f in pairs] == [PASS, PASS, SKIP, SKIP]
    assert pairs[2].blocked_by == ("RW209", "esx-02") and "esx-02 pauses 4, not 3" in pairs[2].details["unjudged"]


def test_rw507_a_switch_port_fault_is_reported_once_by_its_own_check():
    own = _switch_end("eos", "RW501")
    rw501 = Finding("RW501", FAIL, "PFC is off", target="sw-eos-1", subject="Ethernet3")
    pairs = _pairs(own, rw501, *_host("esx-01"), *_host("esx-02"))
    assert [f.status for f in pairs] == [PASS, PASS, SKIP, PASS]
    assert pairs[2].blocked_by == ("RW501", "sw-eos-1")


def test_rw507_host_not_read_or_unreachable():
    own = _switch_end("eos")
    pairs = _pairs(own, *_host("esx-01"))
    assert pairs[2].status is SKIP and pairs[2].blocked_by is None and "not read in this run" in pairs[2].summary
    down = Finding("RW209", SKIP, "blocked by RW001 on esx-02", target="esx-02", blocked_by=("RW001", "esx-02"))
    pairs = _pairs(own, *_host("esx-01"), down, Finding("RW210", SKIP, "x", target="esx-02",
                                                        blocked_by=("RW001", "esx-02")))
    assert pairs[2].status is SKIP and pairs[2].blocked_by == ("RW001", "esx-02")


def test_rw507_os10_pairs_name_their_own_port():
    own = _switch_end("os10", "RW507")
    pairs = _pairs(own, *_host("esx-01"), *_host("esx-02"))
    assert pairs[2].status is FAIL and pairs[2].fix.endswith(
        "configure terminal\ninterface ethernet1/1/3\n trust-map dscp default\nend\nwrite memory   ! once the "
        "re-check passes")


def test_rw507_bare_metal_peer_reads_rw409():
    own = _switch_end("os10")
    own.details["ports"]["ethernet1/1/1"].update(peer="node-01", peer_kind="linux", nic="ens1f0")
    good = Finding("RW409", PASS, "ok", target="node-01",
                   observed={"trust": "dscp", "pfc": [0, 0, 0, 1, 0, 0, 0, 0], "roce_dscp_priority": 3})
    pairs = _pairs(own, good, *_host("esx-01"), *_host("esx-02"))
    assert pairs[0].status is PASS and "node-01 ens1f0" in pairs[0].summary


def test_rw504_cross_checks_a_bare_metal_hosts_real_mtu():
    (port,) = run_case(doctor("RW504", "x", PASS, "eos", ports=[
        {"port": "Ethernet1", "peer": "node-01", "peer_kind": "linux", "nic": "ens1f0"}]))
    extra = CATALOG["RW504"].compare([port], [port, Finding("RW405", PASS, "MTU 9216", target="node-01",
                                                             observed=9216)])
    assert [(f.target, f.subject, f.status) for f in extra] == [("sw-eos-1", "Ethernet1", FAIL)]
    assert CATALOG["RW504"].compare([port], [port, Finding("RW405", PASS, "ok", target="node-01", observed=9000)]) == []


def test_every_switch_check_is_in_both_playbooks_switch_stage():
    from roce_wizard.playbook import load_playbook

    for name in ("vsphere-sriov", "baremetal"):
        book = load_playbook(name)
        assert [c for c in book.codes if c.startswith("RW5")] == [f"RW50{n}" for n in range(1, 8)]
        assert all(str(book.stage_of(f"RW50{n}").value) == "switch" for n in range(1, 8))


def test_sonic_doctor_reads_pfc_priority_and_fixes_only_in_words_it_documents():
    """Issue 12 item 6: SONiC gets the read-only checks in doctor (`show pfc priority`, the corpus capture of
    sonic-utilities PR #796: Ethernet0 lossless on 3,4) and no automated change: the fix is sonic-utilities'
    documented `config interface pfc priority` line, by hand."""
    from roce_wizard.probes import PROBES

    target = Target(name="sw-sonic-1", kind=TargetKind.SWITCH, address="127.0.0.1", device_type="sonic")
    assert PROBES["sonic_pfc"].command(target, {}) == "show pfc priority"
    out = {"sonic_pfc": seed_copy("sonic_pfc/sonic-utilities-796-show-pfc-priority.txt")}
    ports = [{"port": "Ethernet0", "peer": "esx-01", "peer_kind": "esxi", "nic": "vmnic2"}]
    [pfc] = run_case(Case("RW501", "sonic-doctor", PASS, out, facts={"roce_ports": ports}, target=target))
    assert pfc.subject == "Ethernet0"
    case = Case("RW502", "sonic-doctor-3-4", FAIL, out, facts={"roce_ports": ports}, target=target)
    [nodrop] = run_case(case)
    assert "sudo config interface pfc priority Ethernet0 4 off" in nodrop.fix
    assert planned_fix(CATALOG["RW502"], build_facts(case), Policy()) is None  # nothing automated on SONiC
