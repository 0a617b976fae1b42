"""Bare-metal Linux hosts added to a lab world."""

from __future__ import annotations

from roce_wizard.lab.guest.state import OFED_BUNDLE
from roce_wizard.lab.world import Guest, Interface, SwitchPort, World

# ---------------------------------------------------------------------------- bare metal in a world


def add_baremetal(world: World, count: int = 1, healthy: bool = True) -> list[Guest]:
    """Add bare-metal Linux hosts (kind linux) node-01…, each owning a ConnectX-5 (ens1f0np0 cabled
    to the first switch, ens1f1np1 without a cable), as in seeds 001 and 004."""
    added = []
    first = 1 + sum(1 for g in world.guests.values() if g.vm is None)
    for index in range(first, first + count):
        name, netdev = f"node-{index:02d}", "ens1f0np0"
        guest = Guest(
            name=name, vm=None, roce_netdev=netdev,
            ofed_version=OFED_BUNDLE if healthy else None,
            interfaces=[
                Interface("lo", "00:00:00:00:00:00", 65536, ["127.0.0.1/8"]),
                Interface("eno1", f"b0:26:28:a0:{index:02x}:10", 1500, [f"10.10.1.{10 + index}/24"]),
                Interface(netdev, f"0c:42:a1:{0x40 + index:02x}:7e:20", 9000 if healthy else 1500,
                          [f"192.168.101.{10 + index}/24"] if healthy else []),
                Interface("ens1f1np1", f"0c:42:a1:{0x40 + index:02x}:7e:21", 1500, [], up=False),
            ],
            cma_roce_mode="RoCE v2" if healthy else "IB/RoCE v1", cma_persisted=healthy,
            traffic_class=(26 << 2 | 2) if healthy else None,  # DSCP 26 + ECT(0): RW411 passes
            rdma_cm_tos=(26 << 2 | 2) if healthy else None,  # configfs dir made and set by a boot hook
            qos_trust="dscp" if healthy else "pcp",
            qos_pfc=[0, 0, 0, 1, 0, 0, 0, 0] if healthy else [0] * 8,
        )
        world.guests[name] = guest
        sw = next(iter(world.switches.values()), None)
        if sw is not None:
            fmt = {"eos": "Ethernet{n}", "onyx": "Eth1/{n}", "os10": "ethernet1/1/{n}"}.get(sw.vendor, "Ethernet{n}")
            sw.ports.append(SwitchPort(fmt.format(n=len(sw.ports) + 1), mtu=9216 if healthy else 1500,
                                       pfc_enabled=healthy, no_drop={3} if healthy else set(),
                                       trust="dscp" if healthy else "pcp", ecn=healthy,
                                       description=f"{name} {netdev}", peer=(name, netdev)))
        added.append(guest)
    return added
