"""One vendor-neutral reading of a switch's facts, for the switch checks (RW501–RW507).

Each vendor prints PFC, trust, MTU, flow control, ECN and the DSCP map in its own commands and
words; `select(facts, field)` reads the right kind for the switch's vendor and returns one item per
port to judge:
  - in `doctor` (an inventory target): the RoCE-facing ports, i.e. the engine-made `roce_ports` (the
    ports the ESXi / Linux hosts say they are cabled to), each matched to the port the switch prints
    (`port_key`: `Ethernet3` = `Et3`, `eth1/3` = `Eth1/3`);
  - in `analyze` (no inventory): every port (or config block) the pasted output shows.
A field's value is None when the output does not say — never a guess. Checks stay pure: this module
only reads `Facts`. Beside it: switch_evidence (the output lines behind a finding), switch_fix (the fix by
hand and the fix plan), switch_verify (the read-back after a change, handed to the switch transport).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from roce_wizard.commands.switch_config import VENDOR_OF_DEVICE_TYPE
from roce_wizard.model import Facts, MissingFact, Policy
from roce_wizard.parsers.switch import port_key

__all__ = [
    "ALL_PORTS",
    "FIELD_KINDS",
    "READERS",
    "UNLISTED_PORTS",
    "VENDOR_NAMES",
    "Item",
    "Selection",
    "dscp_priority",
    "failing_of",
    "kinds",
    "lossless_queue",
    "peer_label",
    "port_findings",
    "probe_names",
    "select",
    "vendor_of",
]

VENDOR_NAMES = {"eos": "Arista EOS", "onyx": "NVIDIA Onyx", "os10": "Dell OS10", "nvue": "Cumulus NVUE",
                "sonic": "SONiC"}
ALL_PORTS = "all ports"  # the subject of a switch-wide setting (NVUE `nv show qos roce`, EOS global config)
# what a running config means for a port it does not mention (the vendor's defaults)
UNLISTED_PORTS = "ports the configuration does not mention"

# field -> vendor -> fact kinds that say it, most direct first. `doctor` gathers the ones that are
# probes (probes/switch.py); `analyze` reads whichever a pasted file is.
FIELD_KINDS: dict[str, dict[str, tuple[str, ...]]] = {
    "pfc": {"eos": ("arista_pfc", "eos_running_config"), "onyx": ("onyx_pfc", "onyx_running_config"),
            "os10": ("os10_running_config",), "nvue": ("nvue_qos_roce",), "sonic": ("sonic_pfc",)},
    "trust": {"eos": ("eos_qos_interfaces", "eos_running_config"),
              "onyx": ("onyx_qos_interface", "onyx_running_config"), "os10": ("os10_running_config",),
              "nvue": ("nvue_qos_roce",)},
    "mtu": {"eos": ("eos_interfaces",), "onyx": ("onyx_interfaces", "onyx_running_config"),
            "os10": ("os10_interfaces", "os10_running_config"), "nvue": ("nvue_interfaces",)},
    "flowcontrol": {"eos": ("eos_flowcontrol", "eos_running_config"),
                    "onyx": ("onyx_interfaces", "onyx_running_config"),
                    "os10": ("os10_interfaces", "os10_running_config")},
    "ecn": {"eos": ("eos_qos_interfaces", "eos_running_config"), "onyx": ("onyx_running_config",),
            "os10": ("os10_running_config",), "nvue": ("nvue_qos_roce",)},
    "dscp": {"eos": ("eos_qos_maps", "eos_running_config"), "onyx": ("onyx_running_config",),
             "os10": ("os10_running_config",), "nvue": ("nvue_qos_roce",)},
}

# what a vendor does by default when its running configuration says nothing
OS10_DEFAULT_MTU = 1532
ONYX_DEFAULT_MTU = 1500


def kinds(*fields: str) -> tuple[str, ...]:
    """Every fact kind the given fields can be read from (a check's optional_probes)."""
    out: list[str] = []
    for f in fields:
        for per_vendor in FIELD_KINDS[f].values():
            out.extend(k for k in per_vendor if k not in out)
    return tuple(out)


def vendor_of(facts: Facts) -> str | None:
    """The switch's vendor: the inventory's device_type, else the kinds of the pasted outputs."""
    if facts.target is not None and facts.target.device_type in VENDOR_OF_DEVICE_TYPE:
        return VENDOR_OF_DEVICE_TYPE[facts.target.device_type]
    for kind in facts.data:
        for prefix, vendor in (("arista_", "eos"), ("eos_", "eos"), ("onyx_", "onyx"), ("os10_", "os10"),
                               ("nvue_", "nvue"), ("sonic_", "sonic")):
            if kind.startswith(prefix):
                return vendor
    return None


@dataclass
class Item:
    """One port to judge: `subject` as the inventory names it (doctor) or as printed (analyze)."""

    subject: str
    entry: dict[str, Any] | None  # vendor-neutral facts of that port; None: the output does not show it
    peer: str | None = None  # the host cabled to it (doctor)
    peer_kind: str | None = None
    nic: str | None = None  # the host's vmnic / netdev
    printed_as: str | None = None  # the port's name in the switch output


@dataclass
class Selection:
    vendor: str
    kind: str | None  # the fact kind read
    items: list[Item] = field(default_factory=list)
    switch: dict[str, Any] = field(default_factory=dict)  # switch-wide facts
    why_none: str | None = None  # why there is nothing to judge (a skip)


# --------------------------------------------------------------------------------------------
# per kind: printed port name -> vendor-neutral entry


def _by_port(rows: Iterable[dict[str, Any]], make) -> dict[str, dict[str, Any]]:
    return {r["port"]: make(r) for r in rows if r.get("port")}


def _pfc_entries(kind: str, data: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    if kind == "arista_pfc":
        glob = data.get("global_enabled")
        return _by_port(data.get("ports", []), lambda r: {
            "pfc_enabled": bool(r.get("enabled")) and glob is not False, "pfc_active": r.get("active"),
            "no_drop": list(r.get("priorities") or []), "admin": "E" if r.get("enabled") else "D"}), {"global": glob}
    if kind == "onyx_pfc":
        glob, prios = data.get("enabled"), data.get("priorities")
        return _by_port(data.get("ports", []), lambda r: {
            "pfc_enabled": r.get("enabled") and glob is not False, "pfc_active": r.get("enabled"),
            "no_drop": list(prios) if prios is not None else None, "admin": r.get("admin"), "oper": r.get("oper")}), {
            "global": glob, "priorities": prios, "elided": data.get("elided")}
    if kind == "onyx_running_config":
        glob, prios = data.get("pfc_enabled"), data.get("pfc_priorities") or []
        out = {name: {"pfc_enabled": bool(glob) and i.get("pfc_mode") == "on", "pfc_active": None,
                      "no_drop": list(prios), "admin": i.get("pfc_mode") or "auto"}
               for name, i in (data.get("interfaces") or {}).items()}
        # the no-drop list is switch-wide; a port without `mode on` is in DCBX auto mode
        out[ALL_PORTS if not out else UNLISTED_PORTS] = {"pfc_enabled": bool(glob) and not out, "pfc_active": None,
                                                         "no_drop": list(prios), "admin": "auto"}
        return out, {"global": glob, "priorities": prios}
    if kind == "eos_running_config":
        out = {name: {"pfc_enabled": i.get("pfc_enabled"), "pfc_active": None, "no_drop": list(i.get("no_drop") or [])}
               for name, i in (data.get("interfaces") or {}).items()
               if i.get("pfc_enabled") is not None or i.get("no_drop")}
        g = data.get("global")
        if g and (g.get("pfc_enabled") is not None or g.get("no_drop")):
            out[ALL_PORTS] = {"pfc_enabled": g.get("pfc_enabled"), "pfc_active": None, "no_drop": list(g.get("no_drop"))}
        return out, {}
    if kind == "os10_running_config":
        return {name: {"pfc_enabled": bool(i.get("pfc_mode")), "pfc_active": None, "no_drop": list(i.get("no_drop") or []),
                       "policy": i.get("nqos_policy")}
                for name, i in (data.get("interfaces") or {}).items() if name.startswith("ethernet")}, {}
    if kind == "nvue_qos_roce":
        if "mode" not in data and "enabled" not in data:
            return {}, {}  # the per-interface counters form says nothing about the configuration
        prios = data.get("pfc_priorities")
        on = bool(data.get("enabled")) and data.get("mode") == "lossless" and bool(prios)
        return {ALL_PORTS: {"pfc_enabled": on, "pfc_active": None, "no_drop": list(prios or []),
                            "mode": data.get("mode")}}, {"mode": data.get("mode")}
    if kind == "sonic_pfc":
        return _by_port(data.get("ports", []), lambda r: {
            "pfc_enabled": bool(r.get("priorities")), "pfc_active": None, "no_drop": list(r.get("priorities") or [])}), {}
    return {}, {}


def _trust_entries(kind: str, data: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    if kind in ("eos_qos_interfaces", "onyx_qos_interface"):
        return _by_port(data.get("interfaces", []), lambda r: {"trust": r.get("trust"),
                                                               "trust_raw": r.get("trust_raw")}), {}
    if kind == "onyx_running_config":
        # Onyx prints `qos trust` only when it is not the default (L2, i.e. PCP)
        out = {name: {"trust": i.get("trust") or "pcp", "trust_raw": None} for name, i in
               (data.get("interfaces") or {}).items()}
        out[UNLISTED_PORTS] = {"trust": "pcp", "trust_raw": None}
        return out, {}
    if kind == "eos_running_config":
        return {name: {"trust": i.get("trust") or "pcp"} for name, i in (data.get("interfaces") or {}).items()
                if i.get("trust") is not None}, {}
    if kind == "os10_running_config":
        return {name: {"trust": i.get("trust") or "none", "trust_map": i.get("effective_trust_map")}
                for name, i in (data.get("interfaces") or {}).items() if name.startswith("ethernet")}, {}
    if kind == "nvue_qos_roce":
        modes = data.get("trust_mode")
        if modes is None:
            return {}, {}
        trust = None if modes is None else "dscp" if "dscp" in modes else ",".join(modes) or None
        return {ALL_PORTS: {"trust": trust, "trust_raw": ",".join(modes or [])}}, {}
    return {}, {}


def _mtu_entries(kind: str, data: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    if kind == "eos_interfaces":
        return _by_port(data.get("interfaces", []), lambda r: {
            "mtu": r.get("mtu"), "mtu_kind": r.get("mtu_kind"), "ethernet_mtu": r.get("ethernet_mtu"),
            "ip_mtu": r.get("ip_mtu"), "routed": r.get("routed")}), {}
    if kind in ("onyx_interfaces", "os10_interfaces", "nvue_interfaces"):
        return _by_port([r for r in data.get("interfaces", []) if r.get("type") in (None, "ethernet", "swp")],
                        lambda r: {"mtu": r.get("mtu"), "mtu_kind": "ethernet"}), {}
    if kind == "onyx_running_config":
        return {name: {"mtu": i.get("mtu") or ONYX_DEFAULT_MTU, "mtu_kind": "configured" if i.get("mtu") else "default"}
                for name, i in (data.get("interfaces") or {}).items()}, {}
    if kind == "os10_running_config":
        return {name: {"mtu": i.get("mtu") or OS10_DEFAULT_MTU, "mtu_kind": "configured" if i.get("mtu") else "default"}
                for name, i in (data.get("interfaces") or {}).items() if name.startswith("ethernet")}, {}
    return {}, {}


def _flowcontrol_entries(kind: str, data: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    if kind == "eos_flowcontrol":
        return _by_port(data.get("ports", []), lambda r: {"rx": r.get("receive"), "tx": r.get("send")}), {}
    if kind in ("onyx_interfaces", "os10_interfaces"):
        return _by_port([r for r in data.get("interfaces", []) if r.get("type") in (None, "ethernet")],
                        lambda r: {"rx": r.get("flowcontrol_rx"), "tx": r.get("flowcontrol_tx")}), {}
    if kind == "eos_running_config":
        return {name: {"rx": bool(i.get("flowcontrol_receive")), "tx": bool(i.get("flowcontrol_send"))}
                for name, i in (data.get("interfaces") or {}).items()}, {}
    if kind in ("onyx_running_config", "os10_running_config"):
        return {name: {"rx": bool(i.get("flowcontrol_rx")), "tx": bool(i.get("flowcontrol_tx"))}
                for name, i in (data.get("interfaces") or {}).items() if not name.startswith("mgmt")}, {}
    return {}, {}


def _ecn_entries(kind: str, data: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    if kind == "eos_qos_interfaces":
        return _by_port(data.get("interfaces", []), lambda r: {"ecn_queues": list(r.get("ecn_queues") or [])}), {}
    if kind in ("eos_running_config", "onyx_running_config", "os10_running_config"):
        out = {name: {"ecn_queues": list(i.get("ecn_queues") or [])} for name, i in
               (data.get("interfaces") or {}).items() if not name.startswith("mgmt")}
        if kind == "onyx_running_config":
            out[UNLISTED_PORTS] = {"ecn_queues": []}
        return out, {}
    if kind == "nvue_qos_roce":
        if data.get("congestion_mode") is None and data.get("ecn_tcs") is None:
            return {}, {}
        on = (data.get("congestion_mode") or "").upper() == "ECN"
        return {ALL_PORTS: {"ecn_queues": list(data.get("ecn_tcs") or []) if on else []}}, {
            "switch_priority_to_tc": data.get("switch_priority_to_tc")}
    return {}, {}


def _dscp_entries(kind: str, data: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Switch-wide DSCP maps (EOS, Onyx, NVUE) or per-interface trust maps (OS10)."""
    if kind == "nvue_qos_roce" and "mode" not in data and "enabled" not in data:
        return {}, {}
    if kind == "os10_running_config":
        maps = data.get("dscp_maps") or {}
        return {name: {"trust": i.get("trust") or "none", "trust_map": i.get("effective_trust_map")}
                for name, i in (data.get("interfaces") or {}).items() if name.startswith("ethernet")}, {"maps": maps}
    return {ALL_PORTS: {}}, {}


READERS = {"pfc": _pfc_entries, "trust": _trust_entries, "mtu": _mtu_entries, "flowcontrol": _flowcontrol_entries,
           "ecn": _ecn_entries, "dscp": _dscp_entries}


# --------------------------------------------------------------------------------------------
# selecting what to judge


def probe_names() -> set[str]:
    from roce_wizard.probes import PROBES

    return set(PROBES)


def pick_kind(facts: Facts, vendor: str, fld: str) -> str | None:
    """The kind to read `fld` from: the first of the vendor's kinds present. None in `analyze`
    when none is; in `doctor` a missing one raises MissingFact for the kind doctor probes."""
    options = FIELD_KINDS[fld].get(vendor, ())
    for kind in options:
        if facts.has(kind):
            return kind
    if facts.target is None:
        return None
    probed = [k for k in options if k in probe_names()]
    if not probed:
        return None
    raise MissingFact(probed[0], facts.failures[probed[0]].reason if probed[0] in facts.failures else "")


def _matches(key: tuple[str, tuple[int, ...]] | None, name: str) -> bool:
    """Does a printed port / config block name (maybe a range: Ethernet1/1-3/4, Eth1/1-1/4) cover key?"""
    if key is None:
        return False
    if name == ALL_PORTS:
        return True
    other = port_key(name)
    if other is not None:
        return other == key
    if "-" in name:
        start, _, end = name.partition("-")
        a = port_key(start)
        if a is None:
            return False
        b = port_key(end) or port_key(a[0] + end)
        if b is None:
            return False
        if len(b[1]) < len(a[1]):
            b = (b[0], a[1][: len(a[1]) - len(b[1])] + b[1])
        return a[0] == key[0] and len(a[1]) == len(key[1]) == len(b[1]) and a[1] <= key[1] <= b[1]
    return False


class _PrintedPorts:
    """The names an output prints (ports, config blocks, ranges), for `select`: the first one in the output's
    order that covers a port, as a scan with `_matches` finds it, but one dict lookup per port (plus the few
    range names) instead of a scan per port (issue 16: doctor was quadratic in a switch's ports)."""

    def __init__(self, names: Iterable[str]):
        self.exact: dict[tuple[str, tuple[int, ...]], tuple[int, str]] = {}
        self.ranges: list[tuple[int, str]] = []  # names that are no single port but may cover one (Eth1/1-1/4)
        for i, name in enumerate(names):
            if name in (ALL_PORTS, UNLISTED_PORTS):
                continue
            key = port_key(name)
            if key is not None:
                self.exact.setdefault(key, (i, name))
            elif "-" in name:
                self.ranges.append((i, name))

    def first(self, key: tuple[str, tuple[int, ...]] | None) -> str | None:
        if key is None:
            return None
        exact = self.exact.get(key)
        for i, name in self.ranges:
            if exact is not None and i > exact[0]:
                break
            if _matches(key, name):
                return name
        return exact[1] if exact is not None else None


def roce_ports(facts: Facts) -> list[dict[str, Any]] | None:
    """The engine-made list of ports RoCE hosts are cabled to (None in analyze)."""
    if facts.target is None:
        return None
    return list(facts.get("roce_ports") or [])


def select(facts: Facts, fld: str) -> Selection:
    """What to judge for one field: RoCE ports (doctor) or every printed port (analyze)."""
    vendor = vendor_of(facts) or "unknown"
    if vendor not in FIELD_KINDS[fld]:
        return Selection(vendor, None, why_none=f"{VENDOR_NAMES.get(vendor, vendor)}: roce-wizard does not read this "
                                                f"setting from this switch")
    kind = pick_kind(facts, vendor, fld)
    if kind is None:
        return Selection(vendor, None, why_none="not in the outputs given")
    entries, switch = READERS[fld](kind, facts.need(kind))
    sel = Selection(vendor, kind, switch=switch)
    wanted = roce_ports(facts)
    if wanted is None:  # analyze: every port the output shows (the defaults only when it shows none)
        listed = {n: e for n, e in entries.items() if n != UNLISTED_PORTS} or entries
        sel.items = [Item(name, entry, printed_as=name) for name, entry in listed.items()]
        if not sel.items:
            sel.why_none = "the output says nothing this check reads (no port, no setting)"
        return sel
    if not wanted:
        sel.why_none = ("no host in the inventory names a port of this switch (roce.switch_ports "
                        "'switch:port' on the esxi/linux targets): which ports carry RoCE is unknown")
        return sel
    seen: set[str] = set()
    printed = _PrintedPorts(entries)
    for rp in wanted:
        port = rp.get("port") or ""
        if port in seen:
            continue
        seen.add(port)
        hit = printed.first(port_key(port))
        for fallback in (ALL_PORTS, UNLISTED_PORTS):
            if hit is None and fallback in entries:
                hit = fallback
        sel.items.append(Item(port, entries.get(hit) if hit is not None else None, rp.get("peer"), rp.get("peer_kind"),
                              rp.get("nic"), hit))
    return sel


def peer_label(item: Item) -> str:
    return f" (to {item.peer}{' ' + item.nic if item.nic else ''})" if item.peer else ""


# --------------------------------------------------------------------------------------------
# maps: which priority a DSCP gets, which queue the lossless priority uses


def _eos_default_tc(dscp: int) -> int:
    """EOS's default DSCP -> traffic class (dscp >> 3, with classes 0 and 1 swapped as for CoS)."""
    tc = dscp >> 3
    return {0: 1, 1: 0}.get(tc, tc)


def _eos_default_tc_cos(tc: int) -> int:
    return {0: 1, 1: 0}.get(tc, tc)


def dscp_priority(facts: Facts, vendor: str, kind: str, dscp: int, port: Item | None = None) -> tuple[int | None, str]:
    """(the priority the switch gives DSCP `dscp` on this port, how that was read)."""
    data = facts.need(kind)
    if kind == "eos_qos_maps":
        table = {int(k): int(v) for k, v in (data.get("dscp_tc") or {}).items()}
        tc = table.get(dscp)
        if tc is None:
            return None, "show qos maps prints no DSCP -> TC entry for it"
        tc_cos = {int(k): int(v) for k, v in (data.get("tc_cos") or {}).items()}
        prio = tc_cos.get(tc, _eos_default_tc_cos(tc))
        return prio, f"DSCP {dscp} -> traffic-class {tc} -> priority (CoS) {prio}"
    if kind == "eos_running_config":
        tc = {int(k): int(v) for k, v in (data.get("dscp_tc") or {}).items()}.get(dscp, _eos_default_tc(dscp))
        prio = _eos_default_tc_cos(tc)
        return prio, f"DSCP {dscp} -> traffic-class {tc} (running-config, else the EOS default map) -> priority {prio}"
    if kind == "onyx_running_config":
        table = {int(k): int(v) for k, v in (data.get("dscp_to_switch_priority") or {}).items()}
        prio = table.get(dscp, dscp >> 3)
        how = "qos map dscp-to-switch-priority" if dscp in table else "the default map (dscp >> 3)"
        return prio, f"DSCP {dscp} -> switch-priority {prio} ({how})"
    if kind == "nvue_qos_roce":
        table = {int(k): int(v) for k, v in (data.get("dscp_to_switch_priority") or {}).items()}
        if dscp in table:
            return table[dscp], f"DSCP {dscp} -> switch-prio {table[dscp]} (nv show qos roce)"
        return dscp >> 3, f"DSCP {dscp} -> switch-prio {dscp >> 3} (not printed: the default map dscp >> 3)"
    if kind == "os10_running_config":
        entry = (port.entry if port is not None else None) or {}
        name = entry.get("trust_map")
        if not name:
            return None, "the port has no trust-map dscp (DSCP is not trusted)"
        table = {int(k): int(v) for k, v in ((data.get("dscp_maps") or {}).get(name) or {}).items()}
        group = table.get(dscp, dscp >> 3)
        how = f"trust dscp-map {name}" if dscp in table else f"trust-map {name}: the default map (dscp >> 3)"
        return group, f"DSCP {dscp} -> qos-group {group} ({how})"
    return None, f"no DSCP map in {kind}"


def lossless_queue(facts: Facts, vendor: str, policy: Policy) -> int:
    """The egress queue (traffic class) of the lossless priority: where ECN must mark RoCE."""
    prio = policy.pfc_priority
    if vendor == "eos" and facts.has("eos_qos_maps"):
        maps = facts.get("eos_qos_maps")
        tc = {int(k): int(v) for k, v in (maps.get("cos_tc") or {}).items()}.get(prio, _eos_default_tc_cos(prio))
        return {int(k): int(v) for k, v in (maps.get("tc_queue") or {}).items()}.get(tc, tc)
    if vendor == "eos":
        return _eos_default_tc_cos(prio)
    if vendor == "nvue" and facts.has("nvue_qos_roce"):
        sp_tc = facts.get("nvue_qos_roce").get("switch_priority_to_tc") or {}
        return int({int(k): v for k, v in sp_tc.items()}.get(prio, prio))
    return prio


def port_findings(check: Any, facts: Facts, fld: str, judge: Any) -> list[Any]:
    """Findings for every item of `select(facts, fld)`: `judge(item, selection)` for the ports the
    output shows, an error for a RoCE port it does not show, a skip when there is nothing to judge."""
    from roce_wizard.checklib.findings import skip
    from roce_wizard.model import Evidence, Finding, Status

    sel = select(facts, fld)
    probes = (sel.kind,) if sel.kind else (FIELD_KINDS[fld].get(sel.vendor) or kinds(fld))[:1]
    if sel.why_none:
        return [skip(check, facts, sel.why_none, probes=probes)]
    out = []
    for item in sel.items:
        if item.entry is None:
            shown = ", ".join(list(READERS[fld](sel.kind, facts.need(sel.kind))[0])[:12]) or "none"
            out.append(Finding(check.code, Status.ERROR,
                               f"{item.subject}{peer_label(item)}: the switch prints no such port (it shows {shown}); "
                               "check roce.switch_ports in the inventory", target=facts.target_name,
                               subject=item.subject, evidence=[Evidence(sel.kind, facts.commands.get(sel.kind))]))
            continue
        out.append(judge(item, sel))
    return out


def failing_of(evaluate: Any, facts: Facts, policy: Policy) -> list[Any]:
    """The check's failing findings ([] when a fact is missing: nothing to plan)."""
    from roce_wizard.checklib.findings import failing

    try:
        return failing(evaluate(facts, policy))
    except MissingFact:
        return []
