"""`esxcli network ...` of the simulated ESXi host: NICs, pause, DCB, SR-IOV NICs and VFs."""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.lab.esxi import dcb as esxi_dcb
from roce_wizard.lab.esxi.common import (
    _err,
    _full_pci,
    _link_up,
    _nic_description,
    _world_id,
    instantiated_vfs,
    reported_pause,
)
from roce_wizard.lab.esxi.esxcli_model import Out, _fields
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.world import Card, EsxiHost, Vmnic, World

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
