"""Replay transport: answers commands from recorded outputs instead of a live host.

Used by unit tests, by `doctor --replay FILE` (a recorded sample cluster) and to re-run checks on
what a previous run saw (`--replay RUN_DIR`: the run log's raw/*.json are recordings too).

Recording file (YAML or JSON)::

    targets:
      esx-01:
        connect_error: {kind: refused, message: "..."}   # optional: the target is unreachable
        delay_s: 0.0                                       # optional: per command
        commands:
          "esxcli --formatter=csv software vib list":
            stdout: "..."
            exit_status: 0          # optional, default 0
            stderr: ""              # optional
          "show interfaces counters queue":   # asked more than once (counters before and after a load):
            - {stdout: "..."}                 # a list of answers, given in that order (the last one repeats)
            - {stdout: "..."}

A run directory's records of the validate stage carry `seq` (the order they ran in): a command recorded
more than once is answered in that order too.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from roce_wizard import untrusted, yamlguard
from roce_wizard.model import Target
from roce_wizard.transports.base import CommandResult, ConnectErrorKind, TransportError
from roce_wizard.transports.plumbing import TransportOptions

REPLAY_MAX_BYTES = 512 * 1024 * 1024  # a recording of a large fleet is big, but never endless


@dataclass
class TargetRecording:
    commands: dict[str, Any] = field(default_factory=dict)  # command -> answer, or a list of answers in order
    connect_error: dict[str, str] | None = None
    delay_s: float = 0.0


def _connected(run_dir: Path) -> list[str]:
    """Targets the run connected to (`connect` events with ok), from its events.jsonl; torn lines are skipped."""
    path = run_dir / "events.jsonl"
    if not path.is_file():
        return []
    names = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("type") == "connect" and event.get("ok") is True \
                and isinstance(event.get("target"), str):
            names.append(event["target"])
    return names


def _answers(value: Any) -> Any:
    """A recorded answer: a mapping, bare text, or a list of them (answered in order)."""
    if isinstance(value, list):
        return [v if isinstance(v, dict) else {"stdout": str(v)} for v in value]
    return value if isinstance(value, dict) else {"stdout": str(value)}


class ReplaySession:
    def __init__(self, target: Target, recording: TargetRecording, transport: ReplayTransport):
        self.target = target
        self.recording = recording
        self.transport = transport

    async def run(self, command: str, timeout: float | None = None) -> CommandResult:
        self.transport.commands_run.append((self.target.name, command))
        if self.recording.delay_s:
            if timeout is not None and self.recording.delay_s > timeout:
                await asyncio.sleep(timeout)
                return CommandResult(command, "", "", None, timeout, timed_out=True)
            await asyncio.sleep(self.recording.delay_s)
        answer = self.recording.commands.get(command)
        if isinstance(answer, list):  # asked several times: the answers in order, the last one repeating
            asked = self.transport.asked[(self.target.name, command)] = self.transport.asked.get(
                (self.target.name, command), -1) + 1
            answer = answer[min(asked, len(answer) - 1)] if answer else None
        if answer is None:
            return CommandResult(command, "", f"replay: no recorded output for: {command}", 1, 0.0)
        return CommandResult(
            command=command,
            stdout=answer.get("stdout", ""),
            stderr=answer.get("stderr", ""),
            exit_status=answer.get("exit_status", 0),
            duration_s=float(answer.get("duration_s", 0.0)),
            timed_out=bool(answer.get("timed_out", False)),
        )

    async def close(self) -> None:
        return None


class ReplayTransport(TransportOptions):
    """A Transport over recordings; counts connects so tests can assert the concurrency bound."""

    def __init__(self, recordings: dict[str, TargetRecording], max_concurrent_connects: int = 16,
                 connect_delay_s: float = 0.0):
        super().__init__(max_concurrent_connects=max_concurrent_connects)
        self.recordings = recordings
        self.commands_run: list[tuple[str, str]] = []
        self.asked: dict[tuple[str, str], int] = {}  # (target, command) -> answers given of a list
        self._sessions: dict[str, ReplaySession] = {}
        self._connect_delay_s = connect_delay_s

    async def session(self, target: Target) -> ReplaySession:
        if target.name in self._sessions:
            return self._sessions[target.name]
        async with self.connect_slot():
            if self._connect_delay_s:
                await asyncio.sleep(self._connect_delay_s)
            recording = self.recordings.get(target.name)
            if recording is None:
                raise TransportError(ConnectErrorKind.UNREACHABLE, target,
                                     f"replay: no recording for target {target.name}")
            if recording.connect_error:
                kind = ConnectErrorKind(recording.connect_error.get("kind", "unreachable"))
                raise TransportError(kind, target, recording.connect_error.get("message", kind.value))
            session = ReplaySession(target, recording, self)
            self._sessions[target.name] = session
            return session

    async def close(self) -> None:
        self._sessions.clear()

    # ------------------------------------------------------------------ loading

    @classmethod
    def from_file(cls, path: str | Path, **kw: Any) -> ReplayTransport:
        path = Path(path)
        if path.is_dir():
            return cls.from_run_dir(path, **kw)
        try:  # a regular file, read with a bound: a FIFO or /dev/zero given by mistake is refused, never waited on
            text = untrusted.read_bounded(path, REPLAY_MAX_BYTES).decode("utf-8")
        except untrusted.InputError as exc:
            raise ValueError(str(exc)) from None
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: not UTF-8 text (byte {exc.start})") from None
        try:  # a recording from anywhere: depth, aliases and tags bounded (roce_wizard/yamlguard.py)
            data = json.loads(text) if path.suffix == ".json" else yamlguard.safe_load(text)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            raise ValueError(f"{path}:{mark.line + 1 if mark else '?'}: {exc.problem or exc.context}") from None
        except yaml.YAMLError as exc:
            raise ValueError(f"{path}: not YAML: {exc}") from None
        except RecursionError:
            raise ValueError(f"{path}: nested too deeply to read") from None
        if not isinstance(data, dict) or not isinstance(data.get("targets"), dict):
            raise ValueError(f"{path}: expected a mapping with `targets:` (target name -> recording)")
        recordings = {}
        for name, rec in data["targets"].items():
            rec = rec or {}
            recordings[str(name)] = TargetRecording(
                commands={str(k): _answers(v) for k, v in (rec.get("commands") or {}).items()},
                connect_error=rec.get("connect_error"),
                delay_s=float(rec.get("delay_s", 0.0)),
            )
        return cls(recordings, **kw)

    @classmethod
    def from_run_dir(cls, run_dir: str | Path, **kw: Any) -> ReplayTransport:
        """Recordings from a run directory's raw/<target>/*.json (what a doctor run saw)."""
        recordings: dict[str, TargetRecording] = {}
        raw = Path(run_dir) / "raw"
        for target_dir in sorted(p for p in raw.iterdir() if p.is_dir()) if raw.is_dir() else []:
            rec = TargetRecording()
            repeated: dict[str, list[dict[str, Any]]] = {}
            for f in sorted(target_dir.glob("*.json")):
                entry = json.loads(f.read_text(encoding="utf-8"))
                if entry.get("connect_error"):
                    rec.connect_error = entry["connect_error"]
                elif "command" in entry:
                    rec.commands[entry["command"]] = entry
                    if isinstance(entry.get("seq"), int):
                        repeated.setdefault(entry["command"], []).append(entry)
            for command, entries in repeated.items():
                if len(entries) > 1:  # the same command asked more than once: answered in the order it ran
                    rec.commands[command] = sorted(entries, key=lambda e: e["seq"])  # type: ignore[assignment]
            recordings[target_dir.name] = rec
        for name in _connected(Path(run_dir)):  # reached live but asked nothing: reachable on replay too
            recordings.setdefault(name, TargetRecording())
        return cls(recordings, **kw)
