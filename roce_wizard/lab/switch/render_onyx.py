"""NVIDIA Onyx show outputs, rendered from the world (split out of lab/switch/__init__.py; formats held against
the corpus onyx_* captures).
"""

from __future__ import annotations

from roce_wizard.lab.switch.common import onyx_id, roce_priority, _lldp_peer, _mac, _reconcile
from roce_wizard.lab.switch.state import ECN_MAX_KB, ECN_MIN_KB, ONYX_DEFAULT_MTU, ONYX_VERSION, cli_state
from roce_wizard.lab.world import Switch, SwitchPort, World


# renderers: Onyx


def _onyx_pfc_global(switch: Switch) -> bool:
    state = cli_state(switch)
    return any(p.pfc_enabled for p in switch.ports) or state.onyx_pfc_global is True


def _onyx_priorities(switch: Switch) -> set[int]:
    out: set[int] = set()
    for p in switch.ports:
        out |= p.no_drop
    return out


def _onyx_admin_on(switch: Switch, p: SwitchPort) -> bool:
    return p.pfc_enabled or p.name in cli_state(switch).onyx_admin_pending


def _onyx_dcb_pfc(world: World, switch: Switch, ports: list[SwitchPort]) -> str:
    _reconcile(world, switch)
    enabled = sorted(_onyx_priorities(switch))
    disabled = [x for x in range(8) if x not in enabled]
    out = [
        f"PFC: {'enabled' if _onyx_pfc_global(switch) else 'disabled'}",
        f"Priority Enabled List: {' '.join(str(x) for x in enabled)}",
        f"Priority Disabled List: {' '.join(str(x) for x in disabled)}",
        "-------------------------------------------------",
        "Interface        PFC admin        PFC oper",
        "-------------------------------------------------",
    ]
    for p in ports:
        admin = "On" if _onyx_admin_on(switch, p) else "Auto"
        oper = "Enabled" if p.pfc_enabled and p.link_up and enabled else "Disabled"
        out.append(f"{p.name:<17}{admin:<17}{oper}")
    return "\n".join(out)


def _onyx_interface(switch: Switch, p: SwitchPort) -> str:
    up = p.link_up
    rx = "on" if p.flowcontrol_rx else "off"
    tx = "on" if p.flowcontrol_tx else "off"
    desc = p.description or "N\\A"
    out = [
        p.name,
        f"  Admin state: {'Enabled' if up else 'Disabled'}",
        f"  Operational state: {'Up' if up else 'Down'}",
        "  Last change in operational status: 3d 2h 1m ago (1 oper change)",
        f"  Description: {desc}",
        f"  Mac address: {_mac(switch, p)}",
        f"  MTU: {p.mtu} bytes(Maximum packet size {p.mtu + 22} bytes)",
        "  Fec: auto",
        f"  Flow-control: receive {rx} send {tx}",
        "  Actual speed: 100 Gbps",
        "  Width reduction mode: Not supported",
        "  Switchport mode: access",
        "  MAC learning mode: Enabled",
        '  Last clearing of "show interface" counters : Never',
        "  60 seconds ingress rate: 0 bits/sec, 0 bytes/sec, 0 packets/sec",
        "  60 seconds egress rate: 0 bits/sec, 0 bytes/sec, 0 packets/sec",
        "",
        "Rx",
    ]
    counters = ["packets", "unicast packets", "multicast packets", "broadcast packets", "bytes",
                "error packets", "discard packets"]
    out += [f"  {'0':<21}{c}" for c in counters]
    out += ["", "Tx"]
    out += [f"  {'0':<21}{c}" for c in counters]
    return "\n".join(out)


def _onyx_qos_interface(p: SwitchPort) -> str:
    return "\n".join([
        p.name,
        f"  Trust mode: {'L3' if p.trust == 'dscp' else 'L2'}",
        "  Default switch-priority: 0",
        "  Default PCP: 0",
        "  Default DEI: 0",
        "  PCP,DEI rewrite: disabled",
        "  IP PCP;DEI rewrite: enable",
        "  DSCP rewrite: disabled",
    ])


def _onyx_congestion(world: World, switch: Switch, p: SwitchPort) -> str:
    state = cli_state(switch)
    roce = roce_priority(world)
    ecn = set(state.ecn_other.get(p.name, set())) | ({roce} if p.ecn else set())
    out = [p.name, f"  Congestion control: {'enabled' if ecn else 'disabled'}"]
    for tc in range(8):
        out.append(f"  Traffic class {tc}:")
        if tc in ecn:
            out += [
                "    Mode: ECN",
                "    Threshold mode: absolute",
                f"    Minimum threshold: {ECN_MIN_KB} KB",
                f"    Maximum threshold: {ECN_MAX_KB} KB",
            ]
        else:
            out.append("    Mode: none")
    return "\n".join(out)


def _onyx_running_config(world: World, switch: Switch) -> str:
    _reconcile(world, switch)
    state = cli_state(switch)
    roce = roce_priority(world)
    out = [
        "##",
        '## Running database "initial"',
        "## Generated at 2024/01/15 09:30:00 +0000",
        f"## Hostname: {switch.name}",
        f"## Product release: {ONYX_VERSION}",
        "##",
        "",
        "##",
        "## Running-config temporary prefix mode setting",
        "##",
        "no cli default prefix-modes enable",
        "",
        "##",
        "## Interface Ethernet configuration",
        "##",
    ]
    for p in switch.ports:
        pid = onyx_id(p)
        if p.mtu != ONYX_DEFAULT_MTU:
            out.append(f"   interface ethernet {pid} mtu {p.mtu} force")
        if p.description:
            out.append(f'   interface ethernet {pid} description "{p.description}"')
        if not p.link_up:
            out.append(f"   interface ethernet {pid} shutdown")
        if p.flowcontrol_rx:
            out.append(f"   interface ethernet {pid} flowcontrol receive on force")
        if p.flowcontrol_tx:
            out.append(f"   interface ethernet {pid} flowcontrol send on force")
        if p.trust == "dscp":
            out.append(f"   interface ethernet {pid} qos trust L3")
        queues = set(state.ecn_other.get(p.name, set())) | ({roce} if p.ecn else set())
        for q in sorted(queues):
            out.append(f"   interface ethernet {pid} traffic-class {q} congestion-control ecn "
                       f"minimum-absolute {ECN_MIN_KB} maximum-absolute {ECN_MAX_KB}")
    out += ["", "##", "## DCBX PFC configuration", "##"]
    if _onyx_pfc_global(switch):
        out.append("   dcb priority-flow-control enable force")
    for prio in sorted(_onyx_priorities(switch)):
        out.append(f"   dcb priority-flow-control priority {prio} enable")
    for p in switch.ports:
        if _onyx_admin_on(switch, p):
            out.append(f"   interface ethernet {onyx_id(p)} dcb priority-flow-control mode on force")
    if state.dscp_map:
        out += ["", "##", "## QoS switch configuration", "##"]
        by_prio: dict[int, list[int]] = {}
        for dscp, prio in sorted(state.dscp_map.items()):
            by_prio.setdefault(prio, []).append(dscp)
        for prio, dscps in sorted(by_prio.items()):
            out.append(f"   qos map dscp-to-switch-priority dscp {' '.join(str(d) for d in dscps)} "
                       f"switch-priority {prio}")
    out += [
        "",
        "##",
        "## Network management configuration",
        "##",
        f'   hostname "{switch.name}"',
        "   no ntp server disable",
        "",
        "##",
        "## X.509 certificates configuration",
        "##",
        "#",
        "# Certificate name system-self-signed, ID 1d8d3b3c7e8f0a2f3c1b2a1e4f5d6c7b8a9e0f1d",
        "# (public data only, private data not shown)",
        "#",
        "",
        "##",
        "## Persistent prefix mode setting",
        "##",
        "cli default prefix-modes enable",
    ]
    return "\n".join(out)


def _onyx_lldp(world: World, switch: Switch) -> str:
    out = [
        "",
        "Local Interface  Device ID          Port ID            System Name        Remote Port Description",
        "----------------------------------------------------------------------------------------------",
    ]
    for p in switch.ports:
        peer = _lldp_peer(world, p)
        if peer:
            sysname, port_id, desc = peer
            out.append(f"{p.name:<17}{port_id:<19}{port_id:<19}{sysname:<19}{desc}")
    return "\n".join(out)
