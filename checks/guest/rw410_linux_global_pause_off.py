"""RW410 linux-global-pause-off — 802.3x global pause is off on the RoCE netdev

What it checks
    `ethtool -a <netdev>` prints `RX: off` and `TX: off` — on bare metal (the PF). In a VF guest
    the check is n/a (skip with the reason): an mlx5 VF cannot read or set port pause — the kernel's
    mlx5e only lets the port owner change it and returns EOPNOTSUPP to a VF (Linux commit
    "net/mlx5e: Only support tx/rx pause setting for port owner", Huy Nguyen, 2019, in stable 4.4+),
    so what `ethtool -a` prints there is not the port's state. Global pause then belongs to the
    PF on the ESXi host (RW212), like PFC and trust (RW409).

Why it matters
    Global pause and PFC are mutually exclusive: global pause stops every priority on the link,
    so one congested flow stalls all traffic, and under incast it collapses throughput (seed 001:
    PFC excellent, global pause poor). Lossless RoCE uses PFC on one priority (RW409 / RW209).

How to fix by hand
    (bare metal) ethtool -A <netdev> rx off tx off
    and persist it: NetworkManager ≥ 1.32: nmcli con mod <conn> ethtool.pause-rx off ethtool.pause-tx off
    (or a udev rule / networkd-dispatcher hook running the same ethtool command).
    On mlx5, enabling PFC with mlnx_qos (RW409) also turns global pause off.
    Sources: `ethtool -a` / `ethtool -A <if> rx off tx off` — ethtool(8) and the real binary
    (Debian ethtool), corpus ethtool_pause/eth03-global-pause-rx-tx-on-tabs.txt; the NetworkManager
    keys — nm-settings-nmcli(5) "ethtool.pause-rx", "ethtool.pause-tx" (NetworkManager 1.32).

Fix safety
    safe: applies at once; the link may renegotiate briefly. `roce-wizard fix` runs ethtool -A now
    and persists it in the netdev's NetworkManager profile (ethtool.pause-rx/-tx off, NetworkManager
    >= 1.32); a guest without NetworkManager fails that step with a message (persist by hand).
"""

from roce_wizard.checklib.findings import bad, excerpt, failing, good, shown, skip
from roce_wizard.checklib.linux import nm_modify_step, safe_netdev
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
    code="RW410",
    slug="linux-global-pause-off",
    title="Global pause off (Linux)",
    stage=Stage.GUEST,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=(),
    # n/a in a VF guest (it never reads pause there): optional so the guest gets its n/a finding
    optional_probes=("ethtool_pause",),
    depends_on=("vm:RW304", "host:RW215"),  # the netdev exists only once the VM has its VF
    fix_hint="ethtool -A <if> rx off tx off, and persist it",
)


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    t = facts.target
    if t is not None and t.kind is TargetKind.GUEST:
        host = t.host or "the ESXi host"
        return [skip(CHECK, facts, "n/a in a VF guest: an mlx5 VF cannot read or set port pause (EOPNOTSUPP); "
                     f"global pause is the PF's (RW212 on {host})", expected="n/a", probes=("ethtool_pause",))]
    pause = facts.need("ethtool_pause") or {}
    netdev = (facts.target.roce.netdev if facts.target else None) or pause.get("interface")
    ifname = netdev or "<if>"
    rx, tx = pause.get("rx"), pause.get("tx")
    observed = {"rx": rx, "tx": tx, "autoneg": pause.get("autoneg")}
    expected = {"rx": False, "tx": False}
    ev = excerpt(facts.raw.get("ethtool_pause"), r"^\s*(RX|TX|Autonegotiate)\s*:")
    if rx is None and tx is None:
        return [skip(CHECK, facts, f"cannot read the pause settings of {ifname}", expected=expected, excerpt=ev)]
    on = [name for name, value in (("RX", rx), ("TX", tx)) if value]
    if on:
        return [bad(CHECK, facts, f"global pause is on ({'/'.join(on)}) on {ifname}: it conflicts with PFC", observed=observed,
                    expected=expected, excerpt=ev, subject=ifname,
                    fix=pasteable(lambda: f"ethtool -A {shown(netdev, safe_netdev, '<if>')} rx off tx off  # persist: "
                                  "nmcli con mod <conn> ethtool.pause-rx off ethtool.pause-tx off (NetworkManager "
                                  ">= 1.32), or a udev / networkd-dispatcher hook", NETDEV))]
    return [good(CHECK, facts, f"global pause off on {ifname}", observed=observed, expected=expected, excerpt=ev,
                 subject=ifname)]


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """ethtool -A rx off tx off now + ethtool.pause-* off in NetworkManager; None when compliant."""
    bad_ones = [f for f in failing(evaluate(facts, policy)) if f.subject and f.subject != "<if>"]
    if not bad_ones:
        return None
    f = bad_ones[0]
    nd = f.subject
    on = {True: "on", False: "off", None: "?"}
    before = f"rx {on[(f.observed or {}).get('rx')]} tx {on[(f.observed or {}).get('tx')]}"
    return FixPlan(CHECK.code, facts.target_name, f"global pause off on {nd}, now and at every boot",
                   steps=(Step(f"turn global pause off on {nd} now", f"ethtool -A {safe_netdev(nd)} rx off tx off",
                               before=before, after="rx off tx off"),
                          nm_modify_step(nd, [("ethtool.pause-rx", "off"), ("ethtool.pause-tx", "off")],
                                         "global pause off")),
                   safety=Safety.SAFE, reboot=RebootKind.NONE)
