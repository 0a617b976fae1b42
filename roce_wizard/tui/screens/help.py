"""Every key of every screen, from the screens' own BINDINGS (so the help cannot drift)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


def key_table() -> Table:
    from roce_wizard.tui.app import WizardApp  # noqa: PLC0415
    from roce_wizard.tui.screens.fix import FixPreviewScreen, FixProgressScreen  # noqa: PLC0415
    from roce_wizard.tui.screens.main import MainScreen  # noqa: PLC0415
    from roce_wizard.tui.screens.reboots import RebootScreen  # noqa: PLC0415
    from roce_wizard.tui.screens.welcome import WelcomeScreen  # noqa: PLC0415

    table = Table("where", "key", "does", box=None, pad_edge=False, show_header=True)
    groups = [("everywhere", WizardApp), ("welcome", WelcomeScreen), ("main", MainScreen),
              ("fix preview", FixPreviewScreen), ("fix progress", FixProgressScreen), ("reboots", RebootScreen)]
    for where, owner in groups:
        seen = set()
        for b in owner.BINDINGS:
            binding = b if isinstance(b, Binding) else Binding(*b)
            if binding.action in seen or binding.action.startswith("goto"):
                continue
            seen.add(binding.action)
            table.add_row(where, binding.key_display or binding.key, binding.description)
            where = ""
        if owner is MainScreen:
            table.add_row("", "1-8", "jump to a stage of the rail")
            table.add_row("", "arrows", "move in the grid; Tab moves between rail, grid, detail and log")
    table.add_row("everywhere", "ctrl+p", "command palette: every action by name")
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape", "close", "Close"), Binding("question_mark", "close", "Close", key_display="?"),
                Binding("q", "close", "Close", show=False)]

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog", classes="dialog"):
            yield Static(Text("Keys", style="bold"), classes="dialog-title")
            with VerticalScroll():
                yield Static(key_table())
                yield Static(Text("\nCells: ✓ pass  ! warning  ✗ fail  ? could not run  - skipped (blocked or not "
                                  "applicable)  · not judged here  … running. The mouse works too: click a stage, a "
                                  "cell, a button.", style="dim"))
            yield Static(Text("Escape closes", style="dim"))

    def action_close(self) -> None:
        self.dismiss(None)
