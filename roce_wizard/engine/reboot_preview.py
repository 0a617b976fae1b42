"""Say what a reboot will do before it starts (issue 17 item 4): which hosts go down, which VMs on them are
powered off for it (vCenter's VM list, read by the look that planned it), which hosts are skipped because they
do not answer. Pure: a look's report, the plans and the reboot ledger in; `fix --reboot` and the wizard's reboot
tracker (R) print it before they ask."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from roce_wizard.model import RebootKind, Status, TargetKind
from roce_wizard.records.wording import plural, plural_word

HOST_KINDS = (TargetKind.ESXI, TargetKind.LINUX)
HOST_REBOOTS = frozenset({RebootKind.HOST, RebootKind.FW_RESET, RebootKind.BIOS, RebootKind.DRIVER_RELOAD})


@dataclass
class RebootPreview:
    hosts: list[str]  # will be rebooted (each in maintenance mode first)
    vms: dict[str, list[str]] = field(default_factory=dict)  # host -> its powered-on VMs (vCenter)
    unreachable: dict[str, str] = field(default_factory=dict)  # host -> why it does not answer (RW001)
    vms_known: bool = False  # vCenter's VM list was read by the look

    def lines(self, *, power_off_vms: bool = True) -> list[str]:
        out = []
        for host in self.hosts:
            vms = self.vms.get(host, [])
            if not self.vms_known:
                said = "its VMs: not known (no vCenter answer in this look)"
            elif not vms:
                said = "no VM running on it"
            elif power_off_vms:
                said = f"powers off {plural(len(vms), 'VM')} for it, on again after: {', '.join(vms)}"
            else:
                said = (f"{plural(len(vms), 'VM')} {plural_word(len(vms), 'runs', 'run')} on it and stay on (no VM is powered off without --allow-disruptive; "
                        f"maintenance mode waits for vCenter to move them): {', '.join(vms)}")
            out.append(f"{host}: maintenance mode, reboot, wait for it to come back, verify — {said}")
        for host, why in sorted(self.unreachable.items()):
            out.append(f"{host}: skipped — unreachable ({why})")
        return out


def unreachable_hosts(report: Any) -> dict[str, str]:
    """ESXi and Linux hosts whose RW001 (reachable) did not pass in the look, and why."""
    if report is None:
        return {}
    kinds = {t.name: t.kind for t in report.targets}
    return {f.target: f.summary for f in report.findings
            if f.check == "RW001" and f.status is not Status.PASS and kinds.get(f.target) in HOST_KINDS}


def running_vms(report: Any) -> tuple[dict[str, list[str]], bool]:
    """host -> powered-on VMs from the vCenter's `vsphere_vms` facts of the look; and whether it was read."""
    out: dict[str, list[str]] = {}
    known = False
    for run in getattr(report, "runs", []) or []:
        if run.target.kind is not TargetKind.VCENTER or "vsphere_vms" not in run.facts.data:
            continue
        known = True
        for vm in run.facts.data["vsphere_vms"].get("vms") or []:
            if vm.get("power_state") == "poweredOn" and vm.get("host") and vm.get("name"):
                out.setdefault(str(vm["host"]), []).append(str(vm["name"]))
    return {h: sorted(v) for h, v in out.items()}, known


def preview(report: Any, hosts: Iterable[str]) -> RebootPreview:
    """For the hosts named (the reboot tracker's pending ones): those that answer are rebooted, the rest skipped."""
    down = unreachable_hosts(report)
    vms, known = running_vms(report)
    names = list(dict.fromkeys(hosts))
    return RebootPreview([h for h in names if h not in down], {h: vms.get(h, []) for h in names},
                         {h: down[h] for h in names if h in down}, known)


def preview_fix(report: Any, planned: Iterable[Any], book: Mapping[str, Any]) -> RebootPreview:
    """What `fix --reboot` will reboot after this round: the hosts its allowed plans stage a host-level change
    on, and the hosts whose changes already wait for a reboot (the ledger); every unreachable host is named as
    skipped (nothing on it is fixed or rebooted)."""
    kinds = {t.name: t.kind for t in report.targets}
    hosts: list[str] = []
    for p in planned:
        if p.allowed and p.plan.reboot in HOST_REBOOTS:
            for who in {s.host or p.plan.target for s in p.plan.steps} or {p.plan.target}:
                if kinds.get(who) in HOST_KINDS:
                    hosts.append(who)
    hosts += [h for h, entry in book.items() if kinds.get(h) in HOST_KINDS
              and any(i.reboot in HOST_REBOOTS for i in entry.awaiting_reboot)]
    down = unreachable_hosts(report)
    vms, known = running_vms(report)
    wanted = sorted(set(hosts) - set(down))
    return RebootPreview(wanted, {h: vms.get(h, []) for h in wanted}, down, known)
