"""The fault the lab runtime owns: a target's sshd refusing connections (RW001)."""

from __future__ import annotations

from roce_wizard.lab.faults import Fault
from roce_wizard.lab.world import World

# ---------------------------------------------------------------------------- the fault this module owns


def _rw001(world: World, target: str) -> None:
    world.hosts[target].faults.add("RW001")


FAULTS = {
    "RW001": Fault("RW001", "esxi", "the host's SSH service is stopped: connections are refused", _rw001),
}
