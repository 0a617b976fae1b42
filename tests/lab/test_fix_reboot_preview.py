"""`fix --reboot` says what the reboots will do before anything starts (issue 17 item 4): per host that goes
down, the VMs vCenter shows running on it (powered off for the reboot, on again after), and every host it
skips as unreachable with why; without --yes (no terminal to ask on) it stops at the preview: nothing ran."""

from __future__ import annotations

import pytest

from roce_wizard.inventory import load_inventory
from roce_wizard.model import TargetKind

from .test_fix_reboot import runner, start

pytestmark = pytest.mark.e2e


@pytest.mark.slow
def test_fix_reboot_names_the_vms_it_powers_off_and_the_hosts_it_skips(tmp_path, monkeypatch):
    background, inventory, _ = start(tmp_path, monkeypatch, reboot_delay=0.3)
    try:
        background.call(background.lab.inject("RW001@esx-02"))  # its SSH service stops: refused
        world = background.lab.world
        boots = {h: host.boot_count for h, host in world.hosts.items()}
        vm = next(t.vm or t.name for t in load_inventory(inventory).targets
                  if t.kind is TargetKind.GUEST and t.host == "esx-01")
        from roce_wizard.cli import app  # noqa: PLC0415

        result = runner.invoke(app, ["fix", "-i", str(inventory), "--allow-disruptive", "--reboot"])
        out = result.output
        print(out[out.find("Reboots"):])
        assert "Reboots (this round" in out, out[-3000:]
        assert (f"esx-01: maintenance mode, reboot, wait for it to come back, verify — powers off 1 VM for it, "
                f"on again after: {vm}") in out
        skipped = next(line for line in out.splitlines() if line.strip().startswith("esx-02: skipped"))
        assert "unreachable (" in skipped and "refused" in skipped, skipped
        assert out.index("Reboots (this round") < out.index("preview only: re-run with --yes")
        assert {h: host.boot_count for h, host in world.hosts.items()} == boots  # asked, not done
    finally:
        background.stop()
