"""RW502 no-drop-priority — the switch's no-drop (lossless) priorities are exactly the RoCE priority

What it checks
    On each RoCE-facing port, the set of priorities the switch treats as no-drop equals
    {pfc_priority} (3 by default): EOS `show priority-flow-control` (the port's Priorities column);
    Onyx `show dcb priority-flow-control` (`Priority Enabled List`, switch-wide); OS10
    `show running-configuration` (the `pfc-cos` of the `pause` classes in the network-qos policy
    the interface's `service-policy input` names); Cumulus `nv show qos roce` (`pfc-priority`).

Why it matters
    PFC pauses only the no-drop priorities. With RoCE's priority missing from the set RoCE is
    dropped under congestion; with extra priorities (seed 001 turned on all eight) one congested
    class pauses everything else and PFC storms and head-of-line blocking follow; with the set on
    another priority than the hosts' pfctx/pfcrx the pair is "half-lossless".

How to fix by hand
    Rollback point first, a config session, save after the re-check:
        EOS:   interface Ethernet3 / priority-flow-control priority 3 no-drop
               (and `no priority-flow-control priority N no-drop` for every other N)
        Onyx:  dcb priority-flow-control priority 3 enable
               no dcb priority-flow-control priority N enable   (switch-wide)
        OS10:  class-map type network-qos roce-pfc3 / match qos-group 3
               policy-map type network-qos roce-pfc / class roce-pfc3 / pause / pfc-cos 3
               interface ethernet1/1/3 / service-policy input type network-qos roce-pfc
        NVUE:  nv set qos roce mode lossless   (PFC on priority 3) ; nv config apply

Sources (every command this check reads and every line its fix emits)
    EOS `show priority-flow-control`, `priority-flow-control priority N no-drop`: seed 004 and the
        Arista EOS User Manual, chapter "Quality of Service" (a copy: https://fdocuments.us/document/
        quality-of-service-arista-networks-2020-02-10-a-section-2715-quality-of.html).
    Onyx `show dcb priority-flow-control`: corpus onyx_show_dcb_pfc/*; `dcb priority-flow-control priority N
        enable`: NVIDIA Onyx User Manual v3.10.4606 LTS, "Priority Flow Control (PFC)",
        https://docs.nvidia.com/networking/display/NVIDIAOnyxUserManualv3104606LTS/Priority+Flow+Control+(PFC).
    OS10 `class-map type network-qos` / `match qos-group`, `policy-map type network-qos` / `class` / `pause` /
        `pfc-cos`, `service-policy input type network-qos`: Dell SmartFabric OS10 User Guide 10.5.0, "Configure RoCE on the switch", https://www.dell.com/support/
        manuals/en-in/dell-emc-smartfabric-os10/smartfabric-os-user-guide-10-5-0/configure-roce-on-the-switch.
    NVUE `nv show qos roce` (pfc-priority): corpus cumulus_nv_show_qos_roce/*; `nv set qos roce mode lossless`
        (PFC on switch priority 3): NVIDIA Cumulus Linux 5.14 User Guide, "RDMA over Converged Ethernet - RoCE", https://docs.nvidia.com/
        networking-ethernet-software/cumulus-linux-514/Layer-1-and-Switch-Ports/Quality-of-Service/
        RDMA-over-Converged-Ethernet-RoCE; `nv config diff` / `nv config apply -y` / `nv config revision`: NVUE Command Reference, "Config
        Commands", https://docs.nvidia.com/networking-ethernet-software/nvue-reference/Config-Commands.
    SONiC `show pfc priority`: corpus sonic_show_pfc/sonic-utilities-796-show-pfc-priority.txt;
        `sudo config interface pfc priority <port> <0-7> on|off`: sonic-utilities config/main.py (public code).

Fix safety
    disruptive: changing no-drop priorities reprograms the port buffers; traffic on the port
    pauses briefly. On Onyx the list is switch-wide: every port changes at once.
"""

from roce_wizard.checklib.findings import bad, good
from roce_wizard.checklib.switch import Item, Selection, kinds, peer_label, port_findings
from roce_wizard.checklib.switch_evidence import evidence_lines
from roce_wizard.checklib.switch_fix import switch_plan, vendor_fix
from roce_wizard.model import (
    Check,
    Evidence,
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
    code="RW502",
    slug="no-drop-priority",
    title="No-drop priorities are exactly the RoCE priority",
    stage=Stage.SWITCH,
    target=TargetKind.SWITCH,
    severity=Severity.FAIL,
    probes=(),
    optional_probes=kinds("pfc"),
    fix_hint="EOS: interface Ethernet3 / priority-flow-control priority 3 no-drop (Onyx: dcb priority-flow-control "
             "priority 3 enable)",
)


def _fix(sel: Selection, item: Item, have: list[int], prio: int) -> str:
    v, extra = sel.vendor, [p for p in have if p != prio]
    if v == "eos":
        lines = ([] if prio in have else [f"priority-flow-control priority {prio} no-drop"]) + [
            f"no priority-flow-control priority {p} no-drop" for p in extra]
        return vendor_fix(v, item.subject, lines)
    if v == "onyx":
        lines = ([] if prio in have else [f"dcb priority-flow-control priority {prio} enable"]) + [
            f"no dcb priority-flow-control priority {p} enable" for p in extra]
        return vendor_fix(v, None, global_lines=lines)
    if v == "os10":
        glob = [f"class-map type network-qos roce-pfc{prio}", f" match qos-group {prio}", "exit",
                "policy-map type network-qos roce-pfc", f" class roce-pfc{prio}", "  pause", f"  pfc-cos {prio}",
                " exit", "exit"]
        return vendor_fix(v, item.subject, ["service-policy input type network-qos roce-pfc"], glob)
    if v == "nvue":
        return vendor_fix(v, None, global_lines=["nv set qos roce mode lossless"])
    if v == "sonic":
        lines = ([] if prio in have else [f"sudo config interface pfc priority {item.subject} {prio} on"]) + [
            f"sudo config interface pfc priority {item.subject} {p} off" for p in extra]
        return vendor_fix(v, None, global_lines=lines)
    return f"make priority {prio} the only no-drop priority on the port"


def _judge(facts: Facts, policy: Policy):
    prio = policy.pfc_priority

    def judge(item: Item, sel: Selection) -> Finding:
        e = item.entry or {}
        have = e.get("no_drop")
        label = f"{item.subject}{peer_label(item)}"
        ev = evidence_lines(facts.raw.get(sel.kind), item, r"Priority Enabled List", r"pfc-cos", r"pfc-priority",
                            r"dcb priority-flow-control priority")
        common = dict(expected=[prio], excerpt=ev, subject=item.subject, probes=(sel.kind,))
        if have is None:
            return Finding(CHECK.code, Status.SKIP, f"{label}: the output does not list the no-drop priorities "
                           "(the elided or per-port-only form)", target=facts.target_name, subject=item.subject,
                           expected=[prio], evidence=[Evidence(sel.kind, facts.commands.get(sel.kind), ev)])
        have = sorted(set(have))
        if have == [prio]:
            return good(CHECK, facts, f"{label}: no-drop on priority {prio} only", observed=have, **common)
        if not have:
            why = "no priority is no-drop" + (" (no network-qos policy with `pause` on the port)"
                                              if sel.vendor == "os10" else "")
        elif prio not in have:
            why = f"no-drop on priority {','.join(map(str, have))}, not on the RoCE priority {prio}"
        else:
            why = (f"no-drop on priorities {','.join(map(str, have))}: only {prio} should be (extra lossless "
                   "classes spread pause storms)")
        scope = " (switch-wide on Onyx)" if sel.vendor == "onyx" else ""
        return bad(CHECK, facts, f"{label}: {why}{scope}", observed=have, fix=_fix(sel, item, have, prio), **common)

    return judge


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    return port_findings(CHECK, facts, "pfc", _judge(facts, policy))


def plan_fix(facts: Facts, policy: Policy, *, failed: list) -> FixPlan | None:
    """One configuration change on this switch for every failing RoCE port (interface ranges), in a
    config session where the vendor has one, read back (pfc) and saved — or rolled back to the
    backup taken first."""
    findings = failed  # the engine's guard: this check's failing findings, never empty
    return switch_plan(CHECK, facts, findings, "pfc", {"no_drop": [policy.pfc_priority]}, f"priority {policy.pfc_priority} the only no-drop priority on the RoCE ports")
