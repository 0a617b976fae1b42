"""`redfish bios-set NAME=VALUE …`: the line a bios fix step carries (`bios_set_line`) and the Redfish
transport reads (`parse_bios_set`). Names and values are plain words (letters, digits, `_ . -`): the line
is split on whitespace, and each pair becomes an attribute of a JSON PATCH body.
"""

from __future__ import annotations

import re

__all__ = ["ATTR_NAME", "ATTR_VALUE", "Malformed", "bios_set_line", "parse_bios_set", "valid_setting"]

ATTR_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
ATTR_VALUE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class Malformed(ValueError):
    """A `redfish bios-set` line that does not parse (the transport exits 2 with the message)."""


def valid_setting(name: str, value: str) -> bool:
    """Whether NAME=VALUE fits the line (a BIOS attribute name and a plain value)."""
    return isinstance(name, str) and isinstance(value, str) and bool(ATTR_NAME.match(name)) \
        and bool(ATTR_VALUE.match(value))


def bios_set_line(settings: dict[str, str]) -> str:
    """`redfish bios-set NAME=VALUE …` for `settings`; Malformed when one does not fit (never rendered)."""
    for name, value in settings.items():
        if not valid_setting(name, value):
            raise Malformed(f"redfish bios-set: {name}={value!r} is not NAME=VALUE (letters, digits, _ . -)")
    if not settings:
        raise Malformed("redfish bios-set: no NAME=VALUE given")
    return "redfish bios-set " + " ".join(f"{name}={value}" for name, value in settings.items())


def parse_bios_set(args: list[str]) -> dict[str, str]:
    """The settings of a `redfish bios-set` line's arguments (the words after `bios-set`), in their order;
    Malformed, with the message the transport prints, when one is not NAME=VALUE or none is given."""
    wanted: dict[str, str] = {}
    for arg in args:
        name, sep, value = arg.partition("=")
        if not sep or not valid_setting(name, value):
            raise Malformed(f"redfish bios-set: {arg!r} is not NAME=VALUE (letters, digits, _ . -)")
        wanted[name] = value
    if not wanted:
        raise Malformed("redfish bios-set: no NAME=VALUE given")
    return wanted
