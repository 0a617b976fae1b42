"""Switch transport: netmiko (Arista EOS, NVIDIA Onyx, Dell OS10, Cumulus NVUE) run in threads.

- netmiko is blocking: every connect and command runs in `asyncio.to_thread`; a semaphore bounds
  concurrent connects. One netmiko session per switch per run; commands on it are serialised (a CLI
  session answers one command at a time), and `close()` disconnects them all.
- Host keys: netmiko's default (`ssh_strict=False`) is paramiko's AutoAddPolicy, i.e. no checking.
  Here the known_hosts file the SSH transport uses (the transport's explicit one, else the target's
  `options.known_hosts`, else ~/.ssh/known_hosts) is loaded and an unknown host is refused
  (`hostkey_unknown`) unless trust-on-first-use was asked for, which accepts and records the key
  (`[host]:port alg base64`); a changed key is always refused (`hostkey_changed`).
- EOS and Onyx sessions enter enable mode (`show running-config` needs it; no config is changed).
- `run(command)` is netmiko's `send_command` with the per-command timeout as its read timeout; it
  returns a CommandResult whose exit status is 1 when the CLI rejected the command (`% Invalid
  input`, `% Unrecognized command`, `% Error`), 0 otherwise, and `timed_out` when no prompt came back.
- Session logs: `session_log_dir/<switch>.log` (netmiko's session log: what the switch printed),
  with the password masked twice — netmiko's own `no_log` filter and our writer, which replaces
  the password's bytes before anything reaches the disk.
- A `switch-config` step (commands.switch_config) is applied, read back, saved or rolled back here; reading it
  back is GIVEN to the transport (`verify=`, a `common.ReadBack`: the show command to send and a judge of its
  output), the transport itself never parses. Without one, a step that asks for a verify is refused unapplied.
- Every failure to reach a switch is a TransportError whose kind says why (dns, refused, timeout,
  auth, hostkey_unknown, hostkey_changed, unreachable, protocol); the password never appears in it.
"""

from __future__ import annotations

from roce_wizard.transports.switch.common import DEFAULT_PORT, NETMIKO_DEVICE_TYPES, known_hosts_name
from roce_wizard.transports.switch.connect import SwitchTransport
from roce_wizard.transports.switch.session import SwitchSession

__all__ = [
    "DEFAULT_PORT",
    "NETMIKO_DEVICE_TYPES",
    "SwitchSession",
    "SwitchTransport",
    "known_hosts_name",
]
