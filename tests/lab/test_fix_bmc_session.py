"""Issue 16 item 2: `fix --reboot` logs in to each BMC once for the whole run, not once per phase.

`fix --select RW104 --reboot` on the lab (the BIOS profile wrong on bmc-esx-02): round 1 looks, stages the
value through Redfish, looks again, reboots esx-02 (through vCenter and SSH), looks after the boot and
verifies. Every transport the CLI builds is recorded (a spy around the real `live_transports`); the
RedfishTransports' own counters (`stats`: logins, TCP connections) are summed per BMC. The host's SSH
transport still reconnects after its reboot: the round after the boot reads the new boot.
"""

from __future__ import annotations

from collections import Counter

import pytest
from typer.testing import CliRunner

from roce_wizard.cli import app
from roce_wizard.lab.control import BackgroundLab
from roce_wizard.lab.scenarios import Scenario, healthy
from roce_wizard.lab.server import read_env
from roce_wizard.model import TargetKind
from roce_wizard.records.runlog import read_events
from roce_wizard.transports.redfish import RedfishTransport

pytestmark = pytest.mark.e2e

runner = CliRunner()
FIX = ["--select", "RW104", "--reboot", "--yes", "--allow-disruptive", "--poll", "0.2", "--reboot-timeout", "60"]


@pytest.mark.slow
def test_one_login_per_bmc_for_a_whole_multi_round_fix_run(tmp_path, monkeypatch):
    world = healthy(2)
    world.reboot_delay_s = 0.3
    background = BackgroundLab(Scenario("healthy", world), tmp_path / "lab")
    background.start()
    try:
        if background.lab.world.vcenter is None or not background.lab.world.vcenter.port:
            pytest.skip("the lab's vCenter simulator is not available (no Go); fix --reboot goes through vCenter")
        background.call(background.lab.inject("RW104@bmc-esx-02"))
        for key, value in read_env(tmp_path / "lab").items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
        built: list[RedfishTransport] = []
        import roce_wizard.cli.fix as fix_cli

        real = fix_cli.live_transports

        def recording(*args, **kw):
            out = real(*args, **kw)
            built.append(out[TargetKind.BMC])
            return out

        monkeypatch.setattr(fix_cli, "live_transports", recording)
        boots = background.lab.world.hosts["esx-02"].boot_count

        result = runner.invoke(app, ["fix", "-i", str(tmp_path / "lab" / "inventory.yaml"), *FIX])
        assert result.exit_code == 0, result.output[-3000:]
        assert background.lab.world.hosts["esx-02"].boot_count == boots + 1  # the reboot the staged value needs
        (run,) = [p for p in (tmp_path / "state" / "runs").iterdir() if p.is_dir()]
        log = read_events(run)
        assert [e["verified"] for e in log if e["type"] == "reboot-verified"] == [True]
        looks = sum(1 for e in log if e["type"] == "run-end")
        assert looks >= 3  # the look, the look after staging, the look after the boot: phases enough to matter

        logins, connections = Counter(), Counter()
        for transport in built:
            for bmc, stats in transport.stats.items():
                logins[bmc] += stats.logins
                connections[bmc] += stats.connections
        assert logins == {"bmc-esx-01": 1, "bmc-esx-02": 1}, (logins, connections, f"{len(built)} transports built")
        assert connections == {"bmc-esx-01": 1, "bmc-esx-02": 1}
    finally:
        background.stop()
