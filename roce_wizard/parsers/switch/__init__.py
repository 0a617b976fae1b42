"""Ethernet switch outputs: Arista EOS, NVIDIA Onyx, Dell OS10, Cumulus NVUE, SONiC.

Kinds (docs/facts.md "## Switch" lists every key):
  arista_pfc            EOS `show priority-flow-control [interfaces X]`
  eos_qos_interfaces    EOS `show qos interfaces [X]` (trust mode, ECN/WRED per tx-queue)
  eos_interfaces        EOS `show interfaces [X]` (L2 `Ethernet MTU` vs routed `IP MTU`)
  eos_interfaces_status EOS `show interfaces status` (seed 004)
  eos_flowcontrol       EOS `show flowcontrol` / `show interfaces flowcontrol`
  eos_qos_maps          EOS `show qos maps` (DSCP -> traffic class, TC <-> CoS)
  eos_running_config    EOS `show running-config` and config typed at the prompt (seeds 001, 004)
  onyx_pfc              Onyx `show dcb priority-flow-control` (text, or `| json-print`)
  onyx_interfaces       Onyx `show interfaces [ethernet X]` (text, or `| json-print`)
  onyx_qos_interface    Onyx `show qos interface ethernet X` (trust mode)
  onyx_running_config   Onyx `show running-config` and config typed at the prompt (seed 001)
  os10_running_config   OS10 `show running-configuration` (class/policy maps, PFC, trust-map, MTU, flowcontrol)
  os10_interfaces       OS10 `show interface [ethernet X]` (MTU, flowcontrol)
  nvue_qos_roce         Cumulus `nv show qos roce` and `nv show interface X qos roce counters` (table or -o json)
  nvue_interfaces       Cumulus `nv show interface` (table or -o json): MTU per interface
  sonic_pfc             SONiC `show pfc priority` (and a paste of it with the counters below)
  sonic_show_pfc        SONiC `show pfc counters [--history]` (sonic_counters.py)
  sonic_queue_counters  SONiC `show queue counters [--voq|--trim] [--json]` (sonic_counters.py)
JSON and a script's Python repr of it (`| json`, `| json-print`, the Onyx JSON API) are read by structured.py.

Port names are kept as the device prints them; `port_key` turns any spelling (`Et3`, `Ethernet3`,
`eth1/3`, `ethernet 1/1/3`, `Eth 1/1/3`) into one comparable key. A switch prompt pasted with the
output (`wedge>`, `sw(config-if-Et1)#`, `sw [standalone: master] # `) is context, never data.
"""

from __future__ import annotations

from roce_wizard.parsers.base import Parser
from roce_wizard.parsers.switch.common import port_key, switch_prompt_command
from roce_wizard.parsers.switch.eos import (
    parse_arista_pfc,
    parse_eos_flowcontrol,
    parse_eos_interfaces,
    parse_eos_interfaces_status,
    parse_eos_qos_interfaces,
    parse_eos_qos_maps,
    parse_eos_running_config,
    sniff_arista_pfc,
    sniff_eos_flowcontrol,
    sniff_eos_interfaces,
    sniff_eos_interfaces_status,
    sniff_eos_qos_interfaces,
    sniff_eos_qos_maps,
    sniff_eos_running_config,
)
from roce_wizard.parsers.switch.eos_counters import parse_eos_queue_counters, sniff_eos_queue_counters
from roce_wizard.parsers.switch.nvue import (
    parse_nvue_interfaces,
    parse_nvue_qos_roce,
    sniff_nvue_interfaces,
    sniff_nvue_qos_roce,
)
from roce_wizard.parsers.switch.onyx import (
    parse_onyx_interfaces,
    parse_onyx_pfc,
    parse_onyx_qos_interface,
    parse_onyx_running_config,
    sniff_onyx_interfaces,
    sniff_onyx_pfc,
    sniff_onyx_qos_interface,
    sniff_onyx_running_config,
)
from roce_wizard.parsers.switch.os10 import (
    parse_os10_interfaces,
    parse_os10_running_config,
    sniff_os10_interfaces,
    sniff_os10_running_config,
)
from roce_wizard.parsers.switch.sonic import parse_sonic_pfc, sniff_sonic_pfc
from roce_wizard.parsers.switch.sonic_counters import PARSERS as SONIC_COUNTER_PARSERS

__all__ = ["PARSERS", "port_key", "switch_prompt_command"]


PARSERS: dict[str, Parser] = {
    p.kind: p
    for p in (
        Parser("arista_pfc", parse_arista_pfc, sniff_arista_pfc, "EOS show priority-flow-control"),
        Parser("eos_qos_interfaces", parse_eos_qos_interfaces, sniff_eos_qos_interfaces,
               "EOS show qos interfaces: trust mode, ECN/WRED per tx-queue"),
        Parser("eos_interfaces", parse_eos_interfaces, sniff_eos_interfaces,
               "EOS show interfaces: link, L2 Ethernet MTU / routed IP MTU"),
        Parser("eos_interfaces_status", parse_eos_interfaces_status, sniff_eos_interfaces_status,
               "EOS show interfaces status"),
        Parser("eos_flowcontrol", parse_eos_flowcontrol, sniff_eos_flowcontrol, "EOS show flowcontrol"),
        Parser("eos_qos_maps", parse_eos_qos_maps, sniff_eos_qos_maps, "EOS show qos maps: DSCP/CoS -> TC"),
        Parser("eos_running_config", parse_eos_running_config, sniff_eos_running_config,
               "EOS running-config or typed config: PFC, trust, MTU, flowcontrol, ECN"),
        Parser("onyx_pfc", parse_onyx_pfc, sniff_onyx_pfc, "Onyx show dcb priority-flow-control"),
        Parser("onyx_interfaces", parse_onyx_interfaces, sniff_onyx_interfaces, "Onyx show interfaces ethernet"),
        Parser("onyx_qos_interface", parse_onyx_qos_interface, sniff_onyx_qos_interface,
               "Onyx show qos interface ethernet: trust mode"),
        Parser("onyx_running_config", parse_onyx_running_config, sniff_onyx_running_config,
               "Onyx running-config or typed config: DCB PFC, trust, MTU, ECN, DSCP map"),
        Parser("os10_running_config", parse_os10_running_config, sniff_os10_running_config,
               "OS10 show running-configuration: class/policy maps, PFC, trust-map, MTU, flowcontrol"),
        Parser("os10_interfaces", parse_os10_interfaces, sniff_os10_interfaces, "OS10 show interface"),
        Parser("nvue_qos_roce", parse_nvue_qos_roce, sniff_nvue_qos_roce, "Cumulus nv show qos roce"),
        Parser("nvue_interfaces", parse_nvue_interfaces, sniff_nvue_interfaces, "Cumulus nv show interface"),
        Parser("sonic_pfc", parse_sonic_pfc, sniff_sonic_pfc, "SONiC show pfc priority / counters"),
        *SONIC_COUNTER_PARSERS.values(),  # sonic_show_pfc, sonic_queue_counters (sonic_counters.py)
        Parser("eos_queue_counters", parse_eos_queue_counters, sniff_eos_queue_counters,
               "EOS show interfaces counters queue [detail]: egress enqueue/drop per port and TC"),
    )
}
