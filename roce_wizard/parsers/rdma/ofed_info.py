"""`ofed_info`: the MLNX_OFED version."""

from __future__ import annotations

import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    body_lines,
    is_bare_command,
    prompt_command,
)
from roce_wizard.parsers.rdma.common import _numbered

# ---------------------------------------------------------------------------------------------
# ofed_info

_OFED_LINE = re.compile(
    r"^\s*(?P<prefix>[A-Za-z][\w]*(?:-[A-Za-z][\w]*)*)-(?P<ver>[0-9]+(?:\.[0-9]+)+(?:-[\w.]+)*?)"
    r"(?:\s*\((?P<base>[^)]*)\))?\s*:?\s*$"
)
_OFED_FLAVORS = {"MLNX_OFED_LINUX": "MLNX_OFED", "MLNX_EN": "MLNX_EN", "mlnx-en": "MLNX_EN",
                 "OFED-internal": "OFED-internal", "OFED": "OFED", "DOCA": "DOCA"}


def parse_ofed_info(text: str) -> Facts:
    for n, ln in _numbered(text):
        if not ln.strip() or prompt_command(ln) is not None or is_bare_command(ln, ("ofed_info",)):
            continue
        m = _OFED_LINE.match(ln)
        if m:
            prefix = m.group("prefix")
            facts: Facts = {"version": m.group("ver"), "flavor": _OFED_FLAVORS.get(prefix, prefix),
                            "raw": ln.strip()}
            if m.group("base"):
                facts["base"] = m.group("base")
            return facts
        m = re.fullmatch(r"\s*([0-9]+\.[0-9]+-[0-9.]+)\s*", ln)  # ofed_info -n
        if m:
            return {"version": m.group(1), "flavor": None, "raw": ln.strip()}
    raise ParseError("ofed_info", "no `<FLAVOR>-<version>:` line found")


def sniff_ofed_info(text: str) -> int:
    body = body_lines(text, ("ofed_info",))
    if not body:
        return 0
    m = _OFED_LINE.match(body[0])
    if m and m.group("prefix") in _OFED_FLAVORS:
        return 95
    if m and len(body) == 1:
        return 40
    return 0
