"""RW605 incast-holds — many streams into one node do not collapse its throughput

What it checks
    Sandia's incast (seed 001 appendix): streams 1..N of `ib_write_bw -D 5 -s <size> --tclass=<class>
    --report_gbits -d <dev> -x <gid idx>` from the sending
    node into the receiving node at once (N servers on their own ports on the receiver, started
    first under `timeout`, then N clients), at a few message sizes (64 KiB, 1 MiB). Per step the
    aggregate throughput is kept (details "incast", "table"). With N streams the aggregate at each
    size must stay at least 80% of what one stream reached: a lossless fabric shares the link, a
    lossy one collapses (drops, go-back-N retransmissions). The class is `roce_dscp << 2 | 2` (106 for
    DSCP 26): an incast on DSCP 0 lands on the lossy priority 0 and collapses on a healthy fabric.
    Source of the perftest syntax: the real binary, Debian 12 perftest 4.5+0.17-1 (`ib_write_bw -V`:
    6.06), `ib_write_bw --help`: "--tclass=<value>  Set the Traffic Class in GRH (if GRH is in use)" and "-T,
    --tos=<tos value>  Set <tos_value> to RDMA-CM QPs. available only with -R flag"; a GID-based QP given
    `-T` is refused (" TOS only valid for rdma_cm based QP and RawEth QP "). tests/oracle/ runs these
    lines through that binary.

Why it matters
    Without PFC on the RoCE priority end to end — or with global pause instead — incast drops
    packets, and RoCE's go-back-N recovery turns a few drops into a collapse; Sandia measured it. A
    point-to-point test (RW601) does not show it.

How to fix by hand
    Make the path lossless for the RoCE priority: host PFC on `pfc_priority` (RW209/RW409), DSCP trust
    on host and switch (RW210/RW503), switch PFC no-drop on that priority (RW501/RW502), global pause
    off (RW212/RW505), and enough switch buffer headroom for the cable lengths (the vendor's PFC
    headroom / cable-length setting on the port, e.g. EOS `priority-flow-control … ` with the
    platform's buffer profile). Re-run the incast: streams 1, 2, 4 should add up to the link.
    Sources: `ib_write_bw …` (the incast streams: -D, -s, --tclass, -p per stream) — the real binary, Debian 12 perftest 4.5+0.17-1 (`ib_send_bw --help`: -a, -F, --report_gbits,
        --tclass, -d, -x, -p), corpus perftest/*; tests/oracle/ runs the generated lines through it;
        the fixes are the host, ESXi and switch checks' (RW209/RW409, RW210/RW503, RW501/RW502, RW212/RW505),
        each with its own sources; no switch headroom command is emitted here (it is platform-specific).

Fix safety
    manual: a measurement; the fixes belong to the host, ESXi and switch checks.
"""

from roce_wizard.checklib.findings import bad, good, skip
from roce_wizard.checklib.pairs import cannot_measure
from roce_wizard.checklib.traffic import counter_point
from roce_wizard.model import Check, Facts, Finding, Policy, Severity, Stage, TargetKind

CHECK = Check(
    code="RW605",
    slug="incast-holds",
    title="Incast throughput holds (lossless fabric)",
    stage=Stage.VALIDATE,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("perftest",),
    pair_probes=("incast",),
    depends_on=("RW402", "RW403", "RW407", "RW601", "RW607"),  # RoCE on priority 0 collapses
    fix_hint="make the RoCE priority lossless end to end (PFC, DSCP trust, no global pause, switch headroom)",
)

HOLD = 0.80


def incast_table(steps: list[dict], link: float | None) -> dict:
    single = {s["size"]: s["gbps"] for s in steps if s["streams"] == 1 and s.get("gbps")}
    rows = []
    for s in steps:
        g = s.get("gbps")
        rows.append([s["size"], s["streams"], g, round(100 * g / link, 1) if g and link else None,
                     round(100 * g / single[s["size"]], 1) if g and single.get(s["size"]) else None,
                     s.get("failed_streams", 0)])
    return {"columns": ["bytes", "streams", "aggregate Gb/s", "% of link", "% of 1 stream", "failed streams"],
            "rows": rows}


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    pair = facts.get("validate_pair") or {}
    blocked = cannot_measure(CHECK, facts, pair) if pair else None
    if blocked is not None:
        return [blocked]
    incast = facts.get("validate_incast")
    if not incast:
        facts.need("perftest")
        return [skip(CHECK, facts, "one perftest output is no incast: run `doctor --stage validate`",
                     observed=None, expected="streams 1..N into one node")]
    steps = incast.get("steps", [])
    link = pair.get("link_gbps")
    table = incast_table(steps, link)
    details = {"table": table, "incast": [{"streams": s["streams"], "size": s["size"], "gbps": s.get("gbps"),
                                           **counter_point(s, policy.pfc_priority)} for s in steps], "link_gbps": link}
    expected = f"aggregate with N streams >= {HOLD:.0%} of one stream's, at every size"
    single = {s["size"]: s["gbps"] for s in steps if s["streams"] == 1 and s.get("gbps")}
    worst = None
    for s in steps:
        base = single.get(s["size"])
        if s["streams"] < 2 or not base:
            continue
        ratio = (s.get("gbps") or 0) / base
        if worst is None or ratio < worst[0]:
            worst = (ratio, s)
    failed = [s for s in steps if s.get("failed_streams")]
    into = f"{incast.get('sender')} -> {incast.get('receiver')}"
    if failed:
        s = failed[0]
        return [bad(CHECK, facts, f"incast {into}: {s['failed_streams']} of {s['streams']} streams failed at "
                    f"{s['size']} B", observed=table["rows"], expected=expected, details=details,
                    fix="see the stream errors in the run log; check that the perftest ports are free on the receiver")]
    if worst is None:
        return [bad(CHECK, facts, f"incast {into}: no single-stream baseline", observed=table["rows"],
                    expected=expected, details=details, fix="re-run; a single stream must complete first")]
    ratio, s = worst
    summary = (f"{s['streams']} streams into {incast.get('receiver')} at {s['size']} B: {s.get('gbps')} Gb/s aggregate, "
               f"{ratio:.0%} of one stream ({single[s['size']]} Gb/s)")
    if ratio >= HOLD:
        return [good(CHECK, facts, "incast holds: " + summary, observed=table["rows"], expected=expected,
                     details=details)]
    return [bad(CHECK, facts, "incast collapses: " + summary, observed=table["rows"], expected=expected,
                details=details,
                fix=("make the RoCE priority lossless end to end: PFC on priority "
                     f"{policy.pfc_priority} on host and switch (RW209/RW409, RW501/RW502), DSCP trust (RW210/RW503), "
                     "global pause off (RW212/RW505), enough switch buffer headroom for the cables"))]
