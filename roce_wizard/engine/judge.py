"""Judging: evaluate each check on a target's facts (missing facts and crashes become findings), resolve
root causes across targets (ONE algorithm: a finding that cannot be judged because a dependency is broken
names that root once), and the checks that compare targets. Also the run's report and its exit code."""

from __future__ import annotations

import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from roce_wizard.model import (
    ExitCode,
    Facts,
    Finding,
    LoadedCheck,
    MissingFact,
    Policy,
    Severity,
    Stage,
    Status,
    Target,
    TargetKind,
)


@dataclass
class TargetRun:
    target: Target
    facts: Facts
    findings: list[Finding] = field(default_factory=list)
    duration_s: float = 0.0


@dataclass
class RunReport:
    checks: dict[str, LoadedCheck]
    targets: list[Target]
    runs: list[TargetRun]
    stage_of: dict[str, Stage]
    started: float
    duration_s: float
    run_dir: str | None = None
    cross_target: list[Finding] = field(default_factory=list)  # judgements over several targets

    @property
    def findings(self) -> list[Finding]:
        return [f for run in self.runs for f in run.findings] + self.cross_target

    @property
    def exit_code(self) -> ExitCode:
        return exit_code_for(self.findings)

    def counts(self) -> dict[str, int]:
        counts = {s.value: 0 for s in Status}
        for f in self.findings:
            counts[f.status.value] += 1
        return counts


def exit_code_for(findings: Iterable[Finding]) -> ExitCode:
    findings = list(findings)
    if any(f.status is Status.FAIL for f in findings):
        return ExitCode.FAILED
    if any(f.status is Status.ERROR for f in findings):
        return ExitCode.INCOMPLETE
    if any(f.status is Status.PASS and f.pending_reboot for f in findings):
        return ExitCode.INCOMPLETE  # nothing failed, but a change is not in effect yet: not proven (pending.py)
    return ExitCode.OK


def applicable(check: LoadedCheck, target: Target) -> bool:
    return target.kind in check.meta.target_kinds


def evaluate_check(check: LoadedCheck, facts: Facts, policy: Policy) -> list[Finding]:
    """Run one check's evaluate; missing facts and crashes become findings, never exceptions."""
    name = facts.target_name
    try:
        findings = check.evaluate(facts, policy)
    except MissingFact as exc:
        failure = facts.failures.get(exc.kind)
        if failure is not None and failure.reason.startswith("not applicable"):
            return [Finding(check.code, Status.SKIP, f"{exc.kind}: {failure.reason}", target=name)]
        finding = Finding(check.code, Status.ERROR, f"could not read {exc.kind}: {exc.reason or 'not collected'}",
                          target=name, evidence=[facts.evidence(exc.kind, (facts.raw.get(exc.kind) or "")[-400:] or None)])
        if failure is not None and failure.tool_missing:
            finding.details["tool_missing"] = True
        return [finding]
    except Exception as exc:  # a check bug must not take the run down; it shows as an error
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return [Finding(check.code, Status.ERROR, f"check crashed: {tb}", target=name)]
    for f in findings:
        f.target = f.target or name
    if not findings:
        findings = [Finding(check.code, Status.ERROR, "the output held nothing this check can judge", target=name)]
    return findings


def evaluate_target(target: Target, checks: list[LoadedCheck], facts: Facts, policy: Policy) -> list[Finding]:
    connection = facts.data.get("connection") or {}
    findings: list[Finding] = []
    for check in checks:
        if check.code != "RW001" and not connection.get("ok", False) and not connection.get("dropped"):
            findings.append(Finding(check.code, Status.SKIP, f"blocked by RW001 on {target.name}",
                                    target=target.name, blocked_by=("RW001", target.name)))
            continue
        findings.extend(evaluate_check(check, facts, policy))
    return findings


def resolve_root_causes(runs: list[TargetRun], checks: dict[str, LoadedCheck]) -> None:
    """Turn findings that cannot be judged because a dependency is broken into `skip`, naming the
    root cause (check and target) once, however long the chain: the operator sees the cause, not a
    cascade of failures."""
    by_target = {run.target.name: run.target for run in runs}
    # `bmc:` dependencies of a host: the bmc target whose `host` names it
    bmc_of = {t.host: t.name for t in by_target.values() if t.kind is TargetKind.BMC and t.host}
    index: dict[tuple[str, str], list[Finding]] = {}
    # a finding about something a target manages that is no target itself (a VM vCenter shows)
    # says in details["host"] where it runs, for its `host:` dependencies
    host_of: dict[str, str] = {}
    for run in runs:
        for f in run.findings:
            index.setdefault((f.check, f.target), []).append(f)
            if f.target not in by_target and isinstance(f.details.get("host"), str):
                host_of.setdefault(f.target, f.details["host"])

    vcenter = next((t.name for t in by_target.values() if t.kind is TargetKind.VCENTER), None)
    warn_checks = {code for code, c in checks.items() if c.meta.severity is Severity.WARN}
    # (code, target) -> (root cause, whether the root is a known failure rather than an unknown)
    memo: dict[tuple[str, str], tuple[tuple[str, str], bool] | None] = {}

    def broken_root(code: str, target_name: str, depth: int = 0) -> tuple[tuple[str, str], bool] | None:
        """The root cause if (code, target) is broken (fail/error, or blocked itself), else None."""
        key = (code, target_name)
        if key in memo:
            return memo[key]
        memo[key] = None  # cycle guard
        findings = index.get(key, [])
        root = None
        for f in findings:
            if f.blocked_by is not None:  # blocked while gathering (unreachable): an unknown
                root = (f.blocked_by, False)
                break
        own_fail = any(f.status is Status.FAIL for f in findings)
        if root is None and depth < 20:
            upstream = blocking_dependency(code, target_name, depth)
            # an unknown upstream does not explain away a failure this check really saw
            if upstream is not None and any(f.status is not Status.PASS for f in findings) and (
                upstream[1] or not own_fail
            ):
                root = upstream
        if root is None and any(f.status in (Status.FAIL, Status.ERROR) for f in findings):
            root = (key, own_fail)
        # a warn-severity check's warning is its "bad": a known root (RW213 defers to vCenter's RW307)
        if root is None and key[0] in warn_checks and any(f.status is Status.WARN for f in findings):
            root = (key, True)
        memo[key] = root
        return root

    def blocking_dependency(code: str, target_name: str, depth: int) -> tuple[tuple[str, str], bool] | None:
        check = checks.get(code)
        target = by_target.get(target_name)
        if check is None or (target is None and target_name not in host_of):
            return None
        related = ({"": target.name, "host": target.host, "vm": target.vm} if target is not None
                   else {"": target_name, "host": host_of[target_name]})
        if target is not None:
            related["bmc"] = bmc_of.get(target.name)
        related["vcenter"] = vcenter  # a setting judged on the vCenter itself (the VDS MTU)
        for dep in check.meta.depends_on:
            where, _, dep_code = dep.rpartition(":")
            dep_target = related.get(where)
            if where == "vcenter" and (dep_code, target_name) in index:  # judged per host (RW307): that one
                dep_target = target_name
            if not dep_target or (dep_code, dep_target) not in index:
                continue  # not selected or not applicable there: nothing to block on
            root = broken_root(dep_code, dep_target, depth + 1)
            if root is not None:
                return root
        if code != "RW002":
            # a tool the check needs is missing and RW002 said so: that is the cause
            if any(f.details.get("tool_missing") for f in index.get((code, target_name), [])):
                # RW002 reporting a missing tool (even as a warning for a helper tool) is the cause
                if any(f.status is not Status.PASS for f in index.get(("RW002", target_name), [])):
                    return (("RW002", target_name), True)
        return None

    # decide everything on the findings as evaluated, then rewrite (so order cannot matter)
    decisions = [(f, blocking_dependency(f.check, f.target, 0)) for run in runs for f in run.findings
                 if f.status is not Status.PASS and f.blocked_by is None]
    for f, found in decisions:
        if found is not None:
            upstream, known = found
            # A real observation (fail/warn) is masked only by a dependency known to be broken; an
            # unknown one (its host unreachable, its output unreadable) explains only what could not be judged.
            if (f.status in (Status.FAIL, Status.WARN) and not known) or upstream == (f.check, f.target):
                continue
            f.details["unjudged"] = f"{f.status.value}: {f.summary}"  # what it saw, for -v and --json
            f.status = Status.SKIP
            f.blocked_by = upstream
            f.summary = f"blocked by {upstream[0]} on {upstream[1]}"
            f.fix = None


def compare_across_targets(runs: list[TargetRun], checks: dict[str, LoadedCheck]) -> list[Finding]:
    """Checks that judge several targets together see every finding of theirs, and every finding of
    the run (RW407: the GID index agrees across nodes; RW507: a host's PFC agrees with its switch port)."""
    out: list[Finding] = []
    for code, check in checks.items():
        if check.compare is None:
            continue
        everything = [f for run in runs for f in run.findings]
        mine = [f for f in everything if f.check == code]
        try:
            extra = check.compare(mine, everything)
        except Exception as exc:  # a cross-target bug shows as an error, never a crash
            extra = [Finding(code, Status.ERROR, f"cross-target comparison crashed: {exc!r}")]
        for f in extra:
            f.target = f.target or "all targets"
        out.extend(extra)
    return out


def facts_for_analyze(data: dict[str, Any], raw: dict[str, str]) -> Facts:
    return Facts(data=data, target=None, raw=raw)


def analyzable(check: LoadedCheck, kinds: set[str]) -> bool:
    """`analyze` runs a check when all its required probes are present and at least one it reads is."""
    required = set(check.meta.probes) - {"connection"}
    reads = required | set(check.meta.optional_probes)
    if "connection" in check.meta.probes:
        return False
    return required <= kinds and bool(reads & kinds)

