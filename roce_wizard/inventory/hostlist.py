"""Slurm-style host ranges: ``esx-[01-16]``, ``n[1-3,7,10-11]``, ``r[1-2]-n[01-02]`` and ``a-[1-2],b``.

An inventory entry's name may be a range (one entry then stands for one target per name), and any string
field holding a range of the same length is zipped with the names (seed 001's incast script).
"""

from __future__ import annotations

import itertools
import re

# A hostlist bigger than this is a typo (esx-[1-10000]), not a cluster.
MAX_HOSTLIST = 4096


class HostlistError(ValueError):
    """A malformed Slurm-style host range."""


# --------------------------------------------------------------------------------------------
# Host ranges (Slurm syntax: seed 001's get_ids, done properly)

_RANGE_ITEM = re.compile(r"^(\d+)(?:-(\d+))?$")


def expand_hostlist(text: str) -> list[str]:
    """Expand ``esx-[01-16]``, ``n[1-3,7,10-11]``, ``r[1-2]-n[01-02]`` and ``a-[1-2],b``.

    Zero padding of the lower bound is kept (``[01-16]`` → 01…16, ``[8-10]`` → 8, 9, 10); several
    bracket groups expand as a cartesian product, leftmost slowest; top-level commas separate
    independent patterns. Raises :class:`HostlistError` on reversed ranges and bad syntax.
    """
    if not isinstance(text, str):
        raise HostlistError(f"expected a string, got {text!r}")
    out: list[str] = []
    for item in _split_top(text):
        out.extend(_expand_one(item))
        if len(out) > MAX_HOSTLIST:
            raise HostlistError(f"{text!r} expands to more than {MAX_HOSTLIST} names")
    return out


def _split_top(text: str) -> list[str]:
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            if depth:
                raise HostlistError(f"nested '[' in {text!r}")
            depth = 1
        elif ch == "]":
            if not depth:
                raise HostlistError(f"']' without '[' in {text!r}")
            depth = 0
        elif ch == "," and not depth:
            items.append(text[start:i])
            start = i + 1
    if depth:
        raise HostlistError(f"unclosed '[' in {text!r}")
    items.append(text[start:])
    items = [it.strip() for it in items]
    if any(not it for it in items):
        raise HostlistError(f"empty name in {text!r}")
    return items


def _expand_one(item: str) -> list[str]:
    parts: list[list[str]] = []
    pos = 0
    for m in re.finditer(r"\[([^\]]*)\]", item):
        parts.append([item[pos : m.start()]])
        parts.append(_expand_group(m.group(1), item))
        pos = m.end()
    parts.append([item[pos:]])
    total = 1
    for p in parts:
        total *= len(p)
        if total > MAX_HOSTLIST:
            raise HostlistError(f"{item!r} expands to more than {MAX_HOSTLIST} names")
    return ["".join(combo) for combo in itertools.product(*parts)]


def _expand_group(body: str, item: str) -> list[str]:
    if not body.strip():
        raise HostlistError(f"empty range '[]' in {item!r}")
    values: list[str] = []
    for piece in body.split(","):
        piece = piece.strip()
        m = _RANGE_ITEM.match(piece)
        if not m:
            raise HostlistError(
                f"bad range {piece!r} in {item!r}: expected N or N-M (digits), e.g. [01-16] or [1-3,7]"
            )
        lo_s, hi_s = m.group(1), m.group(2)
        if hi_s is None:
            values.append(lo_s)
            continue
        lo, hi = int(lo_s), int(hi_s)
        if lo > hi:
            raise HostlistError(f"reversed range {piece!r} in {item!r}: {lo} > {hi}")
        if hi - lo >= MAX_HOSTLIST:
            raise HostlistError(f"range {piece!r} in {item!r} has more than {MAX_HOSTLIST} values")
        width = len(lo_s)
        values.extend(str(n).zfill(width) for n in range(lo, hi + 1))
    return values
