"""Recorded-output cases for checks: raw outputs -> real parsers -> evaluate -> expected status.

Each test module under tests/unit/checks/ defines ``CASES: list[Case]``; the meta-test
(test_check_meta.py) fails when a catalog check lacks a pass case or a fail case.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
