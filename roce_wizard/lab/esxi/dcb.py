"""The ESXi lab's operational DCB state: what `esxcli network nic dcb status get -n vmnicN` prints.

Model (sources in the docstrings of checks RW216/RW212 and tests/data/PROVENANCE.md):
- nmlx5_core loaded with pfctx (World.pfc_active): PFC is operational on pfctx's priorities ("IEEE Mode",
  `PFC Enabled: true`), and global pause is then operationally disabled whatever pauseParams shows (Mellanox,
  "HowTo Run RoCE over L2 Enabled with PFC (ESXi)": "When PFC is enabled, global pause will be operationally
  disabled (no matter what is configured for global pause flow control)").
- A port whose DCBX took the switch's PFC map (Vmnic.dcb_peer_pfc, the RW216 fault) runs that map instead.
- PFC not loaded: `PFC Enabled: false`, all zeros, "CEE Mode" — as the one real output of a ConnectX-4 Lx host
  without PFC shows (operator's excerpt, Enizaksoy/rdma-ai-cluster PFC_SUCCESS_SUMMARY.md).
Only the keys that output shows are printed (Mode, PFC Enabled, PFC Configuration, Sent PFC Frames): the lab
does not invent the others. A NIC whose driver is not nmlx5_core is refused: the lab does not know its answer.
"""

from __future__ import annotations

from roce_wizard.lab.world import EsxiHost, Vmnic, World


def pfc_bitmask(world: World, host: EsxiHost, nic: Vmnic) -> int:
    """The priorities PFC runs on for this port (0: PFC not operational)."""
    if nic.driver != "nmlx5_core" or not world.pfc_active(host):
        return 0
    if nic.dcb_peer_pfc is not None:
        return nic.dcb_peer_pfc
    return int(host.module_params_active.get("pfctx", "0"), 0) & 0xFF


def pause_operational(world: World, host: EsxiHost, nic: Vmnic) -> bool:
    """Is 802.3x global pause in effect on the port? Configured on and no PFC operational."""
    return nic.pause_rx and nic.pause_tx and pfc_bitmask(world, host, nic) == 0


def dcb_status(world: World, host: EsxiHost, nic: Vmnic) -> dict[str, object]:
    """One struct of `dcb status get` (human label -> value), in the order the real output shows them."""
    bits = pfc_bitmask(world, host, nic)
    vector = " ".join("1" if bits >> p & 1 else "0" for p in range(8))
    return {"Mode": "IEEE Mode" if bits else "CEE Mode", "PFC Enabled": bool(bits),
            "PFC Configuration": vector, "Sent PFC Frames": " ".join("0" for _ in range(8))}
