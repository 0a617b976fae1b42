"""RW608 congestion-control-works — under incast, ECN marks, CNPs go back, the senders slow down, nothing drops

What it checks
    Around every incast step of RW605 (2..N streams into one node), before and after, on both nodes: the
    receiver's `np_ecn_marked_roce_packets` (packets that arrived ECN-marked by the switch) and `np_cnp_sent`
    (CNPs its notification point sent back), the sender's `rp_cnp_handled` (CNPs its reaction point acted on)
    from `/sys/class/infiniband/<dev>/ports/<port>/hw_counters/`, and `ethtool -S`'s pause counters
    (`rx_prio<p>_pause`/`tx_prio<p>_pause`), `rx_out_of_buffer` and `rx_discards_phy`. When a step congested
    the path (pause frames, receive-buffer pressure, or marks) the marks, the CNPs sent and the CNPs handled
    must all have moved, and the port must have dropped nothing. Congestion with a counter that stayed still
    fails naming that counter and the node whose fault it is: no marks — the switch queue towards the
    receiver (no ECN there, or a marking threshold above the PFC XOFF point); marks but no CNPs — the
    receiver's notification point (`roce_np`); CNPs but none handled — the sender's reaction point
    (`roce_rp`). No congestion at all: not judged (skip, with the numbers). A VF shows no pause counters
    and drop counters (they belong to the port): whether the incast congested cannot be told there, so a VF
    pair is n/a, with the marks and CNPs it does show reported in words.

Why it matters
    PFC alone keeps RoCE lossless by stopping the whole priority, which spreads congestion (head-of-line
    blocking, pause storms). DCQCN is what makes senders slow down before that: the switch marks, the
    receiver answers with CNPs, the sender reduces its rate. When any one of the three is missing, nothing
    complains — throughput looks fine on two nodes and the fabric melts at scale.

How to fix by hand
    No marks: ECN on the RoCE queue of the switch port towards the receiver with thresholds below its PFC
    XOFF point (EOS `random-detect ecn minimum-threshold … maximum-threshold …` under the tx-queue; RW506).
    No CNPs sent: `echo 1 > /sys/class/net/<if>/ecn/roce_np/enable/<p>` on the receiver (RW413). No CNPs
    handled: `echo 1 > /sys/class/net/<if>/ecn/roce_rp/enable/<p>` on the sender (RW413). Drops: PFC headroom
    (RW605/RW606).
    Sources: the counter names — the kernel's mlx5 RDMA counters (drivers/infiniband/hw/mlx5/counters.c:
    np_ecn_marked_roce_packets, np_cnp_sent, rp_cnp_handled, out_of_buffer; documented in NVIDIA's "Understanding
    mlx5 Linux Counters and Status Parameters") and real captures corpus hw_counters/* (gpud #943, the
    np_cnp_sent glob); ethtool names — the kernel's mlx5 counters.rst; DCQCN's notification/reaction
    points — NVIDIA MLNX_OFED Documentation, "Explicit Congestion Notification (ECN)".
    Fix lines: EOS `random-detect ecn minimum-threshold … maximum-threshold …` — Arista EOS User Manual,
    "Quality of Service", ECN configuration (as RW506 cites); `echo 1 > /sys/class/net/<if>/ecn/roce_np|roce_rp/enable/<p>` —
    NVIDIA MLNX_OFED Documentation, "Explicit Congestion Notification (ECN)"
    (https://docs.nvidia.com/networking/display/MLNXOFEDv497100LTS/Explicit+Congestion+Notification+(ECN)), as RW413.

Fix safety
    manual: a measurement; the fixes belong to the host (RW413) and switch (RW506) checks.
"""

from roce_wizard.checklib.findings import bad, good, skip
from roce_wizard.checklib.pairs import at_fault, cannot_measure
from roce_wizard.checklib.traffic import COLUMNS, congestion
from roce_wizard.model import Check, Evidence, Facts, Finding, Policy, Severity, Stage, TargetKind

CHECK = Check(
    code="RW608",
    slug="congestion-control-works",
    title="Congestion control acts under incast (ECN, CNPs)",
    stage=Stage.VALIDATE,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("hw_counters",),
    pair_probes=("incast",),
    depends_on=("RW402", "RW403", "RW407", "RW605", "RW606", "RW607"),
    fix_hint="ECN on the switch's RoCE queue below PFC XOFF; DCQCN NP on receivers and RP on senders",
)


def _snapshot(facts: Facts, policy: Policy) -> list[Finding]:
    """analyze: pasted hw_counters (since the driver loaded): have marks, CNPs, handled CNPs ever moved?"""
    c = (facts.need("hw_counters") or {}).get("counters", {})
    names = ("np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_handled")
    seen = {k: c[k] for k in names if k in c}
    expected = "under congestion: ECN marks, CNPs sent, CNPs handled"
    if not seen:
        return [skip(CHECK, facts, "no congestion counters in this output", observed=None, expected=expected)]
    return [skip(CHECK, facts, "counters since the driver loaded: " + ", ".join(f"{k}={v}" for k, v in seen.items())
                 + " — whether they should have moved needs a load (doctor --stage validate)", observed=seen,
                 expected=expected)]


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    pair = facts.get("validate_pair")
    if not pair:
        return _snapshot(facts, policy)
    blocked = cannot_measure(CHECK, facts, pair)
    if blocked is not None:
        return [blocked]
    incast = facts.get("validate_incast") or {}
    p = policy.pfc_priority
    sender, receiver = incast.get("sender") or pair.get("sender"), incast.get("receiver") or pair.get("receiver")
    steps = [s for s in incast.get("steps", []) if s.get("streams", 0) > 1]
    rows, congested = [], []
    for s in steps:
        c = congestion(s, p)
        rows.append([s["size"], s["streams"], *c.row()])
        if c.happened:
            congested.append((s, c))
    details = {"table": {"columns": ["bytes", "streams", *COLUMNS], "rows": rows}, "priority": p}
    expected = "when the incast congests: ECN marks, CNPs sent and handled all move; zero rx_discards_phy"
    evidence = [Evidence(probe="hw_counters", command=f"cat /sys/class/infiniband/<dev>/ports/1/hw_counters/… on "
                         f"{receiver} and {sender} around each incast step"),
                Evidence(probe="ethtool_stats", command=f"ethtool -S <netdev> on {receiver} and {sender}")]
    if not steps:
        return [skip(CHECK, facts, "no incast with more than one stream was run", observed=None, expected=expected)]
    if not incast.get("pfc_visible"):
        # a VF: the pause and drop counters belong to the port (the PF), so whether the incast congested — and so
        # whether marks were due — cannot be told here; what the VF shows is reported, not judged
        seen = congested[-1][1] if congested else congestion(steps[-1], p)
        return [skip(CHECK, facts, f"n/a: {receiver} shows no per-priority pause counters (a VF: they belong to "
                     f"the port; or PFC is off on every priority), so congestion cannot be told; seen: ECN marked +{seen.marked}, CNPs sent "
                     f"+{seen.cnp_sent}, handled +{seen.cnp_handled} (read them with the port's counters on the PF)",
                     observed=rows, expected=expected, details=details, evidence=evidence)]
    if not congested:
        return [skip(CHECK, facts, f"not judged: the incast into {receiver} showed no congestion (no pause frames, "
                     "no buffer pressure, no ECN marks visible)", observed=rows, expected=expected, details=details,
                     evidence=evidence)]
    s, c = congested[-1]  # the heaviest congested step
    where = f"({s['streams']} streams, {s['size']} B)"
    if c.marked is None or c.cnp_sent is None or c.cnp_handled is None:
        missing = [n for n, v in (("np_ecn_marked_roce_packets", c.marked), ("np_cnp_sent", c.cnp_sent),
                                  ("rp_cnp_handled", c.cnp_handled)) if v is None]
        return [skip(CHECK, facts, f"the incast congested {where} but {', '.join(missing)} could not be read "
                     "(no hw_counters: a VF or a driver without congestion counters; read them on the PF)",
                     observed=rows, expected=expected, details=details, evidence=evidence)]
    pressure = f"{c.pauses} pause frames, rx_out_of_buffer +{c.out_of_buffer}"
    still = None
    if not c.marked:
        still = (receiver,
                 (f"np_ecn_marked_roce_packets stayed at +0 on {receiver} under congestion {where} ({pressure}): "
                  f"the switch queue towards {receiver} marks nothing (no ECN on priority {p}'s queue, or its "
                  "threshold sits above the PFC XOFF point)"),
                 f"ECN on the RoCE queue of the switch port towards {receiver}, thresholds below XOFF (RW506)")
    elif not c.cnp_sent:
        still = (receiver,
                 (f"np_cnp_sent stayed at +0 on {receiver} though {c.marked} packets arrived ECN-marked {where}: "
                  "its notification point is off"),
                 f"echo 1 > /sys/class/net/<if>/ecn/roce_np/enable/{p} on {receiver} (RW413)")
    elif not c.cnp_handled:
        still = (sender,
                 (f"rp_cnp_handled stayed at +0 on {sender} though {receiver} sent {c.cnp_sent} CNPs {where}: "
                  "its reaction point is off (it never slows down)"),
                 f"echo 1 > /sys/class/net/<if>/ecn/roce_rp/enable/{p} on {sender} (RW413)")
    elif any(cc.discards for _, cc in congested):
        worst = max(cc.discards for _, cc in congested)
        still = (receiver, f"{receiver} dropped under incast: rx_discards_phy +{worst} although ECN and CNPs moved",
                 "PFC headroom on the switch port and the host (RW605/RW606)")
    if still is not None:
        node, summary, fix = still
        return [at_fault(bad(CHECK, facts, summary, observed=rows, expected=expected, details=details,
                            evidence=evidence, fix=fix), node)]
    return [good(CHECK, facts, f"under incast {where}: {c.marked} ECN-marked packets on {receiver}, {c.cnp_sent} "
                 f"CNPs sent, {c.cnp_handled} handled by {sender}, {c.pauses_p} pauses on priority {p}, no drops",
                 observed=rows, expected=expected, details=details, evidence=evidence)]
