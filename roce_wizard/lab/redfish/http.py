"""Redfish messages and errors, the HTTP request/response plumbing, and the job and session records of a lab BMC."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from email.utils import formatdate
from http import HTTPStatus
from typing import Any
from urllib.parse import unquote, urlsplit

from roce_wizard.lab.redfish.vendors import BASE, IDRAC, MAX_BODY
from roce_wizard.lab.world import EsxiHost

log = logging.getLogger("roce_wizard.lab.redfish")  # the name it had as one module


# ---------------------------------------------------------------------------- Redfish messages


def _message(msg_id: str, message: str, args: list[Any] | None = None, related: list[str] | None = None,
             resolution: str = "None.", severity: str = "Warning") -> dict[str, Any]:
    args = [str(a) for a in (args or [])]
    related = related or []
    return {
        "Message": message,
        "MessageArgs": args,
        "MessageArgs@odata.count": len(args),
        "MessageId": msg_id,
        "RelatedProperties": related,
        "RelatedProperties@odata.count": len(related),
        "Resolution": resolution,
        "Severity": severity,
    }


def _success() -> dict[str, Any]:
    return _message(f"{BASE}.Success", "The request completed successfully.", severity="OK")


def _error_body(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"error": {
        "@Message.ExtendedInfo": list(messages),
        "code": f"{BASE}.GeneralError",
        "message": "A general error has occurred. See ExtendedInfo for more information.",
    }}


class RedfishError(Exception):
    def __init__(self, status: int, *messages: dict[str, Any], headers: dict[str, str] | None = None):
        super().__init__(messages[0]["Message"] if messages else str(status))
        self.status = status
        self.messages = messages
        self.headers = headers or {}


def _no_session() -> RedfishError:
    return RedfishError(401, _message(f"{BASE}.NoValidSession",
                                      "There is no valid session established with the implementation.",
                                      resolution="Establish a session before attempting any operations.",
                                      severity="Critical"),
                        headers={"WWW-Authenticate": 'Basic realm="RedfishService"'})


def _not_found(path: str) -> RedfishError:
    return RedfishError(404, _message(f"{BASE}.ResourceMissingAtURI",
                                      f"The resource at the URI {path} was not found.", [path],
                                      resolution="Place a valid resource at the URI or correct the URI and "
                                                 "resubmit the request.", severity="Critical"))


def _sys011() -> RedfishError:
    return RedfishError(400, _message(
        f"{IDRAC}.SYS011",
        "Pending configuration values are already committed, unable to perform another set operation.",
        resolution="Wait for the scheduled job to complete or delete the configuration job before attempting "
                   "more set attribute operations."))


# ---------------------------------------------------------------------------- HTTP plumbing


@dataclass
class Request:
    method: str
    path: str
    query: str
    version: str
    headers: dict[str, str]
    body: bytes = b""

    def json(self) -> Any:
        if not self.body.strip():
            raise RedfishError(400, _message(
                f"{BASE}.EmptyJSON",
                "The request body submitted contained an empty JSON object and the service is unable to process it.",
                resolution="Add properties in the JSON object and resubmit the request."))
        try:
            return json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            raise RedfishError(400, _message(
                f"{BASE}.MalformedJSON",
                "The request body submitted was malformed JSON and could not be parsed by the receiving service.",
                resolution="Ensure that the request body is valid JSON and resubmit the request.",
                severity="Critical")) from None

    def json_object(self) -> dict[str, Any]:
        data = self.json()
        if not isinstance(data, dict):
            raise RedfishError(400, _message(
                f"{BASE}.MalformedJSON",
                "The request body submitted was malformed JSON and could not be parsed by the receiving service.",
                resolution="Send a JSON object.", severity="Critical"))
        return data


@dataclass
class Response:
    status: int
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


def _etag(body: dict[str, Any]) -> str:
    return '"' + hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16] + '"'


def _render(resp: Response, head_only: bool, keep_alive: bool) -> bytes:
    payload = b"" if resp.body is None else json.dumps(resp.body, indent=2).encode()
    try:
        reason = HTTPStatus(resp.status).phrase
    except ValueError:
        reason = ""
    headers = {
        "Date": formatdate(usegmt=True),
        "Server": "Apache",
        "OData-Version": "4.0",
        "Cache-Control": "no-cache",
        "X-Frame-Options": "DENY",
        "Strict-Transport-Security": "max-age=63072000; includeSubDomains; preload",
        "Access-Control-Allow-Origin": "*",
    }
    if resp.body is not None:
        headers["Content-Type"] = "application/json;odata.metadata=minimal;charset=utf-8"
    headers.update(resp.headers)
    headers["Content-Length"] = str(len(payload))
    headers["Connection"] = "keep-alive" if keep_alive else "close"
    lines = [f"HTTP/1.1 {resp.status} {reason}"] + [f"{k}: {v}" for k, v in headers.items()]
    out = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return out if head_only or resp.status in (204, 304) else out + payload


async def _read_body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, headers: dict[str, str]) -> bytes:
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        chunks: list[bytes] = []
        size = 0
        while True:
            line = await reader.readuntil(b"\r\n")
            n = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if n == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                    pass
                return b"".join(chunks)
            size += n
            if size > MAX_BODY:
                raise RedfishError(413, _message(f"{BASE}.PayloadTooLarge",
                                                 "The supplied payload exceeds the maximum size supported by the "
                                                 "service.", severity="Critical"))
            chunks.append(await reader.readexactly(n))
            await reader.readexactly(2)
    length = int(headers.get("content-length", "0") or 0)
    if length < 0 or length > MAX_BODY:
        raise RedfishError(413, _message(f"{BASE}.PayloadTooLarge",
                                         "The supplied payload exceeds the maximum size supported by the service.",
                                         severity="Critical"))
    return await reader.readexactly(length) if length else b""


def _parse_head(head: bytes) -> Request:
    text = head.decode("latin-1")
    lines = text.split("\r\n")
    try:
        method, target, version = lines[0].split(" ")
    except ValueError:
        raise ValueError(f"bad request line {lines[0]!r}") from None
    if not version.startswith("HTTP/1."):
        raise ValueError(f"unsupported protocol {version!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"bad header line {line!r}")
        key = name.strip().lower()
        headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
    parts = urlsplit(target)
    return Request(method.upper(), unquote(parts.path) or "/", parts.query, version, headers)


# ---------------------------------------------------------------------------- one BMC


def _now_iso(when: float | None = None) -> str:
    return dt.datetime.fromtimestamp(when if when is not None else time.time()).strftime("%Y-%m-%dT%H:%M:%S")


@dataclass
class Job:
    """An iDRAC BIOS configuration job: it commits `values` (world keys) at the host's next boot."""

    id: str
    created: float
    boot_count: int  # the host's boot when the job was created; a later boot ran it
    values: dict[str, Any]
    name: str = "Configure: BIOS.Setup.1-1"

    def state(self, host: EsxiHost) -> str:
        if host.boot_count > self.boot_count:
            return "Completed"
        return "Scheduled" if host.up else "Running"


@dataclass
class Session:
    id: str
    token: str
    username: str
    last_used: float
