"""Transports kept for a whole run: one Redfish login per BMC for every round of `fix`, not one per phase.

A run's phases (a round's look, its fixes, a reboot, the next look) each ask the run's factory for transports
and close them when done: a host reboot drops its SSH connections, so SSH (ESXi, guests, Linux) and the
other kinds are built fresh per phase as before. A BMC is a machine of its own: rebooting the host it
manages leaves its Redfish service and the tool's session on it alone. So the BMC transport is built
once and handed to every phase; a phase's close() of it does nothing, `aclose()` at the end of the run
logs out. What the transport already does for a session kept long covers the time between rounds (a
reboot can take 20 minutes): a connection the BMC closed while idle is replaced (redfish.client), a
session token the BMC expired is answered by one login more (redfish.session).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from roce_wizard.model import TargetKind

# the kinds whose transport serves the whole run (their connections outlive a host reboot)
KEPT_KINDS = frozenset({TargetKind.BMC})


class _RunScoped:
    """A transport a phase may use and close: the close is the run's, at its end (`KeptTransports.aclose`)."""

    def __init__(self, inner: Any):
        self.inner = inner

    def __getattr__(self, name: str) -> Any:  # session(), stats, warnings, …: the transport's own
        return getattr(self.inner, name)

    async def close(self) -> None:
        """A phase is done with it; the run is not."""


class KeptTransports:
    """A run's transport factory (`RunSetup.transports`): fresh transports per call, but one transport per
    kind in KEPT_KINDS for the whole run. A factory that returns one transport (a replay) is passed through."""

    def __init__(self, make: Callable[[], Any], kinds: frozenset[TargetKind] = KEPT_KINDS):
        self.make = make
        self.kinds = kinds
        self.kept: dict[TargetKind, _RunScoped] = {}

    def __call__(self) -> Any:
        fresh = self.make()
        if not isinstance(fresh, Mapping):
            return fresh
        out = dict(fresh)
        for kind in self.kinds & out.keys():
            if any(t is out[kind] for k, t in out.items() if k is not kind):
                continue  # shared with a kind built fresh (one replay for all): closed with it, not kept
            # a fresh transport connects only when asked for a session: the one not kept was never used
            out[kind] = self.kept.setdefault(kind, _RunScoped(out[kind]))
        return out

    async def aclose(self) -> None:
        """The end of the run: log out of what was kept (once per transport)."""
        kept, self.kept = self.kept, {}
        for used in {id(t.inner): t.inner for t in kept.values()}.values():
            await used.close()
