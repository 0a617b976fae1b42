"""RW610 nccl-uses-roce — a 2-node all_reduce_perf runs NCCL over NET/IB on the RoCE device, not NET/Socket

What it checks
    When NCCL and nccl-tests are on both nodes (`command -v all_reduce_perf`, `ldconfig -p | grep libnccl`),
    a 2-rank `all_reduce_perf -b 8 -e 128M -f 2 -g 1` launched with mpirun like RW603's run, with
    `NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET` and RW604's NCCL variables (NCCL_IB_HCA, NCCL_IB_TC,
    NCCL_SOCKET_IFNAME, NCCL_IB_GID_INDEX = the node's RoCE v2 IPv4 GID). Its log (kind nccl_log) says which
    network each rank used: `NET/IB : Using [0]<dev>:<port>/RoCE` / `Using network IB` / channels `via NET/IB/0`
    passes, with the bus bandwidth shown; `NET/Socket` on any node fails, naming that node; a run that fails
    (e.g. `ibv_modify_qp failed`) fails with its WARN lines. Without NCCL on a node: skip, saying so.

Why it matters
    NCCL falls back to TCP sockets without an error when it finds no usable RDMA device (libibverbs missing,
    NCCL_IB_HCA naming nothing, NCCL_IB_DISABLE=1 left in /etc/nccl.conf): jobs run 4-5x slower and nobody is
    told. MPI's own fallback (RW603) says nothing about NCCL's, which has its own transport selection.

How to fix by hand
    Run the printed mpirun line yourself and read `NET/IB` vs `NET/Socket` in its log. NET/Socket with
    `NCCL_IB_DISABLE set by environment to 1`: remove it (`/etc/nccl.conf`, the job's environment); with
    `NET/IB : No device found.`: NCCL_IB_HCA must name an active device (`=mlx5_0:1`, see RW604), libibverbs
    must be installed; `Failed to open libibverbs.so`: install rdma-core/libibverbs. A failed connect after
    NET/IB (`ibv_modify_qp … Network is unreachable`): the GID index (RW407) or the RoCE IP path.
    Sources: NCCL's log lines — real logs in tests/data/corpus/nccl_log/ (NVIDIA/nccl-tests issues #150, #185,
    #294; NVIDIA/nccl #428; a vendor manual run with NCCL_IB_DISABLE=1); the variables and /etc/nccl.conf —
    NVIDIA NCCL User Guide, "Environment Variables" (https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/
    env.html); all_reduce_perf's options -b/-e/-f/-g — NVIDIA/nccl-tests README; `ldconfig -p` — glibc ldconfig(8).

Fix safety
    manual: NCCL's configuration belongs to the site's job environment; the wizard prints what to set.
"""

from roce_wizard.checklib.findings import bad, good, skip
from roce_wizard.checklib.pairs import at_fault, cannot_measure
from roce_wizard.model import Check, Evidence, Facts, Finding, Policy, Severity, Stage, Status, TargetKind
from roce_wizard.probes.pairs_nccl import NCCL_ALLREDUCE

CHECK = Check(
    code="RW610",
    slug="nccl-uses-roce",
    title="NCCL runs over RoCE (NET/IB), not sockets",
    stage=Stage.VALIDATE,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("nccl_log",),
    pair_probes=(NCCL_ALLREDUCE,),
    depends_on=("RW402", "RW407"),
    fix_hint="NET/Socket: NCCL found no usable RDMA device — NCCL_IB_HCA, NCCL_IB_DISABLE, libibverbs",
)

EXPECTED = "NET/IB over the RoCE device on every rank"
FIX = ("make NCCL find the RoCE device: remove NCCL_IB_DISABLE=1 (/etc/nccl.conf or the job's environment), set "
       "NCCL_IB_HCA to an active device (=<dev>:<port>, RW604 prints it), install libibverbs; then run the "
       "printed mpirun line again")


def _busbw(log: dict) -> float | None:
    values = [v for v in (log.get("busbw_by_size") or {}).values() if isinstance(v, (int, float))]
    return max(values) if values else None


def _judge_log(facts: Facts, log: dict, run: dict | None, target: str | None) -> Finding:
    ev = [Evidence(probe="nccl_log", command=(run or {}).get("command"),
                   excerpt="\n".join(ln for ln in ((run or {}).get("output") or "").splitlines()
                                     if "NET/" in ln or "Using network" in ln or "WARN" in ln)[:1500] or None)]
    by_host = log.get("net_by_host") or {}
    socket = sorted(h for h, n in by_host.items() if n == "Socket") or (["all ranks"] if log.get("net") == "Socket" else [])
    busbw = _busbw(log)
    shown = f"busbw {busbw:.2f} GB/s" if busbw is not None else "no result table"
    if socket:
        f = bad(CHECK, facts, f"NCCL fell back to NET/Socket on {', '.join(socket)} ({shown}): TCP, not RoCE",
                observed={"net_by_host": by_host, "devices": log.get("devices")}, expected=EXPECTED, fix=FIX,
                evidence=ev)
        return at_fault(f, target if target and socket[0] != "all ranks" and target in socket else None)
    if log.get("failures") or (run and run.get("exit_status") not in (0, None)) or log.get("net") != "IB":
        what = "; ".join(log.get("failures") or log.get("warnings") or []) or (
            f"exit status {(run or {}).get('exit_status')}" if run else "the log names no network")
        return bad(CHECK, facts, f"all_reduce_perf did not complete over NET/IB: {what[:300]}",
                   observed={"net": log.get("net"), "warnings": log.get("warnings")}, expected=EXPECTED, fix=(
                       "NET/IB but no connection: check the GID index (RW407: NCCL_IB_GID_INDEX, the RoCE v2 IPv4 "
                       "GID) and the RoCE IP path between the nodes; " + FIX), evidence=ev)
    if log.get("link_layer") not in (None, "RoCE"):
        return bad(CHECK, facts, f"NCCL uses {', '.join(log.get('devices') or [])} with link layer "
                   f"{log.get('link_layer')}, not RoCE", observed=log.get("devices"), expected=EXPECTED, fix=FIX,
                   evidence=ev)
    return good(CHECK, facts, f"NCCL uses NET/IB on {', '.join(log.get('devices') or ['?'])}"
                f"{'/RoCE' if log.get('link_layer') == 'RoCE' else ''}: {shown}"
                + (f" (avg {log['avg_busbw_gbs']} GB/s)" if log.get("avg_busbw_gbs") is not None else ""),
                observed={"net": "IB", "devices": log.get("devices"), "busbw_gbs": busbw}, expected=EXPECTED,
                evidence=ev, details={"table": {"columns": ["bytes", "busbw GB/s"],
                                                "rows": [[k, v] for k, v in (log.get("busbw_by_size") or {}).items()]}})


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    pair = facts.get("validate_pair")
    if not pair:  # analyze: a pasted NCCL log
        return [_judge_log(facts, facts.need("nccl_log"), None, None)]
    blocked = cannot_measure(CHECK, facts, pair)
    if blocked is not None:
        return [blocked]
    run = facts.get("validate_nccl") or {}
    present = run.get("present") or {}
    missing = [f"{n}: {', '.join(k for k, ok in p.items() if not ok)}" for n, p in present.items()
               if not all(p.values())]
    if missing or not run.get("ran"):
        return [skip(CHECK, facts, "NCCL/nccl-tests not on both nodes, not measured (" + "; ".join(missing) + ")",
                     observed=present, expected="all_reduce_perf on PATH and libnccl in the linker cache on both nodes")]
    log = facts.get("nccl_log")
    if not log:
        f = Finding(CHECK.code, Status.ERROR, "all_reduce_perf printed no NCCL log the tool can read",
                    target=facts.target_name, observed=(run.get("output") or "")[-500:], expected=EXPECTED)
        return [f]
    nodes = [n["node"] for n in pair.get("nodes", [])]
    socket_hosts = [h for h, n in (log.get("net_by_host") or {}).items() if n == "Socket"]
    target = next((n for n in reversed(nodes) if n in socket_hosts), None)
    return [_judge_log(facts, log, run, target)]
