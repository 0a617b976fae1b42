"""Putting a saved configuration back: REPLACE (what the vendors' replace commands do) or MERGE (a copy).

An expert review of the project found: copying a saved file onto the running configuration MERGES — the file's
lines are applied on top, lines the file does not have stay — so a "rollback" by copy leaves every
line a change added. Only the replace commands restore the file exactly:
  - EOS `configure replace <url>` replaces; `copy <url> running-config` merges.
  - Onyx `configuration switch-to <file>` makes the saved file the active configuration (replace).
  - OS10 has no documented replace: `copy config://<file> running-configuration` merges; a change is
    undone by the inverse of exactly the lines it added (the transport's job, see switch_undo).

A port field counts as "a line of the file" when the saved value differs from what the vendor does
with no line at all (the defaults below): only those are applied by a merge.
"""

from __future__ import annotations

import copy

from roce_wizard.lab.switch.state import (
    EOS_DEFAULT_MTU,
    ONYX_DEFAULT_MTU,
    OS10_DEFAULT_MTU,
    CliState,
    cli_state,
)
from roce_wizard.lab.world import Switch, SwitchPort

# what a port is with no line about it, per vendor (the running config prints only what differs)
DEFAULTS = {
    "eos": {"mtu": EOS_DEFAULT_MTU, "pfc_enabled": False, "trust": "pcp", "flowcontrol_rx": False,
            "flowcontrol_tx": False, "ecn": False},
    "onyx": {"mtu": ONYX_DEFAULT_MTU, "pfc_enabled": False, "trust": "pcp", "flowcontrol_rx": False,
             "flowcontrol_tx": False, "ecn": False},
    # OS10's no-drop set, ECN and trust follow the attached policies / trust map (merged with the state)
    "os10": {"mtu": OS10_DEFAULT_MTU, "pfc_enabled": False, "flowcontrol_rx": False, "flowcontrol_tx": False},
}


def merge(switch: Switch, snap: tuple[list[SwitchPort], CliState]) -> None:
    """Apply a saved configuration on top of the running one, as a copy onto running-config does."""
    ports, saved = snap
    defaults = DEFAULTS[switch.vendor]
    for old in ports:
        port = switch.port(old.name)
        if port is None:
            continue
        for fld, default in defaults.items():
            value = getattr(old, fld)
            if value != default:
                setattr(port, fld, copy.deepcopy(value))
        if switch.vendor != "os10":  # one `… no-drop` line per saved priority: they add up
            port.no_drop = set(port.no_drop) | set(old.no_drop)
    state = cli_state(switch)
    state.dscp_map.update(saved.dscp_map)
    for name, queues in saved.ecn_other.items():
        state.ecn_other[name] = set(state.ecn_other.get(name, set())) | set(queues)
    if saved.onyx_pfc_global:
        state.onyx_pfc_global = True
    for key, cmap in saved.os10_class_maps.items():
        state.os10_class_maps[key] = copy.deepcopy(cmap)
    for name, pol in saved.os10_policies.items():
        mine = state.os10_policies.setdefault(name, copy.deepcopy(pol))
        for cname, klass in pol.classes.items():
            mine.classes[cname] = copy.deepcopy(klass)
    for name, profile in saved.os10_wred.items():
        mine_w = state.os10_wred.setdefault(name, copy.deepcopy(profile))
        mine_w.ecn = mine_w.ecn or profile.ecn
        mine_w.colors.update(profile.colors)
    for name, overrides in saved.os10_dscp_maps.items():
        state.os10_dscp_maps.setdefault(name, {}).update(overrides)
    state.os10_port_nqos.update(saved.os10_port_nqos)
    state.os10_port_queuing.update(saved.os10_port_queuing)
    state.os10_port_trust_map.update(saved.os10_port_trust_map)
