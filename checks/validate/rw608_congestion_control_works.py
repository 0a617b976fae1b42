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
    (`roce_rp`). No congestion at all: not judged (skip, with the numbers).
    A VF shows no pause and drop counters (they belong to the port). A VF pair is judged through the switch
    ports towards the two nodes, from the readings RW609 takes (the `switch_counters` pair probe): Cumulus
    NVUE's RoCE counters show the RoCE priority's pause packets and the ECN-marked packets out of the port
    towards the receiver; SONiC's `show pfc counters` show the pauses (its `show queue counters` has no ECN
    column: marks come from the receiver's hw_counters then). Congestion (pauses or marks on the switch) with no
    mark fails on the receiver; marks with CNPs that did not move fail as on bare metal, when the VF shows its
    congestion hw_counters (the kernel lists np_*/rp_* only when the firmware grants the function
    `cc_query_allowed`: drivers/infiniband/hw/mlx5/counters.c; no real capture of a VF's list was found, so
    they are read when present and their absence is said). Arista EOS: its queue counters have no ECN column
    and its PFC counters are not read, so congestion cannot be told there: n/a with what the VF shows.

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
    points — NVIDIA MLNX_OFED Documentation, "Explicit Congestion Notification (ECN)". Switch views: NVUE
    `nv show interface <swp> qos roce counters` (tx-ecn-stats ecn-marked-packets, pfc-stats pause-packets) —
    Cumulus Linux 5.14 User Guide (tests/data/corpus/cumulus_nv_show_qos_roce/); SONiC `show pfc counters` —
    sonic-utilities scripts/pfcstat (tests/data/corpus/sonic_show_pfc/); EOS `show interfaces counters queue
    detail` (no ECN column) — real capture networktocode/ntc-templates (tests/data/corpus/eos_queue_counters/).
    Fix lines: EOS `random-detect ecn minimum-threshold … maximum-threshold …` — Arista EOS User Manual,
    "Quality of Service", ECN configuration (as RW506 cites); `echo 1 > /sys/class/net/<if>/ecn/roce_np|roce_rp/enable/<p>` —
    NVIDIA MLNX_OFED Documentation, "Explicit Congestion Notification (ECN)"
    (https://docs.nvidia.com/networking/display/MLNXOFEDv497100LTS/Explicit+Congestion+Notification+(ECN)), as RW413.

Fix safety
    manual: a measurement; the fixes belong to the host (RW413) and switch (RW506) checks.
"""

from roce_wizard.checklib.findings import bad, good, skip
from roce_wizard.checklib.pairs import at_fault, cannot_measure
from roce_wizard.checklib.switch_traffic import switch_congestion
from roce_wizard.checklib.traffic import COLUMNS, Congestion, congestion
from roce_wizard.model import Check, Evidence, Facts, Finding, Policy, Severity, Stage, TargetKind
from roce_wizard.probes.pairs_switch import SWITCH_COUNTERS

CHECK = Check(
    code="RW608",
    slug="congestion-control-works",
    title="Congestion control acts under incast (ECN, CNPs)",
    stage=Stage.VALIDATE,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("hw_counters",),
    pair_probes=("incast", SWITCH_COUNTERS),  # the switch's pauses and ECN marks: what a VF pair cannot see
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
        # a VF: the pause and drop counters belong to the port (the PF): the switch ports tell congestion
        return [_through_the_switch(facts, policy, steps, sender, receiver, rows, details, evidence)]
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


def _through_the_switch(facts: Facts, policy: Policy, steps: list[dict], sender: str, receiver: str, rows: list,
                        details: dict, evidence: list[Evidence]) -> Finding:
    """A VF pair: congestion and marks from the switch ports towards the nodes, CNPs from the VFs' hw_counters."""
    p = policy.pfc_priority
    sw = switch_congestion(facts.data, receiver, sender, p)
    host = [congestion(s, p) for s in steps]
    marked_host = None if any(c.marked is None for c in host) else sum(c.marked or 0 for c in host)
    sent = None if any(c.cnp_sent is None for c in host) else sum(c.cnp_sent or 0 for c in host)
    handled = None if any(c.cnp_handled is None for c in host) else sum(c.cnp_handled or 0 for c in host)
    seen = host[-1] if host else Congestion(0, 0, 0, 0, None, None, None)
    expected = ("a VF pair, through the switch: when the switch ports saw congestion (pauses, marks), ECN marks "
                "towards the receiver, CNPs sent and handled")
    details = {**details, "switch": {"pauses": sw.pauses, "ecn_marked": sw.marked, "read_on": sw.seen_on,
                                     "not_read": sw.not_read}}
    evidence = [*evidence, *(Evidence(probe="switch_counters", command=c) for c in
                             sorted({c for e in (facts.get("validate_switch_counters") or {}).get("switches") or []
                                     for c in e.get("commands") or []}))]
    vf = (f"seen on the VFs: ECN marked +{seen.marked}, CNPs sent +{seen.cnp_sent}, handled +{seen.cnp_handled}"
          + ("" if sent is not None else " (no congestion hw_counters on the VF)"))
    if not sw.seen_on:
        why = "; ".join(sw.not_read) or "no switch port towards the pair is known (roce.switch_ports)"
        return skip(CHECK, facts, f"n/a: {receiver} is a VF (no per-priority pause counters: they belong to the port) "
                    f"and congestion cannot be told on the switch: {why}; {vf}", observed=rows, expected=expected,
                    details=details, evidence=evidence)
    marks, where_marks = ((sw.marked, "on the switch") if sw.marked is not None else (marked_host, f"on {receiver}"))
    congested = bool(sw.pauses) or bool(marks)
    on = ", ".join(sw.seen_on)
    said = (f"{on}: {sw.pauses if sw.pauses is not None else 'unread'} pause frames on priority {p}, ECN-marked "
            f"{sw.marked if sw.marked is not None else 'not shown by the switch'}")
    if not congested:
        return skip(CHECK, facts, f"not judged: the switch ports of {sender} and {receiver} saw no congestion during "
                    f"the incast ({said})", observed=rows, expected=expected, details=details, evidence=evidence)
    if marks is None:
        return skip(CHECK, facts, f"the incast congested ({said}) but no ECN marks can be read: the switch view has no "
                    f"ECN column and {receiver}'s VF shows no np_ecn_marked_roce_packets", observed=rows,
                    expected=expected, details=details, evidence=evidence)
    if not marks:
        return at_fault(bad(CHECK, facts, f"no ECN mark {where_marks} although the incast congested the switch ({said}): "
                            f"the switch queue towards {receiver} marks nothing (no ECN on priority {p}'s queue, or "
                            "its threshold sits above the PFC XOFF point)", observed=rows, expected=expected,
                            details=details, evidence=evidence,
                            fix=f"ECN on the RoCE queue of the switch port towards {receiver}, thresholds below XOFF (RW506)"),
                        receiver)
    if sent is None or handled is None:
        return skip(CHECK, facts, f"ECN marks {where_marks}: +{marks} under congestion ({said}); whether CNPs went "
                    f"back cannot be told: {vf}", observed=rows, expected=expected, details=details, evidence=evidence)
    if not sent:
        return at_fault(bad(CHECK, facts, f"np_cnp_sent stayed at +0 on {receiver} though {marks} packets were ECN-marked "
                            f"{where_marks}: its notification point is off", observed=rows, expected=expected,
                            details=details, evidence=evidence,
                            fix=f"DCQCN's notification point on priority {p} for {receiver}'s VF (RW413)"), receiver)
    if not handled:
        return at_fault(bad(CHECK, facts, f"rp_cnp_handled stayed at +0 on {sender} though {receiver} sent {sent} CNPs: "
                            "its reaction point is off (it never slows down)", observed=rows, expected=expected,
                            details=details, evidence=evidence,
                            fix=f"DCQCN's reaction point on priority {p} for {sender}'s VF (RW413)"), sender)
    return good(CHECK, facts, f"under incast, through the switch ({said}): {marks} ECN-marked packets {where_marks}, "
                f"{sent} CNPs sent by {receiver}, {handled} handled by {sender}", observed=rows, expected=expected,
                details=details, evidence=evidence)
