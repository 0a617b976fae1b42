"""TLS, logins and sessions: `VSphereTransport` and `VSphereSession`."""

from __future__ import annotations

import asyncio
import errno
import http.client
import logging
import socket
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyVim.connect import Disconnect, SmartConnect
from pyVmomi import vim, vmodl

from roce_wizard.model import Target
from roce_wizard.transports.base import CommandResult, ConnectErrorKind, TransportError
from roce_wizard.transports.plumbing import (
    ConnectionCache,
    ConnKey,
    SessionBase,
    TransportOptions,
    conn_key,
    host_port,
    option_flag,
)
from roce_wizard.transports.vsphere.actions import ACTIONS, ActionFault, Malformed, parse_action
from roce_wizard.transports.vsphere.reads import QUERIES, render

log = logging.getLogger("roce_wizard.transports.vsphere")

DEFAULT_PORT = 443


# ---------------------------------------------------------------------------- TLS


def _insecure(target: Target) -> bool:
    return option_flag(target, "insecure")


def ssl_context_for(target: Target) -> ssl.SSLContext:
    """Verified TLS with the target's `options.ca_file` (else the system CAs); unverified only with
    an explicit `options.insecure: true`."""
    if _insecure(target):
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    ca_file = target.options.get("ca_file")
    if not ca_file:
        return ssl.create_default_context()
    path = Path(str(ca_file)).expanduser()
    try:
        return ssl.create_default_context(cafile=str(path))
    except (OSError, ssl.SSLError) as exc:
        raise TransportError(
            ConnectErrorKind.TLS, target,
            f"cannot load options.ca_file {path} for {target.name}: "
            f"{exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}; it must be the PEM file "
            "of the CA that signed vCenter's certificate",
        ) from exc


# ---------------------------------------------------------------------------- sessions


class VSphereSession(SessionBase):
    """Queries on one vCenter over the transport's shared login."""

    transport: VSphereTransport

    def __init__(self, transport: VSphereTransport, target: Target, si: Any):
        super().__init__(transport, target)
        self.service_instance = si  # for fixes: host.configManager…, ReconfigVM_Task, …

    async def run(self, command: str, timeout: float | None = None) -> CommandResult:
        timeout = self._begin(timeout)
        query = QUERIES.get(" ".join(command.split()))
        action = None
        if query is None:
            try:
                action = parse_action(command)
            except Malformed as exc:
                return CommandResult(command, "", f"malformed vSphere action: {exc}\n", 2, 0.0)
            if action is None:
                return CommandResult(command, "", f"unknown vSphere query or action {command!r}; queries: "
                                     f"{', '.join(QUERIES)}; actions: {', '.join('vsphere ' + a for a in ACTIONS)}\n",
                                     2, 0.0)
        started = time.monotonic()
        try:
            async with asyncio.timeout(timeout):
                if action is not None:
                    call, args = action
                    # the thread gets the deadline too: a task still running there is given up on
                    line = await asyncio.to_thread(self._query, lambda si: call(si, max(1.0, timeout - 1), *args))
                    return CommandResult(command, line.rstrip("\n") + "\n", "", 0, time.monotonic() - started)
                doc = await asyncio.to_thread(self._query, query)
        except TimeoutError as exc:
            if action is not None and str(exc):  # a task or a wait gave up: say which
                return CommandResult(command, "", f"vSphere timeout: {exc}\n", 1, time.monotonic() - started,
                                     timed_out=True)
            return CommandResult(command, "", "", None, time.monotonic() - started, timed_out=True)
        except ActionFault as fault:
            return CommandResult(command, "", f"vSphere fault {fault.name}: {fault.message}\n", 1,
                                 time.monotonic() - started)
        except vmodl.MethodFault as fault:
            name = getattr(fault, "_wsdlName", type(fault).__name__)
            message = (getattr(fault, "msg", None)
                       or "; ".join(m.message for m in getattr(fault, "faultMessage", None) or [] if m.message)
                       or name)
            return CommandResult(command, "", f"vSphere fault {name}: {message}\n", 1, time.monotonic() - started)
        except (OSError, http.client.HTTPException) as exc:
            host, port = _host_port(self.target)
            raise TransportError(
                ConnectErrorKind.UNREACHABLE, self.target,
                f"lost the vSphere API connection to {self.target.name} ({host}:{port}): "
                f"{exc.strerror if isinstance(exc, OSError) and exc.strerror else exc or type(exc).__name__}",
            ) from exc
        return CommandResult(command, render(doc), "", 0, time.monotonic() - started)

    def _query(self, query: Callable[[Any], Any]) -> Any:
        try:
            return query(self.service_instance)
        except vim.fault.NotAuthenticated:  # the session expired (idle timeout): log in once more
            self.service_instance = self.transport._relogin(self.target)
            return query(self.service_instance)


def _host_port(target: Target) -> tuple[str, int]:
    return host_port(target, DEFAULT_PORT)


def _key(target: Target) -> ConnKey:
    return conn_key(target, DEFAULT_PORT)


class VSphereTransport(TransportOptions):
    """One login per vCenter (address, port, user) per run; sessions share it."""

    def __init__(
        self,
        password_resolver: Callable[[Target], str | None] | None = None,
        connect_timeout: float = 10,
        command_timeout: float = 60,
        max_concurrent_connects: int = 16,
    ):
        super().__init__(connect_timeout=connect_timeout, command_timeout=command_timeout,
                         max_concurrent_connects=max_concurrent_connects, password_resolver=password_resolver)
        self.warnings: list[str] = []  # the CLI prints these after the run (TLS verification off, …)
        self._logins: ConnectionCache[Any] = ConnectionCache()
        self._live: dict[ConnKey, Any] = {}  # key -> ServiceInstance, for close() and re-login

    async def session(self, target: Target) -> VSphereSession:
        si = await self._logins.get(_key(target), lambda: self._connect(target))
        return VSphereSession(self, target, si)

    async def close(self) -> None:
        live, self._live = dict(self._live), {}
        self._logins.clear()
        for si in live.values():
            try:
                await asyncio.wait_for(asyncio.to_thread(Disconnect, si), 5)
            except Exception as exc:  # noqa: BLE001 - best effort: the session times out on the server anyway
                log.debug("logout failed: %s", exc)

    async def _connect(self, target: Target) -> Any:
        context = ssl_context_for(target)
        password = self._password(target)
        if password is None:
            raise TransportError(
                ConnectErrorKind.AUTH, target,
                f"no password for {target.name}: give one in the inventory (password: {{env: NAME}}, "
                "{keyring: \"service/user\"} or prompt)",
            )
        async with self.connect_slot():
            try:
                async with asyncio.timeout(self._connect_timeout(target)):
                    si = await asyncio.to_thread(self._login, target, context, password)
            except TimeoutError as exc:
                host, port = _host_port(target)
                raise TransportError(
                    ConnectErrorKind.TIMEOUT, target,
                    f"{target.name} ({host}:{port}) did not complete the vSphere API login within "
                    f"{self._connect_timeout(target):g}s; check that vCenter is up and that no firewall drops the port",
                ) from exc
        self._live[_key(target)] = si
        if _insecure(target):
            host, port = _host_port(target)
            self.warnings.append(
                f"TLS verification is OFF for {target.name} ({host}:{port}): options.insecure is true in the "
                "inventory, so anyone on the path can pose as vCenter and read its password. Give the CA that "
                "signed its certificate instead: options: {ca_file: /path/to/vcenter-ca.pem}")
        return si

    def _login(self, target: Target, context: ssl.SSLContext, password: str) -> Any:
        host, port = _host_port(target)
        try:
            return SmartConnect(host=host, port=port, user=target.credentials.username, pwd=password,
                                sslContext=context, httpConnectionTimeout=self._command_timeout(target),
                                disableSslCertValidation=_insecure(target))
        except Exception as exc:
            raise self._map_error(exc, target) from exc

    def _relogin(self, target: Target) -> Any:
        password = self._password(target)
        si = self._login(target, ssl_context_for(target), password or "")
        self._live[_key(target)] = si
        return si

    def _map_error(self, exc: Exception, target: Target) -> TransportError:
        if isinstance(exc, TransportError):
            return exc
        host, port = _host_port(target)
        name = f"{target.name} ({host}:{port})"
        user = target.credentials.username
        if isinstance(exc, ssl.SSLCertVerificationError):
            return TransportError(ConnectErrorKind.TLS, target, _tls_message(target, exc))
        if isinstance(exc, ssl.SSLError):
            return TransportError(ConnectErrorKind.PROTOCOL, target,
                                  f"TLS handshake with {name} failed: {exc.reason or exc}; is this the HTTPS port "
                                  "of vCenter?")
        if isinstance(exc, vim.fault.InvalidLogin):
            return TransportError(ConnectErrorKind.AUTH, target,
                                  f"{name} rejected the login of {user!r} (vim.fault.InvalidLogin); check the "
                                  f"username and the password reference {target.credentials.password or ''} "
                                  "in the inventory".replace("  ", " "))
        if isinstance(exc, (vim.fault.NoPermission, vim.fault.NotAuthenticated)):
            return TransportError(ConnectErrorKind.AUTH, target, f"{name}: {user!r} may not log in: {exc.msg}")
        if isinstance(exc, socket.gaierror):
            return TransportError(ConnectErrorKind.DNS, target,
                                  f"cannot resolve {host!r} for {target.name}: {exc.strerror or exc}")
        if isinstance(exc, TimeoutError):  # socket.timeout too; before OSError (TimeoutError is one)
            return TransportError(ConnectErrorKind.TIMEOUT, target,
                                  f"{name} did not answer within {self._connect_timeout(target):g}s; check that "
                                  "vCenter is up and that no firewall drops the port")
        if isinstance(exc, ConnectionRefusedError) or (isinstance(exc, OSError) and exc.errno == errno.ECONNREFUSED):
            return TransportError(ConnectErrorKind.REFUSED, target,
                                  f"{name} refused the connection: nothing listens on port {port} (vCenter's HTTPS "
                                  "port is 443; is the address right?)")
        if isinstance(exc, OSError):
            if exc.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
                return TransportError(ConnectErrorKind.UNREACHABLE, target,
                                      f"no route to {name}: {exc.strerror or exc}; check the address and the network")
            return TransportError(ConnectErrorKind.UNREACHABLE, target, f"cannot reach {name}: {exc.strerror or exc}")
        if isinstance(exc, vmodl.MethodFault):
            return TransportError(ConnectErrorKind.PROTOCOL, target,
                                  f"{name} refused the vSphere API login: {getattr(exc, '_wsdlName', '')} {exc.msg}")
        return TransportError(ConnectErrorKind.PROTOCOL, target,
                              f"{name} does not answer as a vSphere API endpoint (https://{host}:{port}/sdk): "
                              f"{type(exc).__name__}: {exc}")


def _tls_message(target: Target, exc: ssl.SSLCertVerificationError) -> str:
    host, port = _host_port(target)
    name = f"{target.name} ({host}:{port})"
    reason = exc.verify_message or exc.reason or str(exc)
    ca_file = target.options.get("ca_file")
    if "hostname" in str(reason).lower() or "ip address mismatch" in str(reason).lower():
        return (f"TLS certificate of {name} does not name {host!r} ({reason}): use the name the certificate "
                "carries as the target's address, or reissue the certificate; verification stays on")
    where = (f"is not signed by the CA in options.ca_file {ca_file}" if ca_file
             else "is not signed by a CA this machine trusts")
    return (f"TLS certificate of {name} {where} ({reason}); refusing to connect. Give the CA that signed it "
            "in the inventory: options: {ca_file: /path/to/vcenter-ca.pem} (vCenter's root CA is in "
            f"https://{host}/certs/download.zip), or, on a lab network only, options: {{insecure: true}} "
            "to skip verification (roce-wizard then warns on every run)")

