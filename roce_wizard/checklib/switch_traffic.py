"""Pure helpers for RW607/RW608 in a VF pair: where the measurements' RoCE went THROUGH THE SWITCH.

A VF shows no per-priority counters (they belong to the port), so for a pair of VF guests the only place that
shows which queue RoCE rode is the switch port towards each node — the same before/after readings RW609 judges
(the `switch_counters` pair probe, `validate_switch_counters`), read once per pair and shared by the three checks.

Per vendor, what says "on the lossless priority's queue" (sources in roce_wizard/probes/pairs_switch.py):
- Arista EOS `show interfaces counters queue detail`: enqueued octets per port and traffic class; the lossless
  priority's TC is `show qos maps`'s CoS → TC map (read with the first reading; not read → not judged).
  No ECN column and no pause counters are read on EOS (no real capture of its PFC counters view).
- SONiC `show queue counters`: bytes per unicast queue; the lossless priority p is queue UC<p> (SONiC numbers its
  lossless queues as their priorities: PORT_QOS_MAP pfc_enable lists both; the TC → queue map is not read, so a
  non-default map is said in the finding). `show pfc counters`: pause frames per priority. No ECN column.
- Cumulus NVUE `nv show interface <swp> qos roce counters`: the RoCE priority only — tx RoCE packets towards the
  node (what did NOT ride the RoCE queue is not shown, only missing), pause packets and ECN-marked packets.
- Onyx, OS10: not read (no real capture of their counter views).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

EOS, SONIC, NVUE = "arista_eos", "sonic", "cumulus_nvue"


def _entries(facts_data: dict[str, Any]) -> list[dict[str, Any]]:
    return (facts_data.get("validate_switch_counters") or {}).get("switches") or []


def ports_towards(entry: dict[str, Any], node: str) -> list[str]:
    return sorted(p for p, nodes in (entry.get("cabled") or {}).items() if node in nodes)


@dataclass
class Through:
    """What the switch ports towards one node queued during the pair's measurements."""

    node: str  # the node the traffic went INTO
    source: str  # the node that sent it (whose side a wrong queue is)
    roce: int | None  # the RoCE the node counted arriving (bytes; packets for NVUE)
    unit: str  # "bytes" / "packets"
    on_queue: int = 0  # counted on the lossless priority's queue
    others: dict[str, int] = field(default_factory=dict)  # "TC1"/"UC0" -> counted there
    ports: list[str] = field(default_factory=list)  # "sw-1 Et1"
    entry_ports: list[str] = field(default_factory=list)  # the ports the source node enters through
    queue: str = ""  # the lossless queue's name ("TC3", "UC3", "the RoCE queue")
    notes: list[str] = field(default_factory=list)
    not_read: str | None = None  # why nothing could be judged for this direction

    @property
    def share(self) -> float:
        return min(1.0, self.on_queue / self.roce) if self.roce else 0.0

    @property
    def landed(self) -> tuple[str, int] | None:
        if not self.others:
            return None
        q = max(self.others, key=lambda k: self.others[k])
        return (q, self.others[q]) if self.others[q] else None


def _queue_view(entry: dict[str, Any], p: int) -> tuple[int | None, str, str]:
    """(queue index of priority p, its name prefix, a note) for one switch reading."""
    dt = entry.get("device_type")
    if dt == EOS:
        return entry.get("lossless_tc"), "TC", entry.get("map_note") or ""
    if dt == SONIC:
        return p, "UC", (f"UC{p} taken as priority {p}'s queue (SONiC numbers lossless queues as their priorities; "
                         "its TC → queue map is not read)")
    if dt == NVUE:
        return p, "", "NVUE counts the RoCE priority only"
    return None, "", ""


def through_switch(data: dict[str, Any], into: str, source: str, roce_bytes: int | None,
                   roce_packets: int | None, p: int) -> Through:
    """What the switch ports towards `into` queued of the RoCE `source` sent it (one direction)."""
    entries = [e for e in _entries(data) if ports_towards(e, into)]
    t = Through(into, source, roce_bytes, "bytes")
    if not entries:
        t.not_read = f"no switch port towards {into} is known (roce.switch_ports of the node or of its ESXi host)"
        return t
    read = [e for e in entries if not e.get("not_read") and not e.get("error")]
    if not read:
        e = entries[0]
        t.not_read = f"{e['switch']}: " + (e.get("not_read") or f"could not read its counters: {e.get('error')}")
        return t
    for e in read:
        q, prefix, note = _queue_view(e, p)
        if q is None:
            t.not_read = f"{e['switch']}: {note or 'its queue counters are not read'}"
            return t
        if note and note not in t.notes:
            t.notes.append(note)
        t.entry_ports += [f"{e['switch']} {x}" for x in ports_towards(e, source)]
        for port in ports_towards(e, into):
            d = (e.get("ports") or {}).get(port) or {}
            if d.get("missing"):
                t.notes.append(f"{e['switch']} {port} is not in the output")
                continue
            t.ports.append(f"{e['switch']} {port}")
            if e.get("device_type") == NVUE:
                t.unit, t.roce, t.queue = "packets", roce_packets, "the RoCE queue"
                t.on_queue += (d.get("counters") or {}).get("tx_roce_packets") or 0
                continue
            t.queue = f"{prefix}{q}"
            for idx, n in (d.get("octets") or {}).items():
                if n is None:
                    continue
                if int(idx) == q:
                    t.on_queue += n
                else:
                    name = f"{prefix}{idx}"
                    t.others[name] = t.others.get(name, 0) + n
    if not t.ports:
        t.not_read = "the ports towards it are not in the switch's output"
    return t


# ---------------------------------------------------------------------------- congestion on the switch (RW608)


@dataclass
class SwitchCongestion:
    pauses: int | None = None  # pause frames on the lossless priority, ports of both nodes (None: not read)
    marked: int | None = None  # ECN-marked packets out of the port towards the receiver (None: not read)
    seen_on: list[str] = field(default_factory=list)
    not_read: list[str] = field(default_factory=list)


def switch_congestion(data: dict[str, Any], receiver: str, sender: str, p: int) -> SwitchCongestion:
    out = SwitchCongestion()
    for e in _entries(data):
        mine = ports_towards(e, receiver) + ports_towards(e, sender)
        if not mine:
            continue
        if e.get("not_read") or e.get("error"):
            out.not_read.append(f"{e['switch']}: {e.get('not_read') or e.get('error')}")
            continue
        dt = e.get("device_type")
        if dt == EOS:
            out.not_read.append(f"{e['switch']}: EOS's queue counters show no ECN marks and its PFC counters are "
                                "not read (no real capture of that view)")
            continue
        out.seen_on.append(e["switch"])
        for port in mine:
            d = (e.get("ports") or {}).get(port) or {}
            own = (d.get("pauses") or {}).get(p) or {}
            if own:
                out.pauses = (out.pauses or 0) + sum(v or 0 for v in own.values())
            if dt == NVUE and port in ports_towards(e, receiver):
                m = (d.get("counters") or {}).get("ecn_marked_packets")
                if m is not None:
                    out.marked = (out.marked or 0) + m
    return out
