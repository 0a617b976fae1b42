"""The lab's vCenter: govmomi's simulator extended by a small Go program (``lab/vcsim/``).

``build_vcsim`` compiles that program on first use (pinned to govmomi v0.46.3; modules come from
the Go module proxy) into the user's cache directory, keyed by a hash of its sources and the Go
version, so later labs start at once. Without Go the lab runs without vCenter and says why
(``VCenterUnavailable``).

``start_vcenter`` writes the world's vSphere view to ``DIR/vcenter-state.json`` (the inventory
the simulator builds: a datacenter, one cluster, the ESXi hosts with their ConnectX PFs and SR-IOV
state, the compute VMs with or without a VF, the VDS), starts the simulator on 127.0.0.1 with an
ephemeral port and waits for its ready line. TLS stays verified: the simulator signs its server
certificate with a CA made for this lab and writes the CA to ``DIR/vcenter-ca.pem``, which the
inventory names as ``options.ca_file``. The password is random per lab; the simulator gets it in
its environment, the inventory by reference (``password: {env: ROCE_LAB_VCENTER_PASSWORD}``),
and ``DIR/lab.env`` (mode 0600) holds ``ROCE_LAB_VCENTER_PASSWORD=…`` for a shell to source
(``set -a; . DIR/lab.env; set +a``) before running ``roce-wizard doctor -i DIR/inventory.yaml``.

World and vCenter stay in step both ways (``VCenterHandle.sync``, also run every
``poll_interval`` seconds): what a vSphere client changed (SR-IOV VF counts, power policy,
maintenance mode, VM devices and reservations, the VDS, host reboots) is folded into the World,
and what changed in the World (a host rebooted over SSH, a power policy set with esxcli, VIBs
waiting for a reboot) is sent to the simulator. It is a three-way merge against what each side
showed at the last sync, so neither side overwrites a change it did not see. Inside the lab
(``serve``, the hook `lab/server.py` calls) a host vCenter reboots goes through ``Lab.reboot``, so
SSH, guests and vCenter see one reboot with one boot time.

Faults RW301-RW307 (kind ``vcenter``) land on the second host (esx-02) or its VM (compute-02):
SR-IOV off on its RoCE PF, the host out of the VDS, VDS maxMtu 1500, no VF on the VM, memory not
reserved, latency sensitivity normal, power policy Balanced.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roce_wizard.lab.faults import Fault
from roce_wizard.lab.world import Card, EsxiHost, VCenter, World

log = logging.getLogger("roce_wizard.lab.vcenter")

VCSIM_SOURCE = Path(__file__).with_name("vcsim")
SOURCE_FILES = ("main.go", "go.mod", "go.sum")
MIN_GO = (1, 22)  # govmomi v0.46.3's go.mod says `go 1.22`
BINARY = "roce-wizard-vcsim"

PASSWORD_ENV = "ROCE_LAB_VCENTER_PASSWORD"  # the inventory's password reference
USERNAME = "administrator@vsphere.local"
STATE_FILE = "vcenter-state.json"
CA_FILE = "vcenter-ca.pem"
LOG_FILE = "vcenter.log"
ENV_FILE = "lab.env"
DATACENTER = "RoCE-DC"
CLUSTER = "RoCE-Cluster"
DATASTORE = "datastore1"

# lspci names vSphere shows for the PFs (by mst device type)
PCI_DEVICE_NAMES = {
    "ConnectX5": "MT27800 Family [ConnectX-5]",
    "ConnectX4LX": "MT27710 Family [ConnectX-4 Lx]",
}


class VCenterUnavailable(RuntimeError):
    """The lab cannot run vCenter here (no Go, Go too old, the simulator did not start)."""


# ------------------------------------------------------------------------------ building


def default_cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("roce-wizard")) / "vcsim"


def go_version(go: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, timeout=60,
                             check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.match(r"go(\d+)\.(\d+)", out.strip())
    return (int(m[1]), int(m[2])) if m else None


def source_hash(go_version_text: str = "") -> str:
    digest = hashlib.sha256(go_version_text.encode())
    for name in SOURCE_FILES:
        digest.update(name.encode() + b"\0" + (VCSIM_SOURCE / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def go_problem(go: str | None = None) -> str | None:
    """Why this machine cannot build the simulator (no Go, Go too old), or None."""
    go = go or shutil.which("go")
    if go is None:
        return f"Go is not installed (the lab's vCenter needs Go >= {MIN_GO[0]}.{MIN_GO[1]})"
    version = go_version(go)
    if version is None or version < (1, 21):  # 1.21+ can fetch the 1.22 toolchain itself (GOTOOLCHAIN=auto)
        found = ".".join(map(str, version)) if version else "of an unknown version"
        return f"Go {found} is too old (the lab's vCenter needs Go >= {MIN_GO[0]}.{MIN_GO[1]}: govmomi v0.46.3)"
    return None


def build_vcsim(cache_dir: Path | None = None, *, go: str | None = None, timeout: float = 900) -> Path | None:
    """The simulator binary, built once per source hash; None without a usable Go (`go_problem`).

    A build that fails for another reason raises ``VCenterUnavailable`` with the compiler's output.
    """
    go = go or shutil.which("go")
    problem = go_problem(go)
    if problem is not None or go is None:
        log.info("%s: the lab runs without vCenter", problem)
        return None
    version = go_version(go) or MIN_GO
    cache_dir = Path(cache_dir or default_cache_dir())
    cache_dir.mkdir(parents=True, exist_ok=True)
    binary = cache_dir / f"{BINARY}-{source_hash(f'go{version[0]}.{version[1]}')}"
    if binary.exists():
        return binary
    with _build_lock(cache_dir):
        if binary.exists():  # another process built it while we waited
            return binary
        tmp = binary.with_name(f"{binary.name}.{os.getpid()}.tmp")
        cmd = [go, "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", str(tmp), "."]
        log.warning("building the lab's vCenter simulator into %s (first use: about a minute, ~1.2 GB of memory)",
                    cache_dir)
        try:
            result = subprocess.run(cmd, cwd=VCSIM_SOURCE, capture_output=True, text=True, timeout=timeout,
                                    env={**os.environ, "CGO_ENABLED": "0"}, check=False)
        except subprocess.TimeoutExpired as exc:
            raise VCenterUnavailable(f"building the vCenter simulator took over {timeout:.0f} s") from exc
        if result.returncode != 0:
            tmp.unlink(missing_ok=True)
            tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-20:])
            raise VCenterUnavailable(f"building the vCenter simulator failed ({' '.join(cmd)}):\n{tail}")
        os.replace(tmp, binary)
        for old in cache_dir.glob(f"{BINARY}-*"):  # builds of earlier sources
            if re.fullmatch(rf"{BINARY}-[0-9a-f]{{16}}", old.name) and old != binary:
                old.unlink(missing_ok=True)
    return binary


@contextlib.contextmanager
def _build_lock(cache_dir: Path):
    try:
        import fcntl
    except ImportError:  # not POSIX: builds are rare enough to race
        yield
        return
    with open(cache_dir / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# ------------------------------------------------------------------------------ the vSphere view


def pf_id(pci: str) -> str:
    """vSphere's PCI id for the world's short form: 3b:00.0 -> 0000:3b:00.0."""
    return pci if pci.count(":") == 2 else f"0000:{pci}"


def _sriov_capable(host: EsxiHost) -> bool:
    # the PF exposes SR-IOV when the server's BIOS has SR-IOV Global on (at the last boot)
    return host.bios.get("SriovGlobalEnable", "Enabled") == "Enabled"


def _max_vfs(card: Card) -> int:
    sriov, num = card.config.get("SRIOV_EN"), card.config.get("NUM_OF_VFS")
    if sriov is None or num is None or sriov.current is not True or not isinstance(num.current, int):
        return 0
    return num.current


def _vibs_pending(host: EsxiHost) -> bool:
    """What makes ESXi itself flag summary.rebootRequired: VIBs installed since the last boot.

    (mlxconfig Next Boot values, module parameters and staged BIOS settings wait for a reboot too,
    but hostd does not know about them; vCenter's SR-IOV settings are counted by the simulator.)
    """
    installed, active = host.vibs_installed, host.vibs_active
    return set(installed) != set(active) or any(installed[k].version != active[k].version for k in installed)


def vsphere_view(world: World) -> dict[str, Any]:
    """The world as vCenter shows it: the simulator's state file and sync format."""
    vc = world.vcenter or VCenter()
    hosts = {}
    for host in world.hosts.values():
        pfs = {}
        for nic in host.nmlx5_vmnics():
            card = host.cards[nic.card]
            pci = card.pci(nic.port)
            configured = host.sriov_config.get(pci, {})
            active = host.sriov_config_active.get(pci, {})
            pfs[pf_id(pci)] = {
                "vmnic": nic.name,
                "device_id": f"{card.device_id:x}",
                "device_name": PCI_DEVICE_NAMES.get(card.model, card.model),
                "capable": _sriov_capable(host),
                "max_vfs": _max_vfs(card),
                "hw_vfs": world.vf_count(host, nic),
                "enabled": bool(configured.get("enabled", False)),
                "requested": int(configured.get("requested", 0)),
                "active_enabled": bool(active.get("enabled", False)),
                "active_requested": int(active.get("requested", 0)),
            }
        hosts[host.name] = {
            "boot_time": host.boot_time,
            "boot_count": host.boot_count,
            "connected": host.up,
            "maintenance_mode": host.maintenance_mode,
            "power_policy": host.power_policy,
            "pending_other": _vibs_pending(host),
            "pnics": [{"device": n.name, "pci": pf_id(host.cards[n.card].pci(n.port)), "mac": n.mac,
                       "speed_mbps": host.cards[n.card].speed_mbps, "driver": n.driver} for n in host.vmnics],
            "pfs": pfs,
            # a host whose reboot the lab stretches (World.reboot_delays): vCenter sees it down as long
            **({"reboot_delay_s": world.reboot_delays[host.name]} if host.name in world.reboot_delays else {}),
        }
    vms = {}
    for vm in world.vms.values():
        host = world.hosts.get(vm.host)
        vf = pf_id(host.roce_card.pci(vm.vf_port)) if host is not None and vm.vf_port is not None else None
        vms[vm.name] = {
            "host": vm.host,
            "powered_on": vm.powered_on,
            "vf_pf": vf,
            "memory_mb": vm.memory_mb,
            "cpus": vm.cpus,
            "memory_reserved": vm.memory_reserved,
            "latency_sensitivity": vm.latency_sensitivity,
        }
        if vf is not None:  # a property of its SR-IOV adapter
            vms[vm.name]["allow_guest_mtu_change"] = vm.allow_guest_mtu_change
    dvs = None
    if vc.dvs_name is not None:
        dvs = {"name": vc.dvs_name, "portgroup": vc.portgroup or "", "max_mtu": vc.dvs_max_mtu,
               "members": {h: list(nics) for h, nics in sorted(vc.dvs_members.items())}}
    return {
        "datacenter": DATACENTER,
        "cluster": CLUSTER,
        "datastore": DATASTORE,
        "reboot_delay_s": world.reboot_delay_s,
        "hosts": hosts,
        "vms": vms,
        "dvs": dvs,
    }


Path_ = tuple[str, ...]
_STATIC = {"pnics", "vmnic", "device_id", "device_name", "host", "memory_mb", "cpus", "reboot_delay_s"}


def flatten(view: dict[str, Any]) -> dict[Path_, Any]:
    """Leaf fields by path; the VDS is one value (it is created and changed as a whole)."""
    out: dict[Path_, Any] = {}
    for key in ("reboot_delay_s", "dvs"):
        if key in view:
            out[(key,)] = view[key]
    for host, hv in view.get("hosts", {}).items():
        for k, v in hv.items():
            if k == "pfs":
                for pf, pv in v.items():
                    for pk, pval in pv.items():
                        out[("hosts", host, "pfs", pf, pk)] = pval
            elif k not in _STATIC:
                out[("hosts", host, k)] = v
    for vm, vv in view.get("vms", {}).items():
        for k, v in vv.items():
            if k not in _STATIC:
                out[("vms", vm, k)] = v
    return out


def unflatten(fields: dict[Path_, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path, value in fields.items():
        node = out
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return out


# ------------------------------------------------------------------------------ the handle

Event = tuple[str, str]  # ("down" | "up" | "booted", host) as vCenter shows its hosts; ("vm-off" | "vm-on", vm)


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


_MISSING = object()


def _roce_port(host: EsxiHost, pf: str | None) -> int | None:
    if pf is None:
        return None
    for port in range(1, host.roce_card.ports + 1):
        if pf_id(host.roce_card.pci(port)) == pf:
            return port
    log.warning("%s: a VF backed by %s, which is not the RoCE card: the world shows no VF", host.name, pf)
    return None


def _guest_power(world: World, vm: str, on: bool, boot: bool = False) -> None:
    """The guest OS of a VM vCenter powered off is down; powered on (`boot`: vCenter shows a new boot
    time), it boots (a new boot id)."""
    for guest in world.guests.values():
        if guest.vm == vm:
            if on and (boot or not guest.up):
                world.reboot_guest(guest)
            guest.up = on


def fold_into_world(world: World, changes: dict[Path_, Any], current: dict[Path_, Any]) -> list[Event]:
    """Apply what vCenter changed (paths of its view that moved since the last sync) to the World.

    Host reboots and connection changes are not applied here but returned as events, in order:
    ("down", host), ("booted", host) when vCenter shows a new boot, ("up", host). A VM vCenter
    powered off or on is applied (its guest goes down, or boots) and returned as ("vm-off" |
    "vm-on", vm) so that the lab's SSH listeners can follow.
    """
    events: list[Event] = []
    for path in sorted(p for p in changes if p[0] == "hosts" and len(p) == 5 and p[4] in ("enabled", "requested")):
        host = world.hosts.get(path[1])
        if host is None:
            continue
        pci = path[3].removeprefix("0000:")
        enabled = bool(current.get(("hosts", path[1], "pfs", path[3], "enabled")))
        requested = int(current.get(("hosts", path[1], "pfs", path[3], "requested")) or 0)
        if enabled or requested:
            host.sriov_config[pci] = {"enabled": enabled, "requested": requested}
        else:
            host.sriov_config.pop(pci, None)
    for path, value in sorted(changes.items(), key=lambda kv: kv[0]):
        if path[0] == "hosts" and len(path) == 3 and path[1] in world.hosts:
            host = world.hosts[path[1]]
            if path[2] == "power_policy":
                host.power_policy = value
            elif path[2] == "maintenance_mode":
                host.maintenance_mode = bool(value)
        elif path[0] == "vms" and path[1] in world.vms:
            vm = world.vms[path[1]]
            if path[2] == "vf_pf":
                host = world.hosts.get(vm.host)
                vm.vf_port = _roce_port(host, value) if host is not None else None
            elif path[2] == "memory_reserved":
                vm.memory_reserved = bool(value)
            elif path[2] == "latency_sensitivity":
                vm.latency_sensitivity = str(value)
            elif path[2] == "boot_time" and value:  # vCenter powered the VM on (maybe after an off we missed)
                vm.powered_on = True
                events.append(("vm-on", vm.name))
                _guest_power(world, vm.name, True, boot=True)
            elif path[2] == "powered_on":
                if vm.powered_on != bool(value):
                    vm.powered_on = bool(value)
                    events.append(("vm-on" if vm.powered_on else "vm-off", vm.name))
                    _guest_power(world, vm.name, vm.powered_on)
            elif path[2] == "allow_guest_mtu_change":
                vm.allow_guest_mtu_change = bool(value)
        elif path == ("dvs",):
            vc = world.vcenter if world.vcenter is not None else VCenter()
            world.vcenter = vc
            if value is None:
                vc.dvs_name, vc.portgroup, vc.dvs_members = None, None, {}
            else:
                vc.dvs_name = value["name"]
                vc.portgroup = value.get("portgroup") or None
                vc.dvs_max_mtu = int(value.get("max_mtu") or 1500)
                vc.dvs_members = {h: list(n) for h, n in (value.get("members") or {}).items()}
                # ESXi gives a VDS uplink the switch's MTU (a guest's active_mtu follows its own VF netdev, not this)
                for name, nics in vc.dvs_members.items():
                    host = world.hosts.get(name)
                    for nic in host.vmnics if host is not None else []:
                        if nic.name in nics:
                            nic.mtu = vc.dvs_max_mtu
    for name in sorted({p[1] for p in changes if p[0] == "hosts" and len(p) == 3}):
        if ("hosts", name, "connected") in changes and not changes[("hosts", name, "connected")]:
            events.append(("down", name))
        if ("hosts", name, "boot_count") in changes:
            events.append(("booted", name))
        if changes.get(("hosts", name, "connected")) is True:
            events.append(("up", name))
    return events


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
    """The lab runtime's hook (`lab/server.py` SERVICE_MODULES): vCenter, when Go is here.

    vCenter's host reboots go through the lab's own reboot (`Lab.reboot`: SSH down, the host's
    guests with it, World.reboot_host after the reboot delay), so both views see one reboot.
    """
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


# ------------------------------------------------------------------------------ faults


def _pick_host(world: World) -> EsxiHost:
    """The host a vcenter fault lands on: the second host (esx-02), as `--fault` picks targets."""
    hosts = list(world.hosts.values())
    return hosts[1] if len(hosts) > 1 else hosts[0]


def _pick_vm(world: World):
    host = _pick_host(world)
    return next(vm for vm in world.vms.values() if vm.host == host.name)


def _sriov_off(world: World, target: str) -> None:
    host = _pick_host(world)
    pci = host.roce_card.pci(1)
    host.sriov_config.pop(pci, None)
    host.sriov_config_active.pop(pci, None)


def _not_member(world: World, target: str) -> None:
    assert world.vcenter is not None
    world.vcenter.dvs_members.pop(_pick_host(world).name, None)


def _dvs_mtu(world: World, target: str) -> None:
    assert world.vcenter is not None
    world.vcenter.dvs_max_mtu = 1500


def _no_vf(world: World, target: str) -> None:
    _pick_vm(world).vf_port = None


def _memory_not_reserved(world: World, target: str) -> None:
    _pick_vm(world).memory_reserved = False


def _latency_normal(world: World, target: str) -> None:
    _pick_vm(world).latency_sensitivity = "normal"


def _power_balanced(world: World, target: str) -> None:
    _pick_host(world).power_policy = "Balanced"


FAULTS = {f.code: f for f in (
    Fault("RW301", "vcenter", "SR-IOV is not enabled in vSphere on esx-02's RoCE PF 0000:3b:00.0 (no VFs)", _sriov_off),
    Fault("RW302", "vcenter", "esx-02 is not a member of the VDS (its VM's VF sits on the standard VM Network)",
          _not_member),
    Fault("RW303", "vcenter", "the VDS maxMtu is 1500", _dvs_mtu),
    Fault("RW304", "vcenter", "compute-02 has no SR-IOV network adapter (no VF)", _no_vf),
    Fault("RW305", "vcenter", "compute-02's memory is not reserved (memoryReservationLockedToMax false)",
          _memory_not_reserved),
    Fault("RW306", "vcenter", "compute-02's latency sensitivity is normal", _latency_normal),
    Fault("RW307", "vcenter", "esx-02's power policy is Balanced (the same setting as RW213's /Power/CpuPolicy)",
          _power_balanced),
)}
