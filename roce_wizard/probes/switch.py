"""Switch probes: the vendor show commands the switch checks read (one command each, whole switch).

A probe's command depends on the switch's netmiko device type; for another vendor it returns None
(the engine records "not applicable" and runs nothing). Which ports carry RoCE is not asked of the
switch: the engine gives the switch's facts `roce_ports` (docs/facts.md), from the inventory.

Onyx has no single show command for trust mode and ECN of every port that all releases print the
same way, so on Onyx those come from `show running-config` (one command; it needs enable mode, which
the transport enters), which also carries the DSCP -> switch-priority map. NVUE's `nv show qos roce`
is read in its table form (the form of the real samples in the project's corpus,
tests/data/corpus/cumulus_nv_show_qos_roce); `nv show interface` in JSON (`-o json`), whose per-interface
`link.mtu` is stable across releases. """

from __future__ import annotations

from roce_wizard.model import Target, TargetKind
from roce_wizard.probes import Command, Probe

SWITCH = (TargetKind.SWITCH,)

EOS, ONYX, OS10, NVUE, SONIC = "arista_eos", "mellanox_mlnxos", "dell_os10", "cumulus_nvue", "sonic"
_NAMES = {EOS: "an Arista EOS", ONYX: "an NVIDIA Onyx", OS10: "a Dell OS10", NVUE: "a Cumulus NVUE", SONIC: "a SONiC"}


def _on(device_type: str, command: str) -> Command:
    def build(target: Target, facts: dict) -> str | None:
        return command if target.device_type == device_type else None

    return build


def _probe(name: str, device_type: str, command: str) -> Probe:
    return Probe(name, SWITCH, _on(device_type, command), name, why_not=f"not {_NAMES[device_type]} switch")


PROBES: tuple[Probe, ...] = (
    # Arista EOS
    _probe("arista_pfc", EOS, "show priority-flow-control"),
    _probe("eos_qos_interfaces", EOS, "show qos interfaces"),
    _probe("eos_interfaces", EOS, "show interfaces"),
    _probe("eos_flowcontrol", EOS, "show flowcontrol"),
    _probe("eos_qos_maps", EOS, "show qos maps"),
    # NVIDIA Onyx
    _probe("onyx_pfc", ONYX, "show dcb priority-flow-control"),
    _probe("onyx_interfaces", ONYX, "show interfaces ethernet"),
    _probe("onyx_running_config", ONYX, "show running-config"),
    # Dell OS10
    _probe("os10_running_config", OS10, "show running-configuration"),
    _probe("os10_interfaces", OS10, "show interface"),
    # Cumulus NVUE
    _probe("nvue_qos_roce", NVUE, "nv show qos roce"),
    _probe("nvue_interfaces", NVUE, "nv show interface -o json"),
    # SONiC (read-only: the lossless priorities per port; corpus sonic_show_pfc, sonic-utilities PR #796)
    _probe("sonic_pfc", SONIC, "show pfc priority"),
)
