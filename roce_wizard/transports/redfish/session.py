"""`RedfishSession`: the `redfish …` command lines a probe or a fix step runs."""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any

import httpx

from roce_wizard.commands.redfish import Malformed, parse_bios_set
from roce_wizard.model import Target
from roce_wizard.transports.base import CommandResult, TransportError
from roce_wizard.transports.plumbing import SessionBase
from roce_wizard.transports.redfish.bios import _Refused, bios_document, bios_set
from roce_wizard.transports.redfish.client import _PATH, _Bmc, _dropped, _http_error, _json, _path, _result
from roce_wizard.transports.redfish.features import SETTINGS_SELECT, SYSTEM_SELECT, expanded_member

if TYPE_CHECKING:
    from roce_wizard.transports.redfish.connect import RedfishTransport

SYSTEMS = "/redfish/v1/Systems"


class RedfishSession(SessionBase):
    """Commands on one BMC: `GET <path>` and `redfish bios` (see the module docstring)."""

    transport: RedfishTransport

    def __init__(self, transport: RedfishTransport, target: Target, bmc: _Bmc):
        super().__init__(transport, target)
        self._bmc = bmc

    async def run(self, command: str, timeout: float | None = None) -> CommandResult:
        timeout = self._begin(timeout)
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
        try:
            wanted = parse_bios_set(args)  # the line's format: commands/redfish.py
        except Malformed as exc:
            return _result(command, "", str(exc), 2, started)
        try:
            line = await bios_set(self, wanted)
        except _Refused as exc:
            return _result(command, "", str(exc), exc.status, started)
        return _result(command, line + "\n", "", 0, started)

    # -- reading: only what the checks need, in as few requests as the BMC allows (features.py) --------

    async def _object(self, path: str) -> dict[str, Any]:
        """GET `path` as a JSON object; _Refused(message, HTTP status or 1) otherwise."""
        resp = await self._get(path)
        if not 200 <= resp.status_code < 300:
            raise _Refused(_http_error(path, resp), resp.status_code)
        body = _json(resp)
        if not isinstance(body, dict):
            raise _Refused(f"GET {path}: the answer is not a JSON object", 1)
        return body

    async def _selected(self, path: str, properties: tuple[str, ...]) -> dict[str, Any]:
        """GET `path` asking for `properties` only where the BMC has $select; a BMC that refuses the
        query after all is asked plainly (and not asked with $select again this run)."""
        bmc = self._bmc
        url = bmc.features.selected(path, properties)
        if url != path:
            resp = await self._get(url)
            body = _json(resp)
            if 200 <= resp.status_code < 300 and isinstance(body, dict):
                return body
            if resp.status_code not in (401, 403):
                bmc.features = bmc.features.without_select()
        return await self._object(path)

    async def _system(self) -> tuple[str, dict[str, Any]]:
        """The first member of /redfish/v1/Systems and its resource: one GET with $expand where the BMC
        has it, else the collection, then the member (with $select where the BMC has that)."""
        bmc = self._bmc
        collection: dict[str, Any] | None = None
        url = bmc.features.expanded(SYSTEMS)
        if url is not None:
            resp = await self._get(url)
            body = _json(resp)
            if 200 <= resp.status_code < 300 and isinstance(body, dict):
                member = expanded_member(body)
                if member is not None:
                    return str(member["@odata.id"]), member
                collection = body  # the BMC ignored $expand: this is the plain collection
            elif resp.status_code not in (401, 403):
                bmc.features = bmc.features.without_expand()
        if collection is None:
            collection = await self._object(SYSTEMS)
        members = [m.get("@odata.id") for m in collection.get("Members") or [] if isinstance(m, dict)]
        if not members or not members[0]:
            raise _Refused(f"{bmc.name}: {SYSTEMS} lists no system", 1)
        return str(members[0]), await self._selected(_path(members[0]), SYSTEM_SELECT)

    async def _bios(self, command: str, started: float) -> CommandResult:
        try:
            system_uri, system = await self._system()
            bios_uri = (system.get("Bios") or {}).get("@odata.id")
            if not bios_uri:
                raise _Refused(f"{self._bmc.name}: system {system_uri} has no Bios resource", 1)
            bios = await self._object(_path(bios_uri))
        except _Refused as exc:
            return _result(command, "", str(exc), exc.status, started)
        settings_uri = (((bios.get("@Redfish.Settings") or {}).get("SettingsObject") or {}).get("@odata.id")
                        or bios_uri.rstrip("/") + "/Settings")
        settings: dict[str, Any] | None = None
        settings_error: str | None = None
        try:
            settings = await self._selected(_path(settings_uri), SETTINGS_SELECT)
        except _Refused as exc:
            settings_error = str(exc)
        doc = bios_document(self._bmc.root, system, bios, settings)
        doc["system_uri"] = system_uri
        doc["bios_uri"] = bios_uri
        doc["settings_uri"] = settings_uri
        if settings is None:
            doc["settings_error"] = settings_error
        return _result(command, json.dumps(doc, indent=2, sort_keys=True) + "\n", "", 0, started)
