"""RW503 switch-trust-dscp — RoCE-facing switch ports classify traffic by DSCP

What it checks
    Each RoCE-facing port trusts DSCP (the site policy's `trust`): EOS `show qos interfaces`
    (`Trust Mode: DSCP`); Onyx `qos trust L3` (running-config, or `show qos interface ethernet X`
    `Trust mode: L3`; `both` is accepted); OS10 a `trust-map dscp` on the interface (or in
    `system qos`); Cumulus `nv show qos roce` `trust-mode` including dscp.

Why it matters
    RoCE v2 from a VF is routable and usually untagged: without a VLAN tag there is no PCP, so a
    port trusting CoS/PCP puts every RoCE packet in the default class (priority 0), which is not
    no-drop. PFC is then configured but never used for RoCE.

How to fix by hand
    Rollback point first, a config session, save after the re-check:
        EOS:   interface Ethernet3 / qos trust dscp
        Onyx:  interface ethernet 1/3 qos trust L3
        OS10:  interface ethernet1/1/3 / trust-map dscp default
        NVUE:  nv set qos roce mode lossless ; nv config apply   (RoCE mode sets the port trust,
               PFC on priority 3 and ECN together; there is no `nv set qos roce trust`)

Sources (every command this check reads and every line its fix emits)
    EOS `show qos interfaces` (`Trust Mode:`), `qos trust dscp`: Arista EOS User Manual, chapter "Quality of
        Service", "QoS Data Fields and Traffic Classes" (a copy: https://fdocuments.us/document/quality-of-
        service-arista-networks-2020-02-10-a-section-2715-quality-of.html).
    Onyx `show qos interface ethernet X` (`Trust mode:`), `qos trust [port | L2 | L3 | both]` (default L2):
        NVIDIA Onyx User Manual v3.10.4606 LTS, "QoS Commands",
        https://docs.nvidia.com/networking/display/NVIDIAOnyxUserManualv3104606LTS/QoS+Commands
    OS10 `show running-configuration`, `trust-map dscp default`: Dell SmartFabric OS10 User Guide 10.5.0,
        "Configure RoCE on the switch" ("trust DSCP on fabric links"), https://www.dell.com/support/manuals/
        en-in/dell-emc-smartfabric-os10/smartfabric-os-user-guide-10-5-0/configure-roce-on-the-switch
    NVUE `nv show qos roce` (trust-mode pcp,dscp): corpus cumulus_nv_show_qos_roce/*; `nv set qos roce mode
        lossless` ("Port trust mode" is part of both RoCE modes): NVIDIA Cumulus Linux 5.14 User Guide,
        "RDMA over Converged Ethernet - RoCE", https://docs.nvidia.com/networking-ethernet-software/
        cumulus-linux-514/Layer-1-and-Switch-Ports/Quality-of-Service/RDMA-over-Converged-Ethernet-RoCE ;
        `nv config diff` / `nv config apply -y` / `nv config revision`: NVUE Command Reference, "Config Commands",
        https://docs.nvidia.com/networking-ethernet-software/nvue-reference/Config-Commands
    SONiC: trust is read from its config DB maps, no documented CLI was found to set it: intent in words.

Fix safety
    disruptive: traffic on the port is re-classified at once (its queues change).
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
    TargetKind,
)

CHECK = Check(
    code="RW503",
    slug="switch-trust-dscp",
    title="Switch ports trust DSCP",
    stage=Stage.SWITCH,
    target=TargetKind.SWITCH,
    severity=Severity.FAIL,
    probes=(),
    optional_probes=kinds("trust"),
    fix_hint="EOS: interface Ethernet3 / qos trust dscp (Onyx: qos trust L3; OS10: trust-map dscp default)",
)

NAMES = {"dscp": "DSCP", "pcp": "CoS/PCP (L2)", "none": "nothing (no trust-map)", "untrusted": "nothing (untrusted)",
         "both": "both L2 and L3"}


def _fix(sel: Selection, item: Item) -> str:
    v = sel.vendor
    if v == "eos":
        return vendor_fix(v, item.subject, ["qos trust dscp"])
    if v == "onyx":
        return vendor_fix(v, item.subject, ["qos trust L3"])
    if v == "os10":
        return vendor_fix(v, item.subject, ["trust-map dscp default"])
    if v == "nvue":
        # NVIDIA documents no `nv set qos roce trust`: RoCE mode sets trust with PFC and ECN (Cumulus Linux
        # User Guide, "RDMA over Converged Ethernet - RoCE", the Sources above)
        return vendor_fix(v, None, global_lines=["nv set qos roce mode lossless"])
    return "make the port trust DSCP"


def _judge(facts: Facts, policy: Policy):
    want = policy.trust

    def judge(item: Item, sel: Selection) -> Finding:
        e = item.entry or {}
        trust = e.get("trust")
        label = f"{item.subject}{peer_label(item)}"
        ev = evidence_lines(facts.raw.get(sel.kind), item, r"Trust Mode", r"qos trust", r"trust-map", r"trust-mode")
        common = dict(observed=trust, expected=want, excerpt=ev, subject=item.subject, probes=(sel.kind,))
        if trust == want or (want == "dscp" and trust == "both"):
            note = " (L2 and L3: DSCP for IP traffic)" if trust == "both" else ""
            mapping = f", trust-map {e['trust_map']}" if e.get("trust_map") else ""
            return good(CHECK, facts, f"{label}: trusts {NAMES.get(trust, trust)}{note}{mapping}", **common)
        extra = " — untagged RoCE v2 lands in priority 0, outside the no-drop class" if want == "dscp" else ""
        return bad(CHECK, facts, f"{label}: trusts {NAMES.get(trust, trust or 'unknown')}{extra}", fix=_fix(sel, item),
                   **common)

    return judge


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    return port_findings(CHECK, facts, "trust", _judge(facts, policy))


def plan_fix(facts: Facts, policy: Policy, *, failed: list) -> FixPlan | None:
    """One configuration change on this switch for every failing RoCE port (interface ranges), in a
    config session where the vendor has one, read back (trust) and saved — or rolled back to the
    backup taken first."""
    findings = failed  # the engine's guard: this check's failing findings, never empty
    return switch_plan(CHECK, facts, findings, "trust", {"trust": policy.trust}, f"trust {policy.trust} on the RoCE ports")
