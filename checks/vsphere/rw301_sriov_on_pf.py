"""RW301 sriov-on-pf — vSphere has SR-IOV enabled on each RoCE PF with the wanted VF count

What it checks
    For every ESXi host of the inventory, `host.config.pciPassthruInfo` → the `HostSriovInfo` of
    each RoCE PF (roce.vmnics through vCenter's pnic list, else roce.pf_pci): `sriovEnabled`,
    `sriovActive`, `numVirtualFunctionRequested` = `numVirtualFunction` (active) = the VFs the
    inventory wants on that port (roce.vfs, seed 000: 8 on vmnic2, 7 on vmnic3), and no more than
    `maxVirtualFunctionSupported`. Requested ≠ active with `summary.rebootRequired` means the change
    waits for a host reboot. One finding per PF, on the host's name.
    Across targets (when the same run reads the host over SSH): the count must agree with the
    host's nmlx5_core `max_vfs` entry for that vmnic, and each PF's count must not exceed firmware
    `NUM_OF_VFS` (RW208's observation), a per-PF ceiling (RW208 says why):
    compared per PF, never summed over the card's ports (the site's Σ+1 rule,
    `policy.num_of_vfs_rule`, is RW208's to judge) — the three places a VF count lives must agree.
    Without an inventory: every PF with SR-IOV enabled, requested = active.

Why it matters
    VFs exist for VMs only when vSphere enables SR-IOV on the PF; a count that differs from the
    driver's max_vfs or exceeds what firmware offers leaves the PF with fewer VFs than VMs, and a
    VM whose VF is missing does not power on. `sriovCapable` false means the BIOS (SR-IOV Global,
    RW103) or firmware (SRIOV_EN, RW206) is not there yet.

How to fix by hand
    vSphere Client: host > Configure > Hardware > PCI Devices > the PF (0000:3b:00.0) > Configure
    SR-IOV: Enabled, Number of virtual functions 8 (or host > Configure > Networking > Physical
    adapters > vmnic2 > Edit); then Enter Maintenance Mode, Reboot, Exit Maintenance Mode.
    pyVmomi:
        host.configManager.pciPassthruSystem.UpdatePassthruConfig([vim.host.SriovConfig(
            id='0000:3b:00.0', sriovEnabled=True, numVirtualFunction=8, passthruEnabled=False)])
    The host reports `summary.rebootRequired` until it rebooted.
    Sources: the client path — seed 000 (Configure SR-IOV on the PF, then reboot); the properties
    (`config.pciPassthruInfo` → HostSriovInfo `sriovEnabled`, `sriovActive`, `numVirtualFunction`,
    `numVirtualFunctionRequested`, `maxVirtualFunctionSupported`; `summary.rebootRequired`) and
    `HostPciPassthruSystem.UpdatePassthruConfig(HostSriovConfig)` — "vSphere Web Services API"
    reference (https://developer.broadcom.com/xapis/vsphere-web-services-api/8.0U3/); NUM_OF_VFS as a
    per-PF ceiling — mlxconfig's parameter text ("The total number of VFs that can be supported")
    and corpus sriov_numvfs/cx4lx-sriov-totalvfs-8.txt (sriov_totalvfs 8 on one port of a card
    set to NUM_OF_VFS=8).

Fix safety
    disruptive: takes effect at the next host reboot (maintenance mode first; its VMs move or stop).
"""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.checklib.vsphere import (
    action,
    bad_on,
    failing_findings,
    full_pci,
    good_on,
    host_fragment,
    judged_hosts,
    roce_pfs,
    vsphere_plan,
)
from roce_wizard.commands.handfix import shown_name
from roce_wizard.model import (
    Check,
    Evidence,
    Facts,
    Finding,
    FixPlan,
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
    code="RW301",
    slug="sriov-on-pf",
    title="SR-IOV enabled on the RoCE PF in vSphere",
    stage=Stage.VSPHERE,
    target=TargetKind.VCENTER,
    severity=Severity.FAIL,
    probes=("vsphere_hosts",),
    # a PF without SR-IOV capability is the BIOS's to report first (SR-IOV Global: on the host's BMC,
    # or judged from the host's own evidence when no BMC is in the run)
    # the host side first: no VFs because of the BIOS, the firmware (RW205/206/208 via RW215) or the driver
    depends_on=("RW103", "bmc:RW103", "RW215"),
    reboot=RebootKind.HOST,
    fix_hint="host > Configure > Hardware > PCI Devices > PF > Configure SR-IOV (pciPassthruSystem."
             "UpdatePassthruConfig), reboot the host",
)

KEYS = ("runtime.connectionState", "summary.rebootRequired", "config.pciPassthruInfo")


def _sriov_fix(host: str, configs: list[tuple[str, int | None]]) -> str:
    client = "; ".join(f"{shown_name(pf)} > Configure SR-IOV: Enabled, {'<VFs wanted>' if n is None else n} virtual functions"
                       for pf, n in configs)
    calls = ", ".join(f"vim.host.SriovConfig(id={pf!r}, sriovEnabled=True, "
                      f"numVirtualFunction={'<VFs wanted>' if n is None else n}, passthruEnabled=False)"
                      for pf, n in configs)
    return (f"vSphere Client: {shown_name(host)} > Configure > Hardware > PCI Devices > {client}; then reboot "
            f"{shown_name(host)} "
            "(Enter Maintenance Mode, Reboot, Exit Maintenance Mode)\n"
            f"pyVmomi: host.configManager.pciPassthruSystem.UpdatePassthruConfig([{calls}])  # then reboot the host")


def _reboot_fix(host: str) -> str:
    return (f"vSphere Client: {shown_name(host)} > Enter Maintenance Mode, then Reboot, then Exit Maintenance Mode\n"
            "pyVmomi: wait_for_task(host.EnterMaintenanceMode_Task(timeout=0)); "
            "wait_for_task(host.RebootHost_Task(force=False)); after it is back: "
            "wait_for_task(host.ExitMaintenanceMode_Task(timeout=0))")


def _judge_pf(facts: Facts, name: str, host: dict[str, Any], pf: str, vmnic: str | None,
              want: int | None) -> Finding:
    label = f"{pf} ({vmnic})" if vmnic else pf
    info = next((e for e in host.get("pci_passthru", []) if full_pci(e.get("id")) == pf), None)
    ev = [Evidence("vsphere_hosts", facts.commands.get("vsphere_hosts"), host_fragment(facts, name, *KEYS, pf=pf))]
    expected = ({"sriov_enabled": True, "num_vfs_requested": want, "num_vfs": want} if want is not None
                else {"sriov_enabled": True, "num_vfs_requested": "= num_vfs"})
    details = {"pf": pf, "vmnic": vmnic, "wanted": want}
    if info is None or not info.get("sriov"):
        what = "not listed" if info is None else "listed without SR-IOV (a plain passthrough device)"
        return bad_on(name, CHECK, facts, f"{label}: vCenter shows the RoCE PF {what} in pciPassthruInfo: the host sees no "
                   "SR-IOV capability there (BIOS SR-IOV Global RW103, firmware SRIOV_EN RW206, nmlx5 driver RW204)",
                   subject=label, observed=info, expected=expected, evidence=ev,
                   fix=f"check the PF address in the inventory against vSphere Client: {shown_name(name)} > Configure > "
                       "Hardware > PCI Devices; then RW103 / RW206 / RW204 on the host",
                   details=details)
    enabled, active = info.get("sriov_enabled"), info.get("sriov_active")
    requested, count, most = info.get("num_vfs_requested"), info.get("num_vfs"), info.get("max_vfs_supported")
    observed = {k: info.get(k) for k in ("sriov_capable", "sriov_enabled", "sriov_active", "num_vfs_requested",
                                         "num_vfs", "max_vfs_supported")}
    observed["reboot_required"] = host.get("reboot_required")
    details.update(requested=requested, active=count, enabled=enabled)
    if want == 0 and not enabled:
        return good_on(name, CHECK, facts, f"{label}: no VFs wanted here and SR-IOV is off", subject=label,
                    observed=observed, expected=expected, evidence=ev, details=details)
    problems: list[str] = []
    fix_count = want
    if info.get("sriov_capable") is False:
        problems.append("SR-IOV is not available on this PF (sriovCapable false): enable SR-IOV Global in the "
                        "BIOS (RW103) and SRIOV_EN in firmware (RW206) first")
    if not enabled:
        problems.append("SR-IOV is disabled" + (f" (inventory wants {want} VFs)" if want else ""))
    elif want is not None and requested != want:
        problems.append(f"{requested} VFs requested, the inventory wants {want}")
    if enabled and isinstance(most, int) and most and isinstance(requested, int) and requested > most:
        problems.append(f"{requested} VFs requested, more than the PF supports ({most})")
        fix_count = min(want if want is not None else most, most)
    if problems:
        return bad_on(name, CHECK, facts, f"{label}: " + "; ".join(problems), subject=label, observed=observed,
                   expected=expected, evidence=ev, fix=_sriov_fix(name, [(pf, fix_count)]), details=details)
    if requested != count or active is False:
        pending = host.get("reboot_required") is True
        why = (f"{requested} VFs requested, {count} active" if requested != count else "SR-IOV is not active")
        summary = f"{label}: {why}" + (": the change waits for a reboot of the host (summary.rebootRequired)"
                                       if pending else " and vCenter does not ask for a reboot")
        fix = _reboot_fix(name) if pending else _sriov_fix(name, [(pf, want if want is not None else requested)])
        return bad_on(name, CHECK, facts, summary, subject=label, observed=observed, expected=expected,
                   evidence=ev, fix=fix, details={**details, "reboot_pending": pending})
    note = "" if want is not None else " (the inventory gives no VF count for it)"
    return good_on(name, CHECK, facts, f"{label}: SR-IOV enabled and active, {count} VFs{note}", subject=label,
                observed=observed, expected=expected, evidence=ev, details=details)


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    findings: list[Finding] = []
    for rh in judged_hosts(facts):
        name, host, spec = rh.name, rh.facts, rh.spec
        if host is None:
            findings.append(bad_on(name, CHECK, facts, f"vCenter does not manage {name} (the inventory's ESXi host)",
                                observed=None, expected=f"{name} in vCenter",
                                fix=f"vSphere Client: the cluster > Actions > Add Hosts: {shown_name(name)}; or correct the "
                                    "host's name in the inventory to the one vCenter shows"))
            continue
        state = host.get("connection_state")
        if state not in (None, "connected"):
            findings.append(Finding(CHECK.code, Status.ERROR, f"{name} is {state} in vCenter: its SR-IOV state is "
                                    "not current (rebooting?)", target=name, observed={"connection_state": state},
                                    expected="connected", evidence=[Evidence(
                                        "vsphere_hosts", facts.commands.get("vsphere_hosts"),
                                        host_fragment(facts, name, "runtime.connectionState"))]))
            continue
        pfs = roce_pfs(host, spec)
        if spec is None:  # no inventory: every PF with SR-IOV on
            pfs = [(full_pci(e["id"]), None, None) for e in host.get("pci_passthru", [])
                   if e.get("sriov") and e.get("sriov_enabled") and e.get("id")]
            if not pfs:
                findings.append(bad_on(name, CHECK, facts, f"no PCI device of {name} has SR-IOV enabled in vSphere (the "
                                    "inventory gives no roce.pf_pci / roce.vmnics to say which is the RoCE PF)",
                                    observed=[], expected="SR-IOV enabled on the RoCE PF",
                                    evidence=[Evidence("vsphere_hosts", facts.commands.get("vsphere_hosts"),
                                                       host_fragment(facts, name, "config.pciPassthruInfo"))],
                                    fix=_sriov_fix(name, [("<RoCE PF, e.g. 0000:3b:00.0>", None)])))
                continue
        elif not pfs:
            findings.append(bad_on(name, CHECK, facts, f"{name}: the inventory names no RoCE PF (roce.pf_pci) or vmnic "
                                "(roce.vmnics) that vCenter shows", observed=spec,
                                expected="roce.vmnics / roce.pf_pci of the ConnectX RoCE ports",
                                fix="set roce.pf_pci and roce.vmnics of the host in the inventory (vSphere Client: "
                                    f"{name} > Configure > Networking > Physical adapters)"))
            continue
        for pf, vmnic, want in pfs:
            findings.append(_judge_pf(facts, name, host, pf, vmnic, want))  # type: ignore[arg-type]
    return findings


# ---------------------------------------------------------------------------- across targets


def _card(pci: str | None) -> str | None:
    m = re.search(r"([0-9a-f]{2}):([0-9a-f]{2})\.[0-7]$", (pci or "").lower())
    return f"{m.group(1)}:{m.group(2)}" if m else None


def compare_targets(findings: list[Finding], everything: list[Finding]) -> list[Finding]:
    """The vSphere VF count against the same host's nmlx5_core max_vfs entry and firmware NUM_OF_VFS,
    as RW208 observed them over SSH in this run. A passing RW301 finding that disagrees becomes a
    failure naming both sides (it is about the same PF: one finding, not a pass and a fail)."""
    rw208: dict[str, list[Finding]] = {}
    for f in everything:
        if f.check == "RW208" and f.status is Status.PASS and isinstance(f.observed, dict):
            rw208.setdefault(f.target, []).append(f)
    by_card: dict[tuple[str, str], list[Finding]] = {}
    for f in findings:
        if f.check == CHECK.code and f.status is Status.PASS and f.details.get("enabled"):
            by_card.setdefault((f.target, _card(f.details.get("pf")) or ""), []).append(f)
    for (host, card), mine in by_card.items():
        for seen in rw208.get(host, []):
            obs = seen.observed
            if obs.get("card") not in (None, card):
                continue
            entries = obs.get("card_entries") or {}
            num = obs.get("NUM_OF_VFS")
            problems: dict[int, list[str]] = {}
            for i, f in enumerate(mine):
                vmnic, requested = f.details.get("vmnic"), f.details.get("requested")
                if vmnic in entries and isinstance(requested, int) and entries[vmnic] != requested:
                    problems.setdefault(i, []).append(
                        f"vSphere requests {requested} VFs but nmlx5_core max_vfs gives {vmnic} {entries[vmnic]} "
                        f"(RW208 on {host})")
            # NUM_OF_VFS is a per-PF ceiling (see RW208): each PF's count against it, never the ports summed
            # (the site's Σ+1 rule is RW208's to judge; a passing RW208 finding means it held)
            for i, f in enumerate(mine):
                requested = f.details.get("requested")
                if isinstance(num, int) and isinstance(requested, int) and requested > num:
                    problems.setdefault(i, []).append(
                        f"vSphere requests {requested} VFs on this PF, more than firmware NUM_OF_VFS={num} offers "
                        "each PF (RW208)")
            for i, why in problems.items():
                f = mine[i]
                f.status = Status.FAIL
                f.summary = f"{f.subject}: " + "; ".join(why) + ": the three places a VF count lives must agree"
                f.expected = {"vsphere": "= max_vfs entry", "per PF": f"<= NUM_OF_VFS ({num})"}
                f.observed = {**(f.observed or {}), "max_vfs_entries": entries, "NUM_OF_VFS": num}
                f.fix = ("make vSphere, max_vfs and NUM_OF_VFS agree: either\n"
                         + _sriov_fix(host, [(f.details["pf"], entries.get(f.details.get("vmnic")))])
                         + "\nor correct max_vfs / NUM_OF_VFS on the host as RW208 shows (full nmlx5_core "
                           "parameter string), then reboot")
                f.evidence.extend(seen.evidence)
    return []


# ---------------------------------------------------------------------------- fix


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """UpdatePassthruConfig(HostSriovConfig) with the inventory's VF count on each failing PF; the
    count takes effect at the host's next reboot (summary.rebootRequired). A PF whose change only
    waits for that reboot, that has no SR-IOV capability (BIOS RW103, firmware RW206), no VF count in the
    inventory, or already requests that count (a step whose before is its after), plans nothing here."""
    steps: list[Step] = []
    hosts: list[str] = []
    for f in failing_findings(evaluate, facts, policy):
        pf, want = f.details.get("pf"), f.details.get("wanted")
        observed = f.observed if isinstance(f.observed, dict) else {}
        if not pf or f.details.get("reboot_pending") or observed.get("sriov_capable") is False:
            continue
        most = observed.get("max_vfs_supported")
        if want is None:
            continue  # the inventory does not say how many VFs (the finding's fix says so)
        count = min(want, most) if isinstance(most, int) and most else want
        if observed.get("sriov_enabled") and observed.get("num_vfs_requested") == count:
            continue  # already requested: asking again changes nothing (the VFs are missing for another reason)
        before = (f"sriovEnabled={observed.get('sriov_enabled')} "
                  f"numVirtualFunctionRequested={observed.get('num_vfs_requested')}")
        steps.append(Step(f"enable SR-IOV with {count} VFs on {f.subject or pf} of {f.target} (vSphere, at the "
                          "host's next boot)", action("host-sriov", f.target, pf, count), before=before,
                          after=f"sriovEnabled=True numVirtualFunctionRequested={count}", host=f.target))
        hosts.append(f.target)
    return vsphere_plan(CHECK, facts, f"SR-IOV VFs on the RoCE PF of {', '.join(dict.fromkeys(hosts))}", steps,
                        safety=Safety.DISRUPTIVE, reboot=RebootKind.HOST,
                        reason="vSphere instantiates an SR-IOV VF count when the host boots (summary.rebootRequired)")
