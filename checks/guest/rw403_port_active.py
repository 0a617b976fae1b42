"""RW403 port-active — the RoCE port is PORT_ACTIVE

What it checks
    `ibv_devinfo` → `state:` of the RoCE device's port (the one bound to the inventory's RoCE
    netdev) is `PORT_ACTIVE (4)`. Without an inventory (analyze): every Ethernet port is judged;
    when at least one is active, the others are reported as not judged (they may be unused ports).

Why it matters
    A port that is DOWN carries nothing: ib_send_bw cannot connect and MPI falls back to TCP
    without saying so. On RoCE the port follows the Ethernet link, so the cause is physical or
    upstream: cable/transceiver, switch port, the VDS uplink, or the netdev being down.

How to fix by hand
        ip link set dev <netdev> up; ethtool <netdev> | grep -i 'link detected'
    check the cable / transceiver and the switch port (shutdown? speed?);
    for a guest: the VF's physical uplink on the host (`esxcli network nic list`) and the VDS (RW302).
    Sources: `ip link set dev <if> up` — ip-link(8), the real binary (Debian iproute2); `ethtool <if>` and its
        "Link detected:" line — the real binary (Debian ethtool 6.1); `esxcli network nic list` — corpus
        esxi_nic_list/*; the reads `ibv_devinfo`, `rdma link show`, `ibdev2netdev` — corpus ibv_devinfo/*,
        rdma_link/*, ibdev2netdev/*.

Fix safety
    manual: cabling, switch and vSphere are outside the guest. No plan_fix: the port follows the
    physical link (cable, transceiver, switch port, the VDS uplink), which the tool cannot set.
"""

from roce_wizard.checklib.findings import bad, excerpt, good, shown, skip
from roce_wizard.checklib.linux import hca_section, roce_ports, safe_netdev
from roce_wizard.commands.handfix import NETDEV, pasteable
from roce_wizard.model import Check, Facts, Finding, Policy, Severity, Stage, TargetKind

CHECK = Check(
    code="RW403",
    slug="port-active",
    title="RoCE port active",
    stage=Stage.GUEST,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("ibv_devinfo",),
    optional_probes=("rdma_link", "ibdev2netdev"),
    depends_on=("RW402",),
    fix_hint="bring the link up: netdev up, cable/transceiver, switch port, VDS uplink",
)


def _fix(facts: Facts, netdev: str | None, port: dict) -> str:
    return pasteable(lambda: _fix_text(facts, shown(netdev, safe_netdev, "<netdev>"), port), NETDEV)


def _fix_text(facts: Facts, nd: str, port: dict) -> str:
    steps = []
    if (port.get("phys_state") or "").upper().startswith("DISABLED"):
        steps.append(f"ip link set dev {nd} up  # the port is administratively disabled")
    steps.append(f"ethtool {nd} | grep -i 'link detected'; check the cable/transceiver and the switch port")
    t = facts.target
    if t is None or t.kind is TargetKind.GUEST:
        steps.append(f"in a VM: the VF's uplink on {t.host if t and t.host else 'the ESXi host'} "
                     "(esxcli network nic list) and the VDS uplinks (RW302)")
    return "; ".join(steps)


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    ports, targeted, why = roce_ports(facts)
    if not ports:
        return [skip(CHECK, facts, f"cannot judge: {why}", expected="PORT_ACTIVE")]
    raw = facts.raw.get("ibv_devinfo")
    findings = []
    for dev, port, netdev in ports:
        name, pno = dev["hca_id"], port.get("port", 1)
        subject = f"{name}/{pno}"
        state = port.get("state")
        ev = excerpt(hca_section(raw, name), r"hca_id", r"\bstate:", r"phys_state")
        observed = {"state": state, "phys_state": port.get("phys_state")}
        on = f" ({netdev})" if netdev else ""
        if state == "PORT_ACTIVE":
            findings.append(good(CHECK, facts, f"{subject}{on} is PORT_ACTIVE", observed=observed,
                                 expected="PORT_ACTIVE", excerpt=ev, subject=subject))
        else:
            findings.append(bad(CHECK, facts, f"{subject}{on} is {state or 'in an unknown state'}, not PORT_ACTIVE",
                                observed=observed, expected="PORT_ACTIVE", excerpt=ev, subject=subject,
                                fix=_fix(facts, netdev, port)))
    if not targeted and any(f.status.value == "pass" for f in findings):
        # analyze: an inactive port next to an active one is likely just unused
        for i, f in enumerate(findings):
            if f.status.value != "pass":
                findings[i] = skip(CHECK, facts, f"{f.summary}; fine if it is not the RoCE port "
                                   "(give roce.netdev in the inventory to judge it)", observed=f.observed,
                                   expected="PORT_ACTIVE", evidence=f.evidence, subject=f.subject)
    return findings
