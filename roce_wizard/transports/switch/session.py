"""`SwitchSession` and the connection under it (`_Conn`: one netmiko session, commands serialised, a lost
channel is a TransportError)."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from roce_wizard.commands.switch_config import CONFIG_MARK
from roce_wizard.model import Target
from roce_wizard.transports.base import CommandResult, ConnectErrorKind, TransportError
from roce_wizard.transports.plumbing import SessionBase
from roce_wizard.transports.switch.common import (
    CLI_ERROR,
    _host_port,
    _Lost,
    _MaskedLog,
    _Timeout,
)
from roce_wizard.transports.switch.config_apply import _ConfigApply

if TYPE_CHECKING:
    from roce_wizard.transports.switch.connect import SwitchTransport


class SwitchSession(SessionBase):
    """Commands on one switch over the transport's netmiko connection to it."""

    transport: SwitchTransport

    def __init__(self, transport: SwitchTransport, target: Target, conn: _Conn):
        super().__init__(transport, target)
        self._conn = conn

    async def run(self, command: str, timeout: float | None = None) -> CommandResult:
        timeout = self._begin(timeout)
        if command.startswith(CONFIG_MARK + " "):
            return await self._conn.configure(command, timeout, self.transport.verify)
        return await self._conn.run(command, timeout)


class _Conn(_ConfigApply):
    """One netmiko connection and the lock that keeps its commands one at a time."""

    def __init__(self, target: Target, handler: Any, session_log: _MaskedLog | None):
        self.target = target
        self.handler = handler
        self.session_log = session_log
        self.lock = asyncio.Lock()
        self.lost: str | None = None

    def _lost_error(self, detail: str, command: str | None = None) -> TransportError:
        host, port = _host_port(self.target)
        if command is not None:  # it closed under this command: say so, not "unreachable"
            return TransportError(ConnectErrorKind.DROPPED, self.target,
                                  f"the CLI session to {self.target.name} ({host}:{port}) closed while `{command}` "
                                  f"was running ({detail})", command=command)
        return TransportError(ConnectErrorKind.UNREACHABLE, self.target,
                              f"lost the CLI session to {self.target.name} ({host}:{port}): {detail}")

    async def run(self, command: str, timeout: float) -> CommandResult:
        async with self.lock:
            if self.lost is not None:
                raise self._lost_error(self.lost)
            started = time.monotonic()
            try:
                output = await asyncio.to_thread(self._send, command, timeout)
            except _Timeout as exc:
                duration = time.monotonic() - started
                if self._channel_closed():  # netmiko reads a closed channel as "no prompt yet"
                    self.lost = "the switch closed the connection"
                    raise self._lost_error(self.lost, command) from None
                recovered = await asyncio.to_thread(self._recover)
                if not recovered:
                    self.lost = f"no prompt after `{command}` timed out"
                return CommandResult(command, exc.partial, "", None, duration, timed_out=True)
            except _Lost as exc:
                self.lost = exc.detail
                raise self._lost_error(exc.detail, command) from None
            duration = time.monotonic() - started
            rejected = CLI_ERROR.search(output.strip().split("\n", 1)[0] if output.strip() else "")
            return CommandResult(command, output, "", 1 if rejected else 0, duration)

    def _channel_closed(self) -> bool:
        """Whether the SSH channel under netmiko ended (EOF from the switch, or the connection gone)."""
        channel = getattr(self.handler, "remote_conn", None)
        try:
            if channel is None or not hasattr(channel, "get_transport"):
                return False
            if channel.closed or channel.eof_received:
                return True
            ssh = channel.get_transport()
            return ssh is None or not ssh.is_active()
        except Exception:  # noqa: BLE001 - an odd handler: treat as open, the timeout stands
            return False

    def _send(self, command: str, timeout: float) -> str:
        from netmiko.exceptions import ReadException, ReadTimeout

        if self.session_log is not None:
            self.session_log.note(f"command: {command}")
        try:
            out = self.handler.send_command(command, read_timeout=timeout, strip_prompt=True, strip_command=True)
        except ReadTimeout as exc:
            raise _Timeout(str(exc)) from None
        except (OSError, EOFError, ReadException) as exc:
            raise _Lost(f"{type(exc).__name__}: {exc}") from None
        except Exception as exc:  # paramiko's SSHException when the transport dropped
            if type(exc).__name__ in ("SSHException", "ChannelException"):
                raise _Lost(f"{type(exc).__name__}: {exc}") from None
            raise
        return out.replace("\r\n", "\n").replace("\r", "\n")

    def _recover(self) -> bool:
        """After a timed-out command: drain what it still prints and find the prompt again."""
        try:
            self.handler.read_channel_timing(read_timeout=5, last_read=0.5)
            self.handler.find_prompt()
            return True
        except Exception:  # noqa: BLE001 - the session is unusable; the next command says so
            return False

    def disconnect(self) -> None:
        try:
            self.handler.disconnect()
        except Exception:  # noqa: BLE001 - best effort at the end of the run
            pass
        finally:
            if self.session_log is not None:
                self.session_log.close()
