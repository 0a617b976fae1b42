"""The output lines behind a switch finding: the lines about one port (by the name the switch prints) and/or
matching a check's patterns.

Doctor judges every RoCE port of a switch in several checks (RW501–RW507), each quoting lines of the same
output (a running config, `show interfaces`). Scanning the whole output with a regex per port and check made
the switch stage quadratic in ports (issue 16: 53% of doctor's CPU at 64 hosts). Each output is indexed once
instead — its lines, the words of each line, and per pattern the lines it matches — and kept for the next
checks of the same switch, so a port's lookup is a dict lookup. The lines returned are exactly those of the
scan (tests/unit/test_switch_evidence.py holds the scan and compares on every switch output in tests/data).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict

from roce_wizard.checklib.switch import ALL_PORTS, UNLISTED_PORTS, Item

__all__ = ["evidence_lines"]

# The separators around a port name: the scan's port pattern is `(^|\s|")NAME(\s|:|"|$)`, so a name found
# there starts a word of the line split at these characters, and that word is the name's own first word.
_SPLIT = re.compile(r'[\s":]+')
_KEEP = 32  # outputs kept indexed: the engine evaluates a target's checks one after another


class _Index:
    """One output, split into lines once; words -> line numbers, pattern -> line numbers, port -> line numbers,
    each built at its first use."""

    __slots__ = ("_lock", "_words", "lines", "patterns", "ports")

    def __init__(self, raw: str):
        self.lines = raw.splitlines()
        self.patterns: dict[str, tuple[int, ...]] = {}
        self.ports: dict[str, tuple[int, ...]] = {}
        self._words: dict[str, list[int]] | None = None
        self._lock = threading.Lock()

    def words(self) -> dict[str, list[int]]:
        with self._lock:
            if self._words is None:
                words: dict[str, list[int]] = {}
                for i, line in enumerate(self.lines):
                    for word in set(_SPLIT.split(line)):
                        if word:
                            words.setdefault(word, []).append(i)
                self._words = words
            return self._words

    def port(self, name: str) -> tuple[int, ...]:
        hit = self.ports.get(name)
        if hit is None:
            port_re = re.compile(rf"(^|\s|\"){re.escape(name)}(\s|:|\"|$)")
            first = _SPLIT.split(name, 1)[0]
            # a name that starts with a separator starts no word: look at every line
            candidates = self.words().get(first, ()) if first else range(len(self.lines))
            hit = self.ports[name] = tuple(i for i in candidates if port_re.search(self.lines[i]))
        return hit

    def pattern(self, pattern: str) -> tuple[int, ...]:
        hit = self.patterns.get(pattern)
        if hit is None:
            regex = re.compile(pattern, re.IGNORECASE)
            hit = self.patterns[pattern] = tuple(i for i, line in enumerate(self.lines) if regex.search(line))
        return hit


_CACHE: OrderedDict[str, _Index] = OrderedDict()
_CACHE_LOCK = threading.Lock()


def _index(raw: str) -> _Index:
    with _CACHE_LOCK:
        index = _CACHE.get(raw)
        if index is not None:
            _CACHE.move_to_end(raw)
            return index
    index = _Index(raw)
    with _CACHE_LOCK:
        index = _CACHE.setdefault(raw, index)
        while len(_CACHE) > _KEEP:
            _CACHE.popitem(last=False)
    return index


def evidence_lines(raw: str | None, item: Item, *patterns: str, limit: int = 6) -> str | None:
    """The output lines about this port (by its printed name) and/or matching `patterns` (case-insensitive,
    searched per line), in output order, at most `limit`."""
    if not raw:
        return None
    index = _index(raw)
    name = item.printed_as if item.printed_as not in (None, ALL_PORTS, UNLISTED_PORTS) else None
    hits = [index.pattern(p) for p in patterns]
    if name:
        hits.append(index.port(name))
    if limit >= 0:  # the first `limit` of the union are among the first `limit` of each
        chosen = sorted({i for h in hits for i in h[:limit]})[:limit]
    else:
        chosen = sorted({i for h in hits for i in h})[:limit]
    return "\n".join(index.lines[i].rstrip() for i in chosen) or None
