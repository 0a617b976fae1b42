"""Pure helpers for the validate checks (RW601-RW608): what a pair measurement is judged with.

The measurements themselves are pair probes (roce_wizard/probes/pairs.py) run by roce_wizard/engine/pairs.py;
a check reads their facts (`validate_pair`, `validate_perftest`, `validate_mpi`, `validate_incast`) and
uses these helpers to say why a pair could not be measured, what a run showed, and which UCX
environment and mpirun line match the verified cluster.
"""

from __future__ import annotations

import shlex
from typing import Any

from roce_wizard.checklib.findings import bad, skip
from roce_wizard.model import Check, Evidence, Facts, Finding, Policy


def perftest_tclass(policy: Policy) -> int:
    """perftest's `--tclass` for the RoCE DSCP: DSCP << 2 with ECT(0) in the ECN bits (106 for DSCP 26,
    UCX's RoCE v2 default). On a GID-based QP (`-x`) the class is `--tclass`; `-T/--tos` is refused there by the
    real perftest (" TOS only valid for rdma_cm based QP and RawEth QP "), and without either perftest sends DSCP 0 and
    measures the lossy priority. Source: Debian perftest 4.5+0.17-1 `ib_write_bw --help`
    ("--tclass=<value>  Set the Traffic Class in GRH (if GRH is in use)")."""
    return policy.roce_dscp << 2 | 2


# ---------------------------------------------------------------------------- the MPI environment (RW604)


def mpi_environment(nodes: list[dict[str, Any]], policy: Policy) -> dict[str, dict[str, str]]:
    """Per node, the UCX variables that match the verified cluster (pure; RW604 prints them, RW603 runs
    with them): the RDMA device, the node's RoCE v2 GID index, the traffic class from the DSCP and the
    service level from the PFC priority. `nodes` are `Node.summary()` dicts. The class is perftest_tclass's
    (DSCP << 2 with ECT(0): 106 for DSCP 26), the one NCCL_IB_TC gets too."""
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


# ---------------------------------------------------------------------------- findings about a pair


def cannot_measure(check: Check, facts: Facts, pair: dict) -> Finding | None:
    """Both nodes need an RDMA device, an IPv4 and a RoCE v2 GID before anything can be measured."""
    problems = [f"{n['node']}: {p}" for n in pair.get("nodes", []) for p in n.get("problems", [])]
    if not problems:
        return None
    f = bad(check, facts, f"cannot measure {pair.get('pair')}: " + "; ".join(problems),
            observed=problems, expected="an RDMA device, an IPv4 and a RoCE v2 GID on both nodes",
            evidence=[Evidence(probe="show_gids"), Evidence(probe="ibv_devinfo")],
            fix="fix the node first: RW402 (RDMA device), RW406 (RoCE IPv4), RW407 (RoCE v2 GID)")
    return at_fault(f, lacking(pair))  # the sender's missing GID is not the receiver's


def at_fault(f: Finding, node: str | None) -> Finding:
    """Report a pair finding on the node whose fault it is, when the check can tell (engine/pairs.py, rule 2: a
    sender's wrong traffic class is the sender's, a receiver that drops is the receiver's). None leaves the
    engine's default, the receiving node; the pair stays the finding's subject."""
    if node:
        f.target = node
    return f


def lacking(pair: dict) -> str | None:
    """The first node (in pair order: sender, receiver) that lacks an RDMA device, an IPv4 or a RoCE v2 GID."""
    return next((n["node"] for n in pair.get("nodes", []) if n.get("problems") and n.get("node")), None)


def slower_link(pair: dict) -> str | None:
    """The node whose link is slower than the other's (both rates read and differing): what caps a pair's
    bandwidth first. None when the rates agree or one is unknown."""
    speeds = [(n.get("speed_gbps"), n.get("node")) for n in pair.get("nodes", [])]
    if len(speeds) != 2 or not all(s for s, _ in speeds) or speeds[0][0] == speeds[1][0]:
        return None
    return min(speeds, key=lambda s: s[0])[1]


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
