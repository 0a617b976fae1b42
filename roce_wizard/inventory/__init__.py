"""inventory.yaml → targets, site policy and warnings.

The file names the machines the wizard talks to (esxi, guest, linux, switch, vcenter, bmc), the
site policy (docs/policy.md) and, per kind, defaults every target of that kind inherits. Names may be
Slurm-style host ranges (``esx-[01-16]``, as in seed 001's incast script): one entry then stands
for one target per name, and any string field holding a range of the same length is zipped with
the names (``address: esx-[01-16].hpc.example``).

Secrets are held by reference only (``{env: NAME}``, ``{keyring: "service/user"}``, ``prompt``);
a plaintext password is accepted with a warning that never repeats it. Every value that may
reach a remote shell (addresses, names, PCI addresses, interface names, IPs) is validated here,
and every error names the file, the line, the field and what was expected.

The package: ``hostlist`` (host ranges), ``fields`` (field vocabulary, validators, located YAML values,
policy), ``options`` (a target's ``options:``), ``secrets`` (credential references) and ``load``
(:func:`load_inventory` and :class:`Inventory`).
"""

from __future__ import annotations

from roce_wizard.inventory.fields import DEVICE_TYPES, InventoryError
from roce_wizard.inventory.hostlist import HostlistError, expand_hostlist
from roce_wizard.inventory.load import Inventory, load_inventory
from roce_wizard.inventory.secrets import SecretError, resolve_secret

__all__ = [
    "DEVICE_TYPES",
    "HostlistError",
    "Inventory",
    "InventoryError",
    "SecretError",
    "expand_hostlist",
    "load_inventory",
    "resolve_secret",
]
