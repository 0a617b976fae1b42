"""RW406 roce-ip-own-subnet — the RoCE netdev has an IPv4 in a subnet of its own

What it checks
    `ip -j addr show`: the RoCE netdev has an IPv4 address (equal to the inventory's roce.ip when
    one is given), and no other interface has an IPv4 in an overlapping subnet.

Why it matters
    RoCE v2 is routed by IP: the GID the RDMA stack uses is built from this address (RW407), and
    with no IPv4 there is no RoCE v2 IPv4 GID at all. When another interface (the management
    vmxnet3, say) sits in the same subnet, the kernel may route, ARP and resolve rdma_cm addresses
    through the wrong interface: seed 000 warns that the IP must differ from the existing
    subnets or an IP conflict appears (seed 000, ref. 15).

How to fix by hand
        ip addr add <roce ip>/<prefix> dev <netdev>
    and persist it:
        nmcli con mod <conn> ipv4.method manual ipv4.addresses <roce ip>/<prefix>
    (or netplan `addresses: [<roce ip>/<prefix>]`, or ifcfg IPADDR=/PREFIX=).
    On a clash: move the RoCE network (or the other interface) to a subnet of its own.
    Sources: `ip addr add|del <ip>/<prefix> dev <if>` and `ip -j addr show` — ip-address(8), the real binary
        (Debian iproute2); `nmcli con mod <conn> ipv4.method manual ipv4.addresses …` — nm-settings-nmcli(5)
        (NetworkManager); netplan `addresses:` — Netplan's "YAML configuration" reference,
        https://netplan.readthedocs.io/en/latest/_sources/netplan-yaml.md.txt; ifcfg IPADDR= / PREFIX= —
        initscripts' sysconfig.txt.

Fix safety
    safe when the address is new: `roce-wizard fix` adds the inventory's roce.ip now (ip addr add)
    and persists it in the netdev's NetworkManager profile (ipv4.method manual, ipv4.addresses).
    disruptive when the netdev carries another address: it is replaced, which drops the sessions
    that use it. manual (steps shown, never run) when the inventory gives no roce.ip, when that
    address's subnet is used by another interface, or on a clash: which network moves is a
    site decision.
"""

import ipaddress

from roce_wizard.checklib.findings import bad, failing, good, skip
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
    return pasteable(lambda: _persist_text(safe_netdev(netdev), ip), NETDEV)


def _persist_text(netdev: str, ip: str) -> str:
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
                       fix=pasteable(lambda: f"ip addr del {mine[0]} dev {safe_netdev(name)}; ", NETDEV)
                       + _persist(name, want))
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
                   fix=(pasteable(lambda: f"move the RoCE network to a subnet of its own: ip addr del {m} dev "
                                          f"{safe_netdev(name)}; ", NETDEV)
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


def _clashes(ifaces: dict, name: str, net: ipaddress.IPv4Network) -> list[tuple[str, ipaddress.IPv4Interface]]:
    iface = ifaces.get(name) or {}
    out = []
    for other, oiface in ifaces.items():
        if other in (name, "lo") or oiface.get("master") == name or iface.get("master") == other:
            continue
        out += [(other, a) for a in _v4(oiface.get("ipv4")) if not a.ip.is_loopback and a.network.overlaps(net)]
    return out


def _manual(facts: Facts, summary: str, steps: list[Step]) -> FixPlan:
    return FixPlan(CHECK.code, facts.target_name, summary, steps=tuple(steps), safety=Safety.MANUAL,
                   reboot=RebootKind.NONE)


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """Add the inventory's roce.ip now + persist it; manual without roce.ip or on a subnet clash."""
    bad_ones = [f for f in failing(evaluate(facts, policy)) if f.subject]
    if not bad_ones:
        return None
    f = bad_ones[0]
    name = f.subject
    ifaces = {i.get("name"): i for i in facts.need("ip_json").get("interfaces", [])}
    if name not in ifaces:
        return _manual(facts, f"{name} does not exist: find the RoCE netdev",
                       [Step("list the netdevs; set roce.netdev in the inventory to the ConnectX one",
                             "ip -br link; ibdev2netdev")])
    nd = safe_netdev(name)
    mine = _v4(ifaces[name].get("ipv4"))
    t = facts.target
    want = None
    if t is not None and t.roce.ip:
        try:
            want = ipaddress.IPv4Interface(t.roce.ip)
        except ValueError:
            want = None
    if want is not None and "/" not in (t.roce.ip or ""):
        # the inventory gave a bare address: keep the prefix the netdev has, else manual
        same = next((a for a in mine if a.ip == want.ip), None)
        want = same if same is not None else None
    if isinstance(f.observed, dict) and f.observed.get("clashes"):
        # the RoCE address is right (or the inventory does not say): the other interface's address moves
        steps = []
        for other, addr in _clashes(ifaces, name, ipaddress.IPv4Interface(f.observed["roce"]).network):
            keep = [str(a) for a in _v4(ifaces[other].get("ipv4")) if a != addr]
            steps.append(Step(f"remove {addr} from {other} now", f"ip addr del {addr} dev {safe_netdev(other)}",
                              before=str(addr), after="-"))
            steps.append(nm_modify_step(other, [("ipv4.addresses", ",".join(keep))], f"the addresses {', '.join(keep) or '-'}",
                                        before=", ".join(str(a) for a in _v4(ifaces[other].get("ipv4")))))
        return _manual(facts, f"{name}'s subnet is also used by {', '.join(sorted(f.observed['clashes']))}: move that "
                       f"address off the RoCE subnet (shown), or move the RoCE network to a subnet of its own", steps)
    if want is None:
        return _manual(facts, f"{name} needs an IPv4 in a subnet of its own: the inventory gives no roce.ip",
                       [Step(f"add the RoCE address to {name} (choose one in an unused subnet; put it in the "
                             "inventory's roce.ip)", f"ip addr add <roce ip>/<prefix> dev {nd}"),
                        Step("persist it", "nmcli con mod <conn> ipv4.method manual ipv4.addresses "
                             "<roce ip>/<prefix>")])
    clash = _clashes(ifaces, name, want.network)
    steps: list[Step] = []
    for old in mine:
        steps.append(Step(f"remove {old} from {name} now (replaced by the inventory's {want})",
                          f"ip addr del {old} dev {nd}", before=str(old), after="-"))
    steps.append(Step(f"add {want} to {name} now", f"ip addr add {want} dev {nd}",
                      before=", ".join(map(str, mine)) or "-", after=str(want)))
    steps.append(nm_modify_step(name, [("ipv4.method", "manual"), ("ipv4.addresses", str(want))], f"address {want}",
                                before=", ".join(map(str, mine)) or "-"))
    if clash:
        return _manual(facts, f"the inventory's {want} is in a subnet {', '.join(sorted({o for o, _ in clash}))} "
                       "also uses: fix the inventory or move that interface first", steps)
    safety = Safety.DISRUPTIVE if mine else Safety.SAFE
    replaced = f" (replaces {', '.join(map(str, mine))}: sessions on it drop)" if mine else ""
    return FixPlan(CHECK.code, facts.target_name, f"give {name} the inventory's {want}, now and at every boot"
                   + replaced, steps=tuple(steps), safety=safety, reboot=RebootKind.NONE)
