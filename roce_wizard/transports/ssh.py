"""SSH transport for ESXi hosts, Linux hosts and Linux guests (asyncssh).

- Host keys are checked against known_hosts (default ``~/.ssh/known_hosts``); an unknown host and a
  host whose key changed are refused with different, actionable errors. ``trust_on_first_use`` only
  accepts hosts known_hosts says nothing about, and records their key (``[host]:port`` form).
- One connection per target (address, port, user) per transport; concurrent callers share it.
  A semaphore bounds how many connects run at once.
- Every command has a timeout; a command that times out, or exits non-zero, is a result, not an
  exception. Only a lost connection raises (`TransportError`: kind ``dropped`` with the command that
  was running when it closed, ``unreachable`` when it was gone before the command started).
- Passwords come from ``password_resolver(target)`` and never appear in messages or logs.

Commands are strings run by the remote shell: build them with `quote` / `validate_token` for every
value that comes from the inventory.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import re
import shlex
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncssh

from roce_wizard.model import Target
from roce_wizard.transports.base import CommandResult, ConnectErrorKind, TransportError

__all__ = [
    "SshSession",
    "SshTransport",
    "TOKEN_PATTERNS",
    "known_hosts_name",
    "quote",
    "validate_token",
]

log = logging.getLogger(__name__)

DEFAULT_PORT = 22
DEFAULT_KNOWN_HOSTS = "~/.ssh/known_hosts"

quote = shlex.quote

# Strict shapes for inventory values that end up in commands. `validate_token(value, "netdev")`.
TOKEN_PATTERNS: dict[str, str] = {
    "netdev": r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,14}",  # Linux IFNAMSIZ-1
    "vmnic": r"vmnic[0-9]{1,4}",
    "vmk": r"vmk[0-9]{1,4}",
    "rdma_dev": r"[A-Za-z0-9_]{1,64}",  # mlx5_1, vmrdma0
    "pci": r"(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]",
    "ipv4": r"(?:(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])",
    "ipv4_cidr": (
        r"(?:(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])"
        r"/(?:3[0-2]|[12]?[0-9])"
    ),
    "int": r"[0-9]{1,10}",
    "name": r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}",  # VM, portgroup, switch names without spaces
    "path": r"/[A-Za-z0-9_./+-]{0,4095}",
}


def validate_token(value: object, pattern: str | re.Pattern[str]) -> str:
    """Return `value` if it entirely matches `pattern` (a regex, or a TOKEN_PATTERNS name).

    Raises ValueError otherwise, so that no inventory value reaches a shell unchecked.
    """
    if isinstance(pattern, re.Pattern):
        regex = pattern
    else:
        regex = re.compile(TOKEN_PATTERNS.get(pattern, pattern))
    if not isinstance(value, str) or regex.fullmatch(value) is None or "\n" in value:
        raise ValueError(f"refusing to use {value!r} in a command: it does not match {regex.pattern!r}")
    return value


def known_hosts_name(host: str, port: int) -> str:
    """How known_hosts names a host: `host` on port 22, `[host]:port` elsewhere."""
    return host if port == DEFAULT_PORT else f"[{host}]:{port}"


_KNOWN_HOSTS_CACHE: dict[Path, tuple[tuple[int, int, int] | None, asyncssh.SSHKnownHosts]] = {}


class _KnownHostsProbe:
    """A known_hosts callable for asyncssh that reloads the file on each connect and remembers
    whether the host had any entry (to tell an unknown host from a changed key)."""

    def __init__(self, path: Path):
        self.path = path
        self.addr = ""
        self.matched = False

    def _load(self) -> asyncssh.SSHKnownHosts:
        # Parsed once per version of the file: re-parsing every entry on every connect made a run
        # over N hosts with N known_hosts lines quadratic (seconds at a few hundred hosts).
        try:
            st = self.path.stat()
            stamp: tuple[int, int, int] | None = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            stamp = None
        cached = _KNOWN_HOSTS_CACHE.get(self.path)
        if cached is not None and cached[0] == stamp and stamp is not None:
            return cached[1]
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            text = ""
        parsed = asyncssh.import_known_hosts(text)
        if stamp is not None:
            _KNOWN_HOSTS_CACHE[self.path] = (stamp, parsed)
        return parsed

    def __call__(self, host: str, addr: str, port: int | None) -> Any:
        self.addr = addr
        result = self._load().match(host, addr, port)
        # trusted keys, CA keys, revoked keys, x509 certs, revoked certs, x509 subjects, revoked subjects
        self.matched = any(result)
        return result

    def matching_lines(self, host: str, port: int) -> list[int]:
        """1-based numbers of the known_hosts lines that name this host (plain or hashed)."""
        try:
            lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return []
        found = []
        kh_port = port if port != DEFAULT_PORT else None
        for number, line in enumerate(lines, 1):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            try:
                entry = asyncssh.import_known_hosts(stripped)
            except (ValueError, asyncssh.KeyImportError):
                continue
            if any(entry.match(host, self.addr or host, kh_port)):
                found.append(number)
        return found


class SshSession:
    """Commands on one target over the transport's shared connection to it.

    A session lives as long as its connection: once the connection drops, `run` raises
    TransportError (dropped: during that command; unreachable: afterwards); ask the transport for a
    new session to reconnect.
    """

    def __init__(self, transport: SshTransport, target: Target, conn: asyncssh.SSHClientConnection):
        self.transport = transport
        self.target = target
        self._conn = conn
        self._closed = False

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
        if self._closed:
            raise RuntimeError(f"session to {self.target.name} is closed")
        if timeout is None:
            timeout = self.transport._command_timeout(self.target)
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

    async def close(self) -> None:
        """Stop using this session. The connection stays open for other sessions until the
        transport closes."""
        self._closed = True


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
    return target.address, target.port or DEFAULT_PORT


_ConnKey = tuple[str, int, str]


def _conn_key(target: Target) -> _ConnKey:
    host, port = _host_port(target)
    return host, port, target.credentials.username


class SshTransport:
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
        if max_concurrent_connects < 1:
            raise ValueError("max_concurrent_connects must be at least 1")
        self.known_hosts = Path(known_hosts if known_hosts is not None else DEFAULT_KNOWN_HOSTS).expanduser()
        # an explicit file (--known-hosts) wins over a target's `options: {known_hosts: …}`
        self._known_hosts_explicit = known_hosts is not None
        self.trust_on_first_use = trust_on_first_use
        self.max_concurrent_connects = max_concurrent_connects
        self.connect_timeout = connect_timeout
        self.command_timeout = command_timeout
        self.password_resolver = password_resolver
        self._semaphore = asyncio.Semaphore(max_concurrent_connects)
        self._conns: dict[_ConnKey, asyncio.Task[asyncssh.SSHClientConnection]] = {}
        self._active_connects = 0
        self.peak_connects = 0  # most connects in flight at once (tests check the bound)
        self.connects = 0  # connects attempted

    # -- public --------------------------------------------------------------------------------

    async def session(self, target: Target) -> SshSession:
        """A session on `target`, connecting if there is no live connection yet."""
        return SshSession(self, target, await self._connection(target))

    async def close(self) -> None:
        """Close every connection (and abandon connects still under way)."""
        tasks = list(self._conns.values())
        self._conns.clear()
        for task in tasks:
            if not task.done():
                task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        conns = [r for r in results if isinstance(r, asyncssh.SSHClientConnection)]
        for conn in conns:
            conn.close()
        for conn in conns:
            try:
                await asyncio.wait_for(conn.wait_closed(), 5)
            except (TimeoutError, asyncssh.Error, OSError):
                conn.abort()

    async def __aenter__(self) -> SshTransport:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- connection cache ------------------------------------------------------------------------

    def known_hosts_for(self, target: Target) -> Path:
        """The known_hosts file for a target: the transport's explicit one, else the inventory's
        `options.known_hosts`, else ~/.ssh/known_hosts."""
        option = target.options.get("known_hosts")
        if self._known_hosts_explicit or not option:
            return self.known_hosts
        return Path(str(option)).expanduser()

    def _command_timeout(self, target: Target) -> float:
        return float(target.options.get("command_timeout", self.command_timeout))

    def _connect_timeout(self, target: Target) -> float:
        return float(target.options.get("connect_timeout", self.connect_timeout))

    async def _connection(self, target: Target) -> asyncssh.SSHClientConnection:
        key = _conn_key(target)
        for _ in range(2):  # a cached connection found closed gets one reconnect
            task = self._conns.get(key)
            if task is None:
                task = asyncio.ensure_future(self._connect(target))
                task.add_done_callback(_retrieve)
                self._conns[key] = task
            try:
                conn = await asyncio.shield(task)
            except asyncio.CancelledError:
                if task.cancelled() and self._conns.get(key) is task:
                    del self._conns[key]
                raise
            except BaseException:
                if self._conns.get(key) is task:  # let a later call try again
                    del self._conns[key]
                raise
            if not conn.is_closed():
                return conn
            if self._conns.get(key) is task:
                del self._conns[key]
        host, port = _host_port(target)
        raise TransportError(
            ConnectErrorKind.UNREACHABLE,
            target,
            f"{target.name} ({host}:{port}) closed the SSH connection right after it opened",
        )

    def _discard(self, target: Target, conn: asyncssh.SSHClientConnection) -> None:
        key = _conn_key(target)
        task = self._conns.get(key)
        if task is not None and task.done() and not task.cancelled() and task.exception() is None:
            if task.result() is conn:
                del self._conns[key]
        if not conn.is_closed():
            conn.abort()

    async def _connect(self, target: Target) -> asyncssh.SSHClientConnection:
        async with self._semaphore:
            self._active_connects += 1
            self.connects += 1
            self.peak_connects = max(self.peak_connects, self._active_connects)
            try:
                return await self._connect_verified(target)
            finally:
                self._active_connects -= 1

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

        password = self.password_resolver(target) if self.password_resolver is not None else None
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


def _retrieve(task: asyncio.Task[Any]) -> None:
    """Mark a connect task's exception as retrieved (every waiter may have been cancelled)."""
    if not task.cancelled():
        task.exception()
