"""RW505 switch-global-pause-off — link-level (802.3x) flow control is off on RoCE-facing ports

What it checks
    Send and receive flow control (global pause) are off on each RoCE-facing port: EOS
    `show flowcontrol` (Send/Receive admin and oper), Onyx `show interfaces ethernet`
    (`Flow-control: receive off send off`), OS10 `show interface` (`Flowcontrol rx off tx off`; in
    the running config, `flowcontrol receive|transmit on`). Cumulus NVUE's RoCE mode manages link
    pause itself: not read there.

Why it matters
    PFC and global pause are mutually exclusive on a port: with link-level pause on, a congested
    lossless queue pauses every class on the link, and Sandia measured global pause collapsing
    under incast. The host side is RW212 (ESXi) / RW410 (Linux).

How to fix by hand
    Rollback point first, a config session, save after the re-check:
        EOS:   interface Ethernet3 / flowcontrol send off / flowcontrol receive off
        Onyx:  interface ethernet 1/3 flowcontrol receive off force
               interface ethernet 1/3 flowcontrol send off force
        OS10:  interface ethernet1/1/3 / flowcontrol receive off / flowcontrol transmit off

Sources (every command this check reads and every line its fix emits)
    EOS `show flowcontrol`, `flowcontrol send off` / `flowcontrol receive off`: the Arista EOS User Manual, chapter "Quality of Service" (a copy: https://fdocuments.us/document/
        quality-of-service-arista-networks-2020-02-10-a-section-2715-quality-of.html).
    Onyx `show interfaces ethernet` (`Flow-control:`): corpus onyx_show_interfaces/*; `interface ethernet X
        flowcontrol receive|send off force`: public Onyx configurations (HPE Shasta CSM "flowcontrol receive off
        force" on ethernet / port-channel interfaces).
    OS10 `show interface` (`Flowcontrol rx off tx off`), `flowcontrol receive off` / `flowcontrol transmit off`:
        Dell SmartFabric OS10 User Guide 10.5.0, "Configure RoCE on the switch", https://www.dell.com/support/
        manuals/en-in/dell-emc-smartfabric-os10/smartfabric-os-user-guide-10-5-0/configure-roce-on-the-switch.
    NVUE / SONiC: not read; no line emitted.

Fix safety
    safe: the port stops honouring and sending 802.3x pause frames; PFC keeps the RoCE class lossless.
"""

from roce_wizard.checklib.findings import bad, good
from roce_wizard.checklib.switch import Item, Selection, kinds, peer_label, port_findings
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
    code="RW505",
    slug="switch-global-pause-off",
    title="Global pause (802.3x) off on switch ports",
    stage=Stage.SWITCH,
    target=TargetKind.SWITCH,
    severity=Severity.FAIL,
    probes=(),
    optional_probes=kinds("flowcontrol"),
    fix_hint="EOS: interface Ethernet3 / flowcontrol send off / flowcontrol receive off",
)


def _fix(sel: Selection, item: Item, rx: bool, tx: bool) -> str:
    v = sel.vendor
    if v == "eos":
        return vendor_fix(v, item.subject, [*(["flowcontrol send off"] if tx else []),
                                            *(["flowcontrol receive off"] if rx else [])])
    if v == "onyx":
        return vendor_fix(v, item.subject, [*(["flowcontrol receive off force"] if rx else []),
                                            *(["flowcontrol send off force"] if tx else [])])
    if v == "os10":
        return vendor_fix(v, item.subject, [*(["flowcontrol receive off"] if rx else []),
                                            *(["flowcontrol transmit off"] if tx else [])])
    return "turn link-level flow control off on the port"


def _judge(facts: Facts, policy: Policy):
    def judge(item: Item, sel: Selection) -> Finding:
        e = item.entry or {}
        rx, tx = e.get("rx"), e.get("tx")
        label = f"{item.subject}{peer_label(item)}"
        ev = evidence_lines(facts.raw.get(sel.kind), item, r"flowcontrol (receive|send|transmit)")
        observed = {"receive": rx, "send": tx}
        expected = {"receive": False, "send": False}
        common = dict(observed=observed, expected=expected, excerpt=ev, subject=item.subject, probes=(sel.kind,))
        if rx is None and tx is None:
            return Finding(CHECK.code, Status.SKIP, f"{label}: the output prints no flow-control state",
                           target=facts.target_name, subject=item.subject, expected=expected)
        if not rx and not tx:
            return good(CHECK, facts, f"{label}: flow control receive off, send off", **common)
        on = " and ".join(w for w, v in (("receive", rx), ("send", tx)) if v)
        return bad(CHECK, facts, f"{label}: link-level flow control {on} is on (global pause and PFC exclude each other)",
                   fix=_fix(sel, item, bool(rx), bool(tx)), **common)

    return judge


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    return port_findings(CHECK, facts, "flowcontrol", _judge(facts, policy))


def plan_fix(facts: Facts, policy: Policy, *, failed: list) -> FixPlan | None:
    """One configuration change on this switch for every failing RoCE port (interface ranges), in a
    config session where the vendor has one, read back (flowcontrol) and saved — or rolled back to the
    backup taken first."""
    findings = failed  # the engine's guard: this check's failing findings, never empty
    return switch_plan(CHECK, facts, findings, "flowcontrol", {"rx": False, "tx": False}, "global pause (802.3x) off on the RoCE ports")
