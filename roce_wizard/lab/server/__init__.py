"""The lab's SSH side: one asyncssh server per ESXi host and per Linux guest, on 127.0.0.1.

Each target listens on its own ephemeral port with its own ed25519 host key and accepts one client
key, which the lab generates into its directory (``id_ed25519``, mode 0600) next to
``known_hosts`` (``[127.0.0.1]:port ssh-ed25519 …`` per target) and ``inventory.yaml`` — so that
``roce-wizard doctor -i DIR/inventory.yaml`` runs its production code path against the lab,
host key checking on.

An exec request runs its command line with the lab shell (`lab/shell/`) over the target's
current program table (`lab/esxi/` / `lab/guest/`, imported on first use) and answers stdout,
stderr and the exit status. Interactive shells are refused (hosts and guests are driven by exec
requests only). A program that answers ``action="reboot"`` takes its target down: every
connection is closed, the port refuses connections for ``world.reboot_delay_s``, then the target
comes back rebooted (``World.reboot_host`` / ``reboot_guest``) on the same port with the same host
key. The guests on a rebooting ESXi host go down and come back with it.

Fault RW001 (`FAULTS` here) stops a host's sshd: its listener is closed, connects are refused.

Everything else the lab serves (switch CLIs, vCenter, BMCs) plugs in through `SERVICE_MODULES`:
each such module may define ``async def serve(lab: Lab) -> None``, which starts its servers and
calls `Lab.register` with its inventory entries, a status callback and a stop callback.

DIR/state.json (written atomically after every change of state) is what `lab status` shows: per
target its kind, state (up / down / rebooting / refusing), boot count, boot id or time, injected
faults and port, and ``ready`` once everything listens.
"""

from __future__ import annotations

from roce_wizard.lab.server.config import (
           CLIENT_KEY_FILE,
           DEVICE_MODULES,
           ENV_FILE,
           INVENTORY_FILE,
           KNOWN_HOSTS_FILE,
           SERVICE_MODULES,
           STATE_FILE,
)
from roce_wizard.lab.server.endpoints import Device, DeviceResolver, Endpoint, Service
from roce_wizard.lab.server.faults import FAULTS
from roce_wizard.lab.server.files import read_env, read_state
from roce_wizard.lab.server.lab import Lab

__all__ = [
           "CLIENT_KEY_FILE",
           "DEVICE_MODULES",
           "ENV_FILE",
           "FAULTS",
           "INVENTORY_FILE",
           "KNOWN_HOSTS_FILE",
           "SERVICE_MODULES",
           "STATE_FILE",
           "Device",
           "DeviceResolver",
           "Endpoint",
           "Lab",
           "Service",
           "read_env",
           "read_state",
]
