"""Arista EOS show outputs, rendered from the world (split out of lab/switch/__init__.py; formats held against
seed 004 and the probes' captures).
"""

from __future__ import annotations

from roce_wizard.lab.switch.common import eos_short, roce_priority, _eos_mac, _lldp_peer, _reconcile, _uptime
from roce_wizard.lab.switch.state import ECN_MAX_KB, ECN_MIN_KB, EOS_DEFAULT_MTU, EOS_MODEL, EOS_VERSION, cli_state
from roce_wizard.lab.world import Switch, SwitchPort, World


# renderers: EOS


def _eos_running_config(world: World, switch: Switch) -> str:
    _reconcile(world, switch)
    state = cli_state(switch)
    roce = roce_priority(world)
    out = [
        "! Command: show running-config",
        f"! device: {switch.name} ({EOS_MODEL}, EOS-{EOS_VERSION})",
        "!",
        f"! boot system flash:/EOS-{EOS_VERSION}.swi",
        "!",
        "no aaa root",
        "!",
        "transceiver qsfp default-mode 4x10G",
        "!",
        f"hostname {switch.name}",
        "!",
        "spanning-tree mode mstp",
        "!",
    ]
    if state.dscp_map:
        by_tc: dict[int, list[int]] = {}
        for dscp, tc in sorted(state.dscp_map.items()):
            by_tc.setdefault(tc, []).append(dscp)
        for tc, dscps in sorted(by_tc.items()):
            out.append(f"qos map dscp {' '.join(str(d) for d in dscps)} to traffic-class {tc}")
        out.append("!")
    for p in switch.ports:
        out.append(f"interface {p.name}")
        if p.description:
            out.append(f"   description {p.description}")
        if p.mtu != EOS_DEFAULT_MTU:
            out.append(f"   mtu {p.mtu}")
        if not p.link_up:
            out.append("   shutdown")
        if p.flowcontrol_tx:
            out.append("   flowcontrol send on")
        if p.flowcontrol_rx:
            out.append("   flowcontrol receive on")
        if p.trust == "dscp":
            out.append("   qos trust dscp")
        if p.pfc_enabled:
            out.append("   priority-flow-control on")
        for prio in sorted(p.no_drop):
            out.append(f"   priority-flow-control priority {prio} no-drop")
        queues = set(state.ecn_other.get(p.name, set()))
        if p.ecn:
            queues.add(roce)
        for q in sorted(queues):
            out.append(f"   tx-queue {q}")
            out.append(f"      random-detect ecn minimum-threshold {ECN_MIN_KB} kbytes "
                       f"maximum-threshold {ECN_MAX_KB} kbytes")
        out.append("!")
    out += ["interface Management1", "   ip address 192.0.2.10/24", "!", "ip routing", "!", "end"]
    return "\n".join(out)


def _eos_pfc(switch: Switch, ports: list[SwitchPort]) -> str:
    out = [
        "The hardware supports PFC on priorities 0 1 2 3 4 5 6 7",
        "PFC receive processing is enabled on priorities 0 1 2 3 4 5 6 7",
        "The PFC watchdog timeout is 0.0 second(s) (default)",
        "The PFC watchdog recovery-time is 0.0 second(s) (auto) (default)",
        "The PFC watchdog polling-interval is 0.0 second(s) (default)",
        "The PFC watchdog action is errdisable",
        "The PFC watchdog override action drop is false",
        "The PFC watchdog non-disruptive priorities are not configured",
        "The PFC watchdog non-disruptive action is not configured",
        "The PFC watchdog port non-disruptive-only is false",
        "The PFC watchdog hardware monitored priorities are not configured",
        "Global PFC : Enabled",
        "",
        "E: PFC Enabled, D: PFC Disabled, A: PFC Active, W: PFC Watchdog Enabled",
        "Port  Status Priorities Action      Timeout  Recovery        Polling         Note",
        "                                            Interval/Mode   Config/Oper",
    ]
    for p in ports:
        if p.pfc_enabled:
            status = "E A W" if p.link_up and p.no_drop else "E   W"
        else:
            status = "D"
        prios = ",".join(str(x) for x in sorted(p.no_drop)) or "-"
        out.append(f"{eos_short(p):<11}{status:<11}{prios:<11}{'-':<12}{'-':<9}{'- / -':<16}{'- / -':<16}"
                   "DCBX disabled")
    return "\n".join(out)


def _eos_interfaces_status(switch: Switch, ports: list[SwitchPort]) -> str:
    out = ["Port       Name              Status       Vlan     Duplex Speed  Type         Flags Encapsulation"]
    for p in ports:
        status = "connected" if p.link_up else "disabled"
        out.append(f"{eos_short(p):<11}{p.description[:17]:<18}{status:<13}{'trunk':<9}{'full':<7}"
                   f"{'100G':<7}100GBASE-CR4")
    return "\n".join(out)


def _eos_interface(switch: Switch, p: SwitchPort, now: float) -> str:
    d, h, m, s = _uptime(now % (86400 * 30) + 3600)
    state = "up, line protocol is up (connected)" if p.link_up else \
        "administratively down, line protocol is down (disabled)"
    mac = _eos_mac(switch, p)
    out = [
        f"{p.name} is {state}",
        f"  Hardware is Ethernet, address is {mac} (bia {mac})",
    ]
    if p.description:
        out.append(f"  Description: {p.description}")
    out += [
        f"  Ethernet MTU {p.mtu} bytes , BW 100000000 kbit",
        "  Full-duplex, 100Gb/s, auto negotiation: off, uni-link: n/a",
        f"  {'Up' if p.link_up else 'Down'} {d} days, {h} hours, {m} minutes, {s} seconds",
        "  Loopback Mode : None",
        "  2 link status changes since last clear",
        '  Last clearing of "show interface" counters never',
        "  5 minutes input rate 0 bps (0.0% with framing overhead), 0 packets/sec",
        "  5 minutes output rate 0 bps (0.0% with framing overhead), 0 packets/sec",
        "     0 packets input, 0 bytes",
        "     Received 0 broadcasts, 0 multicast",
        "     0 runts, 0 giants",
        "     0 input errors, 0 CRC, 0 alignment, 0 symbol, 0 input discards",
        "     0 PAUSE input",
        "     0 packets output, 0 bytes",
        "     Sent 0 broadcasts, 0 multicast",
        "     0 output errors, 0 collisions",
        "     0 late collision, 0 deferred, 0 output discards",
        "     0 PAUSE output",
    ]
    return "\n".join(out)


def _eos_flowcontrol(ports: list[SwitchPort]) -> str:
    out = [
        "Port       Send FlowControl  Receive FlowControl  RxPause       TxPause",
        "           admin    oper     admin    oper",
        "---------- -------- -------- -------- --------    ------------- -------------",
    ]
    for p in ports:
        tx = "on" if p.flowcontrol_tx else "off"
        rx = "on" if p.flowcontrol_rx else "off"
        out.append(f"{eos_short(p):<11}{tx:<9}{tx:<9}{rx:<9}{rx:<9}   {'0':<14}0")
    return "\n".join(out)


def _eos_qos_interface(world: World, switch: Switch, p: SwitchPort) -> str:
    state = cli_state(switch)
    roce = roce_priority(world)
    ecn = set(state.ecn_other.get(p.name, set())) | ({roce} if p.ecn else set())
    out = [
        f"{p.name}:",
        f"   Trust Mode: {'DSCP' if p.trust == 'dscp' else 'COS'}",
        "   Default COS: 0",
        "   Default DSCP: 0",
        "   Port shaping rate: disabled",
        "",
        "  Tx    Bandwidth     Bandwidth                   Shape Rate         Priority   ECN/WRED",
        " Queue  (percent)     Guaranteed (units)           (units)",
        " ----------------------------------------------------------------------------------------",
    ]
    for q in range(7, -1, -1):
        flag = "L" if q in ecn else "D"
        out.append(f"   {q}        -             - ( - )              -            ( - )      SP         {flag}")
    out += [
        "",
        "Legend:",
        "RR -> Round Robin",
        "SP -> Strict Priority",
        " - -> Not Applicable / Not Configured",
        " % -> Percentage of reference",
        "ECN/WRED: L -> Queue Length ECN Enabled     W -> WRED Enabled     D -> Disabled",
    ]
    return "\n".join(out)


def _eos_default_tc(dscp: int) -> int:
    tc = dscp >> 3
    return {0: 1, 1: 0}.get(tc, tc)


def _eos_qos_maps(switch: Switch) -> str:
    state = cli_state(switch)
    out = [
        "Number of Traffic Classes supported: 8",
        "Number of Transmit Queues supported: 8",
        "",
        "Cos Tc map:",
        "  cos:      0   1   2   3   4   5   6   7",
        "  ----------------------------------------",
        "  tc:       1   0   2   3   4   5   6   7",
        "",
        "Dscp Tc map:",
        "   d1 :  d2 0  1  2  3  4  5  6  7  8  9",
        "  ------------------------------------------",
    ]
    for d1 in range(7):
        cells = []
        for d2 in range(10):
            dscp = d1 * 10 + d2
            if dscp > 63:
                break
            cells.append(f"{state.dscp_map.get(dscp, _eos_default_tc(dscp)):>2}")
        out.append(f"    {d1} :    " + " ".join(cells))
    out += [
        "",
        "Tc - Cos map:",
        "  tc:       0   1   2   3   4   5   6   7",
        "  ----------------------------------------",
        "  cos:      1   0   2   3   4   5   6   7",
    ]
    return "\n".join(out)


def _eos_lldp(world: World, switch: Switch) -> str:
    rows = [(p, _lldp_peer(world, p)) for p in switch.ports]
    rows = [(p, peer) for p, peer in rows if peer]
    out = [
        "Last table change time   : 0:12:03 ago",
        f"Number of table inserts  : {len(rows)}",
        "Number of table deletes  : 0",
        "Number of table drops    : 0",
        "Number of table age-outs : 0",
        "",
        "Port          Neighbor Device ID       Neighbor Port ID    TTL",
        "---------- ------------------------ ---------------------- ---",
    ]
    for p, (sysname, port_id, _desc) in rows:
        out.append(f"{eos_short(p):<14}{sysname:<25}{port_id:<20}120")
    return "\n".join(out)
