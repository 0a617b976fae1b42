"""The wizard on a bare-metal-only lab (issue 18 item 5: what `roce-wizard demo --baremetal` opens): two
Linux nodes and their switch, no ESXi host or vCenter, the baremetal playbook. The preflight reaches
every target, and the grid's Linux host stage holds the nodes (the ESXi and vSphere stages none)."""

from __future__ import annotations

import pytest

from roce_wizard.lab.control import BackgroundLab, LabSpec
from roce_wizard.model import Stage, Status
from roce_wizard.tui.app import make_app
from roce_wizard.tui.screens.main import MainScreen
from roce_wizard.tui.screens.welcome import WelcomeScreen

from .conftest import idle, until


@pytest.mark.slow
async def test_wizard_opens_on_a_baremetal_only_lab(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    background = BackgroundLab(LabSpec(scenario="fresh", hosts=0, baremetal=2), tmp_path / "lab")
    lab = background.start()
    try:
        for key, value in lab.secrets.items():  # what demo does with the lab's credentials
            monkeypatch.setenv(key, value)
        app = make_app(tmp_path / "lab" / "inventory.yaml", playbook="baremetal")
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.preflight is not None and app.busy is None, what="the preflight")
            assert {f.target for f in app.preflight.findings} == {"node-01", "node-02", "sw-eos-1"}
            assert all(f.status is Status.PASS for f in app.preflight.findings)
            assert isinstance(app.screen, WelcomeScreen)
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, MainScreen) and app.board.report is not None
                        and idle(app)(), what="the first full run")
            assert Stage.LINUX in app.board.stages()  # the rail shows linux only when the playbook has it
            assert app.board.rows(Stage.LINUX) == ["node-01", "node-02"]
            assert app.board.rows(Stage.ESXI) == [] and app.board.rows(Stage.VSPHERE) == []
            assert app.board.cell_status("node-01", "RW405") is Status.FAIL  # fresh: MTU 1500
    finally:
        background.stop()
