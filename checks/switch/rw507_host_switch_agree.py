"""RW507 host-switch-agree — both ends of every RoCE link agree on the lossless class (no "half-lossless" pair)

What it checks
    Each RoCE host port and the switch port it is cabled to (inventory `roce.switch_ports`) agree:
    the same trust (DSCP), the same priority for the RoCE DSCP (`roce_dscp`, 26), and that priority
    lossless at both ends. The switch end is read from the switch: its DSCP -> priority map (EOS
    `show qos maps`, Onyx `qos map dscp-to-switch-priority` in the running config, OS10 the
    interface's `trust-map dscp` and its `trust dscp-map`, Cumulus `nv show qos roce`), its no-drop
    priorities and trust (RW501–RW503's outputs). The host end is what the host checks of the same
    run observed: ESXi nmlx5_core `pfctx`/`pfcrx` (RW209) and `trust_state` (RW210; ESXi has no DSCP
    map parameter, so the driver's default table dscp >> 3 applies), bare-metal Linux `mlnx_qos`
    (RW409: trust, PFC, the device's own dscp2prio). One finding per switch says where the switch
    puts the RoCE DSCP; one per RoCE port judges the pair. When a single-end check already fails
    (RW501–RW503 on the switch, RW209/RW210/RW409 on the host) the pair is reported as blocked by it.
    `analyze` judges the switch end alone against the policy (the hosts' side of it).

Why it matters
    "Half-lossless": each end looks configured, but RoCE rides a lossy class on one of them — e.g.
    the switch maps DSCP 26 to priority 4 while the hosts map it to 3 and pause only 3. The switch
    then drops RoCE under congestion (its priority-4 queue is lossy) and pauses the hosts on a
    priority they never use. Nothing fails until incast, and then throughput collapses.

How to fix by hand
    Fix the end that differs from the site policy (docs/policy.md; by default `pfc_priority` 3,
    `roce_dscp` 26 -> priority 3, `trust` dscp). The switch end, rollback point first and in a config session:
        EOS:   qos map dscp 26 to traffic-class 3
        Onyx:  qos map dscp-to-switch-priority dscp 26 switch-priority 3
        OS10:  interface ethernet1/1/3 / trust-map dscp default
               (or fix the custom map: trust dscp-map NAME / qos-group 3 dscp 26)
        NVUE:  nv set qos mapping default-global dscp 26 switch-priority 3 ; nv config apply
    The host end: RW209 / RW210 (ESXi nmlx5_core parameters, merged string, host reboot) or
    RW409 (`mlnx_qos --trust=dscp --pfc 0,0,0,1,0,0,0,0`, made persistent).

Sources (every command this check reads and every line its fix emits)
    EOS `show qos maps`, `qos map dscp D to traffic-class T`: seed 004 and the Arista EOS User Manual, chapter "Quality of Service" (a copy: https://fdocuments.us/document/
        quality-of-service-arista-networks-2020-02-10-a-section-2715-quality-of.html).
    Onyx running config, `qos map dscp-to-switch-priority dscp D switch-priority P`: NVIDIA Onyx User Manual
        v3.10.4606 LTS, "QoS Commands", https://docs.nvidia.com/networking/display/NVIDIAOnyxUserManualv3104606LTS/
        QoS+Commands
    OS10 `trust-map dscp default`, `trust dscp-map NAME` / `qos-group P dscp D`: Dell SmartFabric OS10 User Guide 10.5.0, "Configure RoCE on the switch", https://www.dell.com/support/
        manuals/en-in/dell-emc-smartfabric-os10/smartfabric-os-user-guide-10-5-0/configure-roce-on-the-switch.
    NVUE `nv show qos roce`: corpus cumulus_nv_show_qos_roce/*; `nv set qos mapping default-global dscp D
        switch-priority P` (Cumulus Linux 5.3 and later): NVIDIA Cumulus Linux User Guide, "Quality of
        Service", https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-59/Layer-1-and-Switch-Ports/
        Quality-of-Service/ ; `nv config diff` / `nv config apply -y` / `nv config revision`: NVUE Command Reference, "Config
        Commands", https://docs.nvidia.com/networking-ethernet-software/nvue-reference/Config-Commands.
    The host end: RW209 / RW210 / RW409 name their own sources (`mlnx_qos --trust=dscp --pfc …`: seed 004,
    corpus mlnx_qos/*, see RW409).

Fix safety
    disruptive: re-mapping DSCP moves live traffic between queues on every port of the switch.
"""

from types import SimpleNamespace
from typing import Any

from roce_wizard.checklib.findings import bad, good, skip
from roce_wizard.checklib.switch import ALL_PORTS, Item, Selection, dscp_priority, kinds, select
from roce_wizard.checklib.switch_evidence import evidence_lines
from roce_wizard.checklib.switch_fix import FixText, interface_name, switch_plan, vendor_fix
from roce_wizard.model import (
    Check,
    Evidence,
    Facts,
    Finding,
    FixPlan,
    MissingFact,
    Policy,
    Severity,
    Stage,
    Status,
    TargetKind,
)
from roce_wizard.parsers.switch import port_key

CHECK = Check(
    code="RW507",
    slug="host-switch-agree",
    title="Host and switch agree on the lossless class",
    stage=Stage.SWITCH,
    target=TargetKind.SWITCH,
    severity=Severity.FAIL,
    probes=(),
    optional_probes=kinds("dscp"),
    # a pair that disagrees because one switch setting is wrong is that check's finding, not a second one
    depends_on=("RW501", "RW502", "RW503"),
    fix_hint="fix the end that differs from policy (EOS: qos map dscp 26 to traffic-class 3; host: RW209/RW210/RW409)",
)

SWITCH_CAUSES = ("RW501", "RW502", "RW503")
HOST_CAUSES = {"esxi": ("RW209", "RW210"), "linux": ("RW409",)}


def _map_lines(vendor: str, policy: Policy, item: Item | None) -> tuple[list[str], list[str]]:
    """(interface lines, switch-wide lines) that give the RoCE DSCP the policy's priority."""
    dscp, prio = policy.roce_dscp, policy.pfc_priority
    if vendor == "eos":
        return [], [f"qos map dscp {dscp} to traffic-class {_eos_tc(prio)}"]
    if vendor == "onyx":
        return [], [f"qos map dscp-to-switch-priority dscp {dscp} switch-priority {prio}"]
    if vendor == "nvue":
        return [], [f"nv set qos mapping default-global dscp {dscp} switch-priority {prio}"]
    if vendor == "os10":
        name = ((item.entry or {}).get("trust_map") if item else None) or "default"
        if name != "default" and dscp >> 3 != prio:  # the default map would not do either: fix the custom one
            return [], [f"trust dscp-map {name}", f" qos-group {prio} dscp {dscp}", "exit"]
        return ["trust-map dscp default"], []
    return [], [f"map DSCP {dscp} to priority {prio} on the switch"]


def _map_fix(vendor: str, policy: Policy, items: list[Item]) -> str:
    """The switch end's fix: the switch-wide map once, or (OS10) each wrong port's trust map."""
    per_port, switch_wide = [], []
    for item in items:
        if_lines, glob = _map_lines(vendor, policy, item)
        switch_wide += [ln for ln in glob if ln not in switch_wide]
        if if_lines and item.subject != ALL_PORTS:
            per_port += [f"interface {interface_name(vendor, item.subject)}", *(f" {ln}" for ln in if_lines), "exit"]
    if vendor == "os10" and per_port:
        return vendor_fix(vendor, None, global_lines=[*switch_wide, *per_port])
    return vendor_fix(vendor, None, global_lines=switch_wide)


def _pair_fix(vendor: str, policy: Policy, item: Item, switch: str) -> str:
    """A pair's share of that fix: its own port's lines (OS10), else a pointer to the switch-wide line."""
    if_lines, glob = _map_lines(vendor, policy, item)
    if if_lines:
        return vendor_fix(vendor, item.subject, if_lines)
    return f"switch-wide, once for every port (the RW507 fix on {switch}): " + " / ".join(glob)


def _eos_tc(prio: int) -> int:
    return {0: 1, 1: 0}.get(prio, prio)  # EOS default CoS -> traffic class


def _optional(facts: Facts, fld: str) -> Selection | None:
    try:
        sel = select(facts, fld)
    except MissingFact:
        return None
    return sel if sel.kind else None


def _entry_for(sel: Selection | None, item: Item) -> dict[str, Any]:
    if sel is None:
        return {}
    key = port_key(item.subject)
    for other in sel.items:
        if other.subject == item.subject or (key is not None and port_key(other.subject) == key):
            return other.entry or {}
    return {}


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    sel = select(facts, "dscp")
    if sel.why_none:
        return [skip(CHECK, facts, sel.why_none, probes=(sel.kind or CHECK.optional_probes[0],))]
    pfc, trust = _optional(facts, "pfc"), _optional(facts, "trust")
    dscp, prio = policy.roce_dscp, policy.pfc_priority
    ports: dict[str, dict[str, Any]] = {}
    for item in sel.items:
        if item.entry is None:
            continue
        p_entry, t_entry = _entry_for(pfc, item), _entry_for(trust, item)
        port_trust = (item.entry or {}).get("trust") or t_entry.get("trust")
        got, how = dscp_priority(facts, sel.vendor, sel.kind or "", dscp, item)
        if port_trust not in (None, "dscp", "both"):  # the map does not apply on a port that ignores DSCP
            got, how = None, f"the port trusts {port_trust}, not DSCP (RW503)"
        ports[item.subject] = {
            "peer": item.peer, "peer_kind": item.peer_kind, "nic": item.nic, "dscp_priority": got, "how": how,
            "trust": port_trust, "pfc_enabled": p_entry.get("pfc_enabled"), "no_drop": p_entry.get("no_drop"),
        }
    raw = facts.raw.get(sel.kind or "")
    ev_item = sel.items[0] if sel.items else Item(ALL_PORTS, None)
    ev = evidence_lines(raw, ev_item, rf"^\s*{dscp // 10}\s*:", rf"dscp-to-switch-priority.*\b{dscp}\b", r"trust-map",
                        r"qos-group \d+ dscp", rf"\b{dscp}\b.*switch-prio", r"qos map dscp")
    expected = {"roce_dscp": dscp, "priority": prio}
    if facts.target is None:  # analyze: the switch end against the policy, per port or switch-wide
        out = []
        for item in sel.items:
            info = ports.get(item.subject)
            if info is None:
                continue
            got = info["dscp_priority"]
            common = dict(observed={"dscp_priority": got, "no_drop": info["no_drop"]}, expected=expected, excerpt=ev,
                          subject=item.subject, probes=(sel.kind,))
            if got is None:
                out.append(skip(CHECK, facts, f"{item.subject}: {info['how']}", **common))
            elif got == prio:
                lossy = (" (not no-drop here: RW502)" if info["no_drop"] is not None and prio not in info["no_drop"]
                         else "")
                out.append(good(CHECK, facts, f"{item.subject}: {info['how']} — the hosts' (policy) priority{lossy}",
                                **common))
            else:
                out.append(bad(CHECK, facts, f"{item.subject}: {info['how']}, but the hosts map DSCP {dscp} to {prio} "
                               "(policy): half-lossless", fix=_map_fix(sel.vendor, policy, [item]), **common))
        return out or [skip(CHECK, facts, "no port to judge", probes=(sel.kind,))]
    details = {"ports": ports, "policy": {"pfc_priority": prio, "roce_dscp": dscp, "trust": policy.trust},
               "vendor": sel.vendor}
    wrong = {p: i for p, i in ports.items() if i["dscp_priority"] is not None and i["dscp_priority"] != prio}
    for item in sel.items:
        if item.subject in wrong:
            wrong[item.subject]["fix"] = _pair_fix(sel.vendor, policy, item, facts.target_name)
    observed = {p: i["dscp_priority"] for p, i in ports.items()}
    common = dict(observed=observed, expected=expected, excerpt=ev, probes=(sel.kind,), details=details)
    if not ports:
        return [skip(CHECK, facts, "no RoCE port of this switch is in its output", probes=(sel.kind,))]
    if wrong:
        got = sorted({i["dscp_priority"] for i in wrong.values()})
        items = [it for it in sel.items if it.subject in wrong]
        return [bad(CHECK, facts, f"the switch maps DSCP {dscp} to priority {','.join(map(str, got))} on "
                    f"{', '.join(wrong)}, the hosts (policy) to {prio}: RoCE rides a lossy class on the switch while "
                    "the hosts pause their priority (half-lossless)", fix=_map_fix(sel.vendor, policy, items),
                    **common)]
    untrusted = [p for p, i in ports.items() if i["dscp_priority"] is None]
    if len(untrusted) == len(ports):
        return [good(CHECK, facts, f"none of its RoCE ports ({', '.join(untrusted)}) trusts DSCP (RW503): its DSCP map "
                     "does not apply yet; each host-switch pair is judged per port", **common)]
    note = f"; {', '.join(untrusted)} ignore DSCP (RW503)" if untrusted else ""
    return [good(CHECK, facts, f"the switch maps DSCP {dscp} to priority {prio} on its RoCE ports{note}; each "
                 "host-switch pair is judged per port", **common)]


# ------------------------------------------------------------------------------------------ the pairs


def _bits(value: Any) -> set[int]:
    try:
        mask = int(str(value), 0) if value is not None else 0
    except ValueError:
        try:
            mask = int(str(value), 16)
        except ValueError:
            return set()
    return {p for p in range(8) if mask >> p & 1}


def _host_end(peer: str, peer_kind: str | None, index: dict[tuple[str, str], list[Finding]],
              roce_dscp: int) -> tuple[dict[str, Any] | None, tuple[str, str] | None, str]:
    """(host view, blocker, note): the host's trust / PFC priorities / priority of the RoCE DSCP from
    its own checks' observations; a blocker when those checks could not observe."""
    codes = HOST_CAUSES.get(peer_kind or "", ())
    found = {c: index.get((c, peer), []) for c in codes}
    if not codes or not any(found.values()):
        return None, None, f"{peer}'s PFC and trust were not read in this run ({'/'.join(codes) or 'no host check'})"
    for code, fs in found.items():
        for f in fs:
            if f.blocked_by is not None or f.status is Status.ERROR:
                return None, f.blocked_by or (code, peer), f"{code} could not read {peer}: {f.summary}"
            if f.status is Status.SKIP:
                return None, None, f"{code} did not judge {peer}: {f.summary}"
    if peer_kind == "esxi":
        rw209 = next((f for f in found["RW209"] if isinstance(f.observed, dict)), None)
        rw210 = next((f for f in found["RW210"]), None)
        if rw209 is None or rw210 is None:
            return None, None, f"{peer}'s RW209/RW210 observations are missing"
        pfc = _bits(rw209.observed.get("pfctx")) & _bits(rw209.observed.get("pfcrx"))
        trust = {"2": "dscp", "1": "pcp"}.get(str(rw210.observed).strip() if rw210.observed is not None else "", "pcp")
        prio = roce_dscp >> 3 if trust == "dscp" else None  # nmlx5's default dscp2prio; ESXi has no map parameter
        return {"trust": trust, "pfc": sorted(pfc), "dscp_priority": prio,
                "how": f"pfctx={rw209.observed.get('pfctx')} pfcrx={rw209.observed.get('pfcrx')} trust_state="
                       f"{rw210.observed}"}, None, ""
    rw409 = next((f for f in found.get("RW409", []) if isinstance(f.observed, dict)), None)
    if rw409 is None:
        return None, None, f"{peer}'s RW409 observation is missing"
    obs = rw409.observed
    pfc = {i for i, v in enumerate(obs.get("pfc") or []) if v}
    return {"trust": obs.get("trust"), "pfc": sorted(pfc), "dscp_priority": obs.get("roce_dscp_priority"),
            "how": f"mlnx_qos trust {obs.get('trust')} pfc {obs.get('pfc')}"}, None, ""


def _cause(index: dict[tuple[str, str], list[Finding]], codes: tuple[str, ...], target: str,
           port: str | None) -> tuple[str, str] | None:
    key = port_key(port) if port else None
    for code in codes:
        for f in index.get((code, target), []):
            if f.status not in (Status.FAIL, Status.WARN):
                continue
            if port is None or f.subject in (None, port, ALL_PORTS) or (key is not None and port_key(f.subject) == key):
                return code, target
    return None


def compare_pairs(own: list[Finding], everything: list[Finding]) -> list[Finding]:
    """One finding per RoCE link: the switch end (this check's per-switch details) joined to the
    host end (the host checks' observations); target = the switch, subject = its port."""
    index: dict[tuple[str, str], list[Finding]] = {}
    for f in everything:
        index.setdefault((f.check, f.target), []).append(f)
    out: list[Finding] = []
    for summary in own:
        ports = summary.details.get("ports") if summary.details else None
        if not ports:
            continue
        pol = summary.details.get("policy") or {}
        prio, dscp = pol.get("pfc_priority", 3), pol.get("roce_dscp", 26)
        for port, sw in ports.items():
            out.append(_pair(summary, port, sw, index, prio, dscp))
    return out


def _pair(switch_end: Finding, port: str, sw: dict[str, Any], index: dict[tuple[str, str], list[Finding]],
          prio: int, dscp: int) -> Finding:
    switch = switch_end.target
    peer, kind = sw.get("peer"), sw.get("peer_kind")
    label = f"{port} <-> {peer}{' ' + sw['nic'] if sw.get('nic') else ''}"
    ev = [Evidence(probe="cross-target", excerpt=f"switch {switch} {port}: {sw.get('how')}; trust {sw.get('trust')}, "
                                                 f"no-drop {sw.get('no_drop')}, PFC {sw.get('pfc_enabled')}")]
    base = dict(check=CHECK.code, target=switch, subject=port, evidence=ev,
                expected={"trust": "dscp", "roce_dscp": dscp, "priority": prio, "lossless": "both ends"})
    if not peer:
        return Finding(status=Status.SKIP, summary=f"{port}: no host named in the inventory", **base)
    host, blocker, note = _host_end(peer, kind, index, dscp)
    if blocker is not None:
        return Finding(status=Status.SKIP, summary=f"blocked by {blocker[0]} on {blocker[1]}", blocked_by=blocker,
                       details={"unjudged": note}, **base)
    if host is None:
        return Finding(status=Status.SKIP, summary=f"{label}: only the switch end was judged: {note}", **base)
    ev.append(Evidence(probe="cross-target", excerpt=f"host {peer}: {host['how']}"))
    sw_prio, host_prio = sw.get("dscp_priority"), host.get("dscp_priority")
    no_drop = sw.get("no_drop")
    sw_lossless = sw.get("pfc_enabled") is not False and sw_prio is not None and (no_drop is None or sw_prio in no_drop)
    host_lossless = host_prio is not None and host_prio in host["pfc"]
    observed = {"switch": {"trust": sw.get("trust"), "dscp_priority": sw_prio, "no_drop": no_drop,
                           "pfc_enabled": sw.get("pfc_enabled")},
                "host": {"trust": host.get("trust"), "dscp_priority": host_prio, "pfc": host["pfc"]}}
    agree = (sw.get("trust") in ("dscp", "both", None) and host.get("trust") == "dscp" and sw_prio == host_prio
             and sw_lossless and host_lossless)
    if agree:
        return Finding(status=Status.PASS, observed=observed,
                       summary=f"{label}: DSCP {dscp} is lossless on priority {sw_prio} at both ends "
                               f"(switch no-drop {','.join(map(str, no_drop or [sw_prio]))}, host PFC "
                               f"{','.join(map(str, host['pfc']))}, both trust DSCP)", **base)
    cause = _cause(index, SWITCH_CAUSES, switch, port) or _cause(index, HOST_CAUSES.get(kind or "", ()), peer, None)
    problems = []
    if sw.get("trust") not in ("dscp", "both", None):
        problems.append(f"the switch port trusts {sw.get('trust')}")
    if host.get("trust") != "dscp":
        problems.append(f"{peer} trusts {host.get('trust')}")
    if sw_prio != host_prio:
        problems.append(f"DSCP {dscp} is priority {sw_prio} on the switch but {host_prio} on {peer}")
    if not sw_lossless:
        problems.append(f"priority {sw_prio} is not lossless on the switch port")
    if not host_lossless:
        problems.append(f"{peer} pauses {','.join(map(str, host['pfc'])) or 'no priority'}, not {host_prio}")
    summary = f"{label}: half-lossless — " + "; ".join(problems)
    if cause is not None:
        return Finding(status=Status.SKIP, summary=f"blocked by {cause[0]} on {cause[1]}", blocked_by=cause,
                       observed=observed, details={"unjudged": f"fail: {summary}"}, **base)
    # the switch's DSCP map is this check's own switch-end finding: the pair names its share of that fix
    fix = sw.get("fix") if sw_prio is not None and sw_prio != prio else None
    if fix is None:
        side = "the switch" if sw_prio != prio or not sw_lossless else peer
        fix = (f"fix {side}, the end that differs from the policy (PFC on {prio}, DSCP {dscp} -> {prio}, trust dscp): "
               f"see RW502/RW503 for the switch, RW209/RW210/RW409 for {peer}")
    return Finding(status=Status.FAIL, summary=summary, observed=observed, fix=fix, **base)


compare_targets = compare_pairs  # the engine's cross-target hook


def plan_fix(facts: Facts, policy: Policy, *, failed: list) -> FixPlan | None:
    """The switch end of the agreement: give the RoCE DSCP the policy's priority in the switch's DSCP
    map (switch-wide on EOS / Onyx, the ports' trust map on OS10), read back on the ports that
    disagreed. The host end is RW209 / RW210 / RW409's own fix (the switch end is judged against the
    policy the hosts are fixed to)."""
    findings = failed  # the engine's guard: this check's failing findings, never empty
    wrong = [(p, i) for f in findings for p, i in ((f.details or {}).get("ports") or {}).items()
             if i.get("dscp_priority") not in (None, policy.pfc_priority)]
    ports = [p for p, _i in wrong]
    # OS10: each wrong port's own trust-map line, so the change groups them into one interface range
    per_port = [SimpleNamespace(fix=i["fix"], subject=p, observed={"dscp_priority": i.get("dscp_priority")})
                for p, i in wrong if isinstance(i.get("fix"), FixText)]
    changes = per_port if per_port and len(per_port) == len(wrong) else findings
    return switch_plan(CHECK, facts, changes, "dscp", {"dscp_priority": [policy.roce_dscp, policy.pfc_priority]},
                       f"DSCP {policy.roce_dscp} to priority {policy.pfc_priority} in the switch's DSCP map",
                       verify_ports=list(dict.fromkeys(ports)) or None)
