"""known_hosts: how a host is named there and the probe that reads the file (cached by mtime)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import asyncssh

log = logging.getLogger("roce_wizard.transports.ssh")

DEFAULT_PORT = 22
DEFAULT_KNOWN_HOSTS = "~/.ssh/known_hosts"


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
