"""Redfish transport for BMCs (iDRAC, iLO, …): HTTPS with httpx, certificates verified.

- TLS verification is on. The CA to trust is the target's ``options.ca_file`` (a PEM file), else
  the system's trust store. A certificate that does not verify is refused with a message naming
  ``ca_file`` (and, as the explicit opt-out, ``insecure``). ``options: {insecure: true}`` turns
  verification off for that target; the transport then adds a warning to ``self.warnings`` on
  every run (the CLI prints them), because the BMC password then goes to whoever answers.
- One HTTP client per BMC per transport (= per run); concurrent callers share it. A semaphore
  bounds how many BMCs are being logged into at once.
- Login is a Redfish session (``POST /redfish/v1/SessionService/Sessions`` → ``X-Auth-Token``),
  deleted again on ``close()`` (BMCs have few session slots); a service without a session
  service gets HTTP Basic auth. The password comes from ``password_resolver(target)`` and never
  appears in messages or logs. 401 → ``TransportError(auth)``.
- Commands are what a probe asks for, and results look like a shell's:
    ``GET /redfish/v1/Systems``  stdout is the JSON body; a non-2xx answer has exit status = the
                                 HTTP status and stderr = the Redfish error message.
    ``redfish bios``             discovers the system (first member of /redfish/v1/Systems), reads
                                 its Bios (current ``Attributes``) and Bios/Settings (pending), and
                                 prints one JSON document: {vendor, system, attributes, pending,
                                 bios_uri, settings_uri, …} (parser kind ``redfish_bios``).
    ``redfish bios-set N=V …``   stages BIOS attributes for the next reboot (`bios_set`: registry-checked,
                                 PATCH …/Bios/Settings, and on iDRAC one configuration job).
  A command that overruns its timeout is a result with ``timed_out``; only losing the BMC raises.
"""

from __future__ import annotations

from roce_wizard.transports.redfish.bios import bios_document, bios_set, vendor_of
from roce_wizard.transports.redfish.client import DEFAULT_PORT
from roce_wizard.transports.redfish.connect import RedfishTransport
from roce_wizard.transports.redfish.session import RedfishSession

__all__ = [
    "DEFAULT_PORT",
    "RedfishSession",
    "RedfishTransport",
    "bios_document",
    "bios_set",
    "vendor_of",
]
