"""The only sequencer: gather (probes over transports) -> parse -> evaluate -> root-cause.

Every target is worked on concurrently (bounded); one session per target per run; each probe
runs once per target. Nothing a host does can crash the run: unreachable hosts, failing or
missing tools, unreadable output and even a crashing check become findings with a status.
Fixes (plan -> apply -> re-verify) live in fixes.py, reboots in reboots.py.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from roce_wizard.dropped import record_drop
from roce_wizard.model import (
    ExitCode,
    Facts,
    Finding,
    LoadedCheck,
    MissingFact,
    Policy,
    ProbeFailure,
    Severity,
    Stage,
    Status,
    Target,
    TargetKind,
)
from roce_wizard.parsers import PARSERS, ParseError
from roce_wizard.parsers.base import parser_bug
from roce_wizard.probes import PROBES, Probe, UnsafeValue, probe_order
from roce_wizard.runlog import RunLog
from roce_wizard.transports.base import CommandResult, Session, Transport, TransportError

EventSink = Callable[[str, dict[str, Any]], None]
# how each kind of target is reached (what RW001 reports)
TRANSPORT_NAMES = {TargetKind.ESXI: "ssh", TargetKind.GUEST: "ssh", TargetKind.LINUX: "ssh",
                   TargetKind.VCENTER: "vsphere-api", TargetKind.SWITCH: "netmiko", TargetKind.BMC: "redfish"}
PROBE_CONCURRENCY = 4  # channels per host at once (ESXi's sshd allows 10 sessions)
NOT_FOUND_MARKERS = ("not found", "no such file or directory", "unknown command")


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
    return ExitCode.OK


def applicable(check: LoadedCheck, target: Target) -> bool:
    return target.kind in check.meta.target_kinds


# ---------------------------------------------------------------------------- gathering


async def _run_probe(
    probe: Probe, target: Target, session: Session, facts: Facts, timeout: float | None,
    runlog: RunLog | None, emit: EventSink,
) -> None:
    if target.kind not in probe.kinds:
        return
    try:
        if probe.items is not None:
            items = probe.items(target, facts.data)
            if not items:
                facts.failures[probe.name] = ProbeFailure(probe.name, f"not applicable: {probe.why_not}")
                return
            commands = {item: probe.item_command(target, facts.data, item) for item in items}  # type: ignore[misc]
        else:
            command = probe.command(target, facts.data)
            if command is None:
                facts.failures[probe.name] = ProbeFailure(probe.name, f"not applicable: {probe.why_not}")
                return
            commands = {None: command}
    except UnsafeValue as exc:
        facts.failures[probe.name] = ProbeFailure(probe.name, str(exc))
        return

    parsed: dict[str, Any] = {}
    raws: list[str] = []
    failures: list[ProbeFailure] = []
    for item, command in commands.items():
        started = time.monotonic()
        result: CommandResult = await session.run(command, timeout=timeout)
        record = result.to_dict()
        record["duration_s"] = round(time.monotonic() - started, 4)
        key = probe.name if item is None else f"{probe.name}.{item}"
        if runlog is not None:
            runlog.raw(target.name, key, record)
        emit("probe", {"target": target.name, "probe": key, "command": command,
                       "exit_status": result.exit_status, "timed_out": result.timed_out,
                       "duration_s": record["duration_s"]})
        raws.append(result.stdout if result.ok else result.stdout + result.stderr)
        answered = not result.timed_out and result.exit_status in probe.answer_exits
        failure = None if answered else _failure_of(probe.name, result)
        if failure is None:
            parser = PARSERS[probe.parser]
            try:
                value = parser.parse(result.stdout + (result.stderr if answered else ""))
            except ParseError as exc:
                failure = ProbeFailure(probe.name, f"unreadable output of `{command}`: {exc}")
            except Exception as exc:  # a parser's own bug: this probe's checks could not run, the run goes on
                failure = ProbeFailure(probe.name, f"unreadable output of `{command}`: {parser_bug(exc, parser.parse)}")
        if failure is not None:
            failures.append(failure)
            if item is not None:  # one port's failure must not hide the others
                facts.failures[key] = failure
            continue
        if item is None:
            facts.data[probe.name] = value
        else:
            parsed[item] = value
    facts.commands[probe.name] = "\n".join(c for c in commands.values())
    facts.raw[probe.name] = "\n".join(raws)
    if probe.items is not None and parsed:
        facts.data[probe.name] = parsed
    elif failures:
        facts.failures[probe.name] = failures[0]


def _failure_of(name: str, result: CommandResult) -> ProbeFailure | None:
    if result.timed_out:
        return ProbeFailure(name, f"`{result.command}` timed out after {result.duration_s:.0f}s")
    if result.exit_status == 0:
        return None
    text = (result.stderr or result.stdout).strip()
    first = text.splitlines()[0] if text else ""
    missing = result.exit_status == 127 or any(m in text.lower() for m in NOT_FOUND_MARKERS)
    reason = f"`{result.command}` exited {result.exit_status}" + (f": {first}" if first else "")
    return ProbeFailure(name, reason, tool_missing=missing, exit_status=result.exit_status)


def peer_facts(target: Target, peers: list[Target]) -> dict[str, Any]:
    """Engine-made facts a target's checks need about the other targets of the run (docs/facts.md):
    a vCenter learns what the inventory wants of each ESXi host, a switch which ports RoCE hosts are
    cabled to, a host which BMC manages it."""
    if target.kind is TargetKind.VCENTER:
        return {"inventory_hosts": {
            t.name: {"pf_pci": t.roce.pf_pci, "vmnics": list(t.roce.vmnics), "vfs": list(t.roce.vfs)}
            for t in peers if t.kind is TargetKind.ESXI},
            # the compute VMs: guests that name their VM (vCLS and other VMs are not judged)
            "inventory_vms": {t.vm: {"host": t.host, "guest": t.name}
                              for t in peers if t.kind is TargetKind.GUEST and t.vm}}
    if target.kind is TargetKind.SWITCH:
        ports = []
        for t in peers:
            if t.kind not in (TargetKind.ESXI, TargetKind.LINUX):
                continue
            nics = list(t.roce.vmnics) if t.kind is TargetKind.ESXI else [t.roce.netdev or ""]
            for i, spec in enumerate(t.roce.switch_ports):
                switch, _, port = spec.partition(":")
                if switch == target.name and port:
                    ports.append({"port": port, "peer": t.name, "peer_kind": t.kind.value,
                                  "nic": nics[i] if i < len(nics) else None})
        return {"roce_ports": ports}
    if target.kind in (TargetKind.ESXI, TargetKind.LINUX):
        bmc = next((t.name for t in peers if t.kind is TargetKind.BMC and t.host == target.name), None)
        return {"bmc_of_host": bmc}
    return {}


async def gather_target(
    target: Target, checks: list[LoadedCheck], transport: Transport, *, command_timeout: float | None,
    runlog: RunLog | None, emit: EventSink, peers: list[Target] | None = None,
    known: Mapping[str, Any] | None = None,
) -> Facts:
    facts = Facts(target=target)
    facts.data.update(peer_facts(target, peers or []))
    facts.data.update(known or {})  # what the tool itself knows of the target (the ledger: a VM it powered off)
    via = TRANSPORT_NAMES.get(target.kind, "ssh")
    try:
        session = await transport.session(target)
    except TransportError as exc:
        facts.data["connection"] = {"ok": False, "error_kind": exc.kind.value, "message": exc.message,
                                    "transport": via, "address": target.address}
        if runlog is not None:
            runlog.raw(target.name, "connect", {"connect_error": {"kind": exc.kind.value, "message": exc.message}})
        emit("connect", {"target": target.name, "ok": False, "error_kind": exc.kind.value, "message": exc.message})
        return facts
    facts.data["connection"] = {"ok": True, "error_kind": None, "message": None, "transport": via,
                                "address": target.address}
    emit("connect", {"target": target.name, "ok": True})

    wanted = {p for c in checks for p in (*c.meta.probes, *c.meta.optional_probes) if p in PROBES}
    ordered = [p for p in probe_order(wanted) if target.kind in p.kinds]
    done: set[str] = set()
    semaphore = asyncio.Semaphore(PROBE_CONCURRENCY)

    async def run_one(probe: Probe) -> None:
        async with semaphore:
            await _run_probe(probe, target, session, facts, command_timeout, runlog, emit)
        done.add(probe.name)

    # Run in waves: a probe goes once every probe it runs `after` (and that applies here) is done.
    pending = list(ordered)
    try:
        while pending:
            ready = [p for p in pending if all(d in done or d not in wanted_names(ordered) for d in p.after)]
            pending = [p for p in pending if p not in ready]
            await asyncio.gather(*(run_one(p) for p in ready))
    except TransportError as exc:  # the host went away mid-run (rebooting): what it answered still counts
        record_drop(facts, exc, [p.name for p in ordered if p.name not in done], via, target.address)
        emit("connect", {"target": target.name, "ok": False, "error_kind": exc.kind.value, "message": exc.message})
    return facts


def wanted_names(probes: list[Probe]) -> set[str]:
    return {p.name for p in probes}


# ---------------------------------------------------------------------------- evaluating


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


# ---------------------------------------------------------------------------- the run


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
    on_event: EventSink | None = None,
    tool_facts: Mapping[str, Mapping[str, Any]] | None = None,
) -> RunReport:
    """`tool_facts`: target name -> facts the tool knows without asking the target (vm_restore.vm_power_facts),
    handed to its checks like any probe's facts."""
    started = time.time()
    stage_of = stage_of or {code: c.meta.stage for code, c in checks.items()}

    def emit(type_: str, data: dict[str, Any], live: dict[str, Any] | None = None) -> None:
        # `live`: objects for a front end in this process (not JSON, not in the run log)
        if runlog is not None:
            runlog.event(type_, **data)
        if on_event is not None:
            on_event(type_, {**data, **live} if live else data)

    def target_findings(run: TargetRun, resolved: bool) -> None:
        """A target's findings as soon as they are known, so a front end can show them before the run
        ends: provisional right after the target's own evaluation, then resolved once root causes across
        targets are named. The run log records counts only (the `finding` events at the end carry them);
        the callback also gets a copy of the run (findings copied: root-cause resolution rewrites them)."""
        counts = {s.value: 0 for s in Status}
        for f in run.findings:
            counts[f.status.value] += 1
        copy = TargetRun(run.target, run.facts, [replace(f, details=dict(f.details)) for f in run.findings],
                         run.duration_s)
        emit("target-findings", {"target": run.target.name, "resolved": resolved, "counts": counts,
                                 "duration_s": round(run.duration_s, 3)}, {"run": copy})

    # one transport for every kind (replay, tests) or one per kind (ssh, vsphere, netmiko, redfish)
    by_kind = transport if isinstance(transport, Mapping) else {kind: transport for kind in TargetKind}
    missing = sorted({t.kind.value for t in targets if t.kind not in by_kind})
    if missing:
        raise ValueError(f"no transport for {', '.join(missing)} targets")
    emit("plan", {"targets": [t.name for t in targets], "checks": list(checks)})
    semaphore = asyncio.Semaphore(concurrency)

    async def one(target: Target) -> TargetRun:
        # validate-stage checks measure between two nodes: validate.py runs them after these
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
        from roce_wizard.validate import run_validation  # noqa: PLC0415 (it imports the engine)

        validated = await run_validation(runs, checks, by_kind, policy, runlog=runlog, emit=emit,
                                         command_timeout=command_timeout)
    finally:
        for used in {id(t): t for t in by_kind.values()}.values():
            await used.close()
    cross = compare_across_targets(runs, checks) + validated
    report = RunReport(checks, targets, runs, stage_of, started, time.time() - started,
                       str(runlog.path) if runlog else None, cross)
    for f in report.findings:
        emit("finding", {"stage": stage_of.get(f.check, Stage.PREFLIGHT).value, **f.to_dict()})
    emit("run-end", {"exit_code": int(report.exit_code), "counts": report.counts(),
                     "duration_s": round(report.duration_s, 3)})
    if runlog is not None:
        runlog.flush()  # the run is on disk before anyone reads it back
    return report


def facts_for_analyze(data: dict[str, Any], raw: dict[str, str]) -> Facts:
    return Facts(data=data, target=None, raw=raw)


def analyzable(check: LoadedCheck, kinds: set[str]) -> bool:
    """`analyze` runs a check when all its required probes are present and at least one it reads is."""
    required = set(check.meta.probes) - {"connection"}
    reads = required | set(check.meta.optional_probes)
    if "connection" in check.meta.probes:
        return False
    return required <= kinds and bool(reads & kinds)


__all__ = [
    "RunReport",
    "TargetRun",
    "TargetKind",
    "analyzable",
    "evaluate_check",
    "exit_code_for",
    "facts_for_analyze",
    "resolve_root_causes",
    "run_checks",
]
