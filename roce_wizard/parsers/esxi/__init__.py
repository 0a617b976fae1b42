"""ESXi host outputs: esxcli tables (human and `--formatter=csv`), esxcfg-*, vim-cmd.

Human esxcli tables are a header line, a row of dashes whose runs give each column's width, then
rows padded to those widths (text left-aligned, numbers and booleans right-aligned, empty cells
blank).  Cells are therefore read by position against the dash runs, never by splitting on
whitespace.  The csv formatter prints a header of field names with the spaces removed, one row per
record, every line ending with a trailing comma, and quotes values containing commas; fields are
read by header name, never by position (their order differs from the human table).
"""

from __future__ import annotations

from roce_wizard.parsers.base import Parser
from roce_wizard.parsers.esxi.dcb import PARSERS as _DCB_PARSERS
from roce_wizard.parsers.esxi.host import (
    parse_esxi_cpu_global,
    parse_esxi_host_summary,
    parse_esxi_pause_params,
    parse_esxi_power_policy,
    parse_esxi_uptime,
    sniff_esxi_cpu_global,
    sniff_esxi_host_summary,
    sniff_esxi_pause_params,
    sniff_esxi_power_policy,
    sniff_esxi_uptime,
)
from roce_wizard.parsers.esxi.modules import (
    format_options_string,
    parse_esxi_module_params,
    parse_options_string,
    sniff_esxi_module_params,
)
from roce_wizard.parsers.esxi.nics import (
    parse_esxi_esxcfg_nics,
    parse_esxi_nic_list,
    parse_esxi_sriovnic_list,
    parse_esxi_sriovnic_vf_list,
    sniff_esxi_esxcfg_nics,
    sniff_esxi_nic_list,
    sniff_esxi_sriovnic_list,
    sniff_esxi_sriovnic_vf_list,
)
from roce_wizard.parsers.esxi.tables import _human_tables as _human_tables  # tests read the tables directly
from roce_wizard.parsers.esxi.vib import (
    parse_esxi_vib_install,
    parse_esxi_vib_list,
    sniff_esxi_vib_install,
    sniff_esxi_vib_list,
)

__all__ = ["PARSERS", "format_options_string", "parse_esxi_host_summary", "parse_esxi_uptime", "parse_options_string"]

# ---------------------------------------------------------------------------------------------

PARSERS: dict[str, Parser] = {
    "esxi_nic_list": Parser("esxi_nic_list", parse_esxi_nic_list, sniff_esxi_nic_list,
                            "esxcli network nic list"),
    "esxi_esxcfg_nics": Parser("esxi_esxcfg_nics", parse_esxi_esxcfg_nics, sniff_esxi_esxcfg_nics,
                               "esxcfg-nics -l"),
    "esxi_vib_list": Parser("esxi_vib_list", parse_esxi_vib_list, sniff_esxi_vib_list,
                            "esxcli software vib list"),
    "esxi_vib_install": Parser("esxi_vib_install", parse_esxi_vib_install, sniff_esxi_vib_install,
                               "esxcli software vib install (Installation Result)"),
    "esxi_module_params": Parser("esxi_module_params", parse_esxi_module_params, sniff_esxi_module_params,
                                 "esxcli system module parameters list -m M / esxcfg-module -g M"),
    "esxi_pause_params": Parser("esxi_pause_params", parse_esxi_pause_params, sniff_esxi_pause_params,
                                "esxcli network nic pauseParams list"),
    "esxi_power_policy": Parser("esxi_power_policy", parse_esxi_power_policy, sniff_esxi_power_policy,
                                "esxcli system settings advanced list -o /Power/CpuPolicy"),
    "esxi_uptime": Parser("esxi_uptime", parse_esxi_uptime, sniff_esxi_uptime,
                          "esxcli system stats uptime get"),
    "esxi_host_summary": Parser("esxi_host_summary", parse_esxi_host_summary, sniff_esxi_host_summary,
                                "vim-cmd hostsvc/hostsummary"),
    "esxi_cpu_global": Parser("esxi_cpu_global", parse_esxi_cpu_global, sniff_esxi_cpu_global,
                              "esxcli hardware cpu global get"),
    "esxi_sriovnic_list": Parser("esxi_sriovnic_list", parse_esxi_sriovnic_list, sniff_esxi_sriovnic_list,
                                 "esxcli network sriovnic list"),
    "esxi_sriovnic_vf_list": Parser("esxi_sriovnic_vf_list", parse_esxi_sriovnic_vf_list,
                                    sniff_esxi_sriovnic_vf_list, "esxcli network sriovnic vf list -n vmnicN"),
}

# `esxcli network nic dcb status get` lives in its own small module, dcb.py
PARSERS.update(_DCB_PARSERS)
