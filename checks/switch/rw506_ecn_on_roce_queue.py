"""RW506 ecn-on-roce-queue — ECN marks the RoCE (lossless) queue on RoCE-facing ports

What it checks
    ECN marking is enabled on the egress queue of the lossless priority (`pfc_priority`, mapped to
    its traffic class) on each RoCE-facing port: EOS `show qos interfaces` (the ECN/WRED column:
    `L` queue-length ECN, `D` disabled); Onyx running config
    (`interface ethernet X traffic-class 3 congestion-control ecn …`); OS10 running config (a
    queuing policy whose class names a `wred` profile holding `random-detect ecn`, attached to the
    interface); Cumulus `nv show qos roce` (`congestion-mode ECN`, `enabled-tc`).

Why it matters
    DCQCN, the RoCE congestion control, reacts to ECN marks. Without them the only brake is PFC:
    congestion spreads backwards as pause storms and victim flows stall. It still works, slower
    and less robustly — a warning, not a failure.

How to fix by hand
    Rollback point first, a config session, save after the re-check:
        EOS:   interface Ethernet3 / tx-queue 3 /
               random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes
        Onyx:  interface ethernet 1/3 traffic-class 3 congestion-control ecn minimum-absolute 150
               maximum-absolute 1500
        OS10:  wred roce-ecn / random-detect ecn /
               random-detect color green minimum-threshold 150 maximum-threshold 1500 drop-probability 100
               class-map type queuing roce-q3 / match queue 3
               policy-map type queuing roce-ecn / class roce-q3 / random-detect roce-ecn
               interface ethernet1/1/3 / service-policy output type queuing roce-ecn
               (`random-detect ecn` typed in the class itself is refused: OS10 has it only in a WRED profile)
        NVUE:  nv set qos roce mode lossless   (PFC, ECN and trust in one) ; nv config apply

Sources (every command this check reads and every line its fix emits)
    EOS `show qos interfaces`, `tx-queue N`, `random-detect ecn minimum-threshold … kbytes
        maximum-threshold … kbytes`: Arista EOS User Manual, chapter "Quality of Service", section "Explicit
        Congestion Notification (ECN)" (a copy: https://fdocuments.us/document/quality-of-service-arista-networks-
        2020-02-10-a-section-2715-quality-of.html); the same keys as `random_detect.ecn` under
        `uc_tx_queues` in Arista AVD's `ethernet_interfaces` schema (public code).
    Onyx `traffic-class N congestion-control ecn minimum-absolute … maximum-absolute …`: NVIDIA Onyx
        User Manual v3.10.4606, "QoS Commands" / "RoCE Commands" (`show roce`: Mode ecn, absolute, Min 150,
        Max 1500), https://docs.nvidia.com/networking/display/nvidiaonyxusermanualv3104606lts/roce+commands
    OS10 `wred NAME`, `random-detect ecn`, `random-detect color green minimum-threshold … maximum-threshold
        … drop-probability …`, `class-map type queuing` / `match queue`, `policy-map type queuing` / `class` /
        `random-detect NAME`, `service-policy output type queuing`: Dell SmartFabric OS10 User Guide 10.5.0,
        "Configure RoCE on the switch", https://www.dell.com/support/manuals/en-in/dell-emc-smartfabric-os10/
        smartfabric-os-user-guide-10-5-0/configure-roce-on-the-switch (steps 2-3); thresholds in KB.
    NVUE `nv show qos roce`: corpus cumulus_nv_show_qos_roce/*; `nv set qos roce mode lossless`: NVIDIA
        Cumulus Linux 5.14 User Guide, "RDMA over Converged Ethernet - RoCE", https://docs.nvidia.com/
        networking-ethernet-software/cumulus-linux-514/Layer-1-and-Switch-Ports/Quality-of-Service/
        RDMA-over-Converged-Ethernet-RoCE ; `nv config diff` / `nv config apply -y` / `nv config revision`:
        NVUE Command Reference, "Config Commands", https://docs.nvidia.com/networking-ethernet-software/
        nvue-reference/Config-Commands
    The `interface …` lines (EOS `interface EthernetN`, Onyx `interface ethernet 1/N`, OS10 `interface
        ethernet1/1/N`) enter each vendor's interface configuration mode: the same manuals above.
    SONiC: no documented ECN command was found to emit: the intent in words (manual).

Fix safety
    safe: marking starts at once; no traffic is dropped by the change.
"""

from roce_wizard.checklib.findings import bad, good
from roce_wizard.checklib.switch import (
    Item,
    Selection,
    kinds,
    lossless_queue,
    peer_label,
    port_findings,
    vendor_of,
)
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

ECN_MIN_KB, ECN_MAX_KB = 150, 1500  # NVIDIA's RoCE defaults (Onyx `show roce`: Min 150 / Max 1500; NVUE 150000-1500000 B)

CHECK = Check(
    code="RW506",
    slug="ecn-on-roce-queue",
    title="ECN on the RoCE queue",
    stage=Stage.SWITCH,
    target=TargetKind.SWITCH,
    severity=Severity.WARN,
    probes=(),
    optional_probes=kinds("ecn"),
    fix_hint="EOS: interface Ethernet3 / tx-queue 3 / random-detect ecn minimum-threshold 150 kbytes "
             "maximum-threshold 1500 kbytes",
)


def _fix(sel: Selection, item: Item, queue: int) -> str:
    v = sel.vendor
    if v == "eos":
        return vendor_fix(v, item.subject, [f"tx-queue {queue}",
                                            "   random-detect ecn minimum-threshold 150 kbytes maximum-threshold "
                                            "1500 kbytes"])
    if v == "onyx":
        return vendor_fix(v, item.subject, [f"traffic-class {queue} congestion-control ecn minimum-absolute 150 "
                                            "maximum-absolute 1500"])
    if v == "os10":  # ECN lives in a WRED profile the queuing class names (Dell OS10 10.5.0 guide, step 2-3)
        glob = ["wred roce-ecn", " random-detect ecn",
                f" random-detect color green minimum-threshold {ECN_MIN_KB} maximum-threshold {ECN_MAX_KB} "
                "drop-probability 100", "exit",
                f"class-map type queuing roce-q{queue}", f" match queue {queue}", "exit",
                "policy-map type queuing roce-ecn", f" class roce-q{queue}", "  random-detect roce-ecn", " exit", "exit"]
        return vendor_fix(v, item.subject, ["service-policy output type queuing roce-ecn"], glob)
    if v == "nvue":
        return vendor_fix(v, None, global_lines=["nv set qos roce mode lossless"])
    return f"enable ECN marking on queue {queue}"


def _judge(facts: Facts, policy: Policy):
    def judge(item: Item, sel: Selection) -> Finding:
        e = item.entry or {}
        queue = lossless_queue(facts, sel.vendor, policy)
        have = sorted(set(e.get("ecn_queues") or []))
        label = f"{item.subject}{peer_label(item)}"
        ev = evidence_lines(facts.raw.get(sel.kind), item, r"ECN", r"random-detect", r"congestion-control",
                            r"enabled-tc", rf"^\s+{queue}\s")
        common = dict(observed=have, expected=f"ECN on queue {queue}", excerpt=ev, subject=item.subject,
                      probes=(sel.kind,))
        if queue in have:
            return good(CHECK, facts, f"{label}: ECN marks queue {queue} (priority {policy.pfc_priority})", **common)
        others = f" (ECN only on queue {','.join(map(str, have))})" if have else ""
        return bad(CHECK, facts, f"{label}: no ECN on queue {queue}, the RoCE priority's queue{others}: DCQCN gets "
                   "no congestion marks", fix=_fix(sel, item, queue), **common)

    return judge


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    return port_findings(CHECK, facts, "ecn", _judge(facts, policy))


def plan_fix(facts: Facts, policy: Policy, *, failed: list) -> FixPlan | None:
    """One configuration change on this switch for every failing RoCE port (interface ranges), in a
    config session where the vendor has one, read back (ecn) and saved — or rolled back to the
    backup taken first."""
    findings = failed  # the engine's guard: this check's failing findings, never empty
    return switch_plan(CHECK, facts, findings, "ecn", {"ecn_queue": lossless_queue(facts, vendor_of(facts) or "", policy)}, "ECN on the RoCE queue of the RoCE ports")
