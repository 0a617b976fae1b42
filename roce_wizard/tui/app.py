"""The wizard: a Textual app over the same engine the CLI drives (session.load_setup,
session.live_transports, engine.run_checks, fixes.plan_fixes / apply_plans).

Every engine call runs in a thread worker with its own event loop, exactly as the CLI runs it
(asyncio.run), so a slow host or a blocking pyVmomi call never freezes the screen; engine events
come back as messages (tui/messages.py) and update one Board (tui/board.py) the screens draw.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import App
from textual.binding import Binding
from textual.message import Message

from roce_wizard import reboots
from roce_wizard.engine import RunReport, run_checks
from roce_wizard.engine.fixes import Planned, apply_plans, plan_fixes
from roce_wizard.model import Safety, Status
from roce_wizard.report import summary_line, to_json_dict
from roce_wizard.runlog import RunLog
from roce_wizard.session import Setup, live_transports, load_setup
from roce_wizard.textsafe import printable
from roce_wizard.tui import messages as msg
from roce_wizard.tui.board import Board, Progress, TargetProgress, merge_reports
from roce_wizard.tui.readonly import READ_ONLY, refuse_work

ALL_SAFETY = {Safety.SAFE, Safety.DISRUPTIVE}  # previews show both; the gate is the second confirmation


@dataclass
class Connection:
    """How the wizard reaches the inventory's targets: live (as doctor) or from recorded outputs."""

    inventory: Path
    setup: Setup
    replay: Path | None = None
    known_hosts: Path | None = None
    connect_timeout: float = 10.0
    timeout: float = 60.0
    concurrency: int = 32
    reboot_timeout: float = 1200.0  # seconds a host may take to come back from a reboot
    reboot_poll: float = 5.0  # seconds between looks at a rebooting host (the practice lab: well under one)

    def transports(self, run_dir: Path) -> Any:
        if self.replay is not None:
            from roce_wizard.transports.replay import ReplayTransport  # noqa: PLC0415

            return ReplayTransport.from_file(self.replay, max_concurrent_connects=self.concurrency)
        return live_transports({t.kind for t in self.setup.targets}, known_hosts=self.known_hosts,
                               trust_on_first_use=False, concurrency=self.concurrency,
                               connect_timeout=self.connect_timeout, timeout=self.timeout, run_dir=run_dir,
                               interactive=False)


class WizardApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "roce-wizard"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Help", key_display="?"),
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

    # ------------------------------------------------------------------ the engine, in workers

    def _on_engine_event(self, type_: str, data: dict[str, Any]) -> None:
        # called on the worker's thread: only post messages from here
        if type_ == "connect":
            self.post_message(msg.TargetConnected(data["target"], bool(data.get("ok")), data.get("error_kind"),
                                                  data.get("message")))
        elif type_ == "probe":
            self.post_message(msg.ProbeDone(data["target"], data["probe"], data.get("exit_status")))
        elif type_ == "target-findings" and "run" in data:
            self.post_message(msg.TargetFindings(data["run"], bool(data.get("resolved"))))

    async def _checks(self, purpose: str, names: set[str] | None, runlog: RunLog) -> RunReport | None:
        setup = self.connection.setup
        chosen = setup.chosen if purpose != "preflight" else {c: v for c, v in setup.chosen.items() if c == "RW001"}
        transport = self.connection.transports(runlog.path)
        targets = [t for t in setup.targets if names is None or t.name in names]
        self.post_message(msg.ChecksStarted([t.name for t in targets], purpose))
        report = await run_checks(targets, chosen, transport, setup.policy, stage_of=setup.stage_of, runlog=runlog,
                                  concurrency=self.connection.concurrency, command_timeout=self.connection.timeout,
                                  on_event=self._on_engine_event)
        runlog.write_results(to_json_dict(report))
        runlog.flush()
        self.post_message(msg.ChecksFinished(report, purpose, self.read_ledger()))
        return report

    def read_ledger(self) -> dict[str, Any] | None:
        """The reboot ledger from every run log (off the UI thread: it reads them all)."""
        try:
            return reboots.build_ledger()
        except Exception as exc:  # noqa: BLE001 - a ledger bug must not hide the results
            self.post_message(msg.WorkFailed("reboot ledger", f"{type(exc).__name__}: {exc}"))
            return None

    @work(thread=True, group="engine", name="checks")
    async def run_engine(self, purpose: str = "checks", names: set[str] | None = None) -> None:
        runlog = RunLog.create(kind="doctor")
        self.run_dirs.append(runlog.path)
        try:
            await self._checks(purpose, names, runlog)
        except Exception as exc:  # noqa: BLE001 - shown, never a crashed UI
            self.post_message(msg.WorkFailed(purpose, f"{type(exc).__name__}: {exc}"))
        finally:
            runlog.close()

    @work(thread=True, group="engine", name="fix")
    async def apply_fixes(self, planned: list[Planned]) -> None:
        if refuse_work(self, "fix"):  # the screens refuse first; this is the last line
            return
        runlog = RunLog.create(kind="fix")
        self.run_dirs.append(runlog.path)
        try:
            transport = self.connection.transports(runlog.path)
            result = await apply_plans(planned, transport, runlog=runlog, command_timeout=self.connection.timeout,
                                       on_step=lambda step: self.post_message(msg.FixStepDone(step)))
            self.post_message(msg.FixFinished(result))
            if result.results:
                # every target, not only the touched ones: findings are judged across targets (root causes,
                # vCenter's verdicts on hosts and VMs, a host's PFC against its switch port), so a fix on one
                # target unblocks or changes cells on others. Targets run concurrently: this costs about the
                # slowest target's time, and the touched ones' cells turn green as soon as they are judged.
                await self._checks("re-verify", None, runlog)
        except Exception as exc:  # noqa: BLE001
            self.post_message(msg.WorkFailed("fix", f"{type(exc).__name__}: {exc}"))
        finally:
            runlog.close()

    @work(thread=True, group="engine", name="reboot")
    async def reboot_hosts(self, hosts: list[str], batch: int) -> None:
        """Reboot through the reboot orchestration (reboots.reboot_hosts: maintenance mode via vCenter,
        VMs powered off and on again, wait for a new boot), then re-verify and record the verdict."""
        if refuse_work(self, "reboot"):
            return
        runlog = RunLog.create(kind="reboot")
        self.run_dirs.append(runlog.path)
        try:
            book = reboots.build_ledger()
            reasons = {h: [f"{p.check}: {p.reason}" if p.reason else p.check for p in book[h].awaiting_reboot]
                       for h in hosts if h in book}
            transport = self.connection.transports(runlog.path)
            # VMs on a host block maintenance mode: the confirmation said they are powered off and on again
            plan = reboots.RebootPlan(self.connection.setup.targets, transport, power_off_vms=True,
                                      keep_vms_off=False, command_timeout=self.connection.timeout,
                                      timeout_s=self.connection.reboot_timeout, poll_s=self.connection.reboot_poll)
            try:
                outcomes = await reboots.reboot_hosts(
                    plan, hosts, batch=batch, runlog=runlog, reasons=reasons,
                    on_progress=lambda host, state, note: self.post_message(
                        msg.RebootProgress(host, getattr(state, "value", str(state)), note)))
            finally:
                for used in {id(t): t for t in transport.values()}.values():
                    await used.close()
            back = [h for h, outcome in outcomes.items() if outcome.ok]
            if back:
                report = await self._checks("re-verify", None, runlog)  # every target: as after a fix
                status: dict[tuple[str, str], set[Status]] = {}
                for f in report.findings if report is not None else []:
                    status.setdefault((f.target, f.check), set()).add(f.status)
                for host in back:
                    waiting = [p.check for p in book[host].awaiting_reboot] if host in book else []
                    failing = sorted(c for c in waiting if status.get((host, c), {Status.PASS}) != {Status.PASS})
                    reboots.record_verification(runlog, host, not failing, failing)
                runlog.flush()
            self.post_message(msg.RebootsFinished(self.read_ledger() or {}))
        except Exception as exc:  # noqa: BLE001
            self.post_message(msg.WorkFailed("reboot", f"{type(exc).__name__}: {exc}"))
        finally:
            runlog.close()

    @work(thread=True, group="engine", name="fix-all")
    async def fix_everything(self, include_disruptive: bool) -> None:
        """Every stage, as `fix --yes --reboot` does (fixes.fix_until_ready): check, apply what is allowed,
        reboot the hosts whose changes wait for a reboot (maintenance mode through vCenter; with disruptive
        fixes confirmed, a host's VMs stay off between its reboots and come back once), and again until
        nothing is left. The previews were confirmed before this starts: the gate (safe, or safe and
        disruptive) holds for every round, as it does for `fix --yes [--allow-disruptive]`."""
        from roce_wizard.engine.fixes import FixContext, RoundHooks, fix_until_ready  # noqa: PLC0415

        if refuse_work(self, "fix everything", msg.FixAllFinished([f"refused: {READ_ONLY}"], False)):
            return
        runlog = RunLog.create(kind="fix")
        self.run_dirs.append(runlog.path)
        setup = self.connection.setup
        try:
            def transports() -> Any:
                return self.connection.transports(runlog.path)

            targets = setup.targets
            allow = {Safety.SAFE} | ({Safety.DISRUPTIVE} if include_disruptive else set())
            ctx = FixContext(targets, setup.chosen, setup.stage_of, setup.policy, transports, allow, runlog,
                             concurrency=self.connection.concurrency, command_timeout=self.connection.timeout)

            def on_report(current: Any) -> None:  # a round's checks are done: the board shows them
                runnable = sum(1 for p in current.planned if p.allowed)
                self.post_message(msg.ChecksFinished(current.report, f"round {current.number}", self.read_ledger(),
                                                     final=False))
                if runnable:
                    self.call_from_thread(self.log_line, f"round {current.number}: applying {runnable} fix(es)", "bold")
                for error in current.errors:
                    self.post_message(msg.WorkFailed(f"round {current.number}", error))

            def on_progress(host: str, state: Any, note: str) -> None:
                self.post_message(msg.RebootProgress(host, getattr(state, "value", str(state)), note))

            def on_vms_still_off(off: list[Any]) -> None:  # a VM this tool powered off could not come back
                for item in off:
                    self.post_message(msg.WorkFailed("fix everything", item.line()))

            hooks = RoundHooks(on_report=on_report, on_step=lambda step: self.post_message(msg.FixStepDone(step)),
                               on_progress=on_progress, confirm=lambda current: True,
                               on_vms_still_off=on_vms_still_off)
            self.post_message(msg.ChecksStarted([t.name for t in targets], "fix everything"))
            rounds = await fix_until_ready(ctx, reboot=True, batch=self.reboot_batch,
                                           power_off_vms=include_disruptive,
                                           reboot_timeout=self.connection.reboot_timeout,
                                           poll_s=self.connection.reboot_poll, hooks=hooks)
            last = rounds[-1].report if rounds else None
            if rounds and rounds[-1].fixrun is not None:  # it stopped right after applying: one more look
                last = await self._checks("checks", None, runlog)
            elif last is not None:
                self.post_message(msg.ChecksFinished(last, "fix everything", self.read_ledger()))
            rebooted: dict[str, int] = {}
            for r in rounds:
                for name, outcome in r.rebooted.items():
                    if outcome.ok:
                        rebooted[name] = rebooted.get(name, 0) + 1
            steps = [s for r in rounds if r.fixrun is not None for s in r.fixrun.results]
            failed = [s for s in steps if not s.ok] + [o for r in rounds for o in r.rebooted.values() if not o.ok]
            lines = [f"{len(rounds)} round(s), {sum(1 for s in steps if s.ok)} step(s) applied"
                     + (f", {len(failed)} failed" if failed else "")]
            if rebooted:
                lines.append("reboots: " + ", ".join(f"{n} ×{c}" for n, c in sorted(rebooted.items())))
            powered = [vm for r in rounds for vm in r.powered_on]
            if powered:
                lines.append("VMs powered on again: " + ", ".join(powered))
            still_off = rounds[-1].vms_off if rounds else []
            failed += still_off
            lines.extend(item.line() for item in still_off)
            if last is not None:
                lines.append(summary_line(last))
            self.post_message(msg.FixAllFinished(lines, not failed and last is not None and last.exit_code == 0))
        except Exception as exc:  # noqa: BLE001 - shown, never a crashed UI
            self.post_message(msg.WorkFailed("fix everything", f"{type(exc).__name__}: {exc}"))
            self.post_message(msg.FixAllFinished([f"stopped: {type(exc).__name__}: {exc}"], False))
        finally:
            runlog.close()

    # ------------------------------------------------------------------ messages from the workers

    def on_checks_started(self, message: msg.ChecksStarted) -> None:
        self.busy = message.purpose
        self.board.running = set(message.targets)
        for name in message.targets:
            self.board.progress[name] = TargetProgress()
        self.log_line(f"{message.purpose}: {len(message.targets)} target(s)…", "bold")
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
        counts = report.counts()
        self.log_line(f"{message.purpose} done: {counts['pass']} passed, {counts['warn']} warnings, "
                      f"{counts['fail']} failed, {counts['error']} could not run, {counts['skip']} skipped", style)
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
        self.log_line(f"{message.host}: {message.state} {message.note}", "cyan")
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
        from roce_wizard.tui.screens.help import HelpScreen  # noqa: PLC0415

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_reboots(self) -> None:
        from roce_wizard.tui.screens.reboots import RebootScreen  # noqa: PLC0415

        if not isinstance(self.screen, RebootScreen):
            self.push_screen(RebootScreen())

    def action_export(self) -> None:
        """The support bundle (roce_wizard.bundle) of the last run, written to the current directory."""
        if not self.run_dirs:
            self.notify("nothing has run yet", title="export")
            return
        self.export_bundle(self.run_dirs[-1])

    @work(thread=True, group="export", name="export")
    def export_bundle(self, run_dir: Path) -> None:
        from roce_wizard import bundle  # noqa: PLC0415 - read only on export

        try:
            built = bundle.build_bundle(run_dir, inventory_path=self.connection.inventory)
            path = built.write(Path.cwd() / built.default_name())
        except Exception as exc:  # noqa: BLE001
            self.post_message(msg.WorkFailed("export", f"{type(exc).__name__}: {exc}"))
            return
        self.call_from_thread(self.log_line, f"export: wrote the support bundle {path}", "bold")
        self.call_from_thread(self.notify, str(path), title="support bundle written")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "export" and not self.run_dirs:
            return None
        return True

    async def action_quit(self) -> None:
        self.exit(0)

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
