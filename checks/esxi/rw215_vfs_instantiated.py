"""RW215 vfs-instantiated — each RoCE port has the VFs it was asked for

What it checks
    `esxcli network sriovnic list` lists every RoCE vmnic (SR-IOV active on it), and
    `esxcli network sriovnic vf list -n <vmnic>` shows as many VFs as wanted: the inventory's
    roce.vfs for that vmnic, else the vmnic's entry in nmlx5_core `max_vfs` (positions in PCI order
    of the nmlx5_core vmnics). A port that wants no VFs (entry 0, e.g. the service NIC) may be
    absent from the list.

Why it matters
    This is the proof that firmware (SRIOV_EN, NUM_OF_VFS), driver (max_vfs) and the reboot all
    came together: vSphere can only hand out VFs that exist here. Fewer VFs than asked for usually
    means NUM_OF_VFS too small for the card's max_vfs entries, or a reboot still pending.

How to fix by hand
    Nothing to set here: fix RW206 (SRIOV_EN), RW208 (NUM_OF_VFS vs max_vfs), RW103 (the BIOS's
    SR-IOV Global Enable) and reboot:
        esxcli system maintenanceMode set --enable true
    then reboot the host (vSphere Client, or `roce-wizard fix --reboot`) and run the checks again: RW215
    reads the VFs per RoCE port.
    Sources: `esxcli system maintenanceMode set --enable true` — VMware "vSphere Command-Line Interface Concepts and Examples" 6.7, "Enter and Exit Maintenance Mode with
        ESXCLI" (`esxcli system maintenanceMode set --enable true|false`), https://docs.vmware.com/en/VMware-
        vSphere/6.7/vspherecli-concepts-examples/GUID-8B7791B1-8CFF-48AE-A4B2-0464867ECE1F.html; the reboot — in words, as RW214 (no VMware
        page for `esxcli system shutdown reboot`). The reads `esxcli network sriovnic list` and `esxcli network
        sriovnic vf list -n vmnicN`: no VMware reference page or corpus capture was found for them (public ESXi
        automation uses the same lines); they are only read, never printed for pasting, and the re-check is said
        in words. `esxcli system module parameters list`, `esxcli network nic list`, `esxcfg-nics -l` — RW212's
        sources.

Fix safety
    disruptive: a host reboot (maintenance mode first).
    No plan_fix: the VFs follow from RW206 / RW208 (and RW301 on vSphere) plus the host reboot
    the engine orchestrates; there is nothing to set here.
"""

from roce_wizard.checklib.esxi import module_params, nmlx5_vmnics, parse_int_list
from roce_wizard.checklib.findings import bad, excerpt, good, skip
from roce_wizard.model import Check, Evidence, Facts, Finding, Policy, RebootKind, Severity, Stage, TargetKind

CHECK = Check(
    code="RW215",
    slug="vfs-instantiated",
    title="VFs instantiated on the RoCE ports",
    stage=Stage.ESXI,
    target=TargetKind.ESXI,
    severity=Severity.FAIL,
    probes=("esxi_sriovnic_list",),
    optional_probes=("esxi_sriovnic_vf_list", "esxi_module_params", "esxi_nic_list", "esxi_esxcfg_nics"),
    # an IB port instantiates no Ethernet VFs; nor does a server whose BIOS has SR-IOV off (its BMC's RW103)
    depends_on=("RW205", "RW206", "RW208", "bmc:RW103"),
    reboot=RebootKind.HOST,
    fix_hint="fix RW206/RW208, then reboot the host (VFs are created at boot)",
)

# maintenance mode: VMware's documented esxcli line; the reboot itself in words (no VMware page gives the
# `esxcli system shutdown reboot` form — issue 12 item 2)
REBOOT_FIX = ('esxcli system maintenanceMode set --enable true  # then reboot the host '
              '(vSphere Client: host > Actions > Power > Reboot, or roce-wizard fix --reboot)')


def _max_vfs_entries(facts: Facts) -> dict[str, int]:
    """vmnic -> its max_vfs entry (0 past the end of the list), when params and a nic list exist."""
    mp = facts.get("esxi_module_params")
    nics = nmlx5_vmnics(facts)
    if mp is None or nics is None:
        return {}
    values = parse_int_list(module_params(facts).get("max_vfs")) or []
    nmlx5 = [n for n in nics if n.get("name")]
    return {n["name"]: (values[i] if i < len(values) else 0) for i, n in enumerate(nmlx5)}


def _vf_lists(facts: Facts, sriov_names: list[str]) -> dict[str | None, list]:
    """vmnic -> its VFs. A single pasted `vf list` is keyed by the vmnic its command line named, or
    by the only SR-IOV nic, else by None."""
    data = facts.get("esxi_sriovnic_vf_list")
    if not data:
        return {}
    if isinstance(data.get("vfs"), list):
        nic = data.get("nic") or (sriov_names[0] if len(sriov_names) == 1 else None)
        return {nic: data["vfs"]}
    return {name: (v or {}).get("vfs", []) for name, v in data.items() if isinstance(v, dict)}


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    sriov = facts.need("esxi_sriovnic_list").get("nics", [])
    sriov_names = [n["name"] for n in sriov if n.get("name")]
    entries = _max_vfs_entries(facts)
    vf_lists = _vf_lists(facts, sriov_names)
    target = facts.target
    inventory: dict[str, int] = {}
    if target is not None and target.roce.vmnics:
        candidates = list(target.roce.vmnics)
        inventory = dict(zip(target.roce.vmnics, target.roce.vfs))
    else:
        candidates = [n for n in vf_lists if n]
        candidates += [n["name"] for n in sriov if n.get("name") and (n.get("driver") or "nmlx5").startswith("nmlx5")]
        candidates += [n for n, v in entries.items() if v > 0]
        candidates = list(dict.fromkeys(candidates))

    raw_list = facts.raw.get("esxi_sriovnic_list")
    raw_vfs = facts.raw.get("esxi_sriovnic_vf_list")

    def evidence(name: str | None) -> list[Evidence]:
        rows = (excerpt(raw_list, rf"(^|,)\s*{name}\b") if name else None) or excerpt(raw_list, r"vmnic\d")
        ev = [facts.evidence("esxi_sriovnic_list", rows)]
        if facts.has("esxi_sriovnic_vf_list"):
            ev.append(facts.evidence("esxi_sriovnic_vf_list", excerpt(raw_vfs, r"^\s*\d+\s+(true|false)", r"^(true|false),", r"^\d+,")))
        if entries:
            ev.append(facts.evidence("esxi_module_params",
                                     excerpt(facts.raw.get("esxi_module_params"), r"max_vfs", r"options\s*=")))
        return ev

    findings: list[Finding] = []
    for name in candidates:
        if name in inventory:
            expected, source = inventory[name], "inventory roce.vfs"
        elif name in entries:
            expected, source = entries[name], "its max_vfs entry"
        else:
            expected, source = None, ""
        if name not in sriov_names:
            if expected == 0:
                findings.append(good(CHECK, facts, f"{name}: no VFs wanted ({source} 0), SR-IOV not active",
                                     observed=None, expected=0, evidence=evidence(name), subject=name))
                continue
            findings.append(bad(CHECK, facts, f"SR-IOV not active on {name} (not in esxcli network sriovnic list)",
                                observed="not an SR-IOV nic", expected=expected if expected is not None else "> 0 VFs",
                                evidence=evidence(name), subject=name,
                                fix=REBOOT_FIX + "  # after RW206 (SRIOV_EN) and RW208 (NUM_OF_VFS, max_vfs) pass"))
            continue
        if name not in vf_lists:
            findings.append(skip(CHECK, facts, f"{name}: SR-IOV active, but its VF list was not read",
                                 evidence=evidence(name), subject=name))
            continue
        count = len(vf_lists[name])
        observed = {"vfs": count, "active": sum(1 for v in vf_lists[name] if v.get("active"))}
        if expected is None:
            if count:
                findings.append(good(CHECK, facts, f"{name}: {count} VFs (no expected count known)",
                                     observed=observed, expected="> 0", evidence=evidence(name), subject=name))
            else:
                findings.append(bad(CHECK, facts, f"{name}: SR-IOV nic with no VFs", observed=observed,
                                    expected="> 0", evidence=evidence(name), subject=name, fix=REBOOT_FIX))
        elif count == expected:
            findings.append(good(CHECK, facts, f"{name}: {count} VFs as wanted ({source})", observed=observed,
                                 expected=expected, evidence=evidence(name), subject=name))
        else:
            findings.append(bad(CHECK, facts, f"{name}: {count} VFs, {source} asks for {expected}",
                                observed=observed, expected=expected, evidence=evidence(name), subject=name,
                                fix=REBOOT_FIX + "  # VFs are created at boot; fix RW208 first if NUM_OF_VFS is short"))
    if None in vf_lists and None not in candidates:
        count = len(vf_lists[None])
        findings.append(good(CHECK, facts, f"a VF list with {count} VFs (its vmnic is not named in the paste)",
                             observed={"vfs": count}, expected="> 0", evidence=evidence(None))
                        if count else
                        bad(CHECK, facts, "a VF list with no VFs (its vmnic is not named in the paste)",
                            observed={"vfs": 0}, expected="> 0", evidence=evidence(None), fix=REBOOT_FIX))
    return findings or [skip(CHECK, facts, "no SR-IOV RoCE vmnic to judge")]
