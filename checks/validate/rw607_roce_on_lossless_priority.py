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
    mapping, or a switch that re-marked them on the way).
    A pair of VF guests sees no per-priority counters (they belong to the port), and ESXi shows no per-priority
    byte counters of an nmlx5 uplink (`esxcli network nic dcb status get` shows PFC per priority as on/off rows,
    not counts: real capture tests/data/esxi_dcb_status/). There it is judged THROUGH THE SWITCH, from the same
    readings RW609 takes (the `switch_counters` pair probe, before the first measurement and after the last):
    of the RoCE bytes each node counted arriving (its VF's `rx_vport_rdma_unicast_bytes`), at least 90% must have
    been queued on the lossless priority's queue of the switch port towards it (its ESXi host's uplink). Arista
    EOS: enqueued octets per traffic class, the priority's TC from `show qos maps` (not readable: not judged);
    SONiC: bytes per unicast queue UC<p>; Cumulus NVUE: the RoCE view's tx packets against the node's RoCE
    packets (what missed the RoCE queue is not shown, only missing). Traffic into a node on the wrong queue is
    the fault of the node that sent it: its traffic class, or the switch port it enters (trust, a policy map
    that re-marks). Onyx/OS10 (counter views not read), or no switch cabled: n/a, said in words.
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
    Through the switch (a VF pair): the sending node's traffic class as above, then the switch port it enters —
    `show running-config interfaces <port>` on EOS (`qos trust dscp`, no `service-policy` that sets DSCP/TC), the
    DSCP → TC map (`show qos maps`, RW502/RW507).
    Then re-run `roce-wizard doctor --stage validate`.
    Sources: counter names — the kernel's mlx5 counters.rst (Documentation/networking/device_drivers/ethernet/
    mellanox/mlx5/counters.rst: rx_prio[p]_bytes, tx_prio[p]_bytes, rx/tx_vport_rdma_unicast_bytes); real
    capture corpus ethtool_stats/byteps-179-prio-all-on-prio0.txt (github.com/bytedance/byteps/issues/179).
    Fix lines: `mlnx_qos -i <netdev>` — corpus mlnx_qos/* and NVIDIA's mlnx-tools (python/mlnx_qos); perftest
    `--tclass` — the Debian perftest binary's option parser (tests/oracle); EOS `show running-config interfaces
    <port>` — Arista EOS User Manual, "Switch Administration Commands" (show running-config interfaces);
    roce-wizard — this tool. Switch views: EOS `show interfaces counters queue detail` — real capture
    networktocode/ntc-templates (tests/data/corpus/eos_queue_counters/); EOS `show qos maps` and the default CoS →
    TC map — Arista EOS User Manual, "Quality of Service" (https://arista.com/um-eos/eos-quality-of-service, QoS Data
    Fields and Traffic Classes); NVUE `nv show interface <swp> qos roce counters` — Cumulus Linux 5.14 User Guide
    (tests/data/corpus/cumulus_nv_show_qos_roce/); SONiC `show queue counters` — sonic-utilities scripts/queuestat
    (tests/data/variants/switch/).

Fix safety
    manual: a measurement; the fixes belong to the host, guest and switch checks.
"""

from roce_wizard.checklib.findings import bad, good, skip
from roce_wizard.checklib.pairs import at_fault, cannot_measure
from roce_wizard.checklib.switch_traffic import Through, through_switch
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
from roce_wizard.probes.pairs_switch import SWITCH_COUNTERS

CHECK = Check(
    code="RW607",
    slug="roce-on-lossless-priority",
    title="RoCE rides the lossless priority (both directions)",
    stage=Stage.VALIDATE,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("ethtool_stats",),
    # the switch ports' counters: for a VF pair, the only place that shows the priority (RW609 reads the same)
    pair_probes=("perftest_bw", "perftest_lat", "mpi_osu", "incast", SWITCH_COUNTERS),
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
    if len(blind) == 2 and measured:
        return [_through_the_switch(facts, policy, sender, receiver, s_all, r_all)]
    if not measured:
        return [skip(CHECK, facts, "n/a: no measurement moved traffic", observed=None, expected=expected)]
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


# ---------------------------------------------------------------------------- a VF pair: through the switch


def _roce_in(delta: dict[str, int]) -> tuple[int | None, int | None]:
    """(bytes, packets) of RoCE a node counted arriving: its vport RDMA counters, else the RDMA port's (4-byte words)."""
    b = delta.get("rx_vport_rdma_unicast_bytes")
    if b is None and "port_rcv_data" in delta:
        b = delta["port_rcv_data"] * 4
    return b, delta.get("rx_vport_rdma_unicast_packets")


def _through_the_switch(facts: Facts, policy: Policy, sender: str, receiver: str, s_all: dict[str, int],
                        r_all: dict[str, int]) -> Finding:
    p = policy.pfc_priority
    data = facts.data
    legs = [through_switch(data, receiver, sender, *_roce_in(r_all), p),
            through_switch(data, sender, receiver, *_roce_in(s_all), p)]
    expected = (f">= {ON_PRIORITY:.0%} of the RoCE each node received queued on priority {p}'s queue of the switch "
                "port towards it (a VF pair: the VFs show no per-priority counters)")
    rows = [[g.node, g.source, ", ".join(g.ports) or "-", g.unit, g.roce, g.queue or "-", g.on_queue,
             (g.landed or ("-", 0))[0], (g.landed or ("-", 0))[1]] for g in legs]
    details = {"table": {"columns": ["into", "from", "switch ports towards it", "unit", "RoCE received",
                                     "lossless queue", "queued there", "top other queue", "its count"], "rows": rows},
               "priority": p, "through_switch": True}
    evidence = [Evidence(probe="switch_counters", command=c) for c in
                sorted({c for e in (data.get("validate_switch_counters") or {}).get("switches") or []
                        for c in e.get("commands") or []})]
    evidence += [Evidence(probe="ethtool_stats", command=f"ethtool -S <netdev> on {n} (its VF's vport RDMA counters)")
                 for n in (sender, receiver)]
    judged = [g for g in legs if g.not_read is None and (g.roce or 0) >= (MIN_BYTES if g.unit == "bytes" else 256)]
    wrong = [g for g in judged if g.share < ON_PRIORITY
             and (g.unit == "packets" or (g.landed and g.landed[1] >= (1 - ON_PRIORITY) * (g.roce or 0)))]
    if wrong:
        g = wrong[0]  # the data direction first: into the receiver, sent by the sender
        return at_fault(bad(CHECK, facts, _wrong_text(g, p), observed=[_said(x) for x in legs], expected=expected,
                            details=details, evidence=evidence,
                            fix=(f"on {g.source}: send with the RoCE class (UCX_IB_TRAFFIC_CLASS, NCCL_IB_TC, perftest "
                                 f"--tclass: RW604; tc/1/traffic_class: RW411); on the switch port it enters "
                                 f"({', '.join(g.entry_ports) or 'its ESXi host uplink'}): trust DSCP, no policy map "
                                 f"that re-marks, the RoCE DSCP mapped to priority {p} (RW502/RW503/RW507)")),
                        g.source)
    unread = [g for g in legs if g.not_read is not None]
    if not judged and not unread:
        # the switch was read but the data direction moved (almost) nothing: the measurements themselves failed
        # (RW601/RW605 say why); not an n/a — the engine names the root (a node's port down, no GID, ...)
        return bad(CHECK, facts, f"no RoCE reached {receiver} during the measurements ({legs[0].roce or 0} "
                   f"{legs[0].unit}): where it rides cannot be shown", observed=rows, expected=expected,
                   details=details, evidence=evidence, fix="make the measurements run first (RW601, RW605)")
    if not judged or len(unread) == 2:
        why = "; ".join(f"into {g.node}: {g.not_read}" for g in unread) or "too little RoCE was counted to judge"
        return skip(CHECK, facts, f"n/a: a VF pair ({sender}, {receiver}: per-priority counters belong to the port) "
                    f"and through the switch: {why}", observed=rows, expected=expected, details=details,
                    evidence=evidence)
    unseen = [g for g in judged if g.share < ON_PRIORITY]
    if unseen:
        g = unseen[0]
        return skip(CHECK, facts, f"not judged: the switch ports towards {g.node} ({', '.join(g.ports)}) queued only "
                    f"{g.on_queue} of the {g.roce} RoCE {g.unit} it received, on no queue more — its traffic "
                    "took another path than the inventory's cabling says", observed=rows, expected=expected,
                    details=details, evidence=evidence)
    notes = sorted({n for g in legs for n in g.notes})
    said = "; ".join(_said(g) for g in legs)
    return good(CHECK, facts, f"RoCE rode priority {p}'s queue through the switch both ways (a VF pair): {said}"
                + (f" ({'; '.join(notes)})" if notes else ""), observed=rows, expected=expected, details=details,
                evidence=evidence)


def _said(g: Through) -> str:
    if g.not_read is not None:
        return f"into {g.node}: not judged ({g.not_read})"
    return f"into {g.node} {g.share:.0%} on {g.queue} ({g.on_queue} of {g.roce} {g.unit}, {', '.join(g.ports)})"


def _wrong_text(g: Through, p: int) -> str:
    where = ", ".join(g.ports)
    if g.landed is None:  # NVUE: the RoCE view shows only what DID ride the RoCE queue
        return (f"RoCE from {g.source} missed the lossless queue through the switch: the port towards {g.node} "
                f"({where}) counted {g.on_queue} of the {g.roce} RoCE packets {g.node} received on {g.queue} — the "
                f"rest rode another priority (the view shows the RoCE priority only); {g.source}'s traffic class, "
                f"or the switch port it enters ({', '.join(g.entry_ports) or 'its uplink'}) classifies it elsewhere")
    q, n = g.landed
    return (f"RoCE from {g.source} crossed the switch on {q}, not {g.queue} (priority {p}): the port towards "
            f"{g.node} ({where}) queued {n} of the {g.roce} RoCE bytes {g.node} received on {q}, {g.on_queue} on "
            f"{g.queue} ({g.share:.0%}) — {g.source}'s traffic class, or the switch port it enters "
            f"({', '.join(g.entry_ports) or 'its uplink'}) re-marks or maps it elsewhere")
