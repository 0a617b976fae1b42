"""RW212 global-pause-off — 802.3x global pause is off on the RoCE vmnics

What it checks
    `esxcli network nic pauseParams list` → `Pause RX` and `Pause TX` are false on every RoCE
    vmnic (the inventory's roce.vmnics; with no inventory every nmlx5_core vmnic of
    `esxcli network nic list`, or every NIC listed when there is no nic list). When nmlx5_core
    already has pfctx set, global pause still on means the PFC setting is not in effect yet.

Why it matters
    PFC and global pause are mutually exclusive on a port: while global pause is on, the port
    pauses ALL traffic on congestion and the RoCE priority gets no lossless treatment of its own.
    Sandia's incast test (seed 001) shows global pause collapsing throughput where PFC holds.
    ESXi 8 + ConnectX-5 comes up with global pause on by default.

How to fix by hand
    Setting pfctx/pfcrx in nmlx5_core (RW209) turns global pause off at the next reboot. Until
    then, or without PFC, per vmnic:
        esxcli network nic pauseParams set -n vmnicN -r false -t false

Fix safety
    safe: takes effect immediately, no reboot; the link may renegotiate (a short blip).
    The tool turns pause off (`pauseParams set -n vmnicN -r false -t false`) only on RoCE vmnics
    of a host whose nmlx5_core has PFC (pfctx) set; without PFC there is nothing it runs here: the
    fix follows from RW209 (PFC at driver load turns global pause off after the reboot), and
    turning pause off first would leave the port with no flow control at all.
"""

import re

from roce_wizard.checkkit import bad, excerpt, failing, good, module_params, safe_vmnic, skip
from roce_wizard.handfix import VMNIC, pasteable
from roce_wizard.model import (
    Check,
    Evidence,
    Facts,
    Finding,
    FixPlan,
    MissingFact,
    Policy,
    RebootKind,
    Safety,
    Severity,
    Stage,
    Step,
    TargetKind,
)

CHECK = Check(
    code="RW212",
    slug="global-pause-off",
    title="Global pause off on RoCE ports",
    stage=Stage.ESXI,
    target=TargetKind.ESXI,
    severity=Severity.FAIL,
    probes=("esxi_pause_params",),
    optional_probes=("esxi_module_params", "esxi_nic_list", "esxi_esxcfg_nics"),
    depends_on=(),
    reboot=RebootKind.NONE,
    fix_hint="esxcli network nic pauseParams set -n vmnicN -r false -t false (or PFC via RW209 + reboot)",
)


def _pfc_configured(facts: Facts) -> bool | None:
    """Whether nmlx5_core has pfctx set (None when the module params were not read)."""
    if facts.get("esxi_module_params") is None:
        return None
    options = module_params(facts)
    value = options.get("pfctx")
    try:
        return value is not None and int(str(value), 0) != 0
    except ValueError:
        return value is not None


def _candidates(facts: Facts) -> tuple[list[str] | None, str]:
    """The vmnics to judge, and where that list came from (None: every NIC in the pause list)."""
    if facts.target is not None and facts.target.roce.vmnics:
        return list(facts.target.roce.vmnics), "inventory"
    for kind in ("esxi_nic_list", "esxi_esxcfg_nics"):
        if facts.has(kind):
            nics = [n["name"] for n in facts.get(kind).get("nics", [])
                    if n.get("name") and (n.get("driver") or "").startswith("nmlx5")]
            return nics, "nmlx5_core vmnics"
    return None, "every NIC listed"


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    entries = facts.need("esxi_pause_params").get("nics", [])
    raw = facts.raw.get("esxi_pause_params")
    pfc = _pfc_configured(facts)
    wanted, source = _candidates(facts)
    several = len({(e.get("block"), e.get("host")) for e in entries}) > 1
    findings: list[Finding] = []

    def label(e: dict) -> str:
        if several:
            return f"{e.get('host') or 'output ' + str((e.get('block') or 0) + 1)}/{e['name']}"
        return e["name"]

    def evidence(name: str) -> list[Evidence]:
        ev = [facts.evidence("esxi_pause_params", excerpt(raw, rf"(^|,)\s*{re.escape(name)}\b", r"^NIC\s", r"^\s*NIC,|,NIC,"))]
        if pfc is not None:
            ev.append(facts.evidence("esxi_module_params",
                                     excerpt(facts.raw.get("esxi_module_params"), r"\bpfc(tx|rx)\b", r"options\s*=")))
        return ev

    if wanted is None:
        chosen = list(entries)
    else:
        chosen = [e for e in entries if e.get("name") in wanted]
        seen = {e.get("name") for e in chosen}
        for name in wanted:
            if name not in seen:
                findings.append(skip(CHECK, facts, f"{name} is not in the pauseParams list", subject=name,
                                     evidence=evidence(name)))
    for e in chosen:
        name = e["name"]
        observed = {"pause_rx": e.get("pause_rx"), "pause_tx": e.get("pause_tx")}
        expected = {"pause_rx": False, "pause_tx": False}
        on = [d for d, k in (("RX", "pause_rx"), ("TX", "pause_tx")) if e.get(k)]
        if e.get("supported") is False and not on:
            findings.append(good(CHECK, facts, f"{label(e)}: pause not supported (off)", observed=observed,
                                 expected=expected, evidence=evidence(name), subject=label(e)))
            continue
        if not on:
            findings.append(good(CHECK, facts, f"{label(e)}: global pause off", observed=observed,
                                 expected=expected, evidence=evidence(name), subject=label(e)))
            continue
        what = f"global pause on ({'/'.join(on)})"
        if pfc:
            summary = f"{label(e)}: {what} while PFC is configured (pfctx set in nmlx5_core): not yet in effect"
            note = "  # or reboot the host so the nmlx5_core PFC setting takes effect"
        elif pfc is False:
            summary = f"{label(e)}: {what}, and nmlx5_core has no PFC (see RW209)"
            note = "  # and enable PFC (RW209)"
        else:
            summary = f"{label(e)}: {what}"
            note = ""
        fix = pasteable(lambda: f"esxcli network nic pauseParams set -n {safe_vmnic(name)} -r false -t false{note}",
                        VMNIC)
        findings.append(bad(CHECK, facts, summary, observed=observed, expected=expected,
                            evidence=evidence(name), fix=fix, subject=label(e)))
    if not findings:
        findings.append(skip(CHECK, facts, f"no NIC to judge ({source}: {', '.join(wanted or []) or 'none'})"))
    return findings


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """Pause off on each RoCE vmnic that has it on, when PFC is set in nmlx5_core; None otherwise
    (follows from RW209 and the reboot)."""
    try:
        bad_findings = failing(evaluate(facts, policy))
    except MissingFact:
        return None
    if not bad_findings or not _pfc_configured(facts):
        return None
    steps = []
    for finding in bad_findings:
        name = finding.subject or ""
        if "/" in name:
            continue  # several hosts pasted into one file (analyze): not one target's vmnic
        observed = finding.observed or {}
        before = f"RX {'on' if observed.get('pause_rx') else 'off'}, TX {'on' if observed.get('pause_tx') else 'off'}"
        steps.append(Step(f"turn global pause off on {name}",
                          f"esxcli network nic pauseParams set -n {safe_vmnic(name)} -r false -t false",
                          before=before, after="RX off, TX off"))
    if not steps:
        return None
    return FixPlan(check=CHECK.code, target=facts.target_name,
                   summary="global pause off on " + ", ".join(s.description.rsplit(" ", 1)[-1] for s in steps),
                   steps=tuple(steps), safety=Safety.SAFE, reboot=RebootKind.NONE)
