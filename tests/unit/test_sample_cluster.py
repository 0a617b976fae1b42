"""The recorded sample cluster (examples/sample-cluster/) tells the story its comments promise.

README's first command runs `doctor` over it; these tests pin what the operator sees there:
esx-01 + compute-01 healthy, esx-02 without PFC (the module-parameter trap), esx-03 with firmware
changes pending, esx-04 unreachable, and the guests' faults each named once, at their root.
They also keep the recordings complete: every command a probe runs has a recorded answer, every
recorded answer is asked for, and every output parses with its probe's parser.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from roce_wizard.catalog import load_catalog
from roce_wizard.cli import app
from roce_wizard.engine import RunReport, run_checks
from roce_wizard.inventory import load_inventory
from roce_wizard.model import ExitCode, Finding, Status
from roce_wizard.playbook import load_playbook
from roce_wizard.transports.replay import ReplayTransport

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample-cluster"
INVENTORY = SAMPLE / "inventory.yaml"
RECORDINGS = SAMPLE / "recordings.yaml"

ESXI = ("esx-01", "esx-02", "esx-03", "esx-04")
GUESTS = ("compute-01", "compute-02", "compute-03", "compute-04")

# Probes that fail on purpose, by target: (probe, why).
EXPECTED_PROBE_FAILURES = {
    # SR-IOV not active yet: esxcli has no VF list for either vmnic (each port is asked on its own)
    "esx-03": {"esxi_sriovnic_vf_list", "esxi_sriovnic_vf_list.vmnic2", "esxi_sriovnic_vf_list.vmnic3"},
    "compute-03": {
        "ibv_devinfo",  # "No IB devices found", exit 255: the VM has no VF
        "ethtool_pause",  # ens256 does not exist
        "cma_roce_mode",  # not applicable: no RDMA device
        "roce_tc_sysfs",  # idem
        "rdma_cm_tos",  # idem
    },
}
# Recorded outputs every run must ask for: none may go unasked.
UNASKED_OK: set[tuple[str, str]] = set()


class Run:
    def __init__(self, report: RunReport, transport: ReplayTransport):
        self.report = report
        self.transport = transport

    def on(self, target: str) -> list[Finding]:
        return [f for f in self.report.findings if f.target == target]

    def of(self, target: str, code: str) -> list[Finding]:
        found = [f for f in self.on(target) if f.check == code]
        assert found, f"no {code} finding on {target}"
        return found

    def statuses(self, target: str, code: str) -> set[Status]:
        return {f.status for f in self.of(target, code)}

    def not_passing(self, target: str) -> dict[str, set[Status]]:
        out: dict[str, set[Status]] = {}
        for f in self.on(target):
            if f.status is not Status.PASS and not no_bmc_no_evidence(f) and not esxi_view_not_recorded(f) \
                    and not (f.check == "RW413" and n_a_in_vf_guest(f)):
                out.setdefault(f.check, set()).add(f.status)
        return out


@pytest.fixture(scope="module")
def run() -> Run:
    """The engine over the replay transport, with the playbook's stage map, as `doctor` runs it."""
    inventory = load_inventory(INVENTORY)
    book = load_playbook("vsphere-sriov")
    catalog = load_catalog([])
    # every stage, the validate measurements included (recorded by scripts/record_sample_validate.py)
    chosen = {code: c for code, c in catalog.items() if book.stage_of(code) is not None}
    stage_of = {code: book.stage_of(code) for code in chosen}
    transport = ReplayTransport.from_file(RECORDINGS)
    report = asyncio.run(run_checks(list(inventory.targets), chosen, transport, inventory.policy, stage_of=stage_of))
    return Run(report, transport)


def seen(f: Finding) -> str:
    """What a check saw: its summary, or for a blocked finding what it saw before it was blocked."""
    return f"{f.summary} {f.details.get('unjudged', '')}"


def n_a_in_vf_guest(f: Finding) -> bool:
    # QoS (RW409) and port pause (RW410) belong to the PF: n/a in a VF guest
    return f.check in ("RW409", "RW410", "RW413") and f.status is Status.SKIP and f.summary.startswith("n/a in a VF guest")


def esxi_view_not_recorded(f: Finding) -> bool:
    """RW415 on an ESXi host: ESXi shows no PCIe link the tool reads (no `lspci -vv`, nothing in esxcli): a skip
    that says so and how to look by hand, not a fault."""
    return f.check == "RW415" and f.status is Status.SKIP and f.blocked_by is None \
        and f.target.startswith("esx-")


def no_bmc_no_evidence(f: Finding) -> bool:
    """A bios check on an ESXi host of this inventory (which lists no BMC) whose shell shows no trace
    of that BIOS setting: a skip that names what would judge it, not a fault."""
    return f.check.startswith("RW1") and f.status is Status.SKIP and f.blocked_by is None and "BMC" in f.summary


# ------------------------------------------------------------------------------ the recordings


def test_every_probe_command_is_recorded_and_every_recording_is_asked_for(run):
    recorded = yaml.safe_load(RECORDINGS.read_text(encoding="utf-8"))["targets"]
    assert set(recorded) == set(ESXI + GUESTS)
    asked: dict[str, set[str]] = {}
    for target, command in run.transport.commands_run:
        asked.setdefault(target, set()).add(command)
    for target in ESXI + GUESTS:
        have = set((recorded[target] or {}).get("commands") or {})
        missing = asked.get(target, set()) - have
        assert not missing, f"{target}: no recorded output for {sorted(missing)}"
        stale = {c for c in have - asked.get(target, set()) if (target, c) not in UNASKED_OK}
        assert not stale, f"{target}: recorded but never run (a probe changed its command?): {sorted(stale)}"
    for f in run.report.findings:
        text = json.dumps(f.to_dict(), default=str)
        assert "no recorded output" not in text, f"{f.check} {f.target}: {f.summary}"
        assert "no recording for target" not in text, f"{f.check} {f.target}: {f.summary}"


def test_every_output_parses_with_its_probes_parser(run):
    for target_run in run.report.runs:
        name = target_run.target.name
        if name == "esx-04":
            continue
        failed = set(target_run.facts.failures)
        allowed = EXPECTED_PROBE_FAILURES.get(name, set())
        assert failed <= allowed, {p: target_run.facts.failures[p].reason for p in failed - allowed}
        assert not any(f.reason.startswith("unreadable output") for p, f in target_run.facts.failures.items()
                       if p not in ("rdma_link", "ibdev2netdev")), target_run.facts.failures


def test_no_check_crashes_on_the_sample(run):
    crashed = [f for f in run.report.findings if "check crashed" in f.summary]
    assert not crashed, [(f.check, f.target, f.summary) for f in crashed]


# ------------------------------------------------------------------------------ the story


def test_esx01_and_compute01_are_healthy(run):
    for target in ("esx-01", "compute-01"):
        findings = run.on(target)
        assert findings
        bad = [(f.check, f.status.value, f.summary) for f in findings
               if f.status is not Status.PASS and not n_a_in_vf_guest(f) and not no_bmc_no_evidence(f)
               and not esxi_view_not_recorded(f)]
        assert not bad, f"{target}: {bad}"
    # the healthy guest's RoCE v2 GID is the usual index 3
    (gid,) = run.of("compute-01", "RW407")
    assert gid.details["gid_index"] == 3


def test_esx02_lost_pfc_to_the_module_parameter_trap(run):
    assert run.not_passing("esx-02") == {"RW209": {Status.FAIL}, "RW212": {Status.FAIL}, "RW213": {Status.WARN},
                                         "RW216": {Status.SKIP}}
    # the DCB state shows PFC off on both ports: RW216 has nothing of its own to say, RW209 is the cause
    assert [f.blocked_by for f in run.of("esx-02", "RW216")] == [("RW209", "esx-02")] * 2
    (pfc,) = run.of("esx-02", "RW209")
    assert "pfctx is not set" in pfc.summary and "pfcrx is not set" in pfc.summary
    # the fix is the full merged string: nothing of the current parameters is lost
    assert pfc.fix.startswith('esxcli system module parameters set -m nmlx5_core -p "')
    words = pfc.fix.split('"')[1].split()
    assert sorted(words) == sorted(["max_vfs=0,0,8,7", "trust_state=2", "ecn=1", "pfctx=0x08", "pfcrx=0x08"])
    pause = run.of("esx-02", "RW212")
    assert {f.subject for f in pause} == {"vmnic2", "vmnic3"}
    assert all(f.status is Status.FAIL and "PFC is not operational" in f.summary for f in pause)  # DCB state read
    (power,) = run.of("esx-02", "RW213")
    assert "Balanced" in power.summary


def test_compute02_does_not_judge_port_pause_from_its_vf(run):
    # an mlx5 VF cannot read or set port pause; esx-02's global pause is RW212's (above)
    assert {c: s for c, s in run.not_passing("compute-02").items()
            if c not in ("RW409", "RW410") and not c.startswith("RW6")} == {}
    (pause,) = run.of("compute-02", "RW410")
    assert pause.status is Status.SKIP and "n/a in a VF guest" in pause.summary and "esx-02" in pause.summary


def test_esx03_waits_for_a_reboot_and_has_no_vfs(run):
    not_passing = run.not_passing("esx-03")
    assert not_passing == {"RW206": {Status.FAIL}, "RW214": {Status.FAIL}, "RW215": {Status.SKIP}}
    (sriov,) = run.of("esx-03", "RW206")
    assert "reboot pending" in sriov.summary
    assert sriov.observed == {"next_boot": True, "current": False}
    (pending,) = run.of("esx-03", "RW214")
    assert {item["param"] for item in pending.observed} == {"SRIOV_EN", "NUM_OF_VFS"}
    # no VF exists: RW215 judges so, but its cause is the pending SR-IOV (RW215 depends on RW206)
    vfs = run.of("esx-03", "RW215")
    assert {f.subject for f in vfs} == {"vmnic2", "vmnic3"}
    assert all(f.blocked_by == ("RW206", "esx-03") and "SR-IOV not active" in seen(f) for f in vfs)


def test_compute03_has_no_rdma_device_and_names_the_root_cause_once(run):
    (device,) = run.of("compute-03", "RW402")
    root = device.blocked_by
    # RW402 depends on its host's RW215, which is blocked by RW206 on esx-03: the root is named
    assert root == ("RW206", "esx-03")
    assert run.statuses(*root[::-1]) == {Status.FAIL}
    assert "no RDMA device at all" in seen(device)  # ibv_devinfo: "No IB devices found" (exit 255)
    # everything that needs the VF (its RDMA device or its netdev ens256) is blocked by that root
    for code in ("RW403", "RW404", "RW405", "RW406", "RW407", "RW408", "RW410", "RW411"):
        for f in run.of("compute-03", code):
            assert f.status is Status.SKIP and f.blocked_by == root, (code, f.status, f.summary)
            assert f.fix is None
    assert run.statuses("compute-03", "RW401") == {Status.PASS}
    assert {c: s for c, s in run.not_passing("compute-03").items() if c != "RW409" and not c.startswith("RW6")} == {
        c: {Status.SKIP} for c in ("RW402", "RW403", "RW404", "RW405", "RW406", "RW407", "RW408", "RW410", "RW411")}
    # its pair's measurements, every one of them, are reported on compute-03 and blocked by that same root (one
    # node, one root, the same for every RW60x); compute-04's own root (RW405, MTU 1500) is named beside it
    pair = "compute-03<->compute-04"
    measured = [f for f in run.report.findings if f.subject == pair]
    assert {f.check for f in measured} == {f"RW6{n:02d}" for n in range(1, 11)}
    assert [(f.check, f.target, f.status, f.blocked_by) for f in measured] == [
        (f.check, "compute-03", Status.SKIP, root) for f in measured]
    assert {f.summary for f in measured} == {
        "blocked by RW206 on esx-03 (compute-03) and RW405 on compute-04 (compute-04)"}
    assert all(f.fix is None for f in measured)


def test_esx04_is_unreachable_and_everything_else_on_it_is_blocked(run):
    (reach,) = run.of("esx-04", "RW001")
    assert reach.status is Status.ERROR
    assert reach.details["error_kind"] == "refused" and "refused" in reach.summary
    rest = [f for f in run.on("esx-04") if f.check != "RW001"]
    assert len(rest) >= 17
    assert all(f.status is Status.SKIP and f.blocked_by == ("RW001", "esx-04") for f in rest)


def test_compute04_mtu_1500_and_gid_index_5(run):
    catalog = run.report.checks
    not_passing = {c: s for c, s in run.not_passing("compute-04").items()
                   if c not in ("RW409", "RW410") and not c.startswith("RW6")}
    (mtu,) = run.of("compute-04", "RW405")
    assert mtu.status is Status.FAIL and mtu.observed == 1500
    (active,) = run.of("compute-04", "RW404")
    # its host is unreachable: an unknown, which must not hide what the guest itself shows
    assert mtu.blocked_by is None
    assert active.observed["active_mtu"] == 1024 and "MTU 1500" in seen(active)
    if "RW405" in catalog["RW404"].meta.depends_on:
        assert active.status is Status.SKIP and active.blocked_by == ("RW405", "compute-04")
        assert not_passing == {"RW405": {Status.FAIL}, "RW404": {Status.SKIP}}
    else:
        assert active.status is Status.FAIL
        assert not_passing == {"RW404": {Status.FAIL}, "RW405": {Status.FAIL}}
    # the second link-local address pushes the RoCE v2 IPv4 GID to index 5: read, never assumed
    (gid,) = run.of("compute-04", "RW407")
    assert gid.status is Status.PASS and gid.details["gid_index"] == 5
    assert gid.details["ipv4"] == "192.168.100.14"
    # its host is unreachable, but the guest's own checks still judge (RW402 passes on its own)
    assert run.statuses("compute-04", "RW402") == {Status.PASS}


def test_failures_are_exactly_the_story(run):
    failing = {(f.check, f.target) for f in run.report.findings if f.status is Status.FAIL}
    story = {
        ("RW209", "esx-02"), ("RW212", "esx-02"),
        ("RW206", "esx-03"), ("RW214", "esx-03"),
        ("RW405", "compute-04"),
    }
    assert failing == story
    warned = {(f.check, f.target) for f in run.report.findings if f.status is Status.WARN}
    assert warned == {("RW213", "esx-02")}
    # compute-04's GID index 5 against 3 elsewhere: said, not warned — no job pins UCX_IB_GID_INDEX and
    # UCX's auto picks each node's own
    gid = next(f for f in run.report.findings if f.check == "RW407" and f.target == "all targets")
    assert gid.status is Status.PASS and gid.observed == {"compute-01": 3, "compute-02": 3, "compute-04": 5}
    assert run.report.exit_code is ExitCode.FAILED


def test_the_validate_stage_measures_compute01_to_compute02(run):
    """The recorded measurements (scripts/record_sample_validate.py): the healthy pair's perftest and MPI pass with
    their numbers; the incast collapses into compute-02 because esx-02 has no PFC, which is RW209's root cause; what
    the sample cannot show (no switch, no NCCL, a VF's pause counters) is said, not guessed."""
    pair = "compute-01<->compute-02"
    mine = {f.check: f for f in run.on("compute-02") if f.subject == pair}
    for code in ("RW601", "RW602", "RW603", "RW604"):
        assert mine[code].status is Status.PASS, (code, mine[code].summary)
    assert "Gb/s" in mine["RW601"].summary and "rc_mlx5" in mine["RW603"].summary
    assert "NCCL_SOCKET_IFNAME==ens256" in mine["RW604"].summary
    assert mine["RW605"].blocked_by == ("RW209", "esx-02") and "incast collapses" in seen(mine["RW605"])
    assert mine["RW606"].status is Status.SKIP and "VF" in mine["RW606"].summary
    assert mine["RW609"].status is Status.SKIP and "roce.switch_ports" in mine["RW609"].summary
    assert mine["RW610"].status is Status.SKIP and "not on both nodes" in mine["RW610"].summary
    # the second pair cannot be measured: compute-03 has no RDMA device; blocked by a root cause, never a failure,
    # and reported on the node whose root it is (compute-03, the first in pair order), not split across the pair
    other = [f for f in run.report.findings if f.subject == "compute-03<->compute-04"]
    assert other and all(f.status is Status.SKIP and f.blocked_by for f in other)
    assert {f.target for f in other} == {"compute-03"}


# ------------------------------------------------------------------------------ the README command


def test_readme_command_exits_1_and_its_json_tells_the_same_story(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    runner = CliRunner()
    args = ["doctor", "-i", str(INVENTORY), "--replay", str(RECORDINGS)]  # the validate stage too (recorded)
    human = runner.invoke(app, args)
    assert human.exit_code == 1, human.output
    assert "RW209" in human.output and "How to fix by hand" in human.output
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["summary"]["exit_code"] == 1 and data["summary"]["targets"] == 8
    assert "no recorded output" not in result.stdout
    rows = {(r["check"], r["target"], r["subject"]): r for r in data["results"]}
    assert rows[("RW209", "esx-02", None)]["status"] == "fail"
    assert rows[("RW209", "esx-02", None)]["stage"] == "esxi"
    assert rows[("RW001", "esx-04", None)]["status"] == "error"
    assert rows[("RW402", "compute-03", None)]["blocked_by"] == {"check": "RW206", "target": "esx-03"}
