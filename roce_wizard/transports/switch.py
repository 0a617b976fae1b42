"""Switch transport: netmiko (Arista EOS, NVIDIA Onyx, Dell OS10, Cumulus NVUE) run in threads.

- netmiko is blocking: every connect and command runs in `asyncio.to_thread`; a semaphore bounds
  concurrent connects. One netmiko session per switch per run; commands on it are serialised (a CLI
  session answers one command at a time), and `close()` disconnects them all.
- Host keys: netmiko's default (`ssh_strict=False`) is paramiko's AutoAddPolicy, i.e. no checking.
  Here the known_hosts file the SSH transport uses (the transport's explicit one, else the target's
  `options.known_hosts`, else ~/.ssh/known_hosts) is loaded and an unknown host is refused
  (`hostkey_unknown`) unless trust-on-first-use was asked for, which accepts and records the key
  (`[host]:port alg base64`); a changed key is always refused (`hostkey_changed`).
- EOS and Onyx sessions enter enable mode (`show running-config` needs it; no config is changed).
- `run(command)` is netmiko's `send_command` with the per-command timeout as its read timeout; it
  returns a CommandResult whose exit status is 1 when the CLI rejected the command (`% Invalid
  input`, `% Unrecognized command`, `% Error`), 0 otherwise, and `timed_out` when no prompt came back.
- Session logs: `session_log_dir/<switch>.log` (netmiko's session log: what the switch printed),
  with the password masked twice — netmiko's own `no_log` filter and our writer, which replaces
  the password's bytes before anything reaches the disk.
- Every failure to reach a switch is a TransportError whose kind says why (dns, refused, timeout,
  auth, hostkey_unknown, hostkey_changed, unreachable, protocol); the password never appears in it.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import re
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from roce_wizard.model import Target
from roce_wizard.switchview import CONFIG_MARK, parse_config_command
from roce_wizard.transports.base import CommandResult, ConnectErrorKind, TransportError

__all__ = ["NETMIKO_DEVICE_TYPES", "SwitchSession", "SwitchTransport"]

log = logging.getLogger(__name__)

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


class SwitchSession:
    """Commands on one switch over the transport's netmiko connection to it."""

    def __init__(self, transport: SwitchTransport, target: Target, conn: _Conn):
        self.transport = transport
        self.target = target
        self._conn = conn
        self._closed = False

    async def run(self, command: str, timeout: float | None = None) -> CommandResult:
        if self._closed:
            raise RuntimeError(f"session to {self.target.name} is closed")
        timeout = timeout if timeout is not None else self.transport._command_timeout(self.target)
        if command.startswith(CONFIG_MARK + " "):
            return await self._conn.configure(command, timeout)
        return await self._conn.run(command, timeout)

    async def close(self) -> None:
        """Stop using this session; the connection stays open until the transport closes."""
        self._closed = True


class _Conn:
    """One netmiko connection and the lock that keeps its commands one at a time."""

    def __init__(self, target: Target, handler: Any, session_log: _MaskedLog | None):
        self.target = target
        self.handler = handler
        self.session_log = session_log
        self.lock = asyncio.Lock()
        self.lost: str | None = None

    def _lost_error(self, detail: str, command: str | None = None) -> TransportError:
        host, port = _host_port(self.target)
        if command is not None:  # it closed under this command: say so, not "unreachable"
            return TransportError(ConnectErrorKind.DROPPED, self.target,
                                  f"the CLI session to {self.target.name} ({host}:{port}) closed while `{command}` "
                                  f"was running ({detail})", command=command)
        return TransportError(ConnectErrorKind.UNREACHABLE, self.target,
                              f"lost the CLI session to {self.target.name} ({host}:{port}): {detail}")

    async def run(self, command: str, timeout: float) -> CommandResult:
        async with self.lock:
            if self.lost is not None:
                raise self._lost_error(self.lost)
            started = time.monotonic()
            try:
                output = await asyncio.to_thread(self._send, command, timeout)
            except _Timeout as exc:
                duration = time.monotonic() - started
                if self._channel_closed():  # netmiko reads a closed channel as "no prompt yet"
                    self.lost = "the switch closed the connection"
                    raise self._lost_error(self.lost, command) from None
                recovered = await asyncio.to_thread(self._recover)
                if not recovered:
                    self.lost = f"no prompt after `{command}` timed out"
                return CommandResult(command, exc.partial, "", None, duration, timed_out=True)
            except _Lost as exc:
                self.lost = exc.detail
                raise self._lost_error(exc.detail, command) from None
            duration = time.monotonic() - started
            rejected = CLI_ERROR.search(output.strip().split("\n", 1)[0] if output.strip() else "")
            return CommandResult(command, output, "", 1 if rejected else 0, duration)

    def _channel_closed(self) -> bool:
        """Whether the SSH channel under netmiko ended (EOF from the switch, or the connection gone)."""
        channel = getattr(self.handler, "remote_conn", None)
        try:
            if channel is None or not hasattr(channel, "get_transport"):
                return False
            if channel.closed or channel.eof_received:
                return True
            ssh = channel.get_transport()
            return ssh is None or not ssh.is_active()
        except Exception:  # noqa: BLE001 - an odd handler: treat as open, the timeout stands
            return False

    async def configure(self, command: str, timeout: float) -> CommandResult:
        """A `switch-config` step (switchview.switch_plan): backup, change, verify, save — or roll back.

        Exit 0: applied, verified and saved. Exit 1: refused, or verified wrong and rolled back; the
        output is the log of what was done, the outcome on its last line. Exit 2: a malformed step."""
        try:
            parsed = parse_config_command(command)
        except ValueError as exc:
            return CommandResult(command, "", f"switch-config: {exc}\n", 2, 0.0)
        if parsed is None:
            return CommandResult(command, "", "switch-config: not a switch-config step\n", 2, 0.0)
        meta, lines = parsed
        problem = _config_problem(meta, lines, self.target)
        if problem:
            return CommandResult(command, "", f"switch-config: {problem}\n", 2, 0.0)
        async with self.lock:
            if self.lost is not None:
                raise self._lost_error(self.lost)
            started = time.monotonic()
            try:
                status, log_lines = await asyncio.to_thread(self._configure, meta, lines, timeout)
            except _Timeout as exc:
                self.lost = f"no prompt while configuring ({exc})"
                return CommandResult(command, "", f"switch-config: timed out: {exc}\n", None,
                                     time.monotonic() - started, timed_out=True)
            except _Lost as exc:
                self.lost = exc.detail
                raise self._lost_error(exc.detail, f"{CONFIG_MARK} {meta.get('name', '')}".strip()) from None
            return CommandResult(command, "\n".join(log_lines) + "\n", "", status, time.monotonic() - started)

    def _configure(self, meta: dict[str, Any], lines: list[str], timeout: float) -> tuple[int, list[str]]:
        from roce_wizard.probes import PROBES
        from roce_wizard.switchview import verify_kind, verify_problems

        vendor = meta["vendor"]
        if vendor == "nvue":
            return self._configure_nvue(meta, lines, timeout)
        name = f"{meta['name']}-{time.strftime('%Y%m%d-%H%M%S')}"
        log_lines: list[str] = []
        backup = {"eos": f"copy running-config flash:{name}.cfg", "onyx": f"configuration write to {name} no-switch",
                  "os10": f"copy running-configuration config://{name}.xml"}[vendor]
        # the vendors' REPLACE: a copy onto the running config merges (DOMAIN §7), so EOS restores with
        # `configure replace` and Onyx with `configuration switch-to`; OS10 documents no replace: its change
        # is undone by the inverse of exactly the lines it added, then read back (switch_undo)
        restore = {"eos": f"configure replace flash:{name}.cfg", "onyx": f"configuration switch-to {name}",
                   "os10": "the inverse of the lines this change added"}[vendor]
        save = {"eos": "copy running-config startup-config", "onyx": "configuration write",
                "os10": "copy running-configuration startup-configuration"}[vendor]
        config_mode_only = vendor == "onyx"  # Onyx's `configuration …` verbs live in config mode

        def one(cmd: str) -> str:
            out = self._config([cmd], timeout) if config_mode_only and cmd.startswith("configuration") \
                else self._send(cmd, timeout)
            bad = CLI_ERROR.search(out)
            if bad:
                raise _Refused(f"`{cmd}` was refused: {out.strip().splitlines()[0] if out.strip() else bad.group(0)}")
            log_lines.append(f"{cmd}: ok")
            return out

        try:
            one(backup)
        except _Refused as exc:
            return 1, [*log_lines, f"backup failed, nothing changed: {exc}"]
        log_lines.append(f"backup saved as {name} (restore: {restore})")
        before = self._send(OS10_SHOW_RUN, timeout) if vendor == "os10" else ""

        def roll_back() -> tuple[bool, str]:
            if vendor != "os10":
                try:
                    one(restore)
                except _Refused as exc:
                    return False, f"the rollback was refused ({exc}): restore {name} by hand"
                return True, f"ROLLED BACK to the backup {name}"
            return self._os10_undo(lines, before, timeout, name)

        try:
            if vendor == "eos":
                self._config([f"configure session {name}", *lines], timeout, enter=False)
                self._config(["commit"], timeout, enter=False)
                log_lines.append(f"config session {name}: {len(lines)} lines committed")
            else:
                self._config(lines, timeout)
                log_lines.append(f"configured: {len(lines)} lines")
        except _Refused as exc:
            if vendor == "eos":  # nothing reached the running config: drop the session
                self._send(f"configure session {name} abort", timeout)
                outcome = f"the switch refused a line ({exc}); config session {name} aborted, nothing changed"
                return 1, [*log_lines, outcome]
            _, how = roll_back()
            return 1, [*log_lines, f"the switch refused a line ({exc}); {how}"]
        problems: list[str] = []
        for v in meta.get("verify") or []:
            kind = verify_kind(vendor, v["field"])
            if kind is None:
                problems.append(f"{v['field']}: no way to read it back on {vendor}")
                continue
            show = PROBES[kind].command(self.target, {})
            output = self._send(show, timeout)
            problems += verify_problems(self.target, v["field"], list(v["ports"]), dict(v["expect"]), kind, output)
            log_lines.append(f"verify `{show}`: " + ("ok" if not problems else "; ".join(problems)))
        if problems:
            ok, how = roll_back()
            why = "; ".join(problems)
            if not ok:
                return 1, [*log_lines, f"VERIFY FAILED ({why}) and {how}"]
            return 1, [*log_lines, f"VERIFY FAILED ({why}): {how}, not saved"]
        one(save)
        return 0, [*log_lines, f"applied, verified and saved ({save}); backup {name}"]

    def _configure_nvue(self, meta: dict[str, Any], lines: list[str], timeout: float) -> tuple[int, list[str]]:
        """Cumulus NVUE: `nv set` lines into a pending revision, `nv config diff`, `nv config apply -y`, verify,
        `nv config save`; on a refused line `nv config detach`; on a failed verify `nv config apply <the
        revision applied before> -y` (NVUE Command Reference, "Config Commands")."""
        from roce_wizard.switchview import verify_kind, verify_problems

        log_lines: list[str] = []
        revisions = self._send("nv config revision", timeout)
        before = _nvue_applied_revision(revisions)
        if before is None:
            return 1, ["`nv config revision` shows no applied revision (it needs Cumulus Linux 5.5 or later): "
                       "nothing changed; make the change by hand"]
        pending = self._send("nv config diff", timeout).strip()
        if pending:
            return 1, [f"the switch already has pending changes someone else made (`nv config diff`: "
                       f"{pending.splitlines()[0]} …): nothing changed"]
        log_lines.append(f"applied revision before the change: {before} (rollback: nv config apply {before} -y)")
        for line in lines:
            out = self._send(line, timeout)
            if CLI_ERROR.search(out):
                self._send("nv config detach", timeout)
                return 1, [*log_lines, f"`{line}` was refused ({out.strip().splitlines()[0]}); the pending "
                                       "revision was detached, nothing applied"]
        diff = self._send("nv config diff", timeout).strip()
        log_lines.append(f"nv config diff: {len(diff.splitlines())} lines")
        applied = self._send("nv config apply -y", timeout)
        if CLI_ERROR.search(applied) or "applied" not in applied:
            self._send("nv config detach", timeout)
            return 1, [*log_lines, f"`nv config apply -y` did not apply ({applied.strip()[:120]}); detached"]
        log_lines.append(f"nv config apply -y: {applied.strip().splitlines()[-1]}")
        problems: list[str] = []
        for v in meta.get("verify") or []:
            kind = verify_kind("nvue", v["field"])
            if kind is None:
                problems.append(f"{v['field']}: no way to read it back on nvue")
                continue
            from roce_wizard.probes import PROBES

            show = PROBES[kind].command(self.target, {})
            problems += verify_problems(self.target, v["field"], list(v["ports"]), dict(v["expect"]), kind,
                                        self._send(show, timeout))
            log_lines.append(f"verify `{show}`: " + ("ok" if not problems else "; ".join(problems)))
        if problems:
            back = self._send(f"nv config apply {before} -y", timeout)
            if CLI_ERROR.search(back) or "applied" not in back:
                return 1, [*log_lines, f"VERIFY FAILED ({'; '.join(problems)}) and `nv config apply {before} -y` "
                                       f"failed ({back.strip()[:120]}): restore revision {before} by hand"]
            return 1, [*log_lines, f"VERIFY FAILED ({'; '.join(problems)}): ROLLED BACK to revision {before} "
                                   f"(nv config apply {before} -y), not saved"]
        self._send("nv config save", timeout)
        return 0, [*log_lines, f"applied, verified and saved (nv config save); rollback point: revision {before}"]

    def _os10_undo(self, lines: list[str], before: str, timeout: float, name: str) -> tuple[bool, str]:
        """OS10: type the inverse of the lines the change added, then read the running config back."""
        from roce_wizard.switch_undo import comparable, os10_inverse

        inverse = os10_inverse(lines, before, self._send(OS10_SHOW_RUN, timeout))
        if inverse:
            try:
                self._config(inverse, timeout)
            except _Refused as exc:
                return False, (f"the rollback was refused ({exc}); type by hand: {' / '.join(inverse)} "
                               f"(the backup {name} holds the configuration before)")
        after = comparable(self._send(OS10_SHOW_RUN, timeout))
        if after == comparable(before):
            return True, (f"ROLLED BACK by the inverse of the change ({len(inverse)} lines); the running "
                          f"configuration reads back as before (backup {name})")
        import difflib

        diff = [d for d in difflib.unified_diff(comparable(before), after, lineterm="", n=0)
                if d[:1] in "+-" and not d.startswith(("+++", "---"))]
        return False, (f"the rollback left the running configuration different from before ({'; '.join(diff[:6])}): "
                       f"compare it with the backup {name} by hand")

    def _config(self, lines: list[str], timeout: float, *, enter: bool = True) -> str:
        """Config-mode lines through netmiko's send_config_set; _Refused at the first line the CLI rejects."""
        from netmiko.exceptions import ConfigInvalidException, ReadException, ReadTimeout

        if self.session_log is not None:
            self.session_log.note(f"config: {len(lines)} lines")
        try:
            out = self.handler.send_config_set(lines, read_timeout=timeout, enter_config_mode=enter,
                                               exit_config_mode=enter, error_pattern=CONFIG_ERROR)
        except ConfigInvalidException as exc:
            raise _Refused(str(exc)) from None
        except ReadTimeout as exc:
            raise _Timeout(str(exc)) from None
        except (OSError, EOFError, ReadException) as exc:
            raise _Lost(f"{type(exc).__name__}: {exc}") from None
        return out.replace("\r\n", "\n").replace("\r", "\n")

    def _send(self, command: str, timeout: float) -> str:
        from netmiko.exceptions import ReadException, ReadTimeout

        if self.session_log is not None:
            self.session_log.note(f"command: {command}")
        try:
            out = self.handler.send_command(command, read_timeout=timeout, strip_prompt=True, strip_command=True)
        except ReadTimeout as exc:
            raise _Timeout(str(exc)) from None
        except (OSError, EOFError, ReadException) as exc:
            raise _Lost(f"{type(exc).__name__}: {exc}") from None
        except Exception as exc:  # paramiko's SSHException when the transport dropped
            if type(exc).__name__ in ("SSHException", "ChannelException"):
                raise _Lost(f"{type(exc).__name__}: {exc}") from None
            raise
        return out.replace("\r\n", "\n").replace("\r", "\n")

    def _recover(self) -> bool:
        """After a timed-out command: drain what it still prints and find the prompt again."""
        try:
            self.handler.read_channel_timing(read_timeout=5, last_read=0.5)
            self.handler.find_prompt()
            return True
        except Exception:  # noqa: BLE001 - the session is unusable; the next command says so
            return False

    def disconnect(self) -> None:
        try:
            self.handler.disconnect()
        except Exception:  # noqa: BLE001 - best effort at the end of the run
            pass
        finally:
            if self.session_log is not None:
                self.session_log.close()


class _Refused(Exception):
    """The switch's CLI rejected a line of a configuration change."""


def _nvue_applied_revision(table: str) -> str | None:
    """The revision applied last in `nv config revision` (NVIDIA's example: Rev ID, State, Apply ID, Apply Date
    …): the applied row with the latest apply date (applying an older revision gives it a new apply)."""
    rows = re.findall(r"^\s*(\d+)\s+applied\S*\s+\S+\s+(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s", table, re.MULTILINE)
    return max(rows, key=lambda r: (r[1], int(r[0])))[0] if rows else None


_NV_SET = re.compile(r"^nv set [A-Za-z0-9][A-Za-z0-9 ,._/-]{0,160}$")  # the only shell lines an NVUE step sends


_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,40}$")
_LINE = re.compile(r"^[ -~]{1,200}$")  # printable ASCII, one line


def _config_problem(meta: dict[str, Any], lines: list[str], target: Target) -> str | None:
    """Why a switch-config step must not run (None: it may)."""
    from roce_wizard.switchview import CONFIG_VENDORS, VENDOR_OF_DEVICE_TYPE

    vendor = meta.get("vendor")
    if vendor not in CONFIG_VENDORS:
        return f"no configuration path for vendor {vendor!r} ({', '.join(CONFIG_VENDORS)})"
    if VENDOR_OF_DEVICE_TYPE.get(target.device_type or "") != vendor:
        return f"the step is for {vendor}, {target.name} is {target.device_type}"
    if not isinstance(meta.get("name"), str) or not _NAME.match(meta["name"]):
        return f"not a usable session / backup name: {meta.get('name')!r}"
    if not lines or not all(_LINE.match(ln) for ln in lines):
        return "the configuration lines are empty or not printable one-line ASCII"
    if vendor == "nvue" and not all(_NV_SET.match(ln) for ln in lines):
        return "an NVUE step sends only `nv set …` lines to the switch's shell"
    for v in meta.get("verify") or []:
        if not isinstance(v, dict) or not isinstance(v.get("ports"), list) or not isinstance(v.get("expect"), dict):
            return f"malformed verify entry {v!r}"
    return None


class _Timeout(Exception):
    def __init__(self, detail: str, partial: str = ""):
        super().__init__(detail)
        self.partial = partial


class _Lost(Exception):
    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


class SwitchTransport:
    """Opens one netmiko session per switch and hands out sessions on it."""

    def __init__(
        self,
        password_resolver: Callable[[Target], str | None] | None = None,
        connect_timeout: float = 10,
        command_timeout: float = 60,
        max_concurrent_connects: int = 16,
        known_hosts: str | Path | None = None,
        trust_on_first_use: bool = False,
        session_log_dir: str | Path | None = None,
    ):
        if max_concurrent_connects < 1:
            raise ValueError("max_concurrent_connects must be at least 1")
        self.password_resolver = password_resolver
        self.connect_timeout = connect_timeout
        self.command_timeout = command_timeout
        self.max_concurrent_connects = max_concurrent_connects
        self.known_hosts = Path(known_hosts if known_hosts is not None else DEFAULT_KNOWN_HOSTS).expanduser()
        self._known_hosts_explicit = known_hosts is not None
        self.trust_on_first_use = trust_on_first_use
        self.session_log_dir = Path(session_log_dir) if session_log_dir is not None else None
        self._semaphore = asyncio.Semaphore(max_concurrent_connects)
        self._conns: dict[tuple[str, int, str], asyncio.Task[_Conn]] = {}
        self.connects = 0

    # -- public --------------------------------------------------------------------------------

    async def session(self, target: Target) -> SwitchSession:
        key = (*_host_port(target), target.credentials.username)
        task = self._conns.get(key)
        if task is None or (task.done() and (task.cancelled() or task.exception() is not None
                                             or task.result().lost is not None)):
            task = asyncio.ensure_future(self._connect(target))
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            self._conns[key] = task
        try:
            conn = await asyncio.shield(task)
        except BaseException:
            if self._conns.get(key) is task and task.done():
                del self._conns[key]  # a later call may try again
            raise
        return SwitchSession(self, target, conn)

    async def close(self) -> None:
        tasks = list(self._conns.values())
        self._conns.clear()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        conns = [r for r in results if isinstance(r, _Conn)]
        await asyncio.gather(*(asyncio.to_thread(c.disconnect) for c in conns))

    async def __aenter__(self) -> SwitchTransport:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def known_hosts_for(self, target: Target) -> Path:
        """The transport's explicit known_hosts, else the target's `options.known_hosts`, else ~/.ssh/known_hosts."""
        option = target.options.get("known_hosts")
        if self._known_hosts_explicit or not option:
            return self.known_hosts
        return Path(str(option)).expanduser()

    def _command_timeout(self, target: Target) -> float:
        return float(target.options.get("command_timeout", self.command_timeout))

    def _connect_timeout(self, target: Target) -> float:
        return float(target.options.get("connect_timeout", self.connect_timeout))

    # -- connecting ------------------------------------------------------------------------------

    async def _connect(self, target: Target) -> _Conn:
        device_type = NETMIKO_DEVICE_TYPES.get(target.device_type or "")
        if device_type is None:
            raise TransportError(ConnectErrorKind.PROTOCOL, target,
                                 f"{target.name}: device_type {target.device_type!r} is not one roce-wizard speaks "
                                 f"({', '.join(NETMIKO_DEVICE_TYPES)})")
        # resolved here, in the event loop: a prompt for it must not race other threads
        password = self.password_resolver(target) if self.password_resolver is not None else None
        policy = _HostKeyPolicy(self.known_hosts_for(target), self.trust_on_first_use)
        session_log = None
        if self.session_log_dir is not None:
            session_log = _MaskedLog(self.session_log_dir / f"{target.name}.log", [password or ""])
        async with self._semaphore:
            self.connects += 1
            try:
                handler = await asyncio.to_thread(self._open, target, device_type, password, policy, session_log)
            except Exception as exc:
                if session_log is not None:
                    session_log.note(f"connect failed: {type(exc).__name__}")
                    session_log.close()
                raise self._map_error(exc, target, policy, password) from None
        return _Conn(target, handler, session_log)

    def _open(self, target: Target, device_type: str, password: str | None, policy: _HostKeyPolicy,
              session_log: _MaskedLog | None) -> Any:
        from netmiko import ConnectHandler

        host, port = _host_port(target)
        timeout = self._connect_timeout(target)
        creds = target.credentials
        if session_log is not None:
            session_log.note(f"connect {device_type} {creds.username}@{host}:{port}")
        handler = ConnectHandler(
            device_type=device_type, host=host, port=port, username=creds.username, password=password or "",
            secret=password or "", use_keys=bool(creds.key_file),
            key_file=str(Path(creds.key_file).expanduser()) if creds.key_file else None,
            allow_agent=creds.use_agent, conn_timeout=timeout, auth_timeout=timeout, banner_timeout=timeout,
            # host keys: our known_hosts file and our policy, never AutoAddPolicy
            ssh_strict=True, system_host_keys=False, alt_host_keys=True, alt_key_file=str(policy.path),
            session_log=session_log, auto_connect=False,
        )
        handler.key_policy = policy
        try:
            handler._open()
            if target.device_type in NEEDS_ENABLE and not handler.check_enable_mode():
                handler.enable()
        except BaseException:
            try:
                handler.disconnect()
            except Exception:  # noqa: BLE001
                pass
            raise
        return handler

    # -- errors ----------------------------------------------------------------------------------

    def _map_error(self, exc: BaseException, target: Target, policy: _HostKeyPolicy,
                   password: str | None) -> TransportError:
        import paramiko
        from netmiko.exceptions import NetmikoAuthenticationException, ReadTimeout

        if isinstance(exc, TransportError):
            return exc
        host, port = _host_port(target)
        name = f"{target.name} ({host}:{port})"
        chain: list[BaseException] = []
        cur: BaseException | None = exc
        while cur is not None and cur not in chain:
            chain.append(cur)
            cur = cur.__cause__ or cur.__context__
        for e in list(chain):  # paramiko folds one error per address into NoValidConnectionsError.errors
            chain.extend(x for x in (getattr(e, "errors", None) or {}).values() if isinstance(x, BaseException))
        text = " ".join(str(e) for e in chain)
        if password:
            text = text.replace(password, "********")
        bad_key = next((e for e in chain if isinstance(e, paramiko.BadHostKeyException)), None)
        kh = policy.path
        if bad_key is not None:
            expected, got = bad_key.expected_key, bad_key.key
            return TransportError(
                ConnectErrorKind.HOSTKEY_CHANGED, target,
                f"host key of {name} has CHANGED: {kh} holds {expected.get_name()} {expected.fingerprint}, the "
                f"switch now offers {got.get_name()} {got.fingerprint}. Refusing to connect — this may be a "
                "man-in-the-middle attack. If the switch was replaced or re-keyed on purpose, remove the old "
                f"entry (ssh-keygen -R '{known_hosts_name(host, port)}' -f {kh}) and connect again")
        if policy.refused:
            scan = f"ssh-keyscan -p {port} {host}" if port != DEFAULT_PORT else f"ssh-keyscan {host}"
            return TransportError(
                ConnectErrorKind.HOSTKEY_UNKNOWN, target,
                f"host key of {name} is not in {kh}; add it ({scan} >> {kh}, after checking its fingerprint"
                f"{f' — it offers {policy.offered}' if policy.offered else ''}) or run with --trust-on-first-use")
        if any(isinstance(e, (NetmikoAuthenticationException, paramiko.AuthenticationException)) for e in chain):
            how = "password" if password else "keys/agent only (no password resolved)"
            return TransportError(ConnectErrorKind.AUTH, target,
                                  f"{name} rejected user {target.credentials.username!r} ({how}); check the username "
                                  "and the password reference in the inventory")
        if any(isinstance(e, socket.gaierror) for e in chain) or "DNS failure" in text:
            return TransportError(ConnectErrorKind.DNS, target, f"cannot resolve {host!r} for {target.name}")
        if any(isinstance(e, ConnectionRefusedError) for e in chain):
            return TransportError(ConnectErrorKind.REFUSED, target,
                                  f"{name} refused the connection: nothing listens on port {port} (is SSH enabled "
                                  "on the switch's management interface?)")
        if any(isinstance(e, (TimeoutError, socket.timeout)) for e in chain):
            return TransportError(ConnectErrorKind.TIMEOUT, target,
                                  f"{name} did not answer within {self._connect_timeout(target):g}s; check the "
                                  "management address, the port and any firewall in between")
        if any(isinstance(e, ReadTimeout) for e in chain):
            return TransportError(ConnectErrorKind.PROTOCOL, target,
                                  f"{name} accepted the login but its CLI never showed a prompt netmiko's "
                                  f"{target.device_type} driver recognises (wrong device_type?)")
        if any(isinstance(e, OSError) for e in chain):
            return TransportError(ConnectErrorKind.UNREACHABLE, target, f"cannot reach {name}: {chain[-1]}")
        first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
        return TransportError(ConnectErrorKind.PROTOCOL, target, f"cannot open a CLI session on {name}: {first}")
