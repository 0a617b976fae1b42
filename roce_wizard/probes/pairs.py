"""Pair probes: the measurements between two nodes that validate checks declare (RW601-RW606).

A probe asks one target one thing; a pair probe needs two nodes at once: a perftest server on one and
its client on the other, an MPI job spanning both, N streams into one node. A check declares the pair
probes it reads in `CHECK.pair_probes`, by name (the built-ins below) or as a `PairProbe` object of its
own (a site check adding a measurement), like it declares `probes`. Everything here is pure:

- `command(nodes, policy)` builds the exact steps (which node, which command line, its timeout) from
  what each node's facts show (`Node`, read by roce_wizard/engine/pairs.py); None when the pair cannot be
  measured this way. Every value put into a line passes `safe()` (a refusal is `UnsafeValue`).
- `parser(nodes, policy, outputs)` turns the steps' outputs into the facts the check judges.

roce_wizard/engine/pairs.py runs the steps (and records each one like a probe); it never knows a check code.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from roce_wizard.checklib.pairs import mpi_environment, mpirun_line, perftest_tclass
from roce_wizard.model import Facts, Policy, Target
from roce_wizard.mpienv import parse_env
from roce_wizard.parsers import PARSERS, ParseError
from roce_wizard.probes import safe

# what a measurement needs to know of each node (the facts RW402/RW407 judge); a pair probe adds its own
NODE_PROBES = ("ibv_devinfo", "rdma_link", "ibdev2netdev", "show_gids", "ip_json")
BASE_PORT = 18600  # perftest's default is 18515; ours stay clear of a user's own runs
PORTS_PER_PAIR = 40
SERVER_TIMEOUT_S = 60  # a server nobody connects to dies by itself
CLIENT_TIMEOUT_S = 60
MPI_TIMEOUT_S = 120
INCAST_SIZES = (65536, 1048576)
INCAST_DURATION_S = 5
IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")


@dataclass(frozen=True)
class Pair:
    """Two nodes measured together: the sender runs the clients (MPI rank 0), the receiver the servers."""

    sender: Target
    receiver: Target
    index: int

    @property
    def name(self) -> str:
        return f"{self.sender.name}<->{self.receiver.name}"

    @property
    def base_port(self) -> int:
        return BASE_PORT + PORTS_PER_PAIR * self.index


@dataclass
class Node:
    """What a measurement uses on one node, read from its facts (roce_wizard/engine/pairs.py describe_node)."""

    target: Target
    facts: Facts
    dev: str | None = None
    port: int = 1
    netdev: str | None = None
    ip: str | None = None
    gid_index: int | None = None
    gid_kind: str | None = None  # "v2-ipv4" when the index is the RoCE v2 IPv4 GID
    speed_gbps: float | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.target.name

    def summary(self) -> dict[str, Any]:
        return {"node": self.name, "device": self.dev, "port": self.port, "netdev": self.netdev, "ip": self.ip,
                "gid_index": self.gid_index, "speed_gbps": self.speed_gbps, "problems": list(self.problems)}


@dataclass
class PairNodes:
    """A pair with both nodes described: what a pair probe's command is built from."""

    pair: Pair
    sender: Node
    receiver: Node
    targets: dict[str, Target] = field(default_factory=dict)  # every target of the run by name (switches, hosts)

    @property
    def measurable(self) -> bool:
        """Both nodes have an RDMA device, an IPv4 and a RoCE v2 GID."""
        return not (self.sender.problems or self.receiver.problems)

    def common_facts(self) -> dict[str, Any]:
        """`validate_pair`: what every validate check of the pair gets."""
        a, b = self.sender, self.receiver
        return {"validate_pair": {"pair": self.pair.name, "sender": a.name, "receiver": b.name,
                                  "nodes": [a.summary(), b.summary()],
                                  "link_gbps": min((n.speed_gbps for n in (a, b) if n.speed_gbps), default=None)}}


@dataclass(frozen=True)
class PairStep:
    key: str  # unique within the pair; the run log's raw key is validate.p<pair index>.<key>
    side: Literal["sender", "receiver", "switch"]
    command: str
    timeout: float | None = None
    on: str | None = None  # side "switch": the switch target's name (a vendor CLI, not a node's shell)
    # "before"/"after": run before the first / after the last measurement of the pair (counters around them all)
    phase: Literal["before", "during", "after"] = "during"


Outputs = dict[str, tuple[int | None, str]]  # step key -> (exit status, None when timed out; stdout + stderr)


@dataclass(frozen=True)
class PairProbe:
    name: str
    command: Callable[[PairNodes, Policy], list[PairStep] | None]
    parser: Callable[[PairNodes, Policy, Outputs], dict[str, Any]]
    node_probes: tuple[str, ...] = ()  # probes each node must have answered (beyond NODE_PROBES)
    parsers: tuple[str, ...] = ()  # the parser kinds `parser` reads outputs with (explain --where)
    why_not: str = ""  # when command() returns None


def parse(kind: str, text: str) -> dict[str, Any] | None:
    try:
        return PARSERS[kind].parse(text)
    except ParseError:
        return None
    except Exception:  # noqa: BLE001 — a parser's own bug: unreadable like any odd output, never the end of the run
        return None


# ---------------------------------------------------------------------------- perftest (RW601, RW602)


def _server_pattern(test: str, ports: list[int]) -> str:
    """A `pkill -f` pattern for exactly our servers; `[i]b_…` so it never matches the shell running pkill."""
    alt = "|".join(str(p) for p in ports)
    return f"[{test[0]}]{test[1:]} .*-p ({alt})( |$)"


def _perftest_lines(nodes: PairNodes, test: str, args: str, port: int) -> dict[str, str]:
    """Server backgrounded under timeout (polled until it waits), the client told the server's IP, then
    whatever server is left killed and its log removed."""
    server, client = nodes.receiver, nodes.sender
    log = f"/tmp/roce-wizard-{test}-{port}.log"
    s_args = f"{args} -d {safe(server.dev or '')} -x {server.gid_index} -p {port}"
    c_args = f"{args} -d {safe(client.dev or '')} -x {client.gid_index} -p {port}"
    return {"s_args": s_args,
            "start": (f"nohup timeout {SERVER_TIMEOUT_S} {test} {s_args} </dev/null >{log} 2>&1 & "
                      f"i=0; while [ $i -lt 30 ] && ! grep -q 'Waiting for client' {log}; do sleep 0.1; "
                      f"i=$((i+1)); done; cat {log}"),
            "client": f"timeout {CLIENT_TIMEOUT_S} {test} {c_args} {safe(server.ip or '', IPV4)}",
            "cleanup": (f"cat {log}; pkill -f {shlex.quote(_server_pattern(test, [port]))} "
                        f"&& echo '# roce-wizard: stopped a leftover {test} server on port {port}'; rm -f {log}")}


def perftest_probe(name: str, key: str, test: str, args: Callable[[Policy], str], port_offset: int) -> PairProbe:
    """One perftest measurement from the sender to the receiver, both ends' counters read around it; facts
    `validate_perftest`, `perftest` and `validate_traffic_<name>` (the counter deltas RW607 judges)."""

    def command(nodes: PairNodes, policy: Policy) -> list[PairStep] | None:
        if not nodes.measurable:
            return None
        lines = _perftest_lines(nodes, test, args(policy), nodes.pair.base_port + port_offset)
        return [*(s for side, n in _sides(nodes) for s in counter_steps(nodes, side, f"{key}.{n.name}.before",
                                                                         f"before-{key}")),
                PairStep(f"{key}.server", "receiver", lines["start"]),
                PairStep(f"{key}.client", "sender", lines["client"], timeout=CLIENT_TIMEOUT_S + 5),
                PairStep(f"{key}.cleanup", "receiver", lines["cleanup"]),
                *(s for side, n in _sides(nodes) for s in counter_steps(nodes, side, f"{key}.{n.name}.after",
                                                                        f"after-{key}"))]

    def parser(nodes: PairNodes, policy: Policy, outputs: Outputs) -> dict[str, Any]:
        port = nodes.pair.base_port + port_offset
        lines = _perftest_lines(nodes, test, args(policy), port)
        status, text = outputs[f"{key}.client"]
        left = outputs[f"{key}.cleanup"][1]
        run = {"test": test, "port": port, "server": nodes.receiver.name, "client": nodes.sender.name,
               "server_command": f"{nodes.receiver.name}: {test} {lines['s_args']}",
               "client_command": f"{nodes.sender.name}: {lines['client']}",
               "server_start": outputs[f"{key}.server"][1], "client_output": text, "client_exit": status,
               "parsed": parse("perftest", text), "server_output": left,
               "leftover_killed": "stopped a leftover" in left}
        delta = {n.name: counter_delta(read_counters(outputs, f"{key}.{n.name}.before"),
                                       read_counters(outputs, f"{key}.{n.name}.after")) for _, n in _sides(nodes)}
        return {"validate_perftest": run, "perftest": run["parsed"],
                f"validate_traffic_{name}": traffic(test, delta[nodes.sender.name], delta[nodes.receiver.name])}

    return PairProbe(name, command, parser, parsers=("perftest", "ethtool_stats"),
                     why_not="a node lacks an RDMA device, an IPv4 or a RoCE v2 GID")


# ---------------------------------------------------------------------------- counters around a load


def parse_counter_lines(text: str) -> dict[str, int]:
    """`name value` lines (our own sysfs reads); `-` or junk values are left out."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
        elif len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():  # net.<if> tx rx
            out[parts[0] + ".tx_bytes"], out[parts[0] + ".rx_bytes"] = int(parts[1]), int(parts[2])
    return out


def counter_delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, int]:
    """after - before for every counter read both times (sysfs names as is, ethtool ones too)."""
    out: dict[str, int] = {}
    for part in ("sysfs", "ethtool"):
        b, a = before.get(part) or {}, after.get(part) or {}
        for k, v in a.items():
            if k in b and isinstance(v, int) and isinstance(b[k], int):
                out[k] = v - b[k]
    return out


def _counters_command(node: Node, tag: str) -> str:
    """RDMA (port counters) and every netdev's byte counters, as `name value` lines; a unique first word
    per use so that a replay of the run answers each reading with its own output."""
    base = f"/sys/class/infiniband/{safe(node.dev or 'none')}/ports/{node.port}/counters"
    nets = [i.get("name") for i in (node.facts.get("ip_json") or {}).get("interfaces", [])
            if i.get("name") and i.get("name") != "lo"]
    nets = [safe(n) for n in nets if re.match(r"^[A-Za-z0-9_.:@-]{1,15}$", n)]
    net_loop = (f"for n in {' '.join(nets)}; do echo \"net.$n $(cat /sys/class/net/$n/statistics/tx_bytes "
                f"2>/dev/null || echo -) $(cat /sys/class/net/$n/statistics/rx_bytes 2>/dev/null || echo -)\"; done; "
                if nets else "")
    hw = f"/sys/class/infiniband/{safe(node.dev or 'none')}/ports/{node.port}/hw_counters"
    return (f": roce-wizard {tag}; for f in port_xmit_data port_rcv_data; do echo \"$f $(cat {base}/$f "
            f"2>/dev/null || echo -)\"; done; {net_loop}for f in {' '.join(HW_COUNTERS)}; do echo \"$f $(cat "
            f"{hw}/$f 2>/dev/null || echo -)\"; done")


# the congestion counters of the RDMA device (kernel rdma hw_counters, mlx5: drivers/infiniband/hw/mlx5/counters.c
# names; corpus hw_counters/*): ECN-marked packets and CNPs sent at the notification point, CNPs handled at the
# reaction point, the receive queue running dry, go-back-N retransmissions
HW_COUNTERS = ("np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_handled", "out_of_buffer", "out_of_sequence")


def counter_steps(nodes: PairNodes, side: Literal["sender", "receiver"], key: str, tag: str) -> list[PairStep]:
    """A counter snapshot: sysfs RDMA/netdev counters and `ethtool -S` of the RoCE netdev."""
    node = nodes.sender if side == "sender" else nodes.receiver
    steps = [PairStep(f"{key}.sysfs", side, _counters_command(node, tag))]
    if node.netdev:
        steps.append(PairStep(f"{key}.ethtool", side, f": roce-wizard {tag}; ethtool -S {safe(node.netdev)}"))
    return steps


def read_counters(outputs: Outputs, key: str) -> dict[str, Any]:
    snap: dict[str, Any] = {"sysfs": parse_counter_lines(outputs[f"{key}.sysfs"][1])}
    if f"{key}.ethtool" in outputs:
        snap["ethtool"] = (parse("ethtool_stats", outputs[f"{key}.ethtool"][1]) or {}).get("counters", {})
    return snap


def traffic(label: str, sender: dict[str, int], receiver: dict[str, int]) -> dict[str, Any]:
    """The counter deltas of one measurement on both ends (`validate_traffic_<probe>`: RW607 and RW608 read
    every measurement's, the report draws them)."""
    return {"label": label, "sender": sender, "receiver": receiver}


def add_deltas(deltas: Iterable[dict[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for d in deltas:
        for k, v in d.items():
            out[k] = out.get(k, 0) + v
    return out


def _sides(nodes: PairNodes) -> tuple[tuple[Literal["sender", "receiver"], Node], ...]:
    return (("sender", nodes.sender), ("receiver", nodes.receiver))


# ---------------------------------------------------------------------------- MPI (RW603, RW604)


def _mpi_line(nodes: PairNodes, policy: Policy) -> tuple[str, list[dict[str, str]], dict[str, str]]:
    """The mpirun line of RW603's run, its per-node environments and the site's override."""
    a, b = nodes.sender, nodes.receiver
    envs = mpi_environment([a.summary(), b.summary()], policy)
    override = parse_env(getattr(policy, "mpi_env", "") or "")
    run_envs = [{**envs[n.name], **override, "UCX_LOG_LEVEL": "info"} for n in (a, b)]
    extra = ("--allow-run-as-root",) if a.target.credentials.username == "root" else ()
    line = mpirun_line([safe(a.ip or "", IPV4), safe(b.ip or "", IPV4)], run_envs, "osu_latency", extra=extra)
    return line, run_envs, override


def _mpi_command(nodes: PairNodes, policy: Policy) -> list[PairStep] | None:
    if not (nodes.sender.ip and nodes.receiver.ip):
        return None
    line = _mpi_line(nodes, policy)[0]
    return [*(s for side, n in _sides(nodes) for s in counter_steps(nodes, side, f"mpi.{n.name}.before", "before-mpi")),
            PairStep("mpi.run", "sender", f"timeout {MPI_TIMEOUT_S} {line}", timeout=MPI_TIMEOUT_S + 5),
            *(s for side, n in _sides(nodes) for s in counter_steps(nodes, side, f"mpi.{n.name}.after", "after-mpi"))]


def _mpi_parser(nodes: PairNodes, policy: Policy, outputs: Outputs) -> dict[str, Any]:
    """A short 2-rank osu_latency read three ways (UCX's transports, counters, latency)."""
    line, run_envs, override = _mpi_line(nodes, policy)
    status, text = outputs["mpi.run"]
    names = [nodes.sender.name, nodes.receiver.name]
    parsed = parse("openmpi_ucx_log", text)
    osu = (parsed or {}).get("osu") or parse("osu", text)
    deltas = {n: counter_delta(read_counters(outputs, f"mpi.{n}.before"), read_counters(outputs, f"mpi.{n}.after"))
              for n in names}
    return {"validate_mpi": {"command": line, "exit_status": status, "output": text, "env": run_envs,
                             "override": override, "deltas": deltas},
            "openmpi_ucx_log": parsed, "osu": osu,
            "validate_traffic_mpi_osu": traffic("osu_latency (MPI)", deltas[names[0]], deltas[names[1]])}


def _mpi_env_parser(nodes: PairNodes, policy: Policy, outputs: Outputs) -> dict[str, Any]:
    """The UCX environment that matches the pair, and what each node's `ucx_info -c` sets today."""
    a, b = nodes.sender, nodes.receiver
    return {"mpi_env": mpi_environment([a.summary(), b.summary()], policy),
            "ucx_config": {n.name: (n.facts.get("ucx_config") or {}).get("config") for n in (a, b)}}


# ---------------------------------------------------------------------------- incast (RW605, RW606)


def incast_steps(policy: Policy) -> list[int]:
    n = max(1, int(getattr(policy, "incast_streams", 4) or 4))
    steps, s = [], 1
    while s < n:
        steps.append(s)
        s *= 2
    return [*steps, n]


def _incast_rounds(nodes: PairNodes, policy: Policy) -> list[tuple[int, int, str, list[int]]]:
    return [(size, n, f"incast.{size}.{n}", [nodes.pair.base_port + 10 + i for i in range(n)])
            for size in INCAST_SIZES for n in incast_steps(policy)]


def _incast_command(nodes: PairNodes, policy: Policy) -> list[PairStep] | None:
    """1..N `ib_write_bw -D 5 -s <size> --tclass=<class>` streams into the receiver at a few sizes, with both
    ends' counters around every step."""
    if not nodes.measurable:
        return None
    a, b, test = nodes.sender, nodes.receiver, "ib_write_bw"
    steps: list[PairStep] = []
    for size, n, key, ports in _incast_rounds(nodes, policy):
        plist = " ".join(str(p) for p in ports)
        tag = f"incast-{size}-{n}"
        # on the RoCE DSCP (the class the lossless priority is for), not DSCP 0
        args = f"-D {INCAST_DURATION_S} -s {size} --tclass={perftest_tclass(policy)} --report_gbits"
        slog, clog = "/tmp/roce-wizard-incast-$p.log", "/tmp/roce-wizard-incast-c$p.log"
        steps += [s for side, nd in _sides(nodes) for s in counter_steps(nodes, side, f"{key}.{nd.name}.before",
                                                                          f"before-{tag}")]
        steps.append(PairStep(f"{key}.servers", "receiver", (
            f"for p in {plist}; do nohup timeout {SERVER_TIMEOUT_S} {test} {args} -d {safe(b.dev or '')} "
            f"-x {b.gid_index} -p $p </dev/null >{slog} 2>&1 & done; i=0; while [ $i -lt 30 ] && ! grep -q "
            f"'Waiting for client' /tmp/roce-wizard-incast-{ports[-1]}.log; do sleep 0.1; i=$((i+1)); done")))
        steps.append(PairStep(f"{key}.clients", "sender", (
            f"for p in {plist}; do timeout {CLIENT_TIMEOUT_S} {test} {args} -d {safe(a.dev or '')} "
            f"-x {a.gid_index} -p $p {safe(b.ip or '', IPV4)} >{clog} 2>&1 & done; wait; "
            f"for p in {plist}; do echo \"### roce-wizard stream port $p\"; cat {clog}; rm -f {clog}; done"),
            timeout=CLIENT_TIMEOUT_S + INCAST_DURATION_S + 5))
        steps.append(PairStep(f"{key}.cleanup", "receiver", (
            f"pkill -f {shlex.quote(_server_pattern(test, ports))} && echo '# roce-wizard: stopped "
            f"leftover {test} servers'; for p in {plist}; do rm -f {slog}; done")))
        steps += [s for side, nd in _sides(nodes) for s in counter_steps(nodes, side, f"{key}.{nd.name}.after",
                                                                          f"after-{tag}")]
    return steps


def _incast_parser(nodes: PairNodes, policy: Policy, outputs: Outputs) -> dict[str, Any]:
    a, b = nodes.sender, nodes.receiver
    steps: list[dict[str, Any]] = []
    for size, n, key, _ in _incast_rounds(nodes, policy):
        streams = []
        for chunk in re.split(r"^### roce-wizard stream port \d+\s*$", outputs[f"{key}.clients"][1], flags=re.MULTILINE)[1:]:
            parsed = parse("perftest", chunk) or {}
            rows = [r for r in parsed.get("rows", []) if r.get("bw_avg_gbps") is not None]
            streams.append({"gbps": rows[-1]["bw_avg_gbps"] if rows else None,
                            "error": parsed.get("error") or (None if rows else "no result")})
        ok = [s["gbps"] for s in streams if s["gbps"] is not None]
        delta = {nd.name: counter_delta(read_counters(outputs, f"{key}.{nd.name}.before"),
                                        read_counters(outputs, f"{key}.{nd.name}.after")) for nd in (a, b)}
        steps.append({"streams": n, "size": size, "gbps": round(sum(ok), 2) if ok else None,
                      "per_stream": streams, "failed_streams": len(streams) - len(ok) + (n - len(streams)),
                      "leftover_killed": "stopped leftover" in outputs[f"{key}.cleanup"][1],
                      "receiver": delta[b.name], "sender": delta[a.name]})
    return {"validate_incast": {
        "receiver": b.name, "sender": a.name, "steps": steps,
        "pfc_visible": any(k.endswith("_pause") and k.startswith(("rx_prio", "tx_prio"))
                           for s in steps for k in s["receiver"])},
        "validate_traffic_incast": traffic("ib_write_bw incast", add_deltas(s["sender"] for s in steps),
                                           add_deltas(s["receiver"] for s in steps))}


# ---------------------------------------------------------------------------- the built-in pair probes

PAIR_PROBES: dict[str, PairProbe] = {p.name: p for p in (
    perftest_probe("perftest_bw", "bw", "ib_send_bw",
                   lambda policy: f"-a -F --report_gbits --tclass={perftest_tclass(policy)}", 0),
    perftest_probe("perftest_lat", "lat", "ib_send_lat", lambda policy: f"-a -F --tclass={perftest_tclass(policy)}", 1),
    PairProbe("mpi_osu", _mpi_command, _mpi_parser, parsers=("openmpi_ucx_log", "osu", "ethtool_stats"),
              why_not="a node has no RoCE IPv4"),
    PairProbe("mpi_env", lambda nodes, policy: [], _mpi_env_parser, node_probes=("ucx_config",)),
    PairProbe("incast", _incast_command, _incast_parser, parsers=("perftest", "ethtool_stats"),
              why_not="a node lacks an RDMA device, an IPv4 or a RoCE v2 GID"),
)}


def declared(pair_probes: Iterable[str | PairProbe]) -> list[PairProbe]:
    """A check's `pair_probes`: names of built-ins, or PairProbe objects of its own (unknown names left out)."""
    out = []
    for p in pair_probes:
        probe = p if isinstance(p, PairProbe) else PAIR_PROBES.get(p)
        if probe is not None:
            out.append(probe)
    return out
