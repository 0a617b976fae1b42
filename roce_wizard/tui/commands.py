"""Command palette (ctrl+p): every action of the wizard by name, and every place in the grid: a check by
its code or slug (its column, in its stage) and a host by name (its row)."""

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
            out += _places(app.board, main)
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


def _places(board, main) -> list[tuple[str, str, object]]:  # noqa: ANN001
    """A palette entry per check (code and slug: its column) and per host (its row) of the grid."""
    from roce_wizard.textsafe import printable  # noqa: PLC0415

    out: list[tuple[str, str, object]] = []
    stages = board.stages()
    for stage in stages:
        for code in board.columns(stage):
            check = board.checks.get(code)
            title = f" — {check.meta.title}" if check is not None and check.meta.title else ""
            slug = check.meta.slug if check is not None else ""
            out.append((f"Check {code} {slug}".rstrip(), printable(f"{stage.value} stage{title}"),
                        partial(jump, main, stage, code=code)))
    hosts: dict[str, object] = {}
    for stage in stages:
        for row in board.rows(stage):
            hosts.setdefault(row, stage)
    for target in board.targets:  # a target no grid names yet (nothing judged about it) is still found
        hosts.setdefault(target.name, None)
    for name, stage in hosts.items():
        out.append((printable(f"Host {name}"), "its row in the grid", partial(jump, main, stage, host=name)))
    return out


def jump(main, stage, code: str | None = None, host: str | None = None) -> None:  # noqa: ANN001
    """Show `stage` (a host: the stage shown if the host has a row there, else `stage`) and put the grid's cursor
    on `code`'s column and/or `host`'s row."""
    from textual.widgets import DataTable, OptionList  # noqa: PLC0415

    board = main.app.board
    if host is not None and host in board.rows(main.stage):
        stage = main.stage
    if stage is None:
        main.app.notify(f"{host}: nothing judged about it yet", title="palette")
        return
    stages = board.stages()
    if stage is not main.stage:
        main.stage = stage
        main.query_one("#rail", OptionList).highlighted = stages.index(stage)
        main.draw_grid()
    grid = main.query_one("#grid", DataTable)
    rows, columns = board.rows(stage), board.columns(stage)
    where = grid.cursor_coordinate
    row = rows.index(host) if host in rows else min(where.row, max(len(rows) - 1, 0))
    column = columns.index(code) + 1 if code in columns else max(where.column, 1 if columns else 0)
    grid.move_cursor(row=row, column=column)
    grid.focus()
    main.draw_detail()
