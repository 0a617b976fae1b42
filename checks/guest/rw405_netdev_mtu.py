"""RW405 netdev-mtu — the RoCE netdev's MTU is at least the policy's Ethernet MTU

What it checks
    `ip -j addr show` → `mtu` of the RoCE netdev (inventory roce.netdev; in analyze, the netdevs an
    RDMA link binds) is ≥ `eth_mtu` (9000).

Why it matters
    The RoCE MTU (4096) needs an Ethernet MTU ≥ 4200; with the default 1500 the port runs at
    active_mtu 1024 (RW404) and large transfers lose bandwidth. Seed 000 sets 9000 on the VDS and
    in the guest; the guest setting is lost at reboot unless made persistent.

How to fix by hand
        ip link set dev <netdev> mtu 9000
    and make it persistent, whichever the guest uses:
      NetworkManager: nmcli con mod <connection> 802-3-ethernet.mtu 9000; nmcli con up <connection>
      netplan:        `mtu: 9000` under the interface in /etc/netplan/*.yaml; netplan apply
      ifcfg (RHEL 7): MTU=9000 in /etc/sysconfig/network-scripts/ifcfg-<netdev>
    In a VM the VF must allow a guest MTU change (RW304 allowGuestOSMtuChange) and the VDS must
    carry 9000 (RW303).
    Sources: `ip link set dev <if> mtu N` and the probe's `ip -j addr show` — ip-link(8) / ip-address(8), the real
        binary (Debian iproute2); `nmcli con mod <conn> 802-3-ethernet.mtu N`, `nmcli con up` —
        nm-settings-nmcli(5) ("802-3-ethernet.mtu") and nmcli(1) (NetworkManager); netplan `mtu:` and
        `netplan apply` — Netplan's "YAML configuration" reference, https://netplan.readthedocs.io/en/latest/
        _sources/netplan-yaml.md.txt, and netplan(5); ifcfg `MTU=` — initscripts' sysconfig.txt.

Fix safety
    safe: takes effect at once; the link flaps briefly on some drivers. `roce-wizard fix` sets the
    MTU now (`ip link set`) and persists it in the netdev's NetworkManager profile
    (`nmcli con mod <conn> 802-3-ethernet.mtu 9000`); a guest without NetworkManager fails that step
    with a message (persist it in netplan / ifcfg by hand). A netdev that does not exist is manual.
"""

from roce_wizard.checklib.findings import bad, excerpt, failing, good, skip
from roce_wizard.checklib.linux import nm_modify_step, roce_netdevs, safe_netdev
from roce_wizard.commands.handfix import NETDEV, pasteable
from roce_wizard.model import (
    Check,
    Facts,
    Finding,
    FixPlan,
    Policy,
    RebootKind,
    Safety,
    Severity,
    Stage,
    Step,
    TargetKind,
)

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
    return pasteable(lambda: _fix_text(safe_netdev(netdev), int(mtu)), NETDEV)


def _fix_text(netdev: str, mtu: int) -> str:
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


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """MTU now (ip link set) + persisted in NetworkManager, per failing netdev; None when compliant."""
    bad_ones = [f for f in failing(evaluate(facts, policy)) if f.subject]
    if not bad_ones:
        return None
    mtu = int(policy.eth_mtu)
    missing = [f.subject for f in bad_ones if f.observed is None]
    if missing:
        return FixPlan(CHECK.code, facts.target_name, f"{', '.join(missing)} does not exist: find the RoCE netdev",
                       steps=(Step("list the netdevs; set roce.netdev in the inventory to the ConnectX one",
                                   "ip -br link; ibdev2netdev"),),
                       safety=Safety.MANUAL, reboot=RebootKind.NONE)
    steps: list[Step] = []
    for f in bad_ones:
        nd = f.subject
        steps.append(Step(f"set the MTU of {nd} now", f"ip link set dev {safe_netdev(nd)} mtu {mtu}",
                          before=f"mtu {f.observed}", after=f"mtu {mtu}"))
        steps.append(nm_modify_step(nd, [("802-3-ethernet.mtu", str(mtu))], f"MTU {mtu}"))
    names = ", ".join(f.subject for f in bad_ones)
    return FixPlan(CHECK.code, facts.target_name, f"set MTU {mtu} on {names} and make it persistent",
                   steps=tuple(steps), safety=Safety.SAFE, reboot=RebootKind.NONE)
