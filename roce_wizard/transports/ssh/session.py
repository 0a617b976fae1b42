"""`SshSession`: one command at a time over a cached connection; a lost connection is a TransportError."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

import asyncssh

from roce_wizard.model import Target
from roce_wizard.transports.base import CommandResult, ConnectErrorKind, TransportError
from roce_wizard.transports.plumbing import SessionBase, host_port
from roce_wizard.transports.ssh.known_hosts import DEFAULT_PORT, log

if TYPE_CHECKING:
    from roce_wizard.transports.ssh.connect import SshTransport


class SshSession(SessionBase):
    """Commands on one target over the transport's shared connection to it.

    A session lives as long as its connection: once the connection drops, `run` raises
    TransportError (dropped: during that command; unreachable: afterwards); ask the transport for a
    new session to reconnect.
    """

    transport: SshTransport

    def __init__(self, transport: SshTransport, target: Target, conn: asyncssh.SSHClientConnection):
        super().__init__(transport, target)
        self._conn = conn

    @property
    def connected(self) -> bool:
        return not self._closed and not self._conn.is_closed()

    def _lost(self, detail: str, command: str | None = None) -> TransportError:
        self.transport._discard(self.target, self._conn)
        host, port = _host_port(self.target)
        if command is not None:  # what was running is what the operator needs to know
            return TransportError(
                ConnectErrorKind.DROPPED,
                self.target,
                f"the SSH connection to {self.target.name} ({host}:{port}) closed while `{command}` was running"
                f"{' (' + detail + ')' if detail else ''}; the host may be rebooting or gone from the network",
                command=command,
            )
        return TransportError(
            ConnectErrorKind.UNREACHABLE,
            self.target,
            f"lost the SSH connection to {self.target.name} ({host}:{port}){': ' + detail if detail else ''}; "
            "the host may be rebooting or gone from the network — open a new session to reconnect",
        )

    async def run(self, command: str, timeout: float | None = None) -> CommandResult:
        timeout = self._begin(timeout)
        conn = self._conn
        if conn.is_closed():
            raise self._lost("connection already closed")
        started = time.monotonic()
        proc: asyncssh.SSHClientProcess[str] | None = None
        try:
            async with asyncio.timeout(timeout):
                proc = await conn.create_process(
                    command, stdin=asyncssh.DEVNULL, encoding="utf-8", errors="replace"
                )
                completed = await proc.wait()
        except TimeoutError:
            if conn.is_closed():
                raise self._lost("", command) from None
            stdout, stderr = proc.collect_output() if proc is not None else ("", "")
            if proc is not None:
                _abandon(proc)
            duration = time.monotonic() - started
            log.debug("%s: command timed out after %.1fs: %s", self.target.name, duration, command)
            return CommandResult(
                command=command,
                stdout=_text(stdout),
                stderr=_text(stderr),
                exit_status=None,
                duration_s=duration,
                timed_out=True,
            )
        except asyncssh.ChannelOpenError as exc:
            if conn.is_closed():
                raise self._lost(exc.reason, command) from exc
            host, port = _host_port(self.target)
            raise TransportError(
                ConnectErrorKind.PROTOCOL,
                self.target,
                f"{self.target.name} ({host}:{port}) refused to open a command channel: {exc.reason}",
            ) from exc
        except (asyncssh.Error, OSError) as exc:  # ConnectionLost, DisconnectError, BrokenPipe, reset...
            raise self._lost(str(exc) or type(exc).__name__, command) from exc
        duration = time.monotonic() - started
        if completed.exit_status is None and completed.exit_signal is None and conn.is_closed():
            # the channel ended because the connection did: no verdict from the command
            raise self._lost("", command)
        exit_status = completed.exit_status if completed.exit_status is not None else completed.returncode
        return CommandResult(
            command=command,
            stdout=_text(completed.stdout),
            stderr=_text(completed.stderr),
            exit_status=exit_status,
            duration_s=duration,
        )


def _text(data: Any) -> str:
    if data is None:
        return ""
    if isinstance(data, bytes):
        return data.decode("utf-8", errors="replace")
    return str(data)


def _abandon(proc: asyncssh.SSHClientProcess[Any]) -> None:
    """Stop a command that overran its timeout; the connection stays up."""
    try:
        proc.terminate()  # a signal request; servers may ignore it
    except Exception:  # noqa: BLE001 - best effort
        pass
    try:
        proc.close()
    except Exception:  # noqa: BLE001 - best effort
        pass


def _host_port(target: Target) -> tuple[str, int]:
    return host_port(target, DEFAULT_PORT)
