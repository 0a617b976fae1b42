"""Pure helpers for RW607/RW608: the counter deltas around a pair's measurements, read per priority and per side.

Every pair probe that moves traffic (perftest_bw, perftest_lat, mpi_osu, incast) hands its checks
`validate_traffic_<probe>` = {"label", "sender": {counter: delta}, "receiver": {...}}; the deltas come from
`ethtool -S <netdev>` (mlx5 names, kernel Documentation/networking/device_drivers/ethernet/mellanox/mlx5/
counters.rst: rx_prio<p>_bytes, tx_prio<p>_bytes, rx_prio<p>_pause, tx_prio<p>_pause, rx_discards_phy,
rx_out_of_buffer, tx_vport_rdma_unicast_bytes) and the RDMA device's hw_counters (np_ecn_marked_roce_packets,
np_cnp_sent, rp_cnp_handled, out_of_buffer). A VF shows none of the per-priority lines: they belong to the port.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from roce_wizard.model import Facts

PREFIX = "validate_traffic_"
MIN_BYTES = 1 << 20  # less RoCE than this in one direction is not judged (a latency test's few KB, ACKs)
ON_PRIORITY = 0.90  # the share of a direction's RoCE bytes that must be counted on the lossless priority


def runs(facts: Facts) -> list[dict[str, Any]]:
    """The measurements' counter deltas, in the order they ran."""
    return [dict(v, probe=k[len(PREFIX):]) for k, v in facts.data.items()
            if k.startswith(PREFIX) and isinstance(v, dict)]


def total(items: list[dict[str, Any]], side: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in items:
        for k, v in (r.get(side) or {}).items():
            if isinstance(v, int):
                out[k] = out.get(k, 0) + v
    return out


def has_priorities(delta: dict[str, int]) -> bool:
    return any(k.startswith(("rx_prio", "tx_prio")) and k.endswith("_bytes") for k in delta)


def by_priority(delta: dict[str, int], direction: str) -> dict[int, int]:
    return {p: delta.get(f"{direction}_prio{p}_bytes", 0) for p in range(8)}


@dataclass
class Leg:
    """One direction of traffic as one node counted it."""

    node: str
    role: str  # sender / receiver
    direction: str  # tx / rx
    flow: str  # forward (sender -> receiver) / reverse
    roce: int  # the RoCE bytes of the leg (vport RDMA bytes; else every priority's)
    prio: dict[int, int]

    def share(self, p: int) -> float:
        return self.prio.get(p, 0) / self.roce if self.roce else 0.0

    def landed(self, p: int) -> int:
        """The other priority that carried the most bytes."""
        return max((q for q in self.prio if q != p), key=lambda q: self.prio[q])

    def text(self, p: int) -> str:
        q = self.landed(p)
        return (f"{self.node} {self.direction} ({self.flow}): {self.prio.get(p, 0)} of {self.roce} RoCE bytes on priority "
                f"{p}, {self.prio[q]} on priority {q}")


def legs(sender: str, receiver: str, s: dict[str, int], r: dict[str, int]) -> list[Leg]:
    out = []
    for node, role, delta, direction, flow in ((sender, "sender", s, "tx", "forward"),
                                              (receiver, "receiver", r, "rx", "forward"),
                                              (receiver, "receiver", r, "tx", "reverse"),
                                              (sender, "sender", s, "rx", "reverse")):
        if not has_priorities(delta):
            continue
        prio = by_priority(delta, direction)
        roce = delta.get(f"{direction}_vport_rdma_unicast_bytes")
        out.append(Leg(node, role, direction, flow, roce if roce is not None else sum(prio.values()), prio))
    return out


def blame(legs_wrong: list[Leg]) -> Leg:
    """The leg whose node is at fault: a sender's packets leaving on the wrong priority is the sender's (its
    traffic class / mapping); else the node that counted them arriving elsewhere (its port, its mapping, the path)."""
    return next((g for g in legs_wrong if g.direction == "tx"), legs_wrong[0])


# ---------------------------------------------------------------------------- congestion (RW608)


@dataclass
class Congestion:
    pauses: int  # pause frames on any priority, both ends (receiver tx, sender rx, ...)
    pauses_p: int  # on the lossless priority
    out_of_buffer: int
    discards: int  # rx_discards_phy on the receiver: the port's buffer dropped
    marked: int | None  # np_ecn_marked_roce_packets on the receiver (None: not readable)
    cnp_sent: int | None
    cnp_handled: int | None  # rp_cnp_handled on the sender

    @property
    def happened(self) -> bool:
        return bool(self.pauses or self.out_of_buffer or self.discards or self.marked)

    def row(self) -> list[Any]:
        return [self.pauses_p, self.pauses - self.pauses_p, self.out_of_buffer, self.discards, self.marked,
                self.cnp_sent, self.cnp_handled]


COLUMNS = ["pauses on p", "pauses elsewhere", "rx_out_of_buffer", "rx_discards_phy", "np_ecn_marked_roce_packets",
           "np_cnp_sent", "rp_cnp_handled (sender)"]


def congestion(step: dict[str, Any], p: int) -> Congestion:
    r, s = step.get("receiver") or {}, step.get("sender") or {}
    pauses = {k: v for d in (r, s) for k, v in d.items()
              if k.startswith(("rx_prio", "tx_prio")) and k.endswith("_pause")}
    pauses_total = sum(pauses.values())
    pauses_p = sum(v for k, v in pauses.items() if k.startswith((f"rx_prio{p}_", f"tx_prio{p}_")))
    return Congestion(pauses_total, pauses_p, r.get("rx_out_of_buffer", r.get("out_of_buffer", 0)),
                      r.get("rx_discards_phy", 0), r.get("np_ecn_marked_roce_packets"), r.get("np_cnp_sent"),
                      s.get("rp_cnp_handled"))


def counter_point(step: dict[str, Any], p: int) -> dict[str, Any]:
    """An incast step's counter deltas beside its throughput (the report's plot): pauses on the lossless
    priority and elsewhere, ECN marks, CNPs sent and handled, drops; {} when the step read no counters."""
    if not (step.get("receiver") or step.get("sender")):
        return {}
    c = congestion(step, p)
    r, s = step.get("receiver") or {}, step.get("sender") or {}
    # a counter neither node showed (a VF has no per-priority pause or port drop counters) is unknown, not 0
    paused = any(k.startswith(("rx_prio", "tx_prio")) and k.endswith("_pause") for d in (r, s) for k in d)
    dropped = any(k in r for k in ("rx_out_of_buffer", "out_of_buffer", "rx_discards_phy"))
    return {"priority": p, "pauses_p": c.pauses_p if paused else None,
            "pauses_other": c.pauses - c.pauses_p if paused else None, "ecn_marked": c.marked,
            "cnp_sent": c.cnp_sent, "cnp_handled": c.cnp_handled, "discards": c.discards if dropped else None}
