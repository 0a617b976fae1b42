"""The reboot ledger, folded from run-log events."""

from __future__ import annotations

import json

from roce_wizard.model import RebootKind
from roce_wizard.records.ledger import HostState, build_ledger, ledger_from_events
from roce_wizard.records.runlog import RunLog

T0 = 1_700_000_000.0


def boot_esxi(host: str, ts: float, booted_at: float) -> dict:
    """RW003 as doctor records it on ESXi: the uptime at the time of the event."""
    return {"type": "finding", "ts": ts, "target": host, "check": "RW003", "status": "pass",
            "details": {"uptime_us": int((ts - booted_at) * 1e6)}}


def boot_linux(host: str, ts: float, boot_id: str) -> dict:
    return {"type": "finding", "ts": ts, "target": host, "check": "RW003", "status": "pass",
            "details": {"boot_id": boot_id}}


def step(host: str, ts: float, check: str, reboot: str = "host", exit_status: int = 0, description: str = "") -> dict:
    return {"type": "fix-step", "ts": ts, "target": host, "check": check, "exit_status": exit_status,
            "reboot": reboot, "description": description or f"{check} change", "command": "true"}


def finding(host: str, ts: float, check: str, status: str, summary: str = "") -> dict:
    return {"type": "finding", "ts": ts, "target": host, "check": check, "status": status, "summary": summary}


def test_a_host_change_waits_until_a_boot_and_a_passing_check():
    events = [boot_esxi("esx-01", T0, T0 - 86400),
              step("esx-01", T0 + 10, "RW209", description="pfctx=0x08 pfcrx=0x08")]
    book = ledger_from_events(events)
    entry = book["esx-01"]
    assert entry.state is HostState.PENDING
    assert [(p.check, p.reboot, p.reason) for p in entry.awaiting_reboot] == [
        ("RW209", RebootKind.HOST, "pfctx=0x08 pfcrx=0x08")]

    # the check passing without a boot (it cannot, but say it did) does not clear it
    book = ledger_from_events([*events, finding("esx-01", T0 + 20, "RW209", "pass")])
    assert book["esx-01"].state is HostState.PENDING

    # a boot after the change: rebooted over, but not yet seen current
    rebooted = [*events, boot_esxi("esx-01", T0 + 400, T0 + 300)]
    book = ledger_from_events(rebooted)
    assert book["esx-01"].awaiting_reboot == [] and len(book["esx-01"].pending) == 1
    assert book["esx-01"].state is HostState.BACK

    # ... and the check passes afterwards: done
    book = ledger_from_events([*rebooted, finding("esx-01", T0 + 401, "RW209", "pass")])
    assert book["esx-01"].pending == [] and book["esx-01"].state is HostState.OK


def test_the_same_boot_seen_again_is_not_a_reboot():
    events = [boot_esxi("esx-01", T0, T0 - 86400), step("esx-01", T0 + 10, "RW204"),
              boot_esxi("esx-01", T0 + 60, T0 - 86400 + 0.004)]  # uptime read 4 ms later than exact
    assert ledger_from_events(events)["esx-01"].state is HostState.PENDING


def test_failed_steps_and_steps_needing_no_reboot_are_not_pending():
    events = [step("esx-01", T0, "RW202", reboot="none"), step("esx-02", T0, "RW209", exit_status=1)]
    assert ledger_from_events(events) == {}


def test_linux_boot_id_change_reboots_over_guest_items():
    events = [boot_linux("compute-01", T0, "a" * 8 + "-0000-0000-0000-" + "0" * 12),
              step("compute-01", T0 + 5, "RW401", reboot="vm-reboot", description="MLNX_OFED installed")]
    assert ledger_from_events(events)["compute-01"].state is HostState.PENDING
    events.append(boot_linux("compute-01", T0 + 100, "b" * 8 + "-0000-0000-0000-" + "0" * 12))
    events.append(finding("compute-01", T0 + 100, "RW401", "pass"))
    assert ledger_from_events(events)["compute-01"].pending == []


def test_reboot_history_and_states_through_an_orchestrated_reboot():
    base = [boot_esxi("esx-01", T0, T0 - 86400), step("esx-01", T0 + 1, "RW205")]
    requested = {"type": "reboot-requested", "ts": T0 + 2, "target": "esx-01", "boot_before": "booted x",
                 "reasons": ["RW205: LINK_TYPE"], "via": "vcenter"}
    mm = {"type": "maintenance-enter", "ts": T0 + 3, "target": "esx-01", "via": "vcenter"}
    down = {"type": "host-down", "ts": T0 + 4, "target": "esx-01"}
    back = {"type": "host-back", "ts": T0 + 60, "target": "esx-01", "boot_after": "booted y"}
    mm_exit = {"type": "maintenance-exit", "ts": T0 + 61, "target": "esx-01"}
    verified = {"type": "reboot-verified", "ts": T0 + 70, "target": "esx-01", "verified": True, "failing": []}

    assert ledger_from_events([*base, requested, mm])["esx-01"].state is HostState.ENTERING_MAINTENANCE
    killed = ledger_from_events([*base, requested, mm, down])["esx-01"]
    assert killed.state is HostState.REBOOTING and killed.in_maintenance
    after = ledger_from_events([*base, requested, mm, down, back])["esx-01"]
    assert after.state is HostState.BACK and after.awaiting_reboot == [] and after.boot_id == "booted y"
    done = ledger_from_events([*base, requested, mm, down, back, mm_exit, verified])["esx-01"]
    assert done.state is HostState.VERIFIED and done.pending == [] and not done.in_maintenance
    [record] = done.history
    assert (record.boot_id_before, record.boot_id_after, record.verified, record.via) == (
        "booted x", "booted y", True, "vcenter")
    assert record.down_at == T0 + 4 and done.reboots == 1
    assert json.dumps(done.to_dict())  # serialisable for the bundle and the wizard


def test_a_failed_reboot_keeps_the_items_pending_and_says_why():
    events = [step("esx-01", T0, "RW206"),
              {"type": "reboot-requested", "ts": T0 + 1, "target": "esx-01", "via": "esxcli"},
              {"type": "reboot-failed", "ts": T0 + 900, "target": "esx-01", "error": "did not come back"}]
    entry = ledger_from_events(events)["esx-01"]
    assert entry.state is HostState.FAILED and entry.history[0].error == "did not come back"
    assert [p.check for p in entry.awaiting_reboot] == ["RW206"]


def test_reboot_pending_reported_by_rw214_until_it_passes():
    events = [finding("esx-03", T0, "RW214", "fail", "SRIOV_EN: Current False, Next Boot True")]
    entry = ledger_from_events(events)["esx-03"]
    assert entry.state is HostState.PENDING and entry.awaiting_reboot[0].reason.startswith("SRIOV_EN")
    events.append(finding("esx-03", T0 + 100, "RW214", "pass"))
    assert ledger_from_events(events)["esx-03"].pending == []


def test_vm_power_events_track_vms_this_tool_powered_off_and_satisfy_vm_changes():
    events = [step("vcenter", T0, "RW306", "vm-power-off", description="latency sensitivity high on compute-01"),
              step("vcenter", T0, "RW306", "vm-power-off", description="latency sensitivity high on compute-011"),
              {"type": "vm-power", "ts": T0 + 5, "target": "compute-01", "host": "esx-01", "state": "off"}]
    book = ledger_from_events(events)
    assert book["esx-01"].powered_off_vms == ["compute-01"]
    assert len(book["vcenter"].awaiting_reboot) == 2
    events.append({"type": "vm-power", "ts": T0 + 50, "target": "compute-01", "host": "esx-01", "state": "on"})
    book = ledger_from_events(events)
    assert book["esx-01"].powered_off_vms == []
    # compute-01's change took effect at its power-on; compute-011 (a longer name) still waits
    assert [p.reason for p in book["vcenter"].awaiting_reboot] == ["latency sensitivity high on compute-011"]


def test_build_ledger_reads_every_run_and_ignores_a_torn_last_line(tmp_path):
    first = RunLog.create(tmp_path, kind="fix")
    first.event("fix-step", target="esx-01", check="RW201", exit_status=0, reboot="host", description="mft")
    first.close()
    second = RunLog.create(tmp_path, kind="fix")
    second.event("fix-step", target="esx-02", check="RW204", exit_status=0, reboot="host", description="driver")
    second.close()
    with (second.path / "events.jsonl").open("a") as f:
        f.write('{"type": "fix-step", "target": "esx-03", "check": "RW2')  # killed mid-write
    book = build_ledger(tmp_path)
    assert sorted(book) == ["esx-01", "esx-02"]
    assert all(e.state is HostState.PENDING for e in book.values())
    assert build_ledger(tmp_path / "nowhere") == {}


def test_a_vm_change_planned_on_vcenter_is_done_when_that_vm_passes_after_its_power_on():
    events = [step("vcenter", T0, "RW306", reboot="vm-power-off", description="latency high on compute-01"),
              step("vcenter", T0, "RW306", reboot="vm-power-off", description="latency high on compute-02"),
              {"type": "vm-power", "ts": T0 + 5, "target": "compute-01", "host": "esx-01", "state": "on"},
              finding("compute-01", T0 + 6, "RW306", "pass"),
              finding("compute-02", T0 + 6, "RW306", "pass")]  # passes on config, but was never power-cycled
    book = ledger_from_events(events)
    assert [p.reason for p in book["vcenter"].pending] == ["latency high on compute-02"]
    assert book["vcenter"].state is HostState.PENDING


def _run_with(tmp_path, sid: str, *events: dict) -> str:
    """A fix run on a machine whose RW003 reported `sid`, then `events`."""
    run = RunLog.create(tmp_path, kind="fix")
    run.event("finding", target="esx-01", check="RW003", status="pass",
              details={"uptime_us": 86_400_000_000, "system_id": sid})
    for e in events:
        run.event(e.pop("type"), **e)
    run.close()
    return run.path.name


def test_the_ledger_is_scoped_to_the_machine_not_the_name(tmp_path):
    """Issue 11 item 11: another site's esx-01 waits for a reboot; this one does not, and never inherits it."""
    site_a = _run_with(tmp_path, "uuid:aaaa", {"type": "fix-step", "target": "esx-01", "check": "RW209",
                                                 "exit_status": 0, "reboot": "host", "description": "pfctx"},
                       {"type": "vm-power", "target": "compute-01", "host": "esx-01", "state": "off"})
    site_b = _run_with(tmp_path, "uuid:bbbb")
    # unscoped (the old fold): B's esx-01 inherits A's change and A's powered-off VM
    assert build_ledger(tmp_path)["esx-01"].awaiting_reboot
    # scoped to what B's run read live: nothing waits, nothing is off
    entry = build_ledger(tmp_path, identities={"esx-01": "uuid:bbbb"}, scoped={"esx-01"})["esx-01"]
    assert entry.awaiting_reboot == [] and entry.powered_off_vms == [] and entry.system_id == "uuid:bbbb"
    # a host not identified now keeps nothing (nothing unconfirmed is acted on)
    assert "esx-01" not in build_ledger(tmp_path, identities={}, scoped={"esx-01"})
    # scoped to A's machine: its item, with the run that recorded it and when its VM went off
    entry = build_ledger(tmp_path, identities={"esx-01": "uuid:aaaa"}, scoped={"esx-01"})["esx-01"]
    assert [(p.check, p.run) for p in entry.awaiting_reboot] == [("RW209", site_a)]
    assert entry.to_dict()["powered_off"][0]["run"] == site_a
    assert site_b != site_a


def test_runs_group_into_clusters_by_the_machines_they_saw(tmp_path):
    from roce_wizard.records.ledger_scope import clusters
    from roce_wizard.records.ledger import all_events

    a1, b1, a2 = (_run_with(tmp_path, "uuid:aaaa"), _run_with(tmp_path, "uuid:bbbb"), _run_with(tmp_path, "uuid:aaaa"))
    groups = {tuple(sorted(runs)): ids for runs, ids in clusters(all_events(tmp_path))}
    assert groups == {tuple(sorted((a1, a2))): {"esx-01": "uuid:aaaa"}, (b1,): {"esx-01": "uuid:bbbb"}}
