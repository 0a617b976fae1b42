"""RW601 rdma-bandwidth — large-message RDMA bandwidth between two nodes reaches the link speed

What it checks
    `ib_send_bw -a -F --report_gbits --tclass=<class> -d <dev> -x <gid idx>` with the server on the receiving node
    (started first, in the background under `timeout`, on a port of its own with `-p`) and the
    client on the sending node given the server's RoCE IP; each end uses its own RDMA device and
    RoCE v2 IPv4 GID index (the facts RW402/RW407 judge). The average bandwidth at the large sizes
    (64 KiB and up) must be at least `min_bw_ratio` (0.90) of the link speed the port reports
    (`/sys/class/infiniband/<dev>/ports/1/rate`). Every size is kept as a table. The class is the RoCE
    DSCP << 2 with ECT(0) (`roce_dscp << 2 | 2`: 106 for DSCP 26, UCX's own RoCE v2 default): without
    it perftest sends
    DSCP 0 and measures the lossy priority, not the lossless one RoCE runs on.
    Source of the perftest syntax: the real binary, Debian 12 perftest 4.5+0.17-1 (`ib_write_bw -V`:
    6.06), `ib_send_bw --help`: "--tclass=<value>  Set the Traffic Class in GRH (if GRH is in use)" and "-T,
    --tos=<tos value>  Set <tos_value> to RDMA-CM QPs. available only with -R flag"; a GID-based QP given
    `-T` is refused (" TOS only valid for rdma_cm based QP and RawEth QP "). tests/oracle/ runs these
    lines through that binary.

Why it matters
    Every setting can look right while the data path is not: a card trained at PCIe x4, an MTU of
    1024 somewhere on the path (RW404), a VF rate limit. Seed 000 shows 95.8 of 100 Gb/s on a good
    path; anything far below is a fault a configuration check cannot see.

How to fix by hand
    Reproduce it: on the receiver `ib_send_bw -a -F --report_gbits --tclass=106 -d mlx5_0 -x 3`, on the
    sender `ib_send_bw -a -F --report_gbits --tclass=106 -d mlx5_0 -x 3 <receiver RoCE IP>`. Then look at the usual
    suspects: `ibv_devinfo` active_mtu (4096; it follows the local netdev MTU only), the switch ports'
    MTU (RW504: a small switch hop drops 4 KB frames and never shows in active_mtu), `lspci -vvv -s <pci> | grep LnkSta` (the PCIe speed and
    width the card trained at), `ethtool <netdev>` speed, the VF's rate limit on the host.
    Sources: `ib_send_bw …` — the real binary, Debian 12 perftest 4.5+0.17-1 (`ib_send_bw --help`: -a, -F, --report_gbits,
        --tclass, -d, -x, -p), corpus perftest/*; tests/oracle/ runs the generated lines through it;
        `ibv_devinfo` — the real binary (Debian ibverbs-utils); `lspci -vvv -s <pci>` and LnkSta — corpus
        lspci_vvv/cx7-mcx755106as-sriov-cap-vfs0.txt (`sudo lspci -vvv -s 21:00.0`); `ethtool <if>` (Speed) —
        the real binary (Debian ethtool 6.1); the port rate file — the kernel's sysfs-class-infiniband ABI
        (https://kernel.org/doc/Documentation/ABI/testing/sysfs-class-infiniband).

Fix safety
    manual: a measurement; the cause is elsewhere (cabling, slot, MTU path, rate limits).
"""

from roce_wizard.checklib.findings import bad, good, skip
from roce_wizard.checklib.pairs import at_fault, cannot_measure, failed_run, no_result_yet, run_evidence, slower_link
from roce_wizard.model import Check, Facts, Finding, Policy, Severity, Stage, TargetKind

CHECK = Check(
    code="RW601",
    slug="rdma-bandwidth",
    title="RDMA bandwidth between nodes",
    stage=Stage.VALIDATE,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("perftest",),
    pair_probes=("perftest_bw",),
    depends_on=("RW402", "RW403", "RW407"),
    fix_hint="find what caps the path: active_mtu, the card's PCIe link (lspci LnkSta), link speed, VF rate limit",
)

LARGE = 65536


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    pair = facts.get("validate_pair") or {}
    blocked = cannot_measure(CHECK, facts, pair) if pair else None
    if blocked is not None:
        return [blocked]
    run = facts.get("validate_perftest")
    pt = facts.need("perftest") if not run else (run.get("parsed") or {"error": (run.get("client_output") or "").strip()[-200:]})
    rows = [r for r in pt.get("rows", []) if r.get("bw_avg_gbps") is not None]
    if pt.get("test") and not str(pt["test"]).endswith("_bw"):
        return [skip(CHECK, facts, f"{pt['test']} is not a bandwidth test", observed=pt.get("test"),
                     expected="ib_*_bw output")]
    if pt.get("error") or not rows:
        return [no_result_yet(CHECK, facts, pt, run) or failed_run(CHECK, facts, pt, run)]
    large = [r for r in rows if (r.get("bytes") or 0) >= LARGE] or rows[-1:]
    avg = sum(r["bw_avg_gbps"] for r in large) / len(large)
    link = pair.get("link_gbps")
    table = {"columns": ["bytes", "BW average [Gb/s]", "BW peak [Gb/s]"],
             "rows": [[r.get("bytes"), r.get("bw_avg_gbps"), r.get("bw_peak_gbps")] for r in rows]}
    details = {"table": table, "avg_large_gbps": round(avg, 2), "link_gbps": link, "test": pt.get("test"),
               "mtu": pt.get("mtu"), "gid_index": pt.get("gid_index")}
    where = f" {pair.get('sender')} -> {pair.get('receiver')}" if pair else ""
    if not link:
        return [skip(CHECK, facts, f"{avg:.1f} Gb/s at {large[0]['bytes']} B and up{where}; the link speed is unknown, "
                     "so it cannot be judged", observed=round(avg, 2), expected=f">= {policy.min_bw_ratio:.0%} of the link",
                     details=details)]
    want = policy.min_bw_ratio * link
    expected = f">= {want:.1f} Gb/s ({policy.min_bw_ratio:.0%} of {link:g} Gb/s)"
    details["ratio"] = round(avg / link, 3)
    if avg >= want:
        return [good(CHECK, facts, f"{avg:.1f} Gb/s average at large messages{where} ({avg / link:.0%} of {link:g} Gb/s, "
                     f"MTU {pt.get('mtu')}, GID index {pt.get('gid_index')})", observed=round(avg, 2), expected=expected,
                     evidence=run_evidence(run), details=details)]
    slow = slower_link(pair)  # a node whose link trained slower than its peer's is the first suspect; else the receiver
    if slow:
        details["slower_link"] = slow
    return [at_fault(bad(CHECK, facts, f"only {avg:.1f} Gb/s average at large messages{where}: {avg / link:.0%} of the "
                f"{link:g} Gb/s link (MTU {pt.get('mtu')})" + (f"; {slow}'s link is the slower" if slow else ""),
                observed=round(avg, 2), expected=expected,
                evidence=run_evidence(run), details=details,
                fix=("look for what caps the path: `ibv_devinfo | grep active_mtu` (4096 expected; 1024 means this node's "
                     "own netdev MTU is below 4200), the switch ports' MTU (RW504: a small switch hop drops 4 KB "
                     "frames without lowering active_mtu), `lspci -vvv -s <pci> | grep LnkSta` (the card's PCIe speed/width), "
                     "`ethtool <netdev> | grep Speed`, a VF rate limit on the host")), slow)]
