"""Quoting and validating the inventory values that go into remote shell commands (`quote`, `validate_token`)."""

from __future__ import annotations

import re
import shlex

quote = shlex.quote

# Strict shapes for inventory values that end up in commands. `validate_token(value, "netdev")`.
TOKEN_PATTERNS: dict[str, str] = {
    "netdev": r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,14}",  # Linux IFNAMSIZ-1
    "vmnic": r"vmnic[0-9]{1,4}",
    "vmk": r"vmk[0-9]{1,4}",
    "rdma_dev": r"[A-Za-z0-9_]{1,64}",  # mlx5_1, vmrdma0
    "pci": r"(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]",
    "ipv4": r"(?:(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])",
    "ipv4_cidr": (
        r"(?:(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])"
        r"/(?:3[0-2]|[12]?[0-9])"
    ),
    "int": r"[0-9]{1,10}",
    "name": r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}",  # VM, portgroup, switch names without spaces
    "path": r"/[A-Za-z0-9_./+-]{0,4095}",
}


def validate_token(value: object, pattern: str | re.Pattern[str]) -> str:
    """Return `value` if it entirely matches `pattern` (a regex, or a TOKEN_PATTERNS name).

    Raises ValueError otherwise, so that no inventory value reaches a shell unchecked.
    """
    if isinstance(pattern, re.Pattern):
        regex = pattern
    else:
        regex = re.compile(TOKEN_PATTERNS.get(pattern, pattern))
    if not isinstance(value, str) or regex.fullmatch(value) is None or "\n" in value:
        raise ValueError(f"refusing to use {value!r} in a command: it does not match {regex.pattern!r}")
    return value
