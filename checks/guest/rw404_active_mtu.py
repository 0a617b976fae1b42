"""RW404 active-mtu — the RoCE port runs at the RoCE MTU (4096)

What it checks
    `ibv_devinfo` → `active_mtu` of the RoCE port (only an active port has a meaningful value)
    equals the policy's `roce_mtu` (4096 by default). Without an inventory (analyze): every
    active Ethernet port is judged.

Why it matters
    active_mtu is LOCAL: mlx5 derives it from this node's netdev MTU (the largest IB MTU that fits
    the netdev MTU less the RoCE/UDP/IP headers, capped by max_mtu), so 4096 needs a netdev MTU of
    at least 4200; below it the port runs at 1024 and large-message bandwidth falls. In a VF guest
    the netdev MTU is bounded by what the VF is allowed (the VDS MTU, RW303). A small switch hop
    never shows here: it silently drops 4 KB frames, which RW504 and the validate stage find.
    That the RoCE MTU derives from the netdev MTU: IBM "Setting the MTU size" (Linux on IBM Z,
    RoCE Express, mlx5; https://www.ibm.com/docs/en/linux-on-systems?topic=functions-set-mtu: 1500
    gives 1024). The 4200 figure (4096 plus the RoCE v2 headers, rounded up) is not stated by a vendor
    document found so far.

How to fix by hand
    ip link set dev <netdev> mtu 9000 (RW405, made persistent); in a VF guest also VDS maxMtu 9000
    (RW303). The port's active_mtu follows the netdev MTU at once; re-check with
    `ibv_devinfo -d <dev> | grep active_mtu`.
    Sources: `ibv_devinfo` — the real binary (Debian ibverbs-utils) and corpus ibv_devinfo/*
    (`active_mtu: 1024 (3)` on rxe-soft-roce-verbose-gid-compressed.txt); `ip link set dev <if> mtu N`
    — iproute2's ip-link(8), the real binary (Debian iproute2).

Fix safety
    safe: follows from RW405 / RW303; nothing to change here. No plan_fix: the active MTU follows
    the netdev MTU (RW405) and, for a VF, the VDS MTU (RW303), whose fixes fix it.
"""

from roce_wizard.checklib.findings import bad, excerpt, good, skip
from roce_wizard.checklib.linux import hca_section, roce_ports
from roce_wizard.model import Check, Facts, Finding, Policy, Severity, Stage, TargetKind

CHECK = Check(
    code="RW404",
    slug="active-mtu",
    title="RoCE active MTU",
    stage=Stage.GUEST,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("ibv_devinfo",),
    optional_probes=("rdma_link", "ibdev2netdev", "ip_json"),
    # a small netdev MTU (RW405) or VDS MTU (RW303) is the cause, not a second fault
    depends_on=("RW403", "RW405", "vcenter:RW303"),
    fix_hint="raise this node's netdev MTU to >= 4200 (RW405; in a VF guest also the VDS MTU, RW303)",
)

ROCE_ETH_OVERHEAD = 104  # 4096 + the RoCE v2 headers, rounded up: a netdev MTU >= 4200 (see the docstring)


def _netdev_mtu(facts: Facts, netdev: str | None) -> int | None:
    for iface in (facts.get("ip_json") or {}).get("interfaces", []):
        if netdev and iface.get("name") == netdev:
            return iface.get("mtu")
    return None


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    ports, _targeted, why = roce_ports(facts)
    expected = policy.roce_mtu
    active = [(d, p, n) for d, p, n in ports if p.get("state") == "PORT_ACTIVE"]
    if not active:
        why = why or "the RoCE port is not active, its active_mtu means nothing (RW403)"
        return [skip(CHECK, facts, f"cannot judge: {why}", expected=expected)]
    raw = facts.raw.get("ibv_devinfo")
    findings = []
    for dev, port, netdev in active:
        name, pno = dev["hca_id"], port.get("port", 1)
        subject = f"{name}/{pno}"
        mtu, max_mtu = port.get("active_mtu"), port.get("max_mtu")
        ev = excerpt(hca_section(raw, name), r"hca_id", r"max_mtu", r"active_mtu")
        observed = {"active_mtu": mtu, "max_mtu": max_mtu, "netdev": netdev}
        if mtu == expected:
            findings.append(good(CHECK, facts, f"{subject} active_mtu {mtu}", observed=observed, expected=expected,
                                 excerpt=ev, subject=subject))
            continue
        nd = netdev or "<netdev>"
        eth_mtu = _netdev_mtu(facts, netdev)
        observed["netdev_mtu"] = eth_mtu
        need = expected + ROCE_ETH_OVERHEAD
        if isinstance(max_mtu, int) and max_mtu < expected:
            summary = f"{subject} supports at most MTU {max_mtu} (< {expected})"
            fix = f"lower the policy roce_mtu to {max_mtu}, or use a device that supports {expected}"
        elif isinstance(mtu, int) and mtu < expected:
            vf = facts.target is not None and facts.target.kind is TargetKind.GUEST
            allowed = " (in a VF: the MTU the VF is allowed, the VDS MTU RW303)" if vf else ""
            where = (f"{nd} itself has MTU {eth_mtu} (< {need})" if isinstance(eth_mtu, int) and eth_mtu < need
                     else f"this node's netdev MTU{allowed} is < {need} (active_mtu follows the local netdev only)")
            summary = f"{subject} active_mtu {mtu}, expected {expected}: {where}"
            fix = f"ip link set dev {nd} mtu {policy.eth_mtu}  # RW405; persist it"
            if vf:
                fix += (f"\n# in a VF guest the MTU the VF is allowed caps it: VDS maxMtu {policy.eth_mtu} (RW303) and the "
                        "host's uplink vmnic MTU")
        else:
            summary = f"{subject} active_mtu {mtu}, policy expects {expected}"
            fix = f"set roce_mtu in the policy to what the fabric is built for, or the netdev MTU to {expected + ROCE_ETH_OVERHEAD}"
        findings.append(bad(CHECK, facts, summary, observed=observed, expected=expected, excerpt=ev,
                            subject=subject, fix=fix))
    return findings
