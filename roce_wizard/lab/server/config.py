"""The lab runtime's file names, defaults and the modules that serve its devices."""

from __future__ import annotations

import logging

log = logging.getLogger("roce_wizard.lab.server")  # the name it had as one module

STATE_FILE = "state.json"
INVENTORY_FILE = "inventory.yaml"
KNOWN_HOSTS_FILE = "known_hosts"
CLIENT_KEY_FILE = "id_ed25519"
ROCE_PF_PCI = "0000:3b:00.0"
ROCE_VMNICS = ("vmnic2", "vmnic3")
DEFAULT_VFS = (8, 7)
# modules that serve the lab's other devices; each may define `async def serve(lab)`
SERVICE_MODULES = ("roce_wizard.lab.switch", "roce_wizard.lab.vcenter", "roce_wizard.lab.redfish")
DEVICE_MODULES = {"esxi": "roce_wizard.lab.esxi", "guest": "roce_wizard.lab.guest", "linux": "roce_wizard.lab.guest"}
ENV_FILE = "lab.env"  # the lab's credentials, for `set -a; . DIR/lab.env; set +a`
# what every sshd of the lab takes (hosts, guests, switches): text in UTF-8, nothing but a shell, login within 30 s
SSHD_OPTIONS = {"encoding": "utf-8", "errors": "replace", "allow_scp": False, "agent_forwarding": False,
                "x11_forwarding": False, "reuse_address": True, "login_timeout": 30}
STATE_FLUSH_S = 1.0  # command-driven changes are written at most this often
