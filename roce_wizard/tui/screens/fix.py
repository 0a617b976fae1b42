"""The fix flow: preview (exact steps per host, before → after, safety, reboots) → confirm →
a second confirmation for disruptive fixes → per-host per-step progress → re-verification.
Nothing runs without the preview having been confirmed."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Static

from roce_wizard.engine.fixes import Planned, StepResult
from roce_wizard.model import Safety, Status
from roce_wizard.records.wording import plural, plural_word
from roce_wizard.textsafe import printable
from roce_wizard.tui import messages as msg
from roce_wizard.tui.board import runnable
from roce_wizard.tui.readonly import READ_ONLY, is_read_only, refused
from roce_wizard.tui.widgets.detail import plan_lines

FIX_ALL_WHAT = "everything (all stages), rebooting as needed"
FIX_ALL_NOTE = ("Then, as `fix --reboot` does, round after round until nothing is left: the hosts whose changes "
                "wait for a reboot are rebooted ({batch} at a time: +/- in the reboot tracker, b), each entering "
                "maintenance mode through vCenter first; checks run again and what the fixes unblocked is fixed "
                "under the same answer (safe, or safe and disruptive). With disruptive fixes, the VMs on a host are "
                "powered off for its reboots and powered on once, after its last one.")


def start_fix_all(app: App, planned: list[Planned]) -> None:
    """"Fix everything": the preview of round one, the second confirmation for disruptive fixes (which
    also lets VMs be powered off for maintenance mode), then fix_until_ready in a worker."""
    if not any(p.allowed for p in planned):
        app.notify("nothing to fix", title="fix everything")
        return

    def confirmed(yes: bool | None) -> None:
        if not yes:
            app.log_line("fix everything: cancelled, nothing ran", "dim")
            return
        if refused(app, "fix everything"):
            return
        disruptive = [p for p in planned if p.allowed and p.plan.safety is Safety.DISRUPTIVE]
        if disruptive:
            app.push_screen(ConfirmScreen.disruptive(disruptive, vms=True), lambda include: go(bool(include)))
        else:
            go(False)

    def go(include_disruptive: bool) -> None:
        app.log_line("fix everything: " + ("safe and disruptive fixes" if include_disruptive else "safe fixes only")
                     + ", rebooting as needed", "bold")
        app.fix_all_result = None
        app.push_screen(FixAllScreen(include_disruptive))
        app.fix_everything(include_disruptive)

    app.push_screen(FixPreviewScreen(planned, FIX_ALL_WHAT, note=FIX_ALL_NOTE.format(batch=app.reboot_batch)),
                    confirmed)


def start_fix_flow(app: App, planned: list[Planned], what: str) -> None:
    """Preview → (second confirmation for disruptive) → apply + re-verify, or nothing."""
    if not planned:
        app.notify("nothing to fix here", title="fix")
        return

    def confirmed(yes: bool | None) -> None:
        if not yes:
            app.log_line(f"fix {what}: cancelled, nothing ran", "dim")
            return
        if refused(app, f"fix {what}"):
            return
        disruptive = [p for p in planned if p.allowed and p.plan.safety is Safety.DISRUPTIVE]
        if disruptive:
            app.push_screen(ConfirmScreen.disruptive(disruptive), lambda include: go(bool(include)))
        else:
            go(False)

    def go(include_disruptive: bool) -> None:
        chosen = runnable(planned, include_disruptive)
        if not any(p.allowed for p in chosen):
            app.notify("nothing left to run (disruptive fixes declined)", title="fix")
            app.log_line(f"fix {what}: nothing ran (disruptive fixes declined)", "dim")
            return
        app.log_line(f"fix {what}: applying {plural(sum(len(p.plan.steps) for p in chosen if p.allowed), 'step')}", "bold")
        app.push_screen(FixProgressScreen(chosen, what))
        app.apply_fixes(chosen)

    app.push_screen(FixPreviewScreen(planned, what), confirmed)


class FixPreviewScreen(ModalScreen[bool]):
    BINDINGS = [
        Binding("y", "answer(True)", "Apply"),
        Binding("n", "answer(False)", "Cancel"),
        Binding("escape", "answer(False)", "Cancel"),
    ]

    def __init__(self, planned: list[Planned], what: str, note: str = "") -> None:
        super().__init__()
        self.planned = planned
        self.what = what
        self.note = note

    def compose(self) -> ComposeResult:
        runs = [p for p in self.planned if p.allowed]
        held = [p for p in self.planned if not p.allowed]
        steps = sum(len(p.plan.steps) for p in runs)
        hosts = sorted({p.plan.target for p in runs})
        reboots = sorted({p.plan.reboot.value for p in runs if p.plan.reboot.value != "none"})
        disruptive = sum(1 for p in runs if p.plan.safety is Safety.DISRUPTIVE)
        with Vertical(id="fix-dialog", classes="dialog"):
            with Vertical(classes="dialog-head"):
                yield Static(Text.assemble(("Fix ", "bold"), (self.what, "bold cyan")), classes="dialog-title")
                if is_read_only(self.app):
                    yield Static(Text(f"{READ_ONLY}: this is what the fix would do; nothing will run",
                                      style="bold yellow"), id="read-only-note")
                summary = Text(f"{plural(len(runs), 'fix')}, {plural(steps, 'step')} on {plural(len(hosts), 'host')}")
                if disruptive:
                    summary.append(f"; {disruptive} disruptive (asked again)", style="bold yellow")
                if reboots:
                    summary.append(f"; then waits for: {', '.join(reboots)}", style="yellow")
                if held:
                    summary.append(f"; {len(held)} held back (shown, not run)", style="dim")
                yield Static(summary)
            with VerticalScroll(id="fix-plan", classes="dialog-body"):
                if self.note:
                    yield Static(Text(self.note + "\n", style="italic"))
                for host in dict.fromkeys(p.plan.target for p in self.planned):
                    yield Static(Text(host, style="bold underline"))
                    for line in plan_lines([p for p in self.planned if p.plan.target == host]):
                        # a command keeps its one line (the plan scrolls sideways for a long one)
                        yield Static(line, classes="command" if line.no_wrap else "")
            with Horizontal(classes="buttons"):
                yield Button("Apply (y)", id="yes", variant="success", disabled=not runs or is_read_only(self.app))
                yield Button("Cancel (n)", id="no", variant="default")
        yield Footer()

    def on_mount(self) -> None:
        runs = any(p.allowed for p in self.planned) and not is_read_only(self.app)  # --replay: preview only
        self.query_one("#yes" if runs else "#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_answer(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        if yes and refused(self.app, f"fix {self.what}"):
            return  # the preview stays open: the plan can still be read, n or Escape closes it
        self.dismiss(yes and any(p.allowed for p in self.planned))


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question; Escape and n say no."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n", "answer(False)", "No"),
        Binding("escape", "answer(False)", "No"),
    ]

    def __init__(self, title: str, body: list[Text], yes: str, no: str) -> None:
        super().__init__()
        self.title_text, self.body, self.yes, self.no = title, body, yes, no

    @classmethod
    def disruptive(cls, planned: list[Planned], *, vms: bool = False) -> ConfirmScreen:
        body = disruptive_body(planned, vms=vms)
        return cls(f"Apply {plural(len(planned), 'disruptive fix', 'disruptive fixes')} too?", body, "Yes, include them (y)",
                   "No, safe ones only (n)")

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog", classes="dialog"):
            yield Static(Text(self.title_text, style="bold yellow"), classes="dialog-title dialog-head")
            with VerticalScroll(classes="dialog-body"):
                for line in self.body:
                    yield Static(line)
            with Horizontal(classes="buttons"):
                yield Button(self.yes, id="yes", variant="warning")
                yield Button(self.no, id="no", variant="default")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()  # the safe answer is the default

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


def disruptive_body(planned: list[Planned], *, vms: bool = False) -> list[Text]:
    """The second confirmation's words: what applies at once (a switch's PFC or MTU: the fabric changes when the
    step runs, no reboot) apart from what takes effect only after a reboot (firmware, drivers, module parameters,
    BIOS), so neither is mistaken for the other."""
    now = [p for p in planned if p.plan.reboot.value == "none"]
    later = [p for p in planned if p.plan.reboot.value != "none"]
    body: list[Text] = []
    if now:
        body.append(Text("These apply at once, no reboot: the change is live on the fabric or the host as soon as "
                         "its step runs (a switch port's PFC or MTU; traffic on it may pause or drop meanwhile):",
                         style="bold"))
        body += [Text(printable(f"  {p.plan.target} {p.plan.check}: {p.plan.summary} (immediately)"), style="yellow")
                 for p in now]
    if later:
        then = ("the hosts are rebooted as needed, and their VMs powered off for it (on again once, after the "
                "host's last reboot)" if vms else "the host must be rebooted (the reboot tracker, b, lists it)")
        body.append(Text(("\n" if now else "") + "These change firmware, drivers or module parameters; they take "
                         f"effect only after the reboot shown (until then their cells show ⟳), and {then}:",
                         style="bold"))
        body += [Text(printable(f"  {p.plan.target} {p.plan.check}: {p.plan.summary} (after reboot: "
                                f"{p.plan.reboot.value})"), style="yellow") for p in later]
    return body


class FixProgressScreen(ModalScreen[None]):
    """Per host, per step: · waiting, ✓ done, ✗ failed (with output); then the re-verification."""

    BINDINGS = [Binding("escape", "close", "Close"), Binding("enter", "close", "Close")]

    def __init__(self, planned: list[Planned], what: str) -> None:
        super().__init__()
        self.planned = [p for p in planned if p.allowed]
        self.what = what
        self.results: dict[tuple[str, str, str], StepResult] = {}
        self.state = "applying"
        self.verdict = Text("")

    def compose(self) -> ComposeResult:
        with Vertical(id="progress-dialog", classes="dialog"):
            yield Static(Text.assemble(("Fixing ", "bold"), (self.what, "bold cyan")),
                         classes="dialog-title dialog-head")
            with VerticalScroll(id="progress-steps", classes="dialog-body"):
                yield Static(id="steps")
            with Vertical(classes="dialog-foot"):  # the state line ("re-verifying…", the verdict) stays in view
                yield Static(id="progress-state")
                with Horizontal(classes="buttons"):
                    yield Button("Close (Enter)", id="close")
        yield Footer()

    def on_mount(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        lines = Text()
        seen: set[tuple[str, str]] = set()
        for host in dict.fromkeys(p.target.name for p in self.planned):
            lines.append(f"{host}\n", style="bold")
            for p in (p for p in self.planned if p.target.name == host):
                for step in p.plan.steps:
                    key = (host, p.plan.check, step.command)
                    done = self.results.get(key)
                    if done is None and (host, step.command) in seen:
                        continue  # the same command another plan ran (the one nmlx5_core string)
                    seen.add((host, step.command))
                    mark, style = ("·", "dim") if done is None else ("✓", "green") if done.ok else ("✗", "bold red")
                    lines.append(printable(f"  {mark} {p.plan.check} {step.description}"), style=style)
                    if done is not None:
                        lines.append(f"  ({done.duration_s:.1f}s)", style="dim")
                    lines.append("\n")
                    if done is not None and not done.ok:
                        lines.append(printable(f"      {done.output.strip()[-300:]}") + "\n", style="red")
        self.query_one("#steps", Static).update(lines)
        state = Text(printable(self.state), style="bold")
        state.append("  ")
        state.append_text(self.verdict)
        self.query_one("#progress-state", Static).update(state)

    def on_fix_step_done(self, message: msg.FixStepDone) -> None:
        step = message.step
        self.results[(step.target, step.check, step.command)] = step
        self.redraw()

    def on_fix_finished(self, message: msg.FixFinished) -> None:
        ok = sum(1 for r in message.run.results if r.ok)
        failed = len(message.run.results) - ok
        self.state = f"applied: {plural(ok, 'step')} ok" + (f", {failed} failed" if failed else "") + " — re-verifying…"
        if not message.run.results:
            self.state = "nothing ran: " + "; ".join(message.run.errors)
        pending = message.run.pending_reboots
        if pending:
            self.verdict = Text(f"waiting for a reboot: {', '.join(pending)} (b: reboot tracker)", style="yellow")
        self.redraw()

    def on_board_changed(self, _: msg.BoardChanged) -> None:
        app = self.app
        if self.state.endswith("re-verifying…") and app.busy is None:
            touched = {p.plan.target for p in self.planned}
            cells = [f for f in app.board.findings()
                     if f.target in touched and any(f.check == p.plan.check for p in self.planned)]
            staged = sum(1 for f in cells if f.status is Status.PASS and f.pending_reboot)
            green = sum(1 for f in cells if f.status is Status.PASS) - staged
            self.state = f"re-verified: {green} of {plural(len(cells), 'fixed finding')} now {plural_word(green, 'passes')}" + (
                f", {staged} wait for a reboot (⟳: not in effect yet)" if staged else "")
            self.redraw()

    def on_button_pressed(self, _: Button.Pressed) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)



class FixAllScreen(ModalScreen[None]):
    """"Fix everything" as it goes: rounds, steps, reboots and VM power, from the app's log; then what it did.
    Closing it leaves the work running (the log pane and the reboot tracker keep following it); q asks
    whether to stop it at the next safe point and quit (a modal screen does not pass q on to the app)."""

    BINDINGS = [Binding("escape", "close", "Close"), Binding("enter", "close", "Close"),
                Binding("q", "app.quit", "Quit", show=False)]

    def __init__(self, include_disruptive: bool) -> None:
        super().__init__()
        self.include_disruptive = include_disruptive
        self.first_line = 0
        self.shown = 0

    def compose(self) -> ComposeResult:
        from textual.widgets import RichLog  # noqa: PLC0415

        gate = "safe and disruptive fixes" if self.include_disruptive else "safe fixes only"
        with Vertical(id="fix-all-dialog", classes="dialog"):
            yield Static(Text.assemble(("Fixing ", "bold"), (FIX_ALL_WHAT, "bold cyan"), f" — {gate}"),
                         classes="dialog-title dialog-head")
            yield RichLog(id="fix-all-log", wrap=True, markup=False, auto_scroll=True)
            with Vertical(classes="dialog-foot"):
                yield Static(id="fix-all-state")
                with Horizontal(classes="buttons"):
                    yield Button("Close (Enter)", id="close")
        yield Footer()

    def on_mount(self) -> None:
        self.first_line = self.shown = len(self.app.log_lines) - 1  # from the "fix everything:" line on
        self.redraw()

    def redraw(self) -> None:
        from textual.widgets import RichLog  # noqa: PLC0415

        app = self.app
        log = self.query_one("#fix-all-log", RichLog)
        for line in app.log_lines[max(self.shown, 0):]:
            log.write(line)
        self.shown = len(app.log_lines)
        done = app.fix_all_result
        if done is None:
            state = Text(f"working ({app.busy or 'starting'})… Enter closes this; the work goes on", style="bold")
        else:
            state = Text("done: " if done.ok else "stopped: ", style="bold green" if done.ok else "bold yellow")
            state.append(" · ".join(done.lines))
        self.query_one("#fix-all-state", Static).update(state)

    def on_board_changed(self, _: msg.BoardChanged) -> None:
        self.redraw()

    def on_fix_all_finished(self, _: msg.FixAllFinished) -> None:
        self.redraw()

    def on_button_pressed(self, _: Button.Pressed) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
