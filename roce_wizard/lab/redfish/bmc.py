"""One lab BMC: its world views, paths, routes, authentication and HTTP server; the resources live in service.py, bios.py, jobs.py, sessions.py."""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hmac
import re
import ssl
import time
import uuid
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from roce_wizard.lab.redfish.bios import get_bios, get_registry, get_settings, patch_settings
from roce_wizard.lab.redfish.http import (
    Job,
    RedfishError,
    Request,
    Response,
    Session,
    _error_body,
    _etag,
    _message,
    _no_session,
    _not_found,
    _parse_head,
    _read_body,
    _render,
    log,
)
from roce_wizard.lab.redfish.jobs import _new_job, delete_job, get_job, get_jobs, post_job
from roce_wizard.lab.redfish.service import (
    get_manager,
    get_managers,
    get_odata,
    get_root,
    get_system,
    get_systems,
    get_versions,
    post_reset,
)
from roce_wizard.lab.redfish.sessions import (
    delete_session,
    get_session,
    get_session_service,
    get_sessions,
    post_session,
)
from roce_wizard.lab.redfish.vendors import (
    _DELL_PROFILE_VALUES,
    _HPE_POWER_REGULATOR,
    BASE,
    DELL,
    HPE,
    IDLE_CONNECTION_S,
    SESSION_TIMEOUT_S,
    VENDORS,
    Attr,
    Vendor,
    bmc_name,
    bmc_vendor,
)
from roce_wizard.lab.world import EsxiHost, World

if TYPE_CHECKING:
    from roce_wizard.lab.redfish.lab import BmcHandle


class Bmc:
    """The Redfish service of one server."""

    def __init__(self, lab: BmcHandle, host: str):
        self.lab = lab
        self.host_name = host
        self.name = bmc_name(host)
        self.staged: dict[str, Any] = {}  # PATCHed, no job yet (iDRAC only): world key -> value
        self.jobs: dict[str, Job] = {}
        self.sessions: dict[str, Session] = {}
        self.server: asyncio.Server | None = None
        self.port = 0
        self._next_session = 1
        self._writers: set[asyncio.StreamWriter] = set()
        self._routes: dict[str, list[tuple[re.Pattern[str], dict[str, Callable[..., Response]]]]] = {}
        self._world: World | None = None
        self.sync_world()

    # -------------------------------------------------------------- world views

    def sync_world(self) -> None:
        """Follow the lab's world: a swapped-in world (tests reset the lab) brings its own BIOS state."""
        world = self.lab.world
        if world is self._world:
            return
        self._world = world
        self.staged.clear()
        self.jobs.clear()
        if self.vendor.jobs and self.host.bios_pending:
            # the world has staged BIOS values waiting for a reboot: a job must have committed them
            _new_job(self, dict(self.host.bios_pending))

    @property
    def host(self) -> EsxiHost:
        return self.lab.world.hosts[self.host_name]

    @property
    def vendor(self) -> Vendor:
        """Read on every request: a fault (RW102) may turn this server into an HPE one while the lab runs."""
        return VENDORS[bmc_vendor(self.host)]

    @property
    def routes(self) -> list[tuple[re.Pattern[str], dict[str, Callable[..., Response]]]]:
        vendor = self.vendor
        if vendor.name not in self._routes:
            self._routes[vendor.name] = self._build_routes(vendor)
        return self._routes[vendor.name]

    def _identity(self) -> dict[str, str]:
        digits = "".join(ch for ch in self.host_name if ch.isdigit()) or "0"
        index = int(digits)
        tag = f"RWLAB{index:02d}"[-7:]
        return {
            "model": self.vendor.model,
            "manufacturer": "Dell Inc." if self.vendor is DELL else "HPE",
            "bios_version": self.vendor.bios_version,
            "service_tag": tag if self.vendor is DELL else f"CZ2{index:07d}",
            "product_id": "868703-B21",
            "memory": "384 GB",
            "uuid": str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{tag}.{self.vendor.name}.roce-wizard.lab")),
        }

    def _value(self, attr: Attr, bios: dict[str, Any]) -> Any:
        """An attribute's value in a BIOS whose stored values are `bios` (world keys)."""
        if attr.identity:
            return self._identity()[attr.identity]
        if attr.profile:
            profile = bios.get("SysProfile", DELL.attr("SysProfile").default)  # type: ignore[union-attr]
            table = _DELL_PROFILE_VALUES.get(profile)
            if table is not None and attr.name in table:
                return table[attr.name]
        if attr.name == "PowerRegulator" and attr.world_key not in bios:
            return _HPE_POWER_REGULATOR.get(bios.get("SysProfile", ""), attr.default)
        return bios.get(attr.world_key, attr.default)

    def attributes(self, bios: dict[str, Any] | None = None) -> dict[str, Any]:
        bios = self.host.bios if bios is None else bios
        return {a.name: self._value(a, bios) for a in self.vendor.attributes}

    def pending(self) -> dict[str, Any]:
        """World keys waiting: committed by a job (bios_pending) or, on iDRAC, staged without one."""
        return {**self.host.bios_pending, **self.staged}

    def _names(self, values: dict[str, Any]) -> dict[str, Any]:
        by_key = {a.world_key: a.name for a in self.vendor.attributes if not a.identity}
        return {by_key.get(k, k): v for k, v in values.items()}

    def scheduled_job(self) -> Job | None:
        return next((j for j in self.jobs.values() if j.state(self.host) != "Completed"), None)

    # -------------------------------------------------------------- paths

    def _p(self, path: str) -> str:
        """A resource's @odata.id as this vendor spells it."""
        if self.vendor.trailing_slash and not path.endswith("/"):
            return path + "/"
        return path

    @property
    def system_path(self) -> str:
        return f"/redfish/v1/Systems/{self.vendor.system_id}"

    @property
    def manager_path(self) -> str:
        return f"/redfish/v1/Managers/{self.vendor.manager_id}"

    @property
    def settings_path(self) -> str:
        return f"{self.system_path}/Bios/Settings"

    def _build_routes(self, vendor: Vendor) -> list[tuple[re.Pattern[str], dict[str, Callable[..., Response]]]]:
        sys_ = re.escape(f"/redfish/v1/Systems/{vendor.system_id}")
        mgr = re.escape(f"/redfish/v1/Managers/{vendor.manager_id}")
        flags = re.IGNORECASE if vendor is HPE else 0
        table: list[tuple[str, dict[str, Callable[..., Response]]]] = [
            (r"/redfish", {"GET": partial(get_versions, self)}),
            (r"/redfish/v1", {"GET": partial(get_root, self)}),
            (r"/redfish/v1/odata", {"GET": partial(get_odata, self)}),
            (r"/redfish/v1/Systems", {"GET": partial(get_systems, self)}),
            (sys_, {"GET": partial(get_system, self)}),
            (sys_ + r"/Actions/ComputerSystem\.Reset", {"POST": partial(post_reset, self)}),
            (sys_ + r"/Bios", {"GET": partial(get_bios, self)}),
            (sys_ + r"/Bios/Settings", {"GET": partial(get_settings, self), "PATCH": partial(patch_settings, self)}),
            (r"/redfish/v1/Managers", {"GET": partial(get_managers, self)}),
            (mgr, {"GET": partial(get_manager, self)}),
            (r"/redfish/v1/SessionService", {"GET": partial(get_session_service, self)}),
            (r"/redfish/v1/SessionService/Sessions", {"GET": partial(get_sessions, self), "POST": partial(post_session, self)}),
            (r"/redfish/v1/SessionService/Sessions/(?P<sid>[^/]+)",
             {"GET": partial(get_session, self), "DELETE": partial(delete_session, self)}),
        ]
        if vendor is DELL:
            table += [
                (sys_ + r"/Bios/BiosRegistry", {"GET": partial(get_registry, self)}),
                (mgr + r"(?:/Oem/Dell)?/Jobs", {"GET": partial(get_jobs, self), "POST": partial(post_job, self)}),
                (mgr + r"(?:/Oem/Dell)?/Jobs/(?P<jid>[^/]+)", {"GET": partial(get_job, self), "DELETE": partial(delete_job, self)}),
            ]
        return [(re.compile(pattern + r"/?", flags), methods) for pattern, methods in table]

    # -------------------------------------------------------------- dispatch

    PUBLIC = ("/redfish", "/redfish/v1", "/redfish/v1/odata")

    def handle(self, req: Request) -> Response:
        try:
            self.sync_world()
            path = req.path if req.path == "/" else req.path.rstrip("/") or "/"
            public = path.lower() in [p.lower() for p in self.PUBLIC] or (
                req.method == "POST" and path.lower() == "/redfish/v1/sessionservice/sessions")
            if not public:
                self._authenticate(req)
            for pattern, methods in self.routes:
                m = pattern.fullmatch(req.path)
                if m is None:
                    continue
                method = "GET" if req.method == "HEAD" else req.method
                handler = methods.get(method)
                if handler is None:
                    allow = ", ".join(sorted({*methods, "HEAD"} if "GET" in methods else methods))
                    raise RedfishError(405, _message(f"{BASE}.OperationNotAllowed",
                                                     "The HTTP method is not allowed on this resource.",
                                                     severity="Critical"), headers={"Allow": allow})
                resp = handler(req, **m.groupdict())
                if req.method == "GET" and resp.status == 200 and resp.body is not None:
                    resp.headers.setdefault("ETag", _etag(resp.body))
                return resp
            raise _not_found(req.path)
        except RedfishError as exc:
            return Response(exc.status, _error_body(*exc.messages), exc.headers)
        except Exception:  # a bug here must not kill the connection loop
            log.exception("%s: %s %s failed", self.name, req.method, req.path)
            return Response(500, _error_body(_message(f"{BASE}.InternalError",
                                                      "The request failed due to an internal service error.  "
                                                      "The service is still operational.", severity="Critical")))

    def _authenticate(self, req: Request) -> str:
        token = req.headers.get("x-auth-token")
        now = time.monotonic()
        for sid, session in list(self.sessions.items()):
            if now - session.last_used > SESSION_TIMEOUT_S:
                del self.sessions[sid]
        if token:
            for session in self.sessions.values():
                if hmac.compare_digest(session.token, token):
                    session.last_used = now
                    return session.username
            raise _no_session()
        auth = req.headers.get("authorization", "")
        scheme, _, blob = auth.partition(" ")
        if scheme.lower() == "basic" and blob:
            try:
                user, _, password = base64.b64decode(blob.strip(), validate=True).decode("utf-8").partition(":")
            except (binascii.Error, UnicodeDecodeError):
                raise _no_session() from None
            if self.lab.check_password(user, password):
                return user
        raise _no_session()

    # -------------------------------------------------------------- the HTTP server

    async def start(self, context: ssl.SSLContext) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=context,
                                                 ssl_handshake_timeout=15.0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                try:
                    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), IDLE_CONNECTION_S)
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError,
                        ConnectionError, ssl.SSLError):
                    return
                try:
                    req = _parse_head(head)
                except ValueError as exc:
                    writer.write(_render(Response(400, _error_body(_message(
                        f"{BASE}.GeneralError", f"Bad request: {exc}", severity="Critical"))), False, False))
                    await writer.drain()
                    return
                try:
                    req.body = await _read_body(reader, writer, req.headers)
                    resp = self.handle(req)
                except RedfishError as exc:
                    resp = Response(exc.status, _error_body(*exc.messages), exc.headers)
                    req.headers["connection"] = "close"  # the body may not have been read
                except ValueError:
                    resp = Response(400, _error_body(_message(f"{BASE}.GeneralError", "Bad request body framing.",
                                                              severity="Critical")))
                    req.headers["connection"] = "close"
                keep = "close" not in req.headers.get("connection", "").lower() and (
                    req.version == "HTTP/1.1" or "keep-alive" in req.headers.get("connection", "").lower())
                writer.write(_render(resp, req.method == "HEAD", keep))
                await writer.drain()
                if not keep:
                    return
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError, asyncio.LimitOverrunError):
            return
        finally:
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 2.0)

    async def stop(self) -> None:
        if self.server is None:
            return
        self.server.close()
        for writer in list(self._writers):
            writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.server.wait_closed(), 5.0)
        self.server = None

    def describe(self) -> dict[str, Any]:
        self.sync_world()
        return {
            "name": self.name,
            "port": self.port,
            "vendor": self.vendor.name,
            "staged": self._names(self.staged),
            "pending": self._names(self.host.bios_pending),
            "jobs": {jid: job.state(self.host) for jid, job in self.jobs.items()},
        }
