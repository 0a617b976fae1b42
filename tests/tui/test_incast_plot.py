"""The validate stage of the wizard on the recorded sample cluster (replay): the selected RW605 cell shows the
incast plot (one bar per step, each step's counter deltas) and the stage shows the fabric sentence per node pair
above the grid; snapshots at 80x24 and 160x48."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from roce_wizard.model import Stage
from roce_wizard.tui.app import make_app
from roce_wizard.tui.widgets.incast_plot import FabricSummary, IncastPlot

from .conftest import idle, until

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample-cluster"
LABELS = ["pauses prio 3", "other prio", "ECN marked", "CNP sent", "CNP handled", "drops"]


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))


def sample_app():
    return make_app(SAMPLE / "inventory.yaml", replay=SAMPLE / "recordings.yaml", subtitle="sample cluster")


async def select(pilot, app, row: str, code: str) -> None:
    """After the first full run: the validate stage, the cursor on (row, code)."""
    await until(pilot, lambda: app.preflight is not None and idle(app)(), what="the preflight")
    await pilot.press("enter")
    await until(pilot, lambda: app.board.report is not None and len(app.board.report.checks) > 1 and idle(app)(),
                what="the first full run")
    await pilot.press(str(app.board.stages().index(Stage.VALIDATE) + 1))
    await until(pilot, lambda: app.screen.stage is Stage.VALIDATE and app.screen.shape[0] is Stage.VALIDATE,
                what="the validate stage")
    await select_cell(pilot, app, row, code)


async def test_rw605_cell_mounts_the_incast_plot_and_the_stage_shows_each_pairs_fabric_sentence():
    app = sample_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await select(pilot, app, "compute-02", "RW605")
        (plot,) = app.screen.query(IncastPlot)
        assert plot.finding.check == "RW605" and plot.finding.subject == "compute-01<->compute-02"
        assert len(plot.points) == 6  # streams 1, 2, 4 at 64 KiB and 1 MiB, as recorded
        assert [(p["size"], p["streams"]) for p in plot.points] == [(65536, 1), (65536, 2), (65536, 4),
                                                                    (1048576, 1), (1048576, 2), (1048576, 4)]
        assert plot.labels == LABELS
        assert plot.sentence is not None and plot.sentence.startswith("compute-01<->compute-02 could not be proven")
        assert "ECN marked +40000" in plot.sentence
        fabric = app.screen.query_one(FabricSummary)
        assert fabric.display and [s.split(" ", 1)[0] for s in fabric.sentences] == [
            "compute-01<->compute-02", "compute-03<->compute-04"]
        # another cell: the plot goes; another stage: the sentences go
        await select_cell(pilot, app, "compute-02", "RW601")
        assert not app.screen.query(IncastPlot)
        await pilot.press("1")
        await until(pilot, lambda: app.screen.stage is not Stage.VALIDATE, what="another stage")
        await pilot.pause(0.1)
        assert not fabric.display and fabric.sentences == []


async def select_cell(pilot, app, row: str, code: str) -> None:
    _, rows, columns = app.screen.shape
    app.screen.query_one("#grid", DataTable).move_cursor(row=rows.index(row), column=columns.index(code) + 1)
    await pilot.pause(0.2)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_incast_plot_snapshot(snap_compare, size):
    app = sample_app()

    async def run_before(pilot) -> None:
        await select(pilot, app, "compute-02", "RW605")

    assert snap_compare(app, run_before=run_before, terminal_size=size)
