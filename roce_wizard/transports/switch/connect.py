"""`SwitchTransport`: netmiko connects in threads, host-key verification, session logs and error mapping."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from roce_wizard.model import Target
from roce_wizard.transports.base import ConnectErrorKind, TransportError
from roce_wizard.transports.plumbing import ConnectionCache, TransportOptions, conn_key, known_hosts_for
from roce_wizard.transports.switch.common import (
    DEFAULT_KNOWN_HOSTS,
    DEFAULT_PORT,
    NEEDS_ENABLE,
    NETMIKO_DEVICE_TYPES,
    ReadBack,
    _host_port,
    _HostKeyPolicy,
    _MaskedLog,
    known_hosts_name,
)
from roce_wizard.transports.switch.session import SwitchSession, _Conn


class SwitchTransport(TransportOptions):
    """Opens one netmiko session per switch and hands out sessions on it."""

    def __init__(
        self,
        password_resolver: Callable[[Target], str | None] | None = None,
        connect_timeout: float = 10,
        command_timeout: float = 60,
        max_concurrent_connects: int = 16,
        known_hosts: str | Path | None = None,
        trust_on_first_use: bool = False,
        session_log_dir: str | Path | None = None,
        verify: ReadBack | None = None,
    ):
        super().__init__(connect_timeout=connect_timeout, command_timeout=command_timeout,
                         max_concurrent_connects=max_concurrent_connects, password_resolver=password_resolver)
        self.known_hosts = Path(known_hosts if known_hosts is not None else DEFAULT_KNOWN_HOSTS).expanduser()
        self._known_hosts_explicit = known_hosts is not None
        self.trust_on_first_use = trust_on_first_use
        self.session_log_dir = Path(session_log_dir) if session_log_dir is not None else None
        # how a switch-config step is read back and judged (common.ReadBack); without one, a step that asks
        # for a verify is refused before anything changes
        self.verify = verify
        self._conns: ConnectionCache[_Conn] = ConnectionCache()

    # -- public --------------------------------------------------------------------------------

    async def session(self, target: Target) -> SwitchSession:
        conn = await self._conns.get(conn_key(target, DEFAULT_PORT), lambda: self._connect(target),
                                     usable=lambda c: c.lost is None)  # a lost session is replaced
        return SwitchSession(self, target, conn)

    async def close(self) -> None:
        conns = await self._conns.drain(cancel_pending=False)  # a connect in a thread cannot be stopped
        await asyncio.gather(*(asyncio.to_thread(c.disconnect) for c in conns))

    def known_hosts_for(self, target: Target) -> Path:
        """The transport's explicit known_hosts, else the target's `options.known_hosts`, else ~/.ssh/known_hosts."""
        return known_hosts_for(target, self.known_hosts, self._known_hosts_explicit)

    # -- connecting ------------------------------------------------------------------------------

    async def _connect(self, target: Target) -> _Conn:
        device_type = NETMIKO_DEVICE_TYPES.get(target.device_type or "")
        if device_type is None:
            raise TransportError(ConnectErrorKind.PROTOCOL, target,
                                 f"{target.name}: device_type {target.device_type!r} is not one roce-wizard speaks "
                                 f"({', '.join(NETMIKO_DEVICE_TYPES)})")
        # resolved here, in the event loop: a prompt for it must not race other threads
        password = self._password(target)
        policy = _HostKeyPolicy(self.known_hosts_for(target), self.trust_on_first_use)
        session_log = None
        if self.session_log_dir is not None:
            session_log = _MaskedLog(self.session_log_dir / f"{target.name}.log", [password or ""])
        async with self.connect_slot():
            try:
                handler = await asyncio.to_thread(self._open, target, device_type, password, policy, session_log)
            except Exception as exc:
                if session_log is not None:
                    session_log.note(f"connect failed: {type(exc).__name__}")
                    session_log.close()
                raise self._map_error(exc, target, policy, password) from None
        return _Conn(target, handler, session_log)

    def _open(self, target: Target, device_type: str, password: str | None, policy: _HostKeyPolicy,
              session_log: _MaskedLog | None) -> Any:
        from netmiko import ConnectHandler

        host, port = _host_port(target)
        timeout = self._connect_timeout(target)
        creds = target.credentials
        if session_log is not None:
            session_log.note(f"connect {device_type} {creds.username}@{host}:{port}")
        handler = ConnectHandler(
            device_type=device_type, host=host, port=port, username=creds.username, password=password or "",
            secret=password or "", use_keys=bool(creds.key_file),
            key_file=str(Path(creds.key_file).expanduser()) if creds.key_file else None,
            allow_agent=creds.use_agent, conn_timeout=timeout, auth_timeout=timeout, banner_timeout=timeout,
            # host keys: our known_hosts file and our policy, never AutoAddPolicy
            ssh_strict=True, system_host_keys=False, alt_host_keys=True, alt_key_file=str(policy.path),
            session_log=session_log, auto_connect=False,
        )
        handler.key_policy = policy
        try:
            handler._open()
            if target.device_type in NEEDS_ENABLE and not handler.check_enable_mode():
                handler.enable()
        except BaseException:
            try:
                handler.disconnect()
            except Exception:  # noqa: BLE001
                pass
            raise
        return handler

    # -- errors ----------------------------------------------------------------------------------

    def _map_error(self, exc: BaseException, target: Target, policy: _HostKeyPolicy,
                   password: str | None) -> TransportError:
        import paramiko
        from netmiko.exceptions import NetmikoAuthenticationException, ReadTimeout

        if isinstance(exc, TransportError):
            return exc
        host, port = _host_port(target)
        name = f"{target.name} ({host}:{port})"
        chain: list[BaseException] = []
        cur: BaseException | None = exc
        while cur is not None and cur not in chain:
            chain.append(cur)
            cur = cur.__cause__ or cur.__context__
        for e in list(chain):  # paramiko folds one error per address into NoValidConnectionsError.errors
            chain.extend(x for x in (getattr(e, "errors", None) or {}).values() if isinstance(x, BaseException))
        text = " ".join(str(e) for e in chain)
        if password:
            text = text.replace(password, "********")
        bad_key = next((e for e in chain if isinstance(e, paramiko.BadHostKeyException)), None)
        kh = policy.path
        if bad_key is not None:
            expected, got = bad_key.expected_key, bad_key.key
            return TransportError(
                ConnectErrorKind.HOSTKEY_CHANGED, target,
                f"host key of {name} has CHANGED: {kh} holds {expected.get_name()} {expected.fingerprint}, the "
                f"switch now offers {got.get_name()} {got.fingerprint}. Refusing to connect — this may be a "
                "man-in-the-middle attack. If the switch was replaced or re-keyed on purpose, remove the old "
                f"entry (ssh-keygen -R '{known_hosts_name(host, port)}' -f {kh}) and connect again")
        if policy.refused:
            scan = f"ssh-keyscan -p {port} {host}" if port != DEFAULT_PORT else f"ssh-keyscan {host}"
            return TransportError(
                ConnectErrorKind.HOSTKEY_UNKNOWN, target,
                f"host key of {name} is not in {kh}; add it ({scan} >> {kh}, after checking its fingerprint"
                f"{f' — it offers {policy.offered}' if policy.offered else ''}) or run with --trust-on-first-use")
        if any(isinstance(e, (NetmikoAuthenticationException, paramiko.AuthenticationException)) for e in chain):
            how = "password" if password else "keys/agent only (no password resolved)"
            return TransportError(ConnectErrorKind.AUTH, target,
                                  f"{name} rejected user {target.credentials.username!r} ({how}); check the username "
                                  "and the password reference in the inventory")
        if any(isinstance(e, socket.gaierror) for e in chain) or "DNS failure" in text:
            return TransportError(ConnectErrorKind.DNS, target, f"cannot resolve {host!r} for {target.name}")
        if any(isinstance(e, ConnectionRefusedError) for e in chain):
            return TransportError(ConnectErrorKind.REFUSED, target,
                                  f"{name} refused the connection: nothing listens on port {port} (is SSH enabled "
                                  "on the switch's management interface?)")
        if any(isinstance(e, (TimeoutError, socket.timeout)) for e in chain):
            return TransportError(ConnectErrorKind.TIMEOUT, target,
                                  f"{name} did not answer within {self._connect_timeout(target):g}s; check the "
                                  "management address, the port and any firewall in between")
        if any(isinstance(e, ReadTimeout) for e in chain):
            return TransportError(ConnectErrorKind.PROTOCOL, target,
                                  f"{name} accepted the login but its CLI never showed a prompt netmiko's "
                                  f"{target.device_type} driver recognises (wrong device_type?)")
        if any(isinstance(e, OSError) for e in chain):
            return TransportError(ConnectErrorKind.UNREACHABLE, target, f"cannot reach {name}: {chain[-1]}")
        first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
        return TransportError(ConnectErrorKind.PROTOCOL, target, f"cannot open a CLI session on {name}: {first}")
