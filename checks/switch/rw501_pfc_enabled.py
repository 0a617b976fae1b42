"""RW501 pfc-enabled — PFC is on and active on every RoCE-facing switch port

What it checks
    The switch's PFC state on each port a RoCE host is cabled to (the inventory's
    `roce.switch_ports` on the esxi / linux targets): EOS `show priority-flow-control` (the port is
    `E` enabled and `A` active, and `Global PFC : Enabled`); Onyx `show dcb priority-flow-control`
    (`PFC: enabled` and the port's `PFC oper` Enabled); OS10 `show running-configuration`
    (`priority-flow-control mode on` on the interface); Cumulus `nv show qos roce` (mode lossless
    with a PFC priority). `analyze` judges every port the pasted output shows.

Why it matters
    The host pauses its lossless priority only when the switch sends PFC pause frames, and the
    switch honours the host's pause frames only with PFC on the port. Without PFC on the port the
    "lossless" class is lossy exactly there: under incast the switch drops RoCE packets and every
    drop costs a retransmission timeout (Sandia: throughput collapses).

How to fix by hand
    Save the running config first (rollback point), change it in a config session, save after the
    re-check passes. Per port:
        EOS:   configure session roce-wizard / interface Ethernet3 / priority-flow-control on / commit
        Onyx:  dcb priority-flow-control enable force   (once, switch-wide)
               interface ethernet 1/3 dcb priority-flow-control mode on force
        OS10:  interface ethernet1/1/3 / priority-flow-control mode on
        NVUE:  nv set qos roce mode lossless ; nv config apply
    Each failing port's finding carries the full command sequence for its switch.

Sources (every command this check reads and every line its fix emits)
    EOS `show priority-flow-control`, `priority-flow-control on`: seed 004 (a real EOS output) and the
        Arista EOS User Manual, chapter "Quality of Service" (a copy: https://fdocuments.us/document/
        quality-of-service-arista-networks-2020-02-10-a-section-2715-quality-of.html).
    EOS `configure session <name>` … `commit`: EOS configuration sessions, as Arista's own Ansible
        cliconf uses them (eos_use_sessions), https://docs.ansible.com/ansible/latest/plugins/cliconf/eos.html;
        `interface EthernetN`: the EOS User Manual above.
    Onyx `show dcb priority-flow-control`: corpus onyx_show_dcb_pfc/*; `dcb priority-flow-control enable force`,
        `interface ethernet X dcb priority-flow-control mode on force`: NVIDIA Onyx User Manual v3.10.4606 LTS, "Priority Flow Control (PFC)",
        https://docs.nvidia.com/networking/display/NVIDIAOnyxUserManualv3104606LTS/Priority+Flow+Control+(PFC);
        the `force` forms as public Onyx running configs print them (HPE Shasta CSM Onyx guides, Mellanox
        ansible onyx_pfc_interface tests).
    OS10 `show running-configuration`, `priority-flow-control mode on`: Dell SmartFabric OS10 User Guide 10.5.0, "Configure RoCE on the switch", https://www.dell.com/support/
        manuals/en-in/dell-emc-smartfabric-os10/smartfabric-os-user-guide-10-5-0/configure-roce-on-the-switch.
    NVUE `nv show qos roce`: corpus cumulus_nv_show_qos_roce/*; `nv set qos roce mode lossless`: NVIDIA Cumulus Linux 5.14 User Guide, "RDMA over Converged Ethernet - RoCE", https://docs.nvidia.com/
        networking-ethernet-software/cumulus-linux-514/Layer-1-and-Switch-Ports/Quality-of-Service/
        RDMA-over-Converged-Ethernet-RoCE;
        `nv config diff` / `nv config apply -y` / `nv config revision`: NVUE Command Reference, "Config
        Commands", https://docs.nvidia.com/networking-ethernet-software/nvue-reference/Config-Commands.
    SONiC `show pfc priority`: corpus sonic_show_pfc/*; `sudo config interface pfc priority <port> <0-7> on|off`:
        sonic-utilities config/main.py ('pfc priority' command, public code).

Fix safety
    disruptive: enabling PFC renegotiates the port's flow control; traffic on the port may see a
    brief pause. Make the change in a maintenance window or one port at a time.
"""

from roce_wizard.checklib.findings import bad, good
from roce_wizard.checklib.switch import ALL_PORTS, Item, Selection, kinds, peer_label, port_findings
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
    TargetKind,
)

CHECK = Check(
    code="RW501",
    slug="pfc-enabled",
    title="PFC on every RoCE-facing switch port",
    stage=Stage.SWITCH,
    target=TargetKind.SWITCH,
    severity=Severity.FAIL,
    probes=(),
    optional_probes=kinds("pfc"),
    fix_hint="EOS: interface Ethernet3 / priority-flow-control on (Onyx: dcb priority-flow-control mode on force)",
)

EXPECTED = "PFC enabled and active"


def _fix(sel: Selection, item: Item, prio: int) -> str:
    v = sel.vendor
    if v == "eos":
        return vendor_fix(v, item.subject, ["priority-flow-control on"])
    if v == "onyx":
        glob = ["dcb priority-flow-control enable force"] if sel.switch.get("global") is False else []
        return vendor_fix(v, item.subject, ["dcb priority-flow-control mode on force"], glob)
    if v == "os10":
        return vendor_fix(v, item.subject, ["priority-flow-control mode on"])
    if v == "nvue":
        return vendor_fix(v, None, global_lines=["nv set qos roce mode lossless"])
    if v == "sonic":
        return vendor_fix(v, None, global_lines=[f"sudo config interface pfc priority {item.subject} {prio} on"])
    return "enable PFC on the port in the switch's configuration"


def _judge(facts: Facts, policy: Policy):
    def judge(item: Item, sel: Selection) -> Finding:
        e = item.entry or {}
        enabled, active = e.get("pfc_enabled"), e.get("pfc_active")
        observed = {"enabled": enabled, "active": active}
        for k in ("admin", "oper", "mode"):
            if e.get(k) is not None:
                observed[k] = e[k]
        ev = evidence_lines(facts.raw.get(sel.kind), item, r"Global PFC", r"^PFC:", r"dcb priority-flow-control enable",
                            r"^\s*mode\s", r"pfc-priority")
        label = f"{item.subject}{peer_label(item)}"
        common = dict(observed=observed, expected=EXPECTED, excerpt=ev, subject=item.subject, probes=(sel.kind,))
        if enabled and active is not False:
            how = f" (admin {e['admin']}, oper {e.get('oper')})" if sel.vendor == "onyx" and e.get("admin") else ""
            return good(CHECK, facts, f"{label}: PFC on{' and active' if active else ''}{how}", **common)
        if enabled:
            why = "PFC is enabled but not active (no no-drop priority on it, or the link is down)"
            return bad(CHECK, facts, f"{label}: {why}", fix=_fix(sel, item, policy.pfc_priority), **common)
        if sel.switch.get("global") is False:
            why = "PFC is disabled switch-wide" + (" (`PFC: disabled`)" if sel.vendor == "onyx" else " (Global PFC)")
        elif sel.vendor == "nvue":
            why = f"RoCE is in {e.get('mode') or 'an unknown'} mode with no PFC priority (`nv show qos roce`)"
        elif item.subject == ALL_PORTS:
            why = "PFC is not turned on"
        else:
            why = "PFC is off on this port" + (f" (admin {e['admin']}, oper {e.get('oper')})" if e.get("oper") else "")
        return bad(CHECK, facts, f"{label}: {why}", fix=_fix(sel, item, policy.pfc_priority), **common)

    return judge


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    return port_findings(CHECK, facts, "pfc", _judge(facts, policy))


def plan_fix(facts: Facts, policy: Policy, *, failed: list) -> FixPlan | None:
    """One configuration change on this switch for every failing RoCE port (interface ranges), in a
    config session where the vendor has one, read back (pfc) and saved — or rolled back to the
    backup taken first."""
    findings = failed  # the engine's guard: this check's failing findings, never empty
    return switch_plan(CHECK, facts, findings, "pfc", {"pfc_enabled": True}, "PFC on the RoCE ports")
