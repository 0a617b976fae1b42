"""Redfish transport for BMCs (iDRAC, iLO, …): HTTPS with httpx, certificates verified.

- TLS verification is on. The CA to trust is the target's ``options.ca_file`` (a PEM file), else
  the system's trust store. A certificate that does not verify is refused with a message naming
  ``ca_file`` (and, as the explicit opt-out, ``insecure``). ``options: {insecure: true}`` turns
  verification off for that target; the transport then adds a warning to ``self.warnings`` on
  every run (the CLI prints them), because the BMC password then goes to whoever answers.
- One HTTP client per BMC per transport (= per run); concurrent callers share it. A semaphore
  bounds how many BMCs are being logged into at once.
- Login is a Redfish session (``POST /redfish/v1/SessionService/Sessions`` → ``X-Auth-Token``),
  deleted again on ``close()`` (BMCs have few session slots); a service without a session
  service gets HTTP Basic auth. The password comes from ``password_resolver(target)`` and never
  appears in messages or logs. 401 → ``TransportError(auth)``.
- Commands are what a probe asks for, and results look like a shell's:
    ``GET /redfish/v1/Systems``  stdout is the JSON body; a non-2xx answer has exit status = the
                                 HTTP status and stderr = the Redfish error message.
    ``redfish bios``             discovers the system (first member of /redfish/v1/Systems), reads
                                 its Bios (current ``Attributes``) and Bios/Settings (pending), and
                                 prints one JSON document: {vendor, system, attributes, pending,
                                 bios_uri, settings_uri, …} (parser kind ``redfish_bios``).
    ``redfish bios-set N=V …``   stages BIOS attributes for the next reboot (`bios_set`: registry-checked,
                                 PATCH …/Bios/Settings, and on iDRAC one configuration job).
  A command that overruns its timeout is a result with ``timed_out``; only losing the BMC raises.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import re
import socket
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

import httpx

from roce_wizard.model import Target
from roce_wizard.transports.base import CommandResult, ConnectErrorKind, TransportError

__all__ = ["RedfishSession", "RedfishTransport", "bios_document", "bios_set", "vendor_of"]

log = logging.getLogger(__name__)

DEFAULT_PORT = 443
SERVICE_ROOT = "/redfish/v1"
SESSIONS = "/redfish/v1/SessionService/Sessions"
_PATH = re.compile(r"^/redfish(?:/[A-Za-z0-9_.:@$%()=,+-]*)*/?(?:\?[A-Za-z0-9_.=&$,%-]*)?$")
# Manufacturer strings and Oem keys -> the vendor names checks know
_VENDORS = (("dell", "dell"), ("hpe", "hpe"), ("hewlett", "hpe"), ("hp", "hpe"), ("lenovo", "lenovo"),
            ("supermicro", "supermicro"), ("fujitsu", "fujitsu"), ("cisco", "cisco"), ("inspur", "inspur"))


class RedfishTransport:
    """Opens one HTTPS client (and Redfish session) per BMC and hands out sessions on it."""

    def __init__(
        self,
        password_resolver: Callable[[Target], str | None] | None = None,
        connect_timeout: float = 10,
        command_timeout: float = 60,
        max_concurrent_connects: int = 16,
    ):
        if max_concurrent_connects < 1:
            raise ValueError("max_concurrent_connects must be at least 1")
        self.password_resolver = password_resolver
        self.connect_timeout = connect_timeout
        self.command_timeout = command_timeout
        self.max_concurrent_connects = max_concurrent_connects
        self.warnings: list[str] = []  # e.g. TLS verification turned off for a target (the CLI prints them)
        self._semaphore = asyncio.Semaphore(max_concurrent_connects)
        self._bmcs: dict[tuple[str, int, str], asyncio.Task[_Bmc]] = {}
        self.connects = 0

    async def session(self, target: Target) -> RedfishSession:
        key = (target.address, target.port or DEFAULT_PORT, target.credentials.username)
        task = self._bmcs.get(key)
        if task is None:
            task = asyncio.ensure_future(self._connect(target))
            task.add_done_callback(_retrieve)
            self._bmcs[key] = task
        try:
            bmc = await asyncio.shield(task)
        except BaseException:
            if self._bmcs.get(key) is task and task.done():  # a later call may try again
                del self._bmcs[key]
            raise
        return RedfishSession(self, target, bmc)

    async def close(self) -> None:
        """Log out of every BMC (best effort) and close the clients."""
        tasks = list(self._bmcs.values())
        self._bmcs.clear()
        for task in tasks:
            if not task.done():
                task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*(b.logout() for b in results if isinstance(b, _Bmc)), return_exceptions=True)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- connecting ------------------------------------------------------------------------------

    def _connect_timeout(self, target: Target) -> float:
        return float(target.options.get("connect_timeout", self.connect_timeout))

    def _command_timeout(self, target: Target) -> float:
        return float(target.options.get("command_timeout", self.command_timeout))

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def _verify(self, target: Target) -> ssl.SSLContext | bool:
        """What httpx verifies the BMC's certificate with: ca_file, else the system trust store;
        False only for an explicit `insecure: true`."""
        insecure = target.options.get("insecure", False)
        if insecure is True or (isinstance(insecure, str) and insecure.strip().lower() in ("true", "yes", "1")):
            self._warn(f"{target.name}: TLS certificate verification is OFF (inventory options.insecure: true): "
                       "whoever answers at that address gets the BMC password; give the BMC's CA as "
                       "options.ca_file instead")
            return False
        ca_file = target.options.get("ca_file")
        if ca_file:
            path = Path(str(ca_file)).expanduser()
            try:
                return ssl.create_default_context(cafile=str(path))
            except (OSError, ssl.SSLError) as exc:
                raise TransportError(
                    ConnectErrorKind.TLS, target,
                    f"cannot load options.ca_file {path} for {target.name}: {getattr(exc, 'strerror', None) or exc}; "
                    "it must be a readable PEM file with the CA certificate that signed the BMC's certificate",
                ) from exc
        return ssl.create_default_context()

    async def _connect(self, target: Target) -> _Bmc:
        async with self._semaphore:
            self.connects += 1
            verify = self._verify(target)
            host, port = target.address, target.port or DEFAULT_PORT
            netloc = f"[{host}]" if ":" in host and not host.startswith("[") else host
            client = httpx.AsyncClient(
                base_url=f"https://{netloc}:{port}", verify=verify, follow_redirects=False,
                timeout=httpx.Timeout(self._command_timeout(target), connect=self._connect_timeout(target)),
                headers={"Accept": "application/json", "OData-Version": "4.0", "User-Agent": "roce-wizard"},
            )
            bmc = _Bmc(self, target, client)
            try:
                async with asyncio.timeout(self._connect_timeout(target) * 3):
                    await bmc.login()
            except TimeoutError as exc:
                await client.aclose()
                raise TransportError(
                    ConnectErrorKind.TIMEOUT, target,
                    f"{bmc.name} did not answer the Redfish login within {self._connect_timeout(target) * 3:g}s",
                ) from exc
            except BaseException:
                await client.aclose()
                raise
            return bmc


class _Bmc:
    """One logged-in BMC: its HTTP client, its service root and how requests authenticate."""

    def __init__(self, transport: RedfishTransport, target: Target, client: httpx.AsyncClient):
        self.transport = transport
        self.target = target
        self.client = client
        self.root: dict[str, Any] = {}
        self.token: str | None = None
        self.session_uri: str | None = None
        self.basic: tuple[str, str] | None = None
        host, port = target.address, target.port or DEFAULT_PORT
        self.name = f"{target.name} ({host}:{port})"

    # every request goes through here: transport-level failures become TransportErrors
    async def request(self, method: str, path: str, *, auth: bool = True, **kw: Any) -> httpx.Response:
        headers = dict(kw.pop("headers", {}) or {})
        if auth and self.token:
            headers["X-Auth-Token"] = self.token
        try:
            return await self.client.request(method, path, headers=headers,
                                             auth=self.basic if auth and self.basic else None, **kw)
        except httpx.TimeoutException:
            raise
        except httpx.TransportError as exc:
            raise self._map_error(exc) from exc

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
        username = self.target.credentials.username
        resolver = self.transport.password_resolver
        password = resolver(self.target) if resolver is not None else None
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
        host, port = self.target.address, self.target.port or DEFAULT_PORT
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


class RedfishSession:
    """Commands on one BMC: `GET <path>` and `redfish bios` (see the module docstring)."""

    def __init__(self, transport: RedfishTransport, target: Target, bmc: _Bmc):
        self.transport = transport
        self.target = target
        self._bmc = bmc
        self._closed = False

    async def run(self, command: str, timeout: float | None = None) -> CommandResult:
        if self._closed:
            raise RuntimeError(f"session to {self.target.name} is closed")
        if timeout is None:
            timeout = self.transport._command_timeout(self.target)
        started = time.monotonic()
        words = command.split()
        try:
            async with asyncio.timeout(timeout):
                if len(words) == 2 and words[0].upper() == "GET":
                    if not _PATH.match(words[1]):
                        return _result(command, "", f"not a Redfish path: {words[1]!r} (expected /redfish/v1/…)",
                                       2, started)
                    resp = await self._get(words[1])
                    if 200 <= resp.status_code < 300:
                        return _result(command, resp.text, "", 0, started)
                    return _result(command, "", _http_error(words[1], resp), resp.status_code, started)
                if words == ["redfish", "bios"]:
                    return await self._bios(command, started)
                if words[:2] == ["redfish", "bios-set"]:
                    return await self._bios_set(command, words[2:], started)
        except (TimeoutError, httpx.TimeoutException):
            return CommandResult(command=command, stdout="", stderr=f"no answer from {self._bmc.name} within {timeout:g}s",
                                 exit_status=None, duration_s=time.monotonic() - started, timed_out=True)
        except TransportError as exc:
            dropped = _dropped(exc, self.target, self._bmc.name, command)
            if dropped is None:
                raise
            raise dropped from exc
        return _result(command, "", f"redfish: unknown command {command!r} (this transport runs `GET /redfish/v1/…`, "
                                    "`redfish bios` and `redfish bios-set NAME=VALUE …`)", 127, started)

    async def _get(self, path: str) -> httpx.Response:
        bmc = self._bmc
        resp = await bmc.request("GET", path)
        if resp.status_code == 401 and bmc.token:  # the session expired (idle timeout): log in once more
            bmc.token = None
            await bmc.login()
            resp = await bmc.request("GET", path)
        return resp

    async def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
        bmc = self._bmc
        resp = await bmc.request(method, path, json=body)
        if resp.status_code == 401 and bmc.token:  # the session expired: log in once more
            bmc.token = None
            await bmc.login()
            resp = await bmc.request(method, path, json=body)
        return resp

    async def _bios_set(self, command: str, args: list[str], started: float) -> CommandResult:
        """Stage BIOS attributes (see `bios_set`); exit 0 with a one-line outcome, 2 on a malformed
        line or an attribute / value the BIOS does not have, 1 when the BMC refuses."""
        wanted: dict[str, str] = {}
        for arg in args:
            name, sep, value = arg.partition("=")
            if not sep or not _ATTR_NAME.match(name) or not _ATTR_VALUE.match(value):
                return _result(command, "", f"redfish bios-set: {arg!r} is not NAME=VALUE (letters, digits, _ . -)",
                               2, started)
            wanted[name] = value
        if not wanted:
            return _result(command, "", "redfish bios-set: no NAME=VALUE given", 2, started)
        try:
            line = await bios_set(self, wanted)
        except _Refused as exc:
            return _result(command, "", str(exc), exc.status, started)
        return _result(command, line + "\n", "", 0, started)

    async def _bios(self, command: str, started: float) -> CommandResult:
        async def get(path: str) -> tuple[dict[str, Any] | None, str | None, int]:
            resp = await self._get(path)
            if not 200 <= resp.status_code < 300:
                return None, _http_error(path, resp), resp.status_code
            body = _json(resp)
            if not isinstance(body, dict):
                return None, f"GET {path}: the answer is not a JSON object", 1
            return body, None, 0

        systems, err, status = await get("/redfish/v1/Systems")
        if systems is None:
            return _result(command, "", err or "", status, started)
        members = [m.get("@odata.id") for m in systems.get("Members") or [] if isinstance(m, dict)]
        if not members or not members[0]:
            return _result(command, "", f"{self._bmc.name}: /redfish/v1/Systems lists no system", 1, started)
        system, err, status = await get(_path(members[0]))
        if system is None:
            return _result(command, "", err or "", status, started)
        bios_uri = (system.get("Bios") or {}).get("@odata.id")
        if not bios_uri:
            return _result(command, "", f"{self._bmc.name}: system {members[0]} has no Bios resource", 1, started)
        bios, err, status = await get(_path(bios_uri))
        if bios is None:
            return _result(command, "", err or "", status, started)
        settings_uri = (((bios.get("@Redfish.Settings") or {}).get("SettingsObject") or {}).get("@odata.id")
                        or bios_uri.rstrip("/") + "/Settings")
        settings, err, status = await get(_path(settings_uri))
        doc = bios_document(self._bmc.root, system, bios, settings)
        doc["system_uri"] = members[0]
        doc["bios_uri"] = bios_uri
        doc["settings_uri"] = settings_uri
        if settings is None:
            doc["settings_error"] = err
        return _result(command, json.dumps(doc, indent=2, sort_keys=True) + "\n", "", 0, started)

    async def close(self) -> None:
        self._closed = True


# ---------------------------------------------------------------------------- staging BIOS settings

_ATTR_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
_ATTR_VALUE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class _Refused(Exception):
    def __init__(self, message: str, status: int = 1):
        super().__init__(message)
        self.status = status


async def _get_json(session: RedfishSession, path: str) -> dict[str, Any]:
    resp = await session._get(path)
    body = _json(resp)
    if not 200 <= resp.status_code < 300 or not isinstance(body, dict):
        raise _Refused(_http_error(path, resp))
    return body


async def _registry(session: RedfishSession, bios_uri: str, bios: dict[str, Any]) -> dict[str, dict[str, Any]] | None:
    """The BIOS attribute registry by attribute name: iDRAC serves it at …/Bios/BiosRegistry, others
    through /redfish/v1/Registries (the registry named by Bios.AttributeRegistry); None when neither."""
    candidates = [bios_uri.rstrip("/") + "/BiosRegistry"]
    name = bios.get("AttributeRegistry")
    if isinstance(name, str) and name:
        try:
            registries = await _get_json(session, "/redfish/v1/Registries")
            for member in registries.get("Members") or []:
                uri = member.get("@odata.id") if isinstance(member, dict) else None
                if uri and uri.rstrip("/").rsplit("/", 1)[-1] in (name, name.rsplit(".", 1)[0]):
                    info = await _get_json(session, _path(uri))
                    candidates += [loc.get("Uri") for loc in info.get("Location") or [] if isinstance(loc, dict)
                                   and loc.get("Uri")]
        except _Refused:
            pass
    for uri in candidates:
        resp = await session._get(_path(uri))
        body = _json(resp)
        if 200 <= resp.status_code < 300 and isinstance(body, dict):
            entries = ((body.get("RegistryEntries") or {}).get("Attributes")) or []
            return {e["AttributeName"]: e for e in entries if isinstance(e, dict) and e.get("AttributeName")}
    return None


def _typed(name: str, value: str, entry: dict[str, Any] | None, current: Any) -> Any:
    """The value as the BIOS takes it (registry Type, else the current value's type); _Refused(2)
    when the registry says no."""
    kind = (entry or {}).get("Type") or ("Integer" if isinstance(current, int) and not isinstance(current, bool)
                                         else "Boolean" if isinstance(current, bool) else "String")
    if kind == "Enumeration" and entry is not None:
        names = [v.get("ValueName") for v in entry.get("Value") or [] if isinstance(v, dict)]
        if value not in names:
            raise _Refused(f"redfish bios-set: {value!r} is not a value of {name} (the BIOS registry allows "
                           f"{', '.join(map(str, names))})", 2)
        return value
    if kind == "Integer":
        if not re.fullmatch(r"-?\d+", value):
            raise _Refused(f"redfish bios-set: {name} takes an integer, not {value!r}", 2)
        number = int(value)
        low, high = (entry or {}).get("LowerBound"), (entry or {}).get("UpperBound")
        if (isinstance(low, int) and number < low) or (isinstance(high, int) and number > high):
            raise _Refused(f"redfish bios-set: {name}={number} is outside {low}..{high}", 2)
        return number
    if kind == "Boolean":
        if value.lower() not in ("true", "false"):
            raise _Refused(f"redfish bios-set: {name} takes true or false, not {value!r}", 2)
        return value.lower() == "true"
    return value


async def _scheduled_bios_jobs(session: RedfishSession, manager: str) -> list[dict[str, Any]]:
    jobs = await _get_json(session, manager.rstrip("/") + "/Jobs")
    out = []
    for member in jobs.get("Members") or []:
        uri = member.get("@odata.id") if isinstance(member, dict) else None
        if not uri:
            continue
        job = await _get_json(session, _path(uri))
        if job.get("JobState") in ("Scheduled", "New") and job.get("JobType") in ("BIOSConfiguration", None):
            out.append({**job, "@odata.id": uri})
    return out


async def bios_set(session: RedfishSession, wanted: dict[str, str]) -> str:
    """Stage `wanted` BIOS attributes to apply at the server's next reboot; the one-line outcome.

    Names and values are checked against the BIOS attribute registry (else the attributes the BIOS
    shows) before anything is sent. iDRAC: the values staged so far and the new ones go into one
    PATCH of Bios/Settings, then one BIOS configuration job (`POST …/Jobs {TargetSettingsURI}`);
    a job already scheduled is replaced by one holding both (iDRAC refuses a PATCH while one is
    scheduled, SYS011). Other BMCs (iLO): the PATCH itself is applied at the next reset. Values
    already current, or already staged with a scheduled job, send nothing."""
    systems = await _get_json(session, "/redfish/v1/Systems")
    members = [m.get("@odata.id") for m in systems.get("Members") or [] if isinstance(m, dict)]
    if not members or not members[0]:
        raise _Refused(f"{session._bmc.name}: /redfish/v1/Systems lists no system")
    system = await _get_json(session, _path(members[0]))
    bios_uri = (system.get("Bios") or {}).get("@odata.id")
    if not bios_uri:
        raise _Refused(f"{session._bmc.name}: system {members[0]} has no Bios resource")
    bios = await _get_json(session, _path(bios_uri))
    settings_uri = _path(((bios.get("@Redfish.Settings") or {}).get("SettingsObject") or {}).get("@odata.id")
                          or bios_uri.rstrip("/") + "/Settings")
    settings = await _get_json(session, settings_uri)
    doc = bios_document(session._bmc.root, system, bios, settings)
    current, pending = doc["attributes"], doc["pending"] or {}
    registry = await _registry(session, _path(bios_uri), bios)
    values: dict[str, Any] = {}
    for name, text in wanted.items():
        entry = (registry or {}).get(name)
        if (registry is not None and entry is None) or (registry is None and name not in current):
            where = "the BIOS attribute registry" if registry is not None else "the attributes the BIOS shows"
            raise _Refused(f"redfish bios-set: {name} is not in {where} of {session._bmc.name}", 2)
        values[name] = _typed(name, text, entry, current.get(name))
    host = doc["system"].get("host_name") or session.target.host or "the server"
    shown = " ".join(f"{k}={v}" for k, v in values.items())
    # what must change: not current yet, or something else staged for it
    change = {k: v for k, v in values.items() if current.get(k) != v or pending.get(k, v) != v}
    if not change:
        return f"{shown}: already the current BIOS settings"
    dell = doc["vendor"] == "dell"
    manager = doc["system"].get("manager_uri")
    jobs = await _scheduled_bios_jobs(session, manager) if dell and manager else []
    if all(pending.get(k) == v for k, v in change.items()) and (jobs or not dell):
        where = f" by job {jobs[0].get('Id')}" if jobs else ""
        return f"{shown}: already staged{where}; applies at the next reboot of {host}"
    body = {**pending, **change} if dell else change
    for job in jobs:  # iDRAC: one job at a time; the new one commits the old one's values too
        resp = await session._call("DELETE", _path(job["@odata.id"]))
        if not 200 <= resp.status_code < 300:
            raise _Refused(f"DELETE {job['@odata.id']}: HTTP {resp.status_code}: {redfish_message(resp)}")
    resp = await session._call("PATCH", settings_uri, {"Attributes": body})
    if not 200 <= resp.status_code < 300:
        raise _Refused(f"PATCH {settings_uri}: HTTP {resp.status_code}: {redfish_message(resp)}")
    if not dell:
        return f"staged {shown} in {settings_uri}; applies at the next reset of {host}"
    resp = await session._call("POST", manager.rstrip("/") + "/Jobs", {"TargetSettingsURI": settings_uri})
    if not 200 <= resp.status_code < 300:
        raise _Refused(f"POST {manager}/Jobs: HTTP {resp.status_code}: {redfish_message(resp)}")
    job_uri = resp.headers.get("Location") or ""
    replaced = f" (replacing {', '.join(str(j.get('Id')) for j in jobs)})" if jobs else ""
    return (f"staged {shown} in {settings_uri}; BIOS configuration job {job_uri.rsplit('/', 1)[-1] or '?'} "
            f"scheduled{replaced}: applies at the next reboot of {host}")


def bios_document(root: dict[str, Any], system: dict[str, Any], bios: dict[str, Any],
                  settings: dict[str, Any] | None) -> dict[str, Any]:
    """The `redfish bios` JSON: vendor, system identity, current attributes and pending changes.

    Pending = what Bios/Settings would change (iDRAC lists only staged values there; iLO lists the
    whole future BIOS, so unchanged ones are left out); None when Bios/Settings could not be read."""
    attributes = bios.get("Attributes") if isinstance(bios.get("Attributes"), dict) else {}
    future = (settings or {}).get("Attributes") if isinstance((settings or {}).get("Attributes"), dict) else {}
    # no readable Bios/Settings: what is staged is unknown (None), not "nothing"
    pending = {k: v for k, v in future.items() if attributes.get(k) != v} if settings is not None else None
    managers = [m.get("@odata.id") for m in (system.get("Links") or {}).get("ManagedBy") or [] if isinstance(m, dict)]
    return {
        "vendor": vendor_of(root, system),
        "system": {
            "id": system.get("Id"),
            "manufacturer": system.get("Manufacturer"),
            "model": system.get("Model"),
            "serial": system.get("SerialNumber") or system.get("SKU"),
            "bios_version": system.get("BiosVersion"),
            "host_name": system.get("HostName"),
            "power_state": system.get("PowerState"),
            "manager_uri": managers[0] if managers else None,
            "reset_uri": ((system.get("Actions") or {}).get("#ComputerSystem.Reset") or {}).get("target"),
        },
        "product": root.get("Product"),
        "attribute_registry": bios.get("AttributeRegistry"),
        "attributes": attributes,
        "pending": pending,
    }


def vendor_of(root: dict[str, Any], system: dict[str, Any]) -> str | None:
    """"dell", "hpe", … from the service root's Oem section, else the system's Manufacturer."""
    candidates = [*((root.get("Oem") or {}) if isinstance(root.get("Oem"), dict) else {}),
                  *((system.get("Oem") or {}) if isinstance(system.get("Oem"), dict) else {}),
                  system.get("Manufacturer") or "", root.get("Vendor") or ""]
    for text in candidates:
        word = str(text).strip().lower()
        for prefix, vendor in _VENDORS:
            if word == prefix or word.startswith(prefix + " ") or (len(prefix) > 2 and word.startswith(prefix)):
                return vendor
    manufacturer = (system.get("Manufacturer") or "").strip()
    return manufacturer.split()[0].lower() if manufacturer else None


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


def _retrieve(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()
