"""Applying a `switch-config` step: the checks it must pass before it runs, and per vendor how the lines are
applied, verified, saved or undone (`_ConfigApply`, a mixin of the connection `_Conn`)."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from roce_wizard.commands.switch_config import CONFIG_MARK, CONFIG_VENDORS, VENDOR_OF_DEVICE_TYPE, parse_config_command
from roce_wizard.commands.switch_undo import comparable, os10_inverse
from roce_wizard.model import Target
from roce_wizard.transports.base import CommandResult
from roce_wizard.transports.switch.common import (
    CLI_ERROR,
    CONFIG_ERROR,
    OS10_SHOW_RUN,
    ReadBack,
    _Lost,
    _Refused,
    _Timeout,
)


def _nvue_applied_revision(table: str) -> str | None:
    """The revision applied last in `nv config revision` (NVIDIA's example: Rev ID, State, Apply ID, Apply Date
    …): the applied row with the latest apply date (applying an older revision gives it a new apply)."""
    rows = re.findall(r"^\s*(\d+)\s+applied\S*\s+\S+\s+(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s", table, re.MULTILINE)
    return max(rows, key=lambda r: (r[1], int(r[0])))[0] if rows else None


_NV_SET = re.compile(r"^nv set [A-Za-z0-9][A-Za-z0-9 ,._/-]{0,160}$")  # the only shell lines an NVUE step sends


_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,40}$")
_LINE = re.compile(r"^[ -~]{1,200}$")  # printable ASCII, one line


def _config_problem(meta: dict[str, Any], lines: list[str], target: Target, verify: ReadBack | None) -> str | None:
    """Why a switch-config step must not run (None: it may)."""
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
    if meta.get("verify") and verify is None:
        return "this switch transport was given no read-back (verify) function: a change it cannot verify is not made"
    return None


class _ConfigApply:
    """The configuration half of `_Conn` (session.py): it uses the connection's target, lock, lost state, `_send`
    and `_lost_error`."""

    async def configure(self, command: str, timeout: float, verify: ReadBack | None) -> CommandResult:
        """A `switch-config` step (checklib.switch_fix.switch_plan): backup, change, verify (by the read-back the
        transport was given), save — or roll back.

        Exit 0: applied, verified and saved. Exit 1: refused, or verified wrong and rolled back; the
        output is the log of what was done, the outcome on its last line. Exit 2: a malformed step."""
        try:
            parsed = parse_config_command(command)
        except ValueError as exc:
            return CommandResult(command, "", f"switch-config: {exc}\n", 2, 0.0)
        if parsed is None:
            return CommandResult(command, "", "switch-config: not a switch-config step\n", 2, 0.0)
        meta, lines = parsed
        problem = _config_problem(meta, lines, self.target, verify)
        if problem:
            return CommandResult(command, "", f"switch-config: {problem}\n", 2, 0.0)
        async with self.lock:
            if self.lost is not None:
                raise self._lost_error(self.lost)
            started = time.monotonic()
            try:
                status, log_lines = await asyncio.to_thread(self._configure, meta, lines, timeout, verify)
            except _Timeout as exc:
                self.lost = f"no prompt while configuring ({exc})"
                return CommandResult(command, "", f"switch-config: timed out: {exc}\n", None,
                                     time.monotonic() - started, timed_out=True)
            except _Lost as exc:
                self.lost = exc.detail
                raise self._lost_error(exc.detail, f"{CONFIG_MARK} {meta.get('name', '')}".strip()) from None
            return CommandResult(command, "\n".join(log_lines) + "\n", "", status, time.monotonic() - started)

    def _configure(self, meta: dict[str, Any], lines: list[str], timeout: float,
                   verify: ReadBack | None) -> tuple[int, list[str]]:
        vendor = meta["vendor"]
        if vendor == "nvue":
            return self._configure_nvue(meta, lines, timeout, verify)
        name = f"{meta['name']}-{time.strftime('%Y%m%d-%H%M%S')}"
        log_lines: list[str] = []
        backup = {"eos": f"copy running-config flash:{name}.cfg", "onyx": f"configuration write to {name} no-switch",
                  "os10": f"copy running-configuration config://{name}.xml"}[vendor]
        # the vendors' REPLACE: a copy onto the running config merges (an expert review's finding), so EOS restores with
        # `configure replace` and Onyx with `configuration switch-to`; OS10 documents no replace: its change
        # is undone by the inverse of exactly the lines it added, then read back (commands.switch_undo)
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
        problems = self._read_back(meta, vendor, timeout, verify, log_lines)
        if problems:
            ok, how = roll_back()
            why = "; ".join(problems)
            if not ok:
                return 1, [*log_lines, f"VERIFY FAILED ({why}) and {how}"]
            return 1, [*log_lines, f"VERIFY FAILED ({why}): {how}, not saved"]
        one(save)
        return 0, [*log_lines, f"applied, verified and saved ({save}); backup {name}"]

    def _read_back(self, meta: dict[str, Any], vendor: str, timeout: float, verify: ReadBack | None,
                   log_lines: list[str]) -> list[str]:
        """Each `verify` entry of the step: the show command the given read-back names, sent here, its output
        judged by the read-back; what is still wrong (the log gets a line per entry)."""
        problems: list[str] = []
        for v in meta.get("verify") or []:
            read = verify(self.target, vendor, v) if verify is not None else None
            if read is None:
                problems.append(f"{v['field']}: no way to read it back on {vendor}")
                continue
            show, judge = read
            problems += judge(self._send(show, timeout))
            log_lines.append(f"verify `{show}`: " + ("ok" if not problems else "; ".join(problems)))
        return problems

    def _configure_nvue(self, meta: dict[str, Any], lines: list[str], timeout: float,
                        verify: ReadBack | None) -> tuple[int, list[str]]:
        """Cumulus NVUE: `nv set` lines into a pending revision, `nv config diff`, `nv config apply -y`, verify,
        `nv config save`; on a refused line `nv config detach`; on a failed verify `nv config apply <the
        revision applied before> -y` (NVUE Command Reference, "Config Commands")."""
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
        problems = self._read_back(meta, "nvue", timeout, verify, log_lines)
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
