"""NVIDIA MFT's `mlxconfig` as the lab's ESXi hosts and bare-metal Linux hosts both run it: one argument
parser, one set of messages and exit codes (held against MFT 4.18's), one value syntax. Each host kind only
says which cards its MST layer shows (`MstDevices`): ESXi by `mst start` and its mst names, Linux bare metal
by its one card's PCI address or /dev/mst name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.tools.words import bool_word
from roce_wizard.lab.world import MLX_ENUMS, Card, MlxParam


@dataclass(frozen=True)
class MstDevices:
    """What mlxconfig can open on a host: whether MST is up, the adapters a device-less query lists
    (card, device name), and the card a `-d DEV` names (None: no such device)."""
    started: bool
    cards: list[tuple[Card, str]]
    resolve: Callable[[str], Card | None]


# value codes of enum parameters (what mlxconfig prints in parentheses), by name without _P<n>
_ENUM_CODES: dict[str, dict[str, int]] = {
    "LINK_TYPE": {"IB": 1, "ETH": 2, "VPI": 3},
    "HOST_CHAINING_MODE": {"DISABLED": 0, "STORE_AND_FORWARD": 1, "LOCAL_BASIC_HOST_CHAINING": 2},
    "INT_LOG_MAX_PAYLOAD_SIZE": {"AUTOMATIC": 0, "_4KB": 12},
    "PCI_ATOMIC_MODE": {"PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED": 0, "PCI_ATOMIC_ENABLED_EXT_ATOMIC_DISABLED": 1},
    "SRIOV_IB_ROUTING_MODE": {"GID": 0, "LID": 1},
}
MLX_OK, MLX_ABORTED, MLX_ERROR = 0, 2, 3


def _enum_codes(name: str) -> dict[str, int] | None:
    return _ENUM_CODES.get(re.sub(r"_P\d$", "", name))


def mlx_render(name: str, value: Any) -> str:
    """A normalised value as mlxconfig prints it: True(1), ETH(2), 16."""
    if isinstance(value, bool):
        return "True(1)" if value else "False(0)"
    if isinstance(value, int):
        return str(value)
    shown = MLX_ENUMS.get(name, {}).get(value)
    if shown:
        return shown
    codes = _enum_codes(name)
    if codes and value in codes:
        return f"{value}({codes[value]})"
    return str(value)


def _mlx_parse_value(name: str, param: MlxParam, text: str) -> Any:
    """A `set` value (number or name) normalised like the world keeps it; ValueError when invalid."""
    t = text.strip()
    if isinstance(param.default, bool):
        b = bool_word(t)
        if b is None or t.lower() in ("yes", "no", "on", "off"):
            raise ValueError(t)
        return b
    if isinstance(param.default, int):
        try:
            value = int(t, 0)
        except ValueError:
            raise ValueError(t) from None
        if value < 0:
            raise ValueError(t)
        return value
    codes = _enum_codes(name) or {}
    for word, code in codes.items():
        if t.upper() == word or (t.isdigit() and int(t) == code):
            return word
    raise ValueError(t)


def _mlx_usage() -> str:
    return ("\n        NAME:\n                mlxconfig\n\n        SYNOPSIS:\n"
            "                mlxconfig [Options] <Commands> [Parameters]\n\n"
            "        COMMANDS SUMMARY\n"
            "                q|query                  : query supported configurations.\n"
            "                r|reset                  : reset all configurations to their default value.\n"
            "                s|set                    : set configurations to a specific device.\n\n")


def _mlx_opening(card: Card, dev: str, index: int = 1) -> str:
    return (f"\nDevice #{index}:\n----------\n\n"
            f"{'Device type:':<16}{card.model:<16}\n{'Name:':<16}{card.part_number:<16}\n"
            f"{'Description:':<16}{card.description:<16}\n{'Device:':<16}{dev:<16}\n\n")


def _mlx_header(verbose: bool, new: bool) -> str:
    if verbose:
        line = f"{'Configurations:':<16}{'Default':>36}{'Current':>16}{'Next Boot':>18}"
    else:
        line = f"{'Configurations:':<16}{'Next Boot':>38}"
    if new:
        line += "       New"
    return line + "\n"


def _mlx_row(name: str, values: list[str], star: bool) -> str:
    out = ("*" if star else " ") + f"        {name:<36}"
    width = 0
    for i, v in enumerate(values):
        if i and width > 16:
            out += " "
        cell = f"{v:<16}"
        width = len(cell)
        out += cell
    return out + "\n"


def _mlx_query_text(card: Card, dev: str, names: list[str], verbose: bool, index: int = 1) -> tuple[str, int]:
    text = _mlx_opening(card, dev, index) + _mlx_header(verbose, False)
    for n in names:
        if n not in card.config:
            return text + f"-E- The Device doesn't support {n} parameter\n", MLX_ERROR
    starred = False
    for name in names or list(card.config):
        p = card.config[name]
        if verbose:
            star = p.next_boot != p.default or p.next_boot != p.current
            starred |= star
            text += _mlx_row(name, [mlx_render(name, p.default), mlx_render(name, p.current),
                                    mlx_render(name, p.next_boot)], star)
        else:
            text += _mlx_row(name, [mlx_render(name, p.next_boot)], False)
    if starred:
        text += "The '*' shows parameters with next value different from default/current value.\n"
    return text, MLX_OK


def first_line(stdin: str) -> str:
    return stdin.splitlines()[0].strip() if stdin.strip() else ""


def mlxconfig(ctx: Ctx, argv: list[str], devices: MstDevices) -> Reply:
    """`mlxconfig [-d DEV] [-e] [-y] q|set|reset ...` on the cards `devices` shows (ESXi and Linux alike)."""
    args = argv[1:]
    dev: str | None = None
    yes = verbose = False
    command: str | None = None
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "--dev"):
            if i + 1 >= len(args):
                return Reply(stdout="-E- missing device name\n" + _mlx_usage(), exit=MLX_ERROR)
            dev = args[i + 1]
            i += 2
            continue
        if a in ("-y", "--yes"):
            yes = True
        elif a in ("-e", "--enable_verbosity"):
            verbose = True
        elif a in ("--force", "-a", "--all_attrs"):
            pass
        elif a in ("-h", "--help"):
            return Reply(stdout=_mlx_usage())
        elif a in ("-v", "--version"):
            return Reply(stdout="mlxconfig, mft 4.18.1-14, built on Oct 18 2021, 16:08:32. Git SHA Hash: N/A\n")
        elif a in ("q", "query", "s", "set", "r", "reset"):
            command = {"q": "query", "s": "set", "r": "reset"}.get(a, a)
            i += 1
            break
        else:
            return Reply(stdout=f"-E- invalid argument: {a}\n" + _mlx_usage(), exit=MLX_ERROR)
        i += 1
    rest = args[i:]
    if command is None:
        return Reply(stdout="-E- No command found. For more information please read the help message:\n"
                     + _mlx_usage(), exit=MLX_ERROR)
    if command == "set" and not rest:
        return Reply(stdout="-E- missing configuration arguments. For more information please run mlxconfig "
                     "-h|--help.\n" + _mlx_usage(), exit=MLX_ERROR)
    if command == "reset" and rest:
        return Reply(stdout=f"-E- reset command expects no argument but {len(rest)} argument received\n"
                     + _mlx_usage(), exit=MLX_ERROR)
    if command in ("set", "reset") and dev is None:
        return Reply(stdout=f"-E- {command} command expects device to be specified.\n" + _mlx_usage(),
                     exit=MLX_ERROR)
    if command == "query":
        names = [r.upper() for r in rest]
        if dev is None:
            if not devices.started:
                return Reply(stdout="-E- No devices found, mst might be stopped. You may need to run 'mst start' "
                             "to load MST modules.\n", exit=MLX_ERROR)
            text, rc = "", MLX_OK
            for index, (card, mst_name) in enumerate(devices.cards, 1):
                part, code = _mlx_query_text(card, mst_name, names, verbose, index)
                text, rc = text + part, max(rc, code)
            return Reply(stdout=text, exit=rc)
        found = devices.resolve(dev) if devices.started else None
        if found is None:
            return Reply(stdout="-E- Failed to open the device\n", exit=MLX_ERROR)
        text, rc = _mlx_query_text(found, dev, names, verbose)
        return Reply(stdout=text, exit=rc)
    # set / reset
    assert dev is not None
    card = devices.resolve(dev) if devices.started else None
    if card is None:
        return Reply(stdout="-E- Failed to open the device\n", exit=MLX_ERROR)
    if command == "reset":
        text = f"Reset configuration for device {dev}? (y/n) [n] : "
        if not yes and first_line(ctx.stdin).lower() not in ("y", "yes"):
            return Reply(stdout=text + "-E- Aborted by user.\n", exit=MLX_ABORTED)
        text += "y\n" if yes else ""
        for p in card.config.values():
            p.next_boot = p.default
        return Reply(stdout=text + "Applying... Done!\n-I- Please reboot machine to load new configurations.\n")
    wanted: dict[str, str] = {}
    for arg in rest:
        name, eq, value = arg.partition("=")
        if not eq or not name or not value:
            return Reply(stdout=f"-E- Invalid Configuration argument {arg}\n" + _mlx_usage(), exit=MLX_ERROR)
        if name.upper() in wanted:
            return Reply(stdout=f"-E- Duplicate parameter, {name.upper()}.\n" + _mlx_usage(), exit=MLX_ERROR)
        wanted[name.upper()] = value
    text = _mlx_opening(card, dev) + _mlx_header(verbose, True)
    new_values: dict[str, Any] = {}
    for name, value in wanted.items():
        if name not in card.config:
            return Reply(stdout=text + f"-E- The Device doesn't support {name} parameter\n", exit=MLX_ERROR)
        try:
            new_values[name] = _mlx_parse_value(name, card.config[name], value)
        except ValueError:
            return Reply(stdout=text + f"-E- Cannot set the value {value} for the parameter {name}: Unknown value "
                         f"{value}\n", exit=MLX_ERROR)
    for name, value in new_values.items():
        p = card.config[name]
        cols = ([mlx_render(name, p.default), mlx_render(name, p.current)] if verbose else [])
        text += _mlx_row(name, [*cols, mlx_render(name, p.next_boot), mlx_render(name, value)], False)
    text += "\n Apply new Configuration? (y/n) [n] : "
    if yes:
        text += "y\n"
    elif first_line(ctx.stdin).lower() not in ("y", "yes"):
        return Reply(stdout=text + "-E- Aborted by user.\n", exit=MLX_ABORTED)
    for name, value in new_values.items():
        card.config[name].next_boot = value
    return Reply(stdout=text + "Applying... Done!\n-I- Please reboot machine to load new configurations.\n")


