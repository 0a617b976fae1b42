"""One logged-in BMC (`_Bmc`: HTTP client, login/logout, error mapping) and the small HTTP helpers."""

from __future__ import annotations

import asyncio
import errno
import logging
import re
import socket
import ssl
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from roce_wizard.model import Target
from roce_wizard.transports.base import CommandResult, ConnectErrorKind, TransportError
from roce_wizard.transports.plumbing import host_port
from roce_wizard.transports.redfish.features import ProtocolFeatures

if TYPE_CHECKING:
    from roce_wizard.transports.redfish.connect import RedfishTransport


log = logging.getLogger("roce_wizard.transports.redfish")

DEFAULT_PORT = 443
SERVICE_ROOT = "/redfish/v1"
SESSIONS = "/redfish/v1/SessionService/Sessions"
# RFC 9112 §9.3.1: a client may retry an idempotent request once when the connection closed under it
IDEMPOTENT = frozenset({"GET", "HEAD", "DELETE"})
_PATH = re.compile(r"^/redfish(?:/[A-Za-z0-9_.:@$%()=,+-]*)*/?(?:\?[A-Za-z0-9_.=&$,%-]*)?$")


@dataclass
class BmcStats:
    """What one run asked of one BMC: TCP connections opened, HTTP requests sent, logins."""

    connections: int = 0
    requests: int = 0
    logins: int = 0


class _Bmc:
    """One logged-in BMC: its HTTP client (one kept-alive connection), its service root, what it supports
    of the query parameters, and how requests authenticate. `connections` counts the TCP connections
    opened to it and `requests` the requests sent, in `stats` (kept by the transport past `close()`)."""

    def __init__(self, transport: RedfishTransport, target: Target, client: httpx.AsyncClient):
        self.transport = transport
        self.target = target
        self.client = client
        self.root: dict[str, Any] = {}
        self.token: str | None = None
        self.session_uri: str | None = None
        self.basic: tuple[str, str] | None = None
        self.features = ProtocolFeatures()
        self.stats = transport.stats.setdefault(target.name, BmcStats())
        host, port = host_port(target, DEFAULT_PORT)
        self.name = f"{target.name} ({host}:{port})"

    # every request goes through here: transport-level failures become TransportErrors
    async def request(self, method: str, path: str, *, auth: bool = True, **kw: Any) -> httpx.Response:
        headers = dict(kw.pop("headers", {}) or {})
        if auth and self.token:
            headers["X-Auth-Token"] = self.token
        first: httpx.TransportError | None = None
        while True:
            opened = self.stats.connections
            self.stats.requests += 1
            try:
                return await self.client.request(method, path, headers=headers, extensions={"trace": self._trace},
                                                 auth=self.basic if auth and self.basic else None, **kw)
            except httpx.TimeoutException:
                raise
            except httpx.TransportError as exc:
                # a kept-alive connection the BMC closed while it was idle: once more, on a new connection
                if first is None and method in IDEMPOTENT and self.stats.connections == opened and _closed(exc):
                    first = exc
                    continue
                # the retry could not even connect: what happened first is the news (the BMC dropped us)
                cause = first if first is not None and isinstance(exc, httpx.ConnectError) else exc
                raise self._map_error(cause) from cause

    async def _trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's trace extension: count the TCP connections this client opens."""
        if event == "connection.connect_tcp.complete":
            self.stats.connections += 1

    async def login(self) -> None:
        root = await self.request("GET", SERVICE_ROOT, auth=False)
        body = _json(root)
        if root.status_code != 200 or not isinstance(body, dict) or not (
                "RedfishVersion" in body or "@odata.id" in body or "Systems" in body):
            raise TransportError(
                ConnectErrorKind.PROTOCOL, self.target,
                f"{self.name} does not answer Redfish at {SERVICE_ROOT} (HTTP {root.status_code}); "
                "check the address and port of the BMC in the inventory",
            )
        self.root = body
        self.stats.logins += 1
        self.features = ProtocolFeatures.of(body)
        username = self.target.credentials.username
        password = self.transport._password(self.target)
        if password is None:
            ref = self.target.credentials.password
            raise TransportError(
                ConnectErrorKind.AUTH, self.target,
                f"no password for {self.name}: the inventory gives "
                + (f"{ref}, which did not resolve" if ref is not None else "none (set password: {env: VAR})"),
            )
        sessions = ((body.get("Links") or {}).get("Sessions") or {}).get("@odata.id") or SESSIONS
        resp = await self.request("POST", sessions, auth=False, json={"UserName": username, "Password": password})
        if resp.status_code in (200, 201) and resp.headers.get("X-Auth-Token"):
            self.token = resp.headers["X-Auth-Token"]
            self.session_uri = resp.headers.get("Location") or (_json(resp) or {}).get("@odata.id")
            return
        if resp.status_code in (400, 401, 403):
            raise self._auth_error(resp)
        # no session service (404/405/501…): HTTP Basic on every request, checked once here
        self.basic = (username, password)
        check = await self.request("GET", "/redfish/v1/Systems")
        if check.status_code in (401, 403):
            raise self._auth_error(check)

    def _auth_error(self, resp: httpx.Response) -> TransportError:
        return TransportError(
            ConnectErrorKind.AUTH, self.target,
            f"{self.name} rejected user {self.target.credentials.username!r} (HTTP {resp.status_code}"
            f"{': ' + m if (m := redfish_message(resp)) else ''}); check the username and the password reference "
            f"({self.target.credentials.password}) in the inventory",
        )

    async def logout(self) -> None:
        try:
            if self.token and self.session_uri:
                path = self.session_uri
                if path.startswith("http"):
                    path = httpx.URL(path).raw_path.decode()
                async with asyncio.timeout(5):
                    await self.request("DELETE", path)
        except Exception as exc:  # noqa: BLE001 - logging out is best effort
            log.debug("%s: logout failed: %s", self.name, exc)
        finally:
            await self.client.aclose()

    def _map_error(self, exc: Exception) -> TransportError:
        host, port = host_port(self.target, DEFAULT_PORT)
        name = self.name
        chain = _chain(exc)
        cert = next((e for e in chain if isinstance(e, ssl.SSLCertVerificationError)), None)
        if cert is not None or "CERTIFICATE_VERIFY_FAILED" in str(exc):
            reason = getattr(cert, "verify_message", None) or str(cert or exc)
            ca_file = self.target.options.get("ca_file")
            if ca_file:
                advice = (f"it does not verify against options.ca_file {ca_file}: give the CA that signed the BMC's "
                          "certificate there (or install a certificate for this address on the BMC)")
            else:
                advice = ("give the BMC's CA certificate (PEM) as `options: {ca_file: /path/to/bmc-ca.pem}` on this "
                          "target in the inventory; only if you accept the risk, `options: {insecure: true}` turns "
                          "verification off")
            return TransportError(ConnectErrorKind.TLS, self.target,
                                  f"{name} presented a TLS certificate that cannot be verified ({reason}); {advice}")
        if any(isinstance(e, socket.gaierror) for e in chain):
            gai = next(e for e in chain if isinstance(e, socket.gaierror))
            return TransportError(ConnectErrorKind.DNS, self.target,
                                  f"cannot resolve {host!r} for {self.target.name}: {gai.strerror or gai}")
        if isinstance(exc, httpx.ConnectTimeout) or any(isinstance(e, TimeoutError) for e in chain):
            return TransportError(ConnectErrorKind.TIMEOUT, self.target,
                                  f"{name} did not accept an HTTPS connection within "
                                  f"{self.transport._connect_timeout(self.target):g}s; check that the BMC is up "
                                  "and that no firewall drops the port")
        if any(isinstance(e, ConnectionRefusedError) or (isinstance(e, OSError) and e.errno == errno.ECONNREFUSED)
               for e in chain):
            return TransportError(ConnectErrorKind.REFUSED, self.target,
                                  f"{name} refused the connection: nothing listens on port {port} (is the BMC's "
                                  "HTTPS/Redfish service enabled, and is the port right?)")
        if any(isinstance(e, ssl.SSLError) for e in chain):
            return TransportError(ConnectErrorKind.TLS, self.target,
                                  f"TLS handshake with {name} failed: {exc}")
        if any(isinstance(e, OSError) and e.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH) for e in chain):
            return TransportError(ConnectErrorKind.UNREACHABLE, self.target,
                                  f"no route to {name}; check the address and the management network")
        if isinstance(exc, (httpx.RemoteProtocolError, httpx.ProtocolError)):
            return TransportError(ConnectErrorKind.PROTOCOL, self.target,
                                  f"{name} does not speak HTTPS as expected: {exc}")
        return TransportError(ConnectErrorKind.UNREACHABLE, self.target, f"cannot reach {name}: {exc or type(exc).__name__}")


def _dropped(exc: TransportError, target: Target, name: str, command: str) -> TransportError | None:
    """A connection the BMC closed under a request (reset, reboot of the BMC) is said as such; any
    other transport error (refused on reconnect, TLS, auth) stays what it is."""
    cause = exc.__cause__
    closed = isinstance(cause, (httpx.ReadError, httpx.WriteError)) or (
        isinstance(cause, httpx.RemoteProtocolError) and "disconnected" in str(cause).lower())
    if not closed:
        return None
    return TransportError(ConnectErrorKind.DROPPED, target,
                          f"the HTTPS connection to {name} closed while `{command}` was running ({cause}); the BMC "
                          "may be resetting", command=command)


def redfish_message(resp: httpx.Response) -> str:
    """The human part of a Redfish error body (@Message.ExtendedInfo messages, else error.message)."""
    body = _json(resp)
    if not isinstance(body, dict):
        return ""
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    infos = error.get("@Message.ExtendedInfo") or []
    texts = []
    for info in infos if isinstance(infos, list) else []:
        if isinstance(info, dict) and info.get("Message"):
            msg_id = info.get("MessageId")
            texts.append(f"{info['Message']}" + (f" ({msg_id})" if msg_id else ""))
    if texts:
        return " ".join(texts)
    return str(error.get("message") or "")


def _closed(exc: httpx.TransportError) -> bool:
    """The peer closed the connection (reset, EOF before an answer), as opposed to refusing a new one."""
    return isinstance(exc, (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError))


def _http_error(path: str, resp: httpx.Response) -> str:
    message = redfish_message(resp)
    return f"GET {path}: HTTP {resp.status_code} {resp.reason_phrase}" + (f": {message}" if message else "")


def _json(resp: httpx.Response) -> Any:
    try:
        return resp.json()
    except (ValueError, UnicodeDecodeError):
        return None


def _path(uri: str) -> str:
    """An @odata.id (or absolute URL) as a path on this BMC."""
    if uri.startswith(("http://", "https://")):
        return httpx.URL(uri).raw_path.decode()
    return uri


def _result(command: str, stdout: str, stderr: str, status: int, started: float) -> CommandResult:
    return CommandResult(command=command, stdout=stdout, stderr=stderr, exit_status=status,
                         duration_s=time.monotonic() - started)


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    seen: set[int] = set()
    stack: list[BaseException | None] = [exc]
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        out.append(e)
        stack.extend((e.__cause__, e.__context__))
        stack.extend(getattr(e, "exceptions", ()) or ())  # ExceptionGroup / asyncio's multi-address errors
    return out

