"""The wizard tells the truth about cells (issue 17 items 2, 5, 6), Pilot against the practice lab over SSH:
a disruptive fix that waits for a reboot turns its cell ⟳ (not ✓) in the grid, the rail and the detail pane;
`f` on a cell with nothing to run says why (passes / blocked / no automatic fix / waits for a reboot); a stage
whose cells are all blocked says "blocked" on the rail, not ✓0 ✗0; and the rail keeps its counts during a run."""

from __future__ import annotations

import pytest

from roce_wizard.lab.control import BackgroundLab
from roce_wizard.lab.scenarios import Scenario, healthy
from roce_wizard.model import Stage, Status
from roce_wizard.tui import messages as msg
from roce_wizard.tui.app import WizardApp, make_app
from roce_wizard.tui.screens.fix import ConfirmScreen, FixPreviewScreen, FixProgressScreen
from roce_wizard.tui.screens.main import MainScreen

from .conftest import idle, until
from .test_wizard_lab import move_to, open_main

SIZE = (120, 40)


def start_lab(base, *faults: str):  # noqa: ANN001, ANN201
    background = BackgroundLab(Scenario("healthy", healthy(1)), base / "lab", services=())
    running = background.start()
    for fault in faults:
        background.call(running.inject(fault))
    return background, base / "lab" / "inventory.yaml"


@pytest.fixture
def staged_lab(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    background, inventory = start_lab(tmp_path, "RW209@esx-01", "RW213@esx-01")  # disruptive; manual words
    try:
        yield inventory
    finally:
        background.stop()


@pytest.fixture
def unreachable_lab(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    background, inventory = start_lab(tmp_path, "RW001@esx-01")  # its SSH service stops: refused
    try:
        yield inventory
    finally:
        background.stop()


def notices(app: WizardApp) -> list[str]:
    return [n.message for n in app._notifications]


async def press_f(app: WizardApp, pilot, screen: MainScreen, row: str, code: str) -> str:  # noqa: ANN001
    await move_to(pilot, screen, row, code)
    before = len(notices(app))
    await pilot.press("f")
    await until(pilot, lambda: len(notices(app)) > before, 10, f"a notification for f on {code}")
    return notices(app)[-1]


@pytest.mark.slow
async def test_pending_cell_and_f_says_why_nothing_runs(staged_lab):
    app = make_app(staged_lab)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_main(app, pilot)
        assert screen.stage is Stage.ESXI
        assert await press_f(app, pilot, screen, "esx-01", "RW201") == "RW201 passes on esx-01 — nothing to fix"
        assert await press_f(app, pilot, screen, "esx-01", "RW213") == (
            "RW213 has no automatic fix — see the detail pane for the fix by hand")
        assert isinstance(app.screen, MainScreen)  # no dialog opened for either

        # the disruptive PFC fix: preview, second confirmation, applied, re-verified, not rebooted
        await move_to(pilot, screen, "esx-01", "RW209")
        await pilot.press("f")
        assert isinstance(app.screen, FixPreviewScreen)
        await pilot.press("y")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, FixProgressScreen), what="the progress screen")
        progress = app.screen
        await until(pilot, lambda: progress.state.startswith("re-verified") and idle(app)(), 120, "re-verification")
        assert "0 of 1 fixed finding now pass, 1 wait for a reboot" in progress.state
        await pilot.press("escape")

        assert app.board.cell_status("esx-01", "RW209") is Status.PASS  # the status stays pass ...
        assert app.board.cell_text("esx-01", "RW209") == "⟳"  # ... and the cell says it is not in effect
        grid = screen.query_one("#grid")
        assert grid.get_cell("esx-01", "RW209").plain.strip() == "⟳"
        rail = screen.rail_prompt(Stage.ESXI).plain
        assert "⟳1" in rail, rail
        assert "wait for a reboot" in screen.query_one("#grid-title").render().plain
        await move_to(pilot, screen, "esx-01", "RW209")
        assert "not in effect yet: waits for a host reboot" in screen.detail_text()
        said = await press_f(app, pilot, screen, "esx-01", "RW209")
        assert said.startswith("RW209 passes on esx-01 but is not in effect yet: waits for a host reboot"), said
        assert said.endswith("reboot it (b: the reboot tracker)")


@pytest.mark.slow
async def test_an_all_blocked_stage_says_blocked_and_f_names_the_root(unreachable_lab, monkeypatch):
    app = make_app(unreachable_lab)
    rails: list[str] = []
    recording = False
    original = WizardApp.on_target_findings

    def on_target_findings(self, message: msg.TargetFindings) -> None:  # noqa: ANN001
        original(self, message)
        if recording and isinstance(self.screen, MainScreen) and self.board.running:
            rails.append(self.screen.rail_prompt(Stage.ESXI).plain)

    monkeypatch.setattr(WizardApp, "on_target_findings", on_target_findings)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_main(app, pilot)
        rail = screen.rail_prompt(Stage.ESXI).plain
        assert "blocked (" in rail and "✓0" not in rail, rail
        said = await press_f(app, pilot, screen, "esx-01", "RW201")
        assert said == "RW201 on esx-01 is blocked by RW001 on esx-01 — fix that first"

        # a re-check: while it runs the rail keeps the last final counts and shows it runs (…)
        recording = True
        await pilot.press("r")
        await until(pilot, lambda: bool(rails) and idle(app)(), 60, "the re-check")
        assert rails and all(r == rail + "…" for r in rails), (rail, rails)
        assert screen.rail_prompt(Stage.ESXI).plain == rail
        title = screen.query_one("#grid-title").render().plain
        assert "could not run" in title and " error " not in title
