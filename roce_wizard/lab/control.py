"""Running a lab for `roce-wizard lab up|down|status` and `demo`: in the foreground until a
signal, detached in a new session, or in a background thread of this process.

A lab directory holds what a client needs (inventory.yaml, known_hosts, id_ed25519) and what
`lab status` / `lab down` read: state.json (ready, per-target state) and lab.pid.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from roce_wizard.lab import faults as faults_mod
from roce_wizard.lab.scenarios import Scenario, build_scenario
from roce_wizard.lab.server import Lab, read_state

PID_FILE = "lab.pid"
LOG_FILE = "lab.log"


class LabError(Exception):
    """A lab that cannot be started, found or stopped; the message says what to do."""


def labs_root() -> Path:
    """<state dir>/lab, the state dir being roce-wizard's (runlog.state_dir's rule, kept here so the lab imports
    nothing outside lab and model; tests/unit/test_lab_layers.py holds the two together)."""
    env = os.environ.get("ROCE_WIZARD_STATE_DIR")
    return (Path(env) if env else Path(platformdirs.user_state_dir("roce-wizard"))) / "lab"


def new_lab_dir() -> Path:
    root = labs_root()
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    return Path(tempfile.mkdtemp(prefix=time.strftime("lab-%Y%m%d-%H%M%S-"), dir=root))


def latest_lab_dir() -> Path | None:
    """The most recently started lab directory under the state dir (for `lab status|down`
    without --dir)."""
    root = labs_root()
    if not root.is_dir():
        return None
    dirs = [d for d in root.iterdir() if (d / "state.json").is_file()]
    return max(dirs, key=lambda d: (d / "state.json").stat().st_mtime) if dirs else None


@dataclass
class LabSpec:
    """What `lab up` was asked for."""

    scenario: str = "healthy"
    hosts: int | None = None
    baremetal: int | None = None  # bare-metal Linux nodes (with hosts 0: a bare-metal-only lab)
    switch: str | None = None
    faults: list[str] = field(default_factory=list)
    reboot_delay_s: float | None = None
    command_delay_s: float = 0.0

    def build(self) -> Scenario:
        """The scenario's world, with every fault checked against a copy (so that a bad --fault is
        a usage error before anything listens)."""
        scenario = build_scenario(self.scenario, self.hosts, self.switch, baremetal=self.baremetal)
        if self.reboot_delay_s is not None:
            scenario.world.reboot_delay_s = self.reboot_delay_s
        scenario.faults = [*scenario.faults, *self.faults]
        trial = scenario.world.copy()
        for spec in scenario.faults:
            faults_mod.inject(trial, spec)
        return scenario


async def start_lab(spec: LabSpec | Scenario, directory: Path, *, services: Any = None,
                    command_delay_s: float = 0.0) -> Lab:
    """Start a lab for a `lab up` spec, or for a scenario built already (its world as it is)."""
    if isinstance(spec, LabSpec):
        scenario = spec.build()
        command_delay_s = spec.command_delay_s
    else:
        scenario = spec
    lab = await Lab.start(scenario.world, directory, command_delay_s=command_delay_s, services=services)
    try:
        for fault in scenario.faults:
            await lab.inject(fault)
    except BaseException:
        await lab.stop()
        raise
    return lab


def describe(lab: Lab) -> str:
    world = lab.world
    guests = sum(1 for g in world.guests.values() if g.vm is not None)
    metal = sum(1 for g in world.guests.values() if g.vm is None)
    parts = [f"{len(world.hosts)} ESXi host{'s' if len(world.hosts) != 1 else ''}", f"{guests} guest{'s' if guests != 1 else ''}"]
    if metal:
        parts.append(f"{metal} bare-metal Linux")
    for service in lab.services:
        parts.append(f"{len(service.entries)} {service.kind}")
    lines = [f"roce-wizard lab: scenario {world.scenario}, {', '.join(parts)} on {lab.host}",
             f"  directory:   {lab.directory}",
             f"  inventory:   {lab.directory / 'inventory.yaml'}"]
    if world.faults:
        lines.append("  faults:      " + ", ".join(f"{c}@{t}" for c, t in world.faults))
    lines.extend(f"  note:        {n}" for n in lab.notes)
    doctor = f"roce-wizard doctor -i {lab.directory / 'inventory.yaml'}"
    if not world.hosts:  # bare metal only: the baremetal playbook judges it
        doctor += " --playbook baremetal"
    if lab.secrets:
        lines.append(f"  credentials: {lab.directory / 'lab.env'} (--env-file, or set -a; . {lab.directory / 'lab.env'}; "
                     f"set +a)   # {', '.join(sorted(lab.secrets))}")
        doctor += f" --env-file {lab.directory / 'lab.env'}"
    lines.append(f"  run doctor:  {doctor}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- foreground


def run_foreground(spec: LabSpec, directory: Path, *, echo: Callable[[str], None] = print,
                   detached: bool = False) -> int:
    """`lab up`: start, print, serve until SIGINT/SIGTERM, stop cleanly. Returns an exit code."""

    async def main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        lab = await start_lab(spec, directory)
        _write_pid(directory)
        try:
            echo(describe(lab))
            echo(f"  stop:        roce-wizard lab down --dir {directory}" if detached
                 else "  stop:        Ctrl+C")
            await stop.wait()
            echo("roce-wizard lab: stopping")
        finally:
            await lab.stop()
            _remove_pid(directory)
        return 0

    return asyncio.run(main())


def _write_pid(directory: Path) -> None:
    (directory / PID_FILE).write_text(f"{os.getpid()}\n", encoding="ascii")


def _remove_pid(directory: Path) -> None:
    with contextlib.suppress(OSError, ValueError):
        path = directory / PID_FILE
        if int(path.read_text().strip()) == os.getpid():
            path.unlink()


# ---------------------------------------------------------------------------- detached


READY_TIMEOUT_S = 120.0
# a lab's start grows with its hosts (an SSH listener and host key per target, a BMC per host, vCenter's
# inventory): 1000 hosts took 37 s to ready on 2 loaded cores (benchmarks/PROFILE.md); allow 0.25 s a host
READY_PER_HOST_S = 0.25


def ready_timeout(argv: list[str]) -> float:
    """How long `lab up --detach` waits for the lab ARGV asks for: 120 s, more for a lab of over 480 hosts."""
    hosts = 0
    for i, arg in enumerate(argv):
        if arg == "--hosts" and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith("--hosts="):
            value = arg.split("=", 1)[1]
        else:
            continue
        if value.isdigit():
            hosts = int(value)
    return max(READY_TIMEOUT_S, READY_PER_HOST_S * hosts)


def detach(argv: list[str], directory: Path, *, timeout: float | None = None) -> dict[str, Any]:
    """Run `roce-wizard lab up ARGV --dir DIRECTORY` in a new session, output to DIR/lab.log;
    return its state once it says ready (within `timeout`, default `ready_timeout(argv)`). Raises LabError
    (with the log's tail) if it dies or is not ready by then."""
    if timeout is None:
        timeout = ready_timeout(argv)
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    for stale in ("state.json", PID_FILE):
        with contextlib.suppress(FileNotFoundError):
            (directory / stale).unlink()
    log_path = directory / LOG_FILE
    command = [sys.executable, "-m", "roce_wizard.cli", "lab", "up", *argv, "--dir", str(directory), "--detached-child"]
    with open(log_path, "ab") as log:
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                 start_new_session=True, close_fds=True)
    (directory / PID_FILE).write_text(f"{child.pid}\n", encoding="ascii")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = child.poll()
        state = read_state(directory)
        if state and state.get("ready") and state.get("pid") == child.pid:
            return state
        if code is not None:
            with contextlib.suppress(FileNotFoundError):
                (directory / PID_FILE).unlink()
            raise LabError(f"the lab exited with status {code} before it was ready; {log_path}:\n{_tail(log_path)}")
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGTERM)
    raise LabError(f"the lab was not ready within {timeout:g}s (stopped it); {log_path}:\n{_tail(log_path)}")


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def read_pid(directory: Path) -> int | None:
    try:
        return int((directory / PID_FILE).read_text().strip())
    except (OSError, ValueError):
        return None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie (our own child not yet reaped) is not a running lab
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


def stop_lab(directory: Path, *, timeout: float = 20.0) -> int:
    """SIGTERM the lab serving DIRECTORY, wait for it to exit, remove lab.pid. Returns its pid."""
    pid = read_pid(directory)
    if pid is None:
        raise LabError(f"no lab.pid in {directory}: no lab is running there")
    if not alive(pid):
        (directory / PID_FILE).unlink(missing_ok=True)
        raise LabError(f"the lab in {directory} (pid {pid}) is not running any more; removed its stale lab.pid")
    state = read_state(directory) or {}
    if state.get("pid") not in (None, pid):
        raise LabError(f"{directory}/lab.pid says {pid} but state.json says {state.get('pid')}: not stopping "
                       "a process that may not be the lab")
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive(pid):
        time.sleep(0.05)
    if alive(pid):
        raise LabError(f"the lab (pid {pid}) did not stop within {timeout:g}s after SIGTERM; "
                       f"kill it with: kill -KILL {pid}")
    (directory / PID_FILE).unlink(missing_ok=True)
    return pid


def status_of(directory: Path) -> dict[str, Any]:
    state = read_state(directory)
    if state is None:
        raise LabError(f"no state.json in {directory}: not a lab directory, or the lab has not started yet")
    pid = read_pid(directory)
    running = pid is not None and alive(pid) and state.get("pid") == pid and not state.get("stopped")
    state["running"] = running
    if not running:
        state["ready"] = False
    return state


# ---------------------------------------------------------------------------- in this process


class BackgroundLab:
    """A lab served by an event loop in a thread of this process (`demo`, benchmarks): start()
    returns once it is ready; stop() shuts it down and joins the thread."""

    def __init__(self, spec: LabSpec | Scenario, directory: Path, *, services: Any = None,
                 command_delay_s: float = 0.0):
        self.spec = spec
        self.directory = directory
        self.services = services
        self.command_delay_s = command_delay_s
        self.lab: Lab | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="roce-wizard-lab", daemon=True)

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            try:
                self.lab = await start_lab(self.spec, self.directory, services=self.services,
                                           command_delay_s=self.command_delay_s)
            except BaseException as exc:  # noqa: BLE001 - handed to start()
                self._error = exc
                self._ready.set()
                return
            self._ready.set()
            try:
                await self._stop.wait()
            finally:
                await self.lab.stop()

        asyncio.run(main())

    def start(self, timeout: float = 120.0) -> Lab:
        self._thread.start()
        if not self._ready.wait(timeout):
            raise LabError(f"the lab was not ready within {timeout:g}s")
        if self._error is not None:
            raise self._error
        assert self.lab is not None
        return self.lab

    def call(self, coro: Any, timeout: float = 60.0) -> Any:
        """Run a coroutine on the lab's event loop (e.g. ``lab.inject(...)``, ``lab.reset(world)``)
        and return its result: the lab's world is only ever touched from its own loop."""
        if self._loop is None:
            raise LabError("the lab is not running")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)

    def __enter__(self) -> Lab:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def background_lab(spec: LabSpec | Scenario, directory: Path, **kw: Any) -> Iterator[Lab]:
    runner = BackgroundLab(spec, directory, **kw)
    lab = runner.start()
    try:
        yield lab
    finally:
        runner.stop()
