"""The main screen: stage rail with live counts, host × check grid, detail pane, log, keys."""

from __future__ import annotations

import io

from rich.console import Console, Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, OptionList, RichLog, Static
from textual.widgets.option_list import Option

from roce_wizard.engine.fixes import Planned
from roce_wizard.model import Stage, Status
from roce_wizard.records.report import STYLE
from roce_wizard.textsafe import printable
from roce_wizard.tui import messages as msg
from roce_wizard.tui.board import NOT_APPLICABLE, RUNNING
from roce_wizard.tui.readonly import BANNER, is_read_only
from roce_wizard.tui.widgets.detail import cell_detail
from roce_wizard.tui.widgets.incast_plot import FabricSummary, fabric_sentences, show_incast

WIDE = 120  # columns from which the detail pane sits beside the grid instead of below it
SCOPES = {"fix_cell": "this cell", "fix_host": "this host", "fix_check": "this check", "fix_stage": "the whole stage"}


class MainScreen(Screen):
    BINDINGS = [
        Binding("a", "fix_all", "Fix all+reboot"),  # first: the day-0 action, shown even at 80 columns
        Binding("f", "fix_cell", "Fix cell"),
        Binding("h", "fix_host", "Fix host"),
        Binding("c", "fix_check", "Fix check"),
        Binding("s", "fix_stage", "Fix stage"),
        Binding("r", "rerun", "Re-check"),
        Binding("right_square_bracket", "stage(1)", "Next stage", key_display="]"),
        Binding("left_square_bracket", "stage(-1)", "Prev stage", key_display="[", show=False),
        *[Binding(str(i), f"goto({i - 1})", f"Stage {i}", show=False) for i in range(1, 9)],
    ]

    def __init__(self) -> None:
        super().__init__()
        self.stage = Stage.ESXI
        self.shape: tuple[Stage, tuple[str, ...], tuple[str, ...]] | None = None
        self.logged = 0
        self.detail: Group = Group()

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
        yield RichLog(id="log", wrap=True, markup=False, auto_scroll=True)
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

    def rail_prompt(self, stage: Stage) -> Text:
        counts = self.app.board.counts(stage)
        line = Text(stage.value, style="bold")
        line.append("\n ")
        for status in (Status.PASS, Status.WARN, Status.FAIL, Status.ERROR):
            if counts[status] or status in (Status.PASS, Status.FAIL):
                line.append(f"{status.symbol}{counts[status]} ", style=STYLE[status])
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
        counts = board.counts(self.stage)
        title = Text.assemble((f"{self.stage.value.upper()}", "bold"),
                              f"  {len(rows)} hosts × {len(columns)} checks   ")
        for status in Status:
            title.append(f"{status.symbol} {status.value} {counts[status]}  ", style=STYLE[status])
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
            style = "dim" if text in (RUNNING, NOT_APPLICABLE) or status is None else STYLE[status]
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
        if action in SCOPES:
            return None if self.app.busy or not any(p.allowed for p in self.scope(action)) else True
        if action == "rerun":
            return None if self.app.busy else True
        if action == "fix_all":
            return None if self.app.busy or not any(p.allowed for p in self.app.board.plans) else True
        return True

    def open_fix(self, action: str) -> None:
        from roce_wizard.tui.screens.fix import start_fix_flow  # noqa: PLC0415

        planned = self.scope(action)
        row, code = self.selected()
        what = {"fix_cell": f"{code} on {row}", "fix_host": f"{row} ({self.stage.value})",
                "fix_check": f"{code} on every host", "fix_stage": f"the {self.stage.value} stage"}[action]
        start_fix_flow(self.app, planned, what)

    def action_fix_cell(self) -> None:
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
