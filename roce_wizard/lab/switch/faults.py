"""Faults of the simulated switches (kind "switch"), named by the check that detects each: each breaks
exactly what its check reads, in the world, so every vendor's CLI shows it in its own syntax."""

from __future__ import annotations

from collections.abc import Callable

from roce_wizard.lab.faults import Fault
from roce_wizard.lab.switch.common import _reconcile, roce_priority
from roce_wizard.lab.switch.state import cli_state
from roce_wizard.lab.world import Switch, SwitchPort, World


def fault_port(world: World, switch: Switch) -> SwitchPort:
    """The port a single-port fault breaks: the one cabled to the second host's VF-carrying vmnic
    (the first host's when there is only one), so the fault sits on a path RoCE traffic uses."""
    hosts = list(world.hosts)
    preferred = hosts[1] if len(hosts) > 1 else (hosts[0] if hosts else None)
    vf_nics = {"vmnic2"}
    for vm in world.vms.values():
        if vm.host == preferred and vm.vf_port is not None:
            vf_nics = {f"vmnic{1 + vm.vf_port}"}
    for p in switch.ports:
        if p.peer and p.peer[0] == preferred and p.peer[1] in vf_nics:
            return p
    cabled = [p for p in switch.ports if p.peer]
    if not cabled and not switch.ports:
        raise ValueError(f"switch {switch.name} has no ports")
    return (cabled or switch.ports)[min(1, len(cabled or switch.ports) - 1)]


def _fault(code: str, description: str, change: Callable[[World, Switch], None]) -> Fault:
    def apply(world: World, target: str) -> None:
        switch = world.switches[target]
        _reconcile(world, switch)
        change(world, switch)
        _reconcile(world, switch)
        switch.faults.add(code)

    return Fault(code, "switch", description, apply)


def _rw501(world: World, sw: Switch) -> None:
    fault_port(world, sw).pfc_enabled = False


def _rw502(world: World, sw: Switch) -> None:
    roce = roce_priority(world)
    wrong = 4 if roce != 4 else 5
    ports = sw.ports if sw.vendor == "onyx" else [fault_port(world, sw)]  # Onyx's list is switch-wide
    for p in ports:
        p.no_drop = (p.no_drop - {roce}) | {wrong}


def _rw503(world: World, sw: Switch) -> None:
    fault_port(world, sw).trust = "pcp"


def _rw504(world: World, sw: Switch) -> None:
    fault_port(world, sw).mtu = 1500


def _rw505(world: World, sw: Switch) -> None:
    fault_port(world, sw).flowcontrol_rx = True


def _rw506(world: World, sw: Switch) -> None:
    fault_port(world, sw).ecn = False


def _rw507(world: World, sw: Switch) -> None:
    """Half-lossless: every switch-side check holds (PFC on, no-drop = policy priority, trust DSCP,
    ECN on that queue), but the switch's DSCP map sends the RoCE DSCP to another priority than the
    hosts' map does, so RoCE rides a lossy class on the switch while the hosts pause their priority."""
    roce = roce_priority(world)
    dscp = int(world.policy.get("roce_dscp", 26))
    wrong = 4 if roce != 4 else 5
    state = cli_state(sw)
    if sw.vendor == "os10":
        name = "dscp-tc-custom"
        state.os10_dscp_maps[name] = {dscp: wrong}
        for p in sw.ports:
            if p.trust == "dscp":
                state.os10_port_trust_map[p.name] = name
    else:
        state.dscp_map[dscp] = wrong


FAULTS: dict[str, Fault] = {
    f.code: f
    for f in (
        _fault("RW501", "PFC is off on the switch port of one RoCE host", _rw501),
        _fault("RW502", "the switch's no-drop priority is 4 instead of the policy's (switch-wide on Onyx)", _rw502),
        _fault("RW503", "one RoCE switch port trusts PCP (CoS) instead of DSCP", _rw503),
        _fault("RW504", "one RoCE switch port has MTU 1500", _rw504),
        _fault("RW505", "link-level flow control (receive on) is enabled on one RoCE switch port", _rw505),
        _fault("RW506", "ECN marking is off on the RoCE queue of one switch port", _rw506),
        _fault("RW507", "the switch maps the RoCE DSCP to priority 4 while the hosts map it to 3: "
                        "RoCE rides a lossy class on the switch (half-lossless)", _rw507),
    )
}
