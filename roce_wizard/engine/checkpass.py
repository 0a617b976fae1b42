"""One look at the inventory: gather every target concurrently (bounded), judge it, resolve root causes,
measure node pairs (the validate stage), compare across targets. `run()` (run.py) sequences these looks
with fixes and reboots; this is also what tests and benchmarks call for a single pass."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from roce_wizard.engine.events import (
    FindingJudged,
    RunEnded,
    RunPlanned,
    Sink,
    TargetJudged,
    log_event,
)
from roce_wizard.engine.gather import gather_target
from roce_wizard.engine.judge import (
    RunReport,
    TargetRun,
    applicable,
    compare_across_targets,
    evaluate_target,
    resolve_root_causes,
)
from roce_wizard.engine.pairs import run_pairs
from roce_wizard.model import LoadedCheck, Policy, Stage, Status, Target, TargetKind
from roce_wizard.records.runlog import RunLog
from roce_wizard.transports.base import Transport


async def run_checks(
    targets: list[Target],
    checks: dict[str, LoadedCheck],
    transport: Transport | Mapping[TargetKind, Transport],
    policy: Policy,
    *,
    stage_of: dict[str, Stage] | None = None,
    runlog: RunLog | None = None,
    concurrency: int = 32,
    command_timeout: float | None = 60.0,
    on_event: Sink | None = None,
    tool_facts: Mapping[str, Mapping[str, Any]] | None = None,
) -> RunReport:
    """`tool_facts`: target name -> facts the tool knows without asking the target (vm_restore.vm_power_facts),
    handed to its checks like any probe's facts. `on_event` gets every event (engine/events.py) as it happens;
    the run log gets those it keeps."""
    started = time.time()
    stage_of = stage_of or {code: c.meta.stage for code, c in checks.items()}

    def emit(event: Any) -> None:
        log_event(runlog, event)
        if on_event is not None:
            on_event(event)

    def target_findings(run: TargetRun, resolved: bool) -> None:
        """A target's findings as soon as they are known, so a front end can show them before the run
        ends. The run log records counts only (the `finding` events at the end carry them); the event's live
        `run` is a copy (findings copied: root-cause resolution rewrites them)."""
        counts = {s.value: 0 for s in Status}
        for f in run.findings:
            counts[f.status.value] += 1
        copy = TargetRun(run.target, run.facts, [replace(f, details=dict(f.details)) for f in run.findings],
                         run.duration_s)
        emit(TargetJudged(run.target.name, resolved, counts, round(run.duration_s, 3), copy))

    # one transport for every kind (replay, tests) or one per kind (ssh, vsphere, netmiko, redfish)
    by_kind = transport if isinstance(transport, Mapping) else {kind: transport for kind in TargetKind}
    missing = sorted({t.kind.value for t in targets if t.kind not in by_kind})
    if missing:
        raise ValueError(f"no transport for {', '.join(missing)} targets")
    emit(RunPlanned([t.name for t in targets], list(checks)))
    semaphore = asyncio.Semaphore(concurrency)

    async def one(target: Target) -> TargetRun:
        # validate-stage checks measure between two nodes: the validate stage runs them after these
        relevant = [c for c in checks.values() if applicable(c, target) and c.meta.stage is not Stage.VALIDATE]
        t0 = time.monotonic()
        async with semaphore:
            facts = await gather_target(target, relevant, by_kind[target.kind], command_timeout=command_timeout,
                                        runlog=runlog, emit=emit, peers=targets,
                                        known=(tool_facts or {}).get(target.name))
        run = TargetRun(target, facts, evaluate_target(target, relevant, facts, policy))
        run.duration_s = time.monotonic() - t0
        target_findings(run, resolved=False)
        return run

    try:
        runs = list(await asyncio.gather(*(one(t) for t in targets)))
        resolve_root_causes(runs, checks)
        for run in runs:
            target_findings(run, resolved=True)
        # the validate stage: measurements between node pairs, on the sessions still open
        validated = await run_pairs(runs, checks, by_kind, policy, runlog=runlog, emit=emit,
                                    command_timeout=command_timeout)
    finally:
        for used in {id(t): t for t in by_kind.values()}.values():
            await used.close()
    cross = compare_across_targets(runs, checks) + validated
    report = RunReport(checks, targets, runs, stage_of, started, time.time() - started,
                       str(runlog.path) if runlog else None, cross)
    for f in report.findings:
        emit(FindingJudged(stage_of.get(f.check, Stage.PREFLIGHT).value, f))
    emit(RunEnded(int(report.exit_code), report.counts(), round(report.duration_s, 3)))
    if runlog is not None:
        runlog.flush()  # the run is on disk before anyone reads it back
    return report
