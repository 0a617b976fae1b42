"""Command palette (ctrl+p): every action of the wizard by name."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

# (name, help, where the action lives: "app" or "main", action string)
COMMANDS = [
    ("Run all checks", "Re-check every target", "main", "rerun"),
    ("Fix selected cell", "Preview the fix of the highlighted cell", "main", "fix_cell"),
    ("Fix host", "Preview the fixes of the highlighted host in this stage", "main", "fix_host"),
    ("Fix check", "Preview the fixes of the highlighted check on every host", "main", "fix_check"),
    ("Fix stage", "Preview every fix of the stage shown", "main", "fix_stage"),
    ("Fix everything, rebooting as needed",
     ("Every stage's fixes, then the reboots they need, and again until nothing is left (as fix --reboot)"),
     "main", "fix_all"),
    ("Next stage", "Show the next stage of the rail", "main", "stage(1)"),
    ("Previous stage", "Show the previous stage of the rail", "main", "stage(-1)"),
    ("Reboot tracker", "Hosts waiting for a reboot, and rebooting them in batches", "app", "reboots"),
    ("Export", "The support bundle, or the run log's directory", "app", "export"),
    ("Help", "Every key", "app", "help"),
    ("Quit", "Leave the wizard (the demo lab stops too)", "app", "quit"),
]


class WizardCommands(Provider):
    def commands(self) -> list[tuple[str, str, object]]:
        from roce_wizard.tui.screens.main import MainScreen  # noqa: PLC0415

        app = self.app
        main = next((s for s in app.screen_stack if isinstance(s, MainScreen)), None)
        out = []
        for name, help_text, where, action in COMMANDS:
            if where == "main" and main is None:
                continue
            owner = main if where == "main" else app
            out.append((name, help_text, partial(owner.run_action, action)))
        if main is not None:
            for i, stage in enumerate(app.board.stages()):
                out.append((f"Stage: {stage.value}", f"Show the {stage.value} grid", partial(main.run_action, f"goto({i})")))
        return out

    async def discover(self) -> Hits:
        for name, help_text, callback in self.commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self.commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
