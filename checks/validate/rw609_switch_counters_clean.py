"""RW609 switch-counters-clean — the measured nodes' switch ports: pauses only on the lossless priority, no drops on its queue

What it checks
    The switch ports the inventory cables the pair's nodes to (`roce.switch_ports`; for a VF guest its ESXi
    host's uplinks), read before the pair's first validate measurement and after its last (RW601-RW606 ran
    in between, the incast among them). Per port: no packet dropped on the queue of `pfc_priority` (the
    traffic class the switch checks RW502/RW507 make the RoCE DSCP land in), pause frames on that priority
    only. One finding per switch, named by the switch. What is read, per vendor:
    - Arista EOS: `show interfaces counters queue detail` — OutDropPkts per port and traffic class. Pause frames per
      priority are NOT read on EOS: no real capture of `show priority-flow-control counters` was found, so
      the tool does not know its format; the finding says so.
    - Cumulus NVUE: `nv show interface <swp> qos roce counters` — RoCE no-buffer discards (rx and tx) and the
      RoCE priority's pause packets (the view counts the RoCE priority only: pauses elsewhere are not seen).
    - SONiC: `show pfc counters` (pause frames per port and priority, rx and tx) and `show queue counters`
      (drops per unicast queue).
    - NVIDIA Onyx, Dell OS10: skip, saying that the vendor's counter view is not read yet (no real capture).
    PFC watchdog (storm) events: no vendor view of them with a real capture is parsed; not judged.

Why it matters
    The hosts' counters (RW606) see their own ports only. A switch can drop RoCE on the lossless queue (an
    egress queue or buffer profile that overflows before the pause takes effect) while both hosts look clean:
    every drop is a go-back-N retransmission, invisible in a short perftest, ruinous at scale. Pauses on
    another priority mean the switch classifies RoCE into another class than the one PFC protects.

How to fix by hand
    Read the counters yourself before and after a load (`show interfaces counters queue` on EOS, `nv show
    interface <swp> qos roce counters` on NVUE, `show pfc counters` / `show queue counters` on SONiC); drops
    on the lossless queue: the buffer profile of that queue and the ingress headroom (vendor QoS guide: EOS
    `priority-flow-control` headroom and `qos tx-queue` limits, NVUE `nv set qos roce` defaults); pauses on
    another priority: the switch's DSCP to traffic-class map and PFC priority (RW502, RW507).
    Sources: EOS `show interfaces counters queue [detail]` — real capture networktocode/ntc-templates
    (tests/data/corpus/eos_queue_counters/); NVUE `nv show interface <swp> qos roce counters` — Cumulus Linux
    5.14 User Guide, "RDMA over Converged Ethernet - RoCE", Verify RoCE Configuration
    (tests/data/corpus/cumulus_nv_show_qos_roce/); SONiC `show pfc counters` / `show queue counters` —
    sonic-utilities scripts/pfcstat and scripts/queuestat (tests/data/corpus/sonic_show_pfc/, README-issue15.md).

Fix safety
    manual: the counters point at the switch's buffer and QoS configuration, which the switch checks own.
"""

from roce_wizard.checklib.findings import bad, good, skip
from roce_wizard.checklib.pairs import cannot_measure
from roce_wizard.model import Check, Evidence, Facts, Finding, Policy, Severity, Stage, Status, TargetKind
from roce_wizard.probes.pairs_switch import SWITCH_COUNTERS

CHECK = Check(
    code="RW609",
    slug="switch-counters-clean",
    title="switch ports of the measured nodes: pauses only on the lossless priority, no drops on its queue",
    stage=Stage.VALIDATE,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=(),
    pair_probes=(SWITCH_COUNTERS,),
    depends_on=("RW402", "RW407", "RW605"),  # an incast that overflows the node's port (RW605) drops here too
    fix_hint="drops on the lossless queue: the switch's buffer profile / headroom; pauses elsewhere: its DSCP map",
)

FIX = ("drops on the lossless queue: give that queue and its ingress priority group the vendor's lossless "
       "buffer profile and headroom; pause frames on another priority: the switch's DSCP → traffic-class map "
       "and PFC priority (RW502, RW507)")


def _of(f: Finding, switch: str, evidence: list[Evidence]) -> Finding:
    f.target, f.evidence = switch, evidence
    return f


def _judge(facts: Facts, entry: dict, p: int) -> Finding:
    sw = entry["switch"]
    ev = [Evidence(probe=f"switch_counters.{sw}", command=c) for c in entry.get("commands") or []] or [
        Evidence(probe="switch_counters")]
    expected = f"no drops on the priority-{p} queue; pause frames on priority {p} only"
    if entry.get("not_read"):
        return _of(skip(CHECK, facts, f"{sw}: not read: {entry['not_read']}", observed=None, expected=expected), sw, ev)
    if entry.get("error"):
        return _of(Finding(CHECK.code, Status.ERROR, f"{sw}: could not read its counters: {entry['error']}",
                           target=sw, observed=None, expected=expected), sw, ev)
    ports = entry.get("ports") or {}
    problems, rows, moved, unknown, through = [], [], 0, [], 0
    for port, d in ports.items():
        if d.get("missing"):
            problems.append(f"{port} is not in the output")
            continue
        drops = d.get("drops") or {}
        pauses = d.get("pauses") or {}
        mine = drops.get(p)
        other_drops = {tc: n for tc, n in drops.items() if tc != p and n}
        own = pauses.get(p) or {}
        moved += sum(v or 0 for v in own.values())
        others = {q: v for q, v in pauses.items() if q != p and any(v.values())}
        enq = (d.get("enqueued") or {}).get(p, (d.get("counters") or {}).get("tx_roce_packets"))
        through += enq or 0
        rows.append([port, ", ".join((entry.get("cabled") or {}).get(port, [])), enq,
                     mine, (own.get("rx") if pauses else None), (own.get("tx") if pauses else None),
                     ", ".join(f"TC{tc} +{n}" for tc, n in sorted(other_drops.items())) or "-"])
        if mine is None:
            unknown.append(port)
        if mine:
            problems.append(f"{port} dropped {mine} packets on the priority-{p} queue")
        for q, v in sorted(others.items()):
            problems.append(f"{port} counted pause frames on priority {q} (rx +{v.get('rx') or 0}, tx +{v.get('tx') or 0})")
    details = {"table": {"columns": ["port", "node", f"sent TC{p}", f"drops TC{p}", f"rx pause p{p}", f"tx pause p{p}",
                                     "drops on other queues"], "rows": rows}}
    if problems:
        return _of(bad(CHECK, facts, f"{sw} during the validate measurements: " + "; ".join(problems),
                       observed=problems, expected=expected, fix=FIX, details=details), sw, ev)
    said = ", ".join(ports)
    if unknown:
        note_unknown = f" (the priority-{p} queue of {', '.join(unknown)} is not in the output: its drops are unknown)"
    else:
        note_unknown = ""
    if not entry.get("pauses_read"):
        note = (f"pause frames per priority not read ({entry.get('device_type')}: no real capture of "
                "`show priority-flow-control counters` is known to the tool)")
    elif entry.get("pauses_roce_only"):
        note = f"{moved} RoCE pause frames (the view counts the RoCE priority only)"
    else:
        note = f"{moved} pause frames on priority {p}, none on another"
    return _of(good(CHECK, facts, f"{sw} {said}: {through} packets out of the priority-{p} queue, 0 dropped{note_unknown}; {note}",
                    observed=rows, expected=expected, details=details), sw, ev)


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    pair = facts.get("validate_pair")
    if not pair:
        return [skip(CHECK, facts, "reads switch counters around a pair's measurements (doctor --stage validate)",
                     observed=None, expected="a validate run")]
    blocked = cannot_measure(CHECK, facts, pair)
    if blocked is not None:
        return [blocked]
    switches = (facts.get("validate_switch_counters") or {}).get("switches") or []
    if not switches:
        return [skip(CHECK, facts, f"no switch port is known for {pair.get('pair')}: the inventory cables neither "
                     "node (roce.switch_ports, or its ESXi host's)", observed=None, expected="a cabled switch port")]
    return [_judge(facts, entry, policy.pfc_priority) for entry in switches]
