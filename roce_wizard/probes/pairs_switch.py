"""The `switch_counters` pair probe (RW609): the measured nodes' switch ports read before the pair's first
measurement and after its last, in the vendor's own counter view.

Which ports: the inventory's cabling (`roce.switch_ports: ["<switch>:<port>"]`) of each node, or of its ESXi
host for a VF guest (the VF's traffic leaves through the host's uplink). What is read, per netmiko device type
(only views with a real capture and a parser; sources in tests/data/README-issue15.md):

- arista_eos: `show interfaces counters queue detail` (kind eos_queue_counters): enqueued/dropped packets and octets
  per port and traffic class; and once, before, `show qos maps` (kind eos_qos_maps): the CoS → traffic-class map
  that says which TC the lossless priority is (Arista EOS User Manual, "Quality of Service", QoS Data Fields and
  Traffic Classes: https://arista.com/um-eos/eos-quality-of-service — the default maps CoS 0 → TC 1, CoS 1 → TC 0,
  CoS n → TC n otherwise). Pauses per priority (`show priority-flow-control counters`) are not read: no real
  capture of that view was found, so its format is unknown to the tool.
- cumulus_nvue: `nv show interface <swp> qos roce counters` (kind nvue_qos_roce, `roce_counters`): RoCE pause
  packets rx/tx and RoCE no-buffer discards (the view counts the RoCE priority only).
- sonic: `show pfc counters` (sonic_show_pfc: pause frames per port and priority) and `show queue counters`
  (sonic_queue_counters: drops per unicast queue).
- mellanox_mlnxos (Onyx), dell_os10: nothing is run: no real capture of their per-priority counter views
  (`show interfaces ethernet <p> counters priority <n>`, `show qos priority-flow-control statistics`) was found.

A switch asked the same command twice (before, after) is answered in order on `--replay` (PairStep `seq`).
Pure like probes/pairs.py: the steps and the reading of their outputs.
"""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.model import Policy, Target
from roce_wizard.probes.pairs import Outputs, PairNodes, PairProbe, PairStep, parse
from roce_wizard.parsers.switch.nvue_counters import roce_counters
from roce_wizard.probes import UnsafeValue, safe

EOS, ONYX, OS10, NVUE, SONIC = "arista_eos", "mellanox_mlnxos", "dell_os10", "cumulus_nvue", "sonic"
NOT_READ = {
    ONYX: "Onyx's per-priority counters (`show interfaces ethernet <p> counters priority <n>`) are not read yet: "
          "no real capture of that view was found, so its format is unknown to the tool",
    OS10: "OS10's PFC and queue statistics (`show qos priority-flow-control statistics`, `show queuing "
          "statistics`) are not read yet: no real capture of those views was found",
}
PORT = re.compile(r"^[A-Za-z0-9_./:-]{1,40}$")


def port_key(name: str) -> str:
    """One spelling for a port: EOS prints `Et1/1` for `Ethernet1/1`; case and the long prefix dropped."""
    low = name.strip().lower()
    for long, short in (("ethernet", "et"), ("eth", "et")):
        if low.startswith(long):
            return short + low[len(long):]
    return low


def measured_ports(nodes: PairNodes) -> dict[str, dict[str, list[str]]]:
    """switch name -> {port: [nodes cabled there]} for both nodes (a VF guest: its ESXi host's uplinks)."""
    out: dict[str, dict[str, list[str]]] = {}
    for node in (nodes.sender, nodes.receiver):
        t = node.target
        specs = t.roce.switch_ports or (nodes.targets[t.host].roce.switch_ports
                                        if t.host and t.host in nodes.targets else ())
        for spec in specs:
            sw, _, port = spec.partition(":")
            if sw and port:
                out.setdefault(sw, {}).setdefault(port, []).append(node.name)
    return out


def _commands(switch: Target, ports: list[str], phase: str = "before") -> list[tuple[str, str]]:
    """(step name, command) for one reading of a switch; [] when the vendor's counters are not read. EOS's
    CoS → traffic-class map is read once, with the first reading."""
    dt = switch.device_type or ""
    if dt == EOS:
        return [("queue", "show interfaces counters queue detail")] + (
            [("maps", "show qos maps")] if phase == "before" else [])
    if dt == SONIC:
        return [("pfc", "show pfc counters"), ("queue", "show queue counters")]
    if dt == NVUE:
        return [(f"roce.{p}", f"nv show interface {safe(p, PORT)} qos roce counters") for p in ports]
    return []


def _why_not(switch: Target | None, name: str) -> str | None:
    if switch is None:
        return f"{name} is not a target of this run (add it to the inventory, or run the switch stage too)"
    dt = switch.device_type or ""
    if dt in NOT_READ:
        return NOT_READ[dt]
    if dt not in (EOS, SONIC, NVUE):
        return f"{name}: device_type {dt!r} has no counter view the tool reads"
    return None


def _command(nodes: PairNodes, policy: Policy) -> list[PairStep] | None:
    steps: list[PairStep] = []
    for sw, ports in measured_ports(nodes).items():
        switch = nodes.targets.get(sw)
        if _why_not(switch, sw) is not None:
            continue
        try:
            cmds = {phase: _commands(switch, sorted(ports), phase) for phase in ("before", "after")}  # type: ignore[arg-type]
        except UnsafeValue:
            continue  # a port name with shell/CLI characters: that switch is left unread (said by the parser)
        for phase in ("before", "after"):
            steps += [PairStep(f"switch.{sw}.{phase}.{name}", "switch", cmd, on=sw, phase=phase)  # type: ignore[arg-type]
                      for name, cmd in cmds[phase]]
    return steps


def _delta(before: int | None, after: int | None) -> int | None:
    return None if before is None or after is None else after - before


def _eos_lossless_tc(outputs: Outputs, key: str, p: int) -> dict[str, Any]:
    """The traffic class the lossless priority's frames are queued in: `show qos maps`'s CoS → TC map."""
    maps = parse("eos_qos_maps", outputs.get(f"{key}.before.maps", (1, ""))[1]) or {}
    tc = (maps.get("cos_tc") or {}).get(p)
    if tc is None:
        return {"lossless_tc": None, "map_note": "`show qos maps` gave no CoS → traffic-class map: which queue "
                                                 f"priority {p} uses is not known"}
    return {"lossless_tc": tc, "map_note": f"priority {p} → TC{tc} (`show qos maps`, Cos Tc map)"}


def _eos(outputs: Outputs, key: str, ports: list[str], p: int) -> dict[str, Any]:
    read = [parse("eos_queue_counters", outputs.get(f"{key}.{phase}.queue", (1, ""))[1]) for phase in ("before", "after")]
    if read[0] is None or read[1] is None:
        return {"error": "`show interfaces counters queue` could not be read (see the raw output)"}
    b, a = ({port_key(p): q for p, q in r["ports"].items()} for r in read)
    out: dict[str, Any] = {}
    for port in ports:
        qb, qa = b.get(port_key(port)), a.get(port_key(port))
        if qa is None or qb is None:
            out[port] = {"missing": True}
            continue
        out[port] = {"drops": {tc: _delta(qb.get(tc, {}).get("drop_pkts"), q.get("drop_pkts")) for tc, q in qa.items()},
                     "enqueued": {tc: _delta(qb.get(tc, {}).get("enq_pkts"), q.get("enq_pkts")) for tc, q in qa.items()},
                     "octets": {tc: _delta(qb.get(tc, {}).get("enq_octets"), q.get("enq_octets")) for tc, q in qa.items()}}
    return {"ports": out, "pauses_read": False, **_eos_lossless_tc(outputs, key, p)}


def _nvue(outputs: Outputs, key: str, ports: list[str], p: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for port in ports:
        read = [parse("nvue_qos_roce", outputs.get(f"{key}.{phase}.roce.{port}", (1, ""))[1]) for phase in ("before", "after")]
        if read[0] is None or read[1] is None:
            out[port] = {"missing": True}
            continue
        b, a = (roce_counters(r.get("counters") or {}) for r in read)
        d = {k: _delta(b.get(k), a.get(k)) for k in a}
        discards = [d.get(k) for k in ("rx_roce_no_buffer_discard", "tx_roce_unicast_no_buffer_discard")]
        out[port] = {"drops": {p: None if None in discards else sum(discards)},  # type: ignore[arg-type]
                     "pauses": {p: {"rx": d.get("rx_pause_packets"), "tx": d.get("tx_pause_packets")}},
                     "counters": d}
    return {"ports": out, "pauses_read": True, "pauses_roce_only": True}


def _sonic(outputs: Outputs, key: str, ports: list[str]) -> dict[str, Any]:
    pfc = [parse("sonic_show_pfc", outputs.get(f"{key}.{phase}.pfc", (1, ""))[1]) for phase in ("before", "after")]
    queue = [parse("sonic_queue_counters", outputs.get(f"{key}.{phase}.queue", (1, ""))[1]) for phase in ("before", "after")]
    if None in pfc or None in queue:
        return {"error": "`show pfc counters` / `show queue counters` could not be read (see the raw output)"}
    out: dict[str, Any] = {}
    for port in ports:
        pb, pa = ({row["port"]: row for row in r["ports"]}.get(port) for r in pfc)  # type: ignore[index]
        if pb is None or pa is None:
            out[port] = {"missing": True}
            continue

        def at(row: dict, d: str, prio: int) -> int | None:
            vals = row.get(f"{d}_pfc")
            return vals[prio] if vals and len(vals) > prio else None

        pauses = {prio: {d: _delta(at(pb, d, prio), at(pa, d, prio)) for d in ("rx", "tx")} for prio in range(8)}
        qb = {q.get("index"): q for q in queue[0]["queues"] if q.get("port") == port and q.get("type") == "UC"}  # type: ignore[index]
        qa = {q.get("index"): q for q in queue[1]["queues"] if q.get("port") == port and q.get("type") == "UC"}  # type: ignore[index]
        drops = {i: _delta(qb.get(i, {}).get("drop_packets"), q.get("drop_packets")) for i, q in qa.items()
                 if isinstance(i, int)}
        octets = {i: _delta(qb.get(i, {}).get("bytes"), q.get("bytes")) for i, q in qa.items() if isinstance(i, int)}
        out[port] = {"drops": drops, "pauses": pauses, "octets": octets}
    return {"ports": out, "pauses_read": True}


def _parser(nodes: PairNodes, policy: Policy, outputs: Outputs) -> dict[str, Any]:
    switches = []
    for sw, ports in measured_ports(nodes).items():
        switch = nodes.targets.get(sw)
        entry: dict[str, Any] = {"switch": sw, "device_type": switch.device_type if switch else None,
                                 "cabled": dict(ports), "ports": {}}
        why = _why_not(switch, sw)
        key = f"switch.{sw}"
        if why is None and not any(k.startswith(key + ".") for k in outputs):
            why = f"{sw}: a port name is not safe to put into a command: {sorted(ports)}"
        if why is None:
            texts = [t for k, (_, t) in outputs.items() if k.startswith(key + ".")]
            unreachable = next((t for t in texts if t.startswith("roce-wizard: ")), None)
            if unreachable:
                entry["error"] = unreachable.removeprefix("roce-wizard: ")
            else:
                dt = switch.device_type  # type: ignore[union-attr]
                entry.update(_eos(outputs, key, sorted(ports), policy.pfc_priority) if dt == EOS else
                             _sonic(outputs, key, sorted(ports)) if dt == SONIC else
                             _nvue(outputs, key, sorted(ports), policy.pfc_priority))
            entry["commands"] = sorted({c for _, c in _commands(switch, sorted(ports))}) if switch else []  # type: ignore[arg-type]
        else:
            entry["not_read"] = why
        switches.append(entry)
    return {"validate_switch_counters": {"switches": switches}}


SWITCH_COUNTERS = PairProbe(
    "switch_counters", _command, _parser,
    parsers=("eos_queue_counters", "eos_qos_maps", "nvue_qos_roce", "sonic_show_pfc", "sonic_queue_counters"),
    why_not="no measured node is cabled to a switch the inventory names (roce.switch_ports)")
