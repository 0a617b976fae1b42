"""RW302 vds-exists — a vSphere Distributed Switch with a port group, every ESXi host on it by its RoCE vmnics

What it checks
    The VDS the VFs use (the vcenter target's `options.dvs`, else the VDS whose uplinks carry the
    most RoCE vmnics) exists, has a VM port group (`options.portgroup`, else any non-uplink one), and
    every ESXi host of the inventory is a member with its RoCE vmnics (roce.vmnics) in the pnic
    backing as uplinks. One finding per host, on the host's name (a VM's VF on that host depends on
    it: RW304). Without an inventory: every host vCenter shows must be a member with some uplink.

Why it matters
    An SR-IOV adapter sits on a port group: a host that is not on the VDS gives its VMs' VFs the
    standard switch's network instead (lab: "VM Network"), outside the RoCE VLAN and MTU; a VDS
    without the RoCE vmnics as uplinks carries no RoCE traffic at all. Seed 000 §2.3.1 prefers a VDS
    over per-host standard switches: one management point, no configuration drift.

How to fix by hand
    vSphere Client: Networking > the datacenter > Actions > Distributed Switch > New Distributed
    Switch (RoCE-DVS); New Distributed Port Group (roce-pg); Add and Manage Hosts: each host with
    vmnic2, vmnic3 assigned as uplinks. vHPC toolkit (seed 000 figure 15):
        vhpc_toolkit dvs --create --name RoCE-DVS --datacenter DC --host esx-01 --pnic vmnic2 --port_group roce-pg
    pyVmomi: datacenter.networkFolder.CreateDVS_Task(vim.DistributedVirtualSwitch.CreateSpec(
        configSpec=vim.dvs.VmwareDistributedVirtualSwitch.ConfigSpec(name='RoCE-DVS', maxMtu=9000,
        host=[vim.dvs.HostMember.ConfigSpec(operation='add', host=<HostSystem>,
        backing=vim.dvs.HostMember.PnicBacking(pnicSpec=[vim.dvs.HostMember.PnicSpec(pnicDevice='vmnic2')]))])));
    dvs.AddDVPortgroup_Task([...]); a missing host: dvs.ReconfigureDvs_Task(ConfigSpec(configVersion=…,
    host=[HostMember.ConfigSpec(operation='add', …)])).
    Sources: the client path and `vhpc_toolkit dvs --create --name … --datacenter … --host …` — seed 000
        (figure 15: `./vhpc_toolkit dvs --create --name $sriov_dvs --datacenter $dc --host $host_list`); the
        pyVmomi calls and data objects (Folder.CreateDVS_Task, DVSCreateSpec, VMwareDVSConfigSpec.maxMtu,
        DistributedVirtualSwitchHostMemberConfigSpec / PnicBacking / PnicSpec, AddDVPortgroup_Task,
        ReconfigureDvs_Task) and the probe's properties — "vSphere Web Services API" reference, https://developer.broadcom.com/xapis/vsphere-web-services-api/8.0U3/
        (pyVmomi uses the same names). The vSphere probes read properties, not shell commands.

Fix safety
    safe for a new VDS and new members; moving a vmnic that carries other traffic onto the VDS
    interrupts that traffic (check what uses the vmnic first). The tool plans it as safe: it moves only
    the inventory's RoCE vmnics, which carry nothing else.
"""

from __future__ import annotations

import shlex
from typing import Any

from roce_wizard.checklib.vsphere import (
    DEFAULT_DVS,
    DEFAULT_PORTGROUP,
    action,
    bad_on,
    chosen_dvs,
    good_on,
    vm_portgroups,
    vsphere_plan,
    wanted_names,
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
    Step,
    TargetKind,
)
from roce_wizard.parsers.vsphere import fragment

CHECK = Check(
    code="RW302",
    slug="vds-exists",
    title="VDS with a port group, every host on it by its RoCE vmnics",
    stage=Stage.VSPHERE,
    target=TargetKind.VCENTER,
    severity=Severity.FAIL,
    probes=("vsphere_dvs",),
    optional_probes=("vsphere_hosts",),
    reboot=RebootKind.NONE,
    fix_hint="create the VDS and its port group, add every host with its RoCE vmnics as uplinks",
)


def _pnics(vmnics: list[str]) -> str:
    return ", ".join(f"vim.dvs.HostMember.PnicSpec(pnicDevice={n!r})" for n in vmnics)


def _member_spec(host: str, vmnics: list[str], operation: str) -> str:
    return (f"vim.dvs.HostMember.ConfigSpec(operation='{operation}', host=<HostSystem {shown_name(host)}>, "
            f"backing=vim.dvs.HostMember.PnicBacking(pnicSpec=[{_pnics(vmnics)}]))")


def _create_fix(facts: Facts, hosts: dict[str, list[str]], policy: Policy) -> str:
    name, pg = wanted_names(facts)
    name, pg = name or DEFAULT_DVS, pg or DEFAULT_PORTGROUP
    dcs = (facts.get("vsphere_dvs") or {}).get("datacenters") or []
    dc = dcs[0] if len(dcs) == 1 else "<datacenter>"
    listed = "; ".join(f"{shown_name(h)}: {', '.join(map(shown_name, n)) or '<RoCE vmnics>'}" for h, n in hosts.items())
    members = ", ".join(_member_spec(h, n or ["<RoCE vmnic>"], "add") for h, n in hosts.items())
    first = next(iter(hosts.items()), ("<host>", ["<vmnic>"]))
    s_dc, s_name, s_pg = shown_name(dc), shown_name(name), shown_name(pg)
    return (f"vSphere Client: Networking > {s_dc} > Actions > Distributed Switch > New Distributed Switch: {s_name}; "
            f"then {s_name} > Distributed Port Group > New Distributed Port Group: {s_pg}; then {s_name} > Add and Manage "
            f"Hosts > Add hosts with their uplinks ({listed})\n"
            f"pyVmomi: dvs = wait_for_task(datacenter.networkFolder.CreateDVS_Task(vim.DistributedVirtualSwitch."
            f"CreateSpec(configSpec=vim.dvs.VmwareDistributedVirtualSwitch.ConfigSpec(name={name!r}, "
            f"maxMtu={policy.eth_mtu}, host=[{members}])))); "
            f"wait_for_task(dvs.AddDVPortgroup_Task([vim.dvs.DistributedVirtualPortgroup.ConfigSpec(name={pg!r}, "
            "type='earlyBinding', numPorts=16)]))\n"
            # a shell line: every name vCenter or the inventory gave is quoted
            f"(or: vhpc_toolkit dvs --create --name {shlex.quote(str(name))} --datacenter {shlex.quote(str(dc))} "
            f"--host {shlex.quote(str(first[0]))} --pnic {shlex.quote(str((first[1] or ['<vmnic>'])[0]))} "
            f"--port_group {shlex.quote(str(pg))})")


def _member_fix(dvs: dict[str, Any], host: str, vmnics: list[str], operation: str) -> str:
    name = dvs.get("name")
    action = "Add hosts" if operation == "add" else "Manage host networking"
    return (f"vSphere Client: Networking > {shown_name(name)} > Actions > Add and Manage Hosts > {action}: "
            f"{shown_name(host)}, assign {', '.join(map(shown_name, vmnics)) or '<RoCE vmnics>'} as uplinks\n"
            f"pyVmomi: wait_for_task(dvs.ReconfigureDvs_Task(vim.dvs.VmwareDistributedVirtualSwitch.ConfigSpec("
            f"configVersion=dvs.config.configVersion, host=[{_member_spec(host, vmnics or ['<RoCE vmnic>'], operation)}])))")


def _pg_fix(dvs: dict[str, Any], facts: Facts) -> str:
    _name, pg = wanted_names(facts)
    pg = pg or DEFAULT_PORTGROUP
    return (f"vSphere Client: Networking > {shown_name(dvs.get('name'))} > Actions > Distributed Port Group > New "
            f"Distributed Port Group: {shown_name(pg)}\n"
            f"pyVmomi: wait_for_task(dvs.AddDVPortgroup_Task([vim.dvs.DistributedVirtualPortgroup.ConfigSpec("
            f"name={pg!r}, type='earlyBinding', numPorts=16)]))")


def _hosts(facts: Facts, dvs: dict[str, Any] | None) -> dict[str, list[str] | None]:
    """Host -> its RoCE vmnics (None: not known) to judge."""
    wanted = facts.get("inventory_hosts") or {}
    if wanted:
        return {h: list(spec.get("vmnics") or []) or None for h, spec in wanted.items()}
    shown = [h.get("name") for h in (facts.get("vsphere_hosts") or {}).get("hosts", []) if h.get("name")]
    if shown:
        return {h: None for h in shown}
    return {h: None for h in (dvs or {}).get("members", {})}


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    facts.need("vsphere_dvs")
    dvs = chosen_dvs(facts)
    name, pg_name = wanted_names(facts)
    hosts = _hosts(facts, dvs)
    raw = facts.raw.get("vsphere_dvs")
    command = facts.commands.get("vsphere_dvs")
    shown = [s.get("name") for s in facts.need("vsphere_dvs").get("switches", [])]
    if not hosts:
        hosts = {"<every ESXi host>": None}
    findings: list[Finding] = []
    if dvs is None:
        why = (f"no VDS named {name} (vCenter has {', '.join(shown) or 'none'})" if name
               else "vCenter has no distributed switch")
        fix = _create_fix(facts, {h: n or [] for h, n in hosts.items()}, policy)
        ev = [Evidence("vsphere_dvs", command, excerpt="\n".join(ln for ln in (raw or "").splitlines()
                                                                  if '"switches"' in ln or '"name"' in ln)[:400] or None)]
        for host in hosts:
            findings.append(bad_on(host, CHECK, facts, f"{host} is on no VDS: {why}", observed=None,
                                   expected={"dvs": name or "a VDS", "portgroup": pg_name or "a VM port group"},
                                   evidence=ev, fix=fix))
        return findings
    groups = vm_portgroups(dvs, facts)
    members = dvs.get("members") or {}
    ev_dvs = fragment(raw, dvs["name"], "config.maxMtu", "portgroup")
    for host, vmnics in hosts.items():
        uplinks = members.get(host)
        ev = [Evidence("vsphere_dvs", command, "\n".join(
            x for x in (ev_dvs, f"{host}: uplinks {uplinks}" if uplinks is not None else f"{host}: not a member")
            if x))]
        observed = {"dvs": dvs.get("name"), "member": uplinks is not None, "uplinks": uplinks,
                    "portgroups": [p.get("name") for p in groups]}
        expected = {"dvs": dvs.get("name"), "member": True, "uplinks": f"include {', '.join(vmnics)}" if vmnics
                    else "at least one", "portgroup": pg_name or "a VM port group"}
        problems, fixes = [], []
        if not groups:
            problems.append(f"{dvs['name']} has no " + (f"port group {pg_name}" if pg_name else "VM port group")
                            + f" (port groups: {', '.join(p.get('name') or '?' for p in dvs.get('portgroups', []))})")
            fixes.append(_pg_fix(dvs, facts))
        if uplinks is None:
            problems.append(f"{host} is not a member of {dvs['name']}")
            fixes.append(_member_fix(dvs, host, vmnics or [], "add"))
        else:
            missing = [n for n in vmnics or [] if n not in uplinks]
            if missing:
                problems.append(f"{host}'s RoCE vmnic{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                                f"{'are' if len(missing) > 1 else 'is'} not an uplink of {dvs['name']} "
                                f"(uplinks: {', '.join(uplinks) or 'none'})")
                fixes.append(_member_fix(dvs, host, sorted(set(uplinks) | set(vmnics or [])), "edit"))
            elif not uplinks:
                problems.append(f"{host} is on {dvs['name']} without an uplink")
                fixes.append(_member_fix(dvs, host, [], "edit"))
        if problems:
            findings.append(bad_on(host, CHECK, facts, "; ".join(problems), observed=observed, expected=expected,
                                   evidence=ev, fix="\n".join(fixes)))
        else:
            note = "" if vmnics else " (the inventory names no RoCE vmnics: any uplink accepted)"
            findings.append(good_on(host, CHECK, facts, f"{host} is on {dvs['name']} (port group "
                                    f"{', '.join(p.get('name') or '?' for p in groups)}) with uplinks "
                                    f"{', '.join(uplinks or [])}{note}", observed=observed, expected=expected,
                                    evidence=ev))
    return findings


# ---------------------------------------------------------------------------- fix


def plan_fix(facts: Facts, policy: Policy, *, failed: list) -> FixPlan | None:
    """One `vsphere dvs-create` line: create the VDS (maxMtu = eth_mtu) when there is none, its VM
    port group when it lacks one, and add each failing host with its RoCE vmnics as uplinks (or give a
    member the RoCE vmnics it lacks) — what vhpc-toolkit's `dvs --create` does. Hosts whose RoCE
    vmnics the inventory does not name are left to the finding's fix-by-hand."""
    bad_findings = failed  # the engine's guard: this check's failing findings, never empty
    dvs = chosen_dvs(facts)
    name, pg = wanted_names(facts)
    name = (dvs or {}).get("name") or name or DEFAULT_DVS
    groups = vm_portgroups(dvs, facts)
    pg = pg or (groups[0].get("name") if groups else None) or DEFAULT_PORTGROUP
    wanted = _hosts(facts, dvs)
    members = []
    for f in bad_findings:
        vmnics = wanted.get(f.target)
        if vmnics:
            members.append(f"{f.target}={','.join(vmnics)}")
    if not members and dvs is not None and groups:
        return None
    mtu = (dvs or {}).get("max_mtu") if dvs is not None else policy.eth_mtu
    mtu = mtu if isinstance(mtu, int) and 1280 <= mtu <= 9000 else policy.eth_mtu
    before = ("no VDS" if dvs is None else
              f"{name}: port groups {', '.join(p.get('name') or '?' for p in groups) or 'none'}; members "
              + ", ".join(f"{h}={','.join(n)}" for h, n in sorted((dvs.get('members') or {}).items())))
    step = Step(f"{'create' if dvs is None else 'complete'} the VDS {name}: port group {pg}, "
                + (f"hosts with their RoCE uplinks {', '.join(members)}" if members else "no host to add"),
                action("dvs-create", name, pg, mtu, *members), before=before,
                after=f"{name}: port group {pg}; members " + ", ".join(members))
    # safe: the inventory's RoCE vmnics are dedicated to RoCE (the docstring's caveat stands for others)
    return vsphere_plan(CHECK, facts, f"VDS {name} with port group {pg} and the RoCE uplinks of every host", [step],
                        safety=Safety.SAFE)
