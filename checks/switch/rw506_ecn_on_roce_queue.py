"""RW506 ecn-on-roce-queue — ECN marks the RoCE (lossless) queue on RoCE-facing ports

What it checks
    ECN marking is enabled on the egress queue of the lossless priority (`pfc_priority`, mapped to
    its traffic class) on each RoCE-facing port: EOS `show qos interfaces` (the ECN/WRED column:
    `L` queue-length ECN, `D` disabled); Onyx running config
    (`interface ethernet X traffic-class 3 congestion-control ecn …`); OS10 running config (a
    queuing policy with `random-detect ecn` on the queue's class, attached to the interface);
    Cumulus `nv show qos roce` (`congestion-mode ECN`, `enabled-tc`).

Why it matters
    DCQCN, the RoCE congestion control, reacts to ECN marks. Without them the only brake is PFC:
    congestion spreads backwards as pause storms and victim flows stall. It still works, slower
    and less robustly — a warning, not a failure.

How to fix by hand
    Rollback point first, a config session, save after the re-check:
        EOS:   interface Ethernet3 / tx-queue 3 /
               random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes
        Onyx:  interface ethernet 1/3 traffic-class 3 congestion-control ecn minimum-absolute 150
               maximum-absolute 1500
        OS10:  class-map type queuing roce-q3 / match queue 3
               policy-map type queuing roce-ecn / class roce-q3 / random-detect ecn
               interface ethernet1/1/3 / service-policy output type queuing roce-ecn
        NVUE:  nv set qos roce mode lossless   (PFC, ECN and trust in one) ; nv config apply

Fix safety
    safe: marking starts at once; no traffic is dropped by the change.
"""

from roce_wizard.checkkit import bad, good
from roce_wizard.model import (
    Check,
    Facts,
    Finding,
    FixPlan,
    Policy,
    Severity,
    Stage,
    TargetKind,
)
from roce_wizard.switchview import (
    Item,
    Selection,
    evidence_lines,
    failing_of,
    kinds,
    lossless_queue,
    peer_label,
    port_findings,
    switch_plan,
    vendor_fix,
    vendor_of,
)

CHECK = Check(
    code="RW506",
    slug="ecn-on-roce-queue",
    title="ECN on the RoCE queue",
    stage=Stage.SWITCH,
    target=TargetKind.SWITCH,
    severity=Severity.WARN,
    probes=(),
    optional_probes=kinds("ecn"),
    fix_hint="EOS: interface Ethernet3 / tx-queue 3 / random-detect ecn minimum-threshold 150 kbytes "
             "maximum-threshold 1500 kbytes",
)


def _fix(sel: Selection, item: Item, queue: int) -> str:
    v = sel.vendor
    if v == "eos":
        return vendor_fix(v, item.subject, [f"tx-queue {queue}",
                                            "   random-detect ecn minimum-threshold 150 kbytes maximum-threshold "
                                            "1500 kbytes"])
    if v == "onyx":
        return vendor_fix(v, item.subject, [f"traffic-class {queue} congestion-control ecn minimum-absolute 150 "
                                            "maximum-absolute 1500"])
    if v == "os10":
        glob = [f"class-map type queuing roce-q{queue}", f" match queue {queue}", "exit",
                "policy-map type queuing roce-ecn", f" class roce-q{queue}", "  random-detect ecn", " exit", "exit"]
        return vendor_fix(v, item.subject, ["service-policy output type queuing roce-ecn"], glob)
    if v == "nvue":
        return vendor_fix(v, None, global_lines=["nv set qos roce mode lossless"])
    return f"enable ECN marking on queue {queue}"


def _judge(facts: Facts, policy: Policy):
    def judge(item: Item, sel: Selection) -> Finding:
        e = item.entry or {}
        queue = lossless_queue(facts, sel.vendor, policy)
        have = sorted(set(e.get("ecn_queues") or []))
        label = f"{item.subject}{peer_label(item)}"
        ev = evidence_lines(facts.raw.get(sel.kind), item, r"ECN", r"random-detect", r"congestion-control",
                            r"enabled-tc", rf"^\s+{queue}\s")
        common = dict(observed=have, expected=f"ECN on queue {queue}", excerpt=ev, subject=item.subject,
                      probes=(sel.kind,))
        if queue in have:
            return good(CHECK, facts, f"{label}: ECN marks queue {queue} (priority {policy.pfc_priority})", **common)
        others = f" (ECN only on queue {','.join(map(str, have))})" if have else ""
        return bad(CHECK, facts, f"{label}: no ECN on queue {queue}, the RoCE priority's queue{others}: DCQCN gets "
                   "no congestion marks", fix=_fix(sel, item, queue), **common)

    return judge


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    return port_findings(CHECK, facts, "ecn", _judge(facts, policy))


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """One configuration change on this switch for every failing RoCE port (interface ranges), in a
    config session where the vendor has one, read back (ecn) and saved — or rolled back to the
    backup taken first."""
    findings = failing_of(evaluate, facts, policy)
    if not findings:
        return None
    return switch_plan(CHECK, facts, findings, "ecn", {"ecn_queue": lossless_queue(facts, vendor_of(facts) or "", policy)}, "ECN on the RoCE queue of the RoCE ports")
