"""Dell OS10 show outputs and running configuration, rendered from the world (split out of
lab/switch/__init__.py; the QoS blocks follow Dell's OS10 10.5.0 "Configure RoCE on the switch").
"""

from __future__ import annotations

from roce_wizard.lab.switch import os10_qos
from roce_wizard.lab.switch.common import os10_id, _lldp_peer, _mac, _ranges, _reconcile
from roce_wizard.lab.switch.state import OS10_DEFAULT_MTU, OS10_VERSION, cli_state
from roce_wizard.lab.world import Switch, SwitchPort, World


# renderers: OS10


def _os10_running_config(world: World, switch: Switch) -> str:
    _reconcile(world, switch)
    state = cli_state(switch)
    out = [
        f"! Version {OS10_VERSION}",
        "! Last configuration change at Jan  15 09:30:00 2024",
        "!",
        "ip vrf default",
        "!",
        f"hostname {switch.name}",
        "system-user linuxadmin password ****",
        "iscsi target port 860",
        "iscsi target port 3260",
        "username admin password **** role sysadmin priv-lvl 15",
        "aaa authentication login default local",
        "aaa authentication login console local",
        "!",
    ]
    used_dscp_maps = sorted({n for n in state.os10_port_trust_map.values() if n != "default"}
                            | set(state.os10_dscp_maps))
    for name in used_dscp_maps:
        overrides = state.os10_dscp_maps.get(name, {})
        out.append(f"trust dscp-map {name}")
        by_group: dict[int, list[int]] = {}
        for dscp, group in sorted(overrides.items()):
            by_group.setdefault(group, []).append(dscp)
        for group, dscps in sorted(by_group.items()):
            out.append(f" qos-group {group} dscp {_ranges(dscps)}")
        out.append("!")
    out += os10_qos.render(state)
    for (kind, name), cmap in sorted(state.os10_class_maps.items(), key=lambda kv: (kv[0][0] != "network-qos",
                                                                                  kv[0][1])):
        out.append(f"class-map type {kind} {name}")
        out.append(f" match {'qos-group' if kind == 'network-qos' else 'queue'} {cmap.match}")
        out.append("!")
    for name, pol in sorted(state.os10_policies.items(), key=lambda kv: (kv[1].kind != "network-qos", kv[0])):
        out.append(f"policy-map type {pol.kind} {name}")
        for cname, klass in pol.classes.items():
            out.append(" !")
            out.append(f" class {cname}")
            if klass.bandwidth is not None:
                out.append(f"  bandwidth percent {klass.bandwidth}")
            if klass.wred:
                out.append(f"  random-detect {klass.wred}")
            if klass.pause:
                out.append("  pause")
            if klass.pfc_cos:
                out.append(f"  pfc-cos {_ranges(klass.pfc_cos)}")
        out.append("!")
    for p in switch.ports:
        out.append(f"interface {p.name}")
        if p.description:
            out.append(f" description \"{p.description}\"")
        out.append(" no shutdown" if p.link_up else " shutdown")
        out.append(" switchport access vlan 1")
        if p.mtu != OS10_DEFAULT_MTU:
            out.append(f" mtu {p.mtu}")
        if p.flowcontrol_rx:
            out.append(" flowcontrol receive on")
        if p.flowcontrol_tx:
            out.append(" flowcontrol transmit on")
        if p.pfc_enabled:
            out.append(" priority-flow-control mode on")
        if p.name in state.os10_port_nqos:
            out.append(f" service-policy input type network-qos {state.os10_port_nqos[p.name]}")
        if p.name in state.os10_port_queuing:
            out.append(f" service-policy output type queuing {state.os10_port_queuing[p.name]}")
        if p.name in state.os10_port_trust_map:
            out.append(f" trust-map dscp {state.os10_port_trust_map[p.name]}")
        out.append("!")
    out += [
        "interface mgmt1/1/1",
        " no shutdown",
        " no ip address dhcp",
        " ip address 192.0.2.12/24",
        " ipv6 address autoconfig",
        "!",
        "support-assist",
        "!",
        "policy-map type application policy-iscsi",
        "!",
        "class-map type application class-iscsi",
    ]
    return "\n".join(out)


def _os10_interface(switch: Switch, p: SwitchPort) -> str:
    mac = _mac(switch, p)
    rx = "on" if p.flowcontrol_rx else "off"
    tx = "on" if p.flowcontrol_tx else "off"
    state = "up, line protocol is up" if p.link_up else "down, line protocol is down"
    out = [f"Ethernet {os10_id(p)} is {state}"]
    if p.description:
        out.append(f"Description: {p.description}")
    out += [
        f"Hardware is Eth, address is {mac}",
        f"    Current address is {mac}",
        "Pluggable media present, QSFP28 type is QSFP28 100GBASE-CR4-2.0M",
        "    Wavelength is 64",
        "    Receive power reading is 0.0",
        f"Interface index is {17305068 + switch.ports.index(p)}",
        "Internet address is not set",
        "Mode of IPv4 Address Assignment: not set",
        "Interface IPv6 oper status: Disabled",
        f"MTU {p.mtu} bytes, IP MTU {p.mtu - 32} bytes",
        "LineSpeed 100G, Auto-Negotiation off",
        "Configured FEC is cl91-rs, Negotiated FEC is cl91-rs",
        f"Flowcontrol rx {rx} tx {tx}",
        "ARP type: ARPA, ARP Timeout: 60",
        'Last clearing of "show interface" counters: 3 days 02:01:05',
        "Queuing strategy: fifo",
        "Input statistics:",
        "     0 packets, 0 octets",
        "     0 64-byte pkts, 0 over 64-byte pkts, 0 over 127-byte pkts",
        "     0 over 255-byte pkts, 0 over 511-byte pkts, 0 over 1023-byte pkts",
        "     0 Multicasts, 0 Broadcasts, 0 Unicasts",
        "     0 runts, 0 giants, 0 throttles",
        "     0 CRC, 0 overrun, 0 discarded",
        "Output statistics:",
        "     0 packets, 0 octets",
        "     0 64-byte pkts, 0 over 64-byte pkts, 0 over 127-byte pkts",
        "     0 over 255-byte pkts, 0 over 511-byte pkts, 0 over 1023-byte pkts",
        "     0 Multicasts, 0 Broadcasts, 0 Unicasts",
        "     0 throttles, 0 discarded, 0 Collisions,  wred drops",
        "Rate Info(interval 30 seconds):",
        "     Input 0 Mbits/sec, 0 packets/sec, 0% of line rate",
        "     Output 0 Mbits/sec, 0 packets/sec, 0% of line rate",
        "Time since last interface status change: 3 days 02:01:05",
    ]
    return "\n".join(out)


def _os10_interface_status(ports: list[SwitchPort]) -> str:
    rule = "-" * 98
    out = [rule, f"{'Port':<16}{'Description':<16}{'Status':<9}{'Speed':<9}{'Duplex':<9}{'Mode':<5}{'Vlan':<5}"
           "Tagged-Vlans", rule]
    for p in ports:
        out.append(f"{'Eth ' + os10_id(p):<16}{p.description[:15]:<16}{'up' if p.link_up else 'down':<9}"
                   f"{'100G':<9}{'full':<9}{'A':<5}{'1':<5}-")
    return "\n".join(out)


def _os10_qos_interface(switch: Switch, p: SwitchPort) -> str:
    state = cli_state(switch)
    out = [
        "Interface",
        "    unknown-unicast-storm-control : Disabled",
        "    multicast-storm-control       : Disabled",
        "    broadcast-storm-control       : Disabled",
        f"    flow-control-rx               : {'Enabled' if p.flowcontrol_rx else 'Disabled'}",
        f"    flow-control-tx               : {'Enabled' if p.flowcontrol_tx else 'Disabled'}",
        "    ets mode                      : Disabled",
        f"    pfc mode                      : {'Enabled' if p.pfc_enabled else 'Disabled'}",
    ]
    if p.name in state.os10_port_trust_map:
        out.append(f"    Dscp-tc-mapping               : {state.os10_port_trust_map[p.name]}")
    return "\n".join(out)


def _os10_lldp(world: World, switch: Switch) -> str:
    out = [
        f"{'Loc PortID':<21}{'Rem Host Name':<21}{'Rem Port Id':<29}Rem Chassis Id",
        "-" * 90,
    ]
    for p in switch.ports:
        peer = _lldp_peer(world, p)
        if peer:
            sysname, port_id, _desc = peer
            out.append(f"{p.name:<21}{sysname:<21}{port_id:<29}{port_id}")
    return "\n".join(out)
