"""Recorded-output cases for checks: raw outputs -> real parsers -> evaluate -> expected status.

Each test module under tests/unit/checks/ defines ``CASES: list[Case]``; the meta-test
(test_check_meta.py) fails when a catalog check lacks a pass case or a fail case.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roce_wizard.catalog import load_catalog
from roce_wizard.model import Facts, Finding, Policy, Status, Target, TargetKind
from roce_wizard.parsers import PARSERS
from roce_wizard.probes import PROBES

CATALOG = load_catalog()

SEVERITY_ORDER = [Status.PASS, Status.SKIP, Status.WARN, Status.ERROR, Status.FAIL]


@dataclass
class Case:
    code: str
    name: str
    expect: Status  # the worst status among the findings
    outputs: dict[str, Any] = field(default_factory=dict)  # probe -> raw text (or {item: text})
    facts: dict[str, Any] = field(default_factory=dict)  # pre-parsed facts (e.g. `connection`)
    target: Target | None = None
    policy: Policy = field(default_factory=Policy)
    summary_has: str | None = None  # a substring the worst finding's summary must contain
    # recorded right after the check's own fix was applied (and the reboot it names, if any): its
    # plan_fix must plan nothing here (test_check_meta: idempotence on recorded outputs)
    after_fix: bool = False

    @property
    def id(self) -> str:
        return f"{self.code}-{self.name}"


def parse_output(probe: str, text: Any) -> Any:
    kind = PROBES[probe].parser if probe in PROBES else probe
    if isinstance(text, dict):
        return {item: PARSERS[kind].parse(t) for item, t in text.items()}
    return PARSERS[kind].parse(text)


def build_facts(case: Case) -> Facts:
    data = {probe: parse_output(probe, text) for probe, text in case.outputs.items()}
    data.update(case.facts)
    raw = {p: t for p, t in case.outputs.items() if isinstance(t, str)}
    return Facts(data=data, target=case.target, raw=raw)


def run_case(case: Case) -> list[Finding]:
    check = CATALOG[case.code]
    findings = check.evaluate(build_facts(case), case.policy)
    assert findings, f"{case.id}: evaluate returned no finding"
    worst = max(findings, key=lambda f: SEVERITY_ORDER.index(f.status))
    assert worst.status is case.expect, f"{case.id}: expected {case.expect.value}, got {[(f.status.value, f.summary) for f in findings]}"
    if case.summary_has:
        assert case.summary_has.lower() in worst.summary.lower(), f"{case.id}: summary {worst.summary!r}"
    for f in findings:
        assert f.check == case.code and f.summary
        if f.status in (Status.FAIL, Status.WARN):
            assert f.fix, f"{case.id}: failing finding without a fix-by-hand: {f.summary}"
            assert f.expected is not None, f"{case.id}: failing finding without an expected value"
    return findings


def esxi(name: str = "esx-01", **roce: Any) -> Target:
    from roce_wizard.model import RoceSpec  # noqa: PLC0415

    spec = RoceSpec(**{"pf_pci": "0000:3b:00.0", "vmnics": ("vmnic2", "vmnic3"), "vfs": (8, 7), **roce})
    return Target(name=name, kind=TargetKind.ESXI, address="127.0.0.1", roce=spec)


def guest(name: str = "compute-01", kind: TargetKind = TargetKind.GUEST, **roce: Any) -> Target:
    from roce_wizard.model import RoceSpec  # noqa: PLC0415

    spec = RoceSpec(**{"netdev": "ens256", "ip": "192.168.100.11/24", **roce})
    return Target(name=name, kind=kind, address="127.0.0.1", roce=spec, host="esx-01", vm=name)


# ------------------------------------------------------------------ after-fix cases of the lab world
# ESXi and guest checks (RW201–RW213, RW401–RW412): outputs recorded from the lab's simulated tools
# right after each check's own fix on the lab's fail case (tests/unit/data/after_fix/record.py
# re-records them), BEFORE the reboot the plan names and, when it names one, after it too.

AFTER_FIX_DATA = Path(__file__).parent / "unit" / "data" / "after_fix"


def target_record(target: Target) -> dict[str, Any]:
    """The inventory entry a recording was planned for, as JSON."""
    return {"name": target.name, "kind": target.kind.value, "roce": dataclasses.asdict(target.roce),
            "host": target.host, "vm": target.vm, "options": dict(target.options)}


def after_fix_target(record: dict[str, Any]) -> Target:
    from roce_wizard.model import RoceSpec  # noqa: PLC0415

    roce = {k: tuple(v) if isinstance(v, list) else v for k, v in record["roce"].items()}
    return Target(name=record["name"], kind=TargetKind(record["kind"]), address="127.0.0.1",
                  roce=RoceSpec(**roce), host=record["host"], vm=record["vm"], options=record["options"])


def after_fix(code: str, name: str, expect: Status, summary_has: str | None = None) -> Case:
    record = json.loads((AFTER_FIX_DATA / f"{code.lower()}-{name}.json").read_text(encoding="utf-8"))
    return Case(code, name, expect, outputs=record["outputs"], target=after_fix_target(record["target"]),
                summary_has=summary_has, after_fix=True)


_PASS, _WARN, _FAIL = Status.PASS, Status.WARN, Status.FAIL
AFTER_FIX_CASES: list[Case] = [
    # VIBs: `vib list` names the new VIB as soon as it is installed (its reboot is RW214's)
    after_fix("RW201", "after-fix-before-reboot", _PASS, "mft 4.18"),
    after_fix("RW201", "after-fix-rebooted", _PASS, "mft 4.18"),
    after_fix("RW202", "after-fix", _PASS, "mt4119_pciconf1"),
    # the lab burns the image and shows it at once (it has no separate running-firmware state)
    after_fix("RW203", "after-fix-before-reboot", _PASS, "16.32.1010"),
    after_fix("RW203", "after-fix-rebooted", _PASS, "16.32.1010"),
    after_fix("RW204", "after-fix-before-reboot", _PASS, "4.21.71.101"),
    after_fix("RW204", "after-fix-rebooted", _PASS, "4.21.71.101"),
    # mlxconfig: Next Boot holds the new value, Current the old one until the reboot
    after_fix("RW205", "after-fix-before-reboot", _FAIL, "reboot pending"),
    after_fix("RW205", "after-fix-rebooted", _PASS, "ETH"),
    after_fix("RW206", "after-fix-before-reboot", _FAIL, "reboot pending"),
    after_fix("RW206", "after-fix-rebooted", _PASS, "SRIOV_EN is True"),
    after_fix("RW207", "after-fix-before-reboot", _WARN, "reboot pending"),
    after_fix("RW207", "after-fix-rebooted", _PASS, "ADVANCED_PCI_SETTINGS is False"),
    after_fix("RW208", "after-fix-before-reboot", _PASS, "NUM_OF_VFS=16"),  # judged on Next Boot
    after_fix("RW208", "after-fix-rebooted", _PASS, "NUM_OF_VFS=16"),
    # nmlx5_core: the parameter string is the new one; the driver loads it at the next boot
    after_fix("RW209", "after-fix-before-reboot", _PASS, "pfctx=0x08"),
    after_fix("RW209", "after-fix-rebooted", _PASS, "pfctx=0x08"),
    after_fix("RW210", "after-fix-before-reboot", _PASS, "trust_state=2"),
    after_fix("RW210", "after-fix-rebooted", _PASS, "trust_state=2"),
    after_fix("RW211", "after-fix-before-reboot", _PASS, "ecn=1"),
    after_fix("RW211", "after-fix-rebooted", _PASS, "ecn=1"),
    after_fix("RW212", "after-fix", _PASS, "global pause off"),
    after_fix("RW213", "after-fix", _PASS, "High Performance"),
    after_fix("RW401", "after-fix-before-reboot", _PASS, "MLNX_OFED 5.4-1.0.3.0"),
    after_fix("RW401", "after-fix-rebooted", _PASS, "MLNX_OFED 5.4-1.0.3.0"),
    after_fix("RW405", "after-fix", _PASS, "MTU 9000"),
    after_fix("RW406", "after-fix", _PASS, "192.168.100.11/24"),
    after_fix("RW408", "after-fix", _PASS, "RoCE v2"),
    after_fix("RW409", "after-fix", _PASS, "trust dscp"),
    after_fix("RW410", "after-fix", _PASS, "global pause off"),
    after_fix("RW411", "after-fix", _PASS, "tclass 104"),
    # the lab fault: SRIOV_EN off for the next boot only; the fix sets it back, nothing waits
    after_fix("RW412", "after-fix-before-reboot", _PASS),
    after_fix("RW412", "after-fix-rebooted", _PASS),
    # booted with SRIOV_EN off: set for the next boot, not current (no sriov_totalvfs file yet)
    after_fix("RW412", "sriov-off-after-fix-before-reboot", _FAIL, "reboot pending"),
    after_fix("RW412", "sriov-off-after-fix-rebooted", _PASS),
    # the sysfs switch written now and by the boot hook; the limits.d file applies to the next login
    after_fix("RW413", "after-fix", _PASS, "reaction points enabled on priority 3"),
    after_fix("RW414", "after-fix", _PASS, "unlimited"),
]
