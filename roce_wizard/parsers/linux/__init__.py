"""Linux host tools: iproute2 (`ip -j`, text `ip link`), ethtool, mlnx_qos, dmesg, lspci, sysfs probes.

Kinds: ip_json, ip_link_vf, ethtool_pause, ethtool_stats, mlnx_qos, linux_dmesg, lspci_list,
lspci_vvv, boot_id, tool_presence, ulimit_memlock, systemd_limit_memlock, roce_ecn_sysfs, lspci_link.

Prompts and command lines are context only (which interface `ethtool -S` read), never data.
Sniffer scores: ~95 for a tool's own signature line, lower and proportional to the share of
matching lines for formats that are only line-shaped.
"""

from __future__ import annotations

from roce_wizard.parsers.base import Parser
from roce_wizard.parsers.linux.dmesg import parse_linux_dmesg, sniff_linux_dmesg
from roce_wizard.parsers.linux.ecn_sysfs import parse_roce_ecn_sysfs, sniff_roce_ecn_sysfs
from roce_wizard.parsers.linux.ethtool import (
    parse_ethtool_pause,
    parse_ethtool_stats,
    sniff_ethtool_pause,
    sniff_ethtool_stats,
)
from roce_wizard.parsers.linux.ip import parse_ip_json, parse_ip_link_vf, sniff_ip_json, sniff_ip_link_vf
from roce_wizard.parsers.linux.limits import (
    parse_systemd_limit_memlock,
    parse_ulimit_memlock,
    sniff_systemd_limit_memlock,
    sniff_ulimit_memlock,
)
from roce_wizard.parsers.linux.lspci import parse_lspci_list, parse_lspci_vvv, sniff_lspci_list, sniff_lspci_vvv
from roce_wizard.parsers.linux.lspci_link import parse_lspci_link, sniff_lspci_link
from roce_wizard.parsers.linux.mlnx_qos import parse_mlnx_qos, sniff_mlnx_qos
from roce_wizard.parsers.linux.system import (
    parse_boot_id,
    parse_machine_id,
    parse_tool_presence,
    sniff_boot_id,
    sniff_machine_id,
    sniff_tool_presence,
)

__all__ = ["PARSERS", "parse_machine_id"]

# ---------------------------------------------------------------------------------------------

PARSERS: dict[str, Parser] = {
    "ip_json": Parser("ip_json", parse_ip_json, sniff_ip_json,
                      "ip -j link/addr: interfaces, MTU, state, addresses, VFs"),
    "ip_link_vf": Parser("ip_link_vf", parse_ip_link_vf, sniff_ip_link_vf,
                         "ip [-d] link show (text): interfaces and their VF lines"),
    "ethtool_pause": Parser("ethtool_pause", parse_ethtool_pause, sniff_ethtool_pause,
                            "ethtool -a: global pause settings"),
    "ethtool_stats": Parser("ethtool_stats", parse_ethtool_stats, sniff_ethtool_stats,
                            "ethtool -S: NIC counters"),
    "mlnx_qos": Parser("mlnx_qos", parse_mlnx_qos, sniff_mlnx_qos,
                       "mlnx_qos -i: trust, PFC, dscp2prio, ETS"),
    "linux_dmesg": Parser("linux_dmesg", parse_linux_dmesg, sniff_linux_dmesg,
                          "dmesg: IOMMU state and PCIe bandwidth limits"),
    "lspci_list": Parser("lspci_list", parse_lspci_list, sniff_lspci_list, "lspci [-nn]: PCI devices"),
    "lspci_vvv": Parser("lspci_vvv", parse_lspci_vvv, sniff_lspci_vvv,
                        "lspci -vvv -s: SR-IOV capability, PCIe link, driver"),
    "boot_id": Parser("boot_id", parse_boot_id, sniff_boot_id, "/proc/sys/kernel/random/boot_id"),
    "machine_id": Parser("machine_id", parse_machine_id, sniff_machine_id, "/etc/machine-id: the installation's id"),
    "tool_presence": Parser("tool_presence", parse_tool_presence, sniff_tool_presence,
                            "`command -v` probe: present/missing tools"),
    "ulimit_memlock": Parser("ulimit_memlock", parse_ulimit_memlock, sniff_ulimit_memlock,
                             "ulimit -l / -a, /proc/<pid>/limits: locked-memory limit"),
    "systemd_limit_memlock": Parser("systemd_limit_memlock", parse_systemd_limit_memlock,
                                    sniff_systemd_limit_memlock, "systemctl show -p LimitMEMLOCK <unit>"),
    "roce_ecn_sysfs": Parser("roce_ecn_sysfs", parse_roce_ecn_sysfs, sniff_roce_ecn_sysfs,
                             "/sys/class/net/<if>/ecn/roce_{np,rp}/enable/<p>: DCQCN per priority"),
    "lspci_link": Parser("lspci_link", parse_lspci_link, sniff_lspci_link,
                         "lspci -vv | grep Lnk: PCIe LnkCap/LnkSta per device"),
}
