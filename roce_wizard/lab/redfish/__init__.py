"""The practice lab's BMCs: one Redfish service per ESXi host, over HTTPS on 127.0.0.1.

Each server of the world gets a BMC of its own (``bmc-esx-01`` …) on its own ephemeral port, the
way every PowerEdge has its own iDRAC. The BIOS it shows is the world's ``EsxiHost.bios`` (Dell
attribute names), and what a client changes follows iDRAC's rules, because the fix code that runs
against the lab must also work against a real iDRAC:

* ``PATCH …/Bios/Settings`` with ``{"Attributes": {…}}`` only *stages* values: ``Bios`` keeps
  showing the current ones, ``Bios/Settings`` shows the pending ones. Names and values are checked
  against the BIOS attribute registry (``…/Bios/BiosRegistry``); a bad value is a 400 with iDRAC's
  ``SYS409`` message, an unknown name ``PropertyUnknown``, a profile-controlled attribute while
  ``SysProfile`` is not ``Custom`` ``PropertyNotWritable`` — and nothing is staged then.
* Staged values reach the BIOS only through a configuration job:
  ``POST /redfish/v1/Managers/iDRAC.Embedded.1/Jobs {"TargetSettingsURI": "…/Bios/Settings"}``
  (or the PATCH with ``"@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"}``) answers with the
  job's URI in ``Location``; the job moves the values into ``EsxiHost.bios_pending``, it stays
  ``Scheduled`` ("Task successfully scheduled.", JCP001), and the next reboot of the host
  (``World.reboot_host``) applies them and completes it ("Job completed successfully.", PR19).
  Without a job a reboot applies nothing — iDRAC's classic trap. While a job is scheduled a new
  PATCH, or a second job, is refused with ``SYS011`` ("Pending configuration values are already
  committed…"); DELETE on the job abandons the pending values.
* ``POST …/Actions/ComputerSystem.Reset`` with ``GracefulRestart``/``ForceRestart``/``PowerCycle``
  reboots the server: the lab runtime's ``on_reset(host_name)`` does that (SSH side included);
  without one the world is rebooted at once.
* Every resource but ``/redfish``, ``/redfish/v1`` and the login needs Basic auth or an
  ``X-Auth-Token`` from ``POST /redfish/v1/SessionService/Sessions``. One random password per
  lab (user ``root``), which the inventory takes from an environment variable.
* TLS uses a certificate of a CA made for this lab (``bmc-ca.pem`` in the lab directory); the
  inventory gives it as ``options.ca_file`` so that roce-wizard keeps verifying certificates.

A host whose ``bmc_vendor`` is ``"hpe"`` gets an iLO 5-style service instead (``Systems/1``,
attributes ``ProcVirtualization``, ``IntelProcVtd``, ``Sriov``, ``PowerRegulator``…, settings
applied at the next reboot with no job). That is how the lab shows RW102: on Intel PowerEdge
servers VT-d has no attribute of its own, ``ProcVirtualization`` ("Virtualization Technology")
turns on VT-x and VT-d together, so the fault for RW102 alone needs a server that has the knob.

Everything runs on the lab's asyncio loop (plain HTTP/1.1 over ``asyncio`` streams, no web
framework), so the handlers read and change the world without locks.
"""

from __future__ import annotations

from roce_wizard.lab.redfish.faults import FAULTS
from roce_wizard.lab.redfish.lab import BmcHandle, inventory_entry, serve, start_bmcs
from roce_wizard.lab.redfish.tls import write_certificates
from roce_wizard.lab.redfish.vendors import CA_FILE, PASSWORD_ENV, USERNAME, bmc_name, bmc_vendor, set_bmc_vendor

__all__ = [
           "CA_FILE",
           "FAULTS",
           "PASSWORD_ENV",
           "USERNAME",
           "BmcHandle",
           "bmc_name",
           "bmc_vendor",
           "inventory_entry",
           "serve",
           "set_bmc_vendor",
           "start_bmcs",
           "write_certificates",
]
