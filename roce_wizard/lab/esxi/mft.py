"""NVIDIA MFT on the simulated ESXi host: mst, mlxconfig (lab/tools/mft.py), mlxfwmanager, flint."""

from __future__ import annotations

import re

from roce_wizard.lab.esxi.common import _err, _host, _ok
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.tools import mft
from roce_wizard.lab.tools.mft import first_line
from roce_wizard.lab.world import Card, EsxiHost

# ==================================================================================== MFT / NMST


def _mst_functions(host: EsxiHost) -> list[tuple[Card, int, str]]:
    """(card, port, mst name) per PCI function, in PCI order."""
    out = []
    for card in sorted(host.cards, key=lambda c: c.pci_bus):
        for port in range(1, card.ports + 1):
            out.append((card, port, card.mst_name if port == 1 else f"{card.mst_name}.{port - 1}"))
    return out


def _resolve_device(host: EsxiHost, dev: str) -> tuple[Card, int] | None:
    d = dev.strip().lower()
    for card, port, mst in _mst_functions(host):
        short = card.pci(port).lower()
        if d in (mst.lower(), short, f"0000:{short}"):
            return card, port
    return None


def mst(ctx: Ctx, argv: list[str]) -> Reply:
    host = _host(ctx)
    args = argv[1:]
    if not args:
        return _ok("Usage:\n    mst {start|stop|restart|status [-v|-vv]|version|help}\n")
    command, rest = args[0], args[1:]
    if command in ("start", "restart"):
        host.mst_started = True
        return _ok()
    if command == "stop":
        host.mst_started = False
        return _ok()
    if command == "version":
        return _ok("mst, mft 4.18.1-14, built on Oct 18 2021, 16:08:32. Git SHA Hash: N/A\n")
    if command == "help":
        return _ok("Usage:\n    mst {start|stop|restart|status [-v|-vv]|version|help}\n")
    if command != "status":
        return _err(f'-E- Unknown argument "{command}"')
    bad = [a for a in rest if a not in ("-v", "-vv")]
    if bad:
        return _err(f'-E- Unknown argument "{bad[0]}"')
    nets = {(n.card, n.port): n.name for n in host.vmnics}
    if not rest:
        lines = ["MST devices:", "------------"]
        if host.mst_started:
            lines += [mst_name for card, port, mst_name in _mst_functions(host) if port == 1]
        return _ok("\n".join(lines) + "\n")
    lines = ["PCI devices:", "------------",
             f"{'DEVICE_TYPE':<20}{'MST':<19}{'PCI':<11}{'RDMA':<8}{'NET':<30}NUMA"]
    for card, port, mst_name in _mst_functions(host):
        net = nets.get((host.cards.index(card), port))
        row = (f"{card.model + '(rev:0)':<20}{mst_name if host.mst_started else 'NA':<19}{card.pci(port):<11}"
               f"{'':<8}{'net-' + net if net else '':<30}")
        lines.append(row.rstrip())
    return _ok("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------- mlxconfig (lab/tools/mft.py)


def mlxconfig(ctx: Ctx, argv: list[str]) -> Reply:
    """MFT's mlxconfig (one implementation for ESXi and Linux, lab/tools/mft.py) over what `mst` shows here."""
    host = _host(ctx)

    def resolve(dev: str) -> Card | None:
        found = _resolve_device(host, dev)
        return found[0] if found else None

    cards = [(c, m) for c, p, m in _mst_functions(host) if p == 1]
    return mft.mlxconfig(ctx, argv, mft.MstDevices(host.mst_started, cards, resolve))


# ---------------------------------------------------------------------------- mlxfwmanager / flint


def _mac_hex(card: Card) -> str:
    return card.base_mac.replace(":", "").lower()


def _guid(card: Card) -> str:
    mac = _mac_hex(card)
    return mac[:6] + "0300" + mac[6:]


def _vtuple(version: str | None) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version or ""))


def _fwm_block(card: Card, name: str, index: int, available: str | None, status: str) -> str:
    avail = available or "N/A"
    return (f"Device #{index}:\n----------\n\n"
            f"  Device Type:      {card.model}\n"
            f"  Part Number:      {card.part_number}\n"
            f"  Description:      {card.description}\n"
            f"  PSID:             {card.psid}\n"
            f"  PCI Device Name:  {name}\n"
            f"  Base GUID:        {_guid(card)}\n"
            f"  Base MAC:         {_mac_hex(card)}\n"
            f"  Versions:         {'Current':<14} {'Available':<14}\n"
            f"     FW             {card.fw_version:<14} {avail:<14}\n"
            f"     {'PXE':<12}   {card.pxe_version:<14} {'N/A':<14}\n"
            f"     {'UEFI':<12}   {card.uefi_version:<14} {'N/A':<14}\n"
            f"\n  Status:           {status}\n\n")


def mlxfwmanager(ctx: Ctx, argv: list[str]) -> Reply:
    host = _host(ctx)
    args = argv[1:]
    devices: list[str] = []
    online = update = force = yes = False
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "--dev"):
            if i + 1 >= len(args):
                return _err("-E- Missing argument for option -d", 3)
            devices += [d for d in args[i + 1].split(";") if d]
            i += 2
            continue
        if a in ("-i", "--image-file", "-D", "--image-dir"):
            if i + 1 >= len(args):
                return _err(f"-E- Missing argument for option {a}", 3)
            path = args[i + 1]
            if path not in ctx.files:
                return _err(f"-E- Image file {path} does not exist", 3)
            i += 2
            continue
        if a == "--online":
            online = True
        elif a in ("-u", "--update"):
            update = True
        elif a in ("-f", "--force"):
            force = True
        elif a in ("-y", "--yes"):
            yes = True
        elif a in ("--query", "--no-progress", "--nofs"):
            pass
        elif a in ("-v", "--version"):
            return _ok("mlxfwmanager, mft 4.18.1-14, built on Oct 18 2021, 16:08:32. Git SHA Hash: N/A\n")
        else:
            return _err(f"-E- Unknown option \"{a}\"", 3)
        i += 1
    if not host.mst_started:
        return _err("-E- No devices found or specified, mst might be stopped, run 'mst start' to load MST modules",
                    20)
    targets: list[tuple[Card, str]] = []
    if devices:
        for d in devices:
            found = _resolve_device(host, d)
            if found is None:
                return Reply(stdout="Querying Mellanox devices firmware ...\n",
                             stderr=f"-E- Failed to open device: {d}\n", exit=1)
            targets.append((found[0], d))
    else:
        targets = [(c, m) for c, p, m in _mst_functions(host) if p == 1]
    out = "Querying Mellanox devices firmware ...\n\n"
    plan: list[tuple[Card, str | None, str]] = []
    for index, (card, name) in enumerate(targets, 1):
        available = card.fw_available if online else None
        if available is None:
            status = "No matching image found"
        elif _vtuple(available) > _vtuple(card.fw_version):
            status = "Update required"
        elif force:
            status = "Forced update required"
        else:
            status = "Up to date"
        plan.append((card, available, status))
        out += _fwm_block(card, name, index, available, status)
    need = sum(1 for _, _, s in plan if s in ("Update required", "Forced update required"))
    if not update:
        if need:
            out += f"---------\nFound {need} device(s) requiring firmware update. Please use -u flag to perform " \
                   "the update.\n"
        return _ok(out)
    if need:
        out += f"---------\nFound {need} device(s) requiring firmware update...\n"
    out += "\n"
    if not force:
        if not need:
            return Reply(stdout=out, exit=0 if all(s == "Up to date" for _, _, s in plan) else 9)
        if not yes:
            out += "Perform FW update? [y/N]: "
            if not first_line(ctx.stdin).lower().startswith("y"):
                return _ok(out + "No updates performed\n")
    if online and need:
        out += "\n"
    burned = errors = 0
    for index, (card, available, status) in enumerate(plan, 1):
        if available is None:
            out += f"Device #{index}: Error - no matching image found\n"
            errors += 1
        elif status == "Up to date":
            out += f"Device #{index}: Up to date\n"
        else:
            out += f"Device #{index}: Updating FW ...     \nDone\n"
            # the flash holds the new image; the lab has no separate running-FW state, so it shows at once
            card.fw_version = available
            card.fw_available = available
            burned += 1
    if burned:
        out += "\nRestart needed for updates to take effect.\n"
    if errors:
        return Reply(stdout=out, stderr="-E- One or more errors were encountered.\n", exit=254 if burned else 255)
    return _ok(out)


_FW_DATES = {"16.32.1010": "5.12.2021", "14.32.1010": "5.12.2021", "16.26.4012": "17.11.2019",
             "16.29.1016": "2.12.2020", "14.29.1016": "2.12.2020", "16.31.1014": "12.7.2021"}


def _rom(version: str) -> str:
    return ".".join(str(int(x)) for x in version.split(".") if x.isdigit())


def flint(ctx: Ctx, argv: list[str]) -> Reply:
    host = _host(ctx)
    args = argv[1:]
    dev: str | None = None
    image: str | None = None
    command: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "--device", "-i", "--image"):
            if i + 1 >= len(args):
                return _err(f"-E- Missing argument for flag {a}", 1)
            if a in ("-d", "--device"):
                dev = args[i + 1]
            else:
                image = args[i + 1]
            i += 2
            continue
        if a in ("-y", "--yes", "-qq", "--no"):
            i += 1
            continue
        command = args[i:]
        break
    if not command:
        return _err("-E- No command given. See flint -h for usage.", 1)
    if image is not None and image not in ctx.files:
        return _err(f"-E- Cannot open {image}: No such file or directory", 1)
    if dev is None:
        return _err("-E- Missing device or image file, use -d or -i flag", 1)
    found = _resolve_device(host, dev) if host.mst_started else None
    if found is None:
        return _err(f"-E- Cannot open Device: {dev}. No such file or directory. MFE_UNSUPPORTED_DEVICE", 1)
    card = found[0]
    if command[0] not in ("q", "query"):
        if command[0] in ("b", "burn"):
            return _err("-E- Burn command requires an image file (-i)", 1)
        return _err(f"-E- Invalid command \"{command[0]}\"", 1)
    fs = "FS3" if card.device_id in (4115, 4117) else "FS4"
    lines = [
        f"{'Image type:':<23}{fs}",
        f"{'FW Version:':<23}{card.fw_version}",
        f"{'FW Release Date:':<23}{_FW_DATES.get(card.fw_version, '1.1.2021')}",
        f"{'Product Version:':<23}{card.fw_version}",
        f"{'Rom Info:':<23}type=UEFI version={_rom(card.uefi_version)} cpu=AMD64",
        f"{'':<23}type=PXE version={_rom(card.pxe_version)} cpu=AMD64",
        f"{'Description:':<23}UID                GuidsNumber",
        f"{'Base GUID:':<23}{_guid(card):<24}{4 * card.ports // 2}",
        f"{'Base MAC:':<23}{_mac_hex(card):<24}{4 * card.ports // 2}",
        f"{'Image VSD:':<23}N/A",
        f"{'Device VSD:':<23}N/A",
        f"{'PSID:':<23}{card.psid}",
        f"{'Security Attributes:':<23}N/A",
    ]
    return _ok("\n".join(lines) + "\n")
