"""The main screen: stage rail with live counts, host × check grid, detail pane, log, keys."""

from __future__ import annotations

import io

from rich.console import Console, Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Footer, Header, OptionList, RichLog, Static
from textual.widgets.option_list import Option

from roce_wizard.engine.fixes import Planned
from roce_wizard.model import Stage
from roce_wizard.records.report import PENDING_STYLE, PENDING_SYMBOL, STYLE
from roce_wizard.records.wording import plural
from roce_wizard.textsafe import printable
from roce_wizard.tui import messages as msg
from roce_wizard.tui.board import NOT_APPLICABLE, RUNNING
from roce_wizard.tui.cellwords import nothing_to_fix, rail_text, title_counts
from roce_wizard.tui.keys import AppKeysFirst
from roce_wizard.tui.readonly import BANNER, is_read_only
from roce_wizard.tui.widgets.detail import cell_detail, fix_commands
from roce_wizard.tui.widgets.incast_plot import FabricSummary, fabric_sentences, show_incast

WIDE = 120  # columns from which the detail pane sits beside the grid instead of below it
SCOPES = {"fix_cell": "this cell", "fix_host": "this host", "fix_check": "this check", "fix_stage": "the whole stage"}


class MainScreen(AppKeysFirst):
    # short descriptions: after the app's ? q b e (tui/keys.py) the footer shows these in this order
    BINDINGS = [
        Binding("a", "fix_all", "Fix all"),  # first: the day-0 action (fix everything, rebooting as needed)
        Binding("f", "fix_cell", "Fix cell"),
        Binding("h", "fix_host", "Fix host"),
        Binding("c", "fix_check", "Fix check"),
        Binding("s", "fix_stage", "Fix stage"),
        Binding("y", "copy", "Copy fix"),
        Binding("r", "rerun", "Re-check"),
        Binding("right_square_bracket", "stage(1)", "Next stage", key_display="]"),
        Binding("left_square_bracket", "stage(-1)", "Prev stage", key_display="[", show=False),
        # one key per stage the rail can show (check_action hides those past the playbook's stages)
        *[Binding(str(i), f"goto({i - 1})", f"Stage {i}", show=False) for i in range(1, len(Stage) + 1)],
    ]

    def __init__(self) -> None:
        super().__init__()
        self.stage = Stage.ESXI
        self.shape: tuple[Stage, tuple[str, ...], tuple[str, ...]] | None = None
        self.logged = 0
        self.detail: Group = Group()
        self.detail_of: tuple[Stage, str | None, str | None] | None = None  # the cell the detail pane shows
        self.settled: dict[Stage, dict] = {}  # the last final counts per stage (stage_counts)

    def compose(self) -> ComposeResult:
        yield Header()
        if is_read_only(self.app):
            yield Static(Text(BANNER, style="bold"), id="read-only")
        with Horizontal(id="body"):
            yield OptionList(id="rail")
            with Vertical(id="center"):
                yield Static(id="grid-title")
                yield FabricSummary()  # the validate stage's sentence per node pair, above the grid
                with Horizontal(id="panes"):
                    yield DataTable(id="grid", cursor_type="cell")
                    with VerticalScroll(id="detail-scroll"):
                        yield Static(id="detail")
        # min_width 1: lines wrap at the pane's width, so the log never scrolls sideways (its default 78
        # made an 80-column log 2 columns too narrow and the arrows cut the first character)
        yield RichLog(id="log", wrap=True, markup=False, auto_scroll=True, min_width=1)
        yield Footer()

    def on_mount(self) -> None:
        stages = self.app.board.stages()
        if self.stage not in stages:
            self.stage = stages[0]
        rail = self.query_one("#rail", OptionList)
        rail.add_options([Option(self.rail_prompt(s), id=s.value) for s in stages])
        rail.highlighted = stages.index(self.stage)
        grid = self.query_one("#grid", DataTable)
        grid.fixed_columns = 1  # the host names stay in view while the grid scrolls sideways
        grid.focus()
        self.set_class(self.app.size.width >= WIDE, "wide")
        self.redraw()

    def on_resize(self, event) -> None:  # noqa: ANN001
        self.set_class(event.size.width >= WIDE, "wide")

    # ------------------------------------------------------------------ drawing

    def stage_counts(self, stage: Stage) -> tuple[dict, bool]:
        """(counts, running): while a look is under way the rail and the title keep the last final counts
        (cells fill in target by target, provisional before root causes are resolved: counts would flash)."""
        board = self.app.board
        running = bool(board.running)
        if not running or stage not in self.settled:
            self.settled[stage] = board.counts(stage)
        return self.settled[stage], running

    def rail_prompt(self, stage: Stage) -> Text:
        counts, running = self.stage_counts(stage)
        line = Text(stage.value, style="bold")
        line.append("\n ")
        line.append_text(rail_text(counts, running))
        return line

    def on_board_changed(self, _: msg.BoardChanged) -> None:
        self.redraw()

    def redraw(self) -> None:
        board = self.app.board
        rail = self.query_one("#rail", OptionList)
        for i, stage in enumerate(board.stages()):
            rail.replace_option_prompt_at_index(i, self.rail_prompt(stage))
        self.draw_grid()
        self.draw_detail()
        log = self.query_one("#log", RichLog)
        for line in self.app.log_lines[self.logged:]:
            log.write(line)
        self.logged = len(self.app.log_lines)
        self.refresh_bindings()

    def draw_grid(self) -> None:
        board = self.app.board
        grid = self.query_one("#grid", DataTable)
        rows, columns = tuple(board.rows(self.stage)), tuple(board.columns(self.stage))
        shape = (self.stage, rows, columns)
        if shape != self.shape:
            where = grid.cursor_coordinate
            grid.clear(columns=True)
            grid.add_column("host", key="host")
            for code in columns:
                grid.add_column(code.removeprefix("RW"), key=code)
            for row in rows:
                grid.add_row(*self.row_cells(row, columns), key=row)
            self.shape = shape
            if rows:
                grid.move_cursor(row=min(where.row, len(rows) - 1), column=min(max(where.column, 1), len(columns)))
        else:
            for row in rows:
                for code, cell in zip(columns, self.row_cells(row, columns)[1:], strict=True):
                    grid.update_cell(row, code, cell)
        counts, _ = self.stage_counts(self.stage)
        title = Text.assemble((f"{self.stage.value.upper()}", "bold"),
                              f"  {len(rows)} hosts × {len(columns)} checks   ")
        title.append_text(title_counts(counts))
        if self.app.busy:
            title.append(f"  [{self.app.busy} running]", style="bold")
        self.query_one("#grid-title", Static).update(title)
        fabric = fabric_sentences(board.report) if self.stage is Stage.VALIDATE else {}
        self.query_one(FabricSummary).show(list(fabric.values()), self.app.size.width >= WIDE)

    def row_cells(self, row: str, columns: tuple[str, ...]) -> list[Text]:
        board = self.app.board
        progress = board.progress.get(row)
        name_style = "red" if progress is not None and progress.state.value == "unreachable" else "bold"
        cells = [Text(printable(row), style=name_style)]
        for code in columns:
            text = board.cell_text(row, code)
            status = board.cell_status(row, code)
            style = ("dim" if text in (RUNNING, NOT_APPLICABLE) or status is None else
                     PENDING_STYLE if text == PENDING_SYMBOL else STYLE[status])
            cells.append(Text(f" {text} ", style=style, justify="center"))
        return cells

    def selected(self) -> tuple[str | None, str | None]:
        """(row, check) under the cursor; the host column selects the row alone."""
        grid = self.query_one("#grid", DataTable)
        if self.shape is None or not self.shape[1]:
            return None, None
        _, rows, columns = self.shape
        coord = grid.cursor_coordinate
        row = rows[min(coord.row, len(rows) - 1)]
        code = columns[coord.column - 1] if 1 <= coord.column <= len(columns) else None
        return row, code

    def draw_detail(self) -> None:
        row, code = self.selected()
        self.detail = cell_detail(self.app.board, self.stage, row, code)
        self.query_one("#detail", Static).update(self.detail)
        grid = self.query_one("#grid", DataTable)
        grid.border_subtitle = (f"{code} {self.app.board.checks[code].meta.slug}" if code in self.app.board.checks
                                else row or "")
        if self.detail_of != (self.stage, row, code):  # another cell: its verdict first, not the old scroll position
            self.detail_of = (self.stage, row, code)
            self.query_one("#detail-scroll", VerticalScroll).scroll_home(animate=False, immediate=True)
        findings = self.app.board.cell_findings(row, code) if row and code else []
        sentences = fabric_sentences(self.app.board.report) if self.stage is Stage.VALIDATE and findings else {}
        show_incast(self.query_one("#detail-scroll"), findings, sentences)

    def detail_text(self) -> str:
        """The detail pane as plain text (tests, screen readers of the log)."""
        console = Console(width=200, file=io.StringIO(), record=True)
        console.print(self.detail)
        return console.export_text()

    def on_data_table_cell_highlighted(self, _: DataTable.CellHighlighted) -> None:
        self.draw_detail()
        self.refresh_bindings()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        stage = Stage(event.option.id)
        if stage is not self.stage:
            self.stage = stage
            self.draw_grid()
            self.draw_detail()
            self.refresh_bindings()

    # ------------------------------------------------------------------ navigation

    def action_goto(self, index: int) -> None:
        stages = self.app.board.stages()
        if 0 <= index < len(stages):
            self.query_one("#rail", OptionList).highlighted = index
            self.query_one("#grid", DataTable).focus()  # the stage keys lead back to the grid

    def action_copy(self) -> None:
        """The selected cell's fix commands, exactly as the preview shows them, to the terminal's clipboard."""
        row, code = self.selected()
        commands = fix_commands(self.app.board, self.stage, row, code) if row and code else []
        if not commands:
            self.notify(f"nothing to copy: {code or row or 'no cell'} has no fix commands", title="copy")
            return
        self.app.copy_to_clipboard("\n".join(commands) + "\n")
        self.notify(f"copied {plural(len(commands), 'line')} of the fix for {code} on {row} to the clipboard",
                    title="copy", markup=False)

    def action_stage(self, step: int) -> None:
        stages = self.app.board.stages()
        self.action_goto((stages.index(self.stage) + step) % len(stages))

    def action_rerun(self) -> None:
        self.app.run_engine("checks")

    # ------------------------------------------------------------------ fixes

    def scope(self, action: str) -> list[Planned]:
        row, code = self.selected()
        board = self.app.board
        if action == "fix_cell":
            return board.plans_in(self.stage, row, code) if row and code else []
        if action == "fix_host":
            return board.plans_in(self.stage, row) if row else []
        if action == "fix_check":
            return board.plans_in(self.stage, code=code) if code else []
        return board.plans_in(self.stage)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "fix_cell":  # always answers: a cell with nothing to run says why (action_fix_cell)
            return None if self.app.busy else True
        if action in SCOPES:
            return None if self.app.busy or not any(p.allowed for p in self.scope(action)) else True
        if action == "rerun":
            return None if self.app.busy else True
        if action == "fix_all":
            return None if self.app.busy or not any(p.allowed for p in self.app.board.plans) else True
        if action == "goto":
            return len(self.app.board.stages()) > int(parameters[0])
        return True

    def open_fix(self, action: str) -> None:
        from roce_wizard.tui.screens.fix import start_fix_flow  # noqa: PLC0415

        planned = self.scope(action)
        row, code = self.selected()
        what = {"fix_cell": f"{code} on {row}", "fix_host": f"{row} ({self.stage.value})",
                "fix_check": f"{code} on every host", "fix_stage": f"the {self.stage.value} stage"}[action]
        start_fix_flow(self.app, planned, what)

    def action_fix_cell(self) -> None:
        row, code = self.selected()
        why = nothing_to_fix(self.app.board, self.stage, row, code)
        if why is not None:  # no silent no-op: say why nothing runs here
            self.app.notify(printable(why), title="fix", markup=False)
            return
        self.open_fix("fix_cell")

    def action_fix_host(self) -> None:
        self.open_fix("fix_host")

    def action_fix_check(self) -> None:
        self.open_fix("fix_check")

    def action_fix_stage(self) -> None:
        self.open_fix("fix_stage")

    def action_fix_all(self) -> None:
        """Every stage's fixes and the reboots they need, round after round (fixes.fix_until_ready)."""
        from roce_wizard.tui.screens.fix import start_fix_all  # noqa: PLC0415

        start_fix_all(self.app, list(self.app.board.plans))
