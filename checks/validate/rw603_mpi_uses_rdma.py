"""RW603 mpi-uses-rdma — an MPI job between two nodes really runs over RDMA, not silently over TCP

What it checks
    A short 2-rank MPI run (`mpirun -np 2 --host <a>,<b> -x UCX_NET_DEVICES=<dev>:1
    -x UCX_LOG_LEVEL=info … osu_latency`, with the UCX variables RW604 prints, per node when they
    differ, and `policy.mpi_env` on top: the site's own job environment) read three ways:
      1. the transports UCX reports for the remote endpoint (`rc_mlx5`/`dc_mlx5`/`ud_mlx5` vs `tcp`;
         no UCX line at all means UCX was not the transport);
      2. counters on both nodes around the run: RDMA bytes (`port_xmit_data`/`port_rcv_data` × 4,
         `ethtool -S` `tx/rx_vport_rdma_unicast_bytes`) against every netdev's TCP/IP bytes;
      3. the small-message latency (RDMA ≈ 1–3 us, TCP ≈ 12–14 us).
    All three must say RDMA; any one saying TCP fails, and the finding says which, with each piece
    of evidence.

Why it matters
    Sandia (seed 001): MPI fell back to TCP without a word, and only the hardware counters showed
    it. UCX and Open MPI pick TCP when the RDMA device is missing or down, named wrongly in
    UCX_NET_DEVICES, when the GID index points at a link-local GID, or when a site config limits
    UCX_TLS. The job still runs — five to ten times slower on small messages.

How to fix by hand
    Run it yourself and read the `ep_cfg`/`cfg#` lines: `mpirun -np 2 --host a,b -x UCX_LOG_LEVEL=info
    -x UCX_NET_DEVICES=mlx5_0:1 osu_latency` — the inter-node line must name rc_mlx5 (or dc/ud).
    Then: `ucx_info -d | grep -e Transport -e Device` (is the RDMA device usable?), `show_gids` (use
    the RoCE v2 IPv4 index in UCX_IB_GID_INDEX), `ucx_info -c | grep -e UCX_TLS -e UCX_NET_DEVICES`
    and /etc/ucx/ucx.conf (a site config restricting transports), `--mca pml ucx` to make a job fail
    loudly instead of falling back.
    Sources: `mpirun -np … --host … -x NAME=value … --mca pml ucx` — Open MPI's mpirun(1), the real binary
        (Debian openmpi-bin); `osu_latency` and its output — corpus osu_benchmarks/*; UCX_LOG_LEVEL /
        UCX_NET_DEVICES / UCX_TLS and `ucx_info -d`, `ucx_info -c` — the real binary (Debian ucx-utils 1.13.1)
        and corpus ucx_info/*; the ep_cfg lines and UCX errors — corpus openmpi_ucx_log/*; `show_gids` —
        corpus show_gids/* and NVIDIA's mlnx-tools (sbin/show_gids); /etc/ucx/ucx.conf — UCX's own config
        file (`ucx_info -c` prints the keys it takes).

Fix safety
    manual: the cause is the device (RW402), the GID (RW407) or the job environment (RW604).
"""

from roce_wizard.checklib.findings import bad, good, skip
from roce_wizard.checklib.pairs import at_fault, lacking
from roce_wizard.model import Check, Evidence, Facts, Finding, Policy, Severity, Stage, TargetKind

CHECK = Check(
    code="RW603",
    slug="mpi-uses-rdma",
    title="MPI/UCX runs over RDMA (no silent TCP)",
    stage=Stage.VALIDATE,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("openmpi_ucx_log",),
    optional_probes=("osu",),
    pair_probes=("mpi_osu",),
    depends_on=("RW402", "RW403", "RW407"),
    fix_hint="make UCX use the RDMA device: UCX_NET_DEVICES=<dev>:1, UCX_IB_GID_INDEX=<RoCE v2 idx>, UCX_TLS with rc",
)

TCP_LAT_US = 8.0  # above this a small message went through the kernel's TCP stack
MIN_RDMA_BYTES = 1 << 20


def _ucx_verdict(log: dict | None) -> tuple[str, str]:
    if not log:
        return "tcp", "UCX printed no transport selection: UCX did not carry the job (Open MPI's own TCP?)"
    remote = log.get("remote_transports") or []
    warn = "; ".join(w for w in log.get("warnings") or [] if "not available" in w)[:300]
    if log.get("rdma") is True and not log.get("tcp"):
        return "rdma", f"UCX chose {', '.join(remote)} for the remote peer"
    if remote:
        return "tcp", f"UCX chose {', '.join(remote)} for the remote peer" + (f" ({warn})" if warn else "")
    return "tcp", "UCX selected no RDMA transport for the remote peer" + (f": {warn}" if warn else
                                                                           " (no inter-node ep_cfg line)")


def _counter_verdict(node: str, d: dict) -> tuple[str, str, int, int]:
    rdma = max(4 * (d.get("port_xmit_data", 0) + d.get("port_rcv_data", 0)),
               d.get("tx_vport_rdma_unicast_bytes", 0) + d.get("rx_vport_rdma_unicast_bytes", 0))
    tcp = sum(v for k, v in d.items() if k.startswith("net.") and k.endswith(("tx_bytes", "rx_bytes")))
    verdict = "rdma" if rdma >= MIN_RDMA_BYTES and rdma > tcp else "tcp"
    return verdict, f"{node}: RDMA {rdma / 1e6:.1f} MB vs TCP/IP {tcp / 1e6:.1f} MB moved", rdma, tcp


def _latency_verdict(osu: dict | None, policy: Policy) -> tuple[str, str, float | None]:
    rows = [r for r in (osu or {}).get("rows", []) if r.get("value") is not None]
    if not rows:
        return "unknown", "no osu_latency result", None
    small = min(rows, key=lambda r: r.get("bytes") or 0)
    lat = small["value"]
    text = f"{lat:.2f} us at {small.get('bytes')} B"
    if lat <= policy.max_small_msg_lat_us:
        return "rdma", text + " (RDMA-like)", lat
    if lat >= TCP_LAT_US:
        return "tcp", text + " (TCP-like: RDMA is 1-3 us, TCP 12-14 us)", lat
    return "unclear", text + " (slow for RDMA, fast for TCP)", lat


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    pair = facts.get("validate_pair") or {}
    mpi = facts.get("validate_mpi")
    if pair and mpi is None:
        return [at_fault(bad(CHECK, facts, f"cannot run MPI over {pair.get('pair')}: a node has no RoCE IPv4",
                             observed=[p for n in pair.get("nodes", []) for p in n.get("problems", [])],
                             expected="both nodes reachable on their RoCE IPs",
                             fix="give each RoCE netdev its IPv4 (RW406)"), lacking(pair))]
    log = facts.get("openmpi_ucx_log") if pair else facts.need("openmpi_ucx_log")
    osu = facts.get("osu") or (log or {}).get("osu")
    rows: list[list] = []
    saying_tcp: list[str] = []
    ucx, ucx_text = _ucx_verdict(log)
    rows.append(["UCX transports", pair.get("pair", "-"), ucx_text, ucx])
    evidence = [Evidence(probe="openmpi_ucx_log", command=(mpi or {}).get("command"),
                         excerpt="\n".join(ln for ln in ((mpi or {}).get("output") or "").splitlines()
                                           if "ep_cfg" in ln or "cfg#" in ln or "WARN" in ln)[:800] or None)]
    if ucx == "tcp":
        saying_tcp.append("UCX's transports")
    for node, d in ((mpi or {}).get("deltas") or {}).items():
        verdict, text, rdma_b, tcp_b = _counter_verdict(node, d)
        rows.append(["counters", node, text, verdict])
        evidence.append(Evidence(probe="counters", command=f"{node}: port_xmit_data/port_rcv_data, ethtool -S, "
                                 "/sys/class/net/*/statistics", excerpt=text))
        if verdict == "tcp":
            saying_tcp.append(f"the counters on {node}")
    lat, lat_text, lat_us = _latency_verdict(osu, policy)
    rows.append(["latency", pair.get("pair", "-"), lat_text, lat])
    evidence.append(Evidence(probe="osu", excerpt=lat_text))
    if lat == "tcp":
        saying_tcp.append("the latency")
    details = {"table": {"columns": ["evidence", "where", "observed", "says"], "rows": rows},
               "latency_us": lat_us, "command": (mpi or {}).get("command"), "env": (mpi or {}).get("env")}
    expected = "UCX on rc/dc/ud_mlx5, RDMA counters moving, small-message latency of RDMA"
    if mpi is not None and mpi.get("exit_status") not in (0, None) and not (osu or {}).get("rows"):
        return [bad(CHECK, facts, f"the MPI run failed (exit {mpi.get('exit_status')})", observed=rows,
                    expected=expected, evidence=evidence, details=details,
                    fix="run the mpirun line from the details by hand on the first node and read its error")]
    if not pair and lat == "unknown" and ucx == "tcp" and not log:
        return [skip(CHECK, facts, "nothing to judge", observed=rows, expected=expected)]
    if saying_tcp:
        return [bad(CHECK, facts, "MPI went over TCP, not RDMA: " + ", ".join(saying_tcp) + " say so ("
                    + "; ".join(r[2] for r in rows if r[3] == "tcp") + ")", observed=rows, expected=expected,
                    evidence=evidence, details=details,
                    fix=("check the RDMA device (`ucx_info -d`, RW402), use the RoCE v2 IPv4 GID index in "
                         "UCX_IB_GID_INDEX (`show_gids`, RW407), name the right device in UCX_NET_DEVICES, and "
                         "look for a site UCX config limiting UCX_TLS (`ucx_info -c`, /etc/ucx/ucx.conf); add "
                         "`--mca pml ucx` so a job fails loudly instead of falling back"))]
    note = "" if lat == "rdma" else f" (latency {lat_text})"
    return [good(CHECK, facts, f"MPI runs over RDMA: {ucx_text}; RDMA counters moved on both nodes{note}",
                 observed=rows, expected=expected, evidence=evidence, details=details)]
