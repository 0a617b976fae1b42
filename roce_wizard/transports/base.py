"""What every transport speaks: command results, connect errors, the Session/Transport protocols.

A transport opens sessions on targets; a session runs commands. Non-zero exits and timeouts are
ordinary results (`CommandResult`); only failing to reach or to keep reaching a target raises
`TransportError`, whose `kind` says why and whose message says what to do about it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from roce_wizard.model import Target


@dataclass
class CommandResult:
    """One command as run on a target. `exit_status` is None when it timed out or was killed."""

    command: str
    stdout: str
    stderr: str
    exit_status: int | None
    duration_s: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_status == 0 and not self.timed_out

    def to_dict(self) -> dict[str, object]:
        """What the run log records (and a replay reads back)."""
        return {
            "command": self.command,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "exit_status": self.exit_status,
            "duration_s": self.duration_s,
            "timed_out": self.timed_out,
        }


class ConnectErrorKind(str, enum.Enum):
    DNS = "dns"  # the name does not resolve
    REFUSED = "refused"  # nothing listens on the port
    TIMEOUT = "timeout"  # no answer (or no SSH banner / handshake) within the connect timeout
    AUTH = "auth"  # every authentication method was rejected
    HOSTKEY_UNKNOWN = "hostkey_unknown"  # the host has no entry in known_hosts
    HOSTKEY_CHANGED = "hostkey_changed"  # the host offers a key other than the one recorded
    UNREACHABLE = "unreachable"  # no route, or the connection was already gone (host rebooting)
    DROPPED = "dropped"  # the connection closed while a command was running (TransportError.command)
    PROTOCOL = "protocol"  # the peer speaks SSH badly, or not at all
    TLS = "tls"  # HTTPS peer (BMC, vCenter) whose certificate does not verify: untrusted CA, wrong name, expired
    CREDENTIAL = "credential"  # the inventory's password reference did not resolve here (env unset, keyring empty)


class TransportError(Exception):
    """A target could not be reached (or stopped being reachable). The message is for humans."""

    def __init__(self, kind: ConnectErrorKind, target: Target | None, message: str, command: str | None = None):
        super().__init__(message)
        self.kind = ConnectErrorKind(kind)
        self.target = target
        self.message = message
        self.command = command  # the command that was running when the connection closed (kind DROPPED)

    @property
    def target_name(self) -> str:
        return self.target.name if self.target is not None else ""

    def __repr__(self) -> str:
        return f"TransportError({self.kind.value}, {self.target_name!r}, {self.message!r})"


@runtime_checkable
class Session(Protocol):
    """A live channel to one target. `run` never raises for a failing command, only for a lost target."""

    async def run(self, command: str, timeout: float | None = None) -> CommandResult: ...

    async def close(self) -> None: ...


@runtime_checkable
class Transport(Protocol):
    """Opens sessions on targets; `close` tears every connection down."""

    async def session(self, target: Target) -> Session: ...

    async def close(self) -> None: ...
