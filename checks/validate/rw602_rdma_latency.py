"""RW602 rdma-latency — small-message RDMA latency between two nodes is low

What it checks
    `ib_send_lat -a -F --tclass=<class> -d <dev> -x <gid idx>` between the pair (server on the receiving node,
    started first under `timeout` on a port of its own; client on the sending node): `t_typical`
    at 2 bytes must be at most `max_small_msg_lat_us` (3.0 us). The whole table is kept. The class is
    `roce_dscp << 2 | 2` (106 for DSCP 26): the lossless priority's, not DSCP 0's.
    Source of the perftest syntax: the real binary, Debian 12 perftest 4.5+0.17-1 (`ib_write_bw -V`:
    6.06), `ib_send_lat --help`: "--tclass=<value>  Set the Traffic Class in GRH (if GRH is in use)" and "-T,
    --tos=<tos value>  Set <tos_value> to RDMA-CM QPs. available only with -R flag"; a GID-based QP given
    `-T` is refused (" TOS only valid for rdma_cm based QP and RawEth QP "). tests/oracle/ runs these
    lines through that binary.

Why it matters
    RDMA's point is latency: seed 000 measures 2.04 us through a switch, Sandia's MPI 1.3 us; TCP
    is 12-14 us. A few microseconds more on every small message means deep CPU C-states, a VM
    without latency sensitivity (RW306), interrupt moderation, or traffic taking a detour.

How to fix by hand
    Reproduce: receiver `ib_send_lat -a -F --tclass=106 -d mlx5_0 -x 3`, sender `ib_send_lat -a -F
    --tclass=106 -d mlx5_0 -x 3 <receiver RoCE IP>`. Then: `tuned-adm profile latency-performance` (or network-latency), BIOS
    power profile to performance (RW104), VM latency sensitivity high with reserved CPUs (RW306).
    Sources: `ib_send_lat …` — the real binary, Debian 12 perftest 4.5+0.17-1 (`ib_send_bw --help`: -a, -F, --report_gbits,
        --tclass, -d, -x, -p), corpus perftest/*; tests/oracle/ runs the generated lines through it;
        `tuned-adm profile latency-performance` / network-latency — Red Hat Enterprise Linux 7 Performance
        Tuning Guide, "Chapter 3. Tuned" (tuned-adm and its profiles), https://access.redhat.com/documentation/
        en-us/red_hat_enterprise_linux/7/html/performance_tuning_guide/chap-red_hat_enterprise_linux-
        performance_tuning_guide-tuned.

Fix safety
    manual: a measurement; the fix is a host/VM tuning decision.
"""

from roce_wizard.checklib.findings import bad, good, skip
from roce_wizard.checklib.pairs import cannot_measure, failed_run, no_result_yet, run_evidence
from roce_wizard.model import Check, Facts, Finding, Policy, Severity, Stage, TargetKind

CHECK = Check(
    code="RW602",
    slug="rdma-latency",
    title="RDMA small-message latency between nodes",
    stage=Stage.VALIDATE,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("perftest",),
    pair_probes=("perftest_lat",),
    depends_on=("RW402", "RW403", "RW407"),
    fix_hint="tune for latency: tuned latency-performance, BIOS performance profile, VM latency sensitivity high",
)


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    pair = facts.get("validate_pair") or {}
    blocked = cannot_measure(CHECK, facts, pair) if pair else None
    if blocked is not None:
        return [blocked]
    run = facts.get("validate_perftest")
    pt = facts.need("perftest") if not run else (run.get("parsed") or {"error": (run.get("client_output") or "").strip()[-200:]})
    if pt.get("test") and not str(pt["test"]).endswith("_lat"):
        return [skip(CHECK, facts, f"{pt['test']} is not a latency test", observed=pt.get("test"),
                     expected="ib_*_lat output")]
    rows = [r for r in pt.get("rows", []) if r.get("t_typical_us") is not None]
    if pt.get("error") or not rows:
        return [no_result_yet(CHECK, facts, pt, run) or failed_run(CHECK, facts, pt, run)]
    small = min(rows, key=lambda r: r.get("bytes") or 0)
    lat = small["t_typical_us"]
    table = {"columns": ["bytes", "t_typical [us]", "t_avg [us]", "99% [us]"],
             "rows": [[r.get("bytes"), r.get("t_typical_us"), r.get("t_avg_us"), r.get("p99_us")] for r in rows]}
    details = {"table": table, "t_typical_us": lat, "bytes": small.get("bytes"), "test": pt.get("test")}
    where = f" {pair.get('sender')} -> {pair.get('receiver')}" if pair else ""
    expected = f"t_typical <= {policy.max_small_msg_lat_us} us at {small.get('bytes')} B"
    if lat <= policy.max_small_msg_lat_us:
        return [good(CHECK, facts, f"{lat:.2f} us typical at {small.get('bytes')} B{where}", observed=lat,
                     expected=expected, evidence=run_evidence(run), details=details)]
    return [bad(CHECK, facts, f"{lat:.2f} us typical at {small.get('bytes')} B{where}, above "
                f"{policy.max_small_msg_lat_us} us", observed=lat, expected=expected, evidence=run_evidence(run),
                details=details,
                fix=("tune both nodes for latency: `tuned-adm profile latency-performance`; BIOS power profile "
                     "performance (RW104); in a VM latency sensitivity high with full CPU/memory reservation (RW306)"))]
