"""`ip` (iproute2) of the simulated guest: link, addr, route, and the link facts ethtool shares."""

from __future__ import annotations

import ipaddress
import json
from typing import Any

from roce_wizard.lab.guest.rdma import _bm_netdevs, ipv6_addrs, visible_interfaces
from roce_wizard.lab.guest.state import _err, _gs, _guest, _ok, _switch_port, _vf_backing
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.world import Guest, Interface, World


def _flags(world: World, guest: Guest, iface: Interface) -> tuple[list[str], str]:
    if iface.name == "lo":
        return ["LOOPBACK", "UP", "LOWER_UP"], "UNKNOWN"
    if not iface.up:
        return ["BROADCAST", "MULTICAST"], "DOWN"
    if not _carrier(world, guest, iface):
        return ["NO-CARRIER", "BROADCAST", "MULTICAST", "UP"], "DOWN"
    return ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "UP"


def _carrier(world: World, guest: Guest, iface: Interface) -> bool:
    if not iface.up:
        return False
    if guest.vm is None:
        if iface.name in _bm_netdevs(guest):
            sp = _switch_port(world, guest.name, iface.name)
            return sp is not None and sp.link_up
        return True
    if iface.name == guest.roce_netdev:
        backing = _vf_backing(world, guest)
        if backing is None:
            return False
        host, vmnic = backing
        sp = _switch_port(world, host.name, vmnic.name)
        return vmnic.link_up and (sp is None or sp.link_up)
    return True


def _driver(guest: Guest, iface: Interface) -> str:
    if iface.name == "lo":
        return ""
    if guest.vm is None:
        return "mlx5_core" if iface.name in _bm_netdevs(guest) else "igb"
    return "mlx5_core" if iface.name == guest.roce_netdev else "vmxnet3"


def _max_mtu(guest: Guest, iface: Interface) -> int:
    return 9978 if _driver(guest, iface) == "mlx5_core" else 9000


# ---------------------------------------------------------------------------- ip (iproute2)


def _addr_info(world: World, guest: Guest, iface: Interface) -> list[dict[str, Any]]:
    info: list[dict[str, Any]] = []
    forever = 4294967295
    for a in iface.ipv4:
        net = ipaddress.IPv4Interface(a)
        entry: dict[str, Any] = {"family": "inet", "local": str(net.ip), "prefixlen": net.network.prefixlen}
        if iface.name == "lo":
            entry.update(scope="host", label="lo")
        else:
            entry.update(broadcast=str(net.network.broadcast_address), scope="global", noprefixroute=True,
                         label=iface.name)
        entry.update(valid_life_time=forever, preferred_life_time=forever)
        info.append(entry)
    for a in ipv6_addrs(world, guest, iface):
        ip, _, plen = a.partition("/")
        scope = "host" if ip == "::1" else "link" if ip.startswith("fe80") else "global"
        entry = {"family": "inet6", "local": ip, "prefixlen": int(plen), "scope": scope}
        if scope != "host":
            entry["noprefixroute"] = True
        entry.update(valid_life_time=forever, preferred_life_time=forever)
        info.append(entry)
    return info


def _ip_objects(world: World, guest: Guest, ifaces: list[Interface], with_addr: bool) -> list[dict[str, Any]]:
    objs = []
    all_visible = visible_interfaces(world, guest)
    for iface in ifaces:
        flags, state = _flags(world, guest, iface)
        o: dict[str, Any] = {"ifindex": all_visible.index(iface) + 1, "ifname": iface.name, "flags": flags,
                             "mtu": iface.mtu, "qdisc": "noqueue" if iface.name == "lo" else "mq",
                             "operstate": state, "group": "default", "txqlen": 1000,
                             "link_type": "loopback" if iface.name == "lo" else "ether", "address": iface.mac,
                             "broadcast": "00:00:00:00:00:00" if iface.name == "lo" else "ff:ff:ff:ff:ff:ff"}
        if with_addr:
            o["addr_info"] = _addr_info(world, guest, iface)
        objs.append(o)
    return objs


def _ip_text(world: World, guest: Guest, ifaces: list[Interface], with_addr: bool) -> str:
    out = []
    for o in _ip_objects(world, guest, ifaces, True):
        out.append(f"{o['ifindex']}: {o['ifname']}: <{','.join(o['flags'])}> mtu {o['mtu']} qdisc {o['qdisc']} "
                   f"state {o['operstate']} group default qlen 1000")
        out.append(f"    link/{o['link_type']} {o['address']} brd {o['broadcast']}")
        if not with_addr:
            continue
        for a in o["addr_info"]:
            npr = " noprefixroute" if a.get("noprefixroute") else ""
            if a["family"] == "inet":
                brd = f" brd {a['broadcast']}" if "broadcast" in a else ""
                out.append(f"    inet {a['local']}/{a['prefixlen']}{brd} scope {a['scope']}{npr} {a['label']}")
            else:
                out.append(f"    inet6 {a['local']}/{a['prefixlen']} scope {a['scope']}{npr} ")
            out.append("       valid_lft forever preferred_lft forever")
    return "\n".join(out) + "\n"


def _ip_brief(world: World, guest: Guest, ifaces: list[Interface], with_addr: bool) -> str:
    out = []
    for o in _ip_objects(world, guest, ifaces, True):
        if with_addr:
            addrs = " ".join(f"{a['local']}/{a['prefixlen']}" for a in o["addr_info"])
            out.append(f"{o['ifname']:<16} {o['operstate']:<14} {addrs} ")
        else:
            out.append(f"{o['ifname']:<16} {o['operstate']:<14} {o['address']} <{','.join(o['flags'])}> ")
    return "\n".join(out) + "\n"


_IP_OBJECTS = {"a": "addr", "ad": "addr", "addr": "addr", "address": "addr", "l": "link", "li": "link",
               "link": "link", "r": "route", "ro": "route", "route": "route"}


def prog_ip(ctx: Ctx, argv: list[str]) -> Reply:
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    args = argv[1:]
    opts = set()
    while args and args[0].startswith("-") and args[0] not in ("-h", "-help"):
        a = args.pop(0)
        if a in ("-j", "-json"):
            opts.add("json")
        elif a in ("-br", "-brief"):
            opts.add("brief")
        elif a in ("-d", "-details", "-s", "-stats", "-p", "-pretty", "-c", "-color", "-4", "-6"):
            opts.add(a.lstrip("-"))
        else:
            return _err(f'Option "{a}" is unknown, try "ip -help".', 255)
    if not args:
        return _err("Usage: ip [ OPTIONS ] OBJECT { COMMAND | help }", 255)
    if args[0] not in _IP_OBJECTS:
        return _err(f'Object "{args[0]}" is unknown, try "ip help".', 1)
    obj, rest = _IP_OBJECTS[args[0]], args[1:]
    visible = visible_interfaces(world, guest)
    cmd = rest[0] if rest else "show"
    if obj == "route":
        return _ip_route(guest, visible)
    if cmd in ("show", "list", "lst", "sh", "ls", "dev"):
        words = rest[1:] if cmd != "dev" else rest
        dev = None
        if words and words[0] == "dev" and len(words) > 1:
            dev = words[1]
        elif words and words[0] != "up":
            dev = words[0]
        ifaces = visible
        if dev is not None:
            ifaces = [i for i in visible if i.name == dev]
            if not ifaces:
                return _err(f'Device "{dev}" does not exist.', 1)
        if "up" in words:
            ifaces = [i for i in ifaces if i.up]
        if "json" in opts:
            return _ok(json.dumps(_ip_objects(world, guest, ifaces, obj == "addr"), separators=(",", ":")) + "\n")
        if "brief" in opts:
            return _ok(_ip_brief(world, guest, ifaces, obj == "addr"))
        return _ok(_ip_text(world, guest, ifaces, obj == "addr"))
    if obj == "link" and cmd == "set":
        return _ip_link_set(world, guest, visible, rest[1:])
    if obj == "addr" and cmd in ("add", "del", "delete", "flush"):
        return _ip_addr_change(world, guest, visible, cmd, rest[1:])
    return _err(f'Command "{cmd}" is unknown, try "ip {obj} help".', 1)


def _ip_link_set(world: World, guest: Guest, visible: list[Interface], words: list[str]) -> Reply:
    if words and words[0] == "dev":
        words = words[1:]
    if not words:
        return _err('Not enough information: "dev" argument is required.', 1)
    name, words = words[0], words[1:]
    iface = next((i for i in visible if i.name == name), None)
    if iface is None:
        return _err(f'Cannot find device "{name}"', 1)
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("up", "down"):
            iface.up = w == "up"
            i += 1
        elif w == "mtu" and i + 1 >= len(words):
            return _err('Command line is not complete. Try option "help"', 255)
        elif w == "mtu":
            try:
                mtu = int(words[i + 1])
            except ValueError:
                return _err(f'Error: argument "{words[i + 1]}" is wrong: Invalid "mtu" value\n\n', 255)  # iproute2 6.1
            if mtu > _max_mtu(guest, iface):
                return _err("Error: mtu greater than device maximum.", 2)
            if mtu < 68:
                return _err("Error: mtu less than device minimum.", 2)
            vm = world.vms.get(guest.vm or "")
            if iface.name == guest.roce_netdev and vm is not None and not vm.allow_guest_mtu_change \
                    and mtu != iface.mtu:
                return _err("RTNETLINK answers: Operation not permitted", 2)
            iface.mtu = mtu
            i += 2
        else:
            return _err(f'Error: either "dev" is duplicate, or "{w}" is a garbage.', 255)
    return _ok()


def _ip_addr_change(world: World, guest: Guest, visible: list[Interface], cmd: str, words: list[str]) -> Reply:
    st = _gs(world, guest)
    dev = words[words.index("dev") + 1] if "dev" in words and words.index("dev") + 1 < len(words) else None
    if cmd == "flush":
        dev = dev or (words[0] if words else None)
        iface = next((i for i in visible if i.name == dev), None)
        if iface is None:
            return _err(f'Device "{dev}" does not exist.', 1)
        iface.ipv4 = []
        st["ipv6"][iface.name] = []
        return _ok()
    if dev is None or not words:
        return _err('Not enough information: "dev" argument is required.', 1)
    addr = words[0]
    iface = next((i for i in visible if i.name == dev), None)
    if iface is None:
        return _err(f'Cannot find device "{dev}"', 1)
    try:
        net = ipaddress.ip_interface(addr if "/" in addr else addr + ("/32" if ":" not in addr else "/128"))
    except ValueError:
        return _err(f'Error: any valid prefix is expected rather than "{addr}".', 1)
    text = f"{net.ip}/{net.network.prefixlen}"
    if net.version == 4:
        present = [a for a in iface.ipv4 if ipaddress.IPv4Interface(a).ip == net.ip]
        if cmd == "add":
            if present:
                return _err("RTNETLINK answers: File exists", 2)
            iface.ipv4.append(text)
        elif not present:
            return _err("RTNETLINK answers: Cannot assign requested address", 2)
        else:
            iface.ipv4.remove(present[0])
        return _ok()
    extra = st["ipv6"].setdefault(iface.name, [])
    if cmd == "add":
        if text in extra:
            return _err("RTNETLINK answers: File exists", 2)
        extra.append(text)
    elif text not in extra:
        return _err("RTNETLINK answers: Cannot assign requested address", 2)
    else:
        extra.remove(text)
    return _ok()


def _ip_route(guest: Guest, visible: list[Interface]) -> Reply:
    lines = []
    mgmt = next((i for i in visible if i.name not in ("lo", guest.roce_netdev) and i.ipv4), None)
    if mgmt:
        net = ipaddress.IPv4Interface(mgmt.ipv4[0]).network
        lines.append(f"default via {net.network_address + 1} dev {mgmt.name} proto static metric 100 ")
    for n, i in enumerate(v for v in visible if v.name != "lo"):
        for a in i.ipv4:
            ip = ipaddress.IPv4Interface(a)
            lines.append(f"{ip.network} dev {i.name} proto kernel scope link src {ip.ip} metric {100 + n} ")
    return _ok("".join(line + "\n" for line in lines))
