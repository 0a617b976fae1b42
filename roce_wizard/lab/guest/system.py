"""System commands of the simulated guest: uname, hostname, dmesg, reboot, systemctl, nmcli, dnf, tar."""

from __future__ import annotations

import re
import zlib
from typing import Any

from roce_wizard.lab.guest.host_limits import systemctl_show
from roce_wizard.lab.guest.rdma import visible_interfaces
from roce_wizard.lab.guest.state import OFED_BUNDLE, WIRED, _driver_reload, _err, _exec_unit, _gs, _guest, _ok
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.world import Guest

# ---------------------------------------------------------------------------- system tools


def prog_uname(ctx: Ctx, argv: list[str]) -> Reply:
    guest = _guest(ctx.world, ctx.target)
    parts = {"-s": "Linux", "-n": guest.name, "-r": guest.kernel, "-v": "#1 SMP Thu Apr 29 08:54:30 EDT 2021",
             "-m": "x86_64"}
    flags = argv[1:] or ["-s"]
    if "-a" in flags:
        return _ok(f"Linux {guest.name} {guest.kernel} {parts['-v']} x86_64 x86_64 x86_64 GNU/Linux\n")
    out = []
    for f in flags:
        if f not in parts:
            return _err(f"uname: invalid option -- '{f.lstrip('-')}'\nTry 'uname --help' for more information.", 1)
        out.append(parts[f])
    return _ok(" ".join(out) + "\n")


def prog_hostname(ctx: Ctx, argv: list[str]) -> Reply:
    guest = _guest(ctx.world, ctx.target)
    if "-I" in argv[1:]:
        addrs = [a.split("/")[0] for i in visible_interfaces(ctx.world, guest) if i.name != "lo" for a in i.ipv4]
        return _ok(" ".join(addrs) + " \n")
    return _ok(guest.name + "\n")


# A bare-metal host's kernel log, the IOMMU part (Intel Xeon Skylake-SP in a PowerEdge; the kernel runs
# with intel_iommu=on iommu=pt, as SR-IOV wants): the lab's bare-metal servers have VT-d on.
_DMESG_IOMMU = """[    0.000000] Command line: BOOT_IMAGE=(hd0,gpt2)/vmlinuz-{kernel} root=/dev/mapper/rhel-root ro intel_iommu=on iommu=pt
[    0.011873] ACPI: DMAR 0x000000006FF9B000 000170 (v01 DELL   PE_SC3   00000001 DELL 00000001)
[    0.011921] ACPI: Reserving DMAR table memory at [mem 0x6ff9b000-0x6ff9b16f]
[    0.402170] DMAR: IOMMU enabled
[    1.137954] DMAR: Host address width 46
[    1.137957] DMAR: DRHD base: 0x000000d37fc000 flags: 0x0
[    1.137968] DMAR: dmar0: reg_base_addr d37fc000 ver 1:0 cap 8d2078c106f0466 ecap f020df
[    1.137972] DMAR: DRHD base: 0x000000fbffc000 flags: 0x1
[    1.137979] DMAR: dmar1: reg_base_addr fbffc000 ver 1:0 cap 8d2078c106f0466 ecap f020df
[    1.137983] DMAR: RMRR base: 0x0000006f0d0000 end: 0x0000006f0d2fff
[    1.138001] DMAR-IR: IOAPIC id 12 under DRHD base  0xfbffc000 IOMMU 1
[    1.138004] DMAR-IR: Enabled IRQ remapping in x2apic mode
[    3.402716] DMAR: Intel(R) Virtualization Technology for Directed I/O
[    4.118204] mlx5_core 0000:3b:00.0: firmware version: 16.32.1010
[    4.912637] mlx5_core 0000:3b:00.0: 126.016 Gb/s available PCIe bandwidth (8.0 GT/s PCIe x16 link)
"""


def prog_dmesg(ctx: Ctx, argv: list[str]) -> Reply:
    return _ok(_DMESG_IOMMU.format(kernel=_guest(ctx.world, ctx.target).kernel))


def prog_reboot(ctx: Ctx, argv: list[str]) -> Reply:
    return Reply(action="reboot")


def prog_shutdown(ctx: Ctx, argv: list[str]) -> Reply:
    if "-r" in argv[1:]:
        return Reply(action="reboot")
    return _err("shutdown: the lab only simulates reboots (shutdown -r now)", 1)


_SYSTEM_UNITS = {"sshd.service": True, "NetworkManager.service": True, "openibd.service": True,
                 "firewalld.service": False, "lldpad.service": False}


def prog_systemctl(ctx: Ctx, argv: list[str]) -> Reply:
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    st = _gs(world, guest)
    args = [a for a in argv[1:] if not a.startswith("-")]
    if not args:
        return _ok()
    verb, units = args[0], [u if "." in u else u + ".service" for u in args[1:]]
    if verb == "show":
        return systemctl_show(ctx, argv)
    known = dict(_SYSTEM_UNITS)
    if not guest.ofed_version:
        known.pop("openibd.service")
    for path in st["etc"]:
        if path.startswith("/etc/systemd/system/"):
            known.setdefault(path.rsplit("/", 1)[-1], False)
    if verb == "daemon-reload":
        return _ok()
    for u in units:
        if u not in known and u not in st["units"]:
            if verb == "status":
                return _err(f"Unit {u} could not be found.", 4)
            return _err(f"Failed to {verb} {u}: Unit {u} not found.", 5)
    if verb in ("enable", "disable"):
        out = []
        for u in units:
            st["units"][u] = verb == "enable"
            out.append(f"Created symlink /etc/systemd/system/multi-user.target.wants/{u} \u2192 /etc/systemd/system/{u}."
                       if verb == "enable" else f"Removed /etc/systemd/system/multi-user.target.wants/{u}.")
        return Reply(stderr="".join(line + "\n" for line in out))
    if verb == "is-enabled":
        on = all(st["units"].get(u, known.get(u, False)) for u in units)
        return Reply(stdout=("enabled" if on else "disabled") + "\n", exit=0 if on else 1)
    if verb in ("start", "restart", "stop", "reload"):
        for u in units:
            if u == "openibd.service" and verb in ("start", "restart"):
                _driver_reload(world, guest, st)
            elif u in st["units"] and verb in ("start", "restart"):
                _exec_unit(world, guest, WIRED.programs(world, guest.name), st["etc"].get(f"/etc/systemd/system/{u}", ""))
        return _ok()
    if verb in ("is-active", "status"):
        u = units[0] if units else "sshd.service"
        active = u in known and (u not in st["units"] or st["units"][u])
        if verb == "is-active":
            return Reply(stdout=("active" if active else "inactive") + "\n", exit=0 if active else 3)
        return Reply(stdout=f"\u25cf {u}\n   Loaded: loaded (/usr/lib/systemd/system/{u}; enabled; vendor preset: "
                     f"enabled)\n   Active: {'active (running)' if active else 'inactive (dead)'}\n",
                     exit=0 if active else 3)
    return _err(f"Unknown operation {verb}.", 1)


def _uuid_of(guest: Guest, name: str) -> str:
    h = f"{zlib.crc32(f'{guest.name}/{name}'.encode()):08x}"
    return f"{h}-{h[:4]}-4{h[5:8]}-a{h[1:4]}-{h}{h[:4]}"


def prog_nmcli(ctx: Ctx, argv: list[str]) -> Reply:
    """NetworkManager, minimal: each interface's profile holds what applies at boot (and on `con up`)."""
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    st = _gs(world, guest)
    args = argv[1:]
    terse = False
    while args and args[0].startswith("-"):
        a = args.pop(0)
        if a in ("-t", "--terse"):
            terse = True
        elif a in ("-f", "--fields", "-g", "--get-values") and args:
            args.pop(0)
    if not args or args[0] not in ("con", "c", "connection", "dev", "d", "device"):
        return _err(f"Error: argument '{args[0] if args else ''}' not understood. Try passing --help instead.", 2)
    visible = visible_interfaces(world, guest)
    if args[0] in ("dev", "d", "device"):
        rows = [(i.name, "loopback" if i.name == "lo" else "ethernet",
                 "unmanaged" if i.name == "lo" else "connected" if i.up else "disconnected",
                 "--" if i.name == "lo" else i.name) for i in visible]
        if terse:
            return _ok("".join(":".join(r) + "\n" for r in rows))
        return _ok("DEVICE  TYPE      STATE      CONNECTION \n"
                   + "".join(f"{r[0]:<7} {r[1]:<9} {r[2]:<10} {r[3]} \n" for r in rows))
    sub, rest = (args[1] if len(args) > 1 else "show"), args[2:]
    profiles = {n: p for n, p in st["nm"].items() if n != "lo"}
    if sub in ("show", "s"):
        return _nmcli_show(guest, profiles, {i.name for i in visible}, rest, terse)
    if sub in ("mod", "modify", "m"):
        return _nmcli_mod(guest, st, profiles, rest)
    if sub == "up":
        name = rest[-1] if rest else ""
        prof = profiles.get(name)
        iface = next((i for i in visible if i.name == name), None)
        if prof is None or iface is None:
            return _err("Error: Connection activation failed: No suitable device found for this connection.", 4)
        iface.mtu, iface.ipv4, iface.up = prof["mtu"], list(prof["ipv4"]), True
        guest.pause_rx, guest.pause_tx = st["persist"]["pause"]
        return _ok("Connection successfully activated (D-Bus active path: "
                   f"/org/freedesktop/NetworkManager/ActiveConnection/{3 + list(profiles).index(name)})\n")
    if sub == "reload":
        return _ok()
    return _err(f"Error: argument '{sub}' not understood. Try passing --help instead.", 2)


def _nmcli_show(guest: Guest, profiles: dict[str, Any], visible: set[str], rest: list[str], terse: bool) -> Reply:
    if rest:
        prof = profiles.get(rest[-1])
        if prof is None:
            return _err(f"Error: {rest[-1]} - no such connection profile.", 10)
        return _ok(f"connection.id:                          {rest[-1]}\n"
                   f"connection.interface-name:              {rest[-1]}\n"
                   f"connection.autoconnect:                 {'yes' if prof['autoconnect'] else 'no'}\n"
                   f"802-3-ethernet.mtu:                     {prof['mtu'] if prof['mtu'] != 1500 else 'auto'}\n"
                   f"ipv4.method:                            {'manual' if prof['ipv4'] else 'disabled'}\n"
                   f"ipv4.addresses:                         {', '.join(prof['ipv4']) or '--'}\n")
    rows = [(n, _uuid_of(guest, n), "ethernet", n if n in visible else "--") for n in profiles]
    if terse:
        return _ok("".join(":".join(r) + "\n" for r in rows))
    return _ok("NAME    UUID                                  TYPE      DEVICE \n"
               + "".join(f"{r[0]:<7} {r[1]}  {r[2]:<9} {r[3]} \n" for r in rows))


def _nmcli_mod(guest: Guest, st: dict[str, Any], profiles: dict[str, Any], rest: list[str]) -> Reply:
    if not rest:
        return _err("Error: No arguments provided.", 2)
    name, props = rest[0], rest[1:]
    prof = profiles.get(name)
    if prof is None:
        return _err(f"Error: unknown connection '{name}'.", 10)
    if not props or len(props) % 2:
        return _err("Error: value for '" + (props[-1] if props else "") + "' is missing.", 2)
    for key, val in zip(props[::2], props[1::2], strict=True):
        k = key.lstrip("+-")
        if k in ("802-3-ethernet.mtu", "ethernet.mtu"):
            if not (val.isdigit() or val == "auto"):
                return _err(f"Error: failed to modify 802-3-ethernet.mtu: '{val}' is not a valid number.", 2)
            prof["mtu"] = 1500 if val == "auto" else int(val)
        elif k == "ipv4.addresses":
            addrs = [a.strip() for a in val.split(",") if a.strip()]
            prof["ipv4"] = prof["ipv4"] + addrs if key.startswith("+") else addrs
        elif k == "ipv6.addr-gen-mode":
            if name == guest.roce_netdev:
                st["ll_mode"] = "stable-privacy" if val == "stable-privacy" else "eui64"
        elif k == "connection.autoconnect":
            prof["autoconnect"] = val in ("yes", "true", "1")
        elif k in ("ethtool.pause-rx", "ethtool.pause-tx"):
            rx, tx = st["persist"]["pause"]
            on = val in ("on", "yes", "true", "1")
            st["persist"]["pause"] = (on, tx) if k.endswith("rx") else (rx, on)
        elif k not in ("ipv4.method", "ipv6.method", "ipv4.gateway", "ipv4.never-default", "connection.id"):
            return _err(f"Error: invalid property '{k}': not supported by the lab.", 2)
    return _ok()


_PACKAGES = {"rdma-core", "libibverbs-utils", "infiniband-diags", "perftest", "mlnx-tools", "kernel-modules-extra",
             "tk", "iproute", "ethtool", "pciutils", "lsof", "tcl", "gcc-gfortran", "createrepo", "rpm-build"}


def prog_dnf(ctx: Ctx, argv: list[str]) -> Reply:
    """`dnf/yum install -y PKG…`: rdma-core + libibverbs-utils give the inbox verbs stack."""
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    st = _gs(world, guest)
    args = [a for a in argv[1:] if not a.startswith("-")]
    if not args or args[0] not in ("install", "remove", "list"):
        return _err(f"No such command: {args[0] if args else ''}. Please use /usr/bin/{argv[0]} --help", 1)
    pkgs = args[1:]
    if args[0] == "install":
        for p in pkgs:
            if p not in _PACKAGES:
                return _err(f"No match for argument: {p}\nError: Unable to find a match: {p}", 1)
        st["packages"].update(pkgs)
        if {"rdma-core", "libibverbs-utils"} <= st["packages"]:
            guest.rdma_core = True
        if "ethtool" in pkgs:
            guest.missing_tools.discard("ethtool")
        return _ok("".join(f"Installing: {p}\n" for p in pkgs) + "\nComplete!\n")
    if args[0] == "remove":
        st["packages"].difference_update(pkgs)
        if "rdma-core" in pkgs or "libibverbs-utils" in pkgs:
            guest.rdma_core = False
        return _ok("Complete!\n")
    return _ok("".join(f"{p}.x86_64\n" for p in sorted(st["packages"])))


def prog_tar(ctx: Ctx, argv: list[str]) -> Reply:
    """Only the MLNX_OFED bundle the lab stages in /tmp unpacks (into /tmp/<bundle>-rhel8.4-x86_64)."""
    names = [a for a in argv[1:] if not a.startswith("-") and not re.fullmatch(r"[xzvfCc]+", a)]
    if not names:
        return _err("tar: You must specify one of the '-Acdtrux', '--delete' or '--test-label' options", 2)
    if not names[0].endswith(f"{OFED_BUNDLE}-rhel8.4-x86_64.tgz"):
        return _err(f"tar: {names[0]}: Cannot open: No such file or directory\ntar: Error is not recoverable: "
                    "exiting now", 2)
    return _ok()
