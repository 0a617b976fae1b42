"""Shared by the lab's vendor CLIs: RoCE priorities, port names and ranges, MACs, LLDP peers, and the
reconciliation of vendor state with the world's port fields (split out of lab/switch/__init__.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from roce_wizard.lab.switch import os10_qos
from roce_wizard.lab.switch.state import (
    CliState,
    Os10Class,
    Os10Policy,
    Os10PolicyClass,
    cli_state,
    default_switch_priority,
)
from roce_wizard.lab.world import Switch, SwitchPort, World


def roce_priority(world: World) -> int:
    return int(world.policy.get("pfc_priority", 3))


def switch_priority(switch: Switch, port_name: str, dscp: int) -> int | None:
    """The priority the switch gives a packet with this DSCP arriving on this port (None: the port
    trusts PCP, so the DSCP is ignored). For the rest of the lab: RoCE is lossless through the port
    only when this priority is one of the port's no-drop priorities and PFC is on."""
    port = switch.port(port_name)
    if port is None or port.trust != "dscp":
        return None
    state = cli_state(switch)
    if switch.vendor == "os10":
        name = state.os10_port_trust_map.get(port.name, "default")
        overrides = state.os10_dscp_maps.get(name, {}) if name != "default" else {}
    else:
        overrides = state.dscp_map
    return overrides.get(dscp, default_switch_priority(dscp))


def roce_lossless(switch: Switch, port_name: str, dscp: int) -> bool:
    """Does traffic with this DSCP get a paused (lossless) class on this port?"""
    port = switch.port(port_name)
    prio = switch_priority(switch, port_name, dscp)
    return bool(port and port.pfc_enabled and prio is not None and prio in port.no_drop)


# --------------------------------------------------------------------------------------------
# port names


def _numbers(name: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", name))


def _nums_text(nums: tuple[int, ...]) -> str:
    return "/".join(str(n) for n in nums)


def eos_short(port: SwitchPort) -> str:
    return "Et" + _nums_text(_numbers(port.name))


def onyx_id(port: SwitchPort) -> str:  # "1/1" as `interface ethernet 1/1` takes it
    return _nums_text(_numbers(port.name))


def os10_id(port: SwitchPort) -> str:  # "1/1/1"
    return _nums_text(_numbers(port.name))


_TYPE_WORD = re.compile(r"^(?:ethernet|ether|eth|et|e)\s*", re.IGNORECASE)


def _strip_type(item: str) -> str:
    return _TYPE_WORD.sub("", item.strip())


def resolve_ports(switch: Switch, spec: str) -> tuple[list[SwitchPort], str] | None:
    """Ports named by an interface spec — `Ethernet1`, `Et1-4`, `Et1/1-3/4`, `ethernet 1/1-1/4`,
    `ethernet1/1/1-1/1/4`, `Ethernet1,3` — and the spec as the prompt shows it (`1-4`); None when a
    part of it names no port (a range takes the ports that exist between its ends)."""
    items = [_strip_type(x) for x in spec.split(",")]
    if not items or any(not x for x in items):
        return None
    chosen: list[SwitchPort] = []
    for item in items:
        start_text, _, end_text = item.partition("-")
        if not re.fullmatch(r"\d+(?:/\d+)*", start_text) or (end_text and not re.fullmatch(r"\d+(?:/\d+)*", end_text)):
            return None
        start = tuple(int(x) for x in start_text.split("/"))
        end = tuple(int(x) for x in end_text.split("/")) if end_text else start
        if len(end) < len(start):  # 1/1-4 means 1/1-1/4
            end = start[: len(start) - len(end)] + end
        hit = [p for p in switch.ports if len(_numbers(p.name)) == len(start) and start <= _numbers(p.name) <= end]
        if not hit:
            return None
        chosen.extend(p for p in hit if p not in chosen)
    chosen.sort(key=lambda p: _numbers(p.name))
    return chosen, ",".join(items)


def _parse_int_list(text: str, low: int, high: int) -> list[int] | None:
    """`3`, `3,4`, `24-31`, `0-2,4-6` (also space separated) -> ints, None when malformed or out of range."""
    out: list[int] = []
    for part in re.split(r"[,\s]+", text.strip()):
        if not part:
            continue
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            return None
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) else a
        if a > b or a < low or b > high:
            return None
        out.extend(range(a, b + 1))
    return out or None


def _ranges(values: Iterable[int]) -> str:
    """[0,1,2,4,5,6] -> '0-2,4-6' (OS10 style)."""
    vals = sorted(set(values))
    out: list[str] = []
    i = 0
    while i < len(vals):
        j = i
        while j + 1 < len(vals) and vals[j + 1] == vals[j] + 1:
            j += 1
        out.append(str(vals[i]) if i == j else f"{vals[i]}-{vals[j]}")
        i = j + 1
    return ",".join(out)


def _mac(switch: Switch, port: SwitchPort | None = None) -> str:
    base = sum(ord(c) for c in switch.name) & 0xFF
    idx = switch.ports.index(port) + 1 if port is not None and port in switch.ports else 0
    return f"{0x44:02x}:4c:a8:{base:02x}:{idx >> 8:02x}:{idx & 0xFF:02x}"


def _eos_mac(switch: Switch, port: SwitchPort | None = None) -> str:
    raw = _mac(switch, port).replace(":", "")
    return f"{raw[0:4]}.{raw[4:8]}.{raw[8:12]}"


def _uptime(seconds: float) -> tuple[int, int, int, int]:
    s = int(seconds)
    return s // 86400, s // 3600 % 24, s // 60 % 60, s % 60


# --------------------------------------------------------------------------------------------
# reconciling vendor state with the world's port fields


def _reconcile(world: World, switch: Switch) -> None:
    """Bring the vendor state in line with the port fields (a fault or another part of the lab may
    have changed them directly), and the port fields in line with vendor-global settings."""
    state = cli_state(switch)
    if switch.vendor == "onyx":
        # Onyx's no-drop priorities are switch-wide: every port carries the one list
        union: set[int] = set()
        for p in switch.ports:
            union |= p.no_drop
        for p in switch.ports:
            p.no_drop = set(union)
        if any(p.pfc_enabled for p in switch.ports):
            state.onyx_pfc_global = True
        for p in switch.ports:
            if p.pfc_enabled:
                state.onyx_admin_pending.discard(p.name)
    elif switch.vendor == "os10":
        _reconcile_os10(world, switch)
    known = {p.name for p in switch.ports}
    for name in list(state.ecn_other):
        if name not in known:
            del state.ecn_other[name]


def _os10_nqos_cos(state: CliState, policy: str | None) -> set[int]:
    pol = state.os10_policies.get(policy or "")
    if pol is None or pol.kind != "network-qos":
        return set()
    out: set[int] = set()
    for klass in pol.classes.values():
        if klass.pause:
            out |= klass.pfc_cos
    return out


def _os10_ecn_queues(state: CliState, policy: str | None) -> set[int]:
    pol = state.os10_policies.get(policy or "")
    if pol is None or pol.kind != "queuing":
        return set()
    out: set[int] = set()
    for name, klass in pol.classes.items():
        cmap = state.os10_class_maps.get(("queuing", name))
        if os10_qos.class_has_ecn(state, klass) and cmap is not None:
            out.add(cmap.match)
    return out


def _reconcile_os10(world: World, switch: Switch) -> None:
    state = cli_state(switch)
    roce = roce_priority(world)
    for p in switch.ports:
        # network-qos policy: its paused pfc-cos must be the port's no-drop set
        attached = state.os10_port_nqos.get(p.name)
        if attached is None or _os10_nqos_cos(state, attached) != p.no_drop:
            if not p.no_drop:
                state.os10_port_nqos.pop(p.name, None)
            else:
                match = next((n for n in sorted(state.os10_policies)
                              if _os10_nqos_cos(state, n) == p.no_drop), None)
                if match is None:
                    match = "pfc-cos-" + "".join(str(c) for c in sorted(p.no_drop))
                    pol = Os10Policy("network-qos")
                    for cos in sorted(p.no_drop):
                        cname = f"pfcdot1p{cos}"
                        state.os10_class_maps.setdefault(("network-qos", cname), Os10Class(cos))
                        pol.classes[cname] = Os10PolicyClass(pause=True, pfc_cos={cos})
                    state.os10_policies[match] = pol
                state.os10_port_nqos[p.name] = match
        # queuing policy: ECN on the RoCE queue exactly when the port says so
        queuing = state.os10_port_queuing.get(p.name)
        has = roce in _os10_ecn_queues(state, queuing)
        if has != p.ecn:
            if p.ecn:
                match = next((n for n in sorted(state.os10_policies)
                              if roce in _os10_ecn_queues(state, n)), None)
                if match is None:
                    match = f"ecn-q{roce}"
                    state.os10_class_maps.setdefault(("queuing", f"q{roce}"), Os10Class(roce))
                    state.os10_policies[match] = Os10Policy(
                        "queuing", {f"q{roce}": Os10PolicyClass(wred=os10_qos.auto_profile(state), bandwidth=50)})
                state.os10_port_queuing[p.name] = match
            else:
                state.os10_port_queuing.pop(p.name, None)
        # trust: a trust-map dscp exactly when the port trusts DSCP
        if p.trust == "dscp":
            state.os10_port_trust_map.setdefault(p.name, "default")
        else:
            state.os10_port_trust_map.pop(p.name, None)


def _os10_derive(world: World, switch: Switch) -> None:
    """The port fields OS10 derives from the attached policies and trust maps (after a merge)."""
    state = cli_state(switch)
    roce = roce_priority(world)
    for p in switch.ports:
        p.no_drop = _os10_nqos_cos(state, state.os10_port_nqos.get(p.name))
        p.ecn = roce in _os10_ecn_queues(state, state.os10_port_queuing.get(p.name))
        p.trust = "dscp" if p.name in state.os10_port_trust_map else "pcp"


def _apply_os10_policy(switch: Switch, policy: str) -> None:
    """After a policy-map edit, the ports it is attached to take its no-drop set."""
    state = cli_state(switch)
    for p in switch.ports:
        if state.os10_port_nqos.get(p.name) == policy:
            p.no_drop = _os10_nqos_cos(state, policy)


def _apply_os10_queuing(world: World, switch: Switch, policy: str) -> None:
    state = cli_state(switch)
    roce = roce_priority(world)
    for p in switch.ports:
        if state.os10_port_queuing.get(p.name) == policy:
            p.ecn = roce in _os10_ecn_queues(state, policy)



def _lldp_peer(world: World, p: SwitchPort) -> tuple[str, str, str] | None:
    """(system name, port id, port description) the host's end of the cable advertises by LLDP.

    Where LLDP really comes from: an ESXi host sends it only from a vSphere Distributed Switch uplink
    (a standard vSwitch speaks CDP only); the fields are the ones a real switch shows for a VDS uplink
    (a public NX-OS `show lldp neighbors` table with ESXi hosts behind a VDS: system name the host's
    name, port id the vmnic's MAC, description `port 19 on dvSwitch EU-SPDC-R3DC (cswitch)`).
    A bare-metal Linux host runs lldpd (system name, port id the MAC, description the netdev).
    The ConnectX firmware's own LLDP agent (mlxconfig LLDP_NB_TX_MODE) is not modelled: none is shown."""
    if p.peer is None:
        return None
    host_name, nic = p.peer
    host = world.hosts.get(host_name)
    vc = world.vcenter
    if host is not None and vc is not None and vc.dvs_name and nic in vc.dvs_members.get(host_name, []):
        vmnic = next((n for n in host.vmnics if n.name == nic), None)
        uplinks = sorted((h, n) for h, nics in vc.dvs_members.items() for n in nics)
        return host_name, vmnic.mac if vmnic else nic, \
            f"port {uplinks.index((host_name, nic)) + 1} on dvSwitch {vc.dvs_name} (cswitch)"
    guest = world.guests.get(host_name)
    if guest is not None and guest.vm is None:  # bare-metal Linux runs lldpd
        iface = guest.interface(nic)
        return host_name, iface.mac if iface else nic, nic
    return None
