"""What a target runs (its program table and files) and the SSH endpoints and services of the lab."""

from __future__ import annotations

import importlib
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import asyncssh

from roce_wizard.lab.proto import Program
from roce_wizard.lab.server.config import DEVICE_MODULES
from roce_wizard.lab.world import World

if TYPE_CHECKING:
    from roce_wizard.lab.server.lab import Lab


# ---------------------------------------------------------------------------- what a target runs


@dataclass
class Device:
    """How to run commands on one kind of target: its programs and virtual files right now."""

    programs: Callable[[World, str], dict[str, Program]]
    files: Callable[[World, str], dict[str, str]] | None = None
    # (world, target, path, content) -> None when written, else the error text the shell prints
    write_file: Callable[[World, str, str, str], str | None] | None = None
    # paths that exist but cannot be read -> reason ("Permission denied")
    file_errors: Callable[[World, str], dict[str, str]] | None = None


def _device_for(kind: str) -> Device:
    module = importlib.import_module(DEVICE_MODULES[kind])
    return Device(
        programs=module.programs,
        files=getattr(module, "files", None),
        write_file=getattr(module, "write_file", None),
        file_errors=getattr(module, "file_errors", None),
    )


DeviceResolver = Callable[[str], Device]


# ---------------------------------------------------------------------------- endpoints


@dataclass
class Endpoint:
    """One SSH target of the lab (an ESXi host, a guest VM or a bare-metal Linux host)."""

    name: str
    kind: str  # esxi / guest / linux
    host_key: asyncssh.SSHKey
    port: int = 0
    acceptor: asyncssh.SSHAcceptor | None = None
    conns: set[asyncssh.SSHServerConnection] = field(default_factory=set)
    rebooting: bool = False
    reboot_requested: bool = False
    commands: int = 0
    # while down, the port stays bound (not listening: connects are refused) so that no other
    # program's ephemeral port takes it before the target comes back on it
    placeholder: socket.socket | None = None


@dataclass
class Service:
    """Something a service module registered: inventory entries, a status and a stop callback."""

    kind: str
    entries: list[dict[str, Any]]
    status: Callable[[], list[dict[str, Any]]] | None = None
    stop: Callable[[], Awaitable[None]] | None = None
    # brings the service's own view up to the World now (vCenter: one sync instead of its next poll)
    sync: Callable[[], Awaitable[Any]] | None = None


class _SshServer(asyncssh.SSHServer):
    def __init__(self, lab: Lab, endpoint: Endpoint):
        self.lab = lab
        self.endpoint = endpoint
        self.conn: asyncssh.SSHServerConnection | None = None

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self.conn = conn
        self.endpoint.conns.add(conn)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.conn is not None:
            self.endpoint.conns.discard(self.conn)

    def begin_auth(self, username: str) -> bool:
        return True  # authentication required: the lab's client key

    def public_key_auth_supported(self) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return False
