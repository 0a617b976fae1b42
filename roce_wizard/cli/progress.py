"""A progress bar for long runs (`doctor`, `fix`), driven by the engine's events, on stderr.

Shown only where someone watches: stdout and stderr both a terminal, an interactive one (rich's
TTY_INTERACTIVE / TERM=dumb rules), and no --json. In a pipe, a file, a CI log or with --json nothing
is drawn. The bar is transient: it is erased when a look ends, so the report prints as before.

- a look (`RunPlanned`, every check pass: doctor's, each fix round's, the re-verify): "checking" with
  targets judged / total (`TargetJudged`, first verdict per target), gone at `RunEnded`;
- reboots (`RebootProgress`): "rebooting" with hosts back / hosts rebooting (back, verified or failed),
  and the last host's state.
Anything the front end prints while the bar is up goes above it (rich redirects stdout and stderr).
"""

from __future__ import annotations

import sys
from typing import Any, Self

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from roce_wizard.console import is_tty, make_console
from roce_wizard.engine.events import RebootProgress, RoundJudged, RunEnded, RunPlanned, TargetJudged

_DONE = ("back", "verified", "failed", "ok")  # a reboot's end states (records.ledger.HostState)


class RunProgress:
    """Hooks.on_event for the bar; `wrap(on_event)` puts it in front of a front end's own handler."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.progress: Progress | None = None
        self.task: TaskID | None = None
        self.judged: set[str] = set()
        self.rebooting: dict[str, str] = {}  # host -> its last state

    @classmethod
    def for_terminal(cls, as_json: bool = False) -> RunProgress:
        console = make_console(stderr=True)
        return cls(not as_json and is_tty(sys.stdout) and is_tty(sys.stderr) and console.is_interactive)

    def _show(self, description: str, total: int, unit: str) -> None:
        if self.progress is None:
            self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                     TextColumn("{task.fields[unit]}"), TimeElapsedColumn(),
                                     console=make_console(stderr=True), transient=True)
            self.progress.start()
            self.task = self.progress.add_task(description, total=total, unit=unit)
        else:
            self.progress.update(self.task, description=description, total=total, completed=0, unit=unit)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
        self.progress, self.task = None, None

    def on_event(self, event: Any) -> None:
        if not self.enabled:
            return
        if isinstance(event, RunPlanned):
            self.judged, self.rebooting = set(), {}
            self._show("checking", len(event.targets), "targets judged")
        elif isinstance(event, TargetJudged) and self.progress is not None and event.target not in self.judged:
            self.judged.add(event.target)
            self.progress.update(self.task, completed=len(self.judged))
        elif isinstance(event, RebootProgress):
            self.rebooting[event.host] = event.state
            back = sum(1 for s in self.rebooting.values() if s in _DONE)
            self._show(f"rebooting ({event.host}: {event.state})", len(self.rebooting), "hosts back")
            self.progress.update(self.task, completed=back)  # type: ignore[union-attr]
        elif isinstance(event, (RunEnded, RoundJudged)):
            self.close()  # the report (or a round's plan and its question) prints on a clean screen

    def wrap(self, on_event: Any) -> Any:
        def both(event: Any) -> None:
            self.on_event(event)
            on_event(event)
        return both
