"""Helpers the vsphere checks (RW301–RW307) share: which hosts, PFs, VMs and VDS to judge, and the
fix-by-hand texts (vSphere Client path + the pyVmomi call).

Checks stay pure: these functions only read `Facts`. What the checks read (docs/facts.md):
``vsphere_hosts`` / ``vsphere_vms`` / ``vsphere_dvs`` (parsers/vsphere.py) and the engine-made
``inventory_hosts`` ({esxi host: {pf_pci, vmnics, vfs}}) and ``inventory_vms`` ({vm: {host, guest}}).
Without an inventory (`analyze`) every host vCenter shows is judged, and every VM that has an
SR-IOV adapter. The vcenter target's ``options`` may name the VDS (``dvs``) and its port group
(``portgroup``); without them the VDS that carries the RoCE vmnics is taken.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from roce_wizard.checklib.findings import bad, failing, good, skip
from roce_wizard.commands.shell import UnsafeValue
from roce_wizard.commands.vsphere import Malformed, action_line
from roce_wizard.model import Check, Facts, Finding, FixPlan, MissingFact, Policy, RebootKind, Safety, Step
from roce_wizard.parsers.vsphere import fragment

__all__ = [
    "DEFAULT_DVS",
    "DEFAULT_PORTGROUP",
    "POLICY_NAMES",
    "RoceHost",
    "action",
    "bad_on",
    "chosen_dvs",
    "failing_findings",
    "full_pci",
    "good_on",
    "host_fragment",
    "judged_hosts",
    "judged_vms",
    "roce_pfs",
    "skip_on",
    "vm_fragment",
    "vm_portgroups",
    "vsphere_plan",
    "wanted_names",
]

# what a fix names when neither vCenter nor the inventory does (seed 000's vhpc_toolkit variables)
DEFAULT_DVS = "RoCE-DVS"
DEFAULT_PORTGROUP = "roce-pg"


def _on(finding: Finding, name: str, host: str | None) -> Finding:
    finding.target = name  # the engine keeps an explicit target: root causes find `host:` / `vm:` findings
    if host:
        finding.details["host"] = host  # where a VM runs, for its `host:` dependencies
    return finding


def good_on(name: str, check: Check, facts: Facts, summary: str, *, host: str | None = None, **kw: Any) -> Finding:
    """A passing finding about host or VM `name` (not about the vcenter target itself)."""
    return _on(good(check, facts, summary, **kw), name, host)


def bad_on(name: str, check: Check, facts: Facts, summary: str, *, host: str | None = None, **kw: Any) -> Finding:
    """A failing (or warning, for warn checks) finding about host or VM `name`."""
    return _on(bad(check, facts, summary, **kw), name, host)


def skip_on(name: str, check: Check, facts: Facts, summary: str, *, host: str | None = None, **kw: Any) -> Finding:
    return _on(skip(check, facts, summary, **kw), name, host)


def full_pci(pci: str | None) -> str | None:
    """vSphere's PCI id form: 3b:00.0 -> 0000:3b:00.0 (lower case)."""
    if not pci:
        return None
    pci = pci.strip().lower()
    return pci if pci.count(":") == 2 else f"0000:{pci}"


@dataclass(frozen=True)
class RoceHost:
    name: str
    facts: dict[str, Any] | None  # the host as vCenter shows it (None: vCenter does not know it)
    spec: dict[str, Any] | None  # what the inventory wants of it (None: not in the inventory)


def judged_hosts(facts: Facts, kind: str = "vsphere_hosts") -> list[RoceHost]:
    """The inventory's ESXi hosts (as vCenter shows them, or not at all); without an inventory,
    every host vCenter shows."""
    shown = {h.get("name"): h for h in facts.need(kind).get("hosts", []) if h.get("name")}
    wanted = facts.get("inventory_hosts") or {}
    if wanted:
        return [RoceHost(name, shown.get(name), spec) for name, spec in wanted.items()]
    return [RoceHost(name, h, None) for name, h in shown.items()]


def roce_pfs(host: dict[str, Any] | None, spec: dict[str, Any] | None) -> list[tuple[str, str | None, int | None]]:
    """(PF PCI id, vmnic, VFs wanted) of a host's RoCE ports, from the inventory: each roce.vmnics
    entry through vCenter's pnic list (vmnic -> PCI), else roce.pf_pci with the first count."""
    if not spec:
        return []
    pnics = {p.get("device"): full_pci(p.get("pci")) for p in (host or {}).get("pnics", [])}
    vfs = list(spec.get("vfs") or [])
    out: list[tuple[str, str | None, int | None]] = []
    for i, vmnic in enumerate(spec.get("vmnics") or []):
        pci = pnics.get(vmnic)
        if pci is None and i == 0:
            pci = full_pci(spec.get("pf_pci"))
        if pci is not None:
            out.append((pci, vmnic, vfs[i] if i < len(vfs) else None))
    if not out and spec.get("pf_pci"):
        out.append((full_pci(spec["pf_pci"]), None, vfs[0] if vfs else None))  # type: ignore[arg-type]
    return out


def judged_vms(facts: Facts) -> tuple[list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]], bool]:
    """[(VM name, the VM as vCenter shows it or None, its inventory entry or None)] and whether the
    list comes from the inventory (guests' `vm:`); else every VM with an SR-IOV adapter."""
    shown = {v.get("name"): v for v in facts.need("vsphere_vms").get("vms", []) if v.get("name")}
    wanted = facts.get("inventory_vms") or {}
    if wanted:
        return [(name, shown.get(name), entry) for name, entry in wanted.items()], True
    return [(name, v, None) for name, v in shown.items() if v.get("sriov_adapters")], False


def wanted_names(facts: Facts) -> tuple[str | None, str | None]:
    """The VDS and port group names the vcenter target's options give (or None)."""
    options = facts.target.options if facts.target is not None else {}
    dvs, pg = options.get("dvs"), options.get("portgroup")
    return (dvs if isinstance(dvs, str) else None), (pg if isinstance(pg, str) else None)


def chosen_dvs(facts: Facts) -> dict[str, Any] | None:
    """The VDS the RoCE VFs use: the one the options name; else the one whose uplinks carry the
    most of the inventory's RoCE vmnics; else the only one with a VM port group."""
    switches = list((facts.get("vsphere_dvs") or {}).get("switches", []))
    name, _pg = wanted_names(facts)
    if name is not None:
        return next((s for s in switches if s.get("name") == name), None)
    if not switches:
        return None
    wanted = facts.get("inventory_hosts") or {}

    def score(s: dict[str, Any]) -> tuple[int, int, int]:
        members = s.get("members") or {}
        carried = sum(1 for h, spec in wanted.items() for n in spec.get("vmnics") or [] if n in members.get(h, []))
        return carried, len(members), sum(1 for p in s.get("portgroups", []) if not p.get("uplink"))

    return max(switches, key=score)


def vm_portgroups(dvs: dict[str, Any] | None, facts: Facts) -> list[dict[str, Any]]:
    """The VDS port groups a VF may sit on: the named one, else every non-uplink one."""
    if dvs is None:
        return []
    _name, pg = wanted_names(facts)
    groups = [p for p in dvs.get("portgroups", []) if not p.get("uplink")]
    return [p for p in groups if p.get("name") == pg] if pg is not None else groups


def host_fragment(facts: Facts, host: str, *keys: str, pf: str | None = None) -> str | None:
    return fragment(facts.raw.get("vsphere_hosts"), host, *keys, match={"id": pf} if pf else None)


def vm_fragment(facts: Facts, vm: str, *keys: str) -> str | None:
    return fragment(facts.raw.get("vsphere_vms"), vm, *keys)


# HostPowerPolicy keys (vSphere: 1 static, 2 dynamic, 3 low, 4 custom)
POLICY_NAMES = {1: "High Performance", 2: "Balanced", 3: "Low Power", 4: "Custom"}


# ---------------------------------------------------------------------------- fix plans
# A vsphere check's plan runs on the vcenter target: its steps are `vsphere <verb> …` action lines
# (commands/vsphere.py renders and parses them; transports/vsphere runs them), one or more per host / VM
# the check failed on.


def action(verb: str, *args: object) -> str:
    """A `vsphere <verb> …` line, every argument validated and quoted the way the transport parses it
    (UnsafeValue when a name does not fit)."""
    try:
        return action_line(verb, *(str(a) for a in args))
    except Malformed as exc:
        raise UnsafeValue(f"refusing to run vsphere {verb}: {exc}") from exc


def failing_findings(evaluate: Callable[[Facts, Policy], list[Finding]], facts: Facts,
                     policy: Policy) -> list[Finding]:
    """The check's failing findings on these facts ([] when a fact is missing: nothing to plan)."""
    try:
        return failing(evaluate(facts, policy))
    except MissingFact:
        return []


def vsphere_plan(check: Check, facts: Facts, summary: str, steps: list[Step], *, safety: Safety,
                 reboot: RebootKind = RebootKind.NONE, reason: str = "", needs: tuple[str, ...] = ()) -> FixPlan | None:
    if not steps:
        return None
    return FixPlan(check=check.code, target=facts.target_name, summary=summary, steps=tuple(steps), safety=safety,
                   reboot=reboot, reboot_reason=reason, needs=needs)
