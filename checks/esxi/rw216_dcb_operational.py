"""RW216 dcb-operational — PFC is operational on the RoCE vmnics, on exactly the lossless priority

What it checks
    `esxcli network nic dcb status get -n vmnicN` on each RoCE vmnic (inventory roce.vmnics; a pasted output
    names its vmnics). Expected: `PFC Enabled: true` and `PFC Configuration` with exactly `pfc_priority` set
    (0 0 0 1 0 0 0 0 for priority 3), DCB mode IEEE. The command is VMware's: vSphere 7.0 Storage, "Configure
    Lossless Network for NVMe over RDMA" ("You can verify the current DCB settings by running
    `esxcli network nic dcb status get -n vmnicX`"),
    https://docs.vmware.com/en/VMware-vSphere/7.0/com.vmware.vsphere.storage.doc/GUID-B764140D-BCF3-4C99-8169-E5B058757518.html.
    Its output format (keys `Mode`, `PFC Enabled`, `PFC Configuration`, `Sent PFC Frames`) is from the only real
    output found, an operator's excerpt of two ConnectX-4 Lx hosts (tests/data/esxi_dcb_status/, PROVENANCE.md).
    Not judged (no source read for it yet): DCBX ownership against the switch (firmware LLDP_NB_DCBX_P<n> /
    LLDP_NB_RX_MODE / LLDP_NB_TX_MODE vs the switch port's DCBX mode).

Why it matters
    nmlx5_core's pfctx/pfcrx (RW209) is what is configured; this is what runs. They differ until the driver
    reloads (a host reboot), and when DCBX negotiation with the switch overrides the host (a willing port takes
    the peer's PFC map, or a CEE peer turns it off). PFC operational on another priority than the one the switch
    and RoCE's DSCP use means RoCE is lossy. It is also what decides global pause: "When PFC is enabled, global
    pause will be operationally disabled (no matter what is configured for global pause flow control)" (Mellanox
    community, "HowTo Run RoCE over L2 Enabled with PFC (ESXi)", https://community.mellanox.com/docs/DOC-2581),
    which RW212 reads from here.

How to fix by hand
    PFC configured (RW209) but not operational: reboot the host so nmlx5_core loads with it (RW214 lists the
    pending change). Operational on another priority than configured: the switch's DCBX advertisement won; make
    the switch port's PFC priority agree (RW502) or stop the port from taking the peer's settings. Read it back:
        esxcli network nic dcb status get -n vmnicN
    Sources: `esxcli network nic dcb status get -n vmnicN` — VMware vSphere 7.0 Storage, "Configure Lossless Network for NVMe over RDMA",
        https://docs.vmware.com/en/VMware-vSphere/7.0/com.vmware.vsphere.storage.doc/GUID-B764140D-BCF3-4C99-8169-
        E5B058757518.html (the probe's source too);
        `esxcli system module parameters list -m nmlx5_core` (pfctx/pfcrx) — "ESXi 7.0: NVIDIA NATIVE Driver for VMware vSphere User Manual v4.19.71.1", "Module Parameters",
        https://docs.nvidia.com/networking/display/VMwareUMv419711/Module+Parameters.
        DCBX willing / IEEE vs CEE: no command is emitted for them.

Fix safety
    manual: the cause decides the fix (a reboot, module parameters or the switch), so the tool emits no command.
"""

from __future__ import annotations

from roce_wizard.checklib.esxi import dcb_by_vmnic, module_params
from roce_wizard.checklib.findings import bad, excerpt, good, skip
from roce_wizard.model import Check, Evidence, Facts, Finding, Policy, RebootKind, Severity, Stage, TargetKind

CHECK = Check(
    code="RW216",
    slug="dcb-operational",
    title="PFC operational on the RoCE vmnics",
    stage=Stage.ESXI,
    target=TargetKind.ESXI,
    severity=Severity.FAIL,
    probes=("esxi_dcb_status",),
    optional_probes=("esxi_module_params",),
    # PFC not configured at all is RW209's finding (the root cause), not a second one here
    depends_on=("RW209",),
    reboot=RebootKind.HOST,
    fix_hint="reboot so nmlx5_core loads its pfctx/pfcrx, or make the switch's DCBX PFC priority agree",
)


def _configured_pfc(facts: Facts) -> int | None:
    """nmlx5_core's pfctx bitmask as set (None: not read or unreadable)."""
    if facts.get("esxi_module_params") is None:
        return None
    try:
        return int(str(module_params(facts).get("pfctx", "0")), 0)
    except ValueError:
        return None


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    blocks = dcb_by_vmnic(facts)
    facts.need("esxi_dcb_status")
    want = policy.pfc_priority
    configured = _configured_pfc(facts)
    raw = facts.raw.get("esxi_dcb_status")
    names: list[str | None]
    if facts.target is not None and facts.target.roce.vmnics:
        names = list(facts.target.roce.vmnics)
    else:
        names = list(blocks)
    findings: list[Finding] = []

    def evidence() -> list[Evidence]:
        ev = [facts.evidence("esxi_dcb_status", excerpt(raw, r"^\s*vmnic\d+:", r"Mode:", r"PFC "))]
        if configured is not None:
            ev.append(facts.evidence("esxi_module_params",
                                     excerpt(facts.raw.get("esxi_module_params"), r"\bpfc(tx|rx)\b", r"options\s*=")))
        return ev

    for name in names:
        label = name or "this vmnic"
        nic = blocks.get(name)
        if nic is None:
            findings.append(skip(CHECK, facts, f"{label}: no DCB status was read", subject=name, evidence=evidence()))
            continue
        enabled, prios, mode = nic.get("pfc_enabled"), nic.get("pfc_priorities"), nic.get("mode")
        observed = {"mode": mode, "pfc_enabled": enabled, "pfc_priorities": prios}
        expected = {"mode": "IEEE", "pfc_enabled": True, "pfc_priorities": [want]}
        if enabled is None and prios is None:
            findings.append(skip(CHECK, facts, f"{label}: the DCB status shows neither PFC Enabled nor its priorities",
                                 subject=name, observed=observed, evidence=evidence()))
            continue
        on = bool(enabled) if enabled is not None else bool(prios)
        if not on or not prios:
            why = ""
            if configured:
                why = (f" although nmlx5_core has pfctx=0x{configured:02x} configured: not in effect (a reboot "
                       "pending, see RW214) or turned off by DCBX negotiation")
            findings.append(bad(CHECK, facts, f"{label}: PFC is not operational{why}", subject=name,
                                observed=observed, expected=expected, evidence=evidence(),
                                fix=("reboot the host so nmlx5_core loads its pfctx/pfcrx; then `esxcli network nic "
                                     f"dcb status get -n {name or 'vmnicN'}` shows PFC Enabled: true")))
            continue
        if prios != [want]:
            shown = ", ".join(str(p) for p in prios)
            cfg = f" (nmlx5_core configures 0x{configured:02x})" if configured else ""
            findings.append(bad(CHECK, facts, f"{label}: PFC operational on priority {shown}, not {want}{cfg}",
                                subject=name, observed=observed, expected=expected, evidence=evidence(),
                                fix=(f"make the switch port's PFC priority {want} (RW502): a willing port takes the "
                                     "peer's DCBX PFC map; then re-read `esxcli network nic dcb status get`")))
            continue
        if mode == "CEE":
            findings.append(bad(CHECK, facts, f"{label}: PFC operational on priority {want}, but DCB mode CEE, not "
                                "IEEE", subject=name, observed=observed, expected=expected, evidence=evidence(),
                                fix="use IEEE DCBX on the switch port (the CEE peer decides PFC here)"))
            continue
        note = "" if mode == "IEEE" else f" (mode shown: {mode or 'not printed'})"
        findings.append(good(CHECK, facts, f"{label}: PFC operational on priority {want}{note}", subject=name,
                             observed=observed, expected=expected, evidence=evidence()))
    if not findings:
        findings.append(skip(CHECK, facts, "no vmnic to judge in the DCB status"))
    return findings
