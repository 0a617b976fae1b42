"""Every key of every screen, from the screens' own BINDINGS (so the help cannot drift)."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

# (where, the class whose BINDINGS are listed there, extra (key, does) rows for keys no binding names)
KeyGroups = list[tuple[str, Any, tuple[tuple[str, str], ...]]]


def key_table(groups: KeyGroups) -> Table:
    table = Table("where", "key", "does", box=None, pad_edge=False, show_header=True)
    for where, owner, extra in groups:
        seen = set()
        for b in owner.BINDINGS:
            binding = b if isinstance(b, Binding) else Binding(*b)
            if binding.action in seen or binding.action.startswith("goto"):
                continue
            seen.add(binding.action)
            table.add_row(where, binding.key_display or binding.key, binding.description)
            where = ""
        for key, does in extra:
            table.add_row(where, key, does)
            where = ""
    table.add_row("everywhere", "ctrl+p", "command palette: every action by name")
    return table


LAST_LINE = "End of the keys. Escape or ? closes this help."


class HelpScreen(ModalScreen[None]):
    """The keys of the groups it is given (the app names its screens: this module imports none of them)."""

    BINDINGS = [Binding("escape", "close", "Close"), Binding("question_mark", "close", "Close", key_display="?"),
                Binding("q", "close", "Close", show=False)]

    def __init__(self, groups: KeyGroups) -> None:
        super().__init__()
        self.groups = groups

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog", classes="dialog"):
            yield Static(Text("Keys", style="bold"), classes="dialog-title dialog-head")
            with VerticalScroll(id="help-body", classes="dialog-body"):
                yield Static(key_table(self.groups))
                yield Static(Text("\nCells: ✓ pass  ⟳ passes, waits for a reboot (not in effect yet)  ! warning  ✗ fail  "
                                  "? could not run  - skipped (blocked or not applicable)  · not judged here  … "
                                  "running. Rail: ✓ ⟳ ! ✗ ? count cells; \"blocked\" when every judged cell of a stage "
                                  "is blocked, \"nothing judged\" when it has no result; … while a check runs (the last "
                                  "counts stay until the new ones are final). The mouse works too: click a stage, a "
                                  "cell, a button.", style="dim"))
                yield Static(Text(LAST_LINE, style="dim"), id="help-end")
            yield Static(Text("↑↓ PgUp PgDn Home End scroll · Escape closes", style="dim"), classes="dialog-foot")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#help-body", VerticalScroll).focus()  # the arrow keys scroll the keys at once

    def action_close(self) -> None:
        self.dismiss(None)
