"""One connection, one login, only what the checks need: the RedfishTransport against the lab's BMCs.

Connections are counted twice: by the transport (`stats`, httpcore's trace of TCP connects) and, independently,
by a TCP relay on 127.0.0.1 between the transport and the lab BMC that counts the connections it accepts (TLS
passes through it untouched, verified end to end against the lab's CA).

- a doctor-style gather of a BMC (the engine's `gather_target` for RW101–RW104, then the transport's close, i.e.
  the logout) uses exactly one TCP connection and one login: 7 requests on the lab, which advertises no query
  features, so no `$expand`/`$select` is sent to it;
- commands to one BMC that run at the same time (the engine runs up to PROBE_CONCURRENCY probes of a target at
  once) take turns on that one connection;
- idle for longer than httpx's default keep-alive expiry (5 s, what a 64-host run spends between a BMC's probe
  and the logout at the end) the connection is still reused;
- a BMC that advertises ProtocolFeaturesSupported (DMTF DSP0266, query parameters) is asked with `$expand`
  (the Systems collection with its member inlined: one request fewer) and `$select`, and `redfish bios` prints
  the same document; one that advertises them but answers 501 gets plain GETs, same document again.
  The lab's BMC does not implement the query parameters: `QueryBmc` below adds them on top of the lab's own
  handlers (test-only; the lab is not changed).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, ClassVar
from urllib.parse import parse_qsl, unquote

import pytest

from roce_wizard.catalog import load_catalog
from roce_wizard.engine import gather_target
from roce_wizard.lab import redfish, scenarios
from roce_wizard.lab.redfish import lab as redfish_lab
from roce_wizard.lab.redfish.bmc import Bmc
from roce_wizard.lab.redfish.http import Request, Response
from roce_wizard.model import Credentials, SecretRef, SecretSource, Target, TargetKind
from roce_wizard.transports.redfish import RedfishTransport

BIOS_CHECKS = [c for code, c in load_catalog([]).items() if code in ("RW101", "RW102", "RW103", "RW104")]


class Relay:
    """A TCP relay on 127.0.0.1 that counts the connections it accepts and forwards bytes both ways."""

    def __init__(self, port: int):
        self.upstream = port
        self.accepted = 0
        self.server: asyncio.Server | None = None
        self.port = 0
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, OSError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            with contextlib.suppress(Exception):
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()


class QueryBmc(Bmc):
    """The lab's BMC plus what DSP0266 lets a service advertise: `$expand` on collections, `$select`."""

    FEATURES: ClassVar[dict[str, Any]] = {"ExpandQuery": {"NoLinks": True, "ExpandAll": False, "Levels": True,
                                                "Links": False, "MaxLevels": 6}, "SelectQuery": True}
    refuse = False  # advertise the features, then answer 501 Not Implemented to them

    def __init__(self, *args: Any):
        super().__init__(*args)
        self.asked: list[str] = []

    def handle(self, req: Request) -> Response:
        query = dict(parse_qsl(req.query))
        self.asked.append(f"{req.method} {req.path}" + (f"?{unquote(req.query)}" if req.query else ""))
        if self.refuse and any(k.startswith("$") for k in query):
            return Response(501, {"error": {"code": "Base.1.8.QueryNotSupported", "message": "not implemented"}})
        resp = super().handle(req)
        body = resp.body
        if resp.status != 200 or body is None:
            return resp
        if req.path.rstrip("/") == "/redfish/v1":
            body["ProtocolFeaturesSupported"] = self.FEATURES
        if "$expand" in query and isinstance(body.get("Members"), list):
            body["Members"] = [super(QueryBmc, self).handle(
                Request("GET", m["@odata.id"], "", req.version, req.headers)).body for m in body["Members"]]
        if "$select" in query:
            keep = set(query["$select"].split(","))
            resp.body = {k: v for k, v in body.items() if k in keep or k.startswith("@odata.")}
        return resp


@pytest.fixture
async def bmc(tmp_path, monkeypatch, request):
    """(target through the relay, relay, lab BMC) for one lab server; `indirect` param: the BMC class."""
    cls = getattr(request, "param", Bmc)
    monkeypatch.setattr(redfish_lab, "Bmc", cls)  # start_bmcs builds its BMCs from this name
    handle = await redfish.start_bmcs(scenarios.healthy(1), tmp_path)
    relay = Relay(handle.ports["esx-01"])
    await relay.start()
    target = Target(name="bmc-esx-01", kind=TargetKind.BMC, address="127.0.0.1", port=relay.port, host="esx-01",
                    options={"ca_file": str(handle.ca_file)},
                    credentials=Credentials(username=handle.username,
                                            password=SecretRef(SecretSource.PLAINTEXT, value=handle.password)))
    try:
        yield target, relay, handle.bmcs["esx-01"], handle.password
    finally:
        await relay.stop()
        await handle.stop()


async def _gather(target: Target, password: str) -> tuple[RedfishTransport, Any]:
    transport = RedfishTransport(password_resolver=lambda t: password)
    try:
        facts = await gather_target(target, BIOS_CHECKS, transport, command_timeout=30, runlog=None,
                                    emit=lambda *a: None)
    finally:
        await transport.close()
    return transport, facts


async def test_a_doctor_gather_of_a_bmc_uses_one_connection_and_one_login(bmc):
    target, relay, _, password = bmc
    transport, facts = await _gather(target, password)
    assert facts.data["connection"]["ok"] and facts.data["redfish_bios"]["vendor"] == "dell"
    stats = transport.stats[target.name]
    assert relay.accepted == 1, "the BMC saw more than one TCP connection"
    assert (stats.connections, stats.logins) == (1, 1)
    # root, login, Systems, the system, Bios, Bios/Settings, logout: the lab advertises no $expand
    assert stats.requests == 7


async def test_commands_at_the_same_time_take_turns_on_the_one_connection(bmc):
    target, relay, _, password = bmc
    async with RedfishTransport(password_resolver=lambda t: password) as transport:
        session = await transport.session(target)
        results = await asyncio.gather(session.run("redfish bios"), session.run("GET /redfish/v1/Managers"),
                                       session.run("GET /redfish/v1/Systems"), session.run("GET /redfish/v1"))
    assert [r.exit_status for r in results] == [0, 0, 0, 0]
    assert relay.accepted == 1 and transport.stats[target.name].connections == 1


@pytest.mark.slow
async def test_an_idle_connection_is_kept_past_httpx_default_expiry(bmc):
    target, relay, _, password = bmc
    async with RedfishTransport(password_resolver=lambda t: password) as transport:
        session = await transport.session(target)
        assert (await session.run("redfish bios")).ok
        await asyncio.sleep(5.5)  # deliberately idle: longer than httpx's default keepalive_expiry (5 s)
        assert (await session.run("GET /redfish/v1/Systems")).ok
    assert relay.accepted == 1 and transport.stats[target.name].connections == 1


async def _bios_document(target: Target, password: str) -> dict[str, Any]:
    async with RedfishTransport(password_resolver=lambda t: password) as transport:
        result = await (await transport.session(target)).run("redfish bios")
    assert result.ok, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("bmc", [QueryBmc], indirect=True)
async def test_a_bmc_that_advertises_expand_and_select_is_asked_with_them(bmc, tmp_path):
    target, relay, lab_bmc, password = bmc
    transport, _ = await _gather(target, password)
    asked = [a for a in lab_bmc.asked if a.startswith("GET /redfish/v1/Systems")]
    assert asked == ["GET /redfish/v1/Systems?$expand=.($levels=1)",
                     "GET /redfish/v1/Systems/System.Embedded.1/Bios",
                     "GET /redfish/v1/Systems/System.Embedded.1/Bios/Settings?$select=Attributes"]
    assert transport.stats[target.name].requests == 6 and relay.accepted == 1
    # what the checks read is what a BMC without the query parameters gives
    plain = await redfish.start_bmcs(scenarios.healthy(1), tmp_path / "plain")
    try:
        other = Target(**{**target.__dict__, "port": plain.ports["esx-01"],
                          "options": {"ca_file": str(plain.ca_file)}})
        expected = await _bios_document(other, plain.password)
    finally:
        await plain.stop()
    assert await _bios_document(target, password) == expected


class RefusingBmc(QueryBmc):
    refuse = True


@pytest.mark.parametrize("bmc", [RefusingBmc], indirect=True)
async def test_a_bmc_that_advertises_them_but_answers_501_gets_plain_gets(bmc):
    target, _, lab_bmc, password = bmc
    document = await _bios_document(target, password)
    assert document["attributes"]["SriovGlobalEnable"] == "Enabled" and document["pending"] == {}
    asked = [a for a in lab_bmc.asked if a.startswith("GET /redfish/v1/Systems")]
    assert asked == ["GET /redfish/v1/Systems?$expand=.($levels=1)",  # 501: not asked again this run
                     "GET /redfish/v1/Systems",
                     ("GET /redfish/v1/Systems/System.Embedded.1?$select=Id,Manufacturer,Model,SerialNumber,SKU,"
                      "BiosVersion,HostName,PowerState,Links,Actions,Bios,Oem"),  # 501 as well
                     "GET /redfish/v1/Systems/System.Embedded.1",
                     "GET /redfish/v1/Systems/System.Embedded.1/Bios",
                     "GET /redfish/v1/Systems/System.Embedded.1/Bios/Settings"]
