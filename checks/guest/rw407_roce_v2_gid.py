"""RW407 roce-v2-gid — a RoCE v2 GID carries the netdev's IPv4; its index is reported

What it checks
    `show_gids`: among the GIDs of the RoCE device/port (the row's netdev is the RoCE netdev),
    one has `VER v2` and carries the netdev's IPv4 (from `ip -j addr`, else the inventory's
    roce.ip). Its INDEX is reported (details["gid_index"]) — it is what `ib_send_bw -x`,
    UCX_IB_GID_INDEX and NCCL_IB_GID_INDEX must be given. Fail when only v1 or link-local GIDs
    exist. Across nodes (engine, `compare_gid_indexes`): a differing index warns only when jobs PIN
    one — the site's `policy.mpi_env` carries UCX_IB_GID_INDEX / NCCL_IB_GID_INDEX (or a pasted
    `ucx_info -c` sets UCX_IB_GID_INDEX to a number; a node's own ucx.conf pin is judged by RW604 in
    the validate stage); otherwise it is said, not warned:
    UCX's default `UCX_IB_GID_INDEX=auto` and NCCL ≥ 2.21.5 (NCCL_IB_GID_INDEX default -1) pick each
    node's RoCE v2 IPv4 GID themselves (Sources below). perftest `-x` and NCCL < 2.21.5 still need the
    node's own index, which the finding names.

Why it matters
    The RoCE v2 IPv4 GID is often index 3, but not always: a second IPv6 address (another
    link-local or a global one) pushes it to 5, and with no IPv4 there is none (only index 0/1,
    link-local). Never hard-code 3: a job given a link-local or v1 GID index either fails to
    connect or runs RoCE v1 (not routable, no DSCP), and MPI/UCX silently fall back to TCP.

How to fix by hand
    Give the RoCE netdev its IPv4 (RW406: ip addr add <ip>/<prefix> dev <netdev>) and bring it up;
    the driver adds the v1 and v2 GIDs for it by itself. Then read the index:
        show_gids | grep -w v2 | grep <ip>
    and, where a job pins it, use it per node when it differs (UCX_IB_GID_INDEX=<idx>,
    NCCL_IB_GID_INDEX=<idx> for NCCL < 2.21.5, perftest -x <idx>) — or leave UCX's `auto`.
    Sources: `show_gids` — MLNX_OFED's script, corpus show_gids/*; `ip addr add … dev …`, `ip link set
    … up` — iproute2's ip-address(8)/ip-link(8) and the real binary (Debian iproute2);
    UCX_IB_GID_INDEX=auto — the real binary (Debian ucx-utils 1.13.1, `ucx_info -c`); NCCL_IB_GID_INDEX's
    -1 default from 2.21.5 — NVIDIA NCCL User Guide, "Environment Variables",
    https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html (NCCL's source:
    `NCCL_PARAM(IbGidIndex, "IB_GID_INDEX", -1)`).

Fix safety
    manual: nothing to set here; the GID table follows the netdev's addresses. No plan_fix: the
    RoCE v2 IPv4 GID appears when the netdev has its IPv4 (RW406's fix).
"""

import ipaddress
import re

from roce_wizard.checklib.findings import bad, excerpt, good, shown, skip
from roce_wizard.checklib.linux import safe_netdev
from roce_wizard.commands.handfix import NETDEV, pasteable
from roce_wizard.model import Check, Facts, Finding, Policy, Severity, Stage, Status, TargetKind
from roce_wizard.probes import rdma_device

CHECK = Check(
    code="RW407",
    slug="roce-v2-gid",
    title="RoCE v2 IPv4 GID",
    stage=Stage.GUEST,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("show_gids",),
    optional_probes=("ip_json", "rdma_link", "ibdev2netdev"),
    depends_on=("RW402",),
    fix_hint="give the RoCE netdev its IPv4 (RW406); use the v2 GID index show_gids reports, never assume 3",
)

EXPECTED = "a RoCE v2 GID carrying the netdev's IPv4"
_MAPPED = re.compile(r"^(?:0000:){5}ffff:([0-9a-f]{4}):([0-9a-f]{4})$", re.IGNORECASE)


def _ipv4(gid: dict) -> str | None:
    """The IPv4 a GID carries (the parser's column, else decoded from an IPv4-mapped GID)."""
    if gid.get("ipv4"):
        return gid["ipv4"]
    text = (gid.get("gid") or "").lower()
    m = _MAPPED.match(text)
    if m:
        n = int(m.group(1) + m.group(2), 16)
        return str(ipaddress.IPv4Address(n))
    if text.startswith("::ffff:") and text.count(".") == 3:
        return text[7:]
    return None


def _netdev_ips(facts: Facts, netdev: str | None) -> set[str]:
    ips = set()
    for iface in (facts.get("ip_json") or {}).get("interfaces", []):
        if netdev and iface.get("name") == netdev:
            ips |= {a.split("/")[0] for a in iface.get("ipv4") or []}
    if not ips and facts.target is not None and facts.target.roce.ip:
        ips.add(facts.target.roce.ip.split("/")[0])
    return ips


def _v2_with_ip(rows: list[dict]) -> list[dict]:
    return sorted((g for g in rows if g.get("ver") == "v2" and _ipv4(g)), key=lambda g: g.get("index", 0))


def _ev(facts: Facts, rows: list[dict]) -> str | None:
    raw = facts.raw.get("show_gids")
    devs = {g.get("dev") for g in rows if g.get("dev")}
    return excerpt(raw, r"^\s*DEV", *(rf"^\s*{re.escape(d)}\s" for d in devs), limit=8)


def _fix(netdev: str | None, ip: str | None, rows: list[dict]) -> str:
    return pasteable(lambda: _fix_text(shown(netdev, safe_netdev, "<netdev>"), ip, rows), NETDEV)


def _fix_text(nd: str, ip: str | None, rows: list[dict]) -> str:
    fix = (f"give {nd} its IPv4 and bring it up: ip addr add {ip or '<roce ip>/<prefix>'} dev {nd}; ip link set {nd} up "
           "(RW406, persist it); the driver then adds the RoCE v2 GID — read its index with "
           f"`show_gids | grep -w v2` (never assume 3)")
    if rows and not any(g.get("ver") == "v2" for g in rows):
        fix += "; no v2 GID at all: the RDMA stack is too old or RoCE v2 is disabled — update MLNX_OFED / the kernel (RW401)"
    return fix


def _judge(facts: Facts, rows: list[dict], want_ips: set[str], netdev: str | None, label: str) -> Finding:
    v2 = _v2_with_ip(rows)
    matching = [g for g in v2 if not want_ips or _ipv4(g) in want_ips]
    ev = _ev(facts, rows)
    observed = [f"{g.get('index')}:{g.get('ver')}:{_ipv4(g) or g.get('gid')}" for g in rows]
    if matching:
        g = matching[0]
        idx, ip = g.get("index"), _ipv4(g)
        note = "" if want_ips else " (the netdev's IPv4 was not known: not cross-checked)"
        return good(CHECK, facts, f"RoCE v2 GID of {ip} on {label} is index {idx}{note}", observed=observed,
                    expected=EXPECTED, excerpt=ev, subject=label,
                    details={"gid_index": idx, "dev": g.get("dev"), "port": g.get("port"), "ipv4": ip,
                             "netdev": g.get("netdev") or netdev, "gid": g.get("gid")})
    want = ", ".join(sorted(want_ips))
    untyped = [g for g in rows if g.get("ver") is None and _ipv4(g) and (not want_ips or _ipv4(g) in want_ips)]
    if untyped and not v2:
        # show_gids prints VER empty when the kernel's gid_attrs/types/<index> cannot be read (its own
        # `cat ... 2>/dev/null`): an IPv4 GID of unknown type is neither v1 nor v2 as far as we know
        indexes = ", ".join(str(g.get("index")) for g in untyped)
        return skip(CHECK, facts, f"could not tell: show_gids printed no GID type (VER) for the IPv4 GID(s) on {label} "
                    f"(index {indexes}): v1 or v2 is unknown", observed=observed, expected=EXPECTED, excerpt=ev,
                    subject=label)
    if v2:
        summary = (f"no RoCE v2 GID on {label} carries {want}: v2 GIDs carry "
                   f"{', '.join(sorted({_ipv4(g) for g in v2}))}")
    else:
        summary = f"no RoCE v2 IPv4 GID on {label}: only v1 / link-local GIDs" + (
            f" (indexes {', '.join(str(g.get('index')) for g in rows)})" if rows else "")
    return bad(CHECK, facts, summary, observed=observed, expected=EXPECTED, excerpt=ev, subject=label,
               fix=_fix(netdev, facts.target.roce.ip if facts.target else None, rows))


def _pins(facts: Facts, policy: Policy) -> list[str]:
    """Where jobs get a fixed GID index (then a per-node difference matters): the site's policy.mpi_env;
    a node's own ucx.conf pin is RW604's (validate stage: `ucx_info -c` per node), read when given."""
    pins = []
    value = ((facts.get("ucx_config") or {}).get("config") or {}).get("UCX_IB_GID_INDEX", "").strip()
    if value.isdigit():
        pins.append(f"ucx_info -c: UCX_IB_GID_INDEX={value}")
    for key in ("UCX_IB_GID_INDEX", "NCCL_IB_GID_INDEX"):
        m = re.search(rf"(?:^|\s){key}=(\d+)", policy.mpi_env or "")
        if m:
            pins.append(f"policy.mpi_env {key}={m.group(1)}")
    return pins


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    findings = _evaluate(facts, policy)
    pins = _pins(facts, policy)
    for f in findings:
        if f.status is Status.PASS and f.details.get("gid_index") is not None:
            f.details["pinned_by"] = pins
    return findings


def _evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    gids = list(facts.need("show_gids").get("gids", []))
    t = facts.target
    if t is not None and (t.roce.netdev or t.roce.rdma_dev):
        netdev, dev = t.roce.netdev, rdma_device(t, facts.data)
        rows = [g for g in gids if (netdev and g.get("netdev") == netdev) or (dev and g.get("dev") == dev)]
        label = f"{dev or (rows[0].get('dev') if rows else '?')}/{rows[0].get('port', 1) if rows else 1}"
        label += f" ({netdev})" if netdev else ""
        if not rows:
            shown = ", ".join(sorted({f"{g.get('dev')}->{g.get('netdev') or '-'}" for g in gids})) or "none"
            return [bad(CHECK, facts, f"show_gids lists no GID for {netdev or dev} (rows: {shown})", observed=shown,
                        expected=EXPECTED, excerpt=_ev(facts, gids), fix=_fix(netdev, t.roce.ip, []))]
        return [_judge(facts, rows, _netdev_ips(facts, netdev), netdev, label)]
    # analyze: judge each device/port the output shows
    groups: dict[tuple, list[dict]] = {}
    for g in gids:
        groups.setdefault((g.get("dev"), g.get("port")), []).append(g)
    if not groups:
        return [bad(CHECK, facts, "show_gids lists no GID at all", observed=[], expected=EXPECTED,
                    excerpt=_ev(facts, []), fix=_fix(None, None, []))]
    findings = []
    for (dev, port), rows in groups.items():
        netdev = next((g.get("netdev") for g in rows if g.get("netdev")), None)
        label = f"{dev}/{port}" + (f" ({netdev})" if netdev else "")
        findings.append(_judge(facts, rows, _netdev_ips(facts, netdev), netdev, label))
    if any(f.status is Status.PASS for f in findings):
        for i, f in enumerate(findings):
            if f.status is not Status.PASS:
                findings[i] = skip(CHECK, facts, f"{f.summary}; fine if it is not the RoCE port "
                                   "(give roce.netdev in the inventory to judge it)", observed=f.observed,
                                   expected=EXPECTED, evidence=f.evidence, subject=f.subject)
    return findings


def compare_gid_indexes(findings: list[Finding], everything: list[Finding] | None = None) -> list[Finding]:
    """Cross-node: when the RoCE v2 GID index differs between targets, warn if jobs pin one (a passing
    finding's details["pinned_by"]), else say that it does not matter (pure; the engine calls it).

    Reads the passing RW407 findings (details["gid_index"]); one finding per target and subject.
    """
    indexes: dict[str, int] = {}
    for f in findings:
        if f.check != CHECK.code or f.status is not Status.PASS or f.details.get("gid_index") is None:
            continue
        key = f.target or f.subject or f"#{len(indexes)}"
        if key in indexes and f.subject:
            key = f"{key}:{f.subject}"
        indexes[key] = int(f.details["gid_index"])
    if len(set(indexes.values())) < 2:
        return []
    listing = ", ".join(f"{k}={v}" for k, v in sorted(indexes.items()))
    by_node = " ".join(f"{k}:{v}" for k, v in sorted(indexes.items()))
    pins = sorted({f"{f.target}: {p}" if f.target else p for f in findings if f.check == CHECK.code
                   for p in (f.details or {}).get("pinned_by") or []})
    details = {"gid_indexes": dict(sorted(indexes.items())), "pinned_by": pins}
    if not pins:
        # UCX (UCX_IB_GID_INDEX=auto) and NCCL >= 2.21.5 (NCCL_IB_GID_INDEX -1) pick each node's RoCE v2 GID
        return [Finding(
            check=CHECK.code, status=Status.PASS, target="",
            summary=(f"RoCE v2 GID index differs across nodes ({listing}): fine while jobs leave it to UCX "
                     "(UCX_IB_GID_INDEX=auto) and NCCL >= 2.21.5, which pick each node's own; a job that pins "
                     "UCX_IB_GID_INDEX / NCCL_IB_GID_INDEX, NCCL < 2.21.5 and perftest -x need it per node"),
            observed=dict(sorted(indexes.items())), expected="the same GID index on every node, or no job pinning one",
            details=details)]
    return [Finding(
        check=CHECK.code, status=Status.WARN, target="",
        summary=(f"RoCE v2 GID index differs across nodes ({listing}) and jobs pin one ({'; '.join(pins)}): "
                 "the pinned index must then be set per node"),
        observed=dict(sorted(indexes.items())), expected="the same GID index on every node, or no job pinning one",
        fix=(f"set UCX_IB_GID_INDEX (and NCCL_IB_GID_INDEX for NCCL < 2.21.5, perftest -x) per node ({by_node}), "
             "e.g. from a per-host env file; or stop pinning it (UCX's default is auto); or make the GID tables "
             "agree (same address set on every RoCE netdev, e.g. remove the extra IPv6 address that shifts the "
             "index)"),
        details=details,
    )]


compare_targets = compare_gid_indexes  # the engine's cross-target hook
