"""Local transport: the probes' commands run as subprocesses on this machine (`doctor --local`), no SSH.

A fleet that already fans work out (Slurm, Ansible, pdsh) runs `roce-wizard doctor --local` on every node;
each node judges itself and the run directories are merged afterwards.

- Each command line runs as `/bin/sh -c COMMAND`, exactly what sshd does with the command of an exec request
  on a remote host (it runs the user's login shell with `-c COMMAND`): so a probe's pipes, redirections and exit
  statuses mean the same here as over `SshTransport`. Nothing is interpolated here: a probe builds its command
  line from values the inventory validated (`transports.ssh.quote` / `validate_token`), as for SSH, and this
  transport passes that one string to the shell as one argv element.
- The environment is the caller's, with `LC_ALL=C` (tools print the untranslated messages the parsers and the
  engine's "not found" detection read) and the sbin directories on PATH (where a root login over SSH finds
  ethtool, lspci, devlink).
- Every command has a timeout (`command_timeout`, or the per-target `options.command_timeout`); a command that
  overruns it is killed with its whole process group (a pipeline is one group: `start_new_session`) and comes
  back as a result with `timed_out`, like SSH's. Non-zero exits are results; a missing tool is the shell's
  `sh: 1: NAME: not found` with exit 127, which the engine reads as "tool missing" as it does over SSH.
- Errors are values: a target that is not this machine, or a shell that cannot be started, is a
  `TransportError` (kinds `unreachable` / `protocol`) with a message saying what to do.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import time
from typing import Any

from roce_wizard.model import Target
from roce_wizard.transports.base import CommandResult, ConnectErrorKind, TransportError
from roce_wizard.transports.plumbing import SessionBase, TransportOptions

SHELL = "/bin/sh"
LOCAL_ADDRESSES = frozenset({"localhost", "127.0.0.1", "::1"})
_SBIN = ("/usr/local/sbin", "/usr/sbin", "/sbin")
_KILL_GRACE_S = 1.0  # SIGTERM to the group, then SIGKILL after this long


def is_this_machine(address: str) -> bool:
    """Whether a target's address names this machine (loopback, or this host's own name)."""
    return address in LOCAL_ADDRESSES or address in (socket.gethostname(), socket.getfqdn())


def command_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a command runs with (see the module docstring)."""
    env = dict(os.environ if base is None else base)
    path = [p for p in env.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(":") if p]
    env["PATH"] = ":".join(path + [p for p in _SBIN if p not in path])
    env["LC_ALL"] = "C"
    env.pop("LANGUAGE", None)  # GNU gettext reads it before LC_ALL for messages
    return env


class LocalTransport(TransportOptions):
    """Hands out sessions that run commands on this machine; `close` stops any command still running."""

    def __init__(self, command_timeout: float = 60, shell: str = SHELL, env: dict[str, str] | None = None):
        super().__init__(command_timeout=command_timeout)
        self.shell = shell
        self.env = command_env(env)
        self._running: set[asyncio.subprocess.Process] = set()

    async def session(self, target: Target) -> LocalSession:
        if not is_this_machine(target.address):
            raise TransportError(
                ConnectErrorKind.UNREACHABLE, target,
                f"{target.name} ({target.address}) is not this machine: the local transport runs commands here "
                f"only (address localhost or {socket.gethostname()}); reach other hosts over SSH",
            )
        if not os.access(self.shell, os.X_OK):
            raise TransportError(ConnectErrorKind.PROTOCOL, target,
                                 f"cannot run commands on {target.name}: {self.shell} is not an executable shell")
        async with self.connect_slot():  # counted like a connect (tests read `connects`)
            return LocalSession(self, target)

    async def close(self) -> None:
        for proc in list(self._running):
            await _stop(proc)


class LocalSession(SessionBase):
    """Commands on this machine, one subprocess (`/bin/sh -c COMMAND`) each; several may run at once."""

    transport: LocalTransport

    async def run(self, command: str, timeout: float | None = None) -> CommandResult:
        timeout = self._begin(timeout)
        started = time.monotonic()
        try:
            proc = await asyncio.create_subprocess_exec(
                self.transport.shell, "-c", command, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=self.transport.env,
                start_new_session=True,
            )
        except OSError as exc:  # fork/exec failed: out of processes or memory, the shell went away
            raise TransportError(
                ConnectErrorKind.PROTOCOL, self.target,
                f"could not start `{command}` on {self.target.name}: {exc.strerror or exc}",
            ) from exc
        self.transport._running.add(proc)
        assert proc.stdout is not None and proc.stderr is not None
        out: list[bytes] = []
        err: list[bytes] = []
        readers = [asyncio.ensure_future(_drain(proc.stdout, out)), asyncio.ensure_future(_drain(proc.stderr, err))]
        timed_out = False
        try:
            async with asyncio.timeout(timeout):
                await asyncio.gather(*readers)
                await proc.wait()
        except TimeoutError:
            timed_out = True
            await _stop(proc)
        finally:
            # the group is gone, so the pipes are at EOF; a reader still blocked (a grandchild that left the
            # group holds the pipe open) is dropped rather than waited for
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                async with asyncio.timeout(_KILL_GRACE_S):
                    await asyncio.gather(*readers, return_exceptions=True)
            for reader in readers:
                reader.cancel()
            self.transport._running.discard(proc)
        return CommandResult(
            command=command,
            stdout=_text(out),
            stderr=_text(err),
            exit_status=None if timed_out else proc.returncode,
            duration_s=time.monotonic() - started,
            timed_out=timed_out,
        )


async def _drain(stream: asyncio.StreamReader, into: list[bytes]) -> None:
    while chunk := await stream.read(65536):
        into.append(chunk)


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the command's process group (the shell may be gone while a child of it still holds the
    pipes), SIGKILL what is left after a grace period, and reap the shell."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_KILL_GRACE_S):
                await proc.wait()
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(_KILL_GRACE_S):
            await proc.wait()


def _text(chunks: list[Any]) -> str:
    return b"".join(chunks).decode("utf-8", errors="replace")
