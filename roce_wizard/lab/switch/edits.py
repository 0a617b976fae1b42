"""Edits the three vendor CLIs (EOS, Onyx, OS10) make alike; each vendor keeps its own refusal text.

A real device refuses a bad value with its own message: the caller passes it (`out_of_range`, `missing`),
so the lab refuses what the device refuses, the way that device says it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from roce_wizard.lab.switch.cli_base import _Unrecognized
from roce_wizard.lab.switch.common import _reconcile
from roce_wizard.lab.switch.state import MTU_RANGE, _snapshot, cli_state
from roce_wizard.lab.world import Switch, SwitchPort, World


def set_mtu(ports: list[SwitchPort], body: list[str], *, neg: bool, vendor: str, default: int,
            suffixes: tuple[tuple[str, ...], ...] = ((),), token: str = "", out_of_range: str | None = None) -> str:
    """`[no] mtu N [SUFFIX]` in interface mode. A malformed line is `incomplete` (no value) or `invalid`
    (at `token`); a value outside the vendor's range is `invalid`, or the vendor's message (`out_of_range`,
    formatted with {lo} and {hi})."""
    if neg:
        for p in ports:
            p.mtu = default
        return ""
    if len(body) < 2 or not body[1].isdigit() or tuple(body[2:]) not in suffixes:
        raise _Unrecognized(kind="incomplete" if len(body) == 1 else "invalid", token=token)
    value = int(body[1])
    lo, hi = MTU_RANGE[vendor]
    if not lo <= value <= hi:
        if out_of_range is None:
            raise _Unrecognized(kind="invalid")
        raise _Unrecognized(kind="message", token=out_of_range.format(lo=lo, hi=hi))
    for p in ports:
        p.mtu = value
    return ""


def set_description(ports: list[SwitchPort], body_words: list[str], *, neg: bool) -> str:
    """`[no] description TEXT` (`body_words` without the `no`)."""
    text = " ".join(body_words[1:]).strip('"')
    for p in ports:
        p.description = "" if neg else text
    return ""


def map_dscps(mapping: dict[int, int], dscps: Iterable[int], value: int, default: Callable[[int], int], *,
              neg: bool = False) -> None:
    """DSCP -> priority/traffic class entries: only what differs from the vendor's default map is kept."""
    for d in dscps:
        if neg or value == default(d):
            mapping.pop(d, None)
        else:
            mapping[d] = value


def save_file(world: World, switch: Switch, key: str) -> None:
    """`copy running-config FILE` and kin: the running configuration as it is, kept under `key`."""
    _reconcile(world, switch)
    cli_state(switch).files[key] = _snapshot(switch)


def saved_file(switch: Switch, key: str, missing: str) -> object:
    """A configuration saved under `key`; the vendor's `missing` message when there is none."""
    snap = cli_state(switch).files.get(key)
    if snap is None:
        raise _Unrecognized(kind="message", token=missing)
    return snap
