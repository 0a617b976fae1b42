"""How the wizard reaches the inventory's targets: live (as doctor) or from recorded outputs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roce_wizard.session import Setup, live_transports


@dataclass
class Connection:
    """How the wizard reaches the inventory's targets: live (as doctor) or from recorded outputs."""

    inventory: Path
    setup: Setup
    replay: Path | None = None
    known_hosts: Path | None = None
    connect_timeout: float = 10.0
    timeout: float = 60.0
    concurrency: int = 32
    reboot_timeout: float = 1200.0  # seconds a host may take to come back from a reboot
    reboot_poll: float = 5.0  # seconds between looks at a rebooting host (the practice lab: well under one)

    def transports(self, run_dir: Path) -> Any:
        if self.replay is not None:
            from roce_wizard.transports.replay import ReplayTransport  # noqa: PLC0415

            return ReplayTransport.from_file(self.replay, max_concurrent_connects=self.concurrency)
        return live_transports({t.kind for t in self.setup.targets}, known_hosts=self.known_hosts,
                               trust_on_first_use=False, concurrency=self.concurrency,
                               connect_timeout=self.connect_timeout, timeout=self.timeout, run_dir=run_dir,
                               interactive=False)
