"""NVIDIA/Mellanox firmware tools (MFT / NMST): mlxconfig, mst, mlxfwmanager/mlxup, flint, and the
sysfs SR-IOV VF count.

Every parser reads the output as people paste it: with the shell prompt and the command line, with
`...` cuts, trailing padding, markdown indentation, several outputs in one paste.  Lines a parser does
not recognise are ignored; a parser raises ``ParseError`` only when nothing of its tool is found.
"""

from __future__ import annotations

from roce_wizard.parsers.base import Parser
from roce_wizard.parsers.firmware.flint import parse_flint_query, sniff_flint_query
from roce_wizard.parsers.firmware.mlxconfig import (
    normalize_mlxconfig_value,
    parse_mlxconfig_query,
    parse_mlxconfig_set,
    sniff_mlxconfig_query,
    sniff_mlxconfig_set,
)
from roce_wizard.parsers.firmware.mlxfwmanager import parse_mlxfwmanager, sniff_mlxfwmanager
from roce_wizard.parsers.firmware.mst import parse_mst_status, sniff_mst_status
from roce_wizard.parsers.firmware.sriov import parse_sriov_numvfs, sniff_sriov_numvfs

__all__ = ["PARSERS", "normalize_mlxconfig_value", "parse_mlxconfig_query"]

# ---------------------------------------------------------------------------------------------

PARSERS: dict[str, Parser] = {
    "mlxconfig_query": Parser("mlxconfig_query", parse_mlxconfig_query, sniff_mlxconfig_query,
                              "mlxconfig -d <dev> query / -e query"),
    "mlxconfig_set": Parser("mlxconfig_set", parse_mlxconfig_set, sniff_mlxconfig_set,
                            "mlxconfig -d <dev> set ... (confirmation table)"),
    "mst_status": Parser("mst_status", parse_mst_status, sniff_mst_status, "mst status [-v|-vv]"),
    "mlxfwmanager": Parser("mlxfwmanager", parse_mlxfwmanager, sniff_mlxfwmanager,
                           "mlxfwmanager / mlxup query"),
    "flint_query": Parser("flint_query", parse_flint_query, sniff_flint_query, "flint -d <dev> query"),
    "sriov_numvfs": Parser("sriov_numvfs", parse_sriov_numvfs, sniff_sriov_numvfs,
                           "cat /sys/.../sriov_numvfs or sriov_totalvfs"),
}
