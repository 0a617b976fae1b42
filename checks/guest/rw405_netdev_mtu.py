"""RW405 netdev-mtu — the RoCE netdev's MTU is at least the policy's Ethernet MTU

What it checks
    `ip -j addr show` → `mtu` of the RoCE netdev (inventory roce.netdev; in analyze, the netdevs an
    RDMA link binds) is ≥ `eth_mtu` (9000).

Why it matters
    The RoCE MTU (4096) needs an Ethernet MTU ≥ 4200; with the default 1500 the port runs at
    active_mtu 1024 (RW404) and large transfers lose bandwidth. The seed sets 9000 on the VDS and
    in the guest; the guest setting is lost at reboot unless made persistent.

How to fix by hand
    ip link set dev <netdev> mtu 9000
    and make it persistent, whichever the guest uses:
      NetworkManager: nmcli con mod <connection> 802-3-ethernet.mtu 9000; nmcli con up <connection>
      netplan:        `mtu: 9000` under the interface in /etc/netplan/*.yaml; netplan apply
      ifcfg (RHEL 7): MTU=9000 in /etc/sysconfig/network-scripts/ifcfg-<netdev>
    In a VM the VF must allow a guest MTU change (RW304 allowGuestOSMtuChange) and the VDS must
    carry 9000 (RW303).

Fix safety
    safe: takes effect at once; the link flaps briefly on some drivers.
"""

from roce_wizard.checkkit import bad, excerpt, good, roce_netdevs, skip
from roce_wizard.model import Check, Facts, Finding, Policy, Severity, Stage, TargetKind

CHECK = Check(
    code="RW405",
    slug="netdev-mtu",
    title="RoCE netdev MTU",
    stage=Stage.GUEST,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("ip_json",),
    optional_probes=("rdma_link", "ibdev2netdev"),
    depends_on=("vm:RW304", "host:RW215"),  # the netdev exists only once the VM has its VF
    fix_hint="ip link set dev <netdev> mtu 9000, and persist it (nmcli / netplan / ifcfg)",
)


def fix_for(netdev: str, mtu: int) -> str:
    return (f"ip link set dev {netdev} mtu {mtu}  # then make it persistent in NetworkManager "
            f"(nmcli con mod <conn> 802-3-ethernet.mtu {mtu}) or netplan (mtu: {mtu}) / ifcfg (MTU={mtu})")


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    names, why = roce_netdevs(facts)
    if not names:
        return [skip(CHECK, facts, f"cannot judge: {why}", expected=policy.eth_mtu)]
    ifaces = {i.get("name"): i for i in facts.need("ip_json").get("interfaces", [])}
    raw = facts.raw.get("ip_json")
    findings = []
    for name in names:
        iface = ifaces.get(name)
        # `ip -j` prints one long JSON line: quote the parsed values rather than that line
        ev = f"{name}: mtu {iface.get('mtu')} state {iface.get('state')}" if iface else excerpt(raw, rf"\b{name}\b")
        if iface is None:
            findings.append(bad(CHECK, facts, f"{name} does not exist (ip addr shows {', '.join(sorted(ifaces))})",
                                observed=None, expected=policy.eth_mtu, excerpt=ev, subject=name,
                                fix="ip -br link  # find the RoCE interface (ibdev2netdev) and set roce.netdev to it"))
            continue
        mtu = iface.get("mtu")
        if isinstance(mtu, int) and mtu >= policy.eth_mtu:
            findings.append(good(CHECK, facts, f"{name} MTU {mtu}", observed=mtu, expected=policy.eth_mtu,
                                 excerpt=ev, subject=name))
        else:
            findings.append(bad(CHECK, facts, f"{name} MTU {mtu}, expected >= {policy.eth_mtu}", observed=mtu,
                                expected=policy.eth_mtu, excerpt=ev, subject=name, fix=fix_for(name, policy.eth_mtu)))
    return findings
