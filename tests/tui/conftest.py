"""Helpers for the wizard's Pilot tests: wait on the app's own state, never on wall-clock sleeps alone."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.pilot import Pilot


async def until(pilot: Pilot, condition: Callable[[], bool], timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        await pilot.pause(0.05)


def idle(app) -> Callable[[], bool]:  # noqa: ANN001
    return lambda: app.busy is None and not any(w.is_running for w in app.workers)
