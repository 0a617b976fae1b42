"""The running lab: its SSH servers, services, reboots, faults and the state it writes."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import shlex
import socket
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import asyncssh
import yaml

from roce_wizard.lab import faults as faults_mod
from roce_wizard.lab import shell
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.server.config import (
    CLIENT_KEY_FILE,
    ENV_FILE,
    INVENTORY_FILE,
    KNOWN_HOSTS_FILE,
    SERVICE_MODULES,
    SSHD_OPTIONS,
    STATE_FILE,
    STATE_FLUSH_S,
    log,
)
from roce_wizard.lab.server.endpoints import Device, DeviceResolver, Endpoint, Service, _device_for, _SshServer
from roce_wizard.lab.server.files import _atomic_write, _InventoryDumper, _write_private
from roce_wizard.lab.server.lazy import LazyFiles
from roce_wizard.lab.server.views import base_inventory, lab_status
from roce_wizard.lab.world import EsxiHost, Guest, World


class Lab:
    """A running practice lab. `await Lab.start(world, directory)`, then `await lab.stop()`."""

    def __init__(
        self,
        world: World,
        directory: Path,
        *,
        host: str = "127.0.0.1",
        command_delay_s: float = 0.0,
        devices: DeviceResolver | None = None,
    ):
        self.world = world
        self.directory = Path(directory)
        self.host = host
        self.command_delay_s = command_delay_s
        self._devices = devices or _device_for
        self._device_cache: dict[str, Device] = {}
        self.endpoints: dict[str, Endpoint] = {}
        self.services: list[Service] = []
        self.notes: list[str] = []  # what the lab could not start ("no Go: no vCenter")
        self.secrets: dict[str, str] = {}  # env var -> credential, mirrored in DIR/lab.env
        self.client_key: asyncssh.SSHKey | None = None
        self.inventory: dict[str, Any] = {}
        self.started = time.time()
        self.ready = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._sync_lock = asyncio.Lock()  # reboots, power changes and faults all sync the listeners
        self._dirty = False
        self._flusher: asyncio.Task[None] | None = None
        self._stopped = False

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def start(
        cls,
        world: World,
        directory: str | os.PathLike[str],
        *,
        host: str = "127.0.0.1",
        command_delay_s: float = 0.0,
        devices: DeviceResolver | None = None,
        services: Iterable[str] | None = None,
    ) -> Lab:
        """Start every SSH target of `world` and the service modules found (`services`: module
        names, default `SERVICE_MODULES`; ``()`` for none), write the directory's files."""
        lab = cls(world, Path(directory), host=host, command_delay_s=command_delay_s, devices=devices)
        lab.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            await lab._start(SERVICE_MODULES if services is None else tuple(services))
        except BaseException:
            await lab.stop()
            raise
        return lab

    async def _start(self, service_modules: tuple[str, ...]) -> None:
        self.client_key = asyncssh.generate_private_key("ssh-ed25519", comment="roce-wizard lab client")
        key_path = self.directory / CLIENT_KEY_FILE
        _write_private(key_path, self.client_key.export_private_key("openssh"))
        _write_private(key_path.with_suffix(".pub"), self.client_key.export_public_key("openssh"))
        self._authorized = asyncssh.import_authorized_keys(self.client_key.export_public_key("openssh").decode())
        for name in self.world.hosts:
            self.endpoints[name] = Endpoint(name, "esxi", asyncssh.generate_private_key("ssh-ed25519"))
        for guest in self.world.guests.values():
            kind = "guest" if guest.vm is not None else "linux"
            self.endpoints[guest.name] = Endpoint(guest.name, kind, asyncssh.generate_private_key("ssh-ed25519"))
        # bind every port first (the known_hosts and inventory need them), refusing ones closed after
        await asyncio.gather(*(self._listen(ep) for ep in self.endpoints.values()))
        self.write_known_hosts()
        self.inventory = base_inventory(self)
        self.write_inventory()
        await self.sync()
        for module_name in service_modules:
            module = importlib.import_module(module_name)
            serve = getattr(module, "serve", None)
            if serve is not None:
                await serve(self)
        self.ready = True
        self._flusher = asyncio.ensure_future(self._flush_loop())
        self.save_state()

    async def stop(self) -> None:
        """Close every listener and connection, stop the services, mark the state stopped."""
        if self._stopped:
            return
        self._stopped = True
        self.ready = False
        for task in list(self._tasks):
            task.cancel()
        if self._flusher is not None:
            self._flusher.cancel()
        await asyncio.gather(*self._tasks, *( [self._flusher] if self._flusher else []), return_exceptions=True)
        for service in reversed(self.services):
            if service.stop is not None:
                try:
                    await service.stop()
                except Exception:  # noqa: BLE001 - stopping must go on
                    log.exception("stopping a %s service failed", service.kind)
        await asyncio.gather(*(self._close(ep) for ep in self.endpoints.values()), return_exceptions=True)
        for ep in self.endpoints.values():  # stopped for good: release the ports
            if ep.placeholder is not None:
                ep.placeholder.close()
                ep.placeholder = None
        try:
            self.save_state(stopped=True)
        except OSError:
            pass

    async def __aenter__(self) -> Lab:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ------------------------------------------------------------------ extension point

    def register(
        self,
        kind: str,
        entries: list[dict[str, Any]],
        *,
        status: Callable[[], list[dict[str, Any]]] | None = None,
        stop: Callable[[], Awaitable[None]] | None = None,
        defaults: dict[str, Any] | None = None,
        sync: Callable[[], Awaitable[Any]] | None = None,
    ) -> None:
        """Add targets another lab module serves (switch, vcenter, bmc) to inventory.yaml.

        `entries` are inventory entries as inventory.yaml spells them (name, address, port,
        device_type, username, password…); `defaults` become ``defaults.<kind>``. `status()`
        returns rows for `lab status` ({name, kind, state, port, faults, …}); `stop()` is awaited
        when the lab stops; `sync()` is awaited after a fault or a reset (the service then shows the World). Rewrites inventory.yaml and state.json at once.
        """
        self.services.append(Service(kind, entries, status, stop, sync))
        targets = self.inventory.setdefault("targets", {})
        targets.setdefault(kind, []).extend(entries)
        if defaults:
            self.inventory.setdefault("defaults", {}).setdefault(kind, {}).update(defaults)
        self.write_inventory()
        self.save_state()

    def secret(self, env_name: str, value: str) -> None:
        """A credential the inventory references as ``{env: env_name}``: kept in DIR/lab.env (0600,
        `KEY='value'` lines a shell can source), never in inventory.yaml, state.json or a note."""
        self.secrets[env_name] = value
        path = Path(self.directory) / ENV_FILE
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("# credentials of this practice lab: set -a; . ./lab.env; set +a\n")
            for key, val in sorted(self.secrets.items()):
                fh.write(f"{key}={shlex.quote(val)}\n")
        os.chmod(path, 0o600)

    def note(self, message: str) -> None:
        """Say something to the person running the lab (printed by `lab up`, kept in state.json)."""
        self.notes.append(message)
        self.save_state()

    # ------------------------------------------------------------------ listeners

    def _target(self, ep: Endpoint) -> EsxiHost | Guest | None:
        return self.world.hosts.get(ep.name) if ep.kind == "esxi" else self.world.guests.get(ep.name)

    def _should_listen(self, ep: Endpoint) -> bool:
        target = self._target(ep)
        return target is not None and target.up and not ep.rebooting and "RW001" not in target.faults

    async def _listen(self, ep: Endpoint) -> None:
        if ep.acceptor is not None:
            return
        if ep.placeholder is not None:
            ep.placeholder.close()
            ep.placeholder = None
        ep.acceptor = await asyncssh.create_server(
            lambda: _SshServer(self, ep),
            self.host,
            ep.port,
            server_host_keys=[ep.host_key],
            authorized_client_keys=self._authorized,
            process_factory=lambda process: self._handle(ep, process),
            **SSHD_OPTIONS,
            server_version="OpenSSH_8.8",  # what ESXi 7.0U2's sshd reports
            # AES-GCM costs a fraction of asyncssh's per-packet chacha20 setup, on both ends (the
            # client's first choice is taken, so the lab offers only these); OpenSSH has them too
            encryption_algs=("aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "aes128-ctr", "aes256-ctr"),
        )
        ep.port = ep.acceptor.sockets[0].getsockname()[1]
        target = self._target(ep)
        if target is not None:
            target.ssh_port = ep.port

    async def _close(self, ep: Endpoint) -> None:
        acceptor, ep.acceptor = ep.acceptor, None
        if acceptor is not None:
            acceptor.close()
        for conn in list(ep.conns):
            conn.close()
        ep.conns.clear()
        if acceptor is not None:
            try:
                await asyncio.wait_for(acceptor.wait_closed(), 5)
            except (TimeoutError, OSError):
                pass
            if ep.port and ep.placeholder is None:
                hold = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                hold.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    hold.bind((self.host, ep.port))
                    ep.placeholder = hold
                except OSError:
                    hold.close()

    async def sync(self) -> None:
        """Make listeners follow the world: down, rebooting and RW001 targets refuse connections."""
        async with self._sync_lock:  # two syncs at once would both bind a target's port
            for ep in self.endpoints.values():
                if self._should_listen(ep):
                    await self._listen(ep)
                elif ep.acceptor is not None:
                    await self._close(ep)
        self.save_state()

    # ------------------------------------------------------------------ faults and worlds

    async def sync_services(self) -> None:
        """Await every service's sync (vCenter folds the World in), so callers need not wait for a poll."""
        for service in self.services:
            if service.sync is not None:
                try:
                    await service.sync()
                except Exception:  # noqa: BLE001 - as its poller does: the lab stays up, the next poll retries
                    log.exception("syncing the %s service failed", service.kind)

    async def inject(self, spec: str) -> tuple[str, str]:
        """Inject a fault (`CODE[@TARGET]`) into the running lab; returns (code, target) once every listener
        and every service (vCenter included) shows it."""
        code, target = faults_mod.inject(self.world, spec)
        await self.sync()
        await self.sync_services()
        return code, target

    async def reset(self, world: World) -> None:
        """Swap in another world with the same targets (tests: back to healthy between faults).
        Ports and host keys stay; connections are closed (the machines changed under them)."""
        names = set(world.hosts) | set(world.guests)
        if names != set(self.endpoints):
            raise ValueError(f"reset needs the same targets: {sorted(names ^ set(self.endpoints))} differ")
        for task in list(self._tasks):  # reboots under way belong to the old world
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for ep in self.endpoints.values():
            ep.rebooting = False
            for conn in list(ep.conns):
                conn.close()
            target = world.hosts.get(ep.name) if ep.kind == "esxi" else world.guests.get(ep.name)
            if target is not None:
                target.ssh_port = ep.port
        self.world = world
        self._device_cache.clear()
        await self.sync()
        await self.sync_services()

    # ------------------------------------------------------------------ commands

    def device(self, kind: str) -> Device:
        if kind not in self._device_cache:
            self._device_cache[kind] = self._devices(kind)
        return self._device_cache[kind]

    def run_command(self, name: str, line: str) -> Reply:
        """Run a command line on a target as its sshd would (no SSH; tests and tools use it too)."""
        ep = self.endpoints[name]
        world = self.world
        try:
            device = self.device(ep.kind)
        except (ImportError, AttributeError) as exc:  # lab/esxi/ or lab/guest/ missing or broken
            self._device_cache.pop(ep.kind, None)
            return Reply(stderr=f"sh: lab: this target's programs are not available ({exc})\n", exit=127)
        writer = reload = None
        if device.write_file is not None:
            write = device.write_file

            def writer(path: str, content: str) -> str | None:
                return write(world, name, path, content)

        if device.files is not None:
            files_of = device.files

            def reload() -> dict[str, str]:
                return files_of(world, name)

        try:
            # built on first use only (most lines read no file): see lazy.py
            files: Any = LazyFiles(reload) if reload is not None else {}
            unreadable: Any = None
            if device.file_errors is not None:
                errors_of = device.file_errors
                unreadable = LazyFiles(lambda: errors_of(world, name))
            ctx = Ctx(world=world, target=name, files=files)
            reply = shell.run(line, ctx, device.programs(world, name), write_file=writer, esxi=ep.kind == "esxi",
                              unreadable=unreadable, reload_files=reload if writer is not None else None)
        except Exception as exc:  # a simulator bug must show up as a failing command, not a dead lab
            log.exception("%s: %r crashed", name, line)
            reply = Reply(stderr=f"sh: lab internal error: {type(exc).__name__}: {exc}\n", exit=70)
        ep.commands += 1
        self._dirty = True
        return reply

    async def _handle(self, ep: Endpoint, process: asyncssh.SSHServerProcess[str]) -> None:
        line = process.command
        if line is None:
            process.stderr.write("roce-wizard lab: this target answers commands only (ssh HOST 'command')\n")
            process.exit(1)
            return
        if self.command_delay_s > 0:
            await asyncio.sleep(self.command_delay_s)
        reply = self.run_command(ep.name, line)
        delay = float(getattr(reply, "delay_s", 0.0) or 0.0)
        if delay > 0:
            await asyncio.sleep(delay)
        try:
            if reply.stdout:
                process.stdout.write(reply.stdout)
            if reply.stderr:
                process.stderr.write(reply.stderr)
            process.exit(reply.exit)
        except (OSError, asyncssh.Error):
            pass  # the client went away
        if reply.action == "reboot":
            self._spawn(self.reboot(ep.name))
        elif reply.action:
            log.warning("%s: unknown action %r", ep.name, reply.action)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ reboots

    async def reboot(self, name: str) -> None:
        """Take a target down (and an ESXi host's guests with it), wait, bring it back rebooted."""
        ep = self.endpoints[name]
        if ep.rebooting or ep.reboot_requested:
            return
        ep.reboot_requested = True  # a second request during the pause below is the same reboot
        group = [ep]
        if ep.kind == "esxi":
            for guest in self.world.guests.values():
                vm = self.world.vms.get(guest.vm or "")
                # a powered-off VM stays off across its host's reboot (no new guest boot)
                if vm is not None and vm.host == name and vm.powered_on and guest.name in self.endpoints:
                    group.append(self.endpoints[guest.name])
        await asyncio.sleep(0.05)  # let the answer that asked for the reboot reach the client
        ep.reboot_requested = False
        for member in group:
            member.rebooting = True
            target = self._target(member)
            if target is not None:
                target.up = False
            await self._close(member)
        self.save_state()
        await asyncio.sleep(self.world.reboot_delays.get(name, self.world.reboot_delay_s))
        for member in group:
            target = self._target(member)
            if isinstance(target, EsxiHost):
                self.world.reboot_host(target)
            elif isinstance(target, Guest):
                self.world.reboot_guest(target)
            if target is not None:
                target.up = True
            member.rebooting = False
        await self.sync()

    # ------------------------------------------------------------------ files

    def write_known_hosts(self) -> None:
        lines = []
        for ep in self.endpoints.values():
            alg, blob = ep.host_key.export_public_key("openssh").decode().split()[:2]
            name = self.host if ep.port == 22 else f"[{self.host}]:{ep.port}"
            lines.append(f"{name} {alg} {blob} {ep.name}\n")
        _atomic_write(self.directory / KNOWN_HOSTS_FILE, "".join(lines), 0o600)

    def write_inventory(self) -> None:
        header = (
            f"# Written by `roce-wizard lab up` for the practice lab in {self.directory}.\n"
            f"# Every target listens on {self.host}; host keys are in known_hosts beside this file.\n"
            f"# Run: roce-wizard doctor -i {self.directory / INVENTORY_FILE}\n"
        )
        text = header + yaml.dump(self.inventory, Dumper=_InventoryDumper, sort_keys=False, width=200)
        _atomic_write(self.directory / INVENTORY_FILE, text, 0o600)

    def status(self) -> dict[str, Any]:
        return lab_status(self)

    def save_state(self, stopped: bool = False) -> None:
        data = self.status()
        if stopped:
            data["ready"] = False
            data["stopped"] = True
        _atomic_write(self.directory / STATE_FILE, json.dumps(data, indent=2) + "\n", 0o600)
        self._dirty = False

    async def _flush_loop(self) -> None:
        while True:
            await asyncio.sleep(STATE_FLUSH_S)
            if self._dirty:
                try:
                    self.save_state()
                except OSError:
                    log.exception("cannot write %s", self.directory / STATE_FILE)
