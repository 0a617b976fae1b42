"""RW504 switch-mtu — RoCE-facing switch ports carry jumbo frames bigger than every host MTU

What it checks
    The MTU of each RoCE-facing port is at least the policy's `switch_mtu` (9216) and larger than
    the hosts' MTU (`eth_mtu`, 9000; and, when the run also judged a bare-metal host's netdev
    (RW405), that host's actual MTU). EOS `show interfaces` prints `Ethernet MTU 9214 bytes` on a
    switchport and `IP MTU 1500 bytes` on a routed port: the switchport's Ethernet MTU is read on L2
    ports, the IP MTU on routed ones (that is what `mtu` sets there). EOS caps the MTU at 9214 on most
    platforms: 9214 on EOS meets the policy, and the finding says so. Onyx `show interfaces ethernet`
    (`MTU: 9216 bytes(Maximum packet size 9238 bytes)`), OS10 `show interface` (`MTU 9216 bytes`;
    from the running config, an interface without `mtu` has OS10's default 1532), Cumulus
    `nv show interface` (`link.mtu`).

Why it matters
    RoCE MTU 4096 needs an Ethernet MTU of at least 4200 on every hop, and a 9000-byte host frame
    needs a switch MTU above 9000 plus headers. A smaller switch hop silently drops jumbo frames; it
    never lowers the hosts' `active_mtu` (that follows each host's own netdev, RW404), so only this
    check and a measurement across the hop (validate stage) find it — far from its cause.

How to fix by hand
    Rollback point first, a config session, save after the re-check:
        EOS:   interface Ethernet3 / mtu 9214     (EOS' maximum; meets the 9216 policy)
        Onyx:  interface ethernet 1/3 mtu 9216 force
        OS10:  interface ethernet1/1/3 / mtu 9216
        NVUE:  nv set interface swp3 link mtu 9216 ; nv config apply

Sources (every command this check reads and every line its fix emits)
    EOS `show interfaces` (`Ethernet MTU` / `IP MTU`), `mtu N`: the interface `mtu` as Arista's Ansible collection
        drives it ("MTU for a specific interface ... between 576 and 9216", arista.eos.eos_interfaces,
        https://docs.ansible.com/ansible/4/collections/arista/eos/eos_interfaces_module.html); the 9214 cap:
        no Arista page found that states it (EOS prints `Ethernet MTU 9214 bytes` on a switchport by
        default; no vendor document states the cap, and the corpus has no EOS capture of it).
    Onyx `show interfaces ethernet`: corpus onyx_show_interfaces/*; `interface ethernet X mtu 9216 force`:
        public Onyx running configs (`interface ethernet 1/1 mtu 9216 force`, HPE Shasta CSM guides).
    OS10 `show interface` (`MTU 9216 bytes`), `mtu 9216`: Dell's own Ansible collection dellemc.os10, role
        os10_interface (an interface's `mtu`, rendered as OS10's interface `mtu` line; public code). No Dell
        user-guide page for the command was found in this pass.
    NVUE `nv show interface`, `nv set interface swpN link mtu 9216`: NVIDIA Cumulus Linux 5.14 User Guide,
        "Switch Port Attributes" (MTU), https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-514/
        Layer-1-and-Switch-Ports/Interface-Configuration-and-Management/Switch-Port-Attributes ; `nv config diff` / `nv config apply -y` / `nv config revision`: NVUE Command Reference, "Config
        Commands", https://docs.nvidia.com/networking-ethernet-software/nvue-reference/Config-Commands.

Fix safety
    disruptive: changing the MTU flaps the link on some platforms (Onyx needs `force` for that).
"""

from typing import Any

from roce_wizard.checklib.findings import bad, good
from roce_wizard.checklib.switch import Item, Selection, kinds, peer_label, port_findings, vendor_of
from roce_wizard.checklib.switch_evidence import evidence_lines
from roce_wizard.checklib.switch_fix import switch_plan, vendor_fix
from roce_wizard.model import (
    Check,
    Facts,
    Finding,
    FixPlan,
    Policy,
    Severity,
    Stage,
    Status,
    TargetKind,
)

CHECK = Check(
    code="RW504",
    slug="switch-mtu",
    title="Switch port MTU (jumbo, above every host MTU)",
    stage=Stage.SWITCH,
    target=TargetKind.SWITCH,
    severity=Severity.FAIL,
    probes=(),
    optional_probes=kinds("mtu"),
    fix_hint="EOS: interface Ethernet3 / mtu 9214 (Onyx: mtu 9216 force; OS10: mtu 9216)",
)

EOS_MAX_MTU = 9214  # EOS refuses larger values on most platforms


def required_mtu(vendor: str, policy: Policy) -> int:
    return min(policy.switch_mtu, EOS_MAX_MTU) if vendor == "eos" else policy.switch_mtu


def _fix(sel: Selection, item: Item, want: int) -> str:
    v = sel.vendor
    if v == "eos":
        return vendor_fix(v, item.subject, [f"mtu {want}"])
    if v == "onyx":
        return vendor_fix(v, item.subject, [f"mtu {want} force"])
    if v == "os10":
        return vendor_fix(v, item.subject, [f"mtu {want}"])
    if v == "nvue":
        return vendor_fix(v, None, global_lines=[f"nv set interface {item.subject} link mtu {want}"])
    return f"set the port MTU to {want}"


def _judge(facts: Facts, policy: Policy):
    def judge(item: Item, sel: Selection) -> Finding:
        e = item.entry or {}
        mtu, kind = e.get("mtu"), e.get("mtu_kind")
        want = required_mtu(sel.vendor, policy)
        label = f"{item.subject}{peer_label(item)}"
        what = {"ip": "IP MTU (routed port)", "ethernet": "MTU", "configured": "configured mtu",
                "default": "MTU (not configured: the vendor default)"}.get(kind or "", "MTU")
        ev = evidence_lines(facts.raw.get(sel.kind), item, r"\bMTU\b", r"^\s*mtu\b")
        expected = {"min": want, "above_host_mtu": policy.eth_mtu}
        details: dict[str, Any] = {"mtu": mtu, "peer": item.peer, "peer_kind": item.peer_kind, "nic": item.nic}
        common = dict(observed=mtu, expected=expected, excerpt=ev, subject=item.subject, probes=(sel.kind,),
                      details=details)
        if mtu is None:
            return Finding(CHECK.code, Status.SKIP, f"{label}: the output prints no MTU for it",
                           target=facts.target_name, subject=item.subject, expected=expected)
        cap = (f" (EOS' maximum {EOS_MAX_MTU}: meets the {policy.switch_mtu} policy)"
               if sel.vendor == "eos" and want <= mtu < policy.switch_mtu else "")
        if mtu >= want and mtu > policy.eth_mtu:
            return good(CHECK, facts, f"{label}: {what} {mtu}{cap}", **common)
        why = f"{what} {mtu} is below {want}" if mtu < want else f"{what} {mtu} is not above the host MTU {policy.eth_mtu}"
        if mtu <= policy.eth_mtu:
            why += f" — {policy.eth_mtu}-byte host frames are dropped here"
        return bad(CHECK, facts, f"{label}: {why}", fix=_fix(sel, item, want), **common)

    return judge


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    return port_findings(CHECK, facts, "mtu", _judge(facts, policy))


def compare_host_mtus(own: list[Finding], everything: list[Finding]) -> list[Finding]:
    """A switch port that passed must still be above the MTU its bare-metal host actually uses (RW405)."""
    out: list[Finding] = []
    host_mtu: dict[str, int] = {}
    for f in everything:
        if f.check == "RW405" and isinstance(f.observed, int) and f.status is Status.PASS:
            host_mtu[f.target] = max(host_mtu.get(f.target, 0), f.observed)
    for f in own:
        peer, mtu = f.details.get("peer"), f.details.get("mtu")
        if f.status is not Status.PASS or not peer or peer not in host_mtu or not isinstance(mtu, int):
            continue
        if host_mtu[peer] >= mtu:
            out.append(Finding(CHECK.code, Status.FAIL, target=f.target, subject=f.subject,
                               summary=f"{f.subject}: MTU {mtu} is not above {peer}'s MTU {host_mtu[peer]} (RW405): "
                                       "its largest frames are dropped at the switch",
                               observed={"switch": mtu, "host": host_mtu[peer]},
                               expected=f"switch MTU > {host_mtu[peer]}",
                               fix=f"raise the switch port's MTU above {host_mtu[peer]} (see the RW504 fix for the "
                                   f"vendor's syntax), or lower {peer}'s MTU to the policy's eth_mtu",
                               details={"peer": peer}))
    return out


compare_targets = compare_host_mtus  # the engine's cross-target hook


def plan_fix(facts: Facts, policy: Policy, *, failed: list) -> FixPlan | None:
    """One configuration change on this switch for every failing RoCE port (interface ranges), in a
    config session where the vendor has one, read back (mtu) and saved — or rolled back to the
    backup taken first."""
    findings = failed  # the engine's guard: this check's failing findings, never empty
    return switch_plan(CHECK, facts, findings, "mtu", {"mtu_min": required_mtu(vendor_of(facts) or "", policy)}, f"MTU {required_mtu(vendor_of(facts) or '', policy)} on the RoCE ports")
