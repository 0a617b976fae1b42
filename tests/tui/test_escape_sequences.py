"""The wizard shows tool text without terminal control sequences (issue 11, item 7): a replayed host whose
mlxconfig prints an OSC title change and a CSI screen clear in its device name, and a target whose
connection error carries the same; the welcome table, the log pane and the detail pane show neither."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from roce_wizard.model import Stage
from roce_wizard.tui.app import make_app
from roce_wizard.tui.screens.main import MainScreen
from roce_wizard.tui.screens.welcome import WelcomeScreen
from roce_wizard.tui.widgets.detail import cell_detail
from tests.unit.test_textsafe import hostile_cluster

from .conftest import idle, until


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))


def plain(renderable) -> str:  # noqa: ANN001
    out = io.StringIO()
    Console(file=out, width=200, color_system=None, force_terminal=False).print(renderable)
    return out.getvalue()


async def test_welcome_log_and_detail_show_no_escape(tmp_path):
    inventory, rec = hostile_cluster(tmp_path)
    app = make_app(inventory, replay=rec, subtitle="hostile")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.preflight is not None and idle(app)(), what="the preflight")
        assert isinstance(app.screen, WelcomeScreen)
        table = app.screen.query_one("#targets")
        # the screen redraws its table from the app's message a moment after the app has the preflight
        await until(pilot, lambda: plain(table.get_row("esx-2")[3]).strip() != "-", timeout=10, what="the table")
        cells = [plain(table.get_row(key)[3]) for key in ("esx-1", "esx-2")]
        assert "refused" in cells[1] and not any("\x1b" in c or "\x07" in c for c in cells), cells
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, MainScreen) and app.board.report is not None
                    and len(app.board.report.checks) > 1 and idle(app)(), what="the first full run")
        log = [line.plain for line in app.log_lines]
        assert any("esx-2: unreachable" in line and "refused" in line for line in log), log
        assert not any("\x1b" in line or "\x07" in line for line in log), log
        text = plain(cell_detail(app.board, Stage.ESXI, "esx-1", "RW207"))
        assert "mt4119_pciconf1" in text and "\x1b" not in text and "\x07" not in text
        await pilot.press("q")
