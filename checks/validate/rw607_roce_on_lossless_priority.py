"""RW607 roce-on-lossless-priority — the measurements' RoCE bytes are counted on the lossless priority, both ways

What it checks
    Around every measurement of the pair (RW601's ib_send_bw, RW602's ib_send_lat, RW603's MPI run, RW605's
    incast) `ethtool -S <netdev>` on both nodes, before and after: the per-priority byte counters
    `tx_prio<p>_bytes` / `rx_prio<p>_bytes` against the RoCE bytes of the run (`tx_vport_rdma_unicast_bytes` /
    `rx_vport_rdma_unicast_bytes`). In BOTH directions — the sender's tx and the receiver's rx (the data),
    the receiver's tx and the sender's rx (latency pongs, the MPI replies) — at least 90% of the RoCE bytes
    must be counted on `pfc_priority`. A direction that moved less than 1 MiB of RoCE is not judged.
    The finding names the node whose fault it is: a sender whose packets leave on another priority (its
    traffic class, its DSCP→priority map), else the node that counted them arriving elsewhere (its port's
    mapping, or a switch that re-marked them on the way). A VF guest sees no per-priority counters (they
    belong to the port): n/a there, said in words — the switch port's per-priority counters are RW609's, and
    ESXi shows no per-priority byte counters of an nmlx5 uplink (`esxcli network nic dcb status get` shows
    PFC per priority as on/off rows, not counts: real capture tests/data/esxi_dcb_status/).
    Pasted (`analyze`): one `ethtool -S` since the driver loaded: priority p carried bytes, or everything sat
    on another priority (byteps #179: every byte on priority 0).

Why it matters
    PFC protects one priority. RoCE that lands on priority 0 — an application that set no traffic class
    (perftest without --tclass, an MPI/NCCL job without UCX_IB_TRAFFIC_CLASS/NCCL_IB_TC), a host or switch
    that maps the DSCP elsewhere, a switch that re-marks it — runs lossy although every setting looks right,
    and collapses under load (RW605). The counters are the only place that shows where it really went.

How to fix by hand
    Sender's tx on the wrong priority: give the application the RoCE class (`--tclass=<dscp<<2|2>` for
    perftest, UCX_IB_TRAFFIC_CLASS / NCCL_IB_TC, RW604; the device default tc/1/traffic_class, RW411) and
    check the host's trust and dscp2prio (`mlnx_qos -i <netdev>`, RW409). Receiver's rx elsewhere while the
    sender's tx was right: the path re-marked or re-mapped it — the switch's DSCP map and any rewrite/policy
    map on the port towards the receiver (`show running-config interfaces <port>`), RW503.
    Then re-run `roce-wizard doctor --stage validate`.
    Sources: counter names — the kernel's mlx5 counters.rst (Documentation/networking/device_drivers/ethernet/
    mellanox/mlx5/counters.rst: rx_prio[p]_bytes, tx_prio[p]_bytes, rx/tx_vport_rdma_unicast_bytes); real
    capture corpus ethtool_stats/byteps-179-prio-all-on-prio0.txt (github.com/bytedance/byteps/issues/179).
    Fix lines: `mlnx_qos -i <netdev>` — corpus mlnx_qos/* and NVIDIA's mlnx-tools (python/mlnx_qos); perftest
    `--tclass` — the Debian perftest binary's option parser (tests/oracle); EOS `show running-config interfaces
    <port>` — Arista EOS User Manual, "Switch Administration Commands" (show running-config interfaces);
    roce-wizard — this tool.

Fix safety
    manual: a measurement; the fixes belong to the host, guest and switch checks.
"""

from roce_wizard.checklib.findings import bad, good, skip
from roce_wizard.checklib.pairs import at_fault, cannot_measure
from roce_wizard.checklib.traffic import (
    MIN_BYTES,
    ON_PRIORITY,
    blame,
    by_priority,
    has_priorities,
    legs,
    runs,
    total,
)
from roce_wizard.model import Check, Evidence, Facts, Finding, Policy, Severity, Stage, TargetKind

CHECK = Check(
    code="RW607",
    slug="roce-on-lossless-priority",
    title="RoCE rides the lossless priority (both directions)",
    stage=Stage.VALIDATE,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("ethtool_stats",),
    pair_probes=("perftest_bw", "perftest_lat", "mpi_osu", "incast"),
    depends_on=("RW402", "RW403", "RW407"),
    fix_hint="give RoCE the lossless priority end to end: traffic class, trust and DSCP map on hosts and switches",
)


def _lossy(q: int, policy: Policy) -> str:
    return f"priority {q}" + (" (lossy: the class an application without a traffic class gets)" if q == 0 else "")


def _snapshot(facts: Facts, policy: Policy) -> list[Finding]:
    """analyze: one pasted `ethtool -S` (counters since the driver loaded; TCP/IP rides priority 0 too)."""
    c = facts.need("ethtool_stats").get("counters", {})
    p = policy.pfc_priority
    expected = f"RoCE bytes counted on priority {p}"
    if not has_priorities(c):
        return [skip(CHECK, facts, "no per-priority byte counters in this output (a VF shows none: read the port)",
                     observed=None, expected=expected)]
    seen = {q: by_priority(c, "rx")[q] + by_priority(c, "tx")[q] for q in range(8)}
    if seen[p]:
        return [good(CHECK, facts, f"priority {p} carried {seen[p]} bytes since the counters were reset",
                     observed=seen, expected=expected)]
    q = max(seen, key=lambda k: seen[k])
    if not seen[q]:
        return [skip(CHECK, facts, "no bytes counted on any priority yet", observed=seen, expected=expected)]
    return [bad(CHECK, facts, f"nothing was ever counted on priority {p}; {seen[q]} bytes on {_lossy(q, policy)}",
                observed=seen, expected=expected,
                fix=(f"RoCE is not classified to priority {p}: set the traffic class (RW411/RW604) and the trust/DSCP "
                     "map (RW409), then measure with `doctor --stage validate`"))]


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    pair = facts.get("validate_pair")
    if not pair:
        return _snapshot(facts, policy)
    blocked = cannot_measure(CHECK, facts, pair)
    if blocked is not None:
        return [blocked]
    p = policy.pfc_priority
    measured = runs(facts)
    sender, receiver = pair.get("sender"), pair.get("receiver")
    expected = f">= {ON_PRIORITY:.0%} of the RoCE bytes on priority {p}, both directions, on both nodes"
    s_all, r_all = total(measured, "sender"), total(measured, "receiver")
    blind = [n for n, d in ((sender, s_all), (receiver, r_all)) if not has_priorities(d)]
    if len(blind) == 2 or not measured:
        return [skip(CHECK, facts, f"n/a: {' and '.join(blind) or 'the pair'} show no per-priority counters (a VF: "
                     "they belong to the port; the switch port's per-priority counters are RW609's, and ESXi shows no "
                     "per-priority byte counts of an nmlx5 uplink)", observed=None, expected=expected)]
    rows, wrong, judged = [], [], 0
    for m in measured:
        for g in legs(sender, receiver, m.get("sender") or {}, m.get("receiver") or {}):
            rows.append([m["label"], g.node, g.direction, g.flow, g.roce, g.prio.get(p, 0),
                         g.landed(p), g.prio[g.landed(p)]])
    for g in legs(sender, receiver, s_all, r_all):
        if g.roce < MIN_BYTES:
            continue
        judged += 1
        if g.share(p) < ON_PRIORITY:
            wrong.append(g)
    details = {"table": {"columns": ["measurement", "node", "counted", "direction", "RoCE bytes", f"on priority {p}",
                                     "top other priority", "its bytes"], "rows": rows},
               "priority": p, "blind": blind}
    evidence = [Evidence(probe="ethtool_stats", command=f"ethtool -S <netdev> on {n} before/after each measurement")
                for n in (sender, receiver) if n not in blind]
    if wrong:
        at = blame(wrong)
        q = at.landed(p)
        whose = ("its packets left on the wrong priority: the traffic class it sends with, or its DSCP→priority map"
                 if at.direction == "tx" else
                 "they arrived on another priority: its port's DSCP map, or the switch re-marked them on the way")
        return [at_fault(bad(CHECK, facts, f"RoCE not on the lossless priority: {at.text(p)} — {_lossy(q, policy)}; "
                            f"{whose}", observed=[g.text(p) for g in wrong], expected=expected, details=details,
                            evidence=evidence,
                            fix=(f"on {at.node}: " + (
                                f"send with the RoCE class (perftest --tclass, UCX_IB_TRAFFIC_CLASS, NCCL_IB_TC: RW604; "
                                f"tc/1/traffic_class: RW411) and map its DSCP to priority {p} (mlnx_qos, RW409)"
                                if at.direction == "tx" else
                                f"map the RoCE DSCP to priority {p} (RW409/RW210) and look for a DSCP rewrite or "
                                "policy map on the switch port towards it (RW503)"))), at.node)]
    if not judged:
        return [skip(CHECK, facts, "too little RoCE traffic was counted to judge", observed=rows, expected=expected,
                     details=details)]
    fwd = [g for g in legs(sender, receiver, s_all, r_all) if g.roce >= MIN_BYTES]
    said = "; ".join(f"{g.node} {g.direction} {g.share(p):.0%}" for g in fwd)
    note = f" ({' and '.join(blind)}: no per-priority counters, not judged)" if blind else ""
    return [good(CHECK, facts, f"RoCE rides priority {p} both ways: {said}{note}", observed=[g.text(p) for g in fwd],
                 expected=expected, details=details, evidence=evidence)]
