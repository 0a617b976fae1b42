"""vSphere transport for vCenter targets (pyVmomi, run in threads).

- TLS is verified. The CA comes from the target's ``options.ca_file`` (else the system store); a
  certificate that does not verify is refused (`ConnectErrorKind.TLS`) with a message naming both
  ways out: ``options: {ca_file: …}`` or, knowingly, ``options: {insecure: true}``. An insecure
  target still connects, and every run appends a warning to ``transport.warnings`` (the CLI prints
  them at the end).
- One ServiceInstance (one login) per target per run, shared by every query; ``close()`` logs out.
  A semaphore bounds concurrent logins; logins and queries have timeouts.
- ``session(target).run(command)`` answers a named QUERY, not a shell command: ``vsphere hosts``,
  ``vsphere vms``, ``vsphere dvs`` (``QUERIES``). Each is one property-collector RetrieveContents
  over a container view (not a round trip per property) and prints a JSON document of what the
  vsphere checks read, in vSphere's own property names; `parsers/vsphere.py` turns it into facts.
  Managed object references print as ``{"_moId": …, "name": …}``, their names read in the same
  RetrieveContents. An unknown query exits 2; a vSphere fault exits 1 (stderr says which); only a
  lost connection raises TransportError.
- `wait_for_task` polls a task's state with a timeout (pyVim.task.WaitForTask misreads some
  simulator tasks; DESIGN.md) — for the fixes.

Passwords come from ``password_resolver(target)`` and never appear in messages or logs.
"""

from __future__ import annotations

from roce_wizard.transports.vsphere.actions import ACTIONS, ActionFault, Malformed, action_line, parse_action
from roce_wizard.transports.vsphere.connect import DEFAULT_PORT, VSphereSession, VSphereTransport, ssl_context_for
from roce_wizard.transports.vsphere.reads import QUERIES, render
from roce_wizard.transports.vsphere.tasks import wait_for_task

__all__ = [
    "ACTIONS",
    "DEFAULT_PORT",
    "QUERIES",
    "ActionFault",
    "Malformed",
    "VSphereSession",
    "VSphereTransport",
    "action_line",
    "parse_action",
    "render",
    "ssl_context_for",
    "wait_for_task",
]
