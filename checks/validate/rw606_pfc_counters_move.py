"""RW606 pfc-counters-move — during incast, pause frames move on the lossless priority and nothing drops

What it checks
    Around every incast step (RW605) `ethtool -S <netdev>` on both nodes: the per-priority pause
    counters `rx_prio<p>_pause` / `tx_prio<p>_pause` for p = pfc_priority, and the drop counters
    `rx_discards_phy` (the port dropped: no buffer, no pause in time) and `rx_out_of_buffer` (the
    receive ring ran dry). Expected: zero drops; pause frames, when any, on the lossless priority
    only. In a VF guest the port's counters belong to the PF (read them on the ESXi host): n/a.

Why it matters
    Throughput can look fine while the fabric is already dropping: a few discards under incast are
    go-back-N retransmissions at scale. Pause frames on another priority mean the RoCE traffic is
    not in the lossless class at all.

How to fix by hand
    `ethtool -S <netdev> | grep -e prio<p>_pause -e discards -e out_of_buffer` before and after a load;
    discards_phy: PFC/headroom (RW605's fixes); out_of_buffer: a bigger receive ring
    (`ethtool -G <netdev> rx 8192`) and a faster consumer; pause on another priority: DSCP→priority
    mapping and trust (RW409/RW411, RW503).
    Sources: `ethtool -S <if>` and `ethtool -G <if> rx N` — the real binary (Debian ethtool 6.1: "-S|--statistics",
        "-G|--set-ring … [ rx N ]"); the counter names (rx_prio<p>_pause, rx_discards_phy, rx_out_of_buffer) —
        corpus ethtool_stats/*, hw_counters/* and the Linux kernel's mlx5 counters documentation
        (Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst).

Fix safety
    manual: the counters show the cause; the fixes belong to the host and switch checks.
"""

from roce_wizard.checklib.findings import bad, good, skip
from roce_wizard.checklib.pairs import cannot_measure
from roce_wizard.model import Check, Facts, Finding, Policy, Severity, Stage, TargetKind

CHECK = Check(
    code="RW606",
    slug="pfc-counters-move",
    title="PFC counters move, no drops, under incast",
    stage=Stage.VALIDATE,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("ethtool_stats",),
    pair_probes=("incast",),
    depends_on=("RW402", "RW403", "RW407", "RW605", "RW607"),
    fix_hint="no drops under incast: PFC on the RoCE priority with headroom; a bigger RX ring for rx_out_of_buffer",
)

DROPS = ("rx_discards_phy", "rx_out_of_buffer")


def _pauses(d: dict, p: int) -> int:
    return d.get(f"rx_prio{p}_pause", 0) + d.get(f"tx_prio{p}_pause", 0)


def _snapshot(facts: Facts, policy: Policy) -> list[Finding]:
    """analyze: one pasted `ethtool -S` (counters since the driver loaded)."""
    c = facts.need("ethtool_stats").get("counters", {})
    p = policy.pfc_priority
    drops = {k: c[k] for k in DROPS if c.get(k)}
    expected = f"no drops; pause frames on priority {p} only"
    if not any(k.startswith(("rx_prio", "tx_prio")) and k.endswith("_pause") for k in c) and not drops:
        return [skip(CHECK, facts, "no per-priority pause counters in this output", observed=None, expected=expected)]
    others = {k: v for k, v in c.items() if k.endswith("_pause") and k.startswith(("rx_prio", "tx_prio"))
              and v and f"prio{p}_" not in k}
    if drops or (others and not _pauses(c, p)):
        what = ", ".join(f"{k}={v}" for k, v in {**drops, **others}.items())
        return [bad(CHECK, facts, f"since the counters were reset: {what}", observed={**drops, **others},
                    expected=expected, fix="compare before/after a load (doctor --stage validate) to see if it is now")]
    return [good(CHECK, facts, f"pause on priority {p}: {_pauses(c, p)}, no drops", observed=_pauses(c, p),
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
    expected = f"zero drops on {incast.get('receiver')}; pause frames on priority {p} only"
    if not incast.get("pfc_visible"):
        return [skip(CHECK, facts, f"n/a: {incast.get('receiver')} sees no per-priority pause counters (a VF: the "
                     "port's counters belong to the PF, read them on the ESXi host)", observed=None, expected=expected)]
    rows, bad_rows = [], []
    for s in incast.get("steps", []):
        r, snd = s.get("receiver", {}), s.get("sender", {})
        drops = {k: r.get(k, 0) for k in DROPS}
        others = sum(v for k, v in {**r, **snd}.items() if k.endswith("_pause") and k.startswith(("rx_prio", "tx_prio"))
                     and f"prio{p}_" not in k)
        row = [s["size"], s["streams"], snd.get(f"rx_prio{p}_pause", 0), r.get(f"tx_prio{p}_pause", 0),
               drops["rx_discards_phy"], drops["rx_out_of_buffer"], others]
        rows.append(row)
        if any(drops.values()) or (others and not (_pauses(r, p) + _pauses(snd, p))):
            bad_rows.append((s, drops, others))
    table = {"columns": ["bytes", "streams", f"sender rx_prio{p}_pause", f"receiver tx_prio{p}_pause",
                         "rx_discards_phy", "rx_out_of_buffer", "pause on other priorities"], "rows": rows}
    details = {"table": table}
    if bad_rows:
        s, drops, others = bad_rows[0]
        what = ", ".join(f"{k} +{v}" for k, v in drops.items() if v) or f"pause frames on other priorities +{others}"
        return [bad(CHECK, facts, f"during incast ({s['streams']} streams, {s['size']} B) {incast.get('receiver')} "
                    f"counted {what}", observed=rows, expected=expected, details=details,
                    fix=("rx_discards_phy: the port dropped — PFC headroom / lossless path (RW605's fixes); "
                         f"rx_out_of_buffer: the receive ring ran dry — `ethtool -G {'<netdev>'} rx 8192` and persist it; "
                         "pause on another priority: DSCP→priority mapping and trust (RW409/RW411/RW503)"))]
    moved = sum(row[2] + row[3] for row in rows)
    return [good(CHECK, facts, f"under incast: {moved} pause frames on priority {p}, zero drops on "
                 f"{incast.get('receiver')}", observed=rows, expected=expected, details=details)]
