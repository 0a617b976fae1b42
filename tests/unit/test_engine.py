"""Engine over the replay transport: errors become statuses, root causes are named once,
the concurrency bound holds, each probe runs once per target."""

from __future__ import annotations

import asyncio

import pytest

from roce_wizard.engine import exit_code_for, run_checks
from roce_wizard.model import (
    Check,
    ExitCode,
    Facts,
    Finding,
    LoadedCheck,
    Policy,
    RoceSpec,
    Severity,
    Stage,
    Status,
    Target,
    TargetKind,
)
from roce_wizard.records.runlog import RunLog, read_events
from roce_wizard.transports.replay import ReplayTransport, TargetRecording

DOC = {"title": "t", "What it checks": "", "Why it matters": "", "How to fix by hand": "", "Fix safety": ""}
VIB_CMD = "esxcli --formatter=csv software vib list"
UPTIME_CMD = "esxcli system stats uptime get"


def loaded(code: str, evaluate, probes=("esxi_vib_list",), depends_on=(), kinds=TargetKind.ESXI) -> LoadedCheck:
    meta = Check(code=code, slug=f"c-{code.lower()}", title=code, stage=Stage.ESXI, target=kinds,
                 severity=Severity.FAIL, probes=probes, depends_on=depends_on)
    return LoadedCheck(meta=meta, evaluate=evaluate, doc=DOC, path="<test>")


def reachable(facts: Facts, policy: Policy) -> list[Finding]:
    conn = facts.need("connection")
    status = Status.PASS if conn["ok"] else Status.ERROR
    return [Finding("RW001", status, conn["message"] or "connected")]


def has_mft(facts: Facts, policy: Policy) -> list[Finding]:
    names = {v["name"] for v in facts.need("esxi_vib_list")["vibs"]}
    return [Finding("RW201", Status.PASS if "mft" in names else Status.FAIL, f"vibs: {sorted(names)}")]


def needs_mft(facts: Facts, policy: Policy) -> list[Finding]:
    facts.need("esxi_vib_list")
    return [Finding("RW205", Status.FAIL, "LINK_TYPE unreadable without MFT")]


VIBS_WITH_MFT = "AcceptanceLevel,CreationDate,ID,InstallDate,Name,Status,Vendor,Version,\n" \
    "PartnerSupported,2021-05-01,MEL_bootbank_mft_4.18.1.14-0,2021-06-01,mft,,MEL,4.18.1.14-0,\n"
VIBS_NO_MFT = "AcceptanceLevel,CreationDate,ID,InstallDate,Name,Status,Vendor,Version,\n" \
    "VMwareCertified,2021-05-01,VMW_bootbank_nmlx5-core_4.19.16.10-1vmw,2021-06-01,nmlx5-core,,VMW,4.19.16.10-1vmw,\n"


def esx(name: str) -> Target:
    return Target(name=name, kind=TargetKind.ESXI, address="127.0.0.1", roce=RoceSpec(vmnics=("vmnic2",)))


def checks(*items: LoadedCheck) -> dict[str, LoadedCheck]:
    return {c.code: c for c in items}


CATALOG = checks(
    loaded("RW001", reachable, probes=("connection",)),
    loaded("RW201", has_mft),
    loaded("RW205", needs_mft, depends_on=("RW201",)),
)


async def test_unreachable_host_is_an_error_with_the_reason_and_blocks_the_rest():
    transport = ReplayTransport({
        "esx-01": TargetRecording(commands={VIB_CMD: {"stdout": VIBS_WITH_MFT}}),
        "esx-02": TargetRecording(connect_error={"kind": "refused", "message": "connection refused by 127.0.0.1:22"}),
    })
    report = await run_checks([esx("esx-01"), esx("esx-02")], CATALOG, transport, Policy())
    by = {(f.check, f.target): f for f in report.findings}
    assert by[("RW001", "esx-02")].status is Status.ERROR
    assert "refused" in by[("RW001", "esx-02")].summary
    assert by[("RW201", "esx-02")].status is Status.SKIP
    assert by[("RW201", "esx-02")].blocked_by == ("RW001", "esx-02")
    assert by[("RW201", "esx-01")].status is Status.PASS
    assert report.exit_code is ExitCode.FAILED  # RW205 fails on esx-01
    assert by[("RW205", "esx-01")].status is Status.FAIL


async def test_root_cause_is_named_once_not_cascaded():
    transport = ReplayTransport({"esx-01": TargetRecording(commands={VIB_CMD: {"stdout": VIBS_NO_MFT}})})
    report = await run_checks([esx("esx-01")], CATALOG, transport, Policy())
    by = {f.check: f for f in report.findings}
    assert by["RW201"].status is Status.FAIL
    assert by["RW205"].status is Status.SKIP
    assert by["RW205"].blocked_by == ("RW201", "esx-01")
    assert "blocked by RW201 on esx-01" in by["RW205"].summary
    assert sum(f.status is Status.FAIL for f in report.findings) == 1


async def test_cross_target_dependency_names_the_host():
    def guest_check(facts: Facts, policy: Policy) -> list[Finding]:
        return [Finding("RW402", Status.FAIL, "no RDMA device")]

    catalog = checks(
        loaded("RW001", reachable, probes=("connection",), kinds=(TargetKind.ESXI, TargetKind.GUEST)),
        loaded("RW201", has_mft),
        loaded("RW402", guest_check, probes=(), depends_on=("host:RW201",), kinds=TargetKind.GUEST),
    )
    g = Target(name="compute-01", kind=TargetKind.GUEST, address="127.0.0.1", host="esx-01", vm="compute-01")
    transport = ReplayTransport({"esx-01": TargetRecording(commands={VIB_CMD: {"stdout": VIBS_NO_MFT}}),
                                 "compute-01": TargetRecording()})
    report = await run_checks([esx("esx-01"), g], catalog, transport, Policy())
    rw402 = next(f for f in report.findings if f.check == "RW402")
    assert rw402.status is Status.SKIP and rw402.blocked_by == ("RW201", "esx-01")


async def test_failing_tool_and_crashing_check_become_errors_not_crashes():
    def crashes(facts: Facts, policy: Policy) -> list[Finding]:
        raise KeyError("boom")

    catalog = checks(loaded("RW001", reachable, probes=("connection",)), loaded("RW201", has_mft),
                     loaded("RW209", crashes))
    transport = ReplayTransport({"esx-01": TargetRecording(commands={
        VIB_CMD: {"stdout": "", "stderr": "sh: esxcli: not found", "exit_status": 127}})})
    report = await run_checks([esx("esx-01")], catalog, transport, Policy())
    by = {f.check: f for f in report.findings}
    assert by["RW201"].status is Status.ERROR and "exited 127" in by["RW201"].summary
    assert by["RW201"].details.get("tool_missing") is True
    assert by["RW209"].status is Status.ERROR  # crash or missing facts: either way an error, never a traceback
    assert report.exit_code is ExitCode.INCOMPLETE


async def test_timeout_is_an_error_naming_the_command():
    transport = ReplayTransport({"esx-01": TargetRecording(commands={VIB_CMD: {"stdout": VIBS_WITH_MFT}},
                                                           delay_s=0.5)})
    report = await run_checks([esx("esx-01")], CATALOG, transport, Policy(), command_timeout=0.05)
    rw201 = next(f for f in report.findings if f.check == "RW201")
    assert rw201.status is Status.ERROR and "timed out" in rw201.summary and VIB_CMD in rw201.summary


async def test_concurrency_bound_is_honoured_and_each_probe_runs_once():
    names = [f"esx-{i:02d}" for i in range(1, 13)]
    transport = ReplayTransport({n: TargetRecording(commands={VIB_CMD: {"stdout": VIBS_WITH_MFT}}) for n in names},
                                connect_delay_s=0.02)
    report = await run_checks([esx(n) for n in names], CATALOG, transport, Policy(), concurrency=3)
    assert transport.peak_connects <= 3
    assert transport.connects == len(names)
    # RW201 and RW205 both read esxi_vib_list: asked once per host
    assert len(transport.commands_run) == len(names)
    assert all(f.status is not Status.ERROR for f in report.findings)


async def test_run_log_records_events_raw_outputs_with_private_modes(tmp_path):
    transport = ReplayTransport({"esx-01": TargetRecording(commands={VIB_CMD: {"stdout": VIBS_WITH_MFT}})})
    runlog = RunLog.create(base=tmp_path)
    await run_checks([esx("esx-01")], CATALOG, transport, Policy(), runlog=runlog)
    events = read_events(runlog.path)
    types = [e["type"] for e in events]
    assert types[0] == "run-start" and "probe" in types and types[-1] == "run-end"
    raw = runlog.path / "raw" / "esx-01" / "esxi_vib_list.json"
    assert raw.exists() and "mft" in raw.read_text()
    assert (runlog.path.stat().st_mode & 0o777) == 0o700
    assert (raw.stat().st_mode & 0o777) == 0o600
    assert ((runlog.path / "events.jsonl").stat().st_mode & 0o777) == 0o600
    # the run dir replays: same verdicts from what was recorded
    again = await run_checks([esx("esx-01")], CATALOG, ReplayTransport.from_run_dir(runlog.path), Policy())
    assert [(f.check, f.status) for f in again.findings] == [("RW001", Status.PASS), ("RW201", Status.PASS),
                                                            ("RW205", Status.FAIL)]


def test_exit_codes():
    assert exit_code_for([Finding("RW1", Status.PASS, "")]) is ExitCode.OK
    assert exit_code_for([Finding("RW1", Status.WARN, "")]) is ExitCode.OK
    assert exit_code_for([Finding("RW1", Status.ERROR, ""), Finding("RW2", Status.PASS, "")]) is ExitCode.INCOMPLETE
    assert exit_code_for([Finding("RW1", Status.ERROR, ""), Finding("RW2", Status.FAIL, "")]) is ExitCode.FAILED


@pytest.mark.parametrize("value", ["vmnic2; reboot", "$(reboot)", "a b", "`id`"])
def test_unsafe_inventory_values_never_reach_a_command(value):
    from roce_wizard.probes import PROBES

    t = Target(name="g", kind=TargetKind.GUEST, address="127.0.0.1", roce=RoceSpec(netdev=value))
    from roce_wizard.probes import UnsafeValue

    with pytest.raises(UnsafeValue):
        PROBES["ethtool_pause"].command(t, {})


def test_replay_loads_a_recording_file(tmp_path):
    path = tmp_path / "rec.yaml"
    path.write_text("targets:\n  esx-01:\n    commands:\n      'echo hi': {stdout: \"hi\\n\"}\n")
    transport = ReplayTransport.from_file(path)

    async def go():
        session = await transport.session(esx("esx-01"))
        return await session.run("echo hi")

    assert asyncio.run(go()).stdout == "hi\n"


def test_peer_facts_tell_a_vcenter_switch_and_host_about_the_others():
    from roce_wizard.engine import peer_facts

    host = Target(name="esx-01", kind=TargetKind.ESXI, address="127.0.0.1",
                  roce=RoceSpec(pf_pci="0000:3b:00.0", vmnics=("vmnic2", "vmnic3"), vfs=(8, 7),
                                switch_ports=("sw-1:Ethernet1", "sw-1:Ethernet2")))
    metal = Target(name="node-01", kind=TargetKind.LINUX, address="127.0.0.1",
                   roce=RoceSpec(netdev="ens1f0np0", switch_ports=("sw-1:Ethernet9",)))
    vc = Target(name="vc", kind=TargetKind.VCENTER, address="127.0.0.1")
    sw = Target(name="sw-1", kind=TargetKind.SWITCH, address="127.0.0.1", device_type="arista_eos")
    bmc = Target(name="bmc-esx-01", kind=TargetKind.BMC, address="127.0.0.1", host="esx-01")
    peers = [host, metal, vc, sw, bmc]
    assert peer_facts(vc, peers) == {"inventory_hosts": {
        "esx-01": {"pf_pci": "0000:3b:00.0", "vmnics": ["vmnic2", "vmnic3"], "vfs": [8, 7]}}, "inventory_vms": {}}
    guest = Target(name="compute-01", kind=TargetKind.GUEST, address="127.0.0.1", host="esx-01", vm="vm-01")
    assert peer_facts(vc, [*peers, guest])["inventory_vms"] == {"vm-01": {"host": "esx-01", "guest": "compute-01"}}
    assert peer_facts(sw, peers)["roce_ports"] == [
        {"port": "Ethernet1", "peer": "esx-01", "peer_kind": "esxi", "nic": "vmnic2"},
        {"port": "Ethernet2", "peer": "esx-01", "peer_kind": "esxi", "nic": "vmnic3"},
        {"port": "Ethernet9", "peer": "node-01", "peer_kind": "linux", "nic": "ens1f0np0"}]
    assert peer_facts(host, peers) == {"bmc_of_host": "bmc-esx-01"}
    assert peer_facts(metal, peers) == {"bmc_of_host": None}


async def test_bmc_dependency_names_the_bmc_of_the_host():
    """`bmc:RW103` on an ESXi host is RW103 on the bmc target whose `host` is that host: with BIOS
    SR-IOV off there, the host's missing VFs and its guest's missing device name the BMC's finding."""
    def sriov_global(facts: Facts, policy: Policy) -> list[Finding]:
        return [Finding("RW103", Status.FAIL, "SriovGlobalEnable = Disabled")]

    def vfs(facts: Facts, policy: Policy) -> list[Finding]:
        return [Finding("RW215", Status.FAIL, "SR-IOV not active on vmnic2")]

    def device(facts: Facts, policy: Policy) -> list[Finding]:
        return [Finding("RW402", Status.FAIL, "no RDMA device")]

    catalog = checks(
        loaded("RW103", sriov_global, probes=(), kinds=TargetKind.BMC),
        loaded("RW215", vfs, probes=(), depends_on=("bmc:RW103",)),
        loaded("RW402", device, probes=(), depends_on=("host:RW215",), kinds=TargetKind.GUEST),
    )
    bmc = Target(name="bmc-esx-01", kind=TargetKind.BMC, address="127.0.0.1", host="esx-01")
    g = Target(name="compute-01", kind=TargetKind.GUEST, address="127.0.0.1", host="esx-01", vm="compute-01")
    transport = ReplayTransport({n: TargetRecording() for n in ("esx-01", "esx-02", "bmc-esx-01", "compute-01")})
    report = await run_checks([esx("esx-01"), esx("esx-02"), bmc, g], catalog, transport, Policy())
    by = {(f.check, f.target): f for f in report.findings}
    assert by[("RW103", "bmc-esx-01")].status is Status.FAIL
    for key in (("RW215", "esx-01"), ("RW402", "compute-01")):
        assert by[key].status is Status.SKIP and by[key].blocked_by == ("RW103", "bmc-esx-01"), key
        assert by[key].summary == "blocked by RW103 on bmc-esx-01"
    # esx-02 has no bmc in the run: nothing to block on, its own failure stands
    assert by[("RW215", "esx-02")].status is Status.FAIL and by[("RW215", "esx-02")].blocked_by is None


async def test_each_target_s_findings_arrive_before_the_run_ends_then_resolved(tmp_path):
    """A front end sees a target's findings once its own evaluation is done (provisional), and again
    once root causes across targets are named (resolved); the run log keeps only their counts."""
    transport = ReplayTransport({
        "esx-01": TargetRecording(commands={VIB_CMD: {"stdout": VIBS_NO_MFT}}),
        "esx-02": TargetRecording(commands={VIB_CMD: {"stdout": VIBS_WITH_MFT}}),
    })
    seen: list[tuple[str, dict]] = []
    runlog = RunLog.create(base=tmp_path)
    report = await run_checks([esx("esx-01"), esx("esx-02")], CATALOG, transport, Policy(), runlog=runlog,
                              on_event=lambda event: seen.append((event.TYPE, event.as_dict(live=True))))
    types = [t for t, _ in seen]
    per_target = [d for t, d in seen if t == "target-findings"]
    first_final = types.index("finding")
    assert all(i < first_final for i, t in enumerate(types) if t == "target-findings")
    provisional = {d["target"]: d for d in per_target if not d["resolved"]}
    resolved = {d["target"]: d for d in per_target if d["resolved"]}
    assert set(provisional) == set(resolved) == {"esx-01", "esx-02"}
    # provisional: what esx-01's own checks saw (RW205 failed, its MFT missing)
    assert {(f.check, f.status) for f in provisional["esx-01"]["run"].findings} == {
        ("RW001", Status.PASS), ("RW201", Status.FAIL), ("RW205", Status.FAIL)}
    # resolved: RW205 is blocked by the root cause, as in the final report; the provisional copy kept its verdict
    final = {(f.target, f.check): f.status for f in report.findings}
    for name, data in resolved.items():
        assert {(f.target, f.check): f.status for f in data["run"].findings} == {
            k: v for k, v in final.items() if k[0] == name}
    assert final[("esx-01", "RW205")] is Status.SKIP
    assert resolved["esx-01"]["counts"] == {"pass": 1, "warn": 0, "fail": 1, "error": 0, "skip": 1}
    # the run log: counts per target, no findings or objects (the `finding` events at the end carry them)
    logged = [e for e in read_events(runlog.path) if e["type"] == "target-findings"]
    assert len(logged) == 4 and all("run" not in e and "findings" not in e for e in logged)
    assert sum(e["type"] == "finding" for e in read_events(runlog.path)) == len(report.findings)
