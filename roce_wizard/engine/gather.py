"""Gathering: the probes a target's checks need, over its transport, each once per target, recorded
(raw outputs in the run log, a ProbeRan event each). Nothing a host does raises: unreachable hosts,
failing or missing tools and unreadable output become facts (`connection`, ProbeFailure)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

from roce_wizard.dropped import record_drop
from roce_wizard.engine.events import Connected, ProbeRan, Sink
from roce_wizard.model import Facts, LoadedCheck, ProbeFailure, Target, TargetKind
from roce_wizard.parsers import PARSERS, ParseError
from roce_wizard.parsers.base import parser_bug
from roce_wizard.probes import PROBES, Probe, UnsafeValue, probe_order
from roce_wizard.records.runlog import RunLog
from roce_wizard.transports.base import CommandResult, Session, Transport, TransportError

# how each kind of target is reached (what RW001 reports)
TRANSPORT_NAMES = {TargetKind.ESXI: "ssh", TargetKind.GUEST: "ssh", TargetKind.LINUX: "ssh",
                   TargetKind.VCENTER: "vsphere-api", TargetKind.SWITCH: "netmiko", TargetKind.BMC: "redfish"}
PROBE_CONCURRENCY = 4  # channels per host at once (ESXi's sshd allows 10 sessions)
NOT_FOUND_MARKERS = ("not found", "no such file or directory", "unknown command")


async def _run_probe(
    probe: Probe, target: Target, session: Session, facts: Facts, timeout: float | None,
    runlog: RunLog | None, emit: Sink,
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
        emit(ProbeRan(target.name, key, command, result.exit_status, result.timed_out, record["duration_s"]))
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
    runlog: RunLog | None, emit: Sink, peers: list[Target] | None = None,
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
        emit(Connected(target.name, False, exc.kind.value, exc.message))
        return facts
    facts.data["connection"] = {"ok": True, "error_kind": None, "message": None, "transport": via,
                                "address": target.address}
    emit(Connected(target.name, True))

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
        emit(Connected(target.name, False, exc.kind.value, exc.message))
    return facts


def wanted_names(probes: list[Probe]) -> set[str]:
    return {p.name for p in probes}

