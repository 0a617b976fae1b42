"""RW304 vm-has-vf — each compute VM has an SR-IOV passthrough adapter (a VF) on the RoCE port group

What it checks
    Every compute VM (the inventory's guests' `vm:`; without them, every VM with an SR-IOV adapter)
    has a `VirtualSriovEthernetCard` whose `sriovBacking.physicalFunctionBacking.id` is a RoCE PF of
    the host the VM runs on (inventory roce.vmnics / roce.pf_pci), whose backing is a port group of
    the RoCE VDS (RW302: `options.portgroup`, else any VM port group of it), and whose
    `allowGuestOSMtuChange` is true (vSphere Client: "Guest OS MTU Change: Allow", seed 000 §2.3.2).
    One finding per VM, on the VM's name: a guest's RDMA device (RW402) depends on it.

Why it matters
    Without the adapter the guest has no VF and no RDMA device; a VF of another PF (the service
    NIC's) is not on the RoCE fabric; a VF on a standard network (what a host that is not on the VDS
    gives its VMs, RW302) is outside the RoCE VLAN and MTU; without "allow guest MTU change" the
    guest cannot raise the VF's MTU to 9000 and RoCE MTU stays at 1024.

How to fix by hand
    Power the VM off, then vSphere Client: VM > Edit Settings > Add New Device > Network Adapter:
    New Network = roce-pg, Adapter Type = SR-IOV passthrough, Physical function = 0000:3b:00.0,
    Guest OS MTU Change = Allow (the VM needs all its memory reserved, RW305); power on.
    vHPC toolkit:
        vhpc_toolkit sriov --add --vm VM --sriov_port_group roce-pg --dvs_name RoCE-DVS --pf 0000:3b:00.0
    pyVmomi: vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(
        operation='add', device=vim.vm.device.VirtualSriovEthernetCard(
        backing=vim.vm.device.VirtualEthernetCard.DistributedVirtualPortBackingInfo(
        port=vim.dvs.PortConnection(switchUuid=dvs.uuid, portgroupKey=pg.key)),
        sriovBacking=vim.vm.device.VirtualSriovEthernetCard.SriovBackingInfo(
        physicalFunctionBacking=vim.vm.device.VirtualPCIPassthrough.DeviceBackingInfo(id='0000:3b:00.0')),
        allowGuestOSMtuChange=True))]))
    Sources: the client path (Add New Device > Network Adapter > SR-IOV passthrough, Physical function, Guest
        OS MTU Change) and `vhpc_toolkit sriov --add --vm … --sriov_port_group … --dvs_name … --pf …` — seed 000
        (`./vhpc_toolkit sriov --add --vm $vm_name --sriov_port_group $sriov_dvs_pg --dvs_name $sriov_dvs --pf
        $PF_ID`); ReconfigVM_Task, VirtualDeviceConfigSpec, VirtualSriovEthernetCard (allowGuestOSMtuChange),
        DistributedVirtualPortBackingInfo / DistributedVirtualSwitchPortConnection — "vSphere Web Services API" reference, https://developer.broadcom.com/xapis/vsphere-web-services-api/8.0U3/;
        SriovBackingInfo.physicalFunctionBacking (VirtualPCIPassthroughDeviceBackingInfo.id) — "Data Object -
        VirtualSriovEthernetCardSriovBackingInfo", https://vdc-download.vmware.com/vmwb-repository/dcr-public/
        8946c1b6-2861-4c12-a45f-f14ae0d3b1b9/a5b8094c-c222-4307-9399-3b606a04af55/
        vim.vm.device.VirtualSriovEthernetCard.SriovBackingInfo.html.

Fix safety
    disruptive: the VM must be powered off to add or change a passthrough device.
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
    failing_findings,
    good_on,
    judged_vms,
    roce_pfs,
    skip_on,
    vm_fragment,
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

CHECK = Check(
    code="RW304",
    slug="vm-has-vf",
    title="VF assigned to each compute VM",
    stage=Stage.VSPHERE,
    target=TargetKind.VCENTER,
    severity=Severity.FAIL,
    probes=("vsphere_vms",),
    optional_probes=("vsphere_hosts", "vsphere_dvs"),
    # a host that is not on the VDS gives its VMs' VFs a standard network: RW302 is the cause then
    depends_on=("host:RW302",),
    reboot=RebootKind.VM_POWER_OFF,
    fix_hint="power the VM off, add an SR-IOV passthrough adapter on the RoCE port group (ReconfigVM_Task), power on",
)


def _host_facts(facts: Facts, host: str | None) -> dict[str, Any] | None:
    return next((h for h in (facts.get("vsphere_hosts") or {}).get("hosts", []) if h.get("name") == host), None)


def _card_expr(pf: str, switch_uuid: str, pg_key: str, key: int | None = None) -> str:
    return (f"vim.vm.device.VirtualSriovEthernetCard({'' if key is None else f'key={key}, '}"
            "backing=vim.vm.device.VirtualEthernetCard.DistributedVirtualPortBackingInfo("
            f"port=vim.dvs.PortConnection(switchUuid={switch_uuid!r}, portgroupKey={pg_key!r})), "
            "sriovBacking=vim.vm.device.VirtualSriovEthernetCard.SriovBackingInfo(physicalFunctionBacking="
            f"vim.vm.device.VirtualPCIPassthrough.DeviceBackingInfo(id={pf!r})), allowGuestOSMtuChange=True)")


def _fix(vm: str, pf: str, dvs: dict[str, Any] | None, groups: list[dict[str, Any]], facts: Facts,
         card: dict[str, Any] | None, powered_on: bool) -> str:
    dvs_name = (dvs or {}).get("name") or wanted_names(facts)[0] or DEFAULT_DVS
    pg = groups[0] if groups else {}
    pg_name = pg.get("name") or wanted_names(facts)[1] or DEFAULT_PORTGROUP
    uuid = (dvs or {}).get("uuid") or "<dvs.uuid>"
    pg_key = pg.get("key") or "<portgroup key>"
    s_vm, s_pg, s_pf = shown_name(vm), shown_name(pg_name), shown_name(pf)  # prose: inert if pasted
    off = f"power off {s_vm} (Guest OS shut down), then " if powered_on else ""
    if card is None:
        client = (f"{off}vSphere Client: {s_vm} > Edit Settings > Add New Device > Network Adapter: New Network "
                  f"{s_pg}, Adapter Type SR-IOV passthrough, Physical function {s_pf}, Guest OS MTU Change Allow; "
                  "power on")
        op, device = "add", _card_expr(pf, uuid, pg_key)
    else:
        client = (f"{off}vSphere Client: {s_vm} > Edit Settings > "
                  f"{shown_name(card.get('label') or 'SR-IOV network adapter')}: "
                  f"Network {s_pg}, Physical function {s_pf}, Guest OS MTU Change Allow; power on")
        op, device = "edit", _card_expr(pf, uuid, pg_key, card.get("key"))
    return (client + "\n"
            f"pyVmomi: wait_for_task(vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=[vim.vm.device."
            f"VirtualDeviceSpec(operation='{op}', device={device})])))\n"
            f"(or: vhpc_toolkit sriov --add --vm {shlex.quote(str(vm))} --sriov_port_group "
            f"{shlex.quote(str(pg_name))} --dvs_name {shlex.quote(str(dvs_name))} --pf {shlex.quote(str(pf))})")


def _network(card: dict[str, Any]) -> str:
    if card.get("backing") == "dvs":
        return f"port group {card.get('portgroup') or card.get('portgroup_key')} of {card.get('switch') or 'a VDS'}"
    if card.get("network"):
        return f"{card['network']} (a standard network)"
    return "no network"


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    vms, _from_inventory = judged_vms(facts)
    dvs = chosen_dvs(facts) if facts.has("vsphere_dvs") else None
    groups = vm_portgroups(dvs, facts)
    group_names = {p.get("name") for p in groups}
    wanted_hosts = facts.get("inventory_hosts") or {}
    command = facts.commands.get("vsphere_vms")
    if not vms:
        return [skip_on(facts.target_name, CHECK, facts, "no compute VM to judge: no inventory guest names its VM "
                        "(`vm:`) and no VM has an SR-IOV adapter", observed=[], expected="a VF per compute VM")]
    findings: list[Finding] = []
    for name, vm, entry in vms:
        if vm is None:
            findings.append(bad_on(name, CHECK, facts, f"vCenter has no VM {name} (guest {entry.get('guest')} names "
                                   "it as its `vm:`)", host=(entry or {}).get("host"), observed=None,
                                   expected=f"VM {name} in vCenter",
                                   fix="correct the guest's `vm:` in the inventory to the VM name vCenter shows"))
            continue
        host = vm.get("host") or (entry or {}).get("host")
        pfs = [pf for pf, _vmnic, _want in roce_pfs(_host_facts(facts, host), wanted_hosts.get(host))]
        cards = vm.get("sriov_adapters") or []
        ev = [Evidence("vsphere_vms", command, vm_fragment(facts, name, "runtime.host", "runtime.powerState",
                                                             "sriovAdapters"))]
        expected = {"pf": pfs[0] if len(pfs) == 1 else (pfs or "the host's RoCE PF"),
                    "network": sorted(n for n in group_names if n) or "a port group of the RoCE VDS",
                    "allow_guest_mtu_change": True}
        observed = [{k: c.get(k) for k in ("label", "pf_id", "backing", "switch", "portgroup", "network",
                                           "allow_guest_mtu_change")} for c in cards]
        target_pf = pfs[0] if pfs else "<RoCE PF, e.g. 0000:3b:00.0>"
        powered_on = vm.get("power_state") == "poweredOn"
        if not cards:
            findings.append(bad_on(name, CHECK, facts, f"{name} has no SR-IOV network adapter (no VF)", host=host,
                                   observed=observed, expected=expected, evidence=ev,
                                   fix=_fix(name, target_pf, dvs, groups, facts, None, powered_on)))
            continue
        judged = []
        for card in cards:
            problems = []
            if pfs and card.get("pf_id") not in pfs:
                problems.append(f"its VF comes from {card.get('pf_id')}, not the RoCE PF {' / '.join(pfs)} of {host}")
            if card.get("backing") != "dvs":
                problems.append(f"it sits on {_network(card)}, not on the RoCE VDS")
            elif groups and card.get("portgroup") not in group_names:
                problems.append(f"it sits on {_network(card)}, not on {' / '.join(sorted(n for n in group_names if n))}")
            elif dvs is not None and card.get("switch") not in (None, dvs.get("name")):
                problems.append(f"it sits on {_network(card)}, not on {dvs.get('name')}")
            if card.get("allow_guest_mtu_change") is not True:
                problems.append("Guest OS MTU Change is not allowed (allowGuestOSMtuChange false): the guest cannot "
                                "set MTU 9000")
            judged.append((card, problems))
        ok = [c for c, p in judged if not p]
        if ok:
            card = ok[0]
            findings.append(good_on(name, CHECK, facts, f"{name} has a VF of {card.get('pf_id')} on {_network(card)}, "
                                    "guest MTU change allowed", host=host, observed=observed, expected=expected,
                                    evidence=ev))
            continue
        card, problems = judged[0]
        pf = card.get("pf_id") if card.get("pf_id") in pfs or not pfs else target_pf
        findings.append(bad_on(name, CHECK, facts, f"{name}'s {card.get('label') or 'SR-IOV adapter'}: "
                               + "; ".join(problems), host=host, subject=card.get("label"), observed=observed,
                               expected=expected, evidence=ev,
                               fix=_fix(name, pf or target_pf, dvs, groups, facts, card, powered_on)))
    return findings


# ---------------------------------------------------------------------------- fix


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """Per failing VM: shut the guest down (when it runs), add the SR-IOV adapter of the host's RoCE PF
    on the VDS port group with guest MTU change allowed (or correct the one it has), power it on again.
    Needs the PF's VFs active (RW301, after its host reboot) and the memory reserved (RW305): vCenter
    powers a VM with a passthrough device on only then. VMs whose PF or port group is not known plan
    nothing (the finding's fix-by-hand says what is missing)."""
    dvs = chosen_dvs(facts) if facts.has("vsphere_dvs") else None
    groups = vm_portgroups(dvs, facts)
    if not groups:
        return None  # no VDS port group yet: RW302 first (its own plan creates it)
    pg = groups[0].get("name")
    shown = {v.get("name"): v for v in (facts.get("vsphere_vms") or {}).get("vms", [])}
    wanted_hosts = facts.get("inventory_hosts") or {}
    steps: list[Step] = []
    vms: list[str] = []
    for f in failing_findings(evaluate, facts, policy):
        vm = shown.get(f.target)
        if vm is None or not pg:
            continue
        host = vm.get("host")
        pfs = [pf for pf, _vmnic, _want in roce_pfs(_host_facts(facts, host), wanted_hosts.get(host))]
        if not pfs:
            continue
        cards = vm.get("sriov_adapters") or []
        before = "; ".join(f"{c.get('label')}: {c.get('pf_id')} on {_network(c)}, MTU change "
                           f"{'allowed' if c.get('allow_guest_mtu_change') else 'not allowed'}" for c in cards) or "no VF"
        running = vm.get("power_state") == "poweredOn"
        if running:
            steps.append(Step(f"shut {f.target}'s guest OS down (a passthrough device is added with the VM off)",
                              action("vm-power", "shutdown", f.target), before="poweredOn", after="poweredOff",
                              host=f.target))
        steps.append(Step(f"give {f.target} an SR-IOV adapter of {pfs[0]} on port group {pg} (guest MTU change "
                          "allowed)", action("vm-add-vf", f.target, pfs[0], pg), before=before,
                          after=f"SR-IOV adapter: {pfs[0]} on {pg}, MTU change allowed", host=f.target))
        if running:
            steps.append(Step(f"power {f.target} on again", action("vm-power", "on", f.target), before="poweredOff",
                              after="poweredOn", host=f.target))
        vms.append(f.target)
    return vsphere_plan(CHECK, facts, f"a VF of the RoCE PF on {pg} for {', '.join(vms)}", steps,
                        safety=Safety.DISRUPTIVE, reboot=RebootKind.VM_POWER_OFF,
                        reason="an SR-IOV adapter is added with the VM powered off: the steps shut the guest down "
                               "and power the VM on again (one restart)", needs=("RW301", "RW305"))
