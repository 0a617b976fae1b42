"""Reboot tracker: per host, what waits for a reboot (check, reboot kind, reason) and where the
host is (pending → entering maintenance → rebooting → back → verified) with the elapsed time.

The state comes from the reboot ledger (reboots.build_ledger, derived from the run logs, so it
survives restarting the app)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static

from roce_wizard.records.wording import plural
from roce_wizard.textsafe import printable
from roce_wizard.tui import messages as msg
from roce_wizard.tui.keys import AppKeysFirst

STATE_STYLE = {"ok": "green", "pending": "yellow", "entering-maintenance": "cyan", "rebooting": "bold cyan",
               "back": "cyan", "verified": "bold green", "failed": "bold red"}


@dataclass
class HostRow:
    host: str
    state: str
    pending: list[str] = field(default_factory=list)  # "RW206 host: SRIOV_EN in Next Boot"
    since: float | None = None  # when the current state began (epoch seconds)


def elapsed_text(since: float | None, now: float) -> str:
    if not since:
        return "-"
    seconds = max(0, int(now - since))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def _epoch(value: object) -> float | None:
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value).timestamp()
        except ValueError:
            return None
    return None


def rows_from_ledger(ledger: dict) -> list[HostRow]:
    """Hosts with something pending or a reboot on record (reboots.HostLedger values)."""
    rows = []
    for host, entry in sorted(ledger.items()):
        state = getattr(entry.state, "value", str(entry.state))
        items = [f"{p.check} {p.reboot.value}: {p.reason}" + (" (booted since; not yet seen current)"
                                                              if p.booted_over else "") for p in entry.pending]
        since = None
        if entry.history:
            last = entry.history[-1]
            since = _epoch(last.back_at) or _epoch(last.down_at) or _epoch(getattr(last, "requested_at", None))
        elif entry.pending:
            since = min(_epoch(p.since) or 0.0 for p in entry.pending) or None
        if state == "ok" and not items and not entry.history:
            continue
        rows.append(HostRow(host, state, items, since))
    return rows


class RebootScreen(AppKeysFirst):
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("R", "reboot", "Reboot"),  # short: the footer at 80 columns keeps + - r too
        Binding("plus", "batch(1)", "Batch+", key_display="+"),
        Binding("minus", "batch(-1)", "Batch-", key_display="-"),
        Binding("r", "refresh", "Refresh"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[str, tuple[str, str, float]] = {}  # host -> (state, note, since) while rebooting
        self.rows: list[HostRow] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="reboot-intro")
        yield DataTable(id="reboot-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="reboot-status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#reboot-table", DataTable).add_columns("host", "state", "elapsed", "waiting for a reboot")
        self.load()
        self.set_interval(1.0, self.redraw)  # elapsed time ticks

    def load(self) -> None:
        # the ledger as the last run left it (read off the UI thread by the worker that ran it)
        self.rows = rows_from_ledger(self.app.ledger)
        self.source = "the reboot ledger (every run log, so it survives a restart)"
        self.redraw()

    def redraw(self) -> None:
        table = self.query_one("#reboot-table", DataTable)
        cursor = table.cursor_row
        table.clear()
        now = time.time()
        for row in self.rows:
            state, note, since = self.live.get(row.host, (row.state, "", row.since or now))
            elapsed = elapsed_text(since, now)
            pending = "; ".join(row.pending) + (f" — {note}" if note else "")
            table.add_row(Text(printable(row.host)), Text(printable(state), style=STATE_STYLE.get(state, "")), elapsed,
                          Text(printable(pending)), key=row.host)
        if self.rows:
            table.move_cursor(row=min(cursor, len(self.rows) - 1))
        intro = Text.assemble(("Reboot tracker", "bold"), f" — from {self.source}. ",
                              f"Batch size {self.batch} (+/-): hosts rebooted at once, each entering maintenance "
                              "mode first.")
        self.query_one("#reboot-intro", Static).update(intro)
        status = self.query_one("#reboot-status", Static)
        if not self.rows:
            status.update(Text("Nothing waits for a reboot.", style="green"))
        else:
            pending = len(self.pending_hosts())
            status.update(Text(reboot_hint(pending, self.batch), style="bold" if pending else ""))

    def pending_hosts(self) -> list[str]:
        return [r.host for r in self.rows if r.state in ("pending", "failed") and any(
            not p.endswith("not yet seen current)") for p in r.pending)]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "reboot":
            return True if self.pending_hosts() and not self.app.busy else None
        return True

    @property
    def batch(self) -> int:
        return self.app.reboot_batch  # shared with "fix everything"

    def action_batch(self, step: int) -> None:
        self.app.reboot_batch = max(1, min(self.batch + step, max(1, len(self.rows))))
        self.redraw()

    def action_reboot(self) -> None:
        from roce_wizard.tui.readonly import refused  # noqa: PLC0415
        from roce_wizard.tui.screens.fix import ConfirmScreen  # noqa: PLC0415

        if refused(self.app, "reboot"):
            return
        from roce_wizard.engine.reboot_preview import preview  # noqa: PLC0415

        # what will happen, from the last look: the VMs vCenter shows on each host (powered off for the reboot,
        # on again after) and the hosts that did not answer (skipped: a reboot cannot be asked of them)
        ahead = preview(self.app.board.report, self.pending_hosts())
        hosts = ahead.hosts
        if not hosts:
            self.app.notify(printable("; ".join(ahead.lines())) or "nothing to reboot", title="reboot",
                            severity="warning", markup=False)
            return
        body = [Text(printable(line), style="yellow" if "skipped" in line else "") for line in ahead.lines()]

        def go(yes: bool | None) -> None:
            if yes:
                self.app.log_line(f"rebooting {', '.join(hosts)}, {self.batch} at a time", "bold")
                self.app.reboot_hosts(hosts, self.batch)

        self.app.push_screen(ConfirmScreen(f"Reboot {plural(len(hosts), 'host')}, {self.batch} at a time?", body,
                                           "Reboot (y)", "Cancel (n)"), go)

    def action_refresh(self) -> None:
        self.load()

    def action_back(self) -> None:
        self.app.pop_screen()

    def on_reboot_progress(self, message: msg.RebootProgress) -> None:
        previous = self.live.get(message.host)
        since = previous[2] if previous and previous[0] == message.state else time.time()
        self.live[message.host] = (message.state, message.note, since)
        if message.host not in {r.host for r in self.rows}:
            self.rows.append(HostRow(message.host, message.state))
        self.redraw()

    def on_reboots_finished(self, _: msg.RebootsFinished) -> None:
        self.live.clear()
        self.load()

    def on_board_changed(self, _: msg.BoardChanged) -> None:
        if not self.live:
            self.load()
        self.refresh_bindings()


def reboot_hint(pending: int, batch: int) -> str:
    """The tracker's status line under its table: what R does now."""
    if not pending:
        return "No host waits for a reboot: R has nothing to do."
    return f"R reboots the {plural(pending, 'pending host')}, {batch} at a time."
