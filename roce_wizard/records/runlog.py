"""The run directory: events.jsonl (append + fsync per event), raw outputs, results.json.

Layout under the user's state dir (``$ROCE_WIZARD_STATE_DIR`` or the platform's, e.g.
``~/.local/state/roce-wizard``)::

    runs/20261121-051200-3fa2c1/
        events.jsonl            one JSON object per line, fsync'd within milliseconds (group commit)
        raw/<target>/<probe>.json   command, stdout, stderr, exit status, duration (replayable; compact JSON)
        results.json            what `doctor --json` printed (compact JSON: read by programs)
    runs/latest -> 20261121-051200-3fa2c1  (a text file holding the name: symlinks are not everywhere)

Directories are 0700 and files 0600: outputs can name hosts, addresses and serials.
Nothing secret is ever written (commands never carry credentials; transports never log them).
"""

from __future__ import annotations

import json
import os
import queue
import re
import secrets
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


def state_dir() -> Path:
    env = os.environ.get("ROCE_WIZARD_STATE_DIR")
    return Path(env) if env else Path(platformdirs.user_state_dir("roce-wizard"))


def runs_dir(base: Path | None = None) -> Path:
    return (base or state_dir()) / "runs"


# files programs read back (raw records, results.json): compact, so json uses its C encoder (indent turns it off)
_COMPACT = (",", ":")


def _mkdir_private(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)


def _write_private(path: Path, text: str, sync: bool = True) -> None:
    """Write `text` to `path` as a 0600 file. A new file is created with mode 0600 (a umask only takes bits
    away); only a file that existed is chmod'ed, through its descriptor (one path lookup, not two)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    try:
        fd = os.open(path, flags | os.O_EXCL, 0o600)
    except FileExistsError:
        fd = os.open(path, flags, 0o600)
        try:
            os.fchmod(fd, 0o600)
        except BaseException:
            os.close(fd)
            raise
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        if sync:
            os.fsync(fh.fileno())


def file_name(value: str) -> str:
    """A target or probe name made safe as one path component."""
    cleaned = _SAFE_NAME.sub("_", value).lstrip(".")
    return cleaned or "_"


class _EventWriter:
    """Appends events to events.jsonl from a thread of its own, fsync'ing every batch it writes
    (group commit): each event is on disk a few milliseconds after it happened, and the engine's
    event loop never waits for the disk. `flush()` returns once everything queued is fsync'd."""

    def __init__(self, path: Path):
        self.path = path
        self.queue: queue.Queue[str | None] = queue.Queue()
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.thread = threading.Thread(target=self._run, name="roce-wizard-runlog", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            item = self.queue.get()
            batch = [item]
            while True:
                try:
                    batch.append(self.queue.get_nowait())
                except queue.Empty:
                    break
            lines = [b for b in batch if isinstance(b, str)]
            if lines:
                os.write(self.fd, "".join(lines).encode("utf-8"))
                os.fsync(self.fd)
            for b in batch:
                if isinstance(b, threading.Event):
                    b.set()
                self.queue.task_done()
            if None in batch:
                os.close(self.fd)
                return

    def put(self, line: str) -> None:
        self.queue.put(line + "\n")

    def flush(self) -> None:
        done = threading.Event()
        self.queue.put(done)  # type: ignore[arg-type]
        done.wait()

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join()


@dataclass
class RunLog:
    path: Path
    _writer: _EventWriter | None = field(default=None, repr=False, compare=False)
    _raw_dirs: set[str] = field(default_factory=set, repr=False, compare=False)  # raw/<target>/ made by this run

    @classmethod
    def create(cls, base: Path | None = None, kind: str = "doctor") -> RunLog:
        root = runs_dir(base)
        _mkdir_private(root.parent)
        _mkdir_private(root)
        name = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
        run = cls(root / name)
        _mkdir_private(run.path)
        _mkdir_private(run.path / "raw")
        run.event("run-start", kind=kind, pid=os.getpid())
        return run

    def event(self, type_: str, **data: Any) -> None:
        if self._writer is None:
            self._writer = _EventWriter(self.path / "events.jsonl")
        self._writer.put(json.dumps({"type": type_, "ts": time.time(), **data}, default=str, ensure_ascii=False))

    def flush(self) -> None:
        """Wait until every event so far is fsync'd (before reading the log back, and at the end)."""
        if self._writer is not None:
            self._writer.flush()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def raw(self, target: str, probe: str, record: dict[str, Any]) -> Path:
        name = file_name(target)
        directory = self.path / "raw" / name
        if name not in self._raw_dirs:  # once per target and run, not once per record
            _mkdir_private(directory)
            self._raw_dirs.add(name)
        path = directory / f"{file_name(probe)}.json"
        # raw outputs are evidence, not the journal: written whole, not fsync'd one by one
        _write_private(path, json.dumps(record, ensure_ascii=False, separators=_COMPACT), sync=False)
        return path

    def write_results(self, results: dict[str, Any]) -> None:
        self.flush()
        _write_private(self.path / "results.json",
                       json.dumps(results, ensure_ascii=False, default=str, separators=_COMPACT))
        _write_private(self.path.parent / "latest", self.path.name + "\n")

    def events(self) -> list[dict[str, Any]]:
        self.flush()
        return read_events(self.path)


# files already reported as torn (each is said once per process: the ledger reads every run many times)
_TORN_SAID: set[str] = set()
torn_warnings: list[str] = []  # what was said, for a front end that shows it its own way


def _say_torn(path: Path, what: str) -> None:
    key = str(path)
    if key in _TORN_SAID:
        return
    _TORN_SAID.add(key)
    message = f"{path}: {what} (the tool was stopped mid-write?): ignored"
    torn_warnings.append(message)
    # a plain line on stderr: the CLI's stdout (--json) stays clean and nothing is raised
    sys.stderr.write(f"warning: {message}\n")


def read_events(run_dir: Path) -> list[dict[str, Any]]:
    """Events of a run. A torn line of any kind (cut inside a UTF-8 character or a JSON object, NUL
    padding a crash left) is skipped and said once, naming the file: a crash mid-write must never
    cost the user the later runs that fold every log (the reboot ledger, export)."""
    out: list[dict[str, Any]] = []
    path = run_dir / "events.jsonl"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return out
    except OSError as exc:
        _say_torn(path, f"unreadable ({exc.strerror or exc})")
        return out
    torn = 0
    for raw in data.split(b"\n"):
        padded = b"\x00" in raw  # NUL padding: the file was extended but the write never landed
        raw = raw.replace(b"\x00", b"").strip()
        event: Any = None
        if raw:
            try:
                event = json.loads(raw.decode("utf-8"))
            except ValueError:  # UnicodeDecodeError and JSONDecodeError both
                event = None
        if isinstance(event, dict):
            out.append(event)
        elif raw or padded:
            torn += 1
    if torn:
        _say_torn(path, f"{torn} torn or unreadable line{'s' if torn != 1 else ''} in events.jsonl")
    return out


def read_json_file(path: Path) -> Any:
    """A JSON file the tool wrote (results.json): None when missing; None (said once) when torn."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        _say_torn(path, f"unreadable ({exc.strerror or exc})")
        return None
    try:
        return json.loads(data.rstrip(b"\x00").decode("utf-8"))
    except ValueError:
        _say_torn(path, "torn or not JSON")
        return None


def previous_results(base: Path | None = None, exclude: Path | None = None) -> tuple[Path, dict[str, Any]] | None:
    """The newest earlier run with a results.json (for `doctor --since-last`)."""
    root = runs_dir(base)
    if not root.is_dir():
        return None
    for run in sorted((p for p in root.iterdir() if p.is_dir()), reverse=True):
        if exclude is not None and run.resolve() == exclude.resolve():
            continue
        results = run / "results.json"
        if results.exists():
            loaded = read_json_file(results)
            if isinstance(loaded, dict):
                return run, loaded
    return None


def diff_results(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """What changed between two doctor results: one row per (check, target, subject) whose status moved."""

    def index(results: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
        return {(r["check"], r["target"], r.get("subject") or ""): r for r in results.get("results", [])}

    old, new = index(before), index(after)
    changes = []
    for key in sorted(set(old) | set(new)):
        was, now = old.get(key), new.get(key)
        was_status = was["status"] if was else None
        now_status = now["status"] if now else None
        if was_status != now_status:
            changes.append({
                "check": key[0], "target": key[1], "subject": key[2] or None,
                "before": was_status, "after": now_status,
                "summary": (now or was)["summary"],
            })
    return changes
