"""The `nccl_allreduce` pair probe (RW610): is NCCL with nccl-tests on both nodes, and which network does a
2-rank `all_reduce_perf` use.

Steps: on each node `command -v all_reduce_perf; ldconfig -p | grep libnccl` (nccl-tests' binary on PATH, the
NCCL library in the linker cache: glibc ldconfig(8) `-p` prints the cache), then on the sender, only when both
show up there, the run, launched the way RW603 launches osu_latency (roce_wizard/probes/pairs.py `_mpi_line`:
`mpirun [--allow-run-as-root] -np 2 --host <ipA>,<ipB> -x …`, MPMD when the nodes need different values):

    mpirun … -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET -x NCCL_IB_HCA==<dev>:<port> -x NCCL_IB_TC=<class>
        -x NCCL_SOCKET_IFNAME==<netdev> -x NCCL_IB_GID_INDEX=<RoCE v2 IPv4 index> all_reduce_perf -b 8 -e 128M -f 2 -g 1

The variables are RW604's (checklib/nccl.py; the GID index set explicitly: right for every NCCL version).
Read with the `nccl_log` parser. Pure like probes/pairs.py.
"""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.checklib.nccl import nccl_environment
from roce_wizard.checklib.pairs import mpi_environment, mpirun_line
from roce_wizard.model import Policy
from roce_wizard.mpienv import parse_env
from roce_wizard.probes.pairs import IPV4, Outputs, PairNodes, PairProbe, PairStep, parse
from roce_wizard.probes import safe

NCCL_TIMEOUT_S = 180
PRESENT = "command -v all_reduce_perf; ldconfig -p | grep libnccl"
PROGRAM = "all_reduce_perf -b 8 -e 128M -f 2 -g 1"


def run_line(nodes: PairNodes, policy: Policy) -> tuple[str, list[dict[str, str]]]:
    """The mpirun line of the run and each rank's NCCL environment."""
    a, b = nodes.sender, nodes.receiver
    summaries = [a.summary(), b.summary()]
    ucx = mpi_environment(summaries, policy)
    _, with_gid = nccl_environment([a.name, b.name], summaries, ucx)
    override = {k: v for k, v in parse_env(getattr(policy, "mpi_env", "") or "").items() if k.startswith("NCCL_")}
    envs = [{"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET", **with_gid[n.name], **override} for n in (a, b)]
    extra = ("--allow-run-as-root",) if a.target.credentials.username == "root" else ()
    line = mpirun_line([safe(a.ip or "", IPV4), safe(b.ip or "", IPV4)], envs, PROGRAM, extra=extra)
    return line, envs


def _command(nodes: PairNodes, policy: Policy) -> list[PairStep] | None:
    if not nodes.measurable:
        return None
    for n in (nodes.sender, nodes.receiver):
        safe(n.netdev or "")  # a netdev with shell characters never reaches NCCL_SOCKET_IFNAME
    line = run_line(nodes, policy)[0]
    guard = "command -v all_reduce_perf >/dev/null && ldconfig -p | grep -q libnccl"
    return [PairStep("nccl.present.sender", "sender", PRESENT), PairStep("nccl.present.receiver", "receiver", PRESENT),
            PairStep("nccl.run", "sender",
                     f"if {guard}; then timeout {NCCL_TIMEOUT_S} {line}; else echo '# roce-wizard: no NCCL here'; fi",
                     timeout=NCCL_TIMEOUT_S + 5)]


def _present(text: str) -> dict[str, bool]:
    return {"all_reduce_perf": bool(re.search(r"^\S*/all_reduce_perf\s*$", text, re.MULTILINE)),
            "libnccl": "libnccl.so" in text}


def _parser(nodes: PairNodes, policy: Policy, outputs: Outputs) -> dict[str, Any]:
    line, envs = run_line(nodes, policy)
    present = {n.name: _present(outputs[f"nccl.present.{side}"][1])
               for side, n in (("sender", nodes.sender), ("receiver", nodes.receiver))}
    status, text = outputs["nccl.run"]
    ran = all(all(p.values()) for p in present.values())
    return {"validate_nccl": {"present": present, "command": line, "env": envs, "exit_status": status,
                              "output": text if ran else None, "ran": ran},
            "nccl_log": parse("nccl_log", text) if ran else None}


NCCL_ALLREDUCE = PairProbe("nccl_allreduce", _command, _parser, parsers=("nccl_log",),
                           why_not="a node lacks an RDMA device, an IPv4 or a RoCE v2 GID")
