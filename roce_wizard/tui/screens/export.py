"""The export dialog (e): the support bundle of the last run, optionally anonymized (as `export --anonymize`)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Static

ANONYMIZE_LABEL = "Anonymize (export --anonymize): hostnames, IPs, MACs, GUIDs and serials become pseudonyms"


class ExportScreen(ModalScreen[bool | None]):
    """Export or not; the answer is whether to anonymize (None: cancelled)."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("a", "toggle_anonymize", "Anonymize"),
    ]

    def __init__(self, run_dir_name: str) -> None:
        super().__init__()
        self.run_dir_name = run_dir_name

    def compose(self) -> ComposeResult:
        with Vertical(id="export-dialog", classes="dialog"):
            yield Static(Text("Export a support bundle", style="bold"), classes="dialog-title")
            with VerticalScroll():
                yield Static(Text(f"Run {self.run_dir_name}: summary, results, events, raw outputs, versions, the "
                                  "reboot ledger and the inventory, written here as a .tar.gz. Secrets are removed "
                                  "either way."))
                yield Checkbox(ANONYMIZE_LABEL, id="anonymize")
            with Horizontal(classes="buttons"):
                yield Button("Export", id="export", variant="primary")
                yield Button("Cancel (Esc)", id="cancel", variant="default")

    def on_mount(self) -> None:
        self.query_one("#export", Button).focus()

    @property
    def anonymize(self) -> bool:
        return self.query_one("#anonymize", Checkbox).value

    def action_toggle_anonymize(self) -> None:
        self.query_one("#anonymize", Checkbox).toggle()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(self.anonymize if event.button.id == "export" else None)
