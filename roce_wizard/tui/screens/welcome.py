"""First screen: what the inventory holds and whether each target answers (RW001), before any
other check runs."""

from __future__ import annotations

from collections import Counter

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static

from roce_wizard.model import Status
from roce_wizard.records.report import STYLE
from roce_wizard.textsafe import printable
from roce_wizard.tui import messages as msg
from roce_wizard.tui.board import Progress
from roce_wizard.tui.keys import AppKeysFirst


class WelcomeScreen(AppKeysFirst):
    BINDINGS = [
        Binding("enter", "continue", "Run all checks", priority=True),
        Binding("r", "retry", "Re-check"),  # reachability (RW001): short for the 80-column footer
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="welcome-intro")
        yield DataTable(id="targets", cursor_type="row", zebra_stripes=True)
        yield Static(id="welcome-reason")  # the highlighted target's whole answer, wrapped (the cell is cut)
        yield Static(id="welcome-status")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#targets", DataTable)
        for column in ("target", "kind", "address", "reachable"):
            table.add_column(column, key=column)
        self.redraw()

    def on_board_changed(self, _: msg.BoardChanged) -> None:
        self.redraw()

    def redraw(self) -> None:
        app = self.app
        setup = app.connection.setup
        kinds = Counter(t.kind.value for t in setup.targets)
        intro = Text.assemble(("Welcome to roce-wizard. ", "bold"),
                              f"Inventory {app.connection.inventory.name}: {len(setup.targets)} targets (",
                              ", ".join(f"{n} {k}" for k, n in kinds.items()),
                              f"), playbook {setup.playbook}, {len(setup.chosen)} checks.\n"
                              "First, can every target be reached (RW001)? Nothing else runs yet.")
        self.query_one("#welcome-intro", Static).update(intro)
        table = self.query_one("#targets", DataTable)
        cursor = table.cursor_row
        table.clear()
        preflight = app.preflight
        reached = {f.target: f for f in preflight.findings if f.check == "RW001"} if preflight else {}
        for t in setup.targets:
            address = t.address + (f":{t.port}" if t.port and not app.connection.replay else "")
            table.add_row(t.name, t.kind.value, address, self.reach_cell(t.name, reached.get(t.name)), key=t.name)
        if setup.targets:
            table.move_cursor(row=min(cursor, len(setup.targets) - 1))
        # a DataTable drawn between add_row and its idle-time width update keeps lines of the old widths in its
        # render caches (Textual 8): drop them once the widths are in
        table.call_after_refresh(table.notify_style_update)
        self.show_reason()
        status = self.query_one("#welcome-status", Static)
        if app.busy == "preflight":
            status.update(Text("Checking reachability…", style="bold"))
        elif preflight is not None:
            bad = [f for f in reached.values() if f.status is not Status.PASS]
            line = Text(f"{len(reached) - len(bad)} of {len(reached)} targets reachable. ",
                        style="bold green" if not bad else "bold yellow")
            line.append("Enter runs every check" + (" (unreachable targets show as such; the rest go on)." if bad
                                                    else "."), style="")
            status.update(line)

    def show_reason(self) -> None:
        table = self.query_one("#targets", DataTable)
        targets = self.app.connection.setup.targets
        preflight = self.app.preflight
        if not targets or preflight is None:
            self.query_one("#welcome-reason", Static).update("")
            return
        name = targets[min(table.cursor_row, len(targets) - 1)].name
        finding = next((f for f in preflight.findings if f.check == "RW001" and f.target == name), None)
        reason = Text(f"{name}: ", style="bold")
        if finding is not None:
            reason.append(f"{finding.status.symbol} {printable(finding.summary)}", style=STYLE[finding.status])
        self.query_one("#welcome-reason", Static).update(reason)

    def on_data_table_row_highlighted(self, _: DataTable.RowHighlighted) -> None:
        self.show_reason()

    def reach_cell(self, name: str, finding) -> Text:  # noqa: ANN001
        progress = self.app.board.progress.get(name)
        if self.app.busy == "preflight" and progress is not None and progress.state is Progress.WAITING:
            return Text("… connecting", style="dim")
        if finding is None:
            return Text("-", style="dim")
        summary = printable(finding.summary)
        summary = summary if len(summary) < 70 else summary[:67] + "…"
        return Text(f"{finding.status.symbol} {summary}", style=STYLE[finding.status])

    def action_continue(self) -> None:
        from roce_wizard.tui.screens.main import MainScreen  # noqa: PLC0415

        self.app.switch_screen(MainScreen())
        if self.app.busy is None:
            self.app.run_engine("checks")

    def action_retry(self) -> None:
        self.app.run_engine("preflight")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("retry", "continue") and self.app.busy is not None:
            return None
        return True
