"""The wizard at 80x24 (issue 17 items 1 and 3), on the recorded sample cluster (replay: no ports, no timing):
every dialog keeps its buttons on screen and scrolls its body, help reaches its last line, the footer shows the
keys of the screen in front (? q b e first), the grid reaches its last column with the host column fixed, the
detail pane starts at the verdict of each cell and orders it verdict → fix → evidence, `y` copies the fix,
focus moves grid → detail → log and a stage key brings it back, the log never scrolls sideways."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Button, DataTable, RichLog, Static
from textual.widgets._footer import FooterKey

from roce_wizard.tui.app import make_app

from .conftest import idle, until

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample-cluster"
SIZE = (80, 24)


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))


def sample_app():  # noqa: ANN201
    return make_app(SAMPLE / "inventory.yaml", replay=SAMPLE / "recordings.yaml", subtitle="sample cluster")


async def main_screen(app, pilot):  # noqa: ANN001, ANN201
    await until(pilot, lambda: app.preflight is not None and idle(app)(), what="the preflight")
    await pilot.press("enter")
    await until(pilot, lambda: app.board.report is not None and len(app.board.report.checks) > 1 and idle(app)(),
                what="the first full run")
    await pilot.pause(0.1)
    return app.screen


async def select(pilot, screen, row: str, code: str) -> None:  # noqa: ANN001
    _, rows, columns = screen.shape
    screen.query_one("#grid", DataTable).move_cursor(row=rows.index(row), column=columns.index(code) + 1)
    await pilot.pause(0.1)


def footer_keys(screen) -> list[str]:  # noqa: ANN001
    """The keys the screen's own footer shows, and whose whole label is inside the terminal's width."""
    return [k.key for k in screen.query(FooterKey) if k.region.width and k.region.right <= SIZE[0]]


def assert_buttons_on_screen(screen) -> None:  # noqa: ANN001
    buttons = list(screen.query(Button))
    assert buttons, f"{screen} has no buttons"
    for button in buttons:
        region = button.region
        assert region.height == 3 and region.bottom <= SIZE[1] and region.right <= SIZE[0], (
            f"{type(screen).__name__}: button {button.label} at {region} is not wholly on the {SIZE} screen")
        # drawn, not clipped away by the dialog around it
        assert screen.find_widget(button).region == region
        assert screen.get_widget_at(region.x + 1, region.y + 1)[0] is button


async def test_every_dialog_keeps_its_buttons_on_screen_and_scrolls_its_body():
    from roce_wizard.tui.screens.fix import ConfirmScreen, FixAllScreen, FixPreviewScreen, FixProgressScreen

    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        await main_screen(app, pilot)
        plans = list(app.board.plans)
        runnable = [p for p in plans if p.allowed]
        long_plans = runnable * 12  # a big cluster's second confirmation: many disruptive fixes
        dialogs = {
            "fix preview": FixPreviewScreen(long_plans, "everything"),
            "second confirmation": ConfirmScreen.disruptive(long_plans, vms=True),
            "progress": FixProgressScreen(long_plans, "the esxi stage"),
            "fix everything": FixAllScreen(True),
            "reboot": ConfirmScreen("Reboot 40 host(s), 1 at a time?", [
                Text(f"esx-{i:02d}: maintenance mode, reboot, verify") for i in range(40)], "Reboot (y)", "Cancel (n)"),
        }
        for name, dialog in dialogs.items():
            await app.push_screen(dialog)
            await pilot.pause(0.2)
            assert_buttons_on_screen(dialog)
            if name in ("fix preview", "second confirmation", "reboot"):  # the long body scrolls, is not cut
                assert dialog.query_one(VerticalScroll).max_scroll_y > 0, name
            await until(pilot, lambda d=dialog: footer_keys(d), timeout=5, what=f"the footer of {name}")
            keys = footer_keys(dialog)
            assert keys and not {"a", "f", "s"} & set(keys), f"{name}: the footer shows {keys}"
            await app.pop_screen()
        # the progress dialog's state line (re-verifying…, done) is drawn above its buttons, not under them
        progress = FixProgressScreen(long_plans, "the esxi stage")
        await app.push_screen(progress)
        progress.state = "applied: 3 step(s) ok — re-verifying…"
        progress.redraw()
        await pilot.pause(0.1)
        state = progress.query_one("#progress-state", Static)
        assert state.region.height >= 1 and state.region.bottom <= progress.query_one(Button).region.y


async def test_the_second_confirmation_of_s_at_80x24_and_its_footer():
    from roce_wizard.tui.screens.fix import ConfirmScreen

    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await main_screen(app, pilot)
        # ? q b e first in the main screen's footer, inside 80 columns
        assert footer_keys(screen)[:4] == ["question_mark", "q", "b", "e"], footer_keys(screen)
        disruptive = [p for p in app.board.plans if p.allowed and p.plan.safety.value == "disruptive"] * 20
        dialog = ConfirmScreen.disruptive(disruptive)
        await app.push_screen(dialog)
        await pilot.pause(0.2)
        assert "too?" in str(dialog.query_one(".dialog-title", Static).render())
        assert_buttons_on_screen(dialog)
        await until(pilot, lambda: footer_keys(dialog), timeout=5, what="the dialog's footer")
        assert footer_keys(dialog) == ["y", "n"]  # (Escape answers as n: one footer key per action)


async def test_help_scrolls_to_its_last_line():
    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        await main_screen(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause(0.2)
        end = list(app.screen.query_one(VerticalScroll).query(Static))[-1]  # the body's last line
        assert "Escape" in str(end.render())
        assert not app.screen.region.contains_region(end.region) or end.region.bottom > SIZE[1] - 3
        await pilot.press("end")
        await until(pilot, lambda: end.region.bottom <= SIZE[1] - 1, timeout=5, what="the help's end")
        assert end.region.height == 1 and end.region.bottom <= SIZE[1] - 1, end.region  # above the footer
        assert app.screen.get_widget_at(end.region.x, end.region.y)[0] is end


async def test_grid_keeps_the_host_column_and_reaches_the_last_check():
    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await main_screen(app, pilot)
        grid = screen.query_one("#grid", DataTable)
        _, rows, columns = screen.shape
        assert len(columns) == 16 and grid.fixed_columns == 1
        for _ in columns:
            await pilot.press("right")
        await pilot.pause(0.2)
        assert screen.selected() == (rows[0], columns[-1])
        assert grid.scroll_x > 0
        header, first = grid.render_line(0).text, grid.render_line(1).text
        assert header.split()[0] == "host" and columns[-1].removeprefix("RW") in header, header
        assert first.split()[0] == rows[0], first  # the host column stays while the checks scroll
        assert grid.border_subtitle == f"{columns[-1]} {app.board.checks[columns[-1]].meta.slug}"


async def test_detail_pane_starts_at_the_verdict_of_each_cell_and_orders_its_sections():
    from roce_wizard.catalog import SECTIONS

    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await main_screen(app, pilot)
        await select(pilot, screen, "esx-02", "RW209")
        text = screen.detail_text()
        order = [text.index(s) for s in ("✗", "observed:", "Fix preview", "$ esxcli system module parameters set",
                                         "Evidence", "raw output of", f"\n{SECTIONS[0]}")]
        assert order == sorted(order), text
        # a command is one line however narrow the pane (the pane does not break it mid-token)
        assert any(line.lstrip().startswith("$ esxcli system module parameters set -m nmlx5_core -p")
                   for line in screen.detail_text().splitlines())
        scroll = screen.query_one("#detail-scroll", VerticalScroll)
        scroll.scroll_end(animate=False, immediate=True)
        await pilot.pause(0.1)
        assert scroll.scroll_y > 0
        await pilot.press("right")
        await pilot.pause(0.2)
        assert screen.selected() == ("esx-02", "RW210") and scroll.scroll_y == 0


async def test_y_copies_the_exact_fix_commands_of_the_cell():
    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await main_screen(app, pilot)
        await pilot.press("5")  # the guest stage
        await pilot.pause(0.2)
        await select(pilot, screen, "compute-04", "RW405")
        plan = next(p.plan for p in app.board.plans if p.plan.check == "RW405")
        await pilot.press("y")
        await pilot.pause(0.2)
        assert app.clipboard == "".join(f"{s.command}\n" for s in plan.steps)
        assert any("copied 2 lines of the fix for RW405 on compute-04" in str(n.message)
                   for n in app._notifications)


async def test_focus_is_visible_tab_goes_grid_detail_log_and_a_stage_key_returns_to_the_grid():
    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await main_screen(app, pilot)
        detail = screen.query_one("#detail-scroll")
        unfocused = detail.styles.border_top
        assert app.focused.id == "grid"
        seen = []
        for _ in range(3):
            await pilot.press("tab")
            seen.append(app.focused.id)
            if app.focused is detail:
                assert detail.styles.border_top != unfocused  # the focused pane shows it
        assert seen == ["detail-scroll", "log", "rail"]
        await pilot.press("3")
        await pilot.pause(0.1)
        assert app.focused.id == "grid" and screen.stage.value == "esxi"
        # as many stage keys as stages: 7 on this playbook, no 8th
        assert "8" not in screen.active_bindings and "7" in screen.active_bindings


async def test_the_log_never_scrolls_sideways():
    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await main_screen(app, pilot)
        # a line as long as a real one (the terminal's log lines start with a time stamp; headless ones do not)
        # (a run of digits: wrapped where the width ends, not at a word boundary short of it)
        app.log_line("12:00:00 " + "0123456789" * 20)
        await pilot.pause(0.1)
        log = screen.query_one("#log", RichLog)
        log.focus()
        for key in ("right", "right", "end"):
            await pilot.press(key)
        await pilot.pause(0.1)
        assert log.scroll_x == 0 and log.max_scroll_x == 0
        assert log.lines and all(strip.cell_length <= log.scrollable_content_region.width for strip in log.lines)


async def test_welcome_shows_the_whole_reason_of_the_highlighted_target():
    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.preflight is not None and idle(app)(), what="the preflight")
        table = app.screen.query_one("#targets", DataTable)
        table.move_cursor(row=3)  # esx-04: refused
        await pilot.pause(0.2)
        finding = next(f for f in app.preflight.findings if f.target == "esx-04")
        reason = app.screen.query_one("#welcome-reason", Static)
        assert finding.summary in str(reason.render()).replace("\n", " ")
        assert reason.region.bottom <= SIZE[1] - 1
