"""The `switch-config` step: one configuration change on one switch, as the text of a step's command.

    switch-config {"name": "roce-wizard-rw504", "vendor": "eos", "verify": [{"field": "mtu", "ports": [...],
                   "expect": {"mtu_min": 9216}}]}
    interface Ethernet1-4
       mtu 9216

The first line is the metadata the switch transport needs (a session / backup name, the vendor, what to read
back after the change); the lines after it are typed in configuration mode. The check side renders it
(checklib/switch_fix.switch_plan); the switch transport parses it. Pure text: no parser, no probe, no I/O.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["CONFIG_MARK", "CONFIG_VENDORS", "VENDOR_OF_DEVICE_TYPE", "human_command", "parse_config_command",
           "render_config_command"]

CONFIG_MARK = "switch-config"  # a step command: `switch-config {meta JSON}` + newline + the config lines
CONFIG_VENDORS = ("eos", "onyx", "os10", "nvue")  # the vendors a switch-config step can configure
# the inventory's device_type -> the vendor a step names
VENDOR_OF_DEVICE_TYPE = {"arista_eos": "eos", "mellanox_mlnxos": "onyx", "dell_os10": "os10", "cumulus_nvue": "nvue",
                         "sonic": "sonic"}


def render_config_command(meta: dict[str, Any], lines: list[str]) -> str:
    """The step command for `meta` and the configuration-mode `lines`."""
    return CONFIG_MARK + " " + json.dumps(meta, separators=(",", ":")) + "\n" + "\n".join(lines)


def parse_config_command(command: str) -> tuple[dict[str, Any], list[str]] | None:
    """(meta, config lines) of a `switch-config` step command; None when it is not one."""
    head, _, body = command.partition("\n")
    if not head.startswith(CONFIG_MARK + " "):
        return None
    meta = json.loads(head[len(CONFIG_MARK) + 1:])
    if not isinstance(meta, dict):
        raise ValueError("switch-config: the metadata is not a JSON object")  # noqa: TRY004 - a malformed line
    return meta, [ln for ln in body.split("\n") if ln.strip()]


def human_command(command: str) -> str:
    """A step's command as a person reads it: a `switch-config` step's first line is the transport's JSON
    metadata (session name, what to read back), not something anyone types: only its configuration lines."""
    try:
        parsed = parse_config_command(command)
    except ValueError:
        return command
    return command if parsed is None else "\n".join(parsed[1])
