"""`--replay` is read-only: the wizard says so, and refuses every fix and every reboot with the reason.

Before, "fix everything" on the recorded sample cluster showed a plan, "applied" it against the
recording and listed failures without reasons.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from roce_wizard.tui.app import make_app
from roce_wizard.tui.readonly import READ_ONLY
from roce_wizard.tui.screens.fix import FixAllScreen, FixPreviewScreen, FixProgressScreen
from roce_wizard.tui.screens.main import MainScreen
from roce_wizard.tui.screens.reboots import RebootScreen

from .conftest import idle, until

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample-cluster"


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))


def refusals(app) -> list[str]:  # noqa: ANN001
    """The wizard's log lines that refuse something (every refusal is also a notification, but those expire)."""
    return [line.plain for line in app.log_lines if READ_ONLY in line.plain]


@pytest.mark.slow
async def test_replay_shows_a_read_only_banner_and_refuses_fixes_and_reboots():
    app = make_app(SAMPLE / "inventory.yaml", replay=SAMPLE / "recordings.yaml")
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.preflight is not None and idle(app)(), what="the preflight")
        await pilot.press("enter")
        await until(pilot, lambda: app.board.report is not None and len(app.board.report.checks) > 1
                    and idle(app)(), what="the first full run")
        assert isinstance(app.screen, MainScreen)
        runs_before = list(app.run_dirs)
        assert any(p.allowed for p in app.board.plans), "the sample cluster has fixes to offer"

        # the banner: in the header and at the top of the main screen
        assert "READ-ONLY" in app.sub_title
        banner = app.screen.query_one("#read-only", Static)
        assert READ_ONLY in str(banner.render())

        # "fix everything": the preview shows the plan and says it will not run; y is refused
        await pilot.press("a")
        # the screen is pushed before its widgets are mounted: wait for the button read below
        await until(pilot, lambda: isinstance(app.screen, FixPreviewScreen) and bool(app.screen.query("#yes")),
                    what="the preview")
        assert READ_ONLY in str(app.screen.query_one("#read-only-note", Static).render())
        assert app.screen.query_one("#yes").disabled
        await pilot.press("y")
        await until(pilot, lambda: len(refusals(app)) >= 1, timeout=10, what="the refusal")
        await pilot.pause(0.2)
        assert isinstance(app.screen, FixPreviewScreen), "the plan stays readable, nothing started"
        assert len(refusals(app)) == 1 and refusals(app)[0].startswith("fix everything")
        assert refusals(app)[0].endswith(f": refused — {READ_ONLY}")
        assert any(READ_ONLY in n.message for n in app._notifications)  # said on screen too
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, MainScreen), what="back to the grid")

        # a single fix (the stage's fixes, s) likewise
        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, FixPreviewScreen) and bool(app.screen.query("#yes")),
                    what="the stage preview")
        await pilot.press("y")
        await until(pilot, lambda: len(refusals(app)) >= 2, timeout=10, what="the refusal")
        assert isinstance(app.screen, FixPreviewScreen) and refusals(app)[1] == f"fix the esxi stage: refused — {READ_ONLY}"
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, MainScreen), what="back to the grid")

        # reboots: esx-03's firmware change waits for one, and R is refused before any confirmation
        await pilot.press("b")
        await until(pilot, lambda: isinstance(app.screen, RebootScreen), what="the reboot tracker")
        assert app.screen.pending_hosts() == ["esx-03"]
        await pilot.press("R")
        await until(pilot, lambda: len(refusals(app)) >= 3, timeout=10, what="the refusal")
        assert isinstance(app.screen, RebootScreen) and refusals(app)[2] == f"reboot: refused — {READ_ONLY}"

        # the workers refuse too, whatever path reaches them
        app.apply_fixes([p for p in app.board.plans if p.allowed])
        app.fix_everything(True)
        app.reboot_hosts(["esx-03"], 1)
        await until(pilot, idle(app), what="the workers")
        await pilot.pause(0.2)
        assert {f"{what}: {READ_ONLY}" for what in ("fix", "fix everything", "reboot")} <= set(refusals(app)[3:])
        assert app.fix_all_result is not None and not app.fix_all_result.ok
        assert not any(isinstance(s, (FixAllScreen, FixProgressScreen)) for s in app.screen_stack)
        assert app.run_dirs == runs_before, "no fix or reboot run was recorded"
