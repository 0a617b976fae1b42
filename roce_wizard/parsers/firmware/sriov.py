"""The sysfs SR-IOV VF count: sriov_numvfs / sriov_totalvfs."""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    lone_integers,
)

# ---------------------------------------------------------------------------------------------
# sriov_numvfs / sriov_totalvfs

_SRIOV_ATTR_RE = re.compile(r"\b(sriov_numvfs|sriov_totalvfs)\b")


def _lone_integers(text: str) -> tuple[list[int], list[str]]:
    return lone_integers(text, ("cat", "esxcli", "echo", "less", "more", "head"))


def parse_sriov_numvfs(text: str) -> Facts:
    values, commands = _lone_integers(text)
    if not values:
        raise ParseError("sriov_numvfs", "expected a bare integer (the content of sriov_numvfs/sriov_totalvfs)")
    facts: dict[str, Any] = {"value": values[0] if len(values) == 1 else None, "values": values}
    for c in commands:
        m = _SRIOV_ATTR_RE.search(c)
        if m:
            facts["attribute"] = m.group(1)
            p = re.search(r"(/sys/\S*" + m.group(1) + r")", c)
            if p:
                facts["path"] = p.group(1)
            b = re.search(r"/([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9a-fA-F])/", c)
            if b:
                facts["pci"] = b.group(1)
            break
    return facts


def sniff_sriov_numvfs(text: str) -> int:
    values, commands = _lone_integers(text)
    if len(values) != 1 or not 0 <= values[0] < 10**5:
        return 0
    if any(_SRIOV_ATTR_RE.search(c) for c in commands):
        return 30
    return 1
