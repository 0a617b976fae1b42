"""Helpers shared by the switch parsers: the switch prompt, `port_key`, row and JSON helpers."""

from __future__ import annotations

import functools
import re
from typing import Any

from roce_wizard.parsers.base import is_digits, is_elision, lines, to_bool
from roce_wizard.parsers.switch.structured import (
    load_structured,
)

# --------------------------------------------------------------------------------------------
# helpers

# `wedge>cmd`, `sw-eos-1#cmd`, `sw(config-if-Et1/1-3/4)#cmd`, `sw [standalone: master] (config) # cmd`,
# `100g-mlnx(config) # cmd`, `sw-os10-1(conf-if-eth1/1/1)#`.
SWITCH_PROMPT_RE = re.compile(
    r"^\s*(?P<host>[A-Za-z0-9][\w.-]*)(?:\s+\[[^\]]*\])?\s*(?:\((?P<mode>[^)]*)\))?\s*(?P<sign>[#>])\s?(?P<cmd>.*)$"
)
_TYPE_WORD = re.compile(r"^(ethernet|ether|eth|et|e|swp|port-channel|po|mpo|mlag-port-channel|vlan|mgmt|management)\s*",
                        re.IGNORECASE)


def switch_prompt_command(line: str) -> tuple[str | None, str] | None:
    """(config mode or None, command) for a switch prompt line; None for anything else."""
    m = SWITCH_PROMPT_RE.match(line)
    if m is None:
        return None
    host = m.group("host")
    # a data line is not a prompt: the host part of a prompt has no spaces and is never all digits
    if is_digits(host):
        return None
    return m.group("mode"), m.group("cmd").strip()


@functools.lru_cache(maxsize=1 << 16)  # the switch checks ask it for every port of a switch, again and again
def port_key(name: str | None) -> tuple[str, tuple[int, ...]] | None:
    """One key for every spelling of an interface name: ("eth", (1, 3)) for Et1/3, Ethernet1/3,
    eth1/3, `ethernet 1/3`, `Eth 1/3`; ("swp", (16,)) for swp16; None when it names no port."""
    if not name:
        return None
    s = name.strip()
    m = _TYPE_WORD.match(s)
    word = m.group(1).lower() if m else ""
    rest = s[m.end():] if m else s
    if not re.fullmatch(r"[0-9]+(?:[/.:][0-9]+)*", rest):
        return None
    kind = {"ethernet": "eth", "ether": "eth", "eth": "eth", "et": "eth", "e": "eth", "": "eth",
            "port-channel": "po", "po": "po", "mlag-port-channel": "mpo", "management": "mgmt"}.get(word, word)
    return kind, tuple(int(x) for x in re.split(r"[/.:]", rest))


def _ints(text: str | None) -> list[int]:
    """`3`, `3,4`, `3 4`, `0-2,4` -> ints (0..63); `-` / empty -> []."""
    out: list[int] = []
    for part in re.split(r"[,\s]+", (text or "").strip()):
        m = re.fullmatch(r"([0-9]+)(?:-([0-9]+))?", part)
        if m:
            a, b = int(m.group(1)), int(m.group(2) or m.group(1))
            out.extend(range(a, b + 1) if a <= b else [])
    return out


def _output_lines(text: str) -> list[str]:
    """Lines without pasted prompts, command lines and author elisions (blank lines kept)."""
    out = []
    for ln in lines(text):
        if switch_prompt_command(ln) is not None or is_elision(ln):
            continue
        out.append(ln)
    return out


def _json(text: str) -> Any:
    """JSON, or the Python repr a script printed of it (structured.load_structured); None for text."""
    return load_structured(text)


def _has(text: str, *patterns: str, flags: int = re.MULTILINE) -> bool:
    return all(re.search(p, text, flags) for p in patterns)


def _onoff(value: str | None) -> bool | None:
    return to_bool(value) if value is not None else None
