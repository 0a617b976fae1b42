"""Faults of guests and bare-metal hosts, named by the check that detects each."""

from __future__ import annotations

import ipaddress

from roce_wizard.lab.fabric import REMARK_IN, cabled
from roce_wizard.lab.faults import Fault, FaultError
from roce_wizard.lab.guest import host_limits
from roce_wizard.lab.guest.mpi import UCX_CONF
from roce_wizard.lab.guest.state import OFED_BUNDLE, _gs, _lab, _vf_backing
from roce_wizard.lab.world import Interface, World

# ---------------------------------------------------------------------------- faults


def _persist(world: World, target: str) -> None:
    """A fault is the machine's configuration, not a runtime slip: it survives reboots."""
    guest = world.guests[target]
    st = _lab(world)["guests"].get(target)
    if st is None:
        return  # not seen yet: the first look snapshots the state, fault included
    st["nm"] = {i.name: {"mtu": i.mtu, "ipv4": list(i.ipv4), "autoconnect": i.up} for i in guest.interfaces}
    st["persist"] = {"pause": (guest.pause_rx, guest.pause_tx), "traffic_class": guest.traffic_class,
                     "qos": (guest.qos_trust, list(guest.qos_pfc)), "rdma_cm_tos": guest.rdma_cm_tos}


def _roce_iface(world: World, target: str) -> Interface:
    guest = world.guests[target]
    iface = guest.interface(guest.roce_netdev)
    if iface is None:
        raise ValueError(f"{target} has no {guest.roce_netdev}")
    return iface


def _rw002(world: World, target: str) -> None:
    # ethtool is a package of its own (minimal images lack it): RW002 fails on an essential tool and
    # RW410, which cannot read the pause settings, is blocked by RW002
    world.guests[target].missing_tools.add("ethtool")


def _rw003(world: World, target: str) -> None:
    world.guests[target].faults.add("RW003")  # a hardened /proc: boot_id not readable for the user


def _rw401(world: World, target: str) -> None:
    g = world.guests[target]
    g.ofed_version, g.ofed_pending, g.rdma_core = None, False, False


def _rw402(world: World, target: str) -> None:
    # MLNX_OFED installed but its driver never loaded (no openibd force-restart, no reboot since): the
    # tools are there (RW401 passes), no RDMA device exists. (A VM without a VF is RW304's fault.)
    g = world.guests[target]
    g.ofed_version = g.ofed_version or OFED_BUNDLE
    g.rdma_core = False
    g.ofed_pending = True


def _rw403(world: World, target: str) -> None:
    # the RoCE netdev is not brought up at boot (NetworkManager autoconnect off / ONBOOT=no): port DOWN
    _roce_iface(world, target).up = False
    _persist(world, target)


def _rw405(world: World, target: str) -> None:
    _roce_iface(world, target).mtu = 1500
    _persist(world, target)


def _rw406(world: World, target: str) -> None:
    # the management NIC also has an address in the RoCE subnet (seed 000 ref. 15: the IP conflict)
    guest = world.guests[target]
    net = ipaddress.IPv4Interface(_roce_iface(world, target).ipv4[0]).network
    mgmt = next(i for i in guest.interfaces if i.name not in ("lo", guest.roce_netdev))
    mgmt.ipv4.append(f"{net.network_address + 200 + list(world.guests).index(target) % 50}/{net.prefixlen}")
    _persist(world, target)


def _rw407(world: World, target: str) -> None:
    world.guests[target].faults.add("RW407")  # the stack publishes RoCE v1 GIDs only


def _rw408(world: World, target: str) -> None:
    g = world.guests[target]
    g.cma_roce_mode, g.cma_persisted = "IB/RoCE v1", False


def _rw409(world: World, target: str) -> None:
    world.guests[target].qos_trust = "pcp"
    _persist(world, target)


def _rw410(world: World, target: str) -> None:
    g = world.guests[target]
    g.pause_rx = g.pause_tx = True
    _persist(world, target)


def _rw411(world: World, target: str) -> None:
    world.guests[target].traffic_class = 96  # DSCP 24 where the policy says 26
    _persist(world, target)


def _rw412(world: World, target: str) -> None:
    # someone ran `mlxconfig set SRIOV_EN=0`: pending for the next boot, it would take the VFs away
    _gs(world, world.guests[target])["card"].config["SRIOV_EN"].next_boot = False


def _rw413(world: World, target: str) -> None:
    # a site boot script turned DCQCN's reaction point off on the RoCE priority (`echo 0 > …/roce_rp/enable/3`):
    # ECN marks produce CNPs, and the sender ignores them
    guest = world.guests[target]
    host_limits.disable_at_boot(world, guest, guest.roce_netdev, "rp", int(world.policy.get("pfc_priority", 3)))


def _rw414(world: World, target: str) -> None:
    # a plain image: /etc/security/limits.conf caps locked memory at 64 KiB (no HPC limits file)
    host_limits.set_memlock(world, world.guests[target], 64)


def _rw415(world: World, target: str) -> None:
    # the card (PCIe 3.0 x16) sits in a slot wired x8: the link trains at 8 GT/s x8, ~63 Gb/s for a 100 Gb/s port
    host_limits.train_link(world, world.guests[target], 8, 8)


def _rw601(world: World, target: str) -> None:
    # every setting is right; the card's PCIe link trained at Gen3 x4 (a riser, a half-seated card):
    # ~25 Gb/s of a 100 Gb/s port. Only a measurement sees it.
    _gs(world, world.guests[target])["pcie_gbps"] = 25.6


def _rw602(world: World, target: str) -> None:
    # tuned profile `powersave`: the CPUs idle into deep C-states, every small message waits for a wakeup
    _gs(world, world.guests[target])["lat_extra_us"] = 3.2


def _rw603(world: World, target: str) -> None:
    # a site UCX config file restricts transports to TCP and shared memory: MPI runs, silently over TCP
    # (UCX_TLS is no variable the wizard's mpirun line sets, so its jobs get this too)
    _gs(world, world.guests[target])["etc"][UCX_CONF] = (
        "# site defaults (copied from the login nodes)\nUCX_TLS=tcp,sm,self\n")


def _rw604(world: World, target: str) -> None:
    # the site UCX config pins the GID index to 0: the MAC-derived link-local RoCE v1 GID
    _gs(world, world.guests[target])["etc"][UCX_CONF] = "# site defaults\nUCX_IB_GID_INDEX=0\n"


def _rw605(world: World, target: str) -> None:
    # PFC is on end to end, but the switch port towards this node reserves too little headroom for its
    # cable: under incast the buffer overflows before the pause frame takes effect
    _gs(world, world.guests[target])["headroom_short"] = True


def _rw606(world: World, target: str) -> None:
    # `ethtool -G <if> rx 256`: the receive ring runs dry under incast (rx_out_of_buffer), throughput holds
    _gs(world, world.guests[target])["rx_ring_small"] = True


def _rw607(world: World, target: str) -> None:
    guest = world.guests[target]
    if guest.vm is not None:
        # a VF guest: the switch port towards its ESXi host's uplink re-marks what it receives from there to DSCP 0
        # (an input policy map no QoS check reads): the node's RoCE is queued in the DSCP-0 class through the
        # switch and arrives on priority 0 at the other node — only the switch's queue counters show it
        backing = _vf_backing(world, guest)
        found = cabled(world, (backing[0].name, backing[1].name)) if backing else None
        if found is None:
            raise FaultError(f"RW607@{target}: the VM has no VF on a cabled uplink")
        found[0].__dict__.setdefault(REMARK_IN, set()).add(found[1].name)
        return
    # the switch port towards the node rewrites the RoCE packets' DSCP to 0 on the way out (a QoS rewrite /
    # policy map no QoS check reads): they arrive on priority 0, lossy, though every setting on the path is right
    _gs(world, guest)["remarked"] = True


def _rw608(world: World, target: str) -> None:
    # the switch queue towards the node has ECN, but its marking threshold sits above the PFC XOFF point: under
    # incast the queue pauses before it ever marks, so DCQCN never acts (np_ecn_marked_roce_packets stays still)
    _gs(world, world.guests[target])["ecn_late"] = True


FAULTS: dict[str, Fault] = {f.code: f for f in (
    Fault("RW002", "guest", "ethtool is not installed", _rw002),
    Fault("RW003", "guest", "/proc/sys/kernel/random/boot_id is not readable", _rw003),
    Fault("RW401", "guest", "no RDMA stack (neither MLNX_OFED nor rdma-core)", _rw401),
    Fault("RW402", "guest", "MLNX_OFED installed but its driver not loaded (no openibd restart, no reboot)",
          _rw402),
    Fault("RW403", "guest", "the RoCE netdev is not brought up at boot: port DOWN", _rw403),
    # no RW404 fault: active_mtu follows the port's own netdev (mlx5: min(4096, iboe_get_mtu(netdev MTU))), so it
    # is below 4096 only while that netdev's MTU is below 4192 — RW405's fault, which then blocks RW404. A small
    # host uplink / VDS / switch MTU leaves active_mtu at 4096 and drops the jumbo frames instead.
    Fault("RW405", "guest", "RoCE netdev MTU 1500", _rw405),
    Fault("RW406", "guest", "the management NIC also has an address in the RoCE subnet", _rw406),
    Fault("RW407", "guest", "only RoCE v1 GIDs (no RoCE v2 IPv4 GID)", _rw407),
    Fault("RW408", "guest", "rdma_cm default mode IB/RoCE v1", _rw408),
    Fault("RW409", "linux", "mlnx_qos trust pcp on the PF", _rw409),
    # bare metal: an mlx5 VF in a guest cannot set port pause at all (RW410 is n/a there)
    Fault("RW410", "linux", "global pause RX/TX on the RoCE netdev of the PF", _rw410),
    Fault("RW411", "guest", "default RoCE traffic class 96 (DSCP 24) instead of 104", _rw411),
    Fault("RW412", "linux", "SRIOV_EN set to False for the next boot (mlxconfig)", _rw412),
    Fault("RW413", "linux", "DCQCN reaction point disabled on the RoCE priority at every boot (roce_rp/enable/3 = 0)",
          _rw413),
    Fault("RW414", "guest", "locked memory capped at 64 KiB (limits.conf): ibv_reg_mr fails for large buffers", _rw414),
    Fault("RW415", "linux", "the RoCE card's PCIe 3.0 x16 link trained at x8 (a x8 slot): ~63 Gb/s", _rw415),
)}

# faults only a measurement between two nodes sees (the validate stage); kept apart from FAULTS, whose
# every entry a guest-stage check detects on the guest itself
VALIDATE_FAULTS: dict[str, Fault] = {f.code: f for f in (
    Fault("RW601", "guest", "the RoCE card's PCIe link trained at Gen3 x4: ~25 Gb/s on a 100 Gb/s port", _rw601),
    Fault("RW602", "guest", "tuned profile powersave: deep C-states add ~3 us to every small message", _rw602),
    Fault("RW603", "guest", f"{UCX_CONF} sets UCX_TLS=tcp,sm,self: MPI runs over TCP, silently", _rw603),
    Fault("RW604", "guest", f"{UCX_CONF} pins UCX_IB_GID_INDEX=0 (a link-local RoCE v1 GID)", _rw604),
    Fault("RW605", "guest", "the switch port towards the node has PFC but too little headroom: incast overflows",
          _rw605),
    Fault("RW606", "linux", "RoCE netdev RX ring 256: rx_out_of_buffer grows under incast", _rw606),
    Fault("RW607", "linux", "the switch port towards the node rewrites RoCE to DSCP 0: it arrives on priority 0 "
          "(on a VF guest: the port towards its host's uplink re-marks what the node sends)", _rw607, also=("guest",)),
    Fault("RW608", "linux", "the switch queue towards the node marks ECN only above its PFC XOFF point: never",
          _rw608, also=("guest",)),
)}
