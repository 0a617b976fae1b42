"""What congestion does on the path into a node, and where its packets land: the world state behind RW607/RW608.

- DCQCN's two halves per priority (MLNX_OFED's `/sys/class/net/<if>/ecn/roce_np/enable/<p>` and
  `roce_rp/enable/<p>`; the firmware default enables both on every priority: ROCE_CC_PRIO_MASK 255). The lab
  keeps them in the guest's state as `dcqcn_np` / `dcqcn_rp` (8 ints each, 1 = enabled); read defensively:
  absent means the firmware default. (RW413's engineer serves the sysfs files from the same keys.)
- The switch's ECN marking on the queue the packets use: EOS/Onyx/OS10/NVUE mark only on a queue with ECN
  (SwitchPort.ecn: ECN on the port's no-drop queue, where RoCE belongs), and only when that queue builds up.
- Two conditions no configuration check reads, found only by measuring (the validate faults RW607/RW608):
  `remarked` — the switch port towards the node rewrites the RoCE packets' DSCP to 0 on the way out (a QoS
  rewrite / policy map on the port), so they arrive on priority 0; `ecn_late` — the queue towards the node
  has ECN, but its marking threshold sits above the PFC XOFF point: the queue pauses before it ever marks.
"""

from __future__ import annotations

from typing import Any

from roce_wizard.lab.fabric import count_marks, remarks_in
from roce_wizard.lab.guest.state import _gs, _switch_port, _vf_backing
from roce_wizard.lab.world import Guest, SwitchPort, World


def _enabled(st: dict[str, Any], key: str, prio: int) -> bool:
    mask = st.get(key)
    if not isinstance(mask, (list, tuple)) or len(mask) != 8:
        return True  # the firmware default: DCQCN on every priority
    return bool(mask[prio])


def np_enabled(world: World, g: Guest, prio: int) -> bool:
    """The notification point: the receiver answers ECN-marked packets with CNPs."""
    return _enabled(_gs(world, g), "dcqcn_np", prio)


def rp_enabled(world: World, g: Guest, prio: int) -> bool:
    """The reaction point: the sender slows down on the CNPs it handles."""
    return _enabled(_gs(world, g), "dcqcn_rp", prio)


def arriving_dscp(world: World, g: Guest, dscp: int, sender: Guest | None = None) -> int:
    """The DSCP packets sent with `dscp` carry when they reach `g`: 0 when g's switch port rewrites them on the
    way out (bare metal, `remarked`), or when the port the sender's traffic enters re-marks it (a VF guest's
    host uplink port, fabric.REMARK_IN)."""
    if _gs(world, g).get("remarked"):
        return 0
    if sender is not None and remarks_in(world, _uplink_of(world, sender)):
        return 0
    return dscp


def _uplink_of(world: World, g: Guest) -> tuple[str, str] | None:
    if g.vm is None:
        return g.name, g.roce_netdev
    backing = _vf_backing(world, g)
    return (backing[0].name, backing[1].name) if backing else None


def facing_port(world: World, g: Guest) -> SwitchPort | None:
    """The switch port cabled to the node's RoCE port (its ESXi host's uplink for a VF guest)."""
    if g.vm is None:
        return _switch_port(world, g.name, g.roce_netdev)
    backing = _vf_backing(world, g)
    if backing is None:
        return None
    host, vmnic = backing
    return _switch_port(world, host.name, vmnic.name)


def marks(world: World, receiver: Guest, prio: int) -> bool:
    """Whether the switch queue towards the receiver ECN-marks priority `prio` when it congests: ECN on that
    queue (the port's no-drop queue), a threshold it reaches before PFC pauses, and for a
    VF guest the host driver's ECN (nmlx5 `ecn=1`)."""
    sp = facing_port(world, receiver)
    if sp is None or _gs(world, receiver).get("ecn_late"):
        return False
    queue_ecn = sp.ecn and (prio in sp.no_drop or not sp.no_drop)
    if not queue_ecn:
        return False
    if receiver.vm is not None:
        backing = _vf_backing(world, receiver)
        return backing is not None and backing[0].module_params_active.get("ecn", "0") == "1"
    return True


def count_ecn(world: World, sender: Guest, receiver: Guest, n: int, prio: int, tc: int | None = None) -> None:
    """An incast of `n` streams on priority `prio` that congests the queue towards the receiver: the switch marks
    (when it does), the receiver's NP answers with CNPs (when enabled), the sender's RP handles them (when
    enabled). Counter names: mlx5 hw_counters np_ecn_marked_roce_packets, np_cnp_sent, rp_cnp_handled."""
    if not marks(world, receiver, prio):
        return
    r, s = _gs(world, receiver)["rdma"], _gs(world, sender)["rdma"]
    r["ecn_marked"] += 2500 * n
    count_marks(world, _uplink_of(world, receiver), prio if tc is None else tc, 2500 * n)  # the switch marked them
    if np_enabled(world, receiver, prio):
        r["cnp_sent"] += 2500 * n
        if rp_enabled(world, sender, prio):
            s["cnp_handled"] += 2500 * n
