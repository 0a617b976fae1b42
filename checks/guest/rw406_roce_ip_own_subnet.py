"""RW406 roce-ip-own-subnet — the RoCE netdev has an IPv4 in a subnet of its own

What it checks
    `ip -j addr show`: the RoCE netdev has an IPv4 address (equal to the inventory's roce.ip when
    one is given), and no other interface has an IPv4 in an overlapping subnet.

Why it matters
    RoCE v2 is routed by IP: the GID the RDMA stack uses is built from this address (RW407), and
    with no IPv4 there is no RoCE v2 IPv4 GID at all. When another interface (the management
    vmxnet3, say) sits in the same subnet, the kernel may route, ARP and resolve rdma_cm addresses
    through the wrong interface: the seed warns that the IP must differ from the existing
    subnets or an IP conflict appears (seed 000, ref. 15).

How to fix by hand
    ip addr add <roce ip>/<prefix> dev <netdev>
    and persist it: nmcli con mod <conn> ipv4.method manual ipv4.addresses <roce ip>/<prefix>
    (or netplan `addresses: [<roce ip>/<prefix>]`, or ifcfg IPADDR=/PREFIX=).
    On a clash: move the RoCE network (or the other interface) to a subnet of its own.

Fix safety
    safe when the address is new; changing an address in use drops the sessions that use it.
"""

import ipaddress

from roce_wizard.checkkit import bad, good, roce_netdevs, skip
from roce_wizard.model import Check, Facts, Finding, Policy, Severity, Stage, TargetKind

CHECK = Check(
    code="RW406",
    slug="roce-ip-own-subnet",
    title="RoCE IPv4 in its own subnet",
    stage=Stage.GUEST,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("ip_json",),
    optional_probes=("rdma_link", "ibdev2netdev"),
    depends_on=("vm:RW304", "host:RW215"),  # the netdev exists only once the VM has its VF
    fix_hint="ip addr add <roce ip>/<prefix> dev <netdev> (+ persist) in a subnet no other interface uses",
)


def _v4(addrs: list) -> list[ipaddress.IPv4Interface]:
    out = []
    for a in addrs or []:
        try:
            out.append(ipaddress.IPv4Interface(a))
        except ValueError:
            continue
    return out


def _persist(netdev: str, ip: str) -> str:
    return (f"ip addr add {ip} dev {netdev}  # then persist: nmcli con mod <conn> ipv4.method manual "
            f"ipv4.addresses {ip} (or netplan addresses: [{ip}] / ifcfg IPADDR+PREFIX)")


def _judge(facts: Facts, name: str, ifaces: dict) -> Finding:
    t = facts.target
    want = t.roce.ip if t else None
    iface = ifaces.get(name)
    expected = want or "an IPv4 in a subnet of its own"
    if iface is None:
        return bad(CHECK, facts, f"{name} does not exist", observed=None, expected=expected, subject=name,
                   fix="ip -br link  # find the RoCE interface (ibdev2netdev) and set roce.netdev to it")
    mine = _v4(iface.get("ipv4"))
    ev = f"{name}: inet {', '.join(map(str, mine)) or '-'}"
    observed = [str(a) for a in mine]
    if not mine:
        return bad(CHECK, facts, f"{name} has no IPv4 address", observed=observed, expected=expected, excerpt=ev,
                   subject=name, fix=_persist(name, want or "<roce ip>/<prefix>"))
    if want:
        try:
            wanted = ipaddress.IPv4Interface(want)
        except ValueError:
            wanted = None
        has_prefix = "/" in want
        match = [a for a in mine if wanted and (a == wanted if has_prefix else a.ip == wanted.ip)]
        if wanted is not None and not match:
            return bad(CHECK, facts, f"{name} has {', '.join(observed)}, the inventory says {want}", observed=observed,
                       expected=want, excerpt=ev, subject=name,
                       fix=f"ip addr del {mine[0]} dev {name}; " + _persist(name, want))
        mine = match or mine
    clashes = []
    for other, oiface in ifaces.items():
        if other == name or other == "lo" or oiface.get("master") == name or iface.get("master") == other:
            continue
        for a in _v4(oiface.get("ipv4")):
            if a.ip.is_loopback:
                continue
            for m in mine:
                if a.network.overlaps(m.network):
                    clashes.append((other, a, m))
    if clashes:
        other, a, m = clashes[0]
        names = sorted({c[0] for c in clashes})
        evs = ev + "\n" + "\n".join(f"{o}: inet {x}" for o, x, _ in clashes[:4])
        return bad(CHECK, facts, f"{name}'s subnet {m.network} is also used by {', '.join(names)} ({a})",
                   observed={"roce": str(m), "clashes": {o: str(x) for o, x, _ in clashes}},
                   expected="a subnet no other interface uses", excerpt=evs, subject=name,
                   fix=(f"move the RoCE network to a subnet of its own: ip addr del {m} dev {name}; "
                        + _persist(name, "<ip in an unused subnet>/<prefix>")
                        + f"  (or move {other} off {m.network})"))
    return good(CHECK, facts, f"{name} has {', '.join(map(str, mine))}, a subnet no other interface uses",
                observed=observed, expected=expected, excerpt=ev, subject=name,
                details={"ipv4": [str(a) for a in mine]})


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    names, why = roce_netdevs(facts)
    if not names:
        return [skip(CHECK, facts, f"cannot judge: {why}", expected="an IPv4 in a subnet of its own")]
    ifaces = {i.get("name"): i for i in facts.need("ip_json").get("interfaces", [])}
    return [_judge(facts, name, ifaces) for name in names]
