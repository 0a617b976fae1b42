"""The simulated ESXi host: esxcli, vim-cmd, esxcfg-*, reboot, and the MFT/NMST tools.

Every output is rendered from the world model in the format the real tool prints (held against
the project's corpus of real captures and VMware's RoCE SR-IOV study): esxcli tables are padded to the widest cell
with numbers and booleans right-aligned, `--formatter=csv` prints the field names without spaces in alphabetical
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

from roce_wizard.lab.esxi.common import VIB_DIR, instantiated_vfs, reported_pause
from roce_wizard.lab.esxi.esxcli_software import datastore
from roce_wizard.lab.esxi.faults import FAULTS
from roce_wizard.lab.esxi.programs import files, programs
from roce_wizard.lab.world import MMIO_LOW_VFS_PER_PF

__all__ = ["FAULTS", "MMIO_LOW_VFS_PER_PF", "VIB_DIR", "datastore", "files", "instantiated_vfs", "programs",
           "reported_pause"]
