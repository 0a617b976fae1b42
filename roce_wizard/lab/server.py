"""The lab's SSH side: one asyncssh server per ESXi host and per Linux guest, on 127.0.0.1.

Each target listens on its own ephemeral port with its own ed25519 host key and accepts one client
key, which the lab generates into its directory (``id_ed25519``, mode 0600) next to
``known_hosts`` (``[127.0.0.1]:port ssh-ed25519 …`` per target) and ``inventory.yaml`` — so that
``roce-wizard doctor -i DIR/inventory.yaml`` runs its production code path against the lab,
host key checking on.

An exec request runs its command line with the lab shell (`lab/shell.py`) over the target's
current program table (`lab/esxi.py` / `lab/guest.py`, imported on first use) and answers stdout,
stderr and the exit status. Interactive shells are refused (hosts and guests are driven by exec
requests only). A program that answers ``action="reboot"`` takes its target down: every
connection is closed, the port refuses connections for ``world.reboot_delay_s``, then the target
comes back rebooted (``World.reboot_host`` / ``reboot_guest``) on the same port with the same host
key. The guests on a rebooting ESXi host go down and come back with it.

Fault RW001 (`FAULTS` here) stops a host's sshd: its listener is closed, connects are refused.

Everything else the lab serves (switch CLIs, vCenter, BMCs) plugs in through `SERVICE_MODULES`:
each such module may define ``async def serve(lab: Lab) -> None``, which starts its servers and
calls `Lab.register` with its inventory entries, a status callback and a stop callback.

DIR/state.json (written atomically after every change of state) is what `lab status` shows: per
target its kind, state (up / down / rebooting / refusing), boot count, boot id or time, injected
faults and port, and ``ready`` once everything listens.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import os
import shlex
import socket
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncssh
import yaml

from roce_wizard.lab import faults as faults_mod
from roce_wizard.lab import shell
from roce_wizard.lab.faults import Fault
from roce_wizard.lab.proto import Ctx, Program, Reply
from roce_wizard.lab.guest import OFED_BUNDLE
from roce_wizard.lab.world import EsxiHost, Guest, World

log = logging.getLogger(__name__)

STATE_FILE = "state.json"
INVENTORY_FILE = "inventory.yaml"
KNOWN_HOSTS_FILE = "known_hosts"
CLIENT_KEY_FILE = "id_ed25519"
ROCE_PF_PCI = "0000:3b:00.0"
ROCE_VMNICS = ("vmnic2", "vmnic3")
DEFAULT_VFS = (8, 7)
# modules that serve the lab's other devices; each may define `async def serve(lab)`
SERVICE_MODULES = ("roce_wizard.lab.switch", "roce_wizard.lab.vcenter", "roce_wizard.lab.redfish")
DEVICE_MODULES = {"esxi": "roce_wizard.lab.esxi", "guest": "roce_wizard.lab.guest", "linux": "roce_wizard.lab.guest"}
ENV_FILE = "lab.env"  # the lab's credentials, for `set -a; . DIR/lab.env; set +a`
STATE_FLUSH_S = 1.0  # command-driven changes are written at most this often


# ---------------------------------------------------------------------------- the fault this module owns


def _sshd_stopped(world: World, target: str) -> None:
    world.hosts[target].faults.add("RW001")


FAULTS = {
    "RW001": Fault("RW001", "esxi", "the host's SSH service is stopped: connections are refused", _sshd_stopped),
}


# ---------------------------------------------------------------------------- what a target runs


@dataclass
class Device:
    """How to run commands on one kind of target: its programs and virtual files right now."""

    programs: Callable[[World, str], dict[str, Program]]
    files: Callable[[World, str], dict[str, str]] | None = None
    # (world, target, path, content) -> None when written, else the error text the shell prints
    write_file: Callable[[World, str, str, str], str | None] | None = None
    # paths that exist but cannot be read -> reason ("Permission denied")
    file_errors: Callable[[World, str], dict[str, str]] | None = None


def _device_for(kind: str) -> Device:
    module = importlib.import_module(DEVICE_MODULES[kind])
    return Device(
        programs=module.programs,
        files=getattr(module, "files", None),
        write_file=getattr(module, "write_file", None),
        file_errors=getattr(module, "file_errors", None),
    )


DeviceResolver = Callable[[str], Device]


# ---------------------------------------------------------------------------- endpoints


@dataclass
class Endpoint:
    """One SSH target of the lab (an ESXi host, a guest VM or a bare-metal Linux host)."""

    name: str
    kind: str  # esxi / guest / linux
    host_key: asyncssh.SSHKey
    port: int = 0
    acceptor: asyncssh.SSHAcceptor | None = None
    conns: set[asyncssh.SSHServerConnection] = field(default_factory=set)
    rebooting: bool = False
    reboot_requested: bool = False
    commands: int = 0
    # while down, the port stays bound (not listening: connects are refused) so that no other
    # program's ephemeral port takes it before the target comes back on it
    placeholder: socket.socket | None = None


@dataclass
class Service:
    """Something a service module registered: inventory entries, a status and a stop callback."""

    kind: str
    entries: list[dict[str, Any]]
    status: Callable[[], list[dict[str, Any]]] | None = None
    stop: Callable[[], Awaitable[None]] | None = None
    # brings the service's own view up to the World now (vCenter: one sync instead of its next poll)
    sync: Callable[[], Awaitable[Any]] | None = None


class _SshServer(asyncssh.SSHServer):
    def __init__(self, lab: Lab, endpoint: Endpoint):
        self.lab = lab
        self.endpoint = endpoint
        self.conn: asyncssh.SSHServerConnection | None = None

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self.conn = conn
        self.endpoint.conns.add(conn)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.conn is not None:
            self.endpoint.conns.discard(self.conn)

    def begin_auth(self, username: str) -> bool:
        return True  # authentication required: the lab's client key

    def public_key_auth_supported(self) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return False


def read_env(directory: str | Path) -> dict[str, str]:
    """The credentials a lab wrote to DIR/lab.env (what `set -a; . DIR/lab.env` would export)."""
    path = Path(directory) / ENV_FILE
    out: dict[str, str] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line and not line.startswith("#") and "=" in line:
                key, _, value = line.partition("=")
                out[key] = (shlex.split(value) or [""])[0]
    return out


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
        self.inventory = self._base_inventory()
        self.write_inventory()
        await self.sync()
        for module_name in service_modules:
            try:
                module = importlib.import_module(module_name)
            except ModuleNotFoundError as exc:
                if exc.name != module_name:
                    raise
                continue
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
            encoding="utf-8",
            errors="replace",
            allow_scp=False,
            agent_forwarding=False,
            x11_forwarding=False,
            reuse_address=True,
            server_version="OpenSSH_8.8",  # what ESXi 7.0U2's sshd reports
            # AES-GCM costs a fraction of asyncssh's per-packet chacha20 setup, on both ends (the
            # client's first choice is taken, so the lab offers only these); OpenSSH has them too
            encryption_algs=("aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "aes128-ctr", "aes256-ctr"),
            login_timeout=30,
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
        except (ImportError, AttributeError) as exc:  # lab/esxi.py or lab/guest.py missing or broken
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
            files = reload() if reload is not None else {}
            unreadable = device.file_errors(world, name) if device.file_errors is not None else None
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

    def _base_inventory(self) -> dict[str, Any]:
        policy_keys = ("pfc_priority", "roce_dscp", "trust", "eth_mtu", "switch_mtu", "roce_mtu")
        policy = {k: v for k, v in self.world.policy.items() if k in policy_keys}
        ssh_defaults = {
            "username": "root",
            "key_file": str(self.directory / CLIENT_KEY_FILE),
            "use_agent": False,
            "options": {"known_hosts": str(self.directory / KNOWN_HOSTS_FILE)},
        }
        targets: dict[str, list[dict[str, Any]]] = {"esxi": [], "guest": [], "linux": []}
        for name, host in self.world.hosts.items():
            targets["esxi"].append({
                "name": name,
                "address": self.host,
                "port": self.endpoints[name].port,
                "roce": {"pf_pci": ROCE_PF_PCI, "vmnics": list(ROCE_VMNICS), "vfs": _vfs_of(host)},
            })
        for guest in self.world.guests.values():
            entry: dict[str, Any] = {"name": guest.name, "address": self.host, "port": self.endpoints[guest.name].port}
            roce: dict[str, Any] = {"netdev": guest.roce_netdev}
            ip = _roce_ip(self.world, guest)
            if ip:
                roce["ip"] = ip
            if guest.vm is not None:
                vm = self.world.vms.get(guest.vm)
                if vm is not None:
                    entry["host"] = vm.host
                entry["vm"] = guest.vm
            else:
                roce = {"pf_pci": ROCE_PF_PCI, **roce}
            entry["roce"] = roce
            # where the operator keeps the MLNX_OFED bundle (RW401's fix installs it from there)
            entry["options"] = {"ofed_bundle": f"/tmp/{OFED_BUNDLE}-rhel8.4-x86_64.tgz"}
            targets["guest" if guest.vm is not None else "linux"].append(entry)
        targets = {k: v for k, v in targets.items() if v}
        return {
            "policy": policy,
            "defaults": {kind: dict(ssh_defaults) for kind in targets},
            "targets": targets,
        }

    def write_inventory(self) -> None:
        header = (
            f"# Written by `roce-wizard lab up` for the practice lab in {self.directory}.\n"
            f"# Every target listens on {self.host}; host keys are in known_hosts beside this file.\n"
            f"# Run: roce-wizard doctor -i {self.directory / INVENTORY_FILE}\n"
        )
        text = header + yaml.dump(self.inventory, Dumper=_InventoryDumper, sort_keys=False, width=200)
        _atomic_write(self.directory / INVENTORY_FILE, text, 0o600)

    def status(self) -> dict[str, Any]:
        rows: list[dict[str, Any]] = []
        for ep in self.endpoints.values():
            target = self._target(ep)
            if target is None:
                continue
            if ep.rebooting:
                state = "rebooting"
            elif not target.up:
                state = "down"
            elif "RW001" in target.faults:
                state = "refusing"
            else:
                state = "up" if ep.acceptor is not None else "down"
            row: dict[str, Any] = {
                "name": ep.name,
                "kind": ep.kind,
                "state": state,
                "port": ep.port,
                "boot_count": target.boot_count,
                "faults": sorted(target.faults),
                "commands": ep.commands,
            }
            if isinstance(target, EsxiHost):
                row["boot_time"] = round(target.boot_time, 3)
                row["pending_reboot"] = target.reboot_required()
                row["maintenance_mode"] = target.maintenance_mode
            else:
                row["boot_id"] = target.boot_id
            rows.append(row)
        for service in self.services:
            if service.status is not None:
                try:
                    rows.extend(service.status())
                except Exception as exc:  # noqa: BLE001
                    rows.append({"name": service.kind, "kind": service.kind, "state": f"status failed: {exc}"})
            else:
                rows.extend({"name": e.get("name"), "kind": service.kind, "state": "up", "port": e.get("port"),
                             "faults": []} for e in service.entries)
        return {
            "version": 1,
            "ready": self.ready,
            "pid": os.getpid(),
            "dir": str(self.directory),
            "scenario": self.world.scenario,
            "started": round(self.started, 3),
            "updated": round(time.time(), 3),
            "reboot_delay_s": self.world.reboot_delay_s,
            "command_delay_s": self.command_delay_s,
            "inventory": str(self.directory / INVENTORY_FILE),
            "known_hosts": str(self.directory / KNOWN_HOSTS_FILE),
            "faults": [list(f) for f in self.world.faults],
            "notes": list(self.notes),
            "targets": rows,
        }

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


# ---------------------------------------------------------------------------- helpers


class _InventoryDumper(yaml.SafeDumper):
    """Plain YAML a person can read: no &anchors, short lists of scalars inline."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    flow = all(isinstance(x, (str, int, float)) for x in data) and len(data) <= 8
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_InventoryDumper.add_representer(list, _represent_list)


def _vfs_of(host: EsxiHost) -> list[int]:
    """VFs per RoCE port as the host's nmlx5 max_vfs gives them (the scenario's intent)."""
    raw = host.module_params.get("max_vfs", "")
    try:
        entries = [int(x) for x in raw.split(",") if x.strip() != ""]
    except ValueError:
        entries = []
    order = [n.name for n in host.nmlx5_vmnics()]
    vfs = []
    for i, vmnic in enumerate(ROCE_VMNICS):
        position = order.index(vmnic) if vmnic in order else -1
        value = entries[position] if 0 <= position < len(entries) else 0
        vfs.append(value)
    if not any(vfs):
        return list(DEFAULT_VFS)
    return vfs


def _roce_ip(world: World, guest: Guest) -> str | None:
    iface = guest.interface(guest.roce_netdev)
    if iface is not None and iface.ipv4:
        return iface.ipv4[0]
    if guest.vm is None:
        return None
    # a fresh guest has no RoCE address yet: the one the healthy cluster gives it (the intent)
    from roce_wizard.lab.scenarios import WIDE_ABOVE, roce_ip  # noqa: PLC0415

    digits = "".join(ch for ch in guest.name if ch.isdigit())
    return roce_ip(int(digits), len(world.hosts) > WIDE_ABOVE) if digits else None


def _write_private(path: Path, data: bytes) -> None:
    _atomic_write(path, data.decode(), 0o600)


def _atomic_write(path: Path, text: str, mode: int = 0o644) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_state(directory: str | os.PathLike[str]) -> dict[str, Any] | None:
    """DIR/state.json, or None when there is none (yet)."""
    try:
        return json.loads((Path(directory) / STATE_FILE).read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
