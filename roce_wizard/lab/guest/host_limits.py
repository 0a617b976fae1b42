"""A Linux host's limits and its card's DCQCN switches and PCIe link, as the real tools show them (RW413-RW415).

- MLNX_OFED's DCQCN switches `/sys/class/net/<if>/ecn/roce_{np,rp}/enable/<0..7>` ("1"/"0", NVIDIA MLNX_OFED
  "Explicit Congestion Notification (ECN)"): only on bare metal (the PF) with MLNX_OFED loaded; the inbox
  kernel has no `ecn/` directory. Every priority enabled at boot (the driver's default) except what the
  host's own boot configuration turns off (`boot_off`, a fault); `echo 0|1 >` changes them until the next boot.
- `ulimit -l` / `-H -l` (bash prints KiB or `unlimited`): the host's limit (`memlock`, what the image ships),
  then /etc/security/limits.conf and limits.d/*.conf in lexical order, the last `*`/`root` memlock line of a
  type winning (limits.conf(5); pam_limits takes a later line of the same domain over an earlier one). Each
  SSH command is a new login here, so a file written now applies to the next command.
- `systemctl show -p P… <unit>` (systemctl(1)): `Name=value` lines; LimitMEMLOCK in bytes or `infinity` from
  the unit's drop-ins (systemd.exec(5)), else the manager's default 65536 (RHEL 8's systemd 239);
  `LoadState=not-found` for a unit the host does not have (no slurmd in the lab).
- `lspci -vv [-s <bdf>]` on bare metal: the card's functions with LnkCap/LnkSta from the card's link state
  (pciutils' format, held against corpus lspci_vvv/cx7-mcx755106as-sriov-cap-vfs0.txt).
"""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.lab.guest import rdma_sysfs
from roce_wizard.lab.guest.state import _err, _gs, _guest, _ok
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.world import Guest, World

_ECN = re.compile(r"/sys/class/net/([^/]+)/ecn/roce_(np|rp)/enable/([0-7])")
MANAGER_MEMLOCK = 65536


# ---------------------------------------------------------------------------- DCQCN sysfs


def _dcqcn(world: World, guest: Guest) -> dict[str, Any]:
    """{"off": {(netdev, point, prio)}} for this boot (back to `boot_off` after a reboot)."""
    st = _gs(world, guest)
    d = st.setdefault("dcqcn", {"boot_id": guest.boot_id, "boot_off": set(), "off": set()})
    if d["boot_id"] != guest.boot_id:
        d["boot_id"], d["off"] = guest.boot_id, set(d["boot_off"])
    return d


def _has_ecn_sysfs(guest: Guest) -> bool:
    return guest.vm is None and guest.ofed_version is not None and not guest.ofed_pending and guest.up


def _pf_netdevs(guest: Guest) -> list[str]:
    return [i.name for i in guest.interfaces if i.name.startswith("ens1f")]


def ecn_files(world: World, guest: Guest) -> dict[str, str]:
    if not _has_ecn_sysfs(guest):
        return {}
    off = _dcqcn(world, guest)["off"]
    return {f"/sys/class/net/{n}/ecn/roce_{p}/enable/{i}": f"{0 if (n, p, i) in off else 1}\n"
            for n in _pf_netdevs(guest) for p in ("np", "rp") for i in range(8)}


def write_ecn(world: World, guest: Guest, path: str, content: str) -> tuple[bool, str | None]:
    """(handled, error): `echo 0|1 > …/ecn/roce_{np,rp}/enable/<p>`."""
    m = _ECN.fullmatch(path)
    if m is None:
        return False, None
    if not _has_ecn_sysfs(guest) or m.group(1) not in _pf_netdevs(guest):
        return True, f"sh: {path}: No such file or directory"
    value = content.strip()
    if value not in ("0", "1"):
        return True, "sh: echo: write error: Invalid argument"
    key = (m.group(1), m.group(2), int(m.group(3)))
    off = _dcqcn(world, guest)["off"]
    if value == "1":
        off.discard(key)
    else:
        off.add(key)
    return True, None


def disable_at_boot(world: World, guest: Guest, netdev: str, point: str, prio: int) -> None:
    """The host's boot configuration turns one switch off (a site script): now and at every boot."""
    d = _dcqcn(world, guest)
    d["boot_off"].add((netdev, point, prio))
    d["off"].add((netdev, point, prio))


# ---------------------------------------------------------------------------- memlock


def _limits(st: dict[str, Any]) -> dict[str, str]:
    base = st.get("memlock", "unlimited")
    out = {"soft": base, "hard": base}
    paths = ["/etc/security/limits.conf", *sorted(p for p in st["etc"] if p.startswith("/etc/security/limits.d/")
                                                   and p.endswith(".conf"))]
    for path in paths:
        for line in (st["etc"].get(path) or "").splitlines():
            words = line.split("#", 1)[0].split()
            if len(words) == 4 and words[0] in ("*", "root") and words[2] == "memlock":
                for kind in (("soft", "hard") if words[1] == "-" else (words[1],)):
                    if kind in out:
                        out[kind] = words[3] if words[3] in ("unlimited", "infinity") or words[3].isdigit() else out[kind]
    return {k: "unlimited" if v == "infinity" else v for k, v in out.items()}


def prog_ulimit(ctx: Ctx, argv: list[str]) -> Reply:
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-"))
    if set(flags) - {"l", "H", "S"} or not argv[1:] or any(not a.startswith("-") for a in argv[1:]):
        return _err(f"bash: ulimit: {' '.join(argv[1:])}: invalid option", 2)
    limits = _limits(_gs(ctx.world, _guest(ctx.world, ctx.target)))
    return _ok(limits["hard" if "H" in flags else "soft"] + "\n")


def set_memlock(world: World, guest: Guest, kib: int) -> None:
    """The image's limit (what /etc/security/limits.conf says on it): `* soft/hard memlock <kib>`."""
    st = _gs(world, guest)
    st["memlock"] = str(kib)
    st["etc"]["/etc/security/limits.conf"] = (f"# /etc/security/limits.conf\n*               soft    memlock         {kib}\n"
                                              f"*               hard    memlock         {kib}\n")


def systemctl_show(ctx: Ctx, argv: list[str]) -> Reply:
    st = _gs(ctx.world, _guest(ctx.world, ctx.target))
    props: list[str] = []
    units: list[str] = []
    args = argv[argv.index("show") + 1:]
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-p", "--property"):
            props += args[i + 1].split(",") if i + 1 < len(args) else []
            i += 2
            continue
        if a.startswith("--property="):
            props += a.split("=", 1)[1].split(",")
        elif not a.startswith("-"):
            units.append(a if "." in a else a + ".service")
        i += 1
    out = []
    for unit in units or ["systemd"]:
        loaded = f"/etc/systemd/system/{unit}" in st["etc"] or f"/usr/lib/systemd/system/{unit}" in st["etc"]
        limit = str(MANAGER_MEMLOCK)
        for path in sorted(p for p in st["etc"] if p.startswith(f"/etc/systemd/system/{unit}.d/") and p.endswith(".conf")):
            for m in re.finditer(r"^\s*LimitMEMLOCK=(\S+)\s*$", st["etc"][path], re.MULTILINE):
                limit = m.group(1)
        values = {"LimitMEMLOCK": limit, "LimitMEMLOCKSoft": limit, "LoadState": "loaded" if loaded else "not-found"}
        out += [f"{p}={values[p]}" for p in (props or list(values)) if p in values]
        if len(units) > 1:
            out.append("")
    return _ok("".join(line + "\n" for line in out))


# ---------------------------------------------------------------------------- lspci -vv


def _link(world: World, guest: Guest) -> dict[str, Any]:
    """The card's PCIe link: capable (from its part: PCIe 3.0 x16) and trained."""
    return _gs(world, guest).setdefault("pcie_link", {"cap": (8, 16), "sta": (8, 16)})


def train_link(world: World, guest: Guest, speed: int, width: int) -> float:
    """The link trained below its capability (a riser, a half-seated card); returns its usable Gb/s
    (128b/130b encoding from 8 GT/s on), which bounds what the card moves."""
    _link(world, guest)["sta"] = (speed, width)
    gbps = speed * width * (128 / 130 if speed >= 8 else 0.8)
    _gs(world, guest)["pcie_gbps"] = round(gbps, 1)
    return gbps


def _function(bdf: str, card: Any, link: dict[str, Any], port: int) -> str:
    (cs, cw), (ss, sw) = link["cap"], link["sta"]
    down_s = " (downgraded)" if ss < cs else ""
    down_w = " (downgraded)" if sw < cw else ""
    return (f"{bdf} Ethernet controller: Mellanox Technologies MT27800 Family [ConnectX-5]\n"
            "\tSubsystem: Mellanox Technologies Device 0008\n"
            "\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR- FastB2B- DisINTx+\n"
            "\tStatus: Cap+ 66MHz- UDF- FastB2B- ParErr- DEVSEL=fast >TAbort- <TAbort- <MAbort- >SERR- <PERR- INTx-\n"
            "\tLatency: 0, Cache Line Size: 32 bytes\n"
            f"\tInterrupt: pin {'AB'[port - 1]} routed to IRQ {120 + port}\n"
            "\tNUMA node: 0\n"
            "\tCapabilities: [60] Express (v2) Endpoint, MSI 00\n"
            "\t\tDevCap:\tMaxPayload 512 bytes, PhantFunc 0, Latency L0s unlimited, L1 unlimited\n"
            "\t\t\tExtTag+ AttnBtn- AttnInd- PwrInd- RBE+ FLReset+ SlotPowerLimit 75.000W\n"
            f"\t\tLnkCap:\tPort #0, Speed {cs}GT/s, Width x{cw}, ASPM not supported\n"
            "\t\t\tClockPM- Surprise- LLActRep- BwNot- ASPMOptComp+\n"
            "\t\tLnkCtl:\tASPM Disabled; RCB 64 bytes Disabled- CommClk+\n"
            "\t\t\tExtSynch- ClockPM- AutWidDis- BWInt- AutBWInt-\n"
            f"\t\tLnkSta:\tSpeed {ss}GT/s{down_s}, Width x{sw}{down_w}\n"
            "\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-\n"
            "\tKernel driver in use: mlx5_core\n"
            "\tKernel modules: mlx5_core\n\n")


def prog_lspci(ctx: Ctx, argv: list[str]) -> Reply:
    guest = _guest(ctx.world, ctx.target)
    card = _gs(ctx.world, guest).get("card")
    selector = None
    args = argv[1:]
    for i, a in enumerate(args):
        if a == "-s" and i + 1 < len(args):
            selector = args[i + 1]
        elif a.startswith("-s") and len(a) > 2:
            selector = a[2:]
    if card is None:
        return _ok("")
    out = []
    for port in (1, 2):
        bdf = card.pci(port)
        if selector is None or selector.lower() in (bdf, f"0000:{bdf}"):
            out.append(_function(bdf, card, _link(ctx.world, guest), port))
    verbose = any(re.fullmatch(r"-v+", a) for a in args)
    if not verbose:
        return _ok("".join(block.splitlines()[0] + "\n" for block in out))
    return _ok("".join(out).rstrip("\n") + "\n\n" if out else "")


# ---------------------------------------------------------------------------- mkdir


def prog_mkdir(ctx: Ctx, argv: list[str]) -> Reply:
    """`mkdir [-p] DIR…`: the lab's files have implicit directories, so a directory under /etc, /tmp or /root
    (a systemd drop-in directory) just exists; an rdma_cm configfs group is made as the kernel makes it."""
    guest = _guest(ctx.world, ctx.target)
    for path in (a for a in argv[1:] if not a.startswith("-")):
        m = re.fullmatch(r"/sys/kernel/config/rdma_cm/([A-Za-z0-9_]+)/?", path)
        if path.startswith(("/etc/", "/tmp/", "/root/")):
            continue
        if m:
            rdma_sysfs.make_group(guest, m.group(1))
            continue
        return _err(f"mkdir: cannot create directory '{path}': Permission denied", 1)
    return _ok()
