"""Fixes: plan (pure, per check) and apply what the user allowed.

A check's `plan_fix(facts, policy)` returns a FixPlan or None when compliant. This module collects the
plans of the checks that failed, holds back those that need another fix first, and applies the allowed
steps through the same transports doctor uses (a FixStepRan event each, in the run log). Re-verifying,
reboots and repeating are rounds.py's; run.py sequences them.
"""

from __future__ import annotations

import inspect
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from roce_wizard.engine.events import FixStepRan, Sink, log_event
from roce_wizard.engine.judge import RunReport
from roce_wizard.model import (
    Facts,
    FixPlan,
    LoadedCheck,
    MissingFact,
    Policy,
    RebootKind,
    Safety,
    Status,
    Target,
    TargetKind,
)
from roce_wizard.probes import UnsafeValue
from roce_wizard.records.runlog import RunLog
from roce_wizard.transports.base import Transport, TransportError


@dataclass
class Planned:
    plan: FixPlan
    target: Target
    allowed: bool = False
    waits_for: tuple[str, ...] = ()  # codes still failing on this target that the plan needs first


@dataclass
class StepResult:
    target: str
    check: str
    command: str
    exit_status: int | None
    output: str
    duration_s: float

    @property
    def ok(self) -> bool:
        return self.exit_status == 0


@dataclass
class FixRun:
    planned: list[Planned]
    results: list[StepResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    stopped: bool = False  # the user asked to stop: `not_run` are the allowed plans that did not start
    not_run: list[Planned] = field(default_factory=list)

    @property
    def pending_reboots(self) -> dict[str, list[tuple[str, RebootKind, str]]]:
        """Per target: (check, reboot kind, reason) of applied plans whose change waits for a reboot."""
        applied = {(r.target, r.check) for r in self.results if r.ok}
        out: dict[str, list[tuple[str, RebootKind, str]]] = {}
        for p in self.planned:
            if (p.target.name, p.plan.check) in applied and p.plan.reboot is not RebootKind.NONE:
                out.setdefault(p.target.name, []).append((p.plan.check, p.plan.reboot, p.plan.reboot_reason))
        return out


def plan_fixes(report: RunReport, policy: Policy, allow: set[Safety], *,
               staged: frozenset[tuple[str, str]] | set[tuple[str, str]] = frozenset(),
               ) -> tuple[list[Planned], list[str]]:
    """The plans of every failing (not blocked) finding whose check can fix it; errors of plan_fix itself.

    A finding blocked by a root cause that is being fixed (planned here, or `staged`: (target, check)
    changes applied and waiting for a reboot) is planned too, so that what waits for the same reboot goes
    in before it: NUM_OF_VFS (RW208, blocked while SRIOV_EN is off) rides the reboot that turns SRIOV_EN on."""
    planned: list[Planned] = []
    errors: list[str] = []
    blocked_later: list[tuple[Any, str, tuple[str, str]]] = []
    for run in report.runs:
        failing = {f.check for f in run.findings if f.status in (Status.FAIL, Status.WARN) and f.blocked_by is None}
        not_passing = {f.check for f in run.findings if f.status is not Status.PASS}
        for f in run.findings:
            if f.status is Status.SKIP and f.blocked_by is not None and f.check not in failing:
                blocked_later.append((run, f.check, f.blocked_by))
        for code in sorted(failing):
            item, error = _plan_one(report, run, code, policy, allow, not_passing)
            if error:
                errors.append(error)
            if item is not None:
                planned.append(item)
    fixing = set(staged) | {(p.target.name, p.plan.check) for p in planned if p.allowed}
    seen: set[tuple[str, str]] = {(p.target.name, p.plan.check) for p in planned}
    for run, code, (root_check, root_target) in blocked_later:
        if (run.target.name, code) in seen or (root_target, root_check) not in fixing:
            continue
        seen.add((run.target.name, code))
        not_passing = {f.check for f in run.findings if f.status is not Status.PASS} - {code}
        # the root is being fixed: what this plan needs is the root itself, which is not a reason to wait
        item, _ = _plan_one(report, run, code, policy, allow, not_passing - {root_check})
        # a blocked check's planning problem is not reported: it is not judged yet; nor is a plan that cannot ride
        # the root's change (manual words, no step): the check stays blocked by its root, as doctor says
        if item is not None and item.plan.safety is not Safety.MANUAL and item.plan.steps:
            planned.append(item)
    return planned, errors


def plan_for(check: LoadedCheck, facts: Facts, policy: Policy) -> FixPlan | None:
    """THE guard every plan_fix relies on: the check's failing findings on these facts (fail, or warn for a
    warn-level check; none when a fact is missing), and None without asking the check when there are none
    (compliant: what makes `fix` after `fix` plan nothing). A plan_fix with a `failed` keyword gets them."""
    if check.plan_fix is None:
        return None
    try:
        failed = [f for f in check.evaluate(facts, policy) if f.status in (Status.FAIL, Status.WARN)]
    except MissingFact:
        return None
    if not failed:
        return None
    if "failed" in inspect.signature(check.plan_fix).parameters:
        return check.plan_fix(facts, policy, failed=failed)
    return check.plan_fix(facts, policy)


def _plan_one(report: RunReport, run: Any, code: str, policy: Policy, allow: set[Safety],
              not_passing: set[str]) -> tuple[Planned | None, str | None]:
    check = report.checks.get(code)
    if check is None or check.plan_fix is None:
        return None, None
    try:
        plan = plan_for(check, run.facts, policy)
    except UnsafeValue as exc:  # a value the host printed that must not reach a shell: no plan, and why
        return None, f"{code} on {run.target.name}: not planned: {exc}"
    except Exception as exc:  # a planning bug is reported, never applied half-way
        return None, (f"{code} on {run.target.name}: plan_fix crashed: "
                      f"{traceback.format_exception_only(type(exc), exc)[-1].strip()}")
    if plan is None:
        return None, None
    waits = tuple(c for c in plan.needs if c in not_passing)
    allowed = plan.safety in allow and plan.safety is not Safety.MANUAL and not waits and bool(plan.steps)
    return Planned(plan, run.target, allowed, waits), None


async def apply_plans(
    planned: list[Planned],
    transport: Transport | Mapping[TargetKind, Transport],
    *,
    runlog: RunLog | None = None,
    command_timeout: float | None = 120.0,
    on_event: Sink | None = None,
    stop_requested: Callable[[], bool] | None = None,
) -> FixRun:
    """Run the allowed plans' steps, target by target, in plan order; a failing step stops that plan.
    Steps identical to one already run on the same target (the one nmlx5_core string several checks
    plan) run once. `stop_requested` is asked before each plan (a safe point: a plan's steps, a switch
    change and its verify among them, always run together); once it says yes no further plan starts."""
    by_kind = transport if isinstance(transport, Mapping) else {kind: transport for kind in TargetKind}
    run = FixRun(planned)
    done: dict[tuple[str, str], str] = {}  # (target, command) that ran ok -> the check whose plan ran it
    sessions: dict[str, Any] = {}
    try:
        for item in planned:
            if not item.allowed:
                continue
            if run.stopped or (stop_requested is not None and stop_requested()):
                run.stopped = True
                run.not_run.append(item)
                continue
            name = item.target.name
            try:
                if name not in sessions:
                    sessions[name] = await by_kind[item.target.kind].session(item.target)
            except TransportError as exc:
                run.errors.append(f"{name}: {exc.message}")
                continue
            for step in item.plan.steps:
                if (name, step.command) in done:
                    if item.plan.reboot.value != "none" and done[(name, step.command)] != item.plan.check:
                        # this plan's change was made too (the one nmlx5_core string of RW209 and RW210): the run
                        # log says so, so the reboot ledger holds it as staged for this check as well
                        log_event(runlog, FixStepRan(name, item.plan.check, step.description, step.command, 0,
                                                     f"(the same command ran for {done[(name, step.command)]})",
                                                     0.0, item.plan.reboot.value, step.host or None))
                    continue
                started = time.monotonic()
                try:
                    result = await sessions[name].run(step.command, timeout=command_timeout)
                    exit_status, output = result.exit_status, (result.stdout + result.stderr)
                except TransportError as exc:
                    exit_status, output = None, exc.message
                    sessions.pop(name, None)
                outcome = StepResult(name, item.plan.check, step.command, exit_status, output[-4000:],
                                     round(time.monotonic() - started, 3))
                run.results.append(outcome)
                event = FixStepRan(name, item.plan.check, step.description, step.command, exit_status,
                                   output[-4000:], outcome.duration_s, item.plan.reboot.value, step.host or None,
                                   outcome)
                log_event(runlog, event)
                if on_event is not None:
                    on_event(event)
                if not outcome.ok:
                    break
                done[(name, step.command)] = item.plan.check
    finally:
        for used in {id(t): t for t in by_kind.values()}.values():
            await used.close()
    return run


