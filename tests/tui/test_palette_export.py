"""The command palette finds a check (code or slug) and a host, and jumps there; the export dialog offers
--anonymize. On the recorded sample cluster (read-only replay: no lab needed).

Before: the palette listed only actions and stages, and `e` wrote a plain bundle at once."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest
from textual.command import CommandPalette
from textual.widgets import Checkbox, DataTable

from roce_wizard.tui.app import make_app
from roce_wizard.tui.screens.main import MainScreen

from .conftest import idle, until

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample-cluster"


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)  # the export writes here


async def started(pilot, app) -> None:  # noqa: ANN001
    await until(pilot, lambda: app.preflight is not None and idle(app)(), what="the preflight")
    await pilot.press("enter")
    await until(pilot, lambda: app.board.report is not None and len(app.board.report.checks) > 1
                and idle(app)(), what="the first full run")
    assert isinstance(app.screen, MainScreen)


async def palette(pilot, app, query: str) -> None:  # noqa: ANN001
    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
    await pilot.press(*query)
    # the first hit is highlighted once the providers answered
    await until(pilot, lambda: app.screen.query_one("CommandList").highlighted is not None, timeout=10,
                what=f"a hit for {query!r}")
    await pilot.pause(0.3)  # hits arrive in batches: let the search settle on its best
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, MainScreen), what="back to the grid")
    await pilot.pause()


def cursor(main: MainScreen) -> tuple[str, str | None, str | None]:
    return main.stage.value, main.selected()[1], main.selected()[0]


@pytest.mark.slow
async def test_the_palette_finds_a_check_code_a_slug_and_a_host():
    app = make_app(SAMPLE / "inventory.yaml", replay=SAMPLE / "recordings.yaml")
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot, app)
        main = app.screen
        await pilot.press("1")  # preflight shown: the check lives elsewhere
        await until(pilot, lambda: main.stage.value == "preflight", what="the preflight stage")

        await palette(pilot, app, "RW209")
        stage, code, _ = cursor(main)
        assert (stage, code) == ("esxi", "RW209")
        assert app.screen.query_one("#grid", DataTable).has_focus

        await palette(pilot, app, "num-vfs-covers")  # the slug of RW208
        assert cursor(main)[:2] == ("esxi", "RW208")

        await palette(pilot, app, "esx-03")  # a host: its row in the stage shown, the column kept
        assert cursor(main) == ("esxi", "RW208", "esx-03")

        await palette(pilot, app, "compute-04")  # a guest has no esxi row: the first stage that has it
        stage, _, row = cursor(main)
        assert row == "compute-04" and "compute-04" in app.board.rows(main.stage)


@pytest.mark.slow
async def test_the_export_dialog_anonymizes_when_asked(tmp_path):
    app = make_app(SAMPLE / "inventory.yaml", replay=SAMPLE / "recordings.yaml")
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot, app)
        await pilot.press("e")
        await until(pilot, lambda: bool(app.screen.query("#anonymize")), what="the export dialog")
        assert "--anonymize" in str(app.screen.query_one("#anonymize", Checkbox).label)
        assert app.screen.query_one("#export").region.bottom <= 24  # its buttons on screen at 80×24
        await pilot.click("#anonymize")
        assert app.screen.query_one("#anonymize", Checkbox).value is True
        await pilot.click("#export")
        await until(pilot, lambda: any("(anonymized)" in line.plain for line in app.log_lines), timeout=30,
                    what="the bundle written")
    [written] = list(tmp_path.glob("roce-wizard-bundle-*.tar.gz"))
    with tarfile.open(written) as tar:
        summary = next(tar.extractfile(m).read().decode() for m in tar.getmembers() if m.name.endswith("summary.md"))
    assert "esx-01" not in summary  # the sample's host names are pseudonyms in an anonymized bundle
