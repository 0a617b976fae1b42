"""The wizard: a Textual app over the same engine the CLI drives (session.load_setup,
session.live_transports, engine.run: check, fix, reboot).

Every engine run is an async worker on the app's loop (the transports run blocking libraries such as
pyVmomi and netmiko in threads of their own), so it can be cancelled, and `q` during a fix stops it at a
safe point; engine events come back as messages (tui/messages.py) and update one Board (tui/board.py)
the screens draw.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import App
from textual.binding import Binding
from textual.message import Message

from roce_wizard.engine import Event, Hooks, Mode, RunOutcome, RunReport, RunSetup, run
from roce_wizard.engine.events import (
    Connected,
    FixesApplied,
    FixStepRan,
    LookDone,
    LookStarted,
    ProbeRan,
    RebootProgress,
    RoundJudged,
    RunStopped,
    TargetJudged,
    VmsStillOff,
)
from roce_wizard.engine.fixes import Planned, plan_fixes
from roce_wizard.engine.pending import pending_count
from roce_wizard.model import Safety, Status
from roce_wizard.records.ledger import build_ledger
from roce_wizard.records.report import counts_words, summary_line, to_json_dict
from roce_wizard.records.runlog import RunLog
from roce_wizard.records.wording import plural
from roce_wizard.session import load_setup
from roce_wizard.textsafe import printable
from roce_wizard.tui import messages as msg
from roce_wizard.tui.board import Board, Progress, TargetProgress, merge_reports
from roce_wizard.tui.connection import Connection
from roce_wizard.tui.readonly import READ_ONLY, refuse_work
from roce_wizard.tui.stopped import INTERRUPTED, stop_report

ALL_SAFETY = {Safety.SAFE, Safety.DISRUPTIVE}  # previews show both; the gate is the second confirmation


class WizardApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "roce-wizard"
    BINDINGS = [
        # the footer lists these first (tui/keys.py), in this order, so 80 columns keep them
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "interrupt", "Quit; mid-fix: stop at a safe point (exit 130)", show=False, priority=True),
        Binding("b", "reboots", "Reboots"),
        Binding("e", "export", "Export"),
    ]

    def __init__(self, connection: Connection, *, subtitle: str = "", start: bool = True):
        from roce_wizard.tui.commands import WizardCommands  # noqa: PLC0415

        self.COMMANDS = App.COMMANDS | {WizardCommands}
        super().__init__()
        self.connection = connection
        setup = connection.setup
        self.board = Board(setup.targets, setup.chosen, setup.stage_of)
        self.busy: str | None = None  # what the engine is doing: "preflight", "checks", "fix", "reboot"
        self.log_lines: list[Text] = []
        self.run_dirs: list[Path] = []
        self.preflight: RunReport | None = None
        self.ledger: dict[str, Any] = {}  # host -> reboots.HostLedger, as of the last run
        self.reboot_batch = 1  # hosts rebooted at once (the reboot tracker's +/-; "fix everything" uses it too)
        self.fix_all_result: msg.FixAllFinished | None = None
        self.working: str | None = None  # a fix or reboot the engine is running ("fix", "reboot", "fix everything")
        self.stop_requested = False  # the user confirmed quitting mid-run: the engine stops at its next safe point
        self.interrupted = False  # that stop came from Ctrl-C: exit code 130 (tui/stopped.py)
        self.stop_lines: list[str] = []  # what the stop left behind, printed after the wizard closes
        self.start = start
        self.sub_title = (subtitle or str(connection.inventory)) + (" — READ-ONLY replay" if connection.replay else "")

    # ------------------------------------------------------------------ lifecycle

    def on_mount(self) -> None:
        from roce_wizard.tui.screens.welcome import WelcomeScreen  # noqa: PLC0415

        self.push_screen(WelcomeScreen())
        for warning in self.connection.setup.warnings:
            self.log_line(f"warning: {warning}", "yellow")
        if self.start:
            self.run_engine("preflight")

    def log_line(self, text: str, style: str = "") -> None:
        line = Text(time.strftime("%H:%M:%S ") if not self.is_headless else "", style="dim")
        line.append(printable(text), style=style)  # tool text: no escape sequence reaches the terminal
        self.log_lines.append(line)
        self.tell_screens(lambda: msg.BoardChanged())

    def tell_screens(self, make: Callable[[], Message]) -> None:
        """A fresh message per screen on the stack (a message is delivered once)."""
        for screen in self.screen_stack:
            screen.post_message(make())

    # ------------------------------------------------------------------ the engine, in async workers

    def run_setup(self, runlog: RunLog, **options: Any) -> RunSetup:
        """The engine's RunSetup for this wizard's inventory (fresh transports per phase)."""
        setup, c = self.connection.setup, self.connection
        checks = options.pop("checks", setup.chosen)
        return RunSetup(setup.targets, checks, setup.stage_of, setup.policy,
                        lambda: c.transports(runlog.path), runlog, inventory=c.inventory, playbook=setup.playbook,
                        concurrency=c.concurrency, command_timeout=c.timeout, reboot_timeout=c.reboot_timeout,
                        poll_s=c.reboot_poll, pending_from_ledger=c.replay is None, **options)

    def hooks(self, runlog: RunLog, purpose: str) -> Hooks:
        """Engine events become messages (tui/messages.py); a stop the user confirmed is asked at safe points."""
        return Hooks(on_event=lambda event: self._on_engine_event(event, runlog, purpose),
                     stop_requested=lambda: self.stop_requested)

    def _on_engine_event(self, event: Event, runlog: RunLog, purpose: str) -> None:
        if isinstance(event, Connected):
            self.post_message(msg.TargetConnected(event.target, event.ok, event.error_kind, event.message))
        elif isinstance(event, ProbeRan):
            self.post_message(msg.ProbeDone(event.target, event.probe, event.exit_status))
        elif isinstance(event, TargetJudged) and event.run is not None:
            self.post_message(msg.TargetFindings(event.run, event.resolved))
        elif isinstance(event, LookStarted):
            self.post_message(msg.ChecksStarted(event.targets, purpose if event.purpose == "checks" else
                                                "checks" if event.purpose == "final" else event.purpose))
        elif isinstance(event, LookDone):
            runlog.write_results(to_json_dict(event.report))
            self.post_message(msg.ChecksFinished(event.report, purpose if event.purpose == "checks" else
                                                 "checks" if event.purpose == "final" else event.purpose,
                                                 self.read_ledger()))
        elif isinstance(event, FixesApplied):
            self.post_message(msg.FixFinished(event.fixrun))
        elif isinstance(event, FixStepRan):
            self.post_message(msg.FixStepDone(event.result))
        elif isinstance(event, RebootProgress):
            self.post_message(msg.RebootProgress(event.host, event.state, event.note))
        elif isinstance(event, RoundJudged):  # a round of "fix everything": the board shows it
            current = event.round
            self.post_message(msg.ChecksFinished(current.report, f"round {current.number}", self.read_ledger(),
                                                 final=False))
            runnable = sum(1 for p in current.planned if p.allowed)
            if runnable:
                self.log_line(f"round {current.number}: applying {plural(runnable, 'fix')}", "bold")
            for error in current.errors:
                self.post_message(msg.WorkFailed(f"round {current.number}", error))
        elif isinstance(event, VmsStillOff):  # a VM this tool powered off could not come back
            for item in event.off:
                self.post_message(msg.WorkFailed(purpose, item.line()))
        elif isinstance(event, RunStopped):
            self.log_line(f"stopped {event.where} (round {event.round}): the run log says where", "bold yellow")

    def read_ledger(self) -> dict[str, Any] | None:
        """The reboot ledger from every run log."""
        try:
            return build_ledger()
        except Exception as exc:  # noqa: BLE001 - a ledger bug must not hide the results
            self.post_message(msg.WorkFailed("reboot ledger", f"{type(exc).__name__}: {exc}"))
            return None

    async def _engine(self, kind: str, purpose: str, mode: Mode, **options: Any) -> RunOutcome | None:
        """One engine run on the app's loop (async worker: cancellable, and `q` can stop it at a safe point)."""
        runlog = RunLog.create(kind=kind)
        self.run_dirs.append(runlog.path)
        self.working = purpose if mode is not Mode.CHECK else None
        outcome: RunOutcome | None = None
        try:
            outcome = await run(self.run_setup(runlog, **options), mode, self.hooks(runlog, purpose))
            return outcome
        except Exception as exc:  # noqa: BLE001 - shown, never a crashed UI
            self.post_message(msg.WorkFailed(purpose, f"{type(exc).__name__}: {exc}"))
            if purpose == "fix everything":
                self.post_message(msg.FixAllFinished([f"stopped: {type(exc).__name__}: {exc}"], False))
            return None
        finally:
            runlog.close()
            self.working = None
            if self.stop_requested:  # the user asked to quit mid-run: the run stopped at a safe point
                self.quit_after_stop(purpose, outcome, runlog.path)

    @work(group="engine", name="checks")
    async def run_engine(self, purpose: str = "checks", names: set[str] | None = None) -> None:
        chosen = self.connection.setup.chosen
        checks = {c: v for c, v in chosen.items() if c == "RW001"} if purpose == "preflight" else chosen
        await self._engine("doctor", purpose, Mode.CHECK, names=names, checks=checks)

    @work(group="engine", name="fix")
    async def apply_fixes(self, planned: list[Planned]) -> None:
        if refuse_work(self, "fix"):  # the screens refuse first; this is the last line
            return
        await self._engine("fix", "fix", Mode.FIX, plans=planned)  # FixesApplied -> FixFinished, then the look

    @work(group="engine", name="reboot")
    async def reboot_hosts(self, hosts: list[str], batch: int) -> None:
        """Reboot through the reboot orchestration (maintenance mode via vCenter, VMs powered off and on again,
        wait for a new boot), then re-verify and record the verdict: the engine's reboot mode."""
        if refuse_work(self, "reboot"):
            return
        await self._engine("reboot", "reboot", Mode.REBOOT, hosts=list(hosts), batch=batch)
        self.post_message(msg.RebootsFinished(self.read_ledger() or {}))

    @work(group="engine", name="fix-all")
    async def fix_everything(self, include_disruptive: bool) -> None:
        """Every stage, as `fix --yes --reboot` does: check, apply what is allowed, reboot the hosts whose changes
        wait for a reboot (with disruptive fixes confirmed, a host's VMs stay off between its reboots and come
        back once), and again until nothing is left. The previews were confirmed before this starts: the gate
        (safe, or safe and disruptive) holds for every round, as it does for `fix --yes [--allow-disruptive]`."""
        if refuse_work(self, "fix everything", msg.FixAllFinished([f"refused: {READ_ONLY}"], False)):
            return
        self.post_message(msg.ChecksStarted([t.name for t in self.connection.setup.targets], "fix everything"))
        allow = {Safety.SAFE} | ({Safety.DISRUPTIVE} if include_disruptive else set())
        outcome = await self._engine("fix", "fix everything", Mode.FIX, allow=allow, reboot=True,
                                     batch=self.reboot_batch, power_off_vms=include_disruptive)
        if outcome is None:
            return
        last, rounds = outcome.report, outcome.rounds
        looked = outcome.stopped is None and bool(outcome.applied) and rounds[-1].fixrun is not None
        if last is not None and not looked:  # else the engine's last look is on the board already
            self.post_message(msg.ChecksFinished(last, "fix everything", self.read_ledger()))
        steps = [s for run_ in outcome.applied for s in run_.results]
        failed = [s for s in steps if not s.ok] + [o for r in rounds for o in r.rebooted.values() if not o.ok]
        lines = [f"{plural(len(rounds), 'round')}, {plural(sum(1 for s in steps if s.ok), 'step')} applied"
                 + (f", {len(failed)} failed" if failed else "")]
        if outcome.reboots:
            lines.append("reboots: " + ", ".join(f"{n} ×{c}" for n, c in sorted(outcome.reboots.items())))
        powered = [vm for r in rounds for vm in r.powered_on]
        if powered:
            lines.append("VMs powered on again: " + ", ".join(powered))
        failed += outcome.vms_still_off
        lines.extend(item.line() for item in outcome.vms_still_off)
        if outcome.stopped is not None:
            lines.append(f"stopped {outcome.stopped.where} (round {outcome.stopped.round})")
        if last is not None:
            lines.append(summary_line(last))
        self.post_message(msg.FixAllFinished(lines, not failed and outcome.stopped is None and last is not None
                                             and last.exit_code == 0))

    # ------------------------------------------------------------------ messages from the workers

    def on_checks_started(self, message: msg.ChecksStarted) -> None:
        self.busy = message.purpose
        self.board.running = set(message.targets)
        for name in message.targets:
            self.board.progress[name] = TargetProgress()
        self.log_line(f"{message.purpose}: {plural(len(message.targets), 'target')}…", "bold")
        self.refresh_bindings()

    def on_target_connected(self, message: msg.TargetConnected) -> None:
        progress = self.board.progress.setdefault(message.target, TargetProgress())
        progress.state = Progress.CONNECTED if message.ok else Progress.UNREACHABLE
        progress.message = message.message or ""
        if not message.ok:
            self.log_line(f"{message.target}: unreachable ({message.error_kind}) {message.message or ''}", "red")
        else:
            self.tell_screens(lambda: msg.BoardChanged())

    def on_probe_done(self, message: msg.ProbeDone) -> None:
        self.board.progress.setdefault(message.target, TargetProgress()).probes += 1

    def on_target_findings(self, message: msg.TargetFindings) -> None:
        """A target's cells fill in as soon as it is judged, not when the whole run ends."""
        if self.busy == "preflight" and self.has_full_report():
            return  # a reachability re-check must not replace full results with RW001 alone
        self.board.take_run(message.run)
        progress = self.board.progress.setdefault(message.run.target.name, TargetProgress())
        if progress.state is not Progress.UNREACHABLE:
            progress.state = Progress.DONE
        self.tell_screens(lambda: msg.BoardChanged())

    def has_full_report(self) -> bool:
        return self.board.report is not None and set(self.board.report.checks) != {"RW001"}

    def on_checks_finished(self, message: msg.ChecksFinished) -> None:
        report = message.report
        full = self.has_full_report()
        if message.purpose == "preflight":
            self.preflight = report
            if not full:
                self.board.report = report
        elif message.purpose == "re-verify" and full:
            self.board.report = merge_reports(self.board.report, report)
        else:
            self.board.report = report
        if message.ledger is not None:
            self.ledger = message.ledger
        if message.purpose != "preflight":
            # changes applied and waiting for a reboot are staged, not planned again (as `fix` does)
            staged = {(n, p.check) for n, entry in self.ledger.items() for p in entry.awaiting_reboot}
            planned, errors = plan_fixes(self.board.report, self.connection.setup.policy, ALL_SAFETY, staged=staged)
            for item in planned:
                if item.allowed and (item.target.name, item.plan.check) in staged:
                    item.allowed, item.waits_for = False, ("a reboot",)
            self.board.plans = planned
            for error in errors:
                self.log_line(f"error: {error}", "red")
        for name in self.board.running:
            self.board.progress.setdefault(name, TargetProgress()).state = (
                Progress.UNREACHABLE if self.board.progress[name].state is Progress.UNREACHABLE else Progress.DONE)
        self.board.running = set()
        if message.final:
            self.busy = None
        style = "red" if report.exit_code == 1 else "yellow" if report.exit_code == 3 else "green"
        self.log_line(f"{message.purpose} done: {counts_words(report.counts(), pending_count(report.findings))}",
                      style)
        self.refresh_bindings()

    def on_fix_step_done(self, message: msg.FixStepDone) -> None:
        step = message.step
        mark, style = ("✓", "green") if step.ok else ("✗", "red")
        self.log_line(f"{mark} {step.target} {step.check}: {step.command}", style)
        self.tell_screens(lambda: msg.FixStepDone(step))

    def on_fix_finished(self, message: msg.FixFinished) -> None:
        run = message.run
        for error in run.errors:
            self.log_line(f"error: {error}", "red")
        for host, items in run.pending_reboots.items():
            self.log_line(f"{host}: waits for a reboot ({', '.join(sorted({k.value for _, k, _ in items}))}) — "
                          "see the reboot tracker (b)", "yellow")
        self.tell_screens(lambda: msg.FixFinished(run))

    def on_reboot_progress(self, message: msg.RebootProgress) -> None:
        self.log_line(f"{message.host}: {message.state} — {message.note}", "cyan")
        self.tell_screens(lambda: msg.RebootProgress(message.host, message.state, message.note))

    def on_reboots_finished(self, message: msg.RebootsFinished) -> None:
        self.ledger = message.ledger or self.ledger
        self.tell_screens(lambda: msg.RebootsFinished(message.ledger))

    def on_fix_all_finished(self, message: msg.FixAllFinished) -> None:
        self.fix_all_result = message
        self.busy = None
        for line in message.lines:
            self.log_line(f"fix everything: {line}", "bold green" if message.ok else "bold yellow")
        self.tell_screens(lambda: msg.FixAllFinished(message.lines, message.ok))
        self.refresh_bindings()

    def on_work_failed(self, message: msg.WorkFailed) -> None:
        self.log_line(f"{message.what}: {message.error}", "bold red")
        self.notify(printable(message.error), title=message.what, severity="error", markup=False)

    # ------------------------------------------------------------------ actions every screen has

    def action_help(self) -> None:
        from roce_wizard.tui.screens.fix import FixPreviewScreen, FixProgressScreen  # noqa: PLC0415
        from roce_wizard.tui.screens.help import HelpScreen  # noqa: PLC0415
        from roce_wizard.tui.screens.main import MainScreen  # noqa: PLC0415
        from roce_wizard.tui.screens.reboots import RebootScreen  # noqa: PLC0415
        from roce_wizard.tui.screens.welcome import WelcomeScreen  # noqa: PLC0415

        groups = [("everywhere", WizardApp, ()), ("welcome", WelcomeScreen, ()),
                  ("main", MainScreen, ((f"1-{len(self.board.stages())}", "jump to a stage of the rail (focus to the grid)"),
                                        ("arrows", "move in the grid; Tab: grid → detail → log → rail"))),
                  ("fix preview", FixPreviewScreen, ()), ("fix progress", FixProgressScreen, ()),
                  ("reboots", RebootScreen, ())]
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(groups))

    def action_reboots(self) -> None:
        from roce_wizard.tui.screens.reboots import RebootScreen  # noqa: PLC0415

        if not isinstance(self.screen, RebootScreen):
            self.push_screen(RebootScreen())

    def action_export(self) -> None:
        """The support bundle (roce_wizard.records.bundle) of the last run, written to the current directory;
        the dialog asks whether to anonymize it (as `export --anonymize`)."""
        from roce_wizard.tui.screens.export import ExportScreen  # noqa: PLC0415

        if not self.run_dirs:
            self.notify("nothing has run yet", title="export")
            return
        run_dir = self.run_dirs[-1]

        def chosen(anonymize: bool | None) -> None:
            if anonymize is not None:
                self.export_bundle(run_dir, anonymize=anonymize)

        if not isinstance(self.screen, ExportScreen):
            self.push_screen(ExportScreen(run_dir.name), chosen)

    @work(thread=True, group="export", name="export")
    def export_bundle(self, run_dir: Path, anonymize: bool = False) -> None:
        from roce_wizard.records import bundle  # noqa: PLC0415 - read only on export

        try:
            built = bundle.build_bundle(run_dir, inventory_path=self.connection.inventory, anonymize=anonymize)
            path = built.write(Path.cwd() / built.default_name())
        except Exception as exc:  # noqa: BLE001
            self.post_message(msg.WorkFailed("export", f"{type(exc).__name__}: {exc}"))
            return
        self.call_from_thread(self.log_line, f"export: wrote the support bundle {path}"
                              + (" (anonymized)" if anonymize else ""), "bold")
        self.call_from_thread(self.notify, str(path), title="support bundle written")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "export" and not self.run_dirs:
            return None
        if action == "reboots" and type(self.screen).__name__ == "RebootScreen":
            return False  # there already: the 80-column footer keeps the tracker's own keys instead
        return True

    def quit_after_stop(self, purpose: str, outcome: RunOutcome | None, run_dir: Path) -> None:
        """Say what the stop left behind (in the log, and printed once the wizard has closed), then exit: 130
        after Ctrl-C (interrupted: a script must not read success), 0 after `q` was confirmed in the dialog."""
        book = self.read_ledger() or {}
        names = {t.name for t in self.connection.setup.targets}
        by = "Ctrl-C" if self.interrupted else "q"
        self.stop_lines = stop_report(purpose, by, outcome, {h: e for h, e in book.items() if h in names}, run_dir)
        for line in self.stop_lines:
            self.log_line(line, "bold yellow")
        code = INTERRUPTED if self.interrupted else 0
        self.exit(code, return_code=code, message=Text("\n".join(self.stop_lines), style="yellow"))

    def action_interrupt(self) -> None:
        """Ctrl-C. Idle: quit. During a fix or reboot: stop at the next safe point without asking (an interrupt
        is meant), say what is left, exit 130. A second Ctrl-C does not cut a change in half: it says so."""
        if self.working is None:
            self.exit(0)
            return
        if self.stop_requested:
            self.notify("already stopping at the next safe point: a change and its verify finish together",
                        title="Ctrl-C", severity="warning")
            return
        self.stop_requested = self.interrupted = True
        self.log_line(f"Ctrl-C: {self.working} stops at the next safe point (between targets or rounds), then the "
                      "wizard quits and says what is left", "bold yellow")
        self.notify(f"{self.working}: stopping at the next safe point, then quitting", title="Ctrl-C",
                    severity="warning")

    async def action_quit(self) -> None:
        """Quit; during a fix or reboot first ask, then let the engine stop at its next safe point (between
        targets or rounds, never between a change and its verify): the app exits when the run has stopped."""
        if self.working is None:
            self.exit(0)
            return
        if self.stop_requested:
            return  # asked already: the run is on its way to a safe point

        def answer(yes: bool | None) -> None:
            if yes and self.working is not None:
                self.stop_requested = True
                self.log_line(f"{self.working}: stopping at the next safe point, then quitting…", "bold yellow")
            elif yes:
                self.exit(0)

        from roce_wizard.tui.screens.fix import ConfirmScreen  # noqa: PLC0415

        self.push_screen(ConfirmScreen(f"Stop {self.working} and quit?", [Text(
            "The run stops at the next safe point: between targets or rounds, never between a change and its "
            "verify. What it applied stays applied; the run log records where it stopped.")],
            "Stop and quit (y)", "Go on (n)"), answer)

    def summary(self) -> str:
        return summary_line(self.board.report) if self.board.report is not None else "no results yet"

    def cells(self) -> dict[tuple[str, str], Status | None]:
        """Every (row, check) cell and its status, for tests and the tmux run's assertions."""
        out = {}
        for stage in self.board.stages():
            for row in self.board.rows(stage):
                for code in self.board.columns(stage):
                    out[(row, code)] = self.board.cell_status(row, code)
        return out


def make_app(inventory: Path, *, playbook: str = "vsphere-sriov", replay: Path | None = None,
             known_hosts: Path | None = None, connect_timeout: float = 10.0, timeout: float = 60.0,
             concurrency: int = 32, subtitle: str = "", start: bool = True,
             host: list[str] | None = None, select_: list[str] | None = None,
             reboot_timeout: float = 1200.0, reboot_poll: float = 5.0) -> WizardApp:
    """The wizard for an inventory (raises session.SetupError for a bad inventory or playbook)."""
    setup = load_setup(inventory, playbook, select_=select_, host=host)
    connection = Connection(inventory, setup, replay=replay, known_hosts=known_hosts,
                            connect_timeout=connect_timeout, timeout=timeout, concurrency=concurrency,
                            reboot_timeout=reboot_timeout, reboot_poll=reboot_poll)
    return WizardApp(connection, subtitle=subtitle, start=start)
