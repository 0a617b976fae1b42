"""RW404 active-mtu — the RoCE port runs at the RoCE MTU (4096)

What it checks
    `ibv_devinfo` → `active_mtu` of the RoCE port (only an active port has a meaningful value)
    equals the policy's `roce_mtu` (4096 by default). Without an inventory (analyze): every
    active Ethernet port is judged.

Why it matters
    RoCE MTU 4096 needs an Ethernet MTU of at least 4200 (4096 + RoCE/UDP/IP/Ethernet headers).
    When the netdev MTU is smaller the port drops to `active_mtu 1024` and large-message bandwidth
    falls — and on the path the fault shows up far from its cause: the guest netdev (RW405), the
    VDS (RW303) and the switch ports (RW504) must all carry ≥ 4200 (policy: 9000 / 9216).

How to fix by hand
    ip link set dev <netdev> mtu 9000 (RW405, made persistent); VDS maxMtu 9000 (RW303);
    switch port `mtu 9216` (RW504). The port's active_mtu follows the netdev MTU at once;
    re-check with `ibv_devinfo -d <dev> | grep active_mtu`.

Fix safety
    safe: follows from RW405 / RW303 / RW504; nothing to change here. No plan_fix: the active MTU
    follows the netdev MTU (RW405), the VDS MTU (RW303) and the switch MTU (RW504), whose fixes fix it.
"""

from roce_wizard.checkkit import bad, excerpt, good, hca_section, roce_ports, skip
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
    fix_hint="raise every MTU on the path to >= 4200: netdev (RW405), VDS (RW303), switch (RW504)",
)

ROCE_ETH_OVERHEAD = 104  # 4096 + headers needs >= 4200 on the wire (DOMAIN §4)


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
            where = (f"{nd} itself has MTU {eth_mtu} (< {need})" if isinstance(eth_mtu, int) and eth_mtu < need
                     else f"some MTU on the path is < {need}")
            summary = f"{subject} active_mtu {mtu}, expected {expected}: {where}"
            fix = (f"ip link set dev {nd} mtu {policy.eth_mtu} (RW405, persist it); VDS maxMtu {policy.eth_mtu} (RW303); "
                   f"switch ports mtu {policy.switch_mtu} (RW504) — every hop >= {need}")
        else:
            summary = f"{subject} active_mtu {mtu}, policy expects {expected}"
            fix = f"set roce_mtu in the policy to what the fabric is built for, or the netdev MTU to {expected + ROCE_ETH_OVERHEAD}"
        findings.append(bad(CHECK, facts, summary, observed=observed, expected=expected, excerpt=ev,
                            subject=subject, fix=fix))
    return findings
