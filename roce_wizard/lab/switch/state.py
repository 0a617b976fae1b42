"""The state a lab switch keeps beside the world's port fields, and its saved configurations.

Split out of lab/switch/__init__.py so the per-vendor modules (os10_qos, restore) share it without an import
cycle. What lives here: the vendors' constants, :class:`CliState` (OS10 class-maps, policy-maps and
WRED profiles, Onyx's switch-wide PFC switch, DSCP maps, saved files), snapshots of a configuration
and the whole-configuration restore that the vendors' replace commands do.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from roce_wizard.lab.world import Switch, SwitchPort

VENDORS = ("eos", "onyx", "os10")
# the inventory's device_type per lab vendor (NVUE: roce-wizard's name; netmiko drives it as `cumulus_linux`)
DEVICE_TYPES = {"eos": "arista_eos", "onyx": "mellanox_mlnxos", "os10": "dell_os10", "nvue": "cumulus_nvue"}

# ECN marking thresholds the renderers print (the lab keeps whatever was typed only as on/off)
ECN_MIN_KB = 150
ECN_MAX_KB = 1500
EOS_DEFAULT_MTU = 9214  # EOS L2 default; printed in running-config only when it differs
ONYX_DEFAULT_MTU = 1500
OS10_DEFAULT_MTU = 1532
MTU_RANGE = {"eos": (68, 9216), "onyx": (1500, 9216), "os10": (1312, 9216)}

EOS_VERSION = "4.28.3M"
EOS_MODEL = "DCS-7060CX2-32S"
ONYX_VERSION = "3.9.3202"
OS10_VERSION = "10.5.2.4"


def default_switch_priority(dscp: int) -> int:
    """The default DSCP -> switch priority map of all three vendors for the DSCPs RoCE uses (dscp >> 3)."""
    return dscp >> 3


# --------------------------------------------------------------------------------------------
# vendor state the world model has no field for


@dataclass
class Os10Class:
    match: int  # qos-group (network-qos) or queue (queuing)


@dataclass
class Os10PolicyClass:
    pause: bool = False
    pfc_cos: set[int] = field(default_factory=set)
    # the WRED profile a queuing class names (`random-detect NAME`): OS10 has no `random-detect ecn`
    # in a class; ECN is a property of the profile (Dell SmartFabric OS10 User Guide 10.5.0,
    # "Configure RoCE on the switch")
    wred: str | None = None
    bandwidth: int | None = None


@dataclass
class Os10Wred:
    """An OS10 `wred NAME` profile: `random-detect ecn` and per-colour thresholds (KB, %)."""

    ecn: bool = False
    colors: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # color -> (min KB, max KB, drop %)


@dataclass
class Os10Policy:
    kind: str  # network-qos / queuing
    classes: dict[str, Os10PolicyClass] = field(default_factory=dict)


@dataclass
class CliState:
    """What a switch keeps that ``Switch``/``SwitchPort`` cannot say (see the module docstring)."""

    # DSCP -> switch priority overrides of the default map (EOS `qos map dscp D to traffic-class P`,
    # Onyx `qos map dscp-to-switch-priority`, OS10 a `trust dscp-map` applied with `trust-map dscp NAME`)
    dscp_map: dict[int, int] = field(default_factory=dict)
    ecn_other: dict[str, set[int]] = field(default_factory=dict)  # port -> ECN queues besides the RoCE one
    onyx_pfc_global: bool | None = None  # `dcb priority-flow-control enable`; None: as the ports say
    onyx_admin_pending: set[str] = field(default_factory=set)  # `mode on` typed while PFC is globally off
    os10_class_maps: dict[tuple[str, str], Os10Class] = field(default_factory=dict)  # (kind, name)
    os10_policies: dict[str, Os10Policy] = field(default_factory=dict)
    os10_wred: dict[str, Os10Wred] = field(default_factory=dict)  # `wred NAME` profiles
    os10_dscp_maps: dict[str, dict[int, int]] = field(default_factory=dict)  # trust dscp-map name -> overrides
    os10_port_nqos: dict[str, str] = field(default_factory=dict)
    os10_port_queuing: dict[str, str] = field(default_factory=dict)
    os10_port_trust_map: dict[str, str] = field(default_factory=dict)  # port -> "default" or a dscp-map name
    eos_sessions: dict[str, Switch] = field(default_factory=dict)  # open `configure session` copies
    # saved configurations by name (EOS flash:NAME, Onyx `configuration write to NAME`, OS10
    # config://NAME): what a restore puts back (`configure replace`, `configuration switch-to`, copy)
    files: dict[str, tuple[list[SwitchPort], CliState]] = field(default_factory=dict)
    # a knob for tests (`freeze`): SwitchPort fields the hardware keeps as they are: the CLI takes the
    # commands, the next show prints the old value (what a verify must catch)
    frozen: set[str] = field(default_factory=set)


def cli_state(switch: Switch) -> CliState:
    """The switch's vendor state (an attribute beside the dataclass fields: deep copies keep it)."""
    state = switch.__dict__.get("cli_state")
    if state is None:
        state = CliState()
        switch.__dict__["cli_state"] = state
    return state


PORT_FIELDS = ("mtu", "pfc_enabled", "no_drop", "trust", "flowcontrol_rx", "flowcontrol_tx", "ecn")


def freeze(switch: Switch, *fields: str) -> None:
    """Make the switch keep these SwitchPort fields whatever the CLI is told (no fields: thaw). For
    tests of a fix whose verify fails: the commands are accepted, the change does not take."""
    unknown = set(fields) - set(PORT_FIELDS)
    if unknown:
        raise ValueError(f"not SwitchPort fields: {sorted(unknown)}")
    cli_state(switch).frozen = set(fields)


def _snapshot(switch: Switch) -> tuple[list[SwitchPort], CliState]:
    state = copy.copy(cli_state(switch))
    state.files, state.eos_sessions, state.frozen = {}, {}, set()  # not part of a configuration
    return copy.deepcopy(switch.ports), copy.deepcopy(state)


def _restore(switch: Switch, snap: tuple[list[SwitchPort], CliState]) -> None:
    """Put a saved configuration back whole (what the vendors' replace / switch-to does)."""
    ports, saved = snap
    for old in ports:
        port = switch.port(old.name)
        if port is not None:
            for f in PORT_FIELDS:
                setattr(port, f, copy.deepcopy(getattr(old, f)))
    state = cli_state(switch)
    keep = (state.files, state.eos_sessions, state.frozen)
    fresh = copy.deepcopy(saved)
    fresh.files, fresh.eos_sessions, fresh.frozen = keep
    switch.__dict__["cli_state"] = fresh
