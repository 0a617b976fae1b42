"""The validate stage's I/O: measurements between two nodes (the `validate` stage, RW601-RW610).

The engine gathers and judges every target on its own; a measurement needs two sessions at once. After
the per-target checks (and their root causes) are settled the engine hands `run_pairs` its runs; it
pairs the nodes, runs the pair probes the selected checks declare (roce_wizard/probes/pairs.py: what to
run and how to read it, pure) and gives each check a `Facts` of the pair to judge with its `evaluate`.
It knows no check code.

- Pairs: consecutive guest (or bare-metal) nodes in inventory order, (1,2), (3,4)…, an odd last node
  paired with the one before it; or `policy.validate_pairs` ("a:b,c:d"). The first node of a pair
  sends (perftest clients, MPI rank 0), the second receives (perftest servers, the incast target).
- Both ends use the RDMA device and the RoCE v2 IPv4 GID index each node's own facts show (the
  facts RW402/RW407 judge); the client is given the server's RoCE IP. A value read from a node that
  fails its pattern (shell characters) stops the pair before anything runs.
- Every command and its output goes into the run log as a raw record (unique command text per
  record, so `--replay` of the run answers each one), with a `ProbeRan` event like any probe; a node's
  own probes a pair probe needs run through gather's probe runner, and checks are judged by judge's
  `evaluate_check` — one engine, one way of asking and judging.
- A validate finding that is not a pass is blocked by (and names) the root cause when something an
  earlier stage judged on either node, its ESXi host, its VM, BMC, switch or the vCenter is broken.

Whose finding it is — one rule, here (`pair_roots`, `blocked`, checklib.pairs.at_fault):
  1. a blocked finding is reported on the node whose root cause blocks it: per node, in pair order
     (sender, receiver), the worst broken finding of its own, its VM's, host's, BMC's, switch's or the
     vCenter's; the first node that has one gets the finding, blocked by that root, and the other node's
     root is named in the summary. The roots are the pair's, not the check's: every RW60x of the pair is
     blocked by the same root on the same node. With no earlier root, a check that depends on a validate
     check that failed on the pair is blocked by it, on the node that check named.
  2. a measured failure is reported on the node at fault when the check can tell (its check calls
     `at_fault`: a sender's wrong traffic class -> the sender, a receiver that drops -> the receiver, a
     node lacking a device or GID -> that node); otherwise on the receiver (the facts' target).
  3. the pair is every finding's subject.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from roce_wizard.engine.events import Event, ProbeRan
from roce_wizard.engine.gather import _run_probe
from roce_wizard.engine.judge import evaluate_check
from roce_wizard.model import Facts, Finding, LoadedCheck, Policy, Stage, Status, Target, TargetKind
from roce_wizard.probes import UnsafeValue, probe_order, rdma_device, safe
from roce_wizard.probes.pairs import IPV4, NODE_PROBES, Node, Outputs, Pair, PairNodes, PairProbe, PairStep, declared
from roce_wizard.transports.base import Session, Transport, TransportError

if TYPE_CHECKING:
    from roce_wizard.records.runlog import RunLog

NODE_KINDS = (TargetKind.GUEST, TargetKind.LINUX)

EventSink = Callable[[Event], None]


class NodeRun(Protocol):
    """A target as the engine ran it (engine.TargetRun)."""

    target: Target
    facts: Facts
    findings: list[Finding]


def choose_pairs(targets: list[Target], policy: Policy) -> tuple[list[Pair], str | None]:
    """The pairs to measure, and why there are none when there are none."""
    nodes = [t for t in targets if t.kind in NODE_KINDS]
    by_name = {t.name: t for t in nodes}
    spec = (getattr(policy, "validate_pairs", "") or "").strip()
    if spec:
        pairs = []
        for i, item in enumerate(p.strip() for p in spec.split(",") if p.strip()):
            a, _, b = item.partition(":")
            if a not in by_name or b not in by_name or a == b:
                return [], f"policy.validate_pairs names {item!r}: both must be guest/linux targets of this run"
            pairs.append(Pair(by_name[a], by_name[b], i))
        return pairs, None
    out: list[Pair] = []
    for kind in NODE_KINDS:  # a guest pairs with a guest, a bare-metal host with a bare-metal host
        group = [t for t in nodes if t.kind is kind]
        for i in range(0, len(group) - 1, 2):
            out.append(Pair(group[i], group[i + 1], len(out)))
        if len(group) > 2 and len(group) % 2:
            out.append(Pair(group[-2], group[-1], len(out)))
    if not out:
        return [], f"the validate stage needs two guest or bare-metal nodes; this run has {len(nodes)}"
    return out, None


# ---------------------------------------------------------------------------- what a node is


def _netdev_ips(facts: Facts, netdev: str | None) -> list[str]:
    for iface in (facts.get("ip_json") or {}).get("interfaces", []):
        if netdev and iface.get("name") == netdev:
            return [a.split("/")[0] for a in iface.get("ipv4") or []]
    return []


def describe_node(target: Target, facts: Facts) -> Node:
    """The device, IP and GID index a measurement uses on this node, from its facts (pure)."""
    node = Node(target, facts, netdev=target.roce.netdev)
    ips = _netdev_ips(facts, node.netdev)
    node.ip = ips[0] if ips else (target.roce.ip.split("/")[0] if target.roce.ip else None)
    devices = {d.get("hca_id") for d in (facts.get("ibv_devinfo") or {}).get("devices", [])}
    node.dev = rdma_device(target, facts.data)
    if not facts.has("ibv_devinfo"):
        node.problems.append("its RDMA devices could not be read (ibv_devinfo)")
    elif node.dev is None or node.dev not in devices:
        node.problems.append(f"no RDMA device serves {node.netdev or 'the RoCE netdev'}"
                             + (f" ({node.dev} is not listed by ibv_devinfo)" if node.dev else ""))
    for g in (facts.get("show_gids") or {}).get("gids", []):
        if g.get("ver") == "v2" and g.get("ipv4") and (g.get("ipv4") == node.ip or not node.ip) and (
                g.get("dev") == node.dev or g.get("netdev") == node.netdev):
            node.gid_index, node.gid_kind, node.port = g.get("index"), "v2-ipv4", g.get("port") or 1
            node.dev = node.dev or g.get("dev")
            break
    if node.gid_index is None:
        node.problems.append(f"no RoCE v2 GID carries {node.ip or 'the RoCE IPv4'}")
    if not node.ip:
        node.problems.append(f"{node.netdev or 'the RoCE netdev'} has no IPv4")
    return node


def unsafe_value(node: Node) -> str | None:
    """Why a value a measurement would put into a command is refused (the RDMA device, the netdev and the
    IPv4 come from the node's own tool output), or None when every one is safe."""
    for label, value, pattern in (("device name", node.dev, None), ("network device name", node.netdev, None),
                                  ("IPv4 address", node.ip, IPV4)):
        if value is None:
            continue
        try:
            safe(value) if pattern is None else safe(value, pattern)
        except UnsafeValue:
            return f"unsafe {label} {value!r} on {node.name} (shell characters: not put into a command)"
    return None


def parse_rate(text: str) -> float | None:
    """`/sys/class/infiniband/<dev>/ports/<p>/rate`: "100 Gb/sec (4X EDR)" -> 100.0."""
    m = re.search(r"(\d+(?:\.\d+)?)\s*Gb/sec", text)
    return float(m.group(1)) if m else None


# ---------------------------------------------------------------------------- running commands


@dataclass
class Runner:
    """Runs a command on a node and records it like a probe (raw record + `probe` event)."""

    runlog: RunLog | None
    emit: EventSink
    timeout: float | None
    sessions: dict[str, Session] = field(default_factory=dict)  # node name -> its session
    records: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (command, output)
    connect: Callable[[Target], Awaitable[Session]] | None = None  # a switch's session (side "switch" steps)
    seq: int = 0  # the order commands ran in: a replay answers a command asked twice in that order

    async def run(self, node: Node, key: str, command: str, timeout: float | None = None) -> tuple[int | None, str]:
        started = time.monotonic()
        limit = max(timeout or 0, self.timeout or 0) or None
        result = await self.sessions[node.name].run(command, timeout=limit)
        record = result.to_dict()
        record["duration_s"] = round(time.monotonic() - started, 4)
        self.seq += 1
        record["seq"] = self.seq
        full_key = f"validate.{key}"
        if self.runlog is not None:
            self.runlog.raw(node.name, full_key, record)
        self.emit(ProbeRan(target=node.name, probe=full_key, command=command, exit_status=result.exit_status,
                           timed_out=result.timed_out, duration_s=record["duration_s"]))
        text = result.stdout + (result.stderr if result.stderr else "")
        self.records[f"{node.name}:{key}"] = (command, text)
        return (None if result.timed_out else result.exit_status), text

    async def _step(self, step: PairStep, nodes: PairNodes) -> tuple[int | None, str]:
        if step.side != "switch":
            node = nodes.sender if step.side == "sender" else nodes.receiver
            return await self.run(node, f"p{nodes.pair.index}.{step.key}", step.command, step.timeout)
        switch = nodes.targets.get(step.on or "")
        if switch is None or self.connect is None:
            return 1, f"roce-wizard: no switch target {step.on!r} in this run"
        try:  # a switch that cannot be reached leaves its counters unread; the nodes' measurements go on
            if switch.name not in self.sessions:
                self.sessions[switch.name] = await self.connect(switch)
            return await self.run(Node(switch, Facts(target=switch)), f"p{nodes.pair.index}.{step.key}",
                                  step.command, step.timeout)
        except TransportError as exc:
            return 1, f"roce-wizard: {switch.name} unreachable: {exc.message}"

    async def measure_all(self, probes: Sequence[PairProbe], nodes: PairNodes, policy: Policy) -> dict[str, Any]:
        """The pair probes' steps: every "before" step first, each probe's own steps in order, every "after"
        step last; then each probe's parser over its outputs ({} for a probe that does not apply)."""
        planned = {p.name: p.command(nodes, policy) for p in probes}
        outputs: dict[str, Outputs] = {name: {} for name in planned}
        for phase in ("before", "during", "after"):
            for name, steps in planned.items():
                for step in steps or ():
                    if step.phase == phase:
                        outputs[name][step.key] = await self._step(step, nodes)
        return {p.name: ({} if planned[p.name] is None else p.parser(nodes, policy, outputs[p.name])) for p in probes}


# ---------------------------------------------------------------------------- root causes


def _related(target: Target, targets: dict[str, Target]) -> list[str]:
    """Targets whose broken findings explain a failed measurement on this node: itself, its VM and
    ESXi host, the switches its (or its host's) RoCE ports are cabled to."""
    names = [n for n in (target.name, target.vm, target.host) if n]
    host = targets.get(target.host or "")
    for t in (target, host):
        for spec in (t.roce.switch_ports if t else ()):
            sw = spec.partition(":")[0]
            if sw and sw not in names:
                names.append(sw)
    machine = target.host or target.name  # the server: a guest's ESXi host, or the bare-metal host itself
    names += [t.name for t in targets.values() if t.kind is TargetKind.BMC and t.host == machine]
    vcenter = next((t.name for t in targets.values() if t.kind is TargetKind.VCENTER), None)
    if vcenter:
        names.append(vcenter)
    return names


def _root_of(f: Finding) -> tuple[str, str]:
    return f.blocked_by if f.blocked_by else (f.check, f.target)


Root = tuple[str, tuple[str, str]]  # (the pair's node it explains, (check, target) of the root cause)


def pair_roots(pair: Pair, runs: Sequence[NodeRun], own: Mapping[str, tuple[str, str]] | None = None) -> list[Root]:
    """Per node of the pair, in pair order (sender, receiver), what broke first for it: `own` (a node the
    stage could not reach itself), else the worst broken finding an earlier stage judged on the node, its VM,
    ESXi host, BMC, cabled switch or the vCenter (fail before error before warn, the node's own before its
    host's). A root both nodes share (their switch, the vCenter) is named once, for the first node. The same
    list for every check of the pair: a pair is blocked by one root, reported on one node."""
    targets = {r.target.name: r.target for r in runs}
    earlier = [f for r in runs for f in r.findings]
    rank = {Status.FAIL: 0, Status.ERROR: 1, Status.WARN: 2}
    out: list[Root] = []
    for node in (pair.sender, pair.receiver):
        root = (own or {}).get(node.name)
        if root is None:
            related = _related(node, targets)
            broken = sorted((g for g in earlier if g.target in related and g.status in rank),
                            key=lambda g: (rank[g.status], related.index(g.target)))
            root = _root_of(broken[0]) if broken else None
        if root is not None and root not in (r for _, r in out):
            out.append((node.name, root))
    return out


def blocked(f: Finding, roots: Sequence[Root]) -> Finding:
    """Rule 1: `f` skipped, blocked by the first root, reported on the node that root explains; a second
    root (the other node's) is named in the summary."""
    node, root = roots[0]
    f.status, f.blocked_by, f.fix, f.target = Status.SKIP, root, None, node
    f.summary = f"blocked by {root[0]} on {root[1]}" if len(roots) == 1 else "blocked by " + " and ".join(
        f"{r[0]} on {r[1]} ({name})" for name, r in roots)
    return f


def block_on_root_causes(findings: list[Finding], pairs: dict[str, Pair], runs: Sequence[NodeRun],
                         checks: dict[str, LoadedCheck]) -> None:
    """A validate finding that is not a pass is blocked by what broke first (`pair_roots`: either node's
    broken earlier finding, in pair order), else by a validate check it depends on that failed on the same
    pair (RW605 on RW601), and reported on the node of that root (`blocked`).

    Not the engine's resolve_root_causes: that one follows each check's `depends_on` on one target; a
    measurement crosses the whole path, so ANY broken finding on either node, its VM, host, BMC, cabled
    switch or the vCenter explains it (a switch's missing PFC collapses the incast)."""
    own = {(f.check, f.subject): f for f in findings}
    roots_of = {name: pair_roots(pair, runs) for name, pair in pairs.items()}
    for f in findings:
        if f.status not in (Status.FAIL, Status.ERROR, Status.WARN) or f.blocked_by is not None:
            continue  # a pass, or a skip that says n/a
        pair = pairs.get(f.subject or "")
        if pair is None:
            continue
        roots = roots_of[pair.name]
        if not roots:
            for dep in checks[f.check].meta.depends_on if f.check in checks else ():
                upstream = own.get((dep, f.subject))
                if upstream is not None and upstream.status in (Status.FAIL, Status.ERROR):
                    # a measured failure: its check named the node at fault (rule 2)
                    at = upstream.target if upstream.target in (pair.sender.name, pair.receiver.name) else f.target
                    roots = [(at, _root_of(upstream))]
                    break
        if roots and roots[0][1] != (f.check, f.target):
            f.details["unjudged"] = f"{f.status.value}: {f.summary}"
            blocked(f, roots)


# ---------------------------------------------------------------------------- the stage


def _pair_findings(codes: list[str], pair: Pair, status: Status, summary: str, **kw: Any) -> list[Finding]:
    return [Finding(code, status, summary, target=pair.receiver.name, subject=pair.name, **kw) for code in codes]


async def run_pairs(
    runs: Sequence[NodeRun], checks: dict[str, LoadedCheck], by_kind: Mapping[TargetKind, Transport],
    policy: Policy, *, runlog: RunLog | None, emit: EventSink, command_timeout: float | None,
) -> list[Finding]:
    """The validate stage over the run's nodes; called by the engine after the per-target checks."""
    selected = {code: c for code, c in checks.items() if c.meta.stage is Stage.VALIDATE}
    if not selected:
        return []
    codes = list(selected)
    by_name = {r.target.name: r for r in runs}
    pairs, why_none = choose_pairs([r.target for r in runs], policy)
    if not pairs:
        return [Finding(code, Status.SKIP, why_none or "no pairs", target="all targets") for code in selected]
    probes_of = {code: declared(c.meta.pair_probes) for code, c in selected.items()}
    to_run = list({p.name: p for code in sorted(probes_of) for p in probes_of[code]}.values())  # once each, by code
    wanted = set(NODE_PROBES) | {n for p in to_run for n in p.node_probes}
    switch_transport = by_kind.get(TargetKind.SWITCH)
    runner = Runner(runlog, emit, command_timeout, connect=switch_transport.session if switch_transport else None)
    every = {r.target.name: r.target for r in runs}
    findings: list[Finding] = []
    for pair in pairs:
        nodes: list[Node] = []
        unreachable: dict[str, tuple[str, str]] = {}
        for t in (pair.sender, pair.receiver):
            run = by_name[t.name]
            problems: list[str] = []
            if not (run.facts.data.get("connection") or {}).get("ok"):
                unreachable[t.name] = ("RW001", t.name)
                nodes.append(Node(t, run.facts))
                continue
            try:
                runner.sessions[t.name] = session = await by_kind[t.kind].session(t)
                for probe in probe_order(wanted):
                    if t.kind in probe.kinds and probe.name not in run.facts.data and probe.name not in run.facts.failures:
                        await _run_probe(probe, t, session, run.facts, command_timeout, runlog, emit)
            except TransportError as exc:
                unreachable[t.name] = ("RW001", t.name)
                problems.append(f"unreachable: {exc.message}")
            described = describe_node(t, run.facts)
            described.problems = problems + described.problems
            nodes.append(described)
        if unreachable:
            roots = pair_roots(pair, runs, own=unreachable)
            findings += [blocked(f, roots) for f in _pair_findings(codes, pair, Status.SKIP, "")]
            continue
        measured = PairNodes(pair, *nodes, targets=every)
        refused = [why for n in nodes if (why := unsafe_value(n))]
        if refused:  # a value read from a node that must not reach a shell: nothing is run for the pair
            findings += _pair_findings(codes, pair, Status.ERROR, f"could not run: {'; '.join(refused)}",
                                       details={"pair": pair.name})
            continue
        try:
            for n in nodes:
                if n.dev:
                    _, rate = await runner.run(n, f"p{pair.index}.rate.{n.name}",
                                               f"cat /sys/class/infiniband/{safe(n.dev)}/ports/{n.port}/rate")
                    n.speed_gbps = parse_rate(rate)
            data = await runner.measure_all(to_run, measured, policy)
        except TransportError as exc:
            findings += _pair_findings(codes, pair, Status.ERROR, f"{pair.name}: the session went away: {exc.message}")
            continue
        except UnsafeValue as exc:  # any other value refused on the way (belt and braces)
            findings += _pair_findings(codes, pair, Status.ERROR, f"could not run: {exc}", details={"pair": pair.name})
            continue
        common = measured.common_facts()
        for code, check in selected.items():
            facts = Facts(data={**common, **{k: v for p in probes_of[code] for k, v in data[p.name].items()}},
                          target=pair.receiver, raw={k: v[1] for k, v in runner.records.items()},
                          commands={k: v[0] for k, v in runner.records.items()})
            for f in evaluate_check(check, facts, policy):
                f.subject = pair.name  # the target is the receiving node, unless the check named another
                f.details.setdefault("pair", pair.name)
                findings.append(f)
    block_on_root_causes(findings, {p.name: p for p in pairs}, runs, checks)
    return findings
