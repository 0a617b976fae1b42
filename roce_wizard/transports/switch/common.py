"""What the switch transport's parts share: constants, known_hosts naming, the masked session log, the
host-key policy and the internal exceptions."""

from __future__ import annotations

import io
import logging
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from roce_wizard.model import Target

log = logging.getLogger("roce_wizard.transports.switch")

DEFAULT_PORT = 22
DEFAULT_KNOWN_HOSTS = "~/.ssh/known_hosts"
MASK = b"********"
# inventory device_type -> netmiko driver (NVUE is the Cumulus Linux shell with `nv`)
NETMIKO_DEVICE_TYPES = {"arista_eos": "arista_eos", "mellanox_mlnxos": "mellanox_mlnxos",
                        "dell_os10": "dell_os10", "cumulus_nvue": "cumulus_linux",
                        # community SONiC: a Debian shell whose `show …` is sonic-utilities' CLI (read-only here)
                        "sonic": "linux"}
NEEDS_ENABLE = frozenset({"arista_eos", "mellanox_mlnxos"})
# how each CLI says it did not take a command
CONFIG_ERROR = r"(?i)^\s*(% ?(Invalid input|Incomplete command|Ambiguous command|Unrecognized command|Error)|Error: )"
OS10_SHOW_RUN = "show running-configuration"
CLI_ERROR = re.compile(r"^\s*(% ?(Invalid input|Incomplete command|Ambiguous command|Unrecognized command|Error)"
                       r"|Error: |-bash: .*command not found)", re.IGNORECASE | re.MULTILINE)


# The read-back of a `switch-config` step, GIVEN to the transport by whoever builds it (the transport never
# parses): (target, vendor, one `verify` entry of the step) -> (the show command to send, its output -> what is
# still wrong, [] when verified), or None when the field cannot be read back on that vendor.
# session.live_transports gives roce_wizard.checklib.switch_verify.read_back.
ReadBack = Callable[[Target, str, dict[str, Any]], "tuple[str, Callable[[str], list[str]]] | None"]


def known_hosts_name(host: str, port: int) -> str:
    return host if port == DEFAULT_PORT else f"[{host}]:{port}"


def _host_port(target: Target) -> tuple[str, int]:
    return target.address, target.port or DEFAULT_PORT


class _MaskedLog(io.BufferedIOBase):
    """A session-log file that never writes the secrets it was given (whatever netmiko hands it)."""

    def __init__(self, path: Path, secrets: list[str]):
        super().__init__()
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._fh = os.fdopen(fd, "ab")
        self._secrets = sorted({s.encode() for s in secrets if s}, key=len, reverse=True)
        self._pending = b""  # a tail that may be the start of a secret split across two writes

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:  # type: ignore[override]
        raw = bytes(data)
        buf = self._pending + raw
        for secret in self._secrets:
            buf = buf.replace(secret, MASK)
        hold = 0
        for secret in self._secrets:  # keep back a tail that could be a secret's beginning
            for n in range(min(len(secret) - 1, len(buf)), 0, -1):
                if buf.endswith(secret[:n]):
                    hold = max(hold, n)
                    break
        self._pending = buf[len(buf) - hold:] if hold else b""
        self._fh.write(buf[: len(buf) - hold] if hold else buf)
        return len(raw)

    def note(self, text: str) -> None:
        """A line of our own (connect / command markers), masked like the rest."""
        self.write(f"\n### roce-wizard {time.strftime('%Y-%m-%dT%H:%M:%S')} {text}\n".encode())
        self.flush()

    def flush(self) -> None:
        if not self._fh.closed:
            self._fh.flush()

    def close(self) -> None:
        if not self._fh.closed:
            if self._pending:
                self._fh.write(self._pending)
                self._pending = b""
            self._fh.close()
        super().close()


class _HostKeyPolicy:
    """paramiko's MissingHostKeyPolicy for hosts known_hosts does not name: refuse, or (trust on
    first use) accept and append the key to the known_hosts file."""

    def __init__(self, path: Path, trust_on_first_use: bool):
        self.path = path
        self.trust_on_first_use = trust_on_first_use
        self.offered: str | None = None  # 'ALG SHA256:…' of the key an unknown host offered
        self.refused = False
        self.recorded = False

    def missing_host_key(self, client: Any, hostname: str, key: Any) -> None:
        import paramiko

        self.offered = f"{key.get_name()} {key.fingerprint}"
        if not self.trust_on_first_use:
            self.refused = True
            raise paramiko.SSHException(f"host key for {hostname} is not in {self.path}")
        client.get_host_keys().add(hostname, key.get_name(), key)
        line = f"{hostname} {key.get_name()} {key.get_base64()}\n"
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size:
                with open(self.path, "rb") as existing:
                    existing.seek(size - 1)
                    if existing.read(1) != b"\n":
                        line = "\n" + line
            os.write(fd, line.encode("ascii"))
        finally:
            os.close(fd)
        self.recorded = True
        log.warning("%s: trusting new host key %s (recorded in %s)", hostname, self.offered, self.path)


class _Refused(Exception):
    """The switch's CLI rejected a line of a configuration change."""


class _Timeout(Exception):
    def __init__(self, detail: str, partial: str = ""):
        super().__init__(detail)
        self.partial = partial


class _Lost(Exception):
    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail
