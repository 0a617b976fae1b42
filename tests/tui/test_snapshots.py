"""Snapshot tests of every wizard screen at 80x24 and 160x48, on the recorded sample cluster
(replay: no ports, no timing; the log has no timestamps when headless)."""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_wizard.tui.app import make_app

from .conftest import idle, until

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample-cluster"
SIZES = [(80, 24), (160, 48)]
# keys after the first full run that lead to each screen
SCREENS = {"welcome": None, "main": [], "fix-preview": ["s"], "reboots": ["b"], "help": ["question_mark"]}


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    # the reboot tracker's elapsed time is wall-clock: a fixed text keeps its snapshot stable
    monkeypatch.setattr("roce_wizard.tui.screens.reboots.elapsed_text", lambda since, now: "1m05s" if since else "-")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("screen", list(SCREENS))
def test_screen(snap_compare, screen, size):
    app = make_app(SAMPLE / "inventory.yaml", replay=SAMPLE / "recordings.yaml", subtitle="sample cluster")

    async def run_before(pilot) -> None:  # noqa: ANN001
        await until(pilot, lambda: app.preflight is not None and idle(app)(), what="the preflight")
        keys = SCREENS[screen]
        if keys is None:
            return
        await pilot.press("enter")
        await until(pilot, lambda: app.board.report is not None and len(app.board.report.checks) > 1
                    and idle(app)(), what="the first full run")
        for key in keys:
            await pilot.press(key)
        await pilot.pause(0.2)

    assert snap_compare(app, run_before=run_before, terminal_size=size)
