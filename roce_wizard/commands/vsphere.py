"""`vsphere <verb> <args…>` action lines: what a vsphere fix step or the reboot orchestration carries
(`action_line`) and what the vSphere transport reads (`parse_action_line`) before it calls vCenter.

Parsed with shlex.split; every name is validated (host / VM / VDS / port group names, PCI ids, vmnics,
numbers in range, closed choices), so a line that parses here is one the transport accepts as well-formed.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import Any

__all__ = ["POWER_POLICY_SHORT_NAMES", "SYNTAX", "Malformed", "action_line", "parse_action_line"]

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:@()+ -]{0,79}$")  # host / VM / VDS / port group names
_PCI_ID = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_VMNIC = re.compile(r"^vmnic\d{1,4}$")
# HostPowerPolicy.shortName ("not localizable", vSphere API) of each policy the action sets; the key is the host's
POWER_POLICY_SHORT_NAMES = {"High Performance": "static", "Balanced": "dynamic", "Low Power": "low"}


class Malformed(ValueError):
    """An action line that does not parse (exit 2)."""


def _name(value: str, what: str) -> str:
    if not _NAME.match(value):
        raise Malformed(f"not a valid {what} name: {value!r}")
    return value


def _int(value: str, what: str, low: int, high: int) -> int:
    if not re.fullmatch(r"\d{1,6}", value) or not low <= int(value) <= high:
        raise Malformed(f"{what} must be a number from {low} to {high}, not {value!r}")
    return int(value)


def _pci_id(value: str) -> str:
    if not _PCI_ID.match(value.lower()):
        raise Malformed(f"not a PCI id (0000:3b:00.0): {value!r}")
    return value.lower()


def _members(args: list[str]) -> list[tuple[str, list[str]]]:
    out = []
    for arg in args:
        host, sep, nics = arg.partition("=")
        names = nics.split(",") if nics else []
        if not sep or not names or not all(_VMNIC.match(n) for n in names):
            raise Malformed(f"a member is HOST=vmnicN[,vmnicM], not {arg!r}")
        out.append((_name(host, "host"), names))
    return out


def _choice(value: str, choices: tuple[str, ...], what: str) -> str:
    if value not in choices:
        raise Malformed(f"{what} must be one of {', '.join(choices)}, not {value!r}")
    return value


def _arity() -> tuple[Any, ...]:
    raise Malformed("wrong number of arguments")


# verb -> (usage, parse(args) -> tuple of call arguments)
SYNTAX: dict[str, tuple[str, Callable[[list[str]], tuple[Any, ...]]]] = {
    "host-maintenance": ("enter|exit <host>", lambda a: (_choice(a[0], ("enter", "exit"), "the mode"),
                                                         _name(a[1], "host")) if len(a) == 2 else _arity()),
    "host-reboot": ("<host>", lambda a: (_name(a[0], "host"),) if len(a) == 1 else _arity()),
    "vm-power": ("off|on|shutdown <vm>", lambda a: (_choice(a[0], ("off", "on", "shutdown"), "the operation"),
                                                     _name(a[1], "VM")) if len(a) == 2 else _arity()),
    "host-sriov": ("<host> <pf-pci-id> <num-vfs>", lambda a: (_name(a[0], "host"), _pci_id(a[1]),
                                                              _int(a[2], "the VF count", 0, 256))
                   if len(a) == 3 else _arity()),
    "host-power-policy": ('<host> "High Performance"|Balanced|"Low Power"',
                          lambda a: (_name(a[0], "host"), _choice(a[1], tuple(POWER_POLICY_SHORT_NAMES), "the policy"))
                          if len(a) == 2 else _arity()),
    "dvs-create": ("<dvs> <portgroup> <max-mtu> <host>=<vmnic>[,<vmnic>]…",
                   lambda a: (_name(a[0], "distributed switch"), _name(a[1], "port group"),
                              _int(a[2], "maxMtu", 1280, 9000), _members(a[3:])) if len(a) >= 4 else _arity()),
    "dvs-mtu": ("<dvs> <max-mtu>", lambda a: (_name(a[0], "distributed switch"), _int(a[1], "maxMtu", 1280, 9000))
                if len(a) == 2 else _arity()),
    "vm-add-vf": ("<vm> <pf-pci-id> <portgroup>", lambda a: (_name(a[0], "VM"), _pci_id(a[1]),
                                                            _name(a[2], "port group")) if len(a) == 3 else _arity()),
    "vm-reserve-memory": ("<vm>", lambda a: (_name(a[0], "VM"),) if len(a) == 1 else _arity()),
    "vm-latency-high": ("<vm>", lambda a: (_name(a[0], "VM"),) if len(a) == 1 else _arity()),
}


def parse_action_line(command: str) -> tuple[str, tuple[Any, ...]] | None:
    """(verb, its arguments) for a `vsphere <verb> …` action line; None when the line is no action
    (a query, or not vSphere at all); Malformed when it is one but does not parse."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise Malformed(f"cannot split the line: {exc}") from exc
    if len(words) < 2 or words[0] != "vsphere" or words[1] not in SYNTAX:
        return None
    usage, parse = SYNTAX[words[1]]
    try:
        return words[1], parse(words[2:])
    except Malformed as exc:
        raise Malformed(f"{exc}; usage: vsphere {words[1]} {usage}") from exc


def action_line(verb: str, *args: str) -> str:
    """The action line for `verb` with `args`, quoted for shlex.split (what plan_fix steps carry)."""
    line = " ".join(["vsphere", verb, *(shlex.quote(str(a)) for a in args)])
    parse_action_line(line)  # a plan never carries a line the transport would refuse as malformed
    return line
