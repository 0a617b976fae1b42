"""A connection that closes in the middle of a run: what the host had answered still counts.

The engine calls `record_drop` when a target's transport raises after the connection was made
(a host rebooting, sshd restarted, a switch's CLI session cut). The connection fact says what
happened — which command was running — for RW001 to report, instead of a connect error such as
"no route to host"; every probe that had not answered by then becomes "could not run" with that
reason, and the probes that did answer are judged as usual.
"""

from __future__ import annotations

from collections.abc import Iterable

from roce_wizard.model import Facts, ProbeFailure
from roce_wizard.transports.base import TransportError


def drop_reason(exc: TransportError) -> str:
    if exc.command:
        return f"the connection closed while `{exc.command}` was running"
    return f"the connection was lost during the run ({exc.message})"


def record_drop(facts: Facts, exc: TransportError, not_answered: Iterable[str], transport: str, address: str) -> None:
    """Mark the connection as dropped mid-run and every probe in `not_answered` that has no facts
    (and no failure of its own) as not run."""
    facts.data["connection"] = {"ok": False, "dropped": True, "error_kind": exc.kind.value, "message": exc.message,
                                "command": exc.command, "transport": transport, "address": address}
    reason = f"could not run: {drop_reason(exc)}"
    for name in not_answered:
        if name not in facts.data and name not in facts.failures:
            facts.failures[name] = ProbeFailure(name, reason)
