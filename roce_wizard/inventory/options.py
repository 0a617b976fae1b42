"""A target's `options:` — which keys each kind of target reads, and the value each takes.

Validated like every other inventory field: `connect_timeout: abc` used to surface at connect time as
"does not speak ssh", and a typo (`known_host:`) was silently ignored, so the run used
~/.ssh/known_hosts instead of the file the operator named. Now an unknown key is an error that lists
the valid keys and suggests the closest; a value of the wrong type says what was expected.

Keys starting with `x_` (or `x-`) are a site's own, for its own checks: passed through unchecked.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from yaml.constructor import SafeConstructor
from yaml.nodes import Node, ScalarNode

from roce_wizard.model import TargetKind

_SSH = frozenset({TargetKind.ESXI, TargetKind.GUEST, TargetKind.LINUX, TargetKind.SWITCH})
_TLS = frozenset({TargetKind.VCENTER, TargetKind.BMC})
_ALL = frozenset(TargetKind)
_INT, _FLOAT, _BOOL, _STR = (f"tag:yaml.org,2002:{t}" for t in ("int", "float", "bool", "str"))
SITE_PREFIXES = ("x_", "x-")


class OptionProblem(ValueError):
    """An option the inventory cannot take: the node to point at, what is wrong, what was expected."""

    def __init__(self, node: Node, problem: str, expected: str) -> None:
        super().__init__(problem)
        self.node, self.problem, self.expected = node, problem, expected


def _shown(node: Node) -> str:
    return repr(node.value) if isinstance(node, ScalarNode) else "a list" if node.id == "sequence" else "a mapping"


def _seconds(limit: float) -> tuple[str, Callable[[Node], Any]]:
    expected = f"a number of seconds > 0 and ≤ {limit:g}"

    def check(node: Node) -> Any:
        if isinstance(node, ScalarNode) and node.tag in (_INT, _FLOAT):
            value = SafeConstructor().construct_object(node)
            if not math.isnan(value) and 0 < value <= limit:
                return value
        raise OptionProblem(node, f"expected {expected}, got {_shown(node)}", expected)

    return expected, check


def _path(what: str) -> tuple[str, Callable[[Node], Any]]:
    expected = f"a path to {what}"

    def check(node: Node) -> Any:
        if isinstance(node, ScalarNode) and node.tag == _STR and node.value.strip() and node.value.isprintable():
            return node.value.strip()
        raise OptionProblem(node, f"expected {expected}, got {_shown(node)}", expected)

    return expected, check


def _name(what: str) -> tuple[str, Callable[[Node], Any]]:
    expected = f"the name of {what} (1-80 printable characters)"

    def check(node: Node) -> Any:
        if isinstance(node, ScalarNode) and node.tag in (_STR, _INT) and 0 < len(node.value.strip()) <= 80 \
                and node.value.isprintable():
            return node.value.strip()
        raise OptionProblem(node, f"expected {expected}, got {_shown(node)}", expected)

    return expected, check


def _flag() -> tuple[str, Callable[[Node], Any]]:
    def check(node: Node) -> Any:
        if isinstance(node, ScalarNode) and node.tag == _BOOL:
            return SafeConstructor().construct_object(node)
        raise OptionProblem(node, f"expected true or false, got {_shown(node)}", "true or false")

    return "true or false", check


@dataclass(frozen=True)
class OptionSpec:
    kinds: frozenset[TargetKind]
    expected: str
    check: Callable[[Node], Any]


def _spec(kinds: frozenset[TargetKind], rule: tuple[str, Callable[[Node], Any]]) -> OptionSpec:
    return OptionSpec(kinds, *rule)


# who reads each: transports/ssh.py and switch.py (known_hosts, timeouts), vsphere.py and redfish.py
# (ca_file, insecure, timeouts), checklib/vsphere.py (dvs, portgroup), checks/guest/rw401 (ofed_bundle)
OPTIONS: dict[str, OptionSpec] = {
    "known_hosts": _spec(_SSH, _path("an OpenSSH known_hosts file")),
    "connect_timeout": _spec(_ALL, _seconds(3600)),
    "command_timeout": _spec(_ALL, _seconds(86400)),
    "ca_file": _spec(_TLS, _path("a PEM file of the CA that signed the certificate")),
    "insecure": _spec(_TLS, _flag()),
    "dvs": _spec(frozenset({TargetKind.VCENTER}), _name("the distributed switch carrying the RoCE VFs")),
    "portgroup": _spec(frozenset({TargetKind.VCENTER}), _name("the port group of the RoCE VFs")),
    "ofed_bundle": _spec(frozenset({TargetKind.GUEST, TargetKind.LINUX}), _path("an MLNX_OFED .tgz")),
}


def valid_keys(kind: TargetKind) -> list[str]:
    return [key for key, spec in OPTIONS.items() if kind in spec.kinds]


def option_value(kind: TargetKind, key: str, key_node: Node, value_node: Node) -> Any:
    """The checked value of one option of a `kind` target; raises OptionProblem."""
    if key.startswith(SITE_PREFIXES):  # a site's own option, read by its own checks
        return SafeConstructor().construct_object(value_node, deep=True)
    valid = valid_keys(kind)
    spec = OPTIONS.get(key)
    if spec is None or kind not in spec.kinds:
        expected = f"one of {', '.join(valid)}"
        if spec is not None:
            others = ", ".join(k.value for k in TargetKind if k in spec.kinds)
            problem = f"option {key!r} is not read for {kind.value} targets (only for {others})"
        else:
            close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
            problem = f"unknown option {key!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
        raise OptionProblem(key_node, f"{problem}; valid: {', '.join(valid)} (for {kind.value} targets), or x_… "
                                      "for a site check's own option", expected)
    return spec.check(value_node)
