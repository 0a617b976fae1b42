"""Fixes: plan (pure, per check) -> preview -> apply what the user allowed -> re-verify.

A check's `plan_fix(facts, policy)` returns a FixPlan or None when compliant. This module collects the
plans of the checks that failed, holds back those that need another fix first, applies the allowed
steps through the same transports doctor uses (recording every step in the run log) and leaves the
re-verification to `run_checks`. Reboot orchestration (the ledger, maintenance mode, batches) is not
here yet: a plan whose change waits for a reboot is reported as pending, with its reason.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from roce_wizard.engine import RunReport
from roce_wizard.model import FixPlan, Policy, RebootKind, Safety, Status, Target, TargetKind
from roce_wizard.runlog import RunLog
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

    @property
    def pending_reboots(self) -> dict[str, list[tuple[str, RebootKind, str]]]:
        """Per target: (check, reboot kind, reason) of applied plans whose change waits for a reboot."""
        applied = {(r.target, r.check) for r in self.results if r.ok}
        out: dict[str, list[tuple[str, RebootKind, str]]] = {}
        for p in self.planned:
            if (p.target.name, p.plan.check) in applied and p.plan.reboot is not RebootKind.NONE:
                out.setdefault(p.target.name, []).append((p.plan.check, p.plan.reboot, p.plan.reboot_reason))
        return out


def plan_fixes(report: RunReport, policy: Policy, allow: set[Safety]) -> tuple[list[Planned], list[str]]:
    """The plans of every failing (not blocked) finding whose check can fix it; errors of plan_fix itself."""
    planned: list[Planned] = []
    errors: list[str] = []
    for run in report.runs:
        failing = {f.check for f in run.findings if f.status in (Status.FAIL, Status.WARN) and f.blocked_by is None}
        not_passing = {f.check for f in run.findings if f.status is not Status.PASS}
        for code in sorted(failing):
            check = report.checks.get(code)
            if check is None or check.plan_fix is None:
                continue
            try:
                plan = check.plan_fix(run.facts, policy)
            except Exception as exc:  # a planning bug is reported, never applied half-way
                errors.append(f"{code} on {run.target.name}: plan_fix crashed: "
                              f"{traceback.format_exception_only(type(exc), exc)[-1].strip()}")
                continue
            if plan is None:
                continue
            waits = tuple(c for c in plan.needs if c in not_passing)
            allowed = plan.safety in allow and plan.safety is not Safety.MANUAL and not waits and bool(plan.steps)
            planned.append(Planned(plan, run.target, allowed, waits))
    return planned, errors


async def apply_plans(
    planned: list[Planned],
    transport: Transport | Mapping[TargetKind, Transport],
    *,
    runlog: RunLog | None = None,
    command_timeout: float | None = 120.0,
    on_step: Callable[[StepResult], None] | None = None,
) -> FixRun:
    """Run the allowed plans' steps, target by target, in plan order; a failing step stops that plan.
    Steps identical to one already run on the same target (the one nmlx5_core string several checks
    plan) run once."""
    by_kind = transport if isinstance(transport, Mapping) else {kind: transport for kind in TargetKind}
    run = FixRun(planned)
    done: set[tuple[str, str]] = set()
    sessions: dict[str, Any] = {}
    try:
        for item in planned:
            if not item.allowed:
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
                if runlog is not None:
                    runlog.event("fix-step", target=name, check=item.plan.check, description=step.description,
                                 command=step.command, exit_status=exit_status, output=output[-4000:],
                                 duration_s=outcome.duration_s, reboot=item.plan.reboot.value)
                if on_step is not None:
                    on_step(outcome)
                if not outcome.ok:
                    break
                done.add((name, step.command))
    finally:
        for used in {id(t): t for t in by_kind.values()}.values():
            await used.close()
    return run
