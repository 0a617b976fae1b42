"""The simulated ESXi host: esxcli, vim-cmd, esxcfg-*, reboot, and the MFT/NMST tools.

Every output is rendered from the world model in the format the real tool prints (held against
`../shared/corpus/` and seed 000): esxcli tables are padded to the widest cell with numbers and
booleans right-aligned, `--formatter=csv` prints the field names without spaces in alphabetical
order with a trailing comma on every line; mlxconfig, mlxfwmanager and mst follow the printf
layouts of MFT 4.18 (the release seed 000 installs on ESXi 7.0U2). The lab never imports the
parsers or the checks: it only prints what the hardware would show.

A program is ``(ctx, argv) -> Reply`` where ``argv[0]`` is the command name as typed (bare or full
path), as in C.  ``programs(world, host)`` returns what is installed right now: the MFT tools exist
only once the mft and nmst VIBs are loaded (installed, then the host rebooted).

Model choices worth knowing (each is how the hardware behaves, not a shortcut):
- Global pause: `pauseParams list` shows what is configured; with PFC operational (nmlx5_core loaded
  with pfctx) global pause is operationally disabled whatever it shows (Mellanox, "HowTo Run RoCE over L2
  Enabled with PFC (ESXi)"), and nmlx5 refuses `pauseParams set` ("pause parameters cannot be set when pfc
  is enabled" in the VMkernel log, an operator's report): lab/esxi_dcb.py holds the DCB state.
- VFs: ``World.vf_count`` decides how many VFs the driver created; in addition the BIOS must map
  the VF BARs: with Dell's `MmioAbove4Gb` Disabled only ``MMIO_LOW_VFS_PER_PF`` VFs per PF fit.
- mst: until `mst start` after a boot, `mst status` lists the PCI functions without mst device
  names and MFT tools cannot open the adapter.
- mlxconfig set writes Next Boot; the host reboot (World.reboot_host) moves it to Current.
"""

from __future__ import annotations

import csv
import io
import re
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape as xml_escape

from roce_wizard.lab import esxi_dcb, scenarios
from roce_wizard.lab.faults import Fault
from roce_wizard.lab.proto import Ctx, Program, Reply
from roce_wizard.lab.world import MLX_ENUMS, MMIO_LOW_VFS_PER_PF, Card, EsxiHost, MlxParam, Vib, Vmnic, World

MLX_BIN = "/opt/mellanox/bin"
DATASTORE = "/vmfs/volumes/datastore1"
VIB_DIR = f"{DATASTORE}/mellanox"  # the shared datastore of seed 000's best practice
CPU_POLICIES = ("High Performance", "Balanced", "Low Power", "Custom")
NMLX5_ZIP = "Mellanox-nmlx5_4.21.71.101-1OEM.702.0.0.17473468_18150468-package.zip"

# ==================================================================================== helpers


def _host(ctx: Ctx) -> EsxiHost:
    return ctx.world.hosts[ctx.target]


def _ok(text: str = "") -> Reply:
    return Reply(stdout=text)


def _err(text: str, code: int = 1, stdout: str = "") -> Reply:
    return Reply(stdout=stdout, stderr=text if text.endswith("\n") or not text else text + "\n", exit=code)


def _full_pci(short: str) -> str:
    return f"0000:{short}"


_FAMILY = {  # device id -> (PCI family name, marketing name) as `esxcli network nic list` prints them
    4115: ("MT27700", "ConnectX-4"),
    4117: ("MT27710", "ConnectX-4 Lx"),
    4119: ("MT27800", "ConnectX-5"),
    4121: ("MT28800", "ConnectX-5 Ex"),
    4123: ("MT28908", "ConnectX-6"),
    4125: ("MT2892", "ConnectX-6 Dx"),
    4127: ("MT2894", "ConnectX-6 Lx"),
}


def _nic_description(card: Card) -> str:
    family, name = _FAMILY.get(card.device_id, (f"MT{card.device_id}", card.model))
    return f"Mellanox Technologies {family} Family [{name}]"


def _port_is_eth(card: Card, port: int) -> bool:
    link = card.config.get(f"LINK_TYPE_P{port}")
    return link is None or link.current == "ETH"


def _link_up(card: Card, vmnic: Vmnic) -> bool:
    # an IB-configured VPI port brings up no Ethernet link
    return vmnic.link_up and _port_is_eth(card, vmnic.port)


def instantiated_vfs(world: World, host: EsxiHost, vmnic: Vmnic) -> int:
    """VFs the driver created on this PF at boot (what `sriovnic vf list` shows)."""
    return world.vf_count(host, vmnic)


def reported_pause(world: World, host: EsxiHost, vmnic: Vmnic) -> tuple[bool, bool]:
    """Global pause as `pauseParams list` shows it: as configured. Whether it is in effect is
    esxi_dcb.pause_operational (PFC disables it operationally)."""
    return vmnic.pause_rx, vmnic.pause_tx


def _iso(ts: float) -> str:
    frac = int((ts - int(ts)) * 1_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{frac:06d}Z"


def _world_id(name: str) -> int:
    return 2_100_000 + zlib.crc32(name.encode()) % 90_000


def _bool_word(value: str) -> bool | None:
    v = value.strip().lower()
    if v in ("true", "1", "yes", "on"):
        return True
    if v in ("false", "0", "no", "off"):
        return False
    return None


# ==================================================================================== esxcli output model


@dataclass
class Out:
    """What an esxcli command returns, rendered by the chosen formatter.

    kind: "table" (rows under a header), "structs" (key: value blocks), "scalar", "none".
    fields: (human label, csv name) in the human order; extra: csv/keyvalue-only fields.
    """

    kind: str
    type_name: str = "Struct"
    fields: list[tuple[str, str]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    value: Any = None
    title: str | None = None  # a line printed above a struct (`Installation Result`)


def _fields(*labels: str) -> list[tuple[str, str]]:
    return [(label, label.replace(" ", "")) for label in labels]


def _cell(value: Any, none: str = "") -> str:
    if value is None:
        return none
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _render_table(out: Out) -> str:
    labels = [label for label, _ in out.fields]
    keys = [key for _, key in out.fields]
    cells = [[_cell(row.get(k), "-") for k in keys] for row in out.rows]  # esxcli shows an unset value as -
    widths = [max([len(label)] + [len(r[i]) for r in cells]) for i, label in enumerate(labels)]
    right = []
    for k in keys:
        sample = next((row.get(k) for row in out.rows if row.get(k) not in (None, "")), None)
        right.append(isinstance(sample, (int, bool)) and not isinstance(sample, str))
    lines = ["  ".join(label.ljust(w) for label, w in zip(labels, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    for r in cells:
        lines.append("  ".join(c.rjust(w) if rt else c.ljust(w) for c, w, rt in zip(r, widths, right)).rstrip())
    return "\n".join(lines) + "\n"


def _render_structs(out: Out) -> str:
    blocks = []
    for row in out.rows:
        lines = [f"   {label}: {_cell(row.get(key))}".rstrip() for label, key in out.fields]
        blocks.append("\n".join(lines) + "\n")
    text = "\n".join(blocks)
    if out.title:
        text = out.title + "\n" + text + "\n"
    return text


def _render_csv(out: Out) -> str:
    if out.kind == "scalar":
        return _cell(out.value) + "\n"
    names = sorted({key for _, key in out.fields} | set(out.extra))
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    buf.write(",".join(names) + ",\n")
    for row in out.rows:
        writer.writerow([_csv_cell(row.get(n)) for n in names] + [""])
    return buf.getvalue()


def _csv_cell(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return _cell(value)


def _xsd(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return "string"


def _render_keyvalue(out: Out) -> str:
    if out.kind == "scalar":
        return f"{out.type_name}.{_xsd(out.value)}={_cell(out.value)}\n"
    names = sorted({key for _, key in out.fields} | set(out.extra))
    lines = []
    for row in out.rows:
        for n in names:
            value = row.get(n)
            if isinstance(value, list):
                lines.extend(f"{out.type_name}.{n}.string[]={v}" for v in value)
                continue
            lines.append(f"{out.type_name}.{n}.{_xsd(value)}={_cell(value)}")
        lines.append("")
    return "\n".join(lines) + ("\n" if lines else "")


def _render_xml(out: Out) -> str:
    head = ('<?xml version="1.0" encoding="utf-8"?>\n'
            '<output xmlns="http://www.vmware.com/Products/ESX/5.0/esxcli">\n<root>\n')
    tail = "</root>\n</output>\n"
    if out.kind == "scalar":
        return head + f"   <{_xsd(out.value)}>{xml_escape(_cell(out.value))}</{_xsd(out.value)}>\n" + tail
    names = sorted({key for _, key in out.fields} | set(out.extra))

    def structure(row: dict[str, Any], indent: str) -> str:
        parts = [f'{indent}<structure typeName="{out.type_name}">\n']
        for n in names:
            value = row.get(n)
            parts.append(f'{indent}   <field name="{n}">\n')
            if isinstance(value, list):
                parts.append(f'{indent}      <list type="string">\n')
                parts.extend(f"{indent}         <string>{xml_escape(str(v))}</string>\n" for v in value)
                parts.append(f"{indent}      </list>\n")
            else:
                t = _xsd(value)
                parts.append(f"{indent}      <{t}>{xml_escape(_cell(value))}</{t}>\n")
            parts.append(f"{indent}   </field>\n")
        parts.append(f"{indent}</structure>\n")
        return "".join(parts)

    if out.kind == "table" or len(out.rows) != 1:
        body = '   <list type="structure">\n' + "".join(structure(r, "      ") for r in out.rows) + "   </list>\n"
    else:
        body = structure(out.rows[0], "   ")
    return head + body + tail


def _render(out: Out, formatter: str | None) -> str:
    if out.kind == "none":
        return ""
    if formatter == "csv":
        return _render_csv(out)
    if formatter == "keyvalue":
        return _render_keyvalue(out)
    if formatter == "xml":
        return _render_xml(out)
    if out.kind == "scalar":
        return _cell(out.value) + "\n"
    if out.kind == "table":
        return _render_table(out)
    return _render_structs(out)


# ==================================================================================== esxcli commands


@dataclass(frozen=True)
class Opt:
    short: str | None
    long: str
    kind: str = "str"  # str | bool | long | flag
    required: bool = False
    multi: bool = False
    help: str = ""


@dataclass(frozen=True)
class Cmd:
    path: tuple[str, ...]
    help: str
    opts: tuple[Opt, ...]
    run: Callable[[Ctx, EsxiHost, dict[str, Any]], Out | Reply]


class _UsageError(Exception):
    pass


def _opt_label(opt: Opt) -> str:
    names = (f"-{opt.short}|" if opt.short else "") + f"--{opt.long}"
    if opt.kind == "flag":
        return names
    kind = opt.kind if opt.kind in ("bool", "long") else "str"
    return f"{names}=<{kind}>"


def _cmd_usage(cmd: Cmd) -> str:
    lines = [f"Usage: esxcli {' '.join(cmd.path)} [cmd options]", "", "Description: ",
             f"  {cmd.path[-1]:<22}{cmd.help}", ""]
    if cmd.opts:
        lines.append("Cmd options:")
        for opt in cmd.opts:
            label = _opt_label(opt)
            help_text = opt.help + (" (required)" if opt.required else "")
            if len(label) >= 22:
                lines.append(f"  {label}")
                lines.append(f"  {'':<22}{help_text}")
            else:
                lines.append(f"  {label:<22}{help_text}")
    return "\n".join(lines) + "\n"


def _parse_opts(cmd: Cmd, args: list[str]) -> dict[str, Any]:
    by_long = {o.long.lower(): o for o in cmd.opts}
    by_short = {o.short: o for o in cmd.opts if o.short}
    values: dict[str, Any] = {}
    i = 0
    while i < len(args):
        tok = args[i]
        inline: str | None = None
        if tok.startswith("--") and len(tok) > 2:
            name, eq, rest = tok[2:].partition("=")
            opt = by_long.get(name.lower())
            inline = rest if eq else None
        elif tok.startswith("-") and len(tok) >= 2 and tok != "-":
            opt = by_short.get(tok[1])
            inline = tok[2:] or None
            if inline is not None and inline.startswith("="):
                inline = inline[1:]
        else:
            raise _UsageError(f"Error: Invalid argument '{tok}'")
        if opt is None:
            raise _UsageError(f"Error: Invalid option {tok.split('=')[0]}")
        if opt.kind == "flag":
            if inline is not None and _bool_word(inline) is None:
                raise _UsageError(f"Error: Invalid option {tok}")
            values[opt.long] = True if inline is None else bool(_bool_word(inline))
            i += 1
            continue
        if inline is None:
            i += 1
            if i >= len(args):
                raise _UsageError(f"Error: Missing required value for option -{opt.short}|--{opt.long}"
                                  if opt.short else f"Error: Missing required value for option --{opt.long}")
            inline = args[i]
        value: Any = inline
        if opt.kind == "bool":
            value = _bool_word(inline)
            if value is None:
                raise _UsageError(f"Error: Invalid data constraint for parameter '{opt.long}'. "
                                  f"Expected one of: [true, false, 1, 0, yes, no], got '{inline}'")
        elif opt.kind == "long":
            try:
                value = int(inline, 0)
            except ValueError:
                raise _UsageError(f"Error: Invalid data constraint for parameter '{opt.long}'. "
                                  f"Expected an integer, got '{inline}'") from None
        if opt.multi:
            values.setdefault(opt.long, []).append(value)
        else:
            values[opt.long] = value
        i += 1
    for opt in cmd.opts:
        if opt.required and opt.long not in values:
            label = f"-{opt.short}|--{opt.long}" if opt.short else f"--{opt.long}"
            raise _UsageError(f"Error: Missing required parameter {label}")
    return values


# ---------------------------------------------------------------------------- network nic


def _nic_rows(world: World, host: EsxiHost) -> list[dict[str, Any]]:
    rows = []
    for nic in sorted(host.vmnics, key=lambda n: int(re.sub(r"\D", "", n.name) or 0)):
        card = host.cards[nic.card]
        up = _link_up(card, nic)
        rows.append({
            "Name": nic.name,
            "PCIDevice": _full_pci(card.pci(nic.port)),
            "Driver": nic.driver,
            "AdminStatus": "Up",
            "LinkStatus": "Up" if up else "Down",
            "Link": "Up" if up else "Down",
            "Speed": card.speed_mbps if up else 0,
            "Duplex": "Full" if up else "Half",
            "MACAddress": nic.mac,
            "MTU": nic.mtu,
            "Description": _nic_description(card),
        })
    return rows


def _nic_list(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out:
    return Out("table", "NIC", _fields("Name", "PCI Device", "Driver", "Admin Status", "Link Status", "Speed",
                                       "Duplex", "MAC Address", "MTU", "Description"), _nic_rows(ctx.world, host))


def _pause_list(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out:
    rows = []
    for row in _nic_rows(ctx.world, host):
        nic = next(n for n in host.vmnics if n.name == row["Name"])
        rx, tx = reported_pause(ctx.world, host, nic)
        rows.append({"NIC": nic.name, "PauseParamsSupported": True, "PauseRX": rx, "PauseTX": tx,
                     "AutoNegotiation": False, "AutoNegotiationResolutionAvail": False,
                     "RXAutoNegotiationResolution": False, "TXAutoNegotiationResolution": False})
    return Out("table", "PauseParams", _fields("NIC", "Pause Params Supported", "Pause RX", "Pause TX",
                                               "Auto Negotiation", "Auto Negotiation Resolution Avail",
                                               "RX Auto Negotiation Resolution", "TX Auto Negotiation Resolution"),
               rows)


def _pause_set(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    nic = next((n for n in host.vmnics if n.name == opts["nic-name"]), None)
    if nic is None:
        return _err("Error: Unable to complete Sysinfo operation.  Please see the VMkernel log file for more "
                    "details.: Sysinfo error: Not foundSee VMkernel log for details.")
    if "auto" not in opts and "rx" not in opts and "tx" not in opts:
        return _err("Error: At least one of -a|--auto, -r|--rx or -t|--tx must be given")
    if opts.get("auto"):
        return _err(f"Error: Unable to set pause parameters on {nic.name}: auto negotiation of pause frames "
                    "is not supported by this device")
    if nic.driver == "nmlx5_core" and esxi_dcb.pfc_bitmask(ctx.world, host, nic):
        # nmlx5 refuses while PFC is enabled (VMkernel: "nmlx5_core: vmnicN: pause parameters cannot be set when
        # pfc is enabled"; esxcli: "Unable to complete Sysinfo operation"): the rest of the real line is unknown
        return _err("Error: Unable to complete Sysinfo operation.  Please see the VMkernel log file for more "
                    "details.")
    if "rx" in opts:
        nic.pause_rx = opts["rx"]
    if "tx" in opts:
        nic.pause_tx = opts["tx"]
    return Out("none")


def _dcb_status(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    nic = next((n for n in host.vmnics if n.name == opts["nic-name"]), None)
    if nic is None or nic.driver != "nmlx5_core":  # another driver's DCB answer is not known to the lab: refuse
        return _err("Error: Unable to complete Sysinfo operation.  Please see the VMkernel log file for more "
                    "details.: Sysinfo error: Not foundSee VMkernel log for details.")
    row = esxi_dcb.dcb_status(ctx.world, host, nic)
    return Out("structs", "DCBStatus", _fields(*row), [{k.replace(" ", ""): v for k, v in row.items()}])


def _sriov_nics(world: World, host: EsxiHost) -> list[Vmnic]:
    return [n for n in host.nmlx5_vmnics() if instantiated_vfs(world, host, n) > 0]


def _sriovnic_list(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out:
    names = {n.name for n in _sriov_nics(ctx.world, host)}
    rows = [r for r in _nic_rows(ctx.world, host) if r["Name"] in names]
    rows = [{k: r[k] for k in ("Name", "PCIDevice", "Driver", "Link", "Speed", "Duplex", "MACAddress", "MTU",
                               "Description")} for r in rows]
    return Out("table", "SriovNic", _fields("Name", "PCI Device", "Driver", "Link", "Speed", "Duplex",
                                            "MAC Address", "MTU", "Description"), rows)


def vf_pci(card: Card, port: int, vf: int) -> tuple[int, int, int]:
    """(bus, device, function) of a VF: PF0's VFs start at function 2, PF1's after PF0's TotalVFs."""
    total = card.config["NUM_OF_VFS"].current if "NUM_OF_VFS" in card.config else 0
    rid = 2 + (port - 1) * int(total or 0) + vf
    return int(card.pci_bus, 16), rid >> 3, rid & 7


def _vf_list(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    world = ctx.world
    nic = next((n for n in _sriov_nics(world, host) if n.name == opts["nic-name"]), None)
    if nic is None:
        return _err("Error: Unable to complete Sysinfo operation.  Please see the VMkernel log file for more "
                    "details.: Sysinfo error: Not foundSee VMkernel log for details.")
    card = host.cards[nic.card]
    owners = [vm for vm in sorted(world.vms.values(), key=lambda v: v.name)
              if vm.host == host.name and vm.powered_on and vm.vf_port == nic.port
              and nic.card == len(host.cards) - 1]
    rows = []
    for i in range(instantiated_vfs(world, host, nic)):
        bus, dev, fn = vf_pci(card, nic.port, i)
        owner = owners[i] if i < len(owners) else None
        rows.append({"VFID": i, "Active": owner is not None, "PCIAddress": f"00000:{bus:03d}:{dev:02d}.{fn}",
                     "OwnerWorldID": _world_id(owner.name) if owner else None})
    return Out("table", "SriovVf", _fields("VF ID", "Active", "PCI Address", "Owner World ID"), rows)


# ---------------------------------------------------------------------------- software vib


def _vib_id(v: Vib) -> str:
    return f"{v.vendor}_bootbank_{v.name}_{v.version}"


def _vib_list(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out:
    rows = []
    for v in sorted(host.vibs_installed.values(), key=lambda v: (v.vendor, v.name)):
        rows.append({"Name": v.name, "Version": v.version, "Vendor": v.vendor, "AcceptanceLevel": v.acceptance,
                     "InstallDate": v.install_date, "ID": _vib_id(v), "CreationDate": v.install_date,
                     "Status": ""})
    return Out("table", "VIB", _fields("Name", "Version", "Vendor", "Acceptance Level", "Install Date"), rows,
               extra=["ID", "CreationDate", "Status"])


_VIB_FILE_RE = re.compile(r"^(?P<vendor>[A-Za-z]+)_bootbank_(?P<name>[a-z0-9-]+)_(?P<version>[^/]+)\.vib$")
_KNOWN_VIBS = {v.name: v for v in (scenarios.MFT, scenarios.NMST, scenarios.NMLX5_ASYNC,
                                    scenarios.NMLX5_RDMA_ASYNC)}


def datastore(world: World) -> dict[str, str]:
    """The shared datastore's package files in this world (a copy of `datastore_files()` to start with):
    a test or a lab user may put other packages there, e.g. NVIDIA's offline-bundle .zip of MFT/NMST
    instead of the .vib files."""
    return world.__dict__.setdefault("lab_datastore", dict(datastore_files()))


def datastore_files() -> dict[str, str]:
    """The packages seed 000 keeps on the shared datastore (what the fixes install from)."""
    return {
        f"{VIB_DIR}/{_vib_id(scenarios.MFT)}.vib": "(VMware installation bundle: mft)\n",
        f"{VIB_DIR}/{_vib_id(scenarios.NMST)}.vib": "(VMware installation bundle: nmst)\n",
        f"{VIB_DIR}/{NMLX5_ZIP}": "(offline bundle: nmlx5-core, nmlx5-rdma 4.21.71.101)\n",
    }


def _vibs_in_file(path: str) -> list[Vib] | None:
    """The VIBs a package file holds, from its name (None: not a package the lab knows)."""
    base = path.rsplit("/", 1)[-1]
    m = _VIB_FILE_RE.match(base)
    if m and m["name"] in _KNOWN_VIBS:
        known = _KNOWN_VIBS[m["name"]]
        return [Vib(m["name"], m["version"], m["vendor"], known.acceptance)]
    for name in ("nmst", "mft"):  # NVIDIA's own file names: nmst-<version>.x86_64.vib, mft-...
        if base.endswith(".vib") and re.match(rf"^{name}[-_]", base, re.IGNORECASE):
            return [_KNOWN_VIBS[name]]
    if base.endswith(".zip") and "nmlx5" in base.lower():
        return [scenarios.NMLX5_ASYNC, scenarios.NMLX5_RDMA_ASYNC]
    # an offline bundle / component zip of the firmware tools (DOMAIN §7: NVIDIA ships them so too); the
    # real esxcli reads the bundle's index.xml, the lab goes by the name
    for name in ("nmst", "mft"):
        if base.endswith(".zip") and re.search(name, base, re.IGNORECASE):
            return [_KNOWN_VIBS[name]]
    return None


def _package_exists(ctx: Ctx, path: str) -> bool:
    if not path.startswith("/"):
        return False
    if path in ctx.files:  # the world's datastore (files() holds it)
        return True
    # another datastore folder holding a copy of a known package
    return path.startswith("/vmfs/volumes/") and "*" not in path and _vibs_in_file(path) is not None


def _install_result(title: str, message: str, reboot: bool, installed: list[str], removed: list[str],
                    skipped: list[str]) -> Out:
    row = {"Message": message, "RebootRequired": reboot, "VIBsInstalled": installed, "VIBsRemoved": removed,
           "VIBsSkipped": skipped}
    return Out("structs", "InstallationResult", _fields("Message", "Reboot Required")
               + [("VIBs Installed", "VIBsInstalled"), ("VIBs Removed", "VIBsRemoved"),
                  ("VIBs Skipped", "VIBsSkipped")], [row], title=title)


_REBOOT_MSG = "The update completed successfully, but the system needs to be rebooted for the changes to be effective."


def _vib_install(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    urls = opts.get("viburl") or []
    depots = opts.get("depot") or []
    if not urls and not depots:
        return _err("Error: At least one of -v|--viburl or -d|--depot must be given")
    wanted: list[Vib] = []
    for url in urls:
        path = url.removeprefix("file://")
        vibs = _vibs_in_file(path) if _package_exists(ctx, path) else None
        if vibs is None or not path.endswith(".vib"):
            return _err(f"[VibDownloadError]\n ('{url}', '', \"[Errno 2] No such file or directory: '{path}'\")\n"
                        f" url = {url}\n Please refer to the log file for more details.")
        wanted += vibs
    for depot in depots:
        path = depot.removeprefix("file://")
        vibs = _vibs_in_file(path) if _package_exists(ctx, path) else None
        if vibs is None or not path.endswith(".zip"):
            index = f"zip:{path}?index.xml"
            return _err(f"[MetadataDownloadError]\n Could not download from depot at {index}, skipping "
                        f"(('{index}', '', \"Error extracting index.xml from {path}: [Errno 2] No such file or "
                        f"directory: '{path}'\"))\n"
                        f"        url = {index}\n Please refer to the log file for more details.")
        names = opts.get("vibname") or []
        wanted += [v for v in vibs if not names or v.name in names]
    installed, removed, skipped = [], [], []
    changes: list[Vib] = []
    for vib in wanted:
        have = host.vibs_installed.get(vib.name)
        if have is not None and have.version == vib.version and have.vendor == vib.vendor:
            skipped.append(_vib_id(vib))
            continue
        installed.append(_vib_id(vib))
        if have is not None:
            removed.append(_vib_id(have))
        changes.append(vib)
    if opts.get("dry-run"):
        return _install_result("Installation Result", "Dryrun only, host not changed. The following installers will "
                               "be applied: [BootBankInstaller]", bool(changes), installed, removed, skipped)
    if not changes:
        return _install_result("Installation Result", "Host is not changed.", False, [], [], skipped)
    today = time.strftime("%Y-%m-%d")
    for vib in changes:
        host.vibs_installed[vib.name] = Vib(vib.name, vib.version, vib.vendor, vib.acceptance, today)
    return _install_result("Installation Result", _REBOOT_MSG, True, installed, removed, skipped)


def _vib_remove(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    removed = []
    for name in opts["vibname"]:
        vib = host.vibs_installed.get(name) or next(
            (v for v in host.vibs_installed.values() if _vib_id(v) == name), None)
        if vib is None:
            return _err(f"[NoMatchError]\n No VIB matching VIB search specification '{name}'.\n"
                        " Please refer to the log file for more details.")
        removed.append(vib)
    if opts.get("dry-run"):
        return _install_result("Removal Result", "Dryrun only, host not changed. The following installers will be "
                               "applied: [BootBankInstaller]", True, [], [_vib_id(v) for v in removed], [])
    for vib in removed:
        host.vibs_installed.pop(vib.name, None)
    return _install_result("Removal Result", _REBOOT_MSG, True, [], [_vib_id(v) for v in removed], [])


# ---------------------------------------------------------------------------- system module


NMLX5_CORE_PARAMS: list[tuple[str, str, str]] = [
    ("DRSS", "int", "Number of RSS queues to use for the default queue. Valid values: [0-16]"),
    ("DYN_RSS", "int", "Enable dynamic RSS. Values: 0 - disabled (default), 1 - enabled"),
    ("GEN_RSS", "int", "Requested max number of generic RSS engines. Values: 0 - disabled, 2 (default), 3 - max"),
    ("RSS", "int", "Number of RSS queues to use for the NetQ. Valid values: [0-16]"),
    # no default claimed: NVIDIA's 4.17.15.16 manual says 0 (Default), seed 000 says 4.21 enables it
    ("ecn", "int", "Enable the ECN support. Values: 0 - disabled, 1 - enabled"),
    ("enable_nmlx_debug", "int",
     "Enable debug prints for the core module. Values: 0 - disabled (default), 1 - enabled"),
    ("geneve_offload_enable", "int", "Enable GENEVE offloads. Values: 0 - disabled, 1 - enabled (default)"),
    ("max_vfs", "array of int",
     "Number of PCI VFs to initialize. Values: 0 - disabled (default), N - number of VFs per port"),
    ("mst_recovery", "int",
     "Enable recovery mode (only NMST module is loaded). Values: 0 - disabled (default), 1 - enabled"),
    ("pfcrx", "int", "Priority based Flow Control policy on RX. Values: 0-255 bitmask, 0x00 - disabled (default)"),
    ("pfctx", "int", "Priority based Flow Control policy on TX. Values: 0-255 bitmask, 0x00 - disabled (default)"),
    ("trust_state", "int",
     "Port policy to calculate the switch priority and packet color. Values: 1 - TRUST_PCP (default), 2 - TRUST_DSCP"),
]
NMLX5_RDMA_PARAMS: list[tuple[str, str, str]] = [
    ("dscp_force", "int", "Set DSCP value for all RoCE traffic. Values: 0-63, -1 - disabled (default)"),
    ("pcp_force", "int", "Set PCP value for all RoCE traffic. Values: 0-7, -1 - disabled (default)"),
]
MODULES = {"nmlx5_core": NMLX5_CORE_PARAMS, "nmlx5_rdma": NMLX5_RDMA_PARAMS}


def parse_options(text: str) -> dict[str, str]:
    """`pfctx=0x08 max_vfs=0,0,8,7` -> {"pfctx": "0x08", ...}; whitespace (newlines too) separates."""
    out: dict[str, str] = {}
    for tok in text.split():
        key, _, value = tok.partition("=")
        out[key] = value
    return out


def format_options(params: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" if v != "" else k for k, v in params.items())


def _module_values(host: EsxiHost, module: str) -> dict[str, str]:
    return host.module_params if module == "nmlx5_core" else {}


def _params_list(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    module = opts["module"]
    if module not in MODULES:
        return _err(f"Error: Unable to find module {module}")
    values = _module_values(host, module)
    rows = [{"Name": name, "Type": typ, "Value": values.get(name, ""), "Description": desc}
            for name, typ, desc in sorted(MODULES[module])]
    return Out("table", "ModuleParameter", _fields("Name", "Type", "Value", "Description"), rows)


def _params_set(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    module = opts["module"]
    if module not in MODULES:
        return _err(f"Error: Unable to find module {module}")
    new = parse_options(opts["parameter-string"])
    if not opts.get("force"):
        known = {name for name, _, _ in MODULES[module]}
        unknown = [k for k in new if k not in known]
        if unknown:
            return _err(f"Error: Invalid parameter name(s) for module {module}: {', '.join(unknown)}. "
                        "Use -f|--force to skip parameter name validation.")
    if module != "nmlx5_core":
        return Out("none")
    if opts.get("append"):
        merged = dict(host.module_params)
        merged.update(new)
        new = merged
    # esxcli stores the string as given: the WHOLE option string is replaced (DOMAIN §4)
    host.module_params = new
    return Out("none")


def _module_list(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out:
    active = {v.name for v in host.vibs_active.values()}
    names = ["i40en", "igbn", "nvme_pcie", "vmkusb"]
    names += ["nmlx5_core", "nmlx5_rdma"] if "nmlx5-core" in active else []
    names += ["nmst"] if "nmst" in active else []
    rows = [{"Name": n, "IsLoaded": True, "IsEnabled": True} for n in sorted(names)]
    return Out("table", "Module", _fields("Name", "Is Loaded", "Is Enabled"), rows)


# ---------------------------------------------------------------------------- system settings / stats / hardware


def _advanced_options(host: EsxiHost) -> dict[str, dict[str, Any]]:
    return {
        "/Power/CpuPolicy": {
            "Path": "/Power/CpuPolicy", "Type": "string", "IntValue": 0, "DefaultIntValue": 0, "MinValue": 0,
            "MaxValue": 0, "StringValue": host.power_policy, "DefaultStringValue": "Balanced", "ValidCharacters": "*",
            "Description": 'CPU power management policy: "High Performance", "Balanced", "Low Power", "Custom"',
            "HostSpecific": False, "Impact": "none"},
        "/UserVars/SuppressShellWarning": {
            "Path": "/UserVars/SuppressShellWarning", "Type": "integer", "IntValue": 0, "DefaultIntValue": 0,
            "MinValue": 0, "MaxValue": 1, "StringValue": "", "DefaultStringValue": "", "ValidCharacters": "",
            "Description": "Don't show warning for enabled local and remote shell access", "HostSpecific": False,
            "Impact": "none"},
    }


_ADV_FIELDS = _fields("Path", "Type", "Int Value", "Default Int Value", "Min Value", "Max Value", "String Value",
                      "Default String Value", "Valid Characters", "Description", "Host Specific", "Impact")


def _adv_list(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    options = _advanced_options(host)
    if "option" in opts:
        path = opts["option"]
        match = next((v for k, v in options.items() if k.lower() == path.lower()), None)
        if match is None:
            return _err(f"Error: Unable to find option {path.rsplit('/', 1)[-1]}")
        return Out("structs", "SettingsAdvancedOption", _ADV_FIELDS, [match])
    return Out("structs", "SettingsAdvancedOption", _ADV_FIELDS, list(options.values()))


def _adv_set(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    path = opts["option"]
    if path.lower() == "/power/cpupolicy":
        if opts.get("default"):
            host.power_policy = "Balanced"
            return Out("none")
        if "string-value" not in opts:
            return _err("Error: Invalid value for option /Power/CpuPolicy: a string value is required (-s)")
        value = next((p for p in CPU_POLICIES if p.lower() == opts["string-value"].strip().lower()), None)
        if value is None:
            return _err(f"Error: Invalid value for option /Power/CpuPolicy: '{opts['string-value']}'. "
                        f"Valid values: {', '.join(CPU_POLICIES)}")
        host.power_policy = value
        return Out("none")
    if path.lower() in (k.lower() for k in _advanced_options(host)):
        return Out("none")
    return _err(f"Error: Unable to find option {path.rsplit('/', 1)[-1]}")


def _uptime(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out:
    return Out("scalar", "Uptime", value=host.uptime_us())


def _hv_support(host: EsxiHost) -> int:
    if host.bios.get("ProcVirtualization") == "Disabled":
        return 2  # the CPU supports VT-x, the BIOS disabled it
    return host.hv_support


def _cpu_global(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out:
    row = {"CPUPackages": 2, "CPUCores": 36, "CPUThreads": 72, "HyperthreadingActive": True,
           "HyperthreadingSupported": True, "HyperthreadingEnabled": True, "HVSupport": _hv_support(host),
           "HVReplayCapable": False, "HVReplayDisabledReasons": "HV Replay is not supported on this CPU"}
    return Out("structs", "CPUGlobal", [("CPU Packages", "CPUPackages"), ("CPU Cores", "CPUCores"),
                                        ("CPU Threads", "CPUThreads"),
                                        ("Hyperthreading Active", "HyperthreadingActive"),
                                        ("Hyperthreading Supported", "HyperthreadingSupported"),
                                        ("Hyperthreading Enabled", "HyperthreadingEnabled"),
                                        ("HV Support", "HVSupport"), ("HV Replay Capable", "HVReplayCapable"),
                                        ("HV Replay Disabled Reasons", "HVReplayDisabledReasons")], [row])


def _version_get(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out:
    update = host.esxi_version.split(".")[2] if host.esxi_version.count(".") >= 2 else "0"
    row = {"Product": "VMware ESXi", "Version": host.esxi_version, "Build": f"Releasebuild-{host.esxi_build}",
           "Update": update, "Patch": "0"}
    return Out("structs", "VersionGet", _fields("Product", "Version", "Build", "Update", "Patch"), [row])


def _mm_get(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out:
    return Out("scalar", "MaintenanceMode", value="Enabled" if host.maintenance_mode else "Disabled")


def _powered_on_vms(world: World, host: EsxiHost) -> list[str]:
    return sorted(vm.name for vm in world.vms.values() if vm.host == host.name and vm.powered_on)


def _mm_set(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    enable = opts["enable"]
    if enable and not host.maintenance_mode:
        running = _powered_on_vms(ctx.world, host)
        if running:
            # a standalone host cannot evacuate VMs: they must be powered off or migrated first
            return _err("Error: A general system error occurred: Unable to enter maintenance mode: "
                        f"{len(running)} powered-on virtual machine(s) on this host ({', '.join(running)}). "
                        "Power them off or migrate them first.")
    host.maintenance_mode = enable
    return Out("none")


def _shutdown_reboot(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    if not host.maintenance_mode:
        return _err("Error: This operation is not allowed in the current state: the host is not in maintenance "
                    "mode (esxcli system maintenanceMode set --enable true).")
    return Reply(action="reboot")


def _shutdown_poweroff(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    if not host.maintenance_mode:
        return _err("Error: This operation is not allowed in the current state: the host is not in maintenance "
                    "mode (esxcli system maintenanceMode set --enable true).")
    return Reply(action="reboot")  # the lab powers the host back on: a cold boot


_N = Opt("n", "nic-name", required=True, help="The name of the NIC to configure.")
COMMANDS: list[Cmd] = [
    Cmd(("network", "nic", "list"), "Lists the Physical NICs currently installed and loaded on the system.", (),
        _nic_list),
    Cmd(("network", "nic", "pauseParams", "list"), "List pause parameters of all NICs", (), _pause_list),
    Cmd(("network", "nic", "pauseParams", "set"), "Set pause parameters for NIC",
        (Opt("a", "auto", "bool", help="Set pause autonegotiate"), _N,
         Opt("r", "rx", "bool", help="Set Pause RX"), Opt("t", "tx", "bool", help="Set Pause TX")), _pause_set),
    Cmd(("network", "nic", "dcb", "status", "get"), "Get the DCB status of a NIC.", (_N,), _dcb_status),
    Cmd(("network", "sriovnic", "list"), "List SRIOV enabled NICs.", (), _sriovnic_list),
    Cmd(("network", "sriovnic", "vf", "list"), "List the VFs of a SR-IOV NIC.",
        (Opt("n", "nic-name", required=True, help="The name of the SR-IOV NIC to list the VFs of."),), _vf_list),
    Cmd(("software", "vib", "list"), "Lists the installed VIB packages.",
        (Opt(None, "rebooting-image", "flag", help="Displays information for the ESXi image which becomes "
                                                   "active after a reboot."),), _vib_list),
    Cmd(("software", "vib", "install"), "Installs VIB packages from a URL or depot.",
        (Opt("d", "depot", multi=True, help="Specifies full remote URLs of the depot index.xml or server file path "
                                            "pointing to an offline bundle .zip file."),
         Opt(None, "dry-run", "flag", help="Performs a dry-run only."),
         Opt("f", "force", "flag", help="Bypasses checks for package dependencies, conflicts, obsolescence, and "
                                        "acceptance levels."),
         Opt(None, "maintenance-mode", "flag", help="Pretends that maintenance mode is in effect."),
         Opt(None, "no-sig-check", "flag", help="Bypasses signing verification."),
         Opt(None, "no-live-install", "flag", help="Forces an install to /altbootbank even if the VIBs are eligible "
                                                   "for live installation."),
         Opt("n", "vibname", multi=True, help="Specifies VIBs from a depot, using one of the following forms: name, "
                                              "name:version, vendor:name, or vendor:name:version."),
         Opt("v", "viburl", multi=True, help="Specifies one or more URLs to VIB packages to install.")),
        _vib_install),
    Cmd(("software", "vib", "remove"), "Removes VIB packages from the host.",
        (Opt(None, "dry-run", "flag", help="Performs a dry-run only."),
         Opt("f", "force", "flag", help="Bypasses checks for package dependencies, conflicts, obsolescence, and "
                                        "acceptance levels."),
         Opt(None, "maintenance-mode", "flag", help="Pretends that maintenance mode is in effect."),
         Opt("n", "vibname", required=True, multi=True, help="Specifies one or more VIBs on the host to remove.")),
        _vib_remove),
    Cmd(("system", "module", "list"), "List the VMkernel modules that the system knows about.",
        (Opt("e", "enabled", "bool", help="List only enabled modules."),
         Opt("l", "loaded", "bool", help="List only loaded modules.")), _module_list),
    Cmd(("system", "module", "parameters", "list"), "List the parameters supported by a module.",
        (Opt("m", "module", required=True, help="The name of the module to list parameters for."),),
        _params_list),
    Cmd(("system", "module", "parameters", "set"), "Set the load time parameters for the given module.",
        (Opt("a", "append", "flag", help="Append the specified parameter string to the current parameter string."),
         Opt("f", "force", "flag", help="Skip module validation for the given parameter string."),
         Opt("m", "module", required=True, help="The name of the module to set parameters for."),
         Opt("p", "parameter-string", required=True,
             help="The string containing the parameters for this module.")), _params_set),
    Cmd(("system", "settings", "advanced", "list"), "List the advanced options available from the VMkernel.",
        (Opt("d", "delta", "flag", help="Only display options whose values differ from their default."),
         Opt("o", "option", help="Only get the information for a single VMkernel advanced option."),
         Opt("t", "tree", help="Limit the list of advanced option to a specific sub tree.")), _adv_list),
    Cmd(("system", "settings", "advanced", "set"), "Set the value of an advanced option.",
        (Opt("d", "default", "flag", help="Reset the option to its default value."),
         Opt("i", "int-value", "long", help="If the option is an integer value use this option."),
         Opt("o", "option", required=True, help="The name of the option to set the value of."),
         Opt("s", "string-value", help="If the option is a string use this option.")), _adv_set),
    Cmd(("system", "stats", "uptime", "get"), "Display the number of microseconds the system has been running.",
        (), _uptime),
    Cmd(("system", "version", "get"), "Display the product name, version and build information.", (),
        _version_get),
    Cmd(("system", "maintenanceMode", "get"), "Get the maintenance mode state of the system.", (), _mm_get),
    Cmd(("system", "maintenanceMode", "set"), "Enable or disable the maintenance mode of the system.",
        (Opt("e", "enable", "bool", required=True, help="Maintenance mode state."),
         Opt("t", "timeout", "long", help="Time to perform operation in seconds."),
         Opt("m", "vsanmode", help="Action the VSAN service must take before the host can enter maintenance mode.")),
        _mm_set),
    Cmd(("system", "shutdown", "reboot"), "Reboot the system. The system must be in maintenance mode.",
        (Opt("d", "delay", "long", help="Delay interval in seconds."),
         Opt("r", "reason", required=True, help="Reason for performing the operation.")), _shutdown_reboot),
    Cmd(("system", "shutdown", "poweroff"), "Power off the system. The host must be in maintenance mode.",
        (Opt("d", "delay", "long", help="Delay interval in seconds."),
         Opt("r", "reason", required=True, help="Reason for performing the operation.")), _shutdown_poweroff),
    Cmd(("hardware", "cpu", "global", "get"), "Get properties that are global to all CPUs.", (), _cpu_global),
]
_BY_PATH = {tuple(p.lower() for p in c.path): c for c in COMMANDS}
_NAMESPACE_HELP = {
    "network": "Operations that pertain to the maintenance of networking on an ESX host.",
    "nic": "Operations having to do with the configuration of Network Interface Card and getting and updating "
           "the NIC settings.",
    "pauseParams": "Operations having to do with the configuration of Network Interface Card pause parameters.",
    "dcb": "Operations having to do with Data Center Bridging (DCB) of a NIC.",
    "status": "The DCB status of a NIC.",
    "sriovnic": "Operations having to do with the configuration of SRIOV enabled Network Interface Card.",
    "vf": "Operations having to do with the configuration of SRIOV Virtual Functions.",
    "software": "Manage the ESXi software image and packages",
    "vib": "Install, update, remove, or display individual VIB packages",
    "system": "Operations for configuring the VMkernel and system settings.",
    "module": "Operations that allow the user to manipulate VMkernel modules.",
    "parameters": "Operations that allow the user to manipulate VMkernel module parameters.",
    "settings": "Operations for configuring VMkernel settings.",
    "advanced": "The advanced settings are a set of VMkernel options that can be configured by the user.",
    "stats": "Operations for getting system statistics.",
    "uptime": "System uptime.",
    "version": "Commands to get version information.",
    "maintenanceMode": "System wide maintenance mode operations.",
    "shutdown": "Perform operations which put the system into shutdown.",
    "hardware": "VMKernel hardware properties and commands for configuring hardware.",
    "cpu": "Information and operations on the system CPUs.",
    "global": "Information and operations global to all CPUs.",
}


def _children(prefix: tuple[str, ...]) -> tuple[dict[str, str], dict[str, Cmd]]:
    """(namespaces, commands) directly under a namespace path (lower-case keys -> display name)."""
    spaces: dict[str, str] = {}
    cmds: dict[str, Cmd] = {}
    n = len(prefix)
    for cmd in COMMANDS:
        low = tuple(p.lower() for p in cmd.path)
        if low[:n] != prefix or len(low) <= n:
            continue
        if len(low) == n + 1:
            cmds[low[n]] = cmd
        else:
            spaces[low[n]] = cmd.path[n]
    return spaces, cmds


def _namespace_usage(prefix: tuple[str, ...], display: list[str]) -> str:
    spaces, cmds = _children(prefix)
    path = " ".join(display)
    lines = [f"Usage: esxcli {path + ' ' if path else ''}{{cmd}} [cmd options]", ""]
    if spaces:
        lines.append("Available Namespaces:")
        for name in sorted(spaces.values(), key=str.lower):
            lines.append(f"  {name:<22}{_NAMESPACE_HELP.get(name, '')}")
        lines.append("")
    if cmds:
        lines.append("Available Commands:")
        for low in sorted(cmds):
            lines.append(f"  {cmds[low].path[-1]:<22}{cmds[low].help}")
        lines.append("")
    return "\n".join(lines)


def esxcli(ctx: Ctx, argv: list[str]) -> Reply:
    args = list(argv[1:])
    formatter: str | None = None
    while args and args[0].startswith("--"):
        tok = args.pop(0)
        name, eq, value = tok[2:].partition("=")
        if name == "formatter":
            if not eq:
                if not args:
                    return _err("Error: Missing value for option --formatter")
                value = args.pop(0)
            if value not in ("csv", "keyvalue", "xml", "table", "simple", "tree", "python", "json", "html"):
                return _err(f"Error: Invalid formatter '{value}'. Valid formatters: csv, keyvalue, xml")
            formatter = None if value in ("table", "simple", "tree") else value
            if formatter in ("python", "json", "html"):
                formatter = "xml" if formatter == "html" else formatter
        elif name == "debug":
            continue
        elif name == "version":
            return _ok("Script 'esxcli' version: 1.0\n")
        else:
            return _err(f"Error: Invalid option --{name}\n\n" + _namespace_usage((), []))
    if formatter in ("python", "json"):
        formatter = "keyvalue"
    prefix: tuple[str, ...] = ()
    display: list[str] = []
    cmd: Cmd | None = None
    while args and not args[0].startswith("-"):
        word = args[0]
        spaces, cmds = _children(prefix)
        low = word.lower()
        if low in cmds:
            cmd = cmds[low]
            args.pop(0)
            display.append(cmd.path[-1])
            break
        if low in spaces:
            prefix = (*prefix, low)
            display.append(spaces[low])
            args.pop(0)
            continue
        return _err(f"Error: Unknown command or namespace {' '.join([*display, word])}")
    if cmd is None:
        usage = _namespace_usage(prefix, display)
        if args:  # options after a namespace
            return _err(f"Error: Invalid option {args[0]}\n\n" + usage)
        return _ok(usage)
    if any(a in ("-h", "--help") for a in args):
        return _ok(_cmd_usage(cmd))
    try:
        opts = _parse_opts(cmd, args)
    except _UsageError as exc:
        return _err(f"{exc}\n\n{_cmd_usage(cmd)}")
    host = _host(ctx)
    result = cmd.run(ctx, host, opts)
    if isinstance(result, Reply):
        return result
    return _ok(_render(result, formatter))


# ==================================================================================== esxcfg-*, vim-cmd, misc


def esxcfg_module(ctx: Ctx, argv: list[str]) -> Reply:
    host = _host(ctx)
    args = argv[1:]
    usage = ("esxcfg-module <options> <module>\n"
             "   -g|--get-options     Get the options for a given module and whether it is loaded on boot.\n"
             "   -s|--set-options     Set the options for a given module. Will be used on next boot.\n"
             "   -l|--list            List the modules loaded.\n"
             "   -h|--help            Show this message.\n")
    if not args or args[0] in ("-h", "--help"):
        return _ok(usage)
    if args[0] in ("-g", "--get-options") and len(args) == 2:
        module = args[1]
        if module not in MODULES:
            return _err(f"Unable to get options for module {module}: Not found")
        options = format_options(_module_values(host, module))
        return _ok(f"{module} enabled = 1 options = '{options}'\n")
    if args[0] in ("-s", "--set-options") and len(args) == 3:
        module = args[2]
        if module not in MODULES:
            return _err(f"Unable to set options for module {module}: Not found")
        if module == "nmlx5_core":
            host.module_params = parse_options(args[1])
        return _ok()
    if args[0] in ("-l", "--list") and len(args) == 1:
        active = {v.name for v in host.vibs_active.values()}
        names = ["i40en", "igbn", "vmkusb"] + (["nmlx5_core", "nmlx5_rdma"] if "nmlx5-core" in active else [])
        names += ["nmst"] if "nmst" in active else []
        lines = ["Name                     Used Size (kb)"] + [f"{n:<25}{2:<5}{128}" for n in sorted(names)]
        return _ok("\n".join(lines) + "\n")
    return _err("Invalid usage.\n" + usage)


def esxcfg_nics(ctx: Ctx, argv: list[str]) -> Reply:
    if argv[1:] != ["-l"] and argv[1:] != ["--list"]:
        return _err("esxcfg-nics <options> [nic]\n   -l|--list          Print the list of NICs and their settings.\n")
    host = _host(ctx)
    lines = ["Name    PCI          Driver      Link Speed      Duplex MAC Address       MTU    Description"]
    for r in _nic_rows(ctx.world, host):
        lines.append(f"{r['Name']:<8}{r['PCIDevice']:<13}{r['Driver']:<12}{r['LinkStatus']:<5}"
                     f"{str(r['Speed']) + 'Mbps':<11}{r['Duplex']:<7}{r['MACAddress']:<18}{r['MTU']:<7}"
                     f"{r['Description']}")
    return _ok("\n".join(lines) + "\n")


def _host_summary(world: World, host: EsxiHost) -> str:
    uid = host.system_uuid
    up_s = int(host.uptime_us() / 1_000_000)
    rr = "true" if host.reboot_required() else "false"
    mm = "true" if host.maintenance_mode else "false"
    return f"""(vim.host.Summary) {{
   host = 'vim.HostSystem:ha-host',
   hardware = (vim.host.Summary.HardwareSummary) {{
      vendor = "Dell Inc.",
      model = "PowerEdge R740",
      uuid = "{uid}",
      otherIdentifyingInfo = (vim.host.SystemIdentificationInfo) [
         (vim.host.SystemIdentificationInfo) {{
            identifierValue = "LAB{zlib.crc32(host.system_uuid.encode()) % 10**7:07d}",
            identifierType = (vim.ElementDescription) {{
               label = "Service tag",
               summary = "Service tag of the system",
               key = "ServiceTag"
            }}
         }}
      ],
      memorySize = 412202483712,
      cpuModel = "Intel(R) Xeon(R) Gold 6240 CPU @ 2.60GHz",
      cpuMhz = 2594,
      numCpuPkgs = 2,
      numCpuCores = 36,
      numCpuThreads = 72,
      numNics = {len(host.vmnics)},
      numHBAs = 4
   }},
   runtime = (vim.host.RuntimeInfo) {{
      connectionState = "connected",
      powerState = "poweredOn",
      standbyMode = <unset>,
      inMaintenanceMode = {mm},
      inQuarantineMode = <unset>,
      bootTime = "{_iso(host.boot_time)}",
      healthSystemRuntime = (vim.host.HealthStatusSystem.Runtime) null,
   }},
   rebootRequired = {rr},
   quickStats = (vim.host.Summary.QuickStats) {{
      overallCpuUsage = 1432,
      overallMemoryUsage = 52012,
      uptime = {up_s}
   }},
   overallStatus = "green",
   config = (vim.host.Summary.ConfigSummary) {{
      name = "{host.name}",
      port = 443,
      product = (vim.AboutInfo) {{
         name = "VMware ESXi",
         fullName = "VMware ESXi {host.esxi_version} build-{host.esxi_build}",
         vendor = "VMware, Inc.",
         version = "{host.esxi_version}",
         build = "{host.esxi_build}"
      }}
   }}
}}
"""


_INVALID_STATE = """(vim.fault.InvalidState) {
   faultCause = (vmodl.MethodFault) null,
   faultMessage = <unset>
   msg = "The operation is not allowed in the current state."
}
"""


def vim_cmd(ctx: Ctx, argv: list[str]) -> Reply:
    host = _host(ctx)
    if len(argv) < 2:
        return _ok("Commands available under /:\nhbrsvc/       internalsvc/  solo/         vmsvc/\n"
                   "hostsvc/      proxysvc/     vimsvc/       help\n")
    command = argv[1].strip("/")
    if command == "hostsvc/hostsummary":
        return _ok(_host_summary(ctx.world, host))
    if command == "hostsvc/maintenance_mode_enter":
        if host.maintenance_mode:
            return _err(_INVALID_STATE)
        running = _powered_on_vms(ctx.world, host)
        if running:
            return _err(_INVALID_STATE)
        host.maintenance_mode = True
        return _ok()
    if command == "hostsvc/maintenance_mode_exit":
        if not host.maintenance_mode:
            return _err(_INVALID_STATE)
        host.maintenance_mode = False
        return _ok()
    if command in ("hostsvc", "vmsvc", "vimsvc", "solo", "proxysvc", "internalsvc", "hbrsvc"):
        return _ok(f"Commands available under {command}/:\n")
    return _err(f"Unknown command: '{argv[1]}'")


def reboot(ctx: Ctx, argv: list[str]) -> Reply:
    if any(a not in ("-f", "-n", "-d") and not a.isdigit() for a in argv[1:]):
        return _err(f"reboot: invalid option -- '{argv[1].lstrip('-')}'\nUsage: reboot [-d DELAY] [-n] [-f]")
    return Reply(action="reboot")


def uname(ctx: Ctx, argv: list[str]) -> Reply:
    host = _host(ctx)
    parts = {"s": "VMkernel", "n": host.name, "r": host.esxi_version,
             "v": f"#1 SMP Release build-{host.esxi_build} Mar 11 2021 20:41:48", "m": "x86_64", "p": "x86_64",
             "i": "x86_64", "o": "ESXi"}
    flags = "".join(a.lstrip("-") for a in argv[1:]) or "s"
    if "a" in flags:
        flags = "snrvmpio"
    unknown = [f for f in flags if f not in parts]
    if unknown:
        return _err(f"uname: invalid option -- '{unknown[0]}'\nUsage: uname [-amnrspvio]")
    return _ok(" ".join(parts[f] for f in "snrvmpio" if f in flags) + "\n")


def vmware(ctx: Ctx, argv: list[str]) -> Reply:
    host = _host(ctx)
    flags = "".join(a.lstrip("-") for a in argv[1:])
    version = f"VMware ESXi {host.esxi_version} build-{host.esxi_build}"
    major = ".".join(host.esxi_version.split(".")[:2])
    upd = host.esxi_version.split(".")[2] if host.esxi_version.count(".") >= 2 else "0"
    level = f"VMware ESXi {major} Update {upd}" if upd != "0" else f"VMware ESXi {major} GA"
    if not flags or set(flags) - {"v", "l"}:
        return _err("Usage: vmware [-v|--version] [-l|--level]")
    lines = ([version] if "v" in flags else []) + ([level] if "l" in flags else [])
    return _ok("\n".join(lines) + "\n")


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


# ---------------------------------------------------------------------------- mlxconfig

# value codes of enum parameters (what mlxconfig prints in parentheses), by name without _P<n>
_ENUM_CODES: dict[str, dict[str, int]] = {
    "LINK_TYPE": {"IB": 1, "ETH": 2, "VPI": 3},
    "HOST_CHAINING_MODE": {"DISABLED": 0, "STORE_AND_FORWARD": 1, "LOCAL_BASIC_HOST_CHAINING": 2},
    "INT_LOG_MAX_PAYLOAD_SIZE": {"AUTOMATIC": 0, "_4KB": 12},
    "PCI_ATOMIC_MODE": {"PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED": 0, "PCI_ATOMIC_ENABLED_EXT_ATOMIC_DISABLED": 1},
    "SRIOV_IB_ROUTING_MODE": {"GID": 0, "LID": 1},
}
MLX_OK, MLX_ABORTED, MLX_ERROR = 0, 2, 3


def _enum_codes(name: str) -> dict[str, int] | None:
    return _ENUM_CODES.get(re.sub(r"_P\d$", "", name))


def mlx_render(name: str, value: Any) -> str:
    """A normalised value as mlxconfig prints it: True(1), ETH(2), 16."""
    if isinstance(value, bool):
        return "True(1)" if value else "False(0)"
    if isinstance(value, int):
        return str(value)
    shown = MLX_ENUMS.get(name, {}).get(value)
    if shown:
        return shown
    codes = _enum_codes(name)
    if codes and value in codes:
        return f"{value}({codes[value]})"
    return str(value)


def _mlx_parse_value(name: str, param: MlxParam, text: str) -> Any:
    """A `set` value (number or name) normalised like the world keeps it; ValueError when invalid."""
    t = text.strip()
    if isinstance(param.default, bool):
        b = _bool_word(t)
        if b is None or t.lower() in ("yes", "no", "on", "off"):
            raise ValueError(t)
        return b
    if isinstance(param.default, int):
        try:
            value = int(t, 0)
        except ValueError:
            raise ValueError(t) from None
        if value < 0:
            raise ValueError(t)
        return value
    codes = _enum_codes(name) or {}
    for word, code in codes.items():
        if t.upper() == word or (t.isdigit() and int(t) == code):
            return word
    raise ValueError(t)


def _mlx_usage() -> str:
    return ("\n        NAME:\n                mlxconfig\n\n        SYNOPSIS:\n"
            "                mlxconfig [Options] <Commands> [Parameters]\n\n"
            "        COMMANDS SUMMARY\n"
            "                q|query                  : query supported configurations.\n"
            "                r|reset                  : reset all configurations to their default value.\n"
            "                s|set                    : set configurations to a specific device.\n\n")


def _mlx_opening(card: Card, dev: str, index: int = 1) -> str:
    return (f"\nDevice #{index}:\n----------\n\n"
            f"{'Device type:':<16}{card.model:<16}\n{'Name:':<16}{card.part_number:<16}\n"
            f"{'Description:':<16}{card.description:<16}\n{'Device:':<16}{dev:<16}\n\n")


def _mlx_header(verbose: bool, new: bool) -> str:
    if verbose:
        line = f"{'Configurations:':<16}{'Default':>36}{'Current':>16}{'Next Boot':>18}"
    else:
        line = f"{'Configurations:':<16}{'Next Boot':>38}"
    if new:
        line += "       New"
    return line + "\n"


def _mlx_row(name: str, values: list[str], star: bool) -> str:
    out = ("*" if star else " ") + f"        {name:<36}"
    width = 0
    for i, v in enumerate(values):
        if i and width > 16:
            out += " "
        cell = f"{v:<16}"
        width = len(cell)
        out += cell
    return out + "\n"


def _mlx_query_text(card: Card, dev: str, names: list[str], verbose: bool, index: int = 1) -> tuple[str, int]:
    text = _mlx_opening(card, dev, index) + _mlx_header(verbose, False)
    for n in names:
        if n not in card.config:
            return text + f"-E- The Device doesn't support {n} parameter\n", MLX_ERROR
    starred = False
    for name in names or list(card.config):
        p = card.config[name]
        if verbose:
            star = p.next_boot != p.default or p.next_boot != p.current
            starred |= star
            text += _mlx_row(name, [mlx_render(name, p.default), mlx_render(name, p.current),
                                    mlx_render(name, p.next_boot)], star)
        else:
            text += _mlx_row(name, [mlx_render(name, p.next_boot)], False)
    if starred:
        text += "The '*' shows parameters with next value different from default/current value.\n"
    return text, MLX_OK


def _first_line(stdin: str) -> str:
    return stdin.splitlines()[0].strip() if stdin.strip() else ""


def mlxconfig(ctx: Ctx, argv: list[str]) -> Reply:
    host = _host(ctx)
    args = argv[1:]
    dev: str | None = None
    yes = verbose = False
    command: str | None = None
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "--dev"):
            if i + 1 >= len(args):
                return Reply(stdout="-E- missing device name\n" + _mlx_usage(), exit=MLX_ERROR)
            dev = args[i + 1]
            i += 2
            continue
        if a in ("-y", "--yes"):
            yes = True
        elif a in ("-e", "--enable_verbosity"):
            verbose = True
        elif a in ("--force", "-a", "--all_attrs"):
            pass
        elif a in ("-h", "--help"):
            return _ok(_mlx_usage())
        elif a in ("-v", "--version"):
            return _ok("mlxconfig, mft 4.18.1-14, built on Oct 18 2021, 16:08:32. Git SHA Hash: N/A\n")
        elif a in ("q", "query", "s", "set", "r", "reset"):
            command = {"q": "query", "s": "set", "r": "reset"}.get(a, a)
            i += 1
            break
        else:
            return Reply(stdout=f"-E- invalid argument: {a}\n" + _mlx_usage(), exit=MLX_ERROR)
        i += 1
    rest = args[i:]
    if command is None:
        return Reply(stdout="-E- No command found. For more information please read the help message:\n"
                     + _mlx_usage(), exit=MLX_ERROR)
    if command == "set" and not rest:
        return Reply(stdout="-E- missing configuration arguments. For more information please run mlxconfig "
                     "-h|--help.\n" + _mlx_usage(), exit=MLX_ERROR)
    if command == "reset" and rest:
        return Reply(stdout=f"-E- reset command expects no argument but {len(rest)} argument received\n"
                     + _mlx_usage(), exit=MLX_ERROR)
    if command in ("set", "reset") and dev is None:
        return Reply(stdout=f"-E- {command} command expects device to be specified.\n" + _mlx_usage(),
                     exit=MLX_ERROR)
    if command == "query":
        names = [r.upper() for r in rest]
        if dev is None:
            if not host.mst_started:
                return Reply(stdout="-E- No devices found, mst might be stopped. You may need to run 'mst start' "
                             "to load MST modules.\n", exit=MLX_ERROR)
            text, rc = "", MLX_OK
            cards = [(c, m) for c, p, m in _mst_functions(host) if p == 1]
            for index, (card, mst_name) in enumerate(cards, 1):
                part, code = _mlx_query_text(card, mst_name, names, verbose, index)
                text, rc = text + part, max(rc, code)
            return Reply(stdout=text, exit=rc)
        found = _resolve_device(host, dev) if host.mst_started else None
        if found is None:
            return Reply(stdout="-E- Failed to open the device\n", exit=MLX_ERROR)
        text, rc = _mlx_query_text(found[0], dev, names, verbose)
        return Reply(stdout=text, exit=rc)
    # set / reset
    assert dev is not None
    found = _resolve_device(host, dev) if host.mst_started else None
    if found is None:
        return Reply(stdout="-E- Failed to open the device\n", exit=MLX_ERROR)
    card = found[0]
    if command == "reset":
        text = f"Reset configuration for device {dev}? (y/n) [n] : "
        if not yes and _first_line(ctx.stdin).lower() not in ("y", "yes"):
            return Reply(stdout=text + "-E- Aborted by user.\n", exit=MLX_ABORTED)
        text += "y\n" if yes else ""
        for p in card.config.values():
            p.next_boot = p.default
        return _ok(text + "Applying... Done!\n-I- Please reboot machine to load new configurations.\n")
    wanted: dict[str, str] = {}
    for arg in rest:
        name, eq, value = arg.partition("=")
        if not eq or not name or not value:
            return Reply(stdout=f"-E- Invalid Configuration argument {arg}\n" + _mlx_usage(), exit=MLX_ERROR)
        if name.upper() in wanted:
            return Reply(stdout=f"-E- Duplicate parameter, {name.upper()}.\n" + _mlx_usage(), exit=MLX_ERROR)
        wanted[name.upper()] = value
    text = _mlx_opening(card, dev) + _mlx_header(verbose, True)
    new_values: dict[str, Any] = {}
    for name, value in wanted.items():
        if name not in card.config:
            return Reply(stdout=text + f"-E- The Device doesn't support {name} parameter\n", exit=MLX_ERROR)
        try:
            new_values[name] = _mlx_parse_value(name, card.config[name], value)
        except ValueError:
            return Reply(stdout=text + f"-E- Cannot set the value {value} for the parameter {name}: Unknown value "
                         f"{value}\n", exit=MLX_ERROR)
    for name, value in new_values.items():
        p = card.config[name]
        cols = ([mlx_render(name, p.default), mlx_render(name, p.current)] if verbose else [])
        text += _mlx_row(name, [*cols, mlx_render(name, p.next_boot), mlx_render(name, value)], False)
    text += "\n Apply new Configuration? (y/n) [n] : "
    if yes:
        text += "y\n"
    elif _first_line(ctx.stdin).lower() not in ("y", "yes"):
        return Reply(stdout=text + "-E- Aborted by user.\n", exit=MLX_ABORTED)
    for name, value in new_values.items():
        card.config[name].next_boot = value
    return _ok(text + "Applying... Done!\n-I- Please reboot machine to load new configurations.\n")


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
            if not _first_line(ctx.stdin).lower().startswith("y"):
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


# ==================================================================================== the tables


_BASE_PROGRAMS: dict[str, Program] = {
    "esxcli": esxcli,
    "vim-cmd": vim_cmd,
    "esxcfg-module": esxcfg_module,
    "esxcfg-nics": esxcfg_nics,
    "reboot": reboot,
    "uname": uname,
    "vmware": vmware,
}
_PATHS = {"esxcli": "/bin/esxcli", "vim-cmd": "/bin/vim-cmd", "esxcfg-module": "/sbin/esxcfg-module",
          "esxcfg-nics": "/sbin/esxcfg-nics", "reboot": "/bin/reboot", "uname": "/bin/uname",
          "vmware": "/bin/vmware"}
_MFT_PROGRAMS: dict[str, Program] = {"mst": mst, "mlxconfig": mlxconfig, "mlxfwmanager": mlxfwmanager,
                                     "flint": flint}


def programs(world: World, host_name: str) -> dict[str, Program]:
    """The programs installed on this host right now, by bare name and by full path."""
    host = world.hosts[host_name]
    table: dict[str, Program] = {}
    for name, prog in _BASE_PROGRAMS.items():
        table[name] = prog
        table[_PATHS[name]] = prog
    if host.has_tools():
        for name, prog in _MFT_PROGRAMS.items():
            table[name] = prog  # seed 000 appends /opt/mellanox/bin to PATH in /etc/profile.local
            table[f"{MLX_BIN}/{name}"] = prog
    return table


def files(world: World, host_name: str) -> dict[str, str]:
    """Virtual files: the packages on the shared datastore, and a small esx.conf excerpt."""
    host = world.hosts[host_name]
    out = dict(datastore(world))
    conf = [f'/adv/Misc/HostName = "{host.name}"',
            f'/adv/Power/CpuPolicy = "{host.power_policy}"']
    if host.module_params:
        conf.append(f'/vmkernel/module/nmlx5_core/options = "{format_options(host.module_params)}"')
    out["/etc/vmware/esx.conf"] = "\n".join(conf) + "\n"
    out["/etc/profile.local"] = "# profile.local\n"
    return out


# ==================================================================================== faults


def _roce(world: World, host_name: str) -> tuple[EsxiHost, Card]:
    host = world.hosts[host_name]
    return host, host.roce_card


def _set_param(card: Card, name: str, value: Any, *, current: bool = True) -> None:
    p = card.config[name]
    p.next_boot = value
    if current:
        p.current = value


def _fault_rw201(world: World, host_name: str) -> None:
    host = world.hosts[host_name]
    for name in ("mft", "nmst"):
        host.vibs_installed.pop(name, None)
        host.vibs_active.pop(name, None)


def _fault_rw202(world: World, host_name: str) -> None:
    world.hosts[host_name].mst_started = False


def _fault_rw203(world: World, host_name: str) -> None:
    _, card = _roce(world, host_name)
    card.fw_version, card.pxe_version, card.uefi_version = "16.26.4012", "3.5.0805", "14.19.0017"
    card.fw_available = "16.32.1010"


def _fault_rw204(world: World, host_name: str) -> None:
    host = world.hosts[host_name]
    for vib in (scenarios.NMLX5_INBOX, scenarios.NMLX5_RDMA_INBOX):
        host.vibs_installed[vib.name] = Vib(vib.name, vib.version, vib.vendor, vib.acceptance, vib.install_date)
        host.vibs_active[vib.name] = Vib(vib.name, vib.version, vib.vendor, vib.acceptance, vib.install_date)


def _fault_rw205(world: World, host_name: str) -> None:
    _, card = _roce(world, host_name)
    _set_param(card, "LINK_TYPE_P2", "IB")


def _fault_rw206(world: World, host_name: str) -> None:
    _, card = _roce(world, host_name)
    _set_param(card, "SRIOV_EN", False)


def _fault_rw207(world: World, host_name: str) -> None:
    _, card = _roce(world, host_name)
    _set_param(card, "ADVANCED_PCI_SETTINGS", True)


def _fault_rw208(world: World, host_name: str) -> None:
    _, card = _roce(world, host_name)
    _set_param(card, "NUM_OF_VFS", 15)  # max_vfs 0,0,8,7 asks for 15 on this card: none left for the PF


def _drop_params(world: World, host_name: str, *names: str) -> None:
    host = world.hosts[host_name]
    for params in (host.module_params, host.module_params_active):
        for name in names:
            params.pop(name, None)


def _fault_rw209(world: World, host_name: str) -> None:
    _drop_params(world, host_name, "pfctx", "pfcrx")


def _fault_rw210(world: World, host_name: str) -> None:
    _drop_params(world, host_name, "trust_state")


def _fault_rw211(world: World, host_name: str) -> None:
    host = world.hosts[host_name]
    host.module_params["ecn"] = host.module_params_active["ecn"] = "0"


def _fault_rw216(world: World, host_name: str) -> None:
    host = world.hosts[host_name]
    nic = next(n for n in host.vmnics if n.card == len(host.cards) - 1 and n.port == 1)
    nic.dcb_peer_pfc = 0x10  # the port's DCBX took a willing peer's map: PFC runs on priority 4, not pfctx's 3


def _fault_rw213(world: World, host_name: str) -> None:
    world.hosts[host_name].power_policy = "Balanced"


def _fault_rw214(world: World, host_name: str) -> None:
    _, card = _roce(world, host_name)
    _set_param(card, "NUM_VF_MSIX", 19, current=False)  # staged, never rebooted; no other check reads it


def _fault_rw215(world: World, host_name: str) -> None:
    world.hosts[host_name].bios["MmioAbove4Gb"] = "Disabled"


FAULTS: dict[str, Fault] = {
    f.code: f
    for f in (
        Fault("RW201", "esxi", "the MFT and NMST VIBs are not installed (no /opt/mellanox/bin tools)", _fault_rw201),
        Fault("RW202", "esxi", "mst was not started since the last boot: no mst device for the adapters",
              _fault_rw202),
        Fault("RW203", "esxi", "the RoCE card runs firmware 16.26.4012, older than the driver's 16.29.1016; "
              "16.32.1010 is available online", _fault_rw203),
        Fault("RW204", "esxi", "the inbox VMware nmlx5-core 4.19.16.10 driver instead of the async 4.21.71.101",
              _fault_rw204),
        Fault("RW205", "esxi", "port 2 of the RoCE card runs InfiniBand (LINK_TYPE_P2=IB current and next boot)",
              _fault_rw205),
        Fault("RW206", "esxi", "SRIOV_EN is False in the RoCE card's firmware (current and next boot)",
              _fault_rw206),
        Fault("RW207", "esxi", "ADVANCED_PCI_SETTINGS is True on the RoCE card", _fault_rw207),
        Fault("RW208", "esxi", "NUM_OF_VFS is 15 while max_vfs asks for 8+7 on the card: no VFs are created",
              _fault_rw208),
        Fault("RW209", "esxi", "nmlx5_core has no pfctx/pfcrx: PFC is off", _fault_rw209),
        Fault("RW210", "esxi", "nmlx5_core has no trust_state: the port trusts PCP, not DSCP", _fault_rw210),
        Fault("RW211", "esxi", "nmlx5_core runs with ecn=0", _fault_rw211),
        # no RW212 fault: on nmlx5 global pause is in effect only while PFC is not operational, which is
        # RW209's (not configured), RW214's (not loaded yet) or RW216's (negotiated away) fault, never alone
        Fault("RW213", "esxi", "the CPU power policy is Balanced", _fault_rw213),
        Fault("RW214", "esxi", "an mlxconfig change (NUM_VF_MSIX 11 -> 19) waits for a reboot", _fault_rw214),
        Fault("RW216", "esxi", "vmnic2's DCBX took the switch's PFC map: PFC operational on priority 4, not 3",
              _fault_rw216),
        Fault("RW215", "esxi", "the BIOS maps no MMIO above 4 GB (MmioAbove4Gb Disabled): only "
              f"{MMIO_LOW_VFS_PER_PF} VFs per port fit", _fault_rw215),
    )
}

__all__ = ["FAULTS", "MMIO_LOW_VFS_PER_PF", "files", "instantiated_vfs", "programs", "reported_pause"]

