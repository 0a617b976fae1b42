"""The validate stage: measurements between two nodes (DOMAIN §3 `validate`, RW601-RW606).

The engine gathers and judges every target on its own; a measurement needs two sessions at once: a
perftest server on one node and its client on the other, an MPI job spanning both, N streams into
one node. After the per-target checks (and their root causes) are settled the engine hands this
module its runs; it pairs the nodes, measures, and gives each validate check a `Facts` of the pair
to judge with its pure `evaluate`.

- Pairs: consecutive guest (or bare-metal) nodes in inventory order, (1,2), (3,4)…, an odd last node
  paired with the one before it; or `policy.validate_pairs` ("a:b,c:d"). The first node of a pair
  sends (perftest clients, MPI rank 0), the second receives (perftest servers, the incast target):
  findings name the receiving node as their target and the pair as their subject.
- Both ends use the RDMA device and the RoCE v2 IPv4 GID index each node's own facts show (the
  facts RW402/RW407 judge); the client is given the server's RoCE IP.
- perftest servers start first, in the background under `timeout`, each on a port of its own
  (`-p`); the client runs under `timeout` too; after every measurement whatever server is left is
  killed (`pkill -f` on its exact command) and its log removed, whatever happened.
- Every command and its output goes into the run log as a raw record (unique command text per
  record, so `--replay` of the run answers each one), with a `probe` event like any probe.
- A validate finding that is not a pass is blocked by (and names) the root cause when something an
  earlier stage judged on either node, its ESXi host, its VM or its switch is broken.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from roce_wizard.checkkit import bad, skip
from roce_wizard.model import Check, Evidence, Facts, Finding, LoadedCheck, Policy, Stage, Status, Target, TargetKind
from roce_wizard.mpienv import parse_env
from roce_wizard.parsers import PARSERS, ParseError
from roce_wizard.probes import UnsafeValue, probe_order, rdma_device, safe
from roce_wizard.transports.base import Session, Transport, TransportError

if TYPE_CHECKING:
    from roce_wizard.engine import TargetRun
    from roce_wizard.records.runlog import RunLog

NODE_KINDS = (TargetKind.GUEST, TargetKind.LINUX)
# what a pair measurement needs to know of each node (the facts RW402/RW407 judge)
NODE_PROBES = ("ibv_devinfo", "rdma_link", "ibdev2netdev", "show_gids", "ip_json")
BASE_PORT = 18600  # perftest's default is 18515; ours stay clear of a user's own runs
PORTS_PER_PAIR = 40
SERVER_TIMEOUT_S = 60  # a server nobody connects to dies by itself
CLIENT_TIMEOUT_S = 60
MPI_TIMEOUT_S = 120
INCAST_SIZES = (65536, 1048576)
INCAST_DURATION_S = 5
_IP = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")

EventSink = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class Pair:
    sender: Target
    receiver: Target
    index: int

    @property
    def name(self) -> str:
        return f"{self.sender.name}<->{self.receiver.name}"

    @property
    def base_port(self) -> int:
        return BASE_PORT + PORTS_PER_PAIR * self.index


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


@dataclass
class Node:
    target: Target
    facts: Facts
    session: Session | None = None
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
                                  ("IPv4 address", node.ip, _IP)):
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


# ---------------------------------------------------------------------------- the MPI environment (RW604)


def mpi_environment(nodes: list[dict[str, Any]], policy: Policy) -> dict[str, dict[str, str]]:
    """Per node, the UCX variables that match the verified cluster (pure; RW604 prints them, RW603 runs
    with them): the RDMA device, the node's RoCE v2 GID index, the traffic class from the DSCP and the
    service level from the PFC priority. `nodes` are `Node.summary()` dicts. The class is perftest_tclass's
    (DSCP << 2 with ECT(0): 106 for DSCP 26, DOMAIN §7), the one NCCL_IB_TC gets too."""
    known_dev = next((n["device"] for n in nodes if n.get("device")), None)
    out: dict[str, dict[str, str]] = {}
    for n in nodes:
        env = {"UCX_NET_DEVICES": f"{n.get('device') or known_dev or 'mlx5_0'}:{n.get('port') or 1}"}
        if n.get("gid_index") is not None:
            env["UCX_IB_GID_INDEX"] = str(n["gid_index"])
        env["UCX_IB_TRAFFIC_CLASS"] = str(perftest_tclass(policy))  # DSCP << 2 | ECT(0), as perftest's class
        env["UCX_IB_SL"] = str(policy.pfc_priority)
        out[n["node"]] = env
    return out


def mpirun_line(hosts: list[str], envs: list[dict[str, str]], program: str = "./your_app", ranks: int = 1,
                extra: tuple[str, ...] = ()) -> str:
    """One mpirun line; MPMD (`:`) when the nodes need different values (a per-node GID index)."""
    quoted = [shlex.quote(h) for h in hosts]
    if all(e == envs[0] for e in envs):
        xs = " ".join(f"-x {shlex.quote(f'{k}={v}')}" for k, v in envs[0].items())
        return " ".join(p for p in ("mpirun", *extra, f"-np {ranks * len(hosts)}", f"--host {','.join(quoted)}",
                                     xs, program) if p)
    parts = []
    for host, env in zip(quoted, envs):
        xs = " ".join(f"-x {shlex.quote(f'{k}={v}')}" for k, v in env.items())
        parts.append(f"-np {ranks} --host {host} {xs} {program}")
    return " ".join(("mpirun", *extra, " : ".join(parts)))


# ---------------------------------------------------------------------------- running commands


@dataclass
class Runner:
    """Runs a command on a node and records it like a probe (raw record + `probe` event)."""

    runlog: RunLog | None
    emit: EventSink
    timeout: float | None
    records: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (command, output)

    async def run(self, node: Node, key: str, command: str, timeout: float | None = None) -> tuple[int | None, str]:
        assert node.session is not None
        started = time.monotonic()
        limit = max(timeout or 0, self.timeout or 0) or None
        result = await node.session.run(command, timeout=limit)
        record = result.to_dict()
        record["duration_s"] = round(time.monotonic() - started, 4)
        full_key = f"validate.{key}"
        if self.runlog is not None:
            self.runlog.raw(node.name, full_key, record)
        self.emit("probe", {"target": node.name, "probe": full_key, "command": command,
                            "exit_status": result.exit_status, "timed_out": result.timed_out,
                            "duration_s": record["duration_s"]})
        text = result.stdout + (result.stderr if result.stderr else "")
        self.records[f"{node.name}:{key}"] = (command, text)
        return (None if result.timed_out else result.exit_status), text


def _parse(kind: str, text: str) -> dict[str, Any] | None:
    try:
        return PARSERS[kind].parse(text)
    except ParseError:
        return None
    except Exception:  # a parser's own bug: unreadable like any odd output, never the end of the run
        return None


def perftest_tclass(policy: Policy) -> int:
    """perftest's `--tclass` for the RoCE DSCP: DSCP << 2 with ECT(0) in the ECN bits (106 for DSCP 26, DOMAIN
    §7). On a GID-based QP (`-x`) the class is `--tclass`; `-T/--tos` is refused there by the real perftest
    (" TOS only valid for rdma_cm based QP and RawEth QP "), and without either perftest sends DSCP 0 and
    measures the lossy priority. Source: Debian perftest 4.5+0.17-1 `ib_write_bw --help`
    ("--tclass=<value>  Set the Traffic Class in GRH (if GRH is in use)")."""
    return policy.roce_dscp << 2 | 2


def _server_pattern(test: str, ports: list[int]) -> str:
    """A `pkill -f` pattern for exactly our servers; `[i]b_…` so it never matches the shell running pkill."""
    alt = "|".join(str(p) for p in ports)
    return f"[{test[0]}]{test[1:]} .*-p ({alt})( |$)"


async def perftest(runner: Runner, server: Node, client: Node, test: str, args: str, port: int,
                   key: str) -> dict[str, Any]:
    """One perftest measurement: server backgrounded under timeout, client told the server's IP, then
    whatever server is left killed. Returns the outputs, the parsed client side and what was cleaned up."""
    log = f"/tmp/roce-wizard-{test}-{port}.log"
    s_args = f"{args} -d {safe(server.dev or '')} -x {server.gid_index} -p {port}"
    c_args = f"{args} -d {safe(client.dev or '')} -x {client.gid_index} -p {port}"
    start = (f"nohup timeout {SERVER_TIMEOUT_S} {test} {s_args} </dev/null >{log} 2>&1 & "
             f"i=0; while [ $i -lt 30 ] && ! grep -q 'Waiting for client' {log}; do sleep 0.1; i=$((i+1)); done; "
             f"cat {log}")
    client_cmd = f"timeout {CLIENT_TIMEOUT_S} {test} {c_args} {safe(server.ip or '', _IP)}"
    out: dict[str, Any] = {"test": test, "port": port, "server": server.name, "client": client.name,
                           "server_command": f"{server.name}: {test} {s_args}",
                           "client_command": f"{client.name}: {client_cmd}"}
    _, out["server_start"] = await runner.run(server, f"{key}.server", start)
    status, text = await runner.run(client, f"{key}.client", client_cmd, timeout=CLIENT_TIMEOUT_S + 5)
    out["client_output"], out["client_exit"] = text, status
    out["parsed"] = _parse("perftest", text)
    cleanup = (f"cat {log}; pkill -f {shlex.quote(_server_pattern(test, [port]))} "
               f"&& echo '# roce-wizard: stopped a leftover {test} server on port {port}'; rm -f {log}")
    _, out["server_output"] = await runner.run(server, f"{key}.cleanup", cleanup)
    out["leftover_killed"] = "stopped a leftover" in out["server_output"]
    return out


def _counters_command(node: Node, tag: str) -> str:
    """RDMA (port counters) and every netdev's byte counters, as `name value` lines; a unique first word
    per use so that a replay of the run answers each reading with its own output."""
    dev = safe(node.dev or "none")
    base = f"/sys/class/infiniband/{dev}/ports/{node.port}/counters"
    nets = [i.get("name") for i in (node.facts.get("ip_json") or {}).get("interfaces", [])
            if i.get("name") and i.get("name") != "lo"]
    nets = [safe(n) for n in nets if re.match(r"^[A-Za-z0-9_.:@-]{1,15}$", n)]
    net_loop = (f"for n in {' '.join(nets)}; do echo \"net.$n $(cat /sys/class/net/$n/statistics/tx_bytes "
                f"2>/dev/null || echo -) $(cat /sys/class/net/$n/statistics/rx_bytes 2>/dev/null || echo -)\"; done; "
                if nets else "")
    return (f": roce-wizard {tag}; for f in port_xmit_data port_rcv_data; do echo \"$f $(cat {base}/$f "
            f"2>/dev/null || echo -)\"; done; {net_loop}")


async def read_counters(runner: Runner, node: Node, key: str, tag: str) -> dict[str, Any]:
    """Counter snapshot: sysfs RDMA/netdev counters and `ethtool -S` of the RoCE netdev."""
    _, text = await runner.run(node, f"{key}.sysfs", _counters_command(node, tag))
    snap: dict[str, Any] = {"sysfs": parse_counter_lines(text)}
    if node.netdev:
        _, stats = await runner.run(node, f"{key}.ethtool",
                                    f": roce-wizard {tag}; ethtool -S {safe(node.netdev)}")
        parsed = _parse("ethtool_stats", stats)
        snap["ethtool"] = (parsed or {}).get("counters", {})
    return snap


def counter_delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, int]:
    """after - before for every counter read both times (sysfs names as is, ethtool ones too)."""
    out: dict[str, int] = {}
    for part in ("sysfs", "ethtool"):
        b, a = before.get(part) or {}, after.get(part) or {}
        for k, v in a.items():
            if k in b and isinstance(v, int) and isinstance(b[k], int):
                out[k] = v - b[k]
    return out


# ---------------------------------------------------------------------------- one pair


async def measure_pair(pair: Pair, a: Node, b: Node, codes: set[str], policy: Policy,
                       runner: Runner) -> dict[str, dict[str, Any]]:
    """Measure what the selected checks need; returns per check code the facts data it judges."""
    common = {"validate_pair": {"pair": pair.name, "sender": a.name, "receiver": b.name,
                                "nodes": [a.summary(), b.summary()],
                                "link_gbps": min((n.speed_gbps for n in (a, b) if n.speed_gbps), default=None)}}
    data: dict[str, dict[str, Any]] = {code: dict(common) for code in codes}
    measurable = not (a.problems or b.problems)
    port = pair.base_port
    if "RW601" in codes and measurable:
        data["RW601"]["validate_perftest"] = await perftest(
            runner, b, a, "ib_send_bw", f"-a -F --report_gbits --tclass={perftest_tclass(policy)}", port,
            f"p{pair.index}.bw")
        data["RW601"]["perftest"] = data["RW601"]["validate_perftest"]["parsed"]
    if "RW602" in codes and measurable:
        data["RW602"]["validate_perftest"] = await perftest(
            runner, b, a, "ib_send_lat", f"-a -F --tclass={perftest_tclass(policy)}", port + 1, f"p{pair.index}.lat")
        data["RW602"]["perftest"] = data["RW602"]["validate_perftest"]["parsed"]
    if "RW603" in codes or "RW604" in codes:
        envs = mpi_environment([a.summary(), b.summary()], policy)
        if "RW604" in codes:
            data["RW604"]["mpi_env"] = envs
            data["RW604"]["ucx_config"] = {n.name: (n.facts.get("ucx_config") or {}).get("config") for n in (a, b)}
        if "RW603" in codes and a.ip and b.ip:
            data["RW603"].update(await mpi_probe(pair, a, b, envs, policy, runner))
    if ("RW605" in codes or "RW606" in codes) and measurable:
        incast = await incast_probe(pair, a, b, policy, runner)
        for code in ("RW605", "RW606"):
            if code in codes:
                data[code]["validate_incast"] = incast
    return data


async def mpi_probe(pair: Pair, a: Node, b: Node, envs: dict[str, dict[str, str]], policy: Policy,
                    runner: Runner) -> dict[str, Any]:
    """RW603: a short 2-rank osu_latency read three ways (UCX's transports, counters, latency)."""
    override = parse_env(getattr(policy, "mpi_env", "") or "")
    run_envs = [{**envs[n.name], **override, "UCX_LOG_LEVEL": "info"} for n in (a, b)]
    extra = ("--allow-run-as-root",) if a.target.credentials.username == "root" else ()
    line = mpirun_line([safe(a.ip or "", _IP), safe(b.ip or "", _IP)], run_envs, "osu_latency", extra=extra)
    before = {n.name: await read_counters(runner, n, f"p{pair.index}.mpi.{n.name}.before", "before-mpi")
              for n in (a, b)}
    status, text = await runner.run(a, f"p{pair.index}.mpi.run", f"timeout {MPI_TIMEOUT_S} {line}",
                                    timeout=MPI_TIMEOUT_S + 5)
    after = {n.name: await read_counters(runner, n, f"p{pair.index}.mpi.{n.name}.after", "after-mpi")
             for n in (a, b)}
    parsed = _parse("openmpi_ucx_log", text)
    osu = (parsed or {}).get("osu") or _parse("osu", text)
    return {"validate_mpi": {"command": line, "exit_status": status, "output": text, "env": run_envs,
                             "override": override,
                             "deltas": {n: counter_delta(before[n], after[n]) for n in before}},
            "openmpi_ucx_log": parsed, "osu": osu}


def incast_steps(policy: Policy) -> list[int]:
    n = max(1, int(getattr(policy, "incast_streams", 4) or 4))
    steps, s = [], 1
    while s < n:
        steps.append(s)
        s *= 2
    return [*steps, n]


async def incast_probe(pair: Pair, a: Node, b: Node, policy: Policy, runner: Runner) -> dict[str, Any]:
    """RW605/RW606: 1..N `ib_write_bw -D 5 -s <size> --tclass=<class>` streams into the receiver at a few sizes, with
    both ends' counters around every step."""
    steps: list[dict[str, Any]] = []
    test = "ib_write_bw"
    for size in INCAST_SIZES:
        for n in incast_steps(policy):
            ports = [pair.base_port + 10 + i for i in range(n)]
            plist = " ".join(str(p) for p in ports)
            key = f"p{pair.index}.incast.{size}.{n}"
            tag = f"incast-{size}-{n}"
            before = {nd.name: await read_counters(runner, nd, f"{key}.{nd.name}.before", f"before-{tag}")
                      for nd in (a, b)}
            # on the RoCE DSCP (the class the lossless priority is for), not DSCP 0
            args = f"-D {INCAST_DURATION_S} -s {size} --tclass={perftest_tclass(policy)} --report_gbits"
            slog = "/tmp/roce-wizard-incast-$p.log"
            start = (f"for p in {plist}; do nohup timeout {SERVER_TIMEOUT_S} {test} {args} -d {safe(b.dev or '')} "
                     f"-x {b.gid_index} -p $p </dev/null >{slog} 2>&1 & done; i=0; while [ $i -lt 30 ] && ! grep -q "
                     f"'Waiting for client' /tmp/roce-wizard-incast-{ports[-1]}.log; do sleep 0.1; i=$((i+1)); done")
            await runner.run(b, f"{key}.servers", start)
            clog = "/tmp/roce-wizard-incast-c$p.log"
            clients = (f"for p in {plist}; do timeout {CLIENT_TIMEOUT_S} {test} {args} -d {safe(a.dev or '')} "
                       f"-x {a.gid_index} -p $p {safe(b.ip or '', _IP)} >{clog} 2>&1 & done; wait; "
                       f"for p in {plist}; do echo \"### roce-wizard stream port $p\"; cat {clog}; rm -f {clog}; done")
            _, text = await runner.run(a, f"{key}.clients", clients, timeout=CLIENT_TIMEOUT_S + INCAST_DURATION_S + 5)
            cleanup = (f"pkill -f {shlex.quote(_server_pattern(test, ports))} && echo '# roce-wizard: stopped "
                       f"leftover {test} servers'; for p in {plist}; do rm -f {slog}; done")
            _, left = await runner.run(b, f"{key}.cleanup", cleanup)
            after = {nd.name: await read_counters(runner, nd, f"{key}.{nd.name}.after", f"after-{tag}")
                     for nd in (a, b)}
            streams = []
            for chunk in re.split(r"^### roce-wizard stream port \d+\s*$", text, flags=re.M)[1:]:
                parsed = _parse("perftest", chunk) or {}
                rows = [r for r in parsed.get("rows", []) if r.get("bw_avg_gbps") is not None]
                streams.append({"gbps": rows[-1]["bw_avg_gbps"] if rows else None,
                                "error": parsed.get("error") or (None if rows else "no result")})
            ok = [s["gbps"] for s in streams if s["gbps"] is not None]
            steps.append({"streams": n, "size": size, "gbps": round(sum(ok), 2) if ok else None,
                          "per_stream": streams, "failed_streams": len(streams) - len(ok) + (n - len(streams)),
                          "leftover_killed": "stopped leftover" in left,
                          "receiver": counter_delta(before[b.name], after[b.name]),
                          "sender": counter_delta(before[a.name], after[a.name])})
    return {"receiver": b.name, "sender": a.name, "steps": steps,
            "pfc_visible": any(k.endswith("_pause") and k.startswith(("rx_prio", "tx_prio"))
                               for s in steps for k in s["receiver"])}


# ---------------------------------------------------------------------------- for the checks


def cannot_measure(check: Check, facts: Facts, pair: dict) -> Finding | None:
    """Both nodes need an RDMA device, an IPv4 and a RoCE v2 GID before anything can be measured."""
    problems = [f"{n['node']}: {p}" for n in pair.get("nodes", []) for p in n.get("problems", [])]
    if not problems:
        return None
    return bad(check, facts, f"cannot measure {pair.get('pair')}: " + "; ".join(problems),
               observed=problems, expected="an RDMA device, an IPv4 and a RoCE v2 GID on both nodes",
               evidence=[Evidence(probe="show_gids"), Evidence(probe="ibv_devinfo")],
               fix="fix the node first: RW402 (RDMA device), RW406 (RoCE IPv4), RW407 (RoCE v2 GID)")


def run_evidence(run: dict | None, probe: str = "perftest") -> list[Evidence]:
    """The client's and the server's command lines and their last lines, as evidence."""
    if not run:
        return [Evidence(probe=probe)]
    ev = []
    for side in ("client", "server"):
        text = (run.get(f"{side}_output") or "").strip().splitlines()
        ev.append(Evidence(probe=f"{probe}.{side}", command=run.get(f"{side}_command"),
                           excerpt="\n".join(text[-6:]) or None))
    return ev


def no_result_yet(check: Check, facts: Facts, pt: dict, run: dict | None) -> Finding | None:
    """A pasted perftest output (not a run of ours) that ends before its result table, with no error:
    the server still waiting for its client, or a paste cut short. Whether the test passed could not
    be told; calling it failed would be a guess."""
    if run is not None or pt.get("error") or pt.get("errors"):
        return None
    waiting = pt.get("side") == "server" and not pt.get("columns")
    why = ("the server's output ends while it waits for its client" if waiting
           else "the output ends before any result row")
    return skip(check, facts, f"could not tell: {pt.get('test') or 'perftest'} shows no result and no error ({why})",
                observed=pt.get("test"), expected="a result table")


def failed_run(check: Check, facts: Facts, pt: dict, run: dict | None) -> Finding:
    left = " (a leftover server was killed)" if run and run.get("leftover_killed") else ""
    return bad(check, facts, f"{pt.get('test') or (run or {}).get('test') or 'perftest'} failed: "
               f"{pt.get('error') or 'no result rows'}{left}",
               observed=pt.get("errors") or pt.get("error"), expected="a completed perftest run",
               evidence=run_evidence(run),
               fix=("check that both ends use their RoCE v2 IPv4 GID index (show_gids), that the receiver's RoCE IP "
                    "is reachable (ping), that no firewall blocks the perftest port, and that the ports are ACTIVE"))



# ---------------------------------------------------------------------------- the stage


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


def block_on_root_causes(findings: list[Finding], pairs: dict[str, Pair], runs: list[TargetRun],
                         checks: dict[str, LoadedCheck]) -> None:
    """A validate finding that is not a pass is blocked by what broke first: a failing finding of an
    earlier stage on the pair's nodes (their VM, host, switch; the receiver first), else a validate
    check it depends on that failed on the same pair (RW605 on RW601)."""
    targets = {r.target.name: r.target for r in runs}
    earlier = [f for r in runs for f in r.findings]
    rank = {Status.FAIL: 0, Status.ERROR: 1, Status.WARN: 2}
    own = {(f.check, f.subject): f for f in findings}
    for f in findings:
        if f.status not in (Status.FAIL, Status.ERROR, Status.WARN) or f.blocked_by is not None:
            continue  # a pass, or a skip that says n/a
        pair = pairs.get(f.subject or "")
        if pair is None:
            continue
        root = None
        for node in (pair.receiver, pair.sender):
            related = _related(node, targets)
            broken = sorted((g for g in earlier if g.target in related and g.status in rank),
                            key=lambda g: (rank[g.status], related.index(g.target)))
            if broken:
                root = _root_of(broken[0])
                break
        if root is None:
            for dep in checks[f.check].meta.depends_on if f.check in checks else ():
                upstream = own.get((dep, f.subject))
                if upstream is not None and upstream.status in (Status.FAIL, Status.ERROR):
                    root = _root_of(upstream)
                    break
        if root is not None and root != (f.check, f.target):
            f.details["unjudged"] = f"{f.status.value}: {f.summary}"
            f.status, f.blocked_by, f.fix = Status.SKIP, root, None
            f.summary = f"blocked by {root[0]} on {root[1]}"


async def run_validation(
    runs: list[TargetRun], checks: dict[str, LoadedCheck], by_kind: dict[TargetKind, Transport], policy: Policy,
    *, runlog: RunLog | None, emit: EventSink, command_timeout: float | None,
) -> list[Finding]:
    """The validate stage over the run's nodes; called by the engine after the per-target checks."""
    from roce_wizard.engine import _run_probe, evaluate_check  # noqa: PLC0415 (the engine imports us)

    selected = {code: c for code, c in checks.items() if c.meta.stage is Stage.VALIDATE}
    if not selected:
        return []
    by_name = {r.target.name: r for r in runs}
    pairs, why_none = choose_pairs([r.target for r in runs], policy)
    if not pairs:
        return [Finding(code, Status.SKIP, why_none or "no pairs", target="all targets") for code in selected]
    runner = Runner(runlog, emit, command_timeout)
    findings: list[Finding] = []
    for pair in pairs:
        nodes = []
        blocked = None
        for t in (pair.sender, pair.receiver):
            run = by_name[t.name]
            node = Node(t, run.facts)
            if not (run.facts.data.get("connection") or {}).get("ok"):
                blocked = ("RW001", t.name)
                nodes.append(node)
                continue
            try:
                node.session = await by_kind[t.kind].session(t)
                wanted = set(NODE_PROBES) | ({"ucx_config"} if "RW604" in selected else set())
                for probe in probe_order(wanted):
                    if t.kind in probe.kinds and probe.name not in run.facts.data and probe.name not in run.facts.failures:
                        await _run_probe(probe, t, node.session, run.facts, command_timeout, runlog, emit)
            except TransportError as exc:
                blocked = ("RW001", t.name)
                node.problems.append(f"unreachable: {exc.message}")
            described = describe_node(t, run.facts)
            described.session = node.session
            described.problems = node.problems + described.problems
            nodes.append(described)
        if blocked is not None:
            findings += [Finding(code, Status.SKIP, f"blocked by RW001 on {blocked[1]}", target=pair.receiver.name,
                                 subject=pair.name, blocked_by=blocked) for code in selected]
            continue
        a, b = nodes
        refused = [why for n in (a, b) if (why := unsafe_value(n))]
        if refused:  # a value read from a node that must not reach a shell: nothing is run for the pair
            findings += [Finding(code, Status.ERROR, f"could not run: {'; '.join(refused)}", target=pair.receiver.name,
                                 subject=pair.name, details={"pair": pair.name}) for code in selected]
            continue
        try:
            for n in (a, b):
                if n.dev:
                    _, rate = await runner.run(n, f"p{pair.index}.rate.{n.name}",
                                               f"cat /sys/class/infiniband/{safe(n.dev)}/ports/{n.port}/rate")
                    n.speed_gbps = parse_rate(rate)
            data = await measure_pair(pair, a, b, set(selected), policy, runner)
        except TransportError as exc:
            findings += [Finding(code, Status.ERROR, f"{pair.name}: the session went away: {exc.message}",
                                 target=pair.receiver.name, subject=pair.name) for code in selected]
            continue
        except UnsafeValue as exc:  # any other value refused on the way (belt and braces)
            findings += [Finding(code, Status.ERROR, f"could not run: {exc}", target=pair.receiver.name,
                                 subject=pair.name, details={"pair": pair.name}) for code in selected]
            continue
        for code, check in selected.items():
            facts = Facts(data=data[code], target=pair.receiver,
                          raw={k: v[1] for k, v in runner.records.items()},
                          commands={k: v[0] for k, v in runner.records.items()})
            for f in evaluate_check(check, facts, policy):
                f.subject = pair.name  # the target is the receiving node, unless the check named another
                f.details.setdefault("pair", pair.name)
                findings.append(f)
    block_on_root_causes(findings, {p.name: p for p in pairs}, runs, checks)
    return findings


__all__ = ["Node", "Pair", "cannot_measure", "failed_run", "run_evidence", "block_on_root_causes", "choose_pairs", "describe_node", "mpi_environment",
           "mpirun_line", "parse_env", "run_validation"]
