"""RDMA-stack tools: verbs, MLNX_OFED scripts, iproute2 `rdma`, infiniband-diags, UCX.

Kinds: ibv_devinfo, show_gids, ibdev2netdev, rdma_link, ibstat, ibstatus, cma_roce_mode,
roce_tc_sysfs, ofed_info, hw_counters, rdma_statistic, ucx_info, rdma_cm_tos (configfs.py).

Every parser reads the text a person pastes: prompts and command lines are used only as context
(which device a `cat` read, which interface), never as data; `...` elisions are skipped. Sniffer
scores: ~95 for a tool's own signature (a header or a line only that tool prints), lower and
proportional to the share of matching lines for formats that are only line-shaped.
"""

from __future__ import annotations

from roce_wizard.parsers.base import Parser
from roce_wizard.parsers.rdma.cma_roce_mode import parse_cma_roce_mode, sniff_cma_roce_mode
from roce_wizard.parsers.rdma.configfs import PARSERS as _CONFIGFS_PARSERS
from roce_wizard.parsers.rdma.hw_counters import parse_hw_counters, sniff_hw_counters
from roce_wizard.parsers.rdma.ibdev2netdev import parse_ibdev2netdev, sniff_ibdev2netdev
from roce_wizard.parsers.rdma.ibstat import parse_ibstat, parse_ibstatus, sniff_ibstat, sniff_ibstatus
from roce_wizard.parsers.rdma.ibv_devinfo import parse_ibv_devinfo, sniff_ibv_devinfo
from roce_wizard.parsers.rdma.iproute2 import (
    parse_rdma_link,
    parse_rdma_statistic,
    sniff_rdma_link,
    sniff_rdma_statistic,
)
from roce_wizard.parsers.rdma.ofed_info import parse_ofed_info, sniff_ofed_info
from roce_wizard.parsers.rdma.roce_tc import parse_roce_tc_sysfs, sniff_roce_tc_sysfs
from roce_wizard.parsers.rdma.show_gids import parse_show_gids, sniff_show_gids
from roce_wizard.parsers.rdma.ucx_info import parse_ucx_info, sniff_ucx_info

__all__ = ["PARSERS"]

# ---------------------------------------------------------------------------------------------

PARSERS: dict[str, Parser] = {
    "ibv_devinfo": Parser("ibv_devinfo", parse_ibv_devinfo, sniff_ibv_devinfo,
                          "ibv_devinfo [-v] [-l]: devices, ports, MTUs, link layer, GIDs"),
    "show_gids": Parser("show_gids", parse_show_gids, sniff_show_gids,
                        "show_gids (MLNX_OFED): GID table with IPv4, RoCE version, netdev"),
    "ibdev2netdev": Parser("ibdev2netdev", parse_ibdev2netdev, sniff_ibdev2netdev,
                           "ibdev2netdev [-v]: RDMA device/port to netdev"),
    "rdma_link": Parser("rdma_link", parse_rdma_link, sniff_rdma_link,
                        "rdma link show: port state and netdev"),
    "ibstat": Parser("ibstat", parse_ibstat, sniff_ibstat, "ibstat: CA and port state, rate, link layer"),
    "ibstatus": Parser("ibstatus", parse_ibstatus, sniff_ibstatus,
                       "ibstatus: port state, rate, link layer"),
    "cma_roce_mode": Parser("cma_roce_mode", parse_cma_roce_mode, sniff_cma_roce_mode,
                            "cma_roce_mode: default RoCE mode of rdma_cm"),
    "roce_tc_sysfs": Parser("roce_tc_sysfs", parse_roce_tc_sysfs, sniff_roce_tc_sysfs,
                            "/sys/class/infiniband/<dev>/tc/<n>/traffic_class"),
    "ofed_info": Parser("ofed_info", parse_ofed_info, sniff_ofed_info, "ofed_info -s: OFED version"),
    "hw_counters": Parser("hw_counters", parse_hw_counters, sniff_hw_counters,
                          "RDMA port (hw_)counters read from sysfs"),
    "rdma_statistic": Parser("rdma_statistic", parse_rdma_statistic, sniff_rdma_statistic,
                             "rdma statistic show: per-port RDMA counters"),
    "ucx_info": Parser("ucx_info", parse_ucx_info, sniff_ucx_info,
                       "ucx_info -d: UCX transports per device"),
}

# rdma_cm's configfs knobs (`default_roce_tos`) live in their own small module, configfs.py
PARSERS.update(_CONFIGFS_PARSERS)
