"""A target's virtual files, computed only when a command line first uses them.

Most commands a client sends (`esxcli …`, `ethtool -S`, `ip -j addr`, `rdma link`) never read a file, yet
building a guest's /sys tree (every GID slot of every RDMA port, its unreadable entries) cost five times the
command itself (benchmarks/PROFILE.md, 64 hosts). `LazyFiles` defers that work to the first lookup, made
against the world as it is at that moment; a line that reads no file never builds it. Nothing is kept
between command lines: each line gets its own, so a fault, a fix or a reboot is seen by the next line exactly
as before.

The one difference: a line whose program changes the world before the line's first file lookup
(`ip link set dev X mtu 4000; cat /sys/class/net/X/mtu`) now reads the changed value, as the real machine
shows it; the lab used to answer from the files it built before the line started (9000 there). Lines that
only read (every probe of doctor and validate, the counter snapshots) answer exactly as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import Any


class LazyFiles(MutableMapping[str, str]):
    """path -> content, loaded by `load()` on first use (reads, writes, iteration, len, `in`)."""

    __slots__ = ("_data", "_load")

    def __init__(self, load: Callable[[], dict[str, str]]):
        self._load: Callable[[], dict[str, str]] | None = load
        self._data: dict[str, str] | None = None

    @property
    def loaded(self) -> bool:
        return self._data is not None

    @property
    def data(self) -> dict[str, str]:
        if self._data is None:
            assert self._load is not None
            self._data, self._load = self._load(), None
        return self._data

    def __getitem__(self, key: str) -> str:
        return self.data[key]

    def __setitem__(self, key: str, value: str) -> None:
        self.data[key] = value

    def __delitem__(self, key: str) -> None:
        del self.data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def __contains__(self, key: object) -> bool:
        return key in self.data

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def clear(self) -> None:  # what the shell does before it takes the reloaded files: no need to load first
        self._data, self._load = {}, None

    def update(self, *args: Any, **kw: str) -> None:  # type: ignore[override]
        self.data.update(*args, **kw)

    def __repr__(self) -> str:
        return f"LazyFiles({self._data!r})" if self.loaded else "LazyFiles(<not loaded>)"
