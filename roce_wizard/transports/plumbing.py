"""The plumbing every transport shares: options, the connect bound, the connection cache, the session guard.

- `TransportOptions` (a base class): the constructor options (`connect_timeout`, `command_timeout`,
  `max_concurrent_connects`, `password_resolver`), their per-target overrides from the inventory
  (`options: {connect_timeout: …, command_timeout: …}`), and `connect_slot()`, the semaphore that bounds
  how many connects run at once (counting `connects` and `peak_connects`, which tests assert).
- `ConnectionCache`: one connection per key (address, port, user) per run. Concurrent callers share one
  connect task; a connect that failed or was cancelled is forgotten so a later call tries again; a cached
  connection its owner calls unusable (closed, lost) is replaced once.
- `SessionBase`: the target and transport a session works for, the closed-session guard and the default
  command timeout.
- `option_flag`, `host_port`, `known_hosts_for`: how targets' options are read, one way for every transport.

Nothing here connects, parses or judges: each transport keeps its own connect, error mapping and host-key /
TLS verification.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar

if TYPE_CHECKING:
    from roce_wizard.model import Target

T = TypeVar("T")

ConnKey = tuple[str, int, str]


def host_port(target: Target, default_port: int) -> tuple[str, int]:
    return target.address, target.port or default_port


def conn_key(target: Target, default_port: int) -> ConnKey:
    """What one cached connection is for: address, port and user."""
    return (*host_port(target, default_port), target.credentials.username)


def option_flag(target: Target, name: str) -> bool:
    """A yes/no inventory option: true only for YAML `true` or the strings true/yes/1."""
    value = target.options.get(name, False)
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1")
    return value is True


def known_hosts_for(target: Target, known_hosts: Path, explicit: bool) -> Path:
    """The known_hosts file for a target: the transport's explicit one (--known-hosts), else the inventory's
    `options.known_hosts`, else the default (`known_hosts`)."""
    option = target.options.get("known_hosts")
    if explicit or not option:
        return known_hosts
    return Path(str(option)).expanduser()


class TransportOptions:
    """Timeouts, the password resolver and the connect bound of a transport."""

    def __init__(
        self,
        *,
        connect_timeout: float = 10,
        command_timeout: float = 60,
        max_concurrent_connects: int = 16,
        password_resolver: Callable[[Target], str | None] | None = None,
    ):
        if max_concurrent_connects < 1:
            raise ValueError("max_concurrent_connects must be at least 1")
        self.password_resolver = password_resolver
        self.connect_timeout = connect_timeout
        self.command_timeout = command_timeout
        self.max_concurrent_connects = max_concurrent_connects
        self._semaphore = asyncio.Semaphore(max_concurrent_connects)
        self._active_connects = 0
        self.peak_connects = 0  # most connects in flight at once (tests check the bound)
        self.connects = 0  # connects attempted (tests check the reuse)

    def _command_timeout(self, target: Target) -> float:
        return float(target.options.get("command_timeout", self.command_timeout))

    def _connect_timeout(self, target: Target) -> float:
        return float(target.options.get("connect_timeout", self.connect_timeout))

    def _password(self, target: Target) -> str | None:
        """The target's password from the resolver (never logged, never in a message)."""
        return self.password_resolver(target) if self.password_resolver is not None else None

    @asynccontextmanager
    async def connect_slot(self) -> AsyncIterator[None]:
        """One of the `max_concurrent_connects` slots, for the time of one connect."""
        async with self._semaphore:
            self._active_connects += 1
            self.connects += 1
            self.peak_connects = max(self.peak_connects, self._active_connects)
            try:
                yield
            finally:
                self._active_connects -= 1

    async def close(self) -> None:
        """Nothing to release here: the options hold no connection. Each transport that keeps connections
        (its ConnectionCache) closes them in its own `close`; `async with` calls whichever is defined."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _retrieve(task: asyncio.Task[Any]) -> None:
    """Mark a connect task's exception as retrieved (every waiter may have been cancelled)."""
    if not task.cancelled():
        task.exception()


def _failed(task: asyncio.Task[Any]) -> bool:
    return task.done() and (task.cancelled() or task.exception() is not None)


class ConnectionCache(Generic[T]):
    """One connect task per key; callers share it (see the module docstring)."""

    def __init__(self) -> None:
        self._tasks: dict[Hashable, asyncio.Task[T]] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    async def get(
        self, key: Hashable, connect: Callable[[], Awaitable[T]], usable: Callable[[T], bool] | None = None
    ) -> T:
        """The connection for `key`, connecting if there is none. A cached connection that is not `usable`
        is dropped and connected once more; the second one is returned as it is (the caller says what an
        unusable one means)."""
        for attempt in range(2):
            task = self._tasks.get(key)
            if task is not None and _failed(task):  # failed while no one was waiting: try again
                del self._tasks[key]
                task = None
            if task is None:
                task = asyncio.ensure_future(connect())
                task.add_done_callback(_retrieve)
                self._tasks[key] = task
            try:
                conn = await asyncio.shield(task)
            except BaseException:
                if self._tasks.get(key) is task and _failed(task):  # let a later call try again
                    del self._tasks[key]
                raise
            if usable is None or usable(conn) or attempt == 1:
                return conn
            if self._tasks.get(key) is task:
                del self._tasks[key]
        raise AssertionError("unreachable")  # pragma: no cover

    def discard(self, key: Hashable, conn: T) -> None:
        """Forget `conn` if it is what `key` holds (its connection was lost)."""
        task = self._tasks.get(key)
        if task is not None and task.done() and not _failed(task) and task.result() is conn:
            del self._tasks[key]

    def clear(self) -> list[asyncio.Task[T]]:
        """Forget every connection; the tasks, for whoever closes them."""
        tasks = list(self._tasks.values())
        self._tasks.clear()
        return tasks

    async def drain(self, cancel_pending: bool = True) -> list[T]:
        """Forget every connection and return the ones that opened, to be closed. Connects still under way
        are cancelled (`cancel_pending`), or awaited when they run in a thread that cannot be stopped."""
        tasks = self.clear()
        if cancel_pending:
            for task in tasks:
                if not task.done():
                    task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        return [r for r in results if not isinstance(r, BaseException)]


class SessionBase:
    """What every session starts with: its transport, its target and the closed-session guard."""

    transport: TransportOptions

    def __init__(self, transport: TransportOptions, target: Target):
        self.transport = transport
        self.target = target
        self._closed = False

    def _begin(self, timeout: float | None) -> float:
        """Refuse a closed session (a programming error, not a target's state); the command's timeout."""
        if self._closed:
            raise RuntimeError(f"session to {self.target.name} is closed")
        return timeout if timeout is not None else self.transport._command_timeout(self.target)

    async def close(self) -> None:
        """Stop using this session; the connection stays open for other sessions until the transport closes."""
        self._closed = True
