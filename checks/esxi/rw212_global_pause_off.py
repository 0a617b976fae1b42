"""RW212 global-pause-off — 802.3x global pause is not in effect on the RoCE vmnics

What it checks
    `esxcli network nic pauseParams list` → `Pause RX` / `Pause TX` on every RoCE vmnic (the inventory's
    roce.vmnics; with no inventory every nmlx5_core vmnic of `esxcli network nic list`, or every NIC listed when
    there is no nic list). Where pause shows on, it consults the operational DCB state (RW216's
    `esxcli network nic dcb status get -n vmnicN`) before judging: on nmlx5, "When PFC is enabled, global pause
    will be operationally disabled (no matter what is configured for global pause flow control)" (Mellanox
    community, "HowTo Run RoCE over L2 Enabled with PFC (ESXi)", https://community.mellanox.com/docs/DOC-2581;
    the same page: "Note that global pause will be disabled even if it is configured"). So pause shown on with
    PFC operational passes with a note; pause on with PFC not operational fails; pause on with PFC configured
    (nmlx5_core pfctx) but no DCB state read is "could not tell" (warn).

Why it matters
    PFC and global pause are mutually exclusive on a port: while global pause is in effect, the port pauses ALL
    traffic on congestion and the RoCE priority gets no lossless treatment of its own. Sandia's incast test
    (seed 001) shows global pause collapsing throughput where PFC holds. ESXi 8 + ConnectX-5 comes up with
    global pause on by default (corpus esxi_pauseparams/esxi80-cx5-vs-esxi70-x710.txt).

How to fix by hand
    Enable PFC in nmlx5_core (RW209) and reboot: PFC then disables global pause operationally. Without PFC, per
    vmnic (`esxcli network nic pauseParams set`, VMware vSphere 7.0 Storage, "Configure Lossless Network for
    NVMe over RDMA", https://docs.vmware.com/en/VMware-vSphere/7.0/com.vmware.vsphere.storage.doc/GUID-B764140D-BCF3-4C99-8169-E5B058757518.html,
    shows the `-r/-t/-n` form):
        esxcli network nic pauseParams set -n vmnicN -r false -t false
    With PFC enabled nmlx5 refuses that set (VMkernel log "nmlx5_core: vmnicN: pause parameters cannot be set
    when pfc is enabled", esxcli "Unable to complete Sysinfo operation": an operator's report,
    Enizaksoy/rdma-ai-cluster PFC_SUCCESS_SUMMARY.md) — and there is nothing to set.
    Sources: `esxcli network nic pauseParams list` — corpus esxi_pauseparams/esxi80-cx5-vs-esxi70-x710.txt;
        `pauseParams set -n … -r false -t false` and `esxcli network nic dcb status get -n vmnicN` — VMware vSphere 7.0 Storage, "Configure Lossless Network for NVMe over RDMA",
        https://docs.vmware.com/en/VMware-vSphere/7.0/com.vmware.vsphere.storage.doc/GUID-B764140D-BCF3-4C99-8169-
        E5B058757518.html;
        `esxcli system module parameters list -m nmlx5_core` — "ESXi 7.0: NVIDIA NATIVE Driver for VMware vSphere User Manual v4.19.71.1", "Module Parameters",
        https://docs.nvidia.com/networking/display/VMwareUMv419711/Module+Parameters;
        `esxcli network nic list` / `esxcfg-nics -l` — corpus esxi_nic_list/*, esxi_esxcfg_nics/*.

Fix safety
    safe: takes effect immediately, no reboot. The tool turns pause off (`pauseParams set -n vmnicN -r false
    -t false`) only on a RoCE vmnic whose DCB state shows PFC not operational while nmlx5_core has pfctx
    configured (the driver has not loaded it yet: the reboot RW214 lists makes it operational). Without PFC
    configured it runs nothing: the fix follows from RW209, and turning pause off first would leave the port
    with no flow control at all.
"""

import dataclasses
import re

from roce_wizard.checklib.esxi import dcb_by_vmnic, module_params, safe_vmnic
from roce_wizard.checklib.findings import bad, excerpt, failing, good, skip
from roce_wizard.commands.handfix import VMNIC, pasteable
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
    Status,
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
    optional_probes=("esxi_dcb_status", "esxi_module_params", "esxi_nic_list", "esxi_esxcfg_nics"),
    depends_on=(),
    reboot=RebootKind.NONE,
    fix_hint="PFC via RW209 + reboot (PFC disables global pause); without PFC: pauseParams set -n vmnicN -r false -t false",
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
    dcb_state = dcb_by_vmnic(facts)
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
        if name in dcb_state:
            ev.append(facts.evidence("esxi_dcb_status",
                                     excerpt(facts.raw.get("esxi_dcb_status"), r"PFC (Enabled|Conf)")))
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
        dcb = dcb_state.get(name) if not several else None
        operational = dcb is not None and (
            dcb.get("pfc_enabled") or (dcb.get("pfc_enabled") is None and dcb.get("pfc_priorities")))
        if operational:
            prios = ", ".join(str(p) for p in dcb.get("pfc_priorities") or []) or "?"
            findings.append(good(CHECK, facts, f"{label(e)}: pauseParams shows {what}, but PFC is operational "
                                 f"(priority {prios}): nmlx5 disables global pause operationally while PFC is enabled",
                                 observed={**observed, "pfc_operational": True}, expected=expected,
                                 evidence=evidence(name), subject=label(e)))
            continue
        details = {}
        if dcb is not None:
            details = {"pfc_operational": False}
            if pfc:
                summary = (f"{label(e)}: {what} and PFC is not operational although nmlx5_core has pfctx set "
                           "(not loaded yet, see RW214/RW216)")
                fix = pasteable(lambda: "reboot the host so nmlx5_core loads PFC (it then disables global pause), "
                                f"or now: esxcli network nic pauseParams set -n {safe_vmnic(name)} -r false -t false",
                                VMNIC)
            else:
                summary = f"{label(e)}: {what} and PFC is not operational (see RW209/RW216)"
                fix = pasteable(lambda: "enable PFC (RW209) and reboot; without PFC: "
                                f"esxcli network nic pauseParams set -n {safe_vmnic(name)} -r false -t false", VMNIC)
        elif pfc:
            summary = (f"{label(e)}: pauseParams shows {what}; nmlx5_core has PFC configured (pfctx), which disables "
                       "global pause once operational — could not tell without the DCB state")
            fix = pasteable(lambda: f"esxcli network nic dcb status get -n {safe_vmnic(name)}  # PFC Enabled: true "
                            "means global pause is off", VMNIC)
            finding = bad(CHECK, facts, summary, observed=observed, expected=expected, evidence=evidence(name),
                          fix=fix, subject=label(e))
            findings.append(dataclasses.replace(finding, status=Status.WARN))
            continue
        elif pfc is False:
            summary = f"{label(e)}: {what}, and nmlx5_core has no PFC (see RW209)"
            fix = pasteable(lambda: f"esxcli network nic pauseParams set -n {safe_vmnic(name)} -r false -t false"
                            "  # and enable PFC (RW209)", VMNIC)
        else:
            summary = f"{label(e)}: {what}"
            fix = pasteable(lambda: f"esxcli network nic pauseParams set -n {safe_vmnic(name)} -r false -t false",
                            VMNIC)
        findings.append(bad(CHECK, facts, summary, observed=observed, expected=expected,
                            evidence=evidence(name), fix=fix, subject=label(e), details=details))
    if not findings:
        findings.append(skip(CHECK, facts, f"no NIC to judge ({source}: {', '.join(wanted or []) or 'none'})"))
    return findings


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """Pause off on each RoCE vmnic that has it on while its DCB state shows PFC not operational and nmlx5_core
    has pfctx set (not loaded yet); None otherwise (follows from RW209 and the reboot)."""
    try:
        bad_findings = failing(evaluate(facts, policy))
    except MissingFact:
        return None
    if not bad_findings or not _pfc_configured(facts):
        return None
    steps = []
    for finding in bad_findings:
        name = finding.subject or ""
        if finding.details.get("pfc_operational") is not False:
            continue  # only where the DCB state shows PFC configured but not loaded (nmlx5 refuses it once on)
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
