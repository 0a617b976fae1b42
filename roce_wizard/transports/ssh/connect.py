"""`SshTransport`: connections (one per target), host-key verification, authentication and error mapping."""

from __future__ import annotations

import asyncio
import errno
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncssh

from roce_wizard.model import Target
from roce_wizard.transports.base import ConnectErrorKind, TransportError
from roce_wizard.transports.plumbing import ConnectionCache, ConnKey, TransportOptions, conn_key, known_hosts_for
from roce_wizard.transports.ssh.known_hosts import (
    DEFAULT_KNOWN_HOSTS,
    DEFAULT_PORT,
    _KnownHostsProbe,
    known_hosts_name,
    log,
)
from roce_wizard.transports.ssh.session import SshSession, _host_port
from roce_wizard.transports.ssh.tokens import quote


def _conn_key(target: Target) -> ConnKey:
    return conn_key(target, DEFAULT_PORT)


class SshTransport(TransportOptions):
    """Opens one SSH connection per target and hands out sessions on it."""

    def __init__(
        self,
        known_hosts: str | Path | None = None,
        trust_on_first_use: bool = False,
        max_concurrent_connects: int = 16,
        connect_timeout: float = 10,
        command_timeout: float = 60,
        password_resolver: Callable[[Target], str | None] | None = None,
    ):
        super().__init__(connect_timeout=connect_timeout, command_timeout=command_timeout,
                         max_concurrent_connects=max_concurrent_connects, password_resolver=password_resolver)
        self.known_hosts = Path(known_hosts if known_hosts is not None else DEFAULT_KNOWN_HOSTS).expanduser()
        # an explicit file (--known-hosts) wins over a target's `options: {known_hosts: …}`
        self._known_hosts_explicit = known_hosts is not None
        self.trust_on_first_use = trust_on_first_use
        self._conns: ConnectionCache[asyncssh.SSHClientConnection] = ConnectionCache()

    # -- public --------------------------------------------------------------------------------

    async def session(self, target: Target) -> SshSession:
        """A session on `target`, connecting if there is no live connection yet."""
        return SshSession(self, target, await self._connection(target))

    async def close(self) -> None:
        """Close every connection (and abandon connects still under way)."""
        conns = await self._conns.drain()
        for conn in conns:
            conn.close()
        for conn in conns:
            try:
                await asyncio.wait_for(conn.wait_closed(), 5)
            except (TimeoutError, asyncssh.Error, OSError):
                conn.abort()

    # -- connection cache ------------------------------------------------------------------------

    def known_hosts_for(self, target: Target) -> Path:
        """The known_hosts file for a target: the transport's explicit one, else the inventory's
        `options.known_hosts`, else ~/.ssh/known_hosts."""
        return known_hosts_for(target, self.known_hosts, self._known_hosts_explicit)

    async def _connection(self, target: Target) -> asyncssh.SSHClientConnection:
        # a cached connection found closed gets one reconnect
        conn = await self._conns.get(_conn_key(target), lambda: self._connect(target),
                                     usable=lambda c: not c.is_closed())
        if not conn.is_closed():
            return conn
        self._conns.discard(_conn_key(target), conn)
        host, port = _host_port(target)
        raise TransportError(
            ConnectErrorKind.UNREACHABLE,
            target,
            f"{target.name} ({host}:{port}) closed the SSH connection right after it opened",
        )

    def _discard(self, target: Target, conn: asyncssh.SSHClientConnection) -> None:
        self._conns.discard(_conn_key(target), conn)
        if not conn.is_closed():
            conn.abort()

    async def _connect(self, target: Target) -> asyncssh.SSHClientConnection:
        async with self.connect_slot():
            return await self._connect_verified(target)

    # -- connecting ------------------------------------------------------------------------------

    async def _connect_verified(self, target: Target) -> asyncssh.SSHClientConnection:
        host, port = _host_port(target)
        options, methods = self._auth_options(target)
        probe = _KnownHostsProbe(self.known_hosts_for(target))
        try:
            return await self._open(target, probe, options, methods)
        except _HostKeyRejected as rejected:
            if probe.matched:
                offered = await self._offered_key(target)
                raise self._hostkey_changed(target, probe, offered) from rejected.__cause__
            if not self.trust_on_first_use:
                offered = await self._offered_key(target)
                raise self._hostkey_unknown(target, offered) from rejected.__cause__

        # Trust on first use: fetch the key with a bare key exchange (no credentials sent), record
        # it, then connect again verifying against the file like any other host.
        try:
            async with asyncio.timeout(self._connect_timeout(target)):
                key = await asyncssh.get_server_host_key(host, port)
        except Exception as exc:
            raise self._map_error(exc, target, methods) from exc
        if key is None:
            raise TransportError(
                ConnectErrorKind.PROTOCOL, target, f"{target.name} ({host}:{port}) presented no host key"
            )
        self._record_host_key(host, port, key, probe)
        log.warning(
            "%s: trusting new host key %s %s for %s (recorded in %s)",
            target.name,
            key.get_algorithm(),
            key.get_fingerprint(),
            known_hosts_name(host, port),
            probe.path,
        )
        probe = _KnownHostsProbe(probe.path)
        try:
            return await self._open(target, probe, options, methods)
        except _HostKeyRejected as rejected:  # the key changed between the two handshakes
            raise self._hostkey_changed(target, probe, None) from rejected.__cause__

    async def _offered_key(self, target: Target) -> str | None:
        """'ALG SHA256:…' of the key the host offers, for the operator to verify (best effort; a bare
        key exchange, no credentials sent)."""
        host, port = _host_port(target)
        try:
            async with asyncio.timeout(min(self._connect_timeout(target), 5)):
                key = await asyncssh.get_server_host_key(host, port)
        except (TimeoutError, OSError, asyncssh.Error, ValueError):
            return None
        return f"{key.get_algorithm()} {key.get_fingerprint()}" if key is not None else None

    async def _open(
        self, target: Target, probe: _KnownHostsProbe, options: dict[str, Any], methods: list[str]
    ) -> asyncssh.SSHClientConnection:
        host, port = _host_port(target)
        log.debug("%s: connecting to %s:%s as %s", target.name, host, port, target.credentials.username)
        try:
            async with asyncio.timeout(self._connect_timeout(target)):
                return await asyncssh.connect(host, port, known_hosts=probe, **options)
        except asyncssh.HostKeyNotVerifiable as exc:
            raise _HostKeyRejected() from exc
        except asyncssh.KeyExchangeFailed as exc:
            # known_hosts holds keys of other types only: asyncssh offers just those and fails
            if probe.matched and "host key" in str(exc).lower():
                raise _HostKeyRejected() from exc
            raise self._map_error(exc, target, methods) from exc
        except Exception as exc:
            raise self._map_error(exc, target, methods) from exc

    def _auth_options(self, target: Target) -> tuple[dict[str, Any], list[str]]:
        """asyncssh.connect() keyword arguments for the target's credentials, and a description of
        the methods they amount to (for error messages; never the password itself)."""
        creds = target.credentials
        methods: list[str] = []
        options: dict[str, Any] = {"username": creds.username}

        if creds.key_file:
            path = Path(creds.key_file).expanduser()
            try:
                keypair = asyncssh.read_private_key(str(path))
            except asyncssh.KeyEncryptionError as exc:
                raise TransportError(
                    ConnectErrorKind.AUTH,
                    target,
                    f"key file {path} for {target.name} is encrypted: load it into ssh-agent "
                    f"(ssh-add {quote(str(path))}) and keep use_agent on ({exc})",
                ) from exc
            except (OSError, ValueError, asyncssh.KeyImportError) as exc:
                raise TransportError(
                    ConnectErrorKind.AUTH,
                    target,
                    f"cannot read key file {path} for {target.name}: {exc}",
                ) from exc
            options["client_keys"] = [keypair]
            methods.append(f"publickey (key file {path})")
        elif creds.use_agent:
            options["client_keys"] = ()  # asyncssh's defaults: ~/.ssh/id_* and IdentityFile
            methods.append("publickey (default keys ~/.ssh/id_*)")
        else:
            options["client_keys"] = None

        if creds.use_agent:
            options["agent_path"] = ()  # default: IdentityAgent / $SSH_AUTH_SOCK
            sock = os.environ.get("SSH_AUTH_SOCK")
            methods.append(f"ssh-agent ({sock})" if sock else "ssh-agent (not available: SSH_AUTH_SOCK is unset)")
        else:
            options["agent_path"] = None

        password = self._password(target)
        if password is not None:
            options["password"] = password
            methods.append(f"password{f' {creds.password}' if creds.password is not None else ''}")
        else:
            options["password"] = None
            if creds.password is not None:
                methods.append(f"no password ({creds.password} did not resolve)")
        return options, methods

    def _record_host_key(self, host: str, port: int, key: asyncssh.SSHKey, probe: _KnownHostsProbe) -> None:
        """Append `[host]:port alg base64` to known_hosts (created 0600, its directory 0700)."""
        # another target on the same host:port may have recorded it meanwhile
        if key in probe._load().match(host, probe.addr or host, port if port != DEFAULT_PORT else None)[0]:
            return
        alg, blob = key.export_public_key("openssh").decode("ascii").split()[:2]
        line = f"{known_hosts_name(host, port)} {alg} {blob}\n"
        path = probe.path
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size:
                with open(path, "rb") as existing:
                    existing.seek(size - 1)
                    if existing.read(1) != b"\n":
                        line = "\n" + line
            os.write(fd, line.encode("ascii"))
        finally:
            os.close(fd)

    # -- errors ----------------------------------------------------------------------------------

    def _hostkey_unknown(self, target: Target, offered: str | None) -> TransportError:
        host, port = _host_port(target)
        kh = self.known_hosts_for(target)
        scan = f"ssh-keyscan -p {port} {host}" if port != DEFAULT_PORT else f"ssh-keyscan {host}"
        return TransportError(
            ConnectErrorKind.HOSTKEY_UNKNOWN,
            target,
            f"host key of {target.name} ({host}:{port}) is not in {kh}; add it "
            f"({scan} >> {kh}, after checking its fingerprint"
            f"{f' — it offers {offered}' if offered else ''}) or run with --trust-on-first-use",
        )

    def _hostkey_changed(self, target: Target, probe: _KnownHostsProbe, offered: str | None) -> TransportError:
        host, port = _host_port(target)
        kh = probe.path
        lines = probe.matching_lines(host, port)
        where = f"{kh} line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}" if lines else str(kh)
        return TransportError(
            ConnectErrorKind.HOSTKEY_CHANGED,
            target,
            f"host key of {target.name} ({host}:{port}) has CHANGED (or is revoked): it does not match "
            f"{where}{f' (it now offers {offered})' if offered else ''}. Refusing to connect — this may be "
            "a man-in-the-middle attack. If the host was reinstalled and the change is expected, "
            "remove the old entry "
            f"(ssh-keygen -R {quote(known_hosts_name(host, port))} -f {quote(str(kh))}"
            f"{', or delete ' + where if lines else ''}) and connect again",
        )

    def _map_error(self, exc: Exception, target: Target, methods: list[str]) -> TransportError:
        if isinstance(exc, TransportError):
            return exc
        host, port = _host_port(target)
        name = f"{target.name} ({host}:{port})"
        user = target.credentials.username
        kind: ConnectErrorKind
        if isinstance(exc, socket.gaierror):
            kind, msg = ConnectErrorKind.DNS, f"cannot resolve {host!r} for {target.name}: {exc.strerror or exc}"
        elif isinstance(exc, TimeoutError):  # before OSError: TimeoutError is one
            kind = ConnectErrorKind.TIMEOUT
            msg = (
                f"{name} did not complete the SSH handshake within {self._connect_timeout(target):g}s; "
                "check that the host is up, that SSH is enabled on it, and that no firewall drops the port"
            )
        elif isinstance(exc, ConnectionRefusedError) or (
            isinstance(exc, OSError) and _errno_in(exc, {errno.ECONNREFUSED})
        ):
            kind = ConnectErrorKind.REFUSED
            msg = f"{name} refused the connection: nothing listens on port {port} (is SSH enabled on the host?)"
        elif isinstance(exc, OSError):
            kind = ConnectErrorKind.UNREACHABLE
            if _errno_in(exc, {errno.EHOSTUNREACH, errno.ENETUNREACH}):
                msg = f"no route to {name}: {exc.strerror or exc}; check the address and the network path"
            else:
                msg = f"cannot reach {name}: {exc.strerror or exc}"
        elif isinstance(exc, asyncssh.PermissionDenied):
            kind = ConnectErrorKind.AUTH
            tried = ", ".join(methods) if methods else "none (no password, key file or agent configured)"
            msg = (
                f"{name} rejected user {user!r}; methods tried: {tried}. "
                "Check the username and the credentials in the inventory"
            )
        elif isinstance(exc, asyncssh.ConnectionLost):
            kind = ConnectErrorKind.UNREACHABLE
            msg = f"{name} closed the connection during the SSH handshake: {exc.reason or exc}"
        elif isinstance(exc, asyncssh.Error):
            kind = ConnectErrorKind.PROTOCOL
            msg = f"SSH protocol error with {name}: {getattr(exc, 'reason', '') or exc}"
        else:
            kind = ConnectErrorKind.PROTOCOL
            msg = f"cannot connect to {name}: {type(exc).__name__}: {exc}"
        return TransportError(kind, target, msg)


class _HostKeyRejected(Exception):
    """Internal: asyncssh would not accept the host key (the cause holds asyncssh's exception)."""


def _errno_in(exc: OSError, numbers: set[int]) -> bool:
    if exc.errno in numbers:
        return True
    # asyncio folds several failed addresses into one OSError("Multiple exceptions: ...")
    text = str(exc)
    return any(f"[Errno {n}]" in text for n in numbers) and exc.errno is None

