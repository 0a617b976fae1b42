"""The plumbing the transports share (roce_wizard/transports/plumbing.py): one connection per key, the connect
bound, per-target timeouts, the closed-session guard — and that every transport is built on it."""

from __future__ import annotations

import asyncio

import pytest

from roce_wizard.model import Credentials, Target, TargetKind
from roce_wizard.transports.plumbing import ConnectionCache, SessionBase, TransportOptions
from roce_wizard.transports.redfish import RedfishTransport
from roce_wizard.transports.replay import ReplayTransport
from roce_wizard.transports.ssh import SshTransport
from roce_wizard.transports.switch import SwitchTransport
from roce_wizard.transports.vsphere import VSphereTransport

TRANSPORTS = [SshTransport, VSphereTransport, RedfishTransport, SwitchTransport]


def target(**options: object) -> Target:
    return Target(name="t1", kind=TargetKind.LINUX, address="127.0.0.1", port=2222,
                  credentials=Credentials(username="root"), options=dict(options))


async def test_concurrent_callers_share_one_connect():
    cache: ConnectionCache[object] = ConnectionCache()
    started = 0

    async def connect() -> object:
        nonlocal started
        started += 1
        await asyncio.sleep(0.01)
        return object()

    conns = await asyncio.gather(*(cache.get("k", connect) for _ in range(5)))
    assert started == 1 and all(c is conns[0] for c in conns)
    assert await cache.get("k", connect) is conns[0] and started == 1


async def test_a_failed_connect_is_forgotten_and_the_next_call_connects_again():
    cache: ConnectionCache[str] = ConnectionCache()
    answers = iter([OSError("refused"), "conn"])

    async def connect() -> str:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    with pytest.raises(OSError):
        await cache.get("k", connect)
    assert len(cache) == 0
    assert await cache.get("k", connect) == "conn"


async def test_a_connect_that_failed_while_no_one_waited_is_tried_again():
    cache: ConnectionCache[str] = ConnectionCache()
    gate = asyncio.Event()
    calls = 0

    async def connect() -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            await gate.wait()
            raise OSError("gone")
        return "second"

    waiter = asyncio.ensure_future(cache.get("k", connect))
    await asyncio.sleep(0)
    waiter.cancel()  # the only waiter leaves; the connect goes on and fails
    gate.set()
    await asyncio.sleep(0.01)
    assert await cache.get("k", connect) == "second"


async def test_an_unusable_cached_connection_is_replaced_once():
    cache: ConnectionCache[dict[str, bool]] = ConnectionCache()
    made: list[dict[str, bool]] = []

    async def connect() -> dict[str, bool]:
        made.append({"closed": False})
        return made[-1]

    first = await cache.get("k", connect, usable=lambda c: not c["closed"])
    first["closed"] = True
    second = await cache.get("k", connect, usable=lambda c: not c["closed"])
    assert second is not first and len(made) == 2
    cache.discard("k", first)  # not what the key holds any more: kept
    assert await cache.get("k", connect) is second


async def test_drain_cancels_connects_under_way_and_returns_the_open_ones():
    cache: ConnectionCache[str] = ConnectionCache()

    async def slow() -> str:
        await asyncio.sleep(10)
        return "never"

    async def fast() -> str:
        return "open"

    assert await cache.get("a", fast) == "open"
    pending = asyncio.ensure_future(cache.get("b", slow))
    await asyncio.sleep(0)
    assert await cache.drain() == ["open"]
    with pytest.raises(asyncio.CancelledError):
        await pending
    assert len(cache) == 0


async def test_connect_slots_bound_concurrency_and_count():
    opts = TransportOptions(max_concurrent_connects=2)

    async def one() -> None:
        async with opts.connect_slot():
            await asyncio.sleep(0.01)

    await asyncio.gather(*(one() for _ in range(5)))
    assert opts.connects == 5 and opts.peak_connects == 2


def test_per_target_timeouts_and_the_password_resolver():
    opts = TransportOptions(connect_timeout=3, command_timeout=7, password_resolver=lambda t: f"pw-{t.name}")
    assert opts._connect_timeout(target()) == 3 and opts._command_timeout(target()) == 7
    assert opts._connect_timeout(target(connect_timeout="1.5")) == 1.5
    assert opts._command_timeout(target(command_timeout=90)) == 90
    assert opts._password(target()) == "pw-t1" and TransportOptions()._password(target()) is None


async def test_a_closed_session_refuses_commands():
    session = SessionBase(TransportOptions(command_timeout=5), target(command_timeout=9))
    assert session._begin(None) == 9 and session._begin(2) == 2
    await session.close()
    with pytest.raises(RuntimeError, match="session to t1 is closed"):
        session._begin(None)


@pytest.mark.parametrize("cls", [*TRANSPORTS, ReplayTransport], ids=lambda c: c.__name__)
def test_every_transport_is_built_on_the_plumbing(cls):
    assert issubclass(cls, TransportOptions)


@pytest.mark.parametrize("cls", TRANSPORTS, ids=lambda c: c.__name__)
def test_every_transport_refuses_a_zero_connect_bound(cls):
    with pytest.raises(ValueError, match="at least 1"):
        cls(max_concurrent_connects=0)
