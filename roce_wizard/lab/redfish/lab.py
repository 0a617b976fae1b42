"""The lab's BMCs: one Redfish endpoint per server, started and registered with the running lab."""

from __future__ import annotations

import asyncio
import hmac
import inspect
import os
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from roce_wizard.lab.redfish.bmc import Bmc
from roce_wizard.lab.redfish.http import log
from roce_wizard.lab.redfish.tls import _server_context, write_certificates
from roce_wizard.lab.redfish.vendors import CA_FILE, PASSWORD_ENV, USERNAME, bmc_name
from roce_wizard.lab.world import World

# ---------------------------------------------------------------------------- the lab's BMCs


class BmcHandle:
    """All the BMCs of a lab: ports, the CA to trust, the password, and how to stop them."""

    def __init__(self, world: World | Callable[[], World], directory: Path,
                 on_reset: Callable[[str], Any] | None, username: str, password: str):
        self._world_source = world if callable(world) else (lambda: world)
        self.directory = directory
        self.on_reset = on_reset
        self.username = username
        self.password = password
        self.bmcs: dict[str, Bmc] = {}  # by ESXi host name
        self.ca_file = directory / CA_FILE
        self.resets: list[str] = []  # hosts reset through their BMC, in order
        self._tasks: set[asyncio.Task[Any]] = set()
        self._last_jid = 0

    def new_job_id(self) -> str:
        """iDRAC-style JID_ + 12 digits (time-derived like iDRAC's), unique across the lab."""
        self._last_jid = max(self._last_jid + 1, int(time.time() * 1000) % 10**12)
        return f"JID_{self._last_jid:012d}"

    @property
    def world(self) -> World:
        """The world the BMCs show: read on every request (the lab may swap in another one)."""
        return self._world_source()

    @property
    def ports(self) -> dict[str, int]:
        """ESXi host name -> its BMC's port."""
        return {h: b.port for h, b in self.bmcs.items()}

    def url(self, host: str) -> str:
        return f"https://127.0.0.1:{self.bmcs[host].port}"

    def env(self, env_name: str = PASSWORD_ENV) -> dict[str, str]:
        """The environment a roce-wizard run against this lab needs for its BMC password."""
        return {env_name: self.password}

    def check_password(self, user: str, password: str) -> bool:
        ok_user = hmac.compare_digest(user.encode(), self.username.encode())
        ok_password = hmac.compare_digest(password.encode(), self.password.encode())
        return ok_user and ok_password

    def inventory_entries(self, env_name: str = PASSWORD_ENV) -> list[dict[str, Any]]:
        return [inventory_entry(h, b.port, self.ca_file, env_name, username=self.username)
                for h, b in self.bmcs.items()]

    def describe(self) -> dict[str, dict[str, Any]]:
        """Per host: its BMC's port, vendor, staged and pending BIOS values, and jobs."""
        return {h: b.describe() for h, b in self.bmcs.items()}

    def status_rows(self) -> list[dict[str, Any]]:
        """Rows for `lab status`: one per BMC."""
        world = self.world
        rows = []
        for host_name, bmc in self.bmcs.items():
            info = bmc.describe()
            host = world.hosts.get(host_name)
            rows.append({
                "name": info["name"],
                "kind": "bmc",
                "state": "up" if bmc.server is not None else "down",
                "port": info["port"],
                "host": host_name,
                "server": "on" if host is None or host.up else "rebooting",
                "vendor": info["vendor"],
                "faults": sorted(code for code, target in world.faults if target == info["name"]),
                "bios_staged": info["staged"],
                "bios_pending": info["pending"],
                "jobs": info["jobs"],
            })
        return rows

    def reset(self, host: str) -> None:
        """A Reset action reboots the server: the runtime's on_reset, else the world at once."""
        self.resets.append(host)
        loop = asyncio.get_running_loop()
        loop.call_soon(self._run_reset, host)  # after the 204 went out, like a real BMC

    def _run_reset(self, host: str) -> None:
        try:
            if self.on_reset is None:
                self.world.reboot_host(self.world.hosts[host])
                return
            result = self.on_reset(host)
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._tasks.add(task)
                task.add_done_callback(self._reset_done)
        except Exception:
            log.exception("on_reset(%s) failed", host)

    def _reset_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("on_reset failed", exc_info=task.exception())

    async def stop(self) -> None:
        await asyncio.gather(*(b.stop() for b in self.bmcs.values()))
        for task in list(self._tasks):
            task.cancel()

    async def __aenter__(self) -> BmcHandle:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


def inventory_entry(host: str, port: int, ca_file: str | os.PathLike[str], env_name: str = PASSWORD_ENV, *,
                    username: str = USERNAME) -> dict[str, Any]:
    """The inventory's `bmc` entry for the BMC of ESXi host `host` (password by env var, TLS verified)."""
    return {
        "name": bmc_name(host),
        "address": "127.0.0.1",
        "port": port,
        "host": host,
        "username": username,
        "password": {"env": env_name},
        "options": {"ca_file": str(ca_file)},
    }


async def start_bmcs(world: World | Callable[[], World], directory: str | os.PathLike[str],
                     on_reset: Callable[[str], Any] | None = None, *, username: str = USERNAME,
                     password: str | None = None) -> BmcHandle:
    """Start one Redfish BMC per ESXi host of `world` on 127.0.0.1 (ephemeral ports).

    `world` may be a callable returning the current world (a lab that swaps worlds in place).
    Writes the lab CA, the server certificate and its key into `directory`. `on_reset(host_name)`
    (plain or async) is called when a client resets a server; it must reboot the host the way the
    lab does (SSH side down for a while, then ``world.reboot_host``). Without it the world is
    rebooted at once. `password` defaults to a fresh random one (``handle.password``).
    """
    out = Path(directory)
    _, cert_file, key_file = write_certificates(out)
    context = _server_context(cert_file, key_file)
    handle = BmcHandle(world, out, on_reset, username, password or secrets.token_urlsafe(18))
    for name in handle.world.hosts:
        handle.bmcs[name] = Bmc(handle, name)
    try:
        await asyncio.gather(*(b.start(context) for b in handle.bmcs.values()))
    except BaseException:
        await handle.stop()
        raise
    return handle


async def serve(lab: Any) -> None:
    """The lab runtime's hook (`lab/server/` SERVICE_MODULES): start the BMCs, register them.

    Reset actions go through ``lab.reboot`` (SSH side down for the reboot delay, then the world's
    reboot). The password goes to DIR/lab.env (Lab.secret); the inventory reads it from
    $ROCE_LAB_BMC_PASSWORD.
    """
    if not lab.world.hosts:  # BMCs model the ESXi servers' BIOS; bare-metal nodes have none in the lab
        return
    handle = await start_bmcs(lambda: lab.world, lab.directory, on_reset=lab.reboot)
    lab.secret(PASSWORD_ENV, handle.password)
    lab.register("bmc", handle.inventory_entries(), status=handle.status_rows, stop=handle.stop)
