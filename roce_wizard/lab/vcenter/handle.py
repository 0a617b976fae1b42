"""The running vCenter simulator, seen from the lab: sync its state into the world, poll, stop."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roce_wizard.lab.vcenter.config import LOG_FILE, log
from roce_wizard.lab.vcenter.fold import _MISSING, fold_into_world
from roce_wizard.lab.vcenter.view import Event, Path_, flatten, unflatten, vsphere_view
from roce_wizard.lab.world import World


@dataclass
class VCenterHandle:
    url: str  # https://127.0.0.1:PORT/sdk
    port: int
    ca_file: Path
    username: str
    password: str
    thumbprint: str  # SHA-1 of the server certificate, vSphere style
    directory: Path
    world_of: Callable[[], World]  # the lab may swap its World (tests reset it between faults)
    process: asyncio.subprocess.Process
    poll_interval: float = 0.25  # seconds between background syncs (0: none)
    # Who reboots the World when vCenter reboots a host. None: this handle does (World.reboot_host
    # when vCenter shows the new boot). Else it is called with the host's name as soon as vCenter
    # takes the host down, and owns the reboot (the lab: SSH down, wait, World.reboot_host, back).
    on_reboot: Callable[[str], None] | None = None
    # Called after a sync in which vCenter powered a VM off or on (its guest's `up` changed): the
    # lab makes its SSH listeners follow.
    on_vm_power: Callable[[], None] | None = None
    _world_base: dict[Path_, Any] = field(default_factory=dict, repr=False)
    _vc_base: dict[Path_, Any] = field(default_factory=dict, repr=False)
    _vc_version: int = field(default=-1, repr=False)  # the simulator's change count at _vc_base
    # handed to on_reboot and not back yet: host -> the World's boot count when it was handed over
    _reboots: dict[str, int] = field(default_factory=dict, repr=False)
    _poller: asyncio.Task | None = field(default=None, repr=False)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    @property
    def world(self) -> World:
        return self.world_of()

    # ---------------------------------------------------------------- HTTP to the simulator

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_file))

    def _request(self, method: str, path: str, body: dict | None = None) -> dict[str, Any]:
        base = self.url.rsplit("/sdk", 1)[0]
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(base + path, data=data, method=method)
        token = base64.b64encode(f"{self.username}:{self.password}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, context=self.ssl_context(), timeout=60) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"vCenter simulator {method} {path}: {exc.code} {exc.read().decode().strip()}") from exc

    def state(self, since: int | None = None) -> dict[str, Any]:
        """The simulator's current vSphere view (blocking); with `since`, just
        ``{"version": N, "unchanged": true}`` when nothing it shows changed since change count N."""
        return self._request("GET", "/lab/state" + (f"?since={since}" if since is not None else ""))

    # ---------------------------------------------------------------- sync

    async def sync(self) -> list[Event]:
        """Fold vCenter's changes into the World and send the World's changes to vCenter.

        Returns the host events vCenter showed since the last sync.
        """
        async with self._lock:
            world = self.world
            raw = await asyncio.to_thread(self.state, self._vc_version)
            if raw.get("unchanged"):
                current, vc_changes = dict(self._vc_base), {}
            else:
                current = flatten(raw)
                vc_changes = {p: v for p, v in current.items() if self._vc_base.get(p, _MISSING) != v}
            self._vc_version = int(raw.get("version", 0))
            events = fold_into_world(world, vc_changes, current)
            self._reboot_events(world, events, current)
            if self.on_vm_power is not None and any(kind.startswith("vm-") for kind, _ in events):
                self.on_vm_power()
            world_now = flatten(vsphere_view(world))
            push = {p: v for p, v in world_now.items()
                    if self._world_base.get(p, _MISSING) != v and current.get(p, _MISSING) != v}
            if push:
                await asyncio.to_thread(self._request, "POST", "/lab/update", unflatten(push))
                current.update(push)
            self._vc_base = current
            self._world_base = world_now
        return events

    def _reboot_events(self, world: World, events: list[Event], current: dict[Path_, Any]) -> None:
        for kind, name in events:
            host = world.hosts.get(name)
            if host is None:
                continue
            vc_boots = int(current.get(("hosts", name, "boot_count")) or 0)
            if self.on_reboot is None:
                if kind == "booted" and vc_boots > host.boot_count:
                    world.reboot_host(host, now=current.get(("hosts", name, "boot_time")) or time.time())
                    host.boot_count = vc_boots
                    host.up = bool(current.get(("hosts", name, "connected"), True))
                elif kind in ("down", "up"):
                    host.up = kind == "up"
            # a reboot vCenter started (the host went down while the world still has it up), or a boot
            # vCenter counted that the world has not had; not a boot the world pushed and vCenter echoed
            elif name not in self._reboots and ((kind == "down" and host.up and vc_boots >= host.boot_count)
                                                or (kind == "booted" and vc_boots > host.boot_count)):
                self._reboots[name] = host.boot_count
                self.on_reboot(name)
        # a reboot handed to the lab is over when the World has booted as often as vCenter says;
        # vCenter's boot time then stands for both (one boot, one boot time)
        # (and has booted since it was handed over: right after the hand-off it is still up on the old boot)
        for name, handed_at in list(self._reboots.items()):
            host = world.hosts.get(name)
            vc_boots = int(current.get(("hosts", name, "boot_count")) or 0)
            if host is None:
                del self._reboots[name]
            elif host.up and host.boot_count > handed_at and host.boot_count >= vc_boots and vc_boots > 0:
                if host.boot_count == vc_boots:
                    host.boot_time = current.get(("hosts", name, "boot_time")) or host.boot_time
                del self._reboots[name]

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(self.poll_interval)
            if self.process.returncode is not None:
                log.error("the vCenter simulator exited (%s); see %s", self.process.returncode,
                          self.directory / LOG_FILE)
                return
            try:
                await self.sync()
            except Exception as exc:  # noqa: BLE001 - keep the lab up; the next poll retries
                log.warning("vCenter sync failed: %s", exc)

    def status_rows(self) -> list[dict[str, Any]]:
        """`lab status` rows."""
        rc = self.process.returncode
        return [{
            "name": "vcenter",
            "kind": "vcenter",
            "state": "up" if rc is None else f"exited ({rc})",
            "port": self.port,
            "url": self.url,
            "faults": sorted(code for code, target in self.world.faults if target == "vcenter"),
        }]

    async def stop(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poller
            self._poller = None
        if self.process.returncode is None:
            if self.process.stdin is not None:
                self.process.stdin.close()
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()
            try:
                await asyncio.wait_for(self.process.wait(), 10)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    self.process.kill()
                await self.process.wait()
        if self.world.vcenter is not None:
            self.world.vcenter.port = 0
