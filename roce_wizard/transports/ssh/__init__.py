"""SSH transport for ESXi hosts, Linux hosts and Linux guests (asyncssh).

- Host keys are checked against known_hosts (default ``~/.ssh/known_hosts``); an unknown host and a
  host whose key changed are refused with different, actionable errors. ``trust_on_first_use`` only
  accepts hosts known_hosts says nothing about, and records their key (``[host]:port`` form).
- One connection per target (address, port, user) per transport; concurrent callers share it.
  A semaphore bounds how many connects run at once.
- Every command has a timeout; a command that times out, or exits non-zero, is a result, not an
  exception. Only a lost connection raises (`TransportError`: kind ``dropped`` with the command that
  was running when it closed, ``unreachable`` when it was gone before the command started).
- Passwords come from ``password_resolver(target)`` and never appear in messages or logs.

Commands are strings run by the remote shell: build them with `quote` / `validate_token` for every
value that comes from the inventory.
"""

from __future__ import annotations

from roce_wizard.transports.ssh.connect import SshTransport
from roce_wizard.transports.ssh.known_hosts import DEFAULT_KNOWN_HOSTS, DEFAULT_PORT, known_hosts_name
from roce_wizard.transports.ssh.session import SshSession
from roce_wizard.transports.ssh.tokens import TOKEN_PATTERNS, quote, validate_token

__all__ = [
    "DEFAULT_KNOWN_HOSTS",
    "DEFAULT_PORT",
    "TOKEN_PATTERNS",
    "SshSession",
    "SshTransport",
    "known_hosts_name",
    "quote",
    "validate_token",
]
