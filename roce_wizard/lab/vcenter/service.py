"""Starting the lab's vCenter and registering it with the running lab."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from roce_wizard.lab.vcenter.build import build_vcsim, go_problem
from roce_wizard.lab.vcenter.config import (
    CA_FILE,
    ENV_FILE,
    LOG_FILE,
    PASSWORD_ENV,
    STATE_FILE,
    USERNAME,
    VCenterUnavailable,
)
from roce_wizard.lab.vcenter.handle import VCenterHandle
from roce_wizard.lab.vcenter.view import flatten, vsphere_view
from roce_wizard.lab.world import VCenter, World


def _write_env(path: Path, values: dict[str, str]) -> None:
    """Merge KEY=value lines into an env file only its owner can read."""
    lines: dict[str, str] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            key, sep, value = line.partition("=")
            if sep and key.strip():
                lines[key.strip()] = value
    lines.update(values)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write("".join(f"{k}={v}\n" for k, v in lines.items()))
    os.chmod(path, 0o600)


async def start_vcenter(world: World, directory: Path, *, binary: Path | None = None,
                        cache_dir: Path | None = None, poll_interval: float | None = None,
                        world_of: Callable[[], World] | None = None,
                        on_reboot: Callable[[str], None] | None = None,
                        write_env: bool = True, start_timeout: float = 120) -> VCenterHandle:
    """Build (once) and start the simulator for this world; raise VCenterUnavailable without Go.

    With ``poll_interval`` > 0 a background task syncs World and vCenter that often (default:
    every 0.25 s, less often in large labs: reading the World's view costs ~0.1 ms per host);
    with 0, call ``handle.sync()`` yourself. ``world_of`` returns the current World when the caller may
    replace it; ``on_reboot``: see `VCenterHandle`. ``write_env``: merge the password into
    DIR/lab.env (the lab's runtime keeps that file itself: `Lab.secret`).
    """
    if binary is None:
        binary = await asyncio.to_thread(build_vcsim, cache_dir)
        if binary is None:
            raise VCenterUnavailable(f"{go_problem() or 'no Go'}: the lab runs without vCenter")
    if poll_interval is None:
        poll_interval = max(0.25, len(world.hosts) / 128)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    if world.vcenter is None:
        world.vcenter = VCenter()
    state = directory / STATE_FILE
    view = vsphere_view(world)
    with tempfile.NamedTemporaryFile("w", dir=directory, delete=False, suffix=".tmp") as tmp:
        json.dump(view, tmp, indent=1)
    os.replace(tmp.name, state)
    password = secrets.token_urlsafe(18)
    if write_env:
        _write_env(directory / ENV_FILE, {PASSWORD_ENV: password})
    ca_file = directory / CA_FILE
    log_fd = os.open(directory / LOG_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        process = await asyncio.create_subprocess_exec(
            str(binary), "-l", "127.0.0.1:0", "-state", str(state), "-ca", str(ca_file),
            "-username", USERNAME, "-stdin-exit",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=log_fd,
            env={**os.environ, "ROCE_WIZARD_VCSIM_PASSWORD": password},
        )
    finally:
        os.close(log_fd)
    try:
        ready = await asyncio.wait_for(_ready_line(process), start_timeout)
    except (TimeoutError, VCenterUnavailable) as exc:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        tail = "\n".join((directory / LOG_FILE).read_text(errors="replace").strip().splitlines()[-15:])
        why = "did not become ready in time" if isinstance(exc, TimeoutError) else str(exc)
        raise VCenterUnavailable(f"the vCenter simulator {why}; its log ({directory / LOG_FILE}):\n{tail}") from exc
    handle = VCenterHandle(
        url=ready["url"], port=int(ready["port"]), ca_file=Path(ready["ca_file"]), username=USERNAME,
        password=password, thumbprint=ready["thumbprint"], directory=directory,
        world_of=world_of or (lambda: world), process=process, poll_interval=poll_interval, on_reboot=on_reboot,
    )
    world.vcenter.port = handle.port
    first = await asyncio.to_thread(handle.state)
    handle._vc_base, handle._vc_version = flatten(first), int(first.get("version", 0))
    handle._world_base = flatten(view)
    if poll_interval > 0:
        handle._poller = asyncio.get_running_loop().create_task(handle._poll(), name="vcenter-sync")
    return handle


async def serve(lab: Any) -> None:
    """The lab runtime's hook (`lab/server/` SERVICE_MODULES): vCenter, when Go is here.

    vCenter's host reboots go through the lab's own reboot (`Lab.reboot`: SSH down, the host's
    guests with it, World.reboot_host after the reboot delay), so both views see one reboot.
    """
    if not lab.world.hosts:  # a bare-metal-only lab: nothing for a vCenter to manage, no vcsim needed
        return
    reboots: set[asyncio.Task] = set()

    def on_reboot(name: str) -> None:
        task = asyncio.ensure_future(lab.reboot(name))
        reboots.add(task)
        task.add_done_callback(reboots.discard)

    try:
        handle = await start_vcenter(lab.world, lab.directory, world_of=lambda: lab.world, on_reboot=on_reboot,
                                     write_env=False)
    except VCenterUnavailable as exc:
        lab.note(f"vCenter is not running: {exc}")
        return
    lab.secret(PASSWORD_ENV, handle.password)
    handle.on_vm_power = lambda: lab._spawn(lab.sync())

    async def stop() -> None:
        for task in list(reboots):
            task.cancel()
        await handle.stop()

    lab.register("vcenter", [inventory_entry(handle)], status=handle.status_rows, stop=stop, sync=handle.sync)
    lab.note(f"vCenter: {handle.url} as {handle.username} (password ${PASSWORD_ENV} in "
             f"{handle.directory / ENV_FILE}), TLS verified with {handle.ca_file}")


async def _ready_line(process: asyncio.subprocess.Process) -> dict[str, Any]:
    assert process.stdout is not None
    while True:
        line = await process.stdout.readline()
        if not line:
            raise VCenterUnavailable(f"exited with status {await process.wait()} before serving")
        text = line.decode(errors="replace").strip()
        if text.startswith("{"):
            ready = json.loads(text)
            if "url" in ready:
                return ready


def inventory_entry(handle: VCenterHandle) -> dict[str, Any]:
    """The lab's vcenter target for inventory.yaml (the password by reference, TLS verified)."""
    return {
        "name": "vcenter",
        "address": "127.0.0.1",
        "port": handle.port,
        "username": handle.username,
        "password": {"env": PASSWORD_ENV},
        "options": {"ca_file": str(handle.ca_file)},
    }
