"""The reboot tracker's R says what will happen before it asks (issue 17 item 4), Pilot against the practice
lab with its vCenter: the VMs vCenter shows on each pending host are named as powered off for the reboot, and
a pending host that does not answer is named as skipped, with why; Cancel runs nothing."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from roce_wizard.cli import app as cli
from roce_wizard.inventory import load_inventory
from roce_wizard.lab.control import BackgroundLab
from roce_wizard.lab.scenarios import Scenario, healthy
from roce_wizard.lab.server import read_env
from roce_wizard.model import TargetKind
from roce_wizard.tui.app import make_app
from roce_wizard.tui.screens.fix import ConfirmScreen
from roce_wizard.tui.screens.reboots import RebootScreen

from .conftest import idle, until
from .test_wizard_lab import open_main

SIZE = (120, 40)


@pytest.fixture
def staged_two(tmp_path, monkeypatch):
    """Two hosts with PFC parameters written by `fix` and not rebooted; then esx-02 stops answering."""
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    background = BackgroundLab(Scenario("healthy", healthy(2)), tmp_path / "lab")
    running = background.start()
    try:
        if background.lab.world.vcenter is None or not background.lab.world.vcenter.port:
            pytest.skip("the lab's vCenter simulator is not available (no Go)")
        for key, value in read_env(tmp_path / "lab").items():
            monkeypatch.setenv(key, value)
        inventory = tmp_path / "lab" / "inventory.yaml"
        for host in ("esx-01", "esx-02"):
            background.call(running.inject(f"RW209@{host}"))
        fixed = CliRunner().invoke(cli, ["fix", "-i", str(inventory), "--select", "RW209", "--yes",
                                         "--allow-disruptive"])
        assert "Waiting for a reboot" in fixed.output, fixed.output[-2000:]
        background.call(running.inject("RW001@esx-02"))  # its SSH service stops: refused
        yield background, inventory
    finally:
        background.stop()


@pytest.mark.slow
async def test_R_names_the_vms_it_powers_off_and_the_unreachable_host_it_skips(staged_two):
    background, inventory = staged_two
    vm = next(t.vm or t.name for t in load_inventory(inventory).targets
              if t.kind is TargetKind.GUEST and t.host == "esx-01")
    boots = {h: host.boot_count for h, host in background.lab.world.hosts.items()}
    app = make_app(inventory)
    async with app.run_test(size=SIZE) as pilot:
        await open_main(app, pilot)
        await pilot.press("b")
        assert isinstance(app.screen, RebootScreen)
        await until(pilot, lambda: {"esx-01", "esx-02"} <= set(app.screen.pending_hosts()), 10, "the pending hosts")
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), 10, "the confirmation")
        dialog = app.screen
        body = [t.plain for t in dialog.body]
        assert dialog.title_text.startswith("Reboot 1 host, "), dialog.title_text
        assert body[0] == ("esx-01: maintenance mode, reboot, wait for it to come back, verify — powers off 1 VM "
                           f"for it, on again after: {vm}"), body
        assert body[1].startswith("esx-02: skipped — unreachable (") and "refused" in body[1], body
        await pilot.press("n")
        await until(pilot, idle(app), 10, "idle")
    assert {h: host.boot_count for h, host in background.lab.world.hosts.items()} == boots
