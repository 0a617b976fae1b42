"""The wizard's engine runs as async workers on the app's loop (Pilot, the practice lab over real SSH):
`q` during "fix everything" asks, then stops the run at a safe point and quits cleanly, the run log
saying where; and during "fix everything" each target's cells fill in as it is judged, not once a round.
Both wait on the app's own events (message counts), never on timing."""

from __future__ import annotations

import pytest

from roce_wizard.lab.control import BackgroundLab
from roce_wizard.lab.scenarios import Scenario, healthy
from roce_wizard.records.runlog import read_events
from roce_wizard.tui import messages as msg
from roce_wizard.tui.app import WizardApp, make_app
from roce_wizard.tui.screens.fix import ConfirmScreen, FixAllScreen, FixPreviewScreen
from roce_wizard.tui.screens.main import MainScreen

from .conftest import idle, until

SIZE = (120, 40)
# where the engine may stop: between rounds or between two targets' plans, never inside a plan (a switch
# change and its verify are steps of one plan)
SAFE_POINTS = {"before the checks of a round", "before the fixes of a round", "between the fixes of two targets",
               "before the reboots of a round"}


@pytest.fixture
def lab(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    background = BackgroundLab(Scenario("healthy", healthy(2)), tmp_path / "lab", services=())
    running = background.start()
    background.call(running.inject("RW202@esx-01"))  # mst not started: a safe fix
    try:
        yield background, tmp_path / "lab" / "inventory.yaml"
    finally:
        background.stop()


async def start_fix_all(app: WizardApp, pilot) -> None:  # noqa: ANN001
    await until(pilot, lambda: app.preflight is not None and idle(app)(), what="the preflight")
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, MainScreen) and app.has_full_report() and idle(app)(),
                what="the first full run")
    await pilot.press("a")
    assert isinstance(app.screen, FixPreviewScreen)
    await pilot.press("y")
    if isinstance(app.screen, ConfirmScreen):  # disruptive plans: safe ones only
        await pilot.press("n")
    assert isinstance(app.screen, FixAllScreen)


@pytest.mark.slow
async def test_q_during_fix_everything_asks_then_stops_at_a_safe_point_and_quits(lab):
    _, inventory = lab
    app = make_app(inventory)
    async with app.run_test(size=SIZE) as pilot:
        await start_fix_all(app, pilot)
        await until(pilot, lambda: app.working == "fix everything", what="the fix worker")
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), 10, "the question")  # asked, not quit
        assert app.return_code is None and app.working == "fix everything"
        await pilot.press("y")
        await until(pilot, lambda: app.return_code is not None, 120, "the stop at a safe point")
    assert app.return_code == 0
    fix_runs = [d for d in app.run_dirs if any(e["type"] == "fix-step" or e["type"] == "run-stopped"
                                               for e in read_events(d))]
    assert fix_runs, app.run_dirs
    events = read_events(fix_runs[-1])
    stopped = [e for e in events if e["type"] == "run-stopped"]
    assert len(stopped) == 1, [e["type"] for e in events]
    assert stopped[0]["where"] in SAFE_POINTS and stopped[0]["round"] >= 1
    assert events.index(stopped[0]) == max(i for i, e in enumerate(events) if e["type"] in ("fix-step", "run-stopped"))
    assert not any(w.is_running for w in app.workers)


@pytest.mark.slow
async def test_fix_everything_updates_the_grid_per_target_before_the_round_ends(lab, monkeypatch):
    _, inventory = lab
    app = make_app(inventory)
    seen: list[tuple[str, str]] = []  # ("target", name) as each target is judged, ("round", purpose) per round
    original_target, original_finished = WizardApp.on_target_findings, WizardApp.on_checks_finished

    def on_target_findings(self, message: msg.TargetFindings) -> None:  # noqa: ANN001
        original_target(self, message)
        if self.busy == "fix everything":
            name = message.run.target.name
            code = message.run.findings[-1].check
            # the board holds the target's new finding when its message arrives
            assert self.board.cell_findings(name, code), (name, code)
            seen.append(("target", name))

    def on_checks_finished(self, message: msg.ChecksFinished) -> None:  # noqa: ANN001
        if self.busy == "fix everything":
            seen.append(("round", message.purpose))
        original_finished(self, message)

    monkeypatch.setattr(WizardApp, "on_target_findings", on_target_findings)
    monkeypatch.setattr(WizardApp, "on_checks_finished", on_checks_finished)
    async with app.run_test(size=SIZE) as pilot:
        await start_fix_all(app, pilot)
        await until(pilot, lambda: ("round", "round 1") in seen, 120, "round 1 of fix everything")
        first_round = seen.index(("round", "round 1"))
        judged = {name for kind, name in seen[:first_round] if kind == "target"}
        assert judged == {t.name for t in app.connection.setup.targets}  # every target, each before the round
        await until(pilot, lambda: app.fix_all_result is not None and idle(app)(), 300, "fix everything")
        assert app.fix_all_result.ok, app.fix_all_result.lines
        await pilot.press("enter")
        await pilot.press("q")
    assert app.return_code == 0


@pytest.mark.slow
async def test_ctrl_c_during_fix_everything_stops_at_a_safe_point_says_what_is_left_and_exits_130(lab):
    _, inventory = lab
    app = make_app(inventory)
    async with app.run_test(size=SIZE) as pilot:
        await start_fix_all(app, pilot)
        await until(pilot, lambda: app.working == "fix everything", what="the fix worker")
        await pilot.press("ctrl+c")  # an interrupt: no question, the stop is asked of the engine at once
        assert not isinstance(app.screen, ConfirmScreen) and app.stop_requested
        await pilot.press("ctrl+c")  # a second one does not cut a change in half
        assert app.return_code is None or app.return_code == 130
        await until(pilot, lambda: app.return_code is not None, 120, "the stop at a safe point")
    assert app.return_code == 130  # 128 + SIGINT: a script must not read success
    said = "\n".join(app.stop_lines)
    assert said.startswith("fix everything: stopped by Ctrl-C at a safe point ("), said
    assert "no host was left between a change and its verify" in said and "run log: " in said
    fix_run = next(d for d in reversed(app.run_dirs) if any(e["type"] == "run-stopped" for e in read_events(d)))
    [stopped] = [e for e in read_events(fix_run) if e["type"] == "run-stopped"]
    assert stopped["where"] in SAFE_POINTS and f"({stopped['where']}, round {stopped['round']})" in said
    assert f"run log: {fix_run}" in said
    assert not any(w.is_running for w in app.workers)
