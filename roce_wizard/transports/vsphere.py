"""vSphere transport for vCenter targets (pyVmomi, run in threads).

- TLS is verified. The CA comes from the target's ``options.ca_file`` (else the system store); a
  certificate that does not verify is refused (`ConnectErrorKind.TLS`) with a message naming both
  ways out: ``options: {ca_file: …}`` or, knowingly, ``options: {insecure: true}``. An insecure
  target still connects, and every run appends a warning to ``transport.warnings`` (the CLI prints
  them at the end).
- One ServiceInstance (one login) per target per run, shared by every query; ``close()`` logs out.
  A semaphore bounds concurrent logins; logins and queries have timeouts.
- ``session(target).run(command)`` answers a named QUERY, not a shell command: ``vsphere hosts``,
  ``vsphere vms``, ``vsphere dvs`` (``QUERIES``). Each is one property-collector RetrieveContents
  over a container view (not a round trip per property) and prints a JSON document of what the
  vsphere checks read, in vSphere's own property names; `parsers/vsphere.py` turns it into facts.
  Managed object references print as ``{"_moId": …, "name": …}``, their names read in the same
  RetrieveContents. An unknown query exits 2; a vSphere fault exits 1 (stderr says which); only a
  lost connection raises TransportError.
- `wait_for_task` polls a task's state with a timeout (pyVim.task.WaitForTask misreads some
  simulator tasks; DESIGN.md) — for the fixes.

Passwords come from ``password_resolver(target)`` and never appear in messages or logs.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import errno
import http.client
import json
import logging
import socket
import ssl
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Self

from pyVim.connect import Disconnect, SmartConnect
from pyVmomi import vim, vmodl

from roce_wizard.model import Target
from roce_wizard.transports.base import CommandResult, ConnectErrorKind, TransportError

__all__ = ["QUERIES", "VSphereSession", "VSphereTransport", "ssl_context_for", "wait_for_task"]

log = logging.getLogger(__name__)

DEFAULT_PORT = 443
PC = vmodl.query.PropertyCollector


# ---------------------------------------------------------------------------- reading vSphere


def _retrieve(si: Any, specs: dict[type, list[str]]) -> list[tuple[Any, dict[str, Any]]]:
    """One RetrieveContents over a container view of the given types: [(object, {path: value})]."""
    content = si.RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, list(specs), True)
    try:
        spec = PC.FilterSpec(
            objectSet=[PC.ObjectSpec(obj=view, skip=True, selectSet=[
                PC.TraversalSpec(name="view", path="view", skip=False, type=vim.view.ContainerView)])],
            propSet=[PC.PropertySpec(type=t, pathSet=["name", *paths]) for t, paths in specs.items()],
        )
        out = []
        for obj in content.propertyCollector.RetrieveContents([spec]) or []:
            out.append((obj.obj, {p.name: p.val for p in obj.propSet or []}))
        return out
    finally:
        try:
            view.Destroy()
        except Exception as exc:  # noqa: BLE001 - the read is done; a leftover view expires with the session
            log.debug("could not destroy a container view: %s", exc)


def _plain(value: Any) -> Any:
    """JSON-able form of a property value (datetimes ISO 8601, enums as their strings)."""
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return str(value)


def _ref(obj: Any, names: dict[str, str]) -> dict[str, Any] | None:
    if obj is None:
        return None
    moid = getattr(obj, "_moId", None)
    return {"_moId": moid, "name": names.get(moid)}


def _attrs(obj: Any, names: Iterable[str]) -> dict[str, Any]:
    return {n: _plain(getattr(obj, n, None)) for n in names}


def _about(si: Any) -> dict[str, Any]:
    about = si.content.about
    return {"fullName": about.fullName, "apiVersion": about.apiVersion, "instanceUuid": about.instanceUuid}


PASSTHRU_FIELDS = ("id", "passthruCapable", "passthruEnabled", "passthruActive", "dependentDevice")
SRIOV_FIELDS = ("sriovCapable", "sriovEnabled", "sriovActive", "numVirtualFunctionRequested",
                "numVirtualFunction", "maxVirtualFunctionSupported")
HOST_PATHS = ["runtime.connectionState", "runtime.bootTime", "runtime.inMaintenanceMode", "summary.rebootRequired",
              "config.powerSystemInfo.currentPolicy", "config.network.pnic", "config.pciPassthruInfo"]


def query_hosts(si: Any) -> dict[str, Any]:
    hosts = []
    for _obj, props in sorted(_retrieve(si, {vim.HostSystem: HOST_PATHS}), key=lambda o: o[1].get("name", "")):
        policy = props.get("config.powerSystemInfo.currentPolicy")
        passthru = []
        for info in props.get("config.pciPassthruInfo") or []:
            entry = {"_type": getattr(info, "_wsdlName", type(info).__name__), **_attrs(info, PASSTHRU_FIELDS)}
            if isinstance(info, vim.host.SriovInfo):
                entry.update(_attrs(info, SRIOV_FIELDS))
            passthru.append(entry)
        hosts.append({
            "name": props.get("name"),
            "runtime.connectionState": _plain(props.get("runtime.connectionState")),
            "runtime.bootTime": _plain(props.get("runtime.bootTime")),
            "runtime.inMaintenanceMode": _plain(props.get("runtime.inMaintenanceMode")),
            "summary.rebootRequired": _plain(props.get("summary.rebootRequired")),
            "config.powerSystemInfo.currentPolicy": (
                {"key": _plain(policy.key), "shortName": _plain(policy.shortName)} if policy is not None else None),
            "config.network.pnic": [{"device": p.device, "pci": p.pci, "driver": p.driver}
                                    for p in props.get("config.network.pnic") or []],
            "config.pciPassthruInfo": passthru,
        })
    return {"query": "vsphere hosts", "about": _about(si), "hosts": hosts}


VM_PATHS = ["runtime.host", "runtime.powerState", "config.template", "config.hardware.memoryMB",
            "config.hardware.numCPU", "config.memoryReservationLockedToMax", "config.memoryAllocation",
            "config.cpuAllocation", "config.latencySensitivity", "config.hardware.device"]


def _backing(backing: Any, pg_names: dict[str, str], switch_names: dict[str, str]) -> dict[str, Any] | None:
    if backing is None:
        return None
    out: dict[str, Any] = {"_type": getattr(backing, "_wsdlName", type(backing).__name__)}
    port = getattr(backing, "port", None)
    if port is not None:  # on a distributed port group
        out["port.switchUuid"] = port.switchUuid
        out["port.portgroupKey"] = port.portgroupKey
        out["portgroupName"] = pg_names.get(port.portgroupKey)
        out["switchName"] = switch_names.get(port.switchUuid)
    if getattr(backing, "deviceName", None) is not None:  # a standard network
        out["deviceName"] = backing.deviceName
    return out


def query_vms(si: Any) -> dict[str, Any]:
    found = _retrieve(si, {
        vim.VirtualMachine: VM_PATHS,
        vim.HostSystem: ["summary.hardware.cpuMhz"],
        vim.dvs.DistributedVirtualPortgroup: ["key"],
        vim.DistributedVirtualSwitch: ["uuid"],
    })
    host_names = {o._moId: p.get("name") for o, p in found if isinstance(o, vim.HostSystem)}
    pg_names = {p.get("key"): p.get("name") for o, p in found if isinstance(o, vim.dvs.DistributedVirtualPortgroup)}
    switch_names = {p.get("uuid"): p.get("name") for o, p in found if isinstance(o, vim.DistributedVirtualSwitch)}
    vms = []
    for _obj, props in sorted(((o, p) for o, p in found if isinstance(o, vim.VirtualMachine)),
                              key=lambda o: o[1].get("name", "")):
        if props.get("config.template"):
            continue
        mem, cpu = props.get("config.memoryAllocation"), props.get("config.cpuAllocation")
        latency = props.get("config.latencySensitivity")
        cards = []
        for dev in props.get("config.hardware.device") or []:
            if not isinstance(dev, vim.vm.device.VirtualSriovEthernetCard):
                continue
            pf = getattr(getattr(dev, "sriovBacking", None), "physicalFunctionBacking", None)
            cards.append({
                "_type": "VirtualSriovEthernetCard",
                "key": _plain(dev.key),
                "deviceInfo.label": dev.deviceInfo.label if dev.deviceInfo is not None else None,
                "sriovBacking.physicalFunctionBacking.id": pf.id if pf is not None else None,
                "allowGuestOSMtuChange": _plain(dev.allowGuestOSMtuChange),
                "backing": _backing(dev.backing, pg_names, switch_names),
            })
        vms.append({
            "name": props.get("name"),
            "runtime.host": _ref(props.get("runtime.host"), host_names),
            "runtime.powerState": _plain(props.get("runtime.powerState")),
            "config.hardware.memoryMB": _plain(props.get("config.hardware.memoryMB")),
            "config.hardware.numCPU": _plain(props.get("config.hardware.numCPU")),
            "config.memoryReservationLockedToMax": _plain(props.get("config.memoryReservationLockedToMax")),
            "config.memoryAllocation.reservation": _plain(mem.reservation) if mem is not None else None,
            "config.cpuAllocation.reservation": _plain(cpu.reservation) if cpu is not None else None,
            "config.latencySensitivity.level": _plain(latency.level) if latency is not None else None,
            "sriovAdapters": cards,
        })
    hosts = [{"_moId": o._moId, "name": p.get("name"), "summary.hardware.cpuMhz": _plain(p.get("summary.hardware.cpuMhz"))}
             for o, p in sorted(found, key=lambda o: o[1].get("name", "")) if isinstance(o, vim.HostSystem)]
    return {"query": "vsphere vms", "about": _about(si), "vms": vms, "hostSystems": hosts}


DVS_PATHS = ["uuid", "config.maxMtu", "config.host", "config.uplinkPortgroup", "portgroup"]


def query_dvs(si: Any) -> dict[str, Any]:
    found = _retrieve(si, {
        vim.DistributedVirtualSwitch: DVS_PATHS,
        vim.dvs.DistributedVirtualPortgroup: ["key", "config.uplink"],
        vim.HostSystem: [],
        vim.Datacenter: [],
    })
    names = {o._moId: p.get("name") for o, p in found}
    pgs = {o._moId: p for o, p in found if isinstance(o, vim.dvs.DistributedVirtualPortgroup)}
    switches = []
    for _obj, props in sorted(((o, p) for o, p in found if isinstance(o, vim.DistributedVirtualSwitch)),
                              key=lambda o: o[1].get("name", "")):
        uplinks = {getattr(r, "_moId", None) for r in props.get("config.uplinkPortgroup") or []}
        portgroups = []
        for ref in props.get("portgroup") or []:
            pg = pgs.get(ref._moId, {})
            # an uplink port group says so itself (config.uplink), or the switch lists it
            uplink = bool(pg.get("config.uplink")) or ref._moId in uplinks
            portgroups.append({"_moId": ref._moId, "name": names.get(ref._moId), "key": pg.get("key"),
                               "config.uplink": uplink})
        members = []
        for member in props.get("config.host") or []:
            config = member.config
            backing = getattr(config, "backing", None) if config is not None else None
            members.append({
                "config.host": _ref(config.host if config is not None else None, names),
                "config.backing.pnicSpec": [{"pnicDevice": s.pnicDevice, "uplinkPortgroupKey": s.uplinkPortgroupKey}
                                            for s in getattr(backing, "pnicSpec", None) or []],
            })
        switches.append({
            "name": props.get("name"),
            "uuid": props.get("uuid"),
            "config.maxMtu": _plain(props.get("config.maxMtu")),
            "portgroup": portgroups,
            "config.host": members,
        })
    datacenters = sorted(p.get("name") for o, p in found if isinstance(o, vim.Datacenter))
    return {"query": "vsphere dvs", "about": _about(si), "datacenters": datacenters, "switches": switches}


QUERIES: dict[str, Callable[[Any], dict[str, Any]]] = {
    "vsphere hosts": query_hosts,
    "vsphere vms": query_vms,
    "vsphere dvs": query_dvs,
}


def render(doc: dict[str, Any]) -> str:
    """The document as the transport prints it: valid JSON with one object per line in its lists,
    so that a finding's evidence can quote the line about one host, VM or switch."""
    parts = []
    for key, value in doc.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            items = ",\n".join(" " + json.dumps(v, sort_keys=False) for v in value)
            parts.append(f"{json.dumps(key)}: [\n{items}\n]")
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value)}")
    return "{" + ",\n".join(parts) + "}\n"


# ---------------------------------------------------------------------------- tasks


def wait_for_task(task: Any, timeout: float = 300.0, poll: float = 0.1) -> Any:
    """Poll a vSphere task until it succeeds (its result), fails (raises its fault) or `timeout`
    seconds pass (TimeoutError naming the task and its state). Blocking: call it in a thread."""
    deadline = time.monotonic() + timeout
    while True:
        info = task.info
        if info.state == vim.TaskInfo.State.success:
            return info.result
        if info.state == vim.TaskInfo.State.error:
            if info.error is not None:
                raise info.error
            raise RuntimeError(f"task {info.key} failed without saying why")
        if time.monotonic() >= deadline:
            name = info.descriptionId or info.key
            raise TimeoutError(f"task {name} ({info.key}) still {info.state} after {timeout:g}s")
        time.sleep(poll)


# ---------------------------------------------------------------------------- TLS


def _insecure(target: Target) -> bool:
    value = target.options.get("insecure", False)
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1")
    return value is True


def ssl_context_for(target: Target) -> ssl.SSLContext:
    """Verified TLS with the target's `options.ca_file` (else the system CAs); unverified only with
    an explicit `options.insecure: true`."""
    if _insecure(target):
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    ca_file = target.options.get("ca_file")
    if not ca_file:
        return ssl.create_default_context()
    path = Path(str(ca_file)).expanduser()
    try:
        return ssl.create_default_context(cafile=str(path))
    except (OSError, ssl.SSLError) as exc:
        raise TransportError(
            ConnectErrorKind.TLS, target,
            f"cannot load options.ca_file {path} for {target.name}: "
            f"{exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}; it must be the PEM file "
            "of the CA that signed vCenter's certificate",
        ) from exc


# ---------------------------------------------------------------------------- sessions


class VSphereSession:
    """Queries on one vCenter over the transport's shared login."""

    def __init__(self, transport: VSphereTransport, target: Target, si: Any):
        self.transport = transport
        self.target = target
        self.service_instance = si  # for fixes: host.configManager…, ReconfigVM_Task, …
        self._closed = False

    async def run(self, command: str, timeout: float | None = None) -> CommandResult:
        if self._closed:
            raise RuntimeError(f"session to {self.target.name} is closed")
        if timeout is None:
            timeout = self.transport._command_timeout(self.target)
        query = QUERIES.get(" ".join(command.split()))
        if query is None:
            return CommandResult(command, "", f"unknown vSphere query {command!r}; known: {', '.join(QUERIES)}",
                                 2, 0.0)
        started = time.monotonic()
        try:
            async with asyncio.timeout(timeout):
                doc = await asyncio.to_thread(self._query, query)
        except TimeoutError:
            return CommandResult(command, "", "", None, time.monotonic() - started, timed_out=True)
        except vmodl.MethodFault as fault:
            name = getattr(fault, "_wsdlName", type(fault).__name__)
            message = getattr(fault, "msg", None) or str(fault).strip().splitlines()[0]
            return CommandResult(command, "", f"vSphere fault {name}: {message}\n", 1, time.monotonic() - started)
        except (OSError, http.client.HTTPException) as exc:
            host, port = _host_port(self.target)
            raise TransportError(
                ConnectErrorKind.UNREACHABLE, self.target,
                f"lost the vSphere API connection to {self.target.name} ({host}:{port}): "
                f"{exc.strerror if isinstance(exc, OSError) and exc.strerror else exc or type(exc).__name__}",
            ) from exc
        return CommandResult(command, render(doc), "", 0, time.monotonic() - started)

    def _query(self, query: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
        try:
            return query(self.service_instance)
        except vim.fault.NotAuthenticated:  # the session expired (idle timeout): log in once more
            self.service_instance = self.transport._relogin(self.target)
            return query(self.service_instance)

    async def close(self) -> None:
        """Stop using this session; the login stays until the transport closes."""
        self._closed = True


def _host_port(target: Target) -> tuple[str, int]:
    return target.address, target.port or DEFAULT_PORT


_Key = tuple[str, int, str]


def _key(target: Target) -> _Key:
    host, port = _host_port(target)
    return host, port, target.credentials.username


class VSphereTransport:
    """One login per vCenter (address, port, user) per run; sessions share it."""

    def __init__(
        self,
        password_resolver: Callable[[Target], str | None] | None = None,
        connect_timeout: float = 10,
        command_timeout: float = 60,
        max_concurrent_connects: int = 16,
    ):
        if max_concurrent_connects < 1:
            raise ValueError("max_concurrent_connects must be at least 1")
        self.password_resolver = password_resolver
        self.connect_timeout = connect_timeout
        self.command_timeout = command_timeout
        self.max_concurrent_connects = max_concurrent_connects
        self.warnings: list[str] = []  # the CLI prints these after the run (TLS verification off, …)
        self._semaphore = asyncio.Semaphore(max_concurrent_connects)
        self._logins: dict[_Key, asyncio.Task[Any]] = {}
        self._live: dict[_Key, Any] = {}  # key -> ServiceInstance, for close() and re-login
        self.connects = 0  # logins attempted (tests check the reuse)

    async def session(self, target: Target) -> VSphereSession:
        key = _key(target)
        task = self._logins.get(key)
        if task is None:
            task = asyncio.ensure_future(self._connect(target))
            task.add_done_callback(_retrieve_exception)
            self._logins[key] = task
        try:
            si = await asyncio.shield(task)
        except BaseException:
            if self._logins.get(key) is task and task.done():
                del self._logins[key]  # a later call may try again
            raise
        return VSphereSession(self, target, si)

    async def close(self) -> None:
        live, self._live, self._logins = dict(self._live), {}, {}
        for si in live.values():
            try:
                await asyncio.wait_for(asyncio.to_thread(Disconnect, si), 5)
            except Exception as exc:  # noqa: BLE001 - best effort: the session times out on the server anyway
                log.debug("logout failed: %s", exc)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _command_timeout(self, target: Target) -> float:
        return float(target.options.get("command_timeout", self.command_timeout))

    def _connect_timeout(self, target: Target) -> float:
        return float(target.options.get("connect_timeout", self.connect_timeout))

    async def _connect(self, target: Target) -> Any:
        context = ssl_context_for(target)
        password = self.password_resolver(target) if self.password_resolver is not None else None
        if password is None:
            raise TransportError(
                ConnectErrorKind.AUTH, target,
                f"no password for {target.name}: give one in the inventory (password: {{env: NAME}}, "
                "{keyring: \"service/user\"} or prompt)",
            )
        async with self._semaphore:
            self.connects += 1
            try:
                async with asyncio.timeout(self._connect_timeout(target)):
                    si = await asyncio.to_thread(self._login, target, context, password)
            except TimeoutError as exc:
                host, port = _host_port(target)
                raise TransportError(
                    ConnectErrorKind.TIMEOUT, target,
                    f"{target.name} ({host}:{port}) did not complete the vSphere API login within "
                    f"{self._connect_timeout(target):g}s; check that vCenter is up and that no firewall drops the port",
                ) from exc
        self._live[_key(target)] = si
        if _insecure(target):
            host, port = _host_port(target)
            self.warnings.append(
                f"TLS verification is OFF for {target.name} ({host}:{port}): options.insecure is true in the "
                "inventory, so anyone on the path can pose as vCenter and read its password. Give the CA that "
                "signed its certificate instead: options: {ca_file: /path/to/vcenter-ca.pem}")
        return si

    def _login(self, target: Target, context: ssl.SSLContext, password: str) -> Any:
        host, port = _host_port(target)
        try:
            return SmartConnect(host=host, port=port, user=target.credentials.username, pwd=password,
                                sslContext=context, httpConnectionTimeout=self._command_timeout(target),
                                disableSslCertValidation=_insecure(target))
        except Exception as exc:
            raise self._map_error(exc, target) from exc

    def _relogin(self, target: Target) -> Any:
        password = self.password_resolver(target) if self.password_resolver is not None else None
        si = self._login(target, ssl_context_for(target), password or "")
        self._live[_key(target)] = si
        return si

    def _map_error(self, exc: Exception, target: Target) -> TransportError:
        if isinstance(exc, TransportError):
            return exc
        host, port = _host_port(target)
        name = f"{target.name} ({host}:{port})"
        user = target.credentials.username
        if isinstance(exc, ssl.SSLCertVerificationError):
            return TransportError(ConnectErrorKind.TLS, target, _tls_message(target, exc))
        if isinstance(exc, ssl.SSLError):
            return TransportError(ConnectErrorKind.PROTOCOL, target,
                                  f"TLS handshake with {name} failed: {exc.reason or exc}; is this the HTTPS port "
                                  "of vCenter?")
        if isinstance(exc, vim.fault.InvalidLogin):
            return TransportError(ConnectErrorKind.AUTH, target,
                                  f"{name} rejected the login of {user!r} (vim.fault.InvalidLogin); check the "
                                  f"username and the password reference {target.credentials.password or ''} "
                                  "in the inventory".replace("  ", " "))
        if isinstance(exc, (vim.fault.NoPermission, vim.fault.NotAuthenticated)):
            return TransportError(ConnectErrorKind.AUTH, target, f"{name}: {user!r} may not log in: {exc.msg}")
        if isinstance(exc, socket.gaierror):
            return TransportError(ConnectErrorKind.DNS, target,
                                  f"cannot resolve {host!r} for {target.name}: {exc.strerror or exc}")
        if isinstance(exc, TimeoutError):  # socket.timeout too; before OSError (TimeoutError is one)
            return TransportError(ConnectErrorKind.TIMEOUT, target,
                                  f"{name} did not answer within {self._connect_timeout(target):g}s; check that "
                                  "vCenter is up and that no firewall drops the port")
        if isinstance(exc, ConnectionRefusedError) or (isinstance(exc, OSError) and exc.errno == errno.ECONNREFUSED):
            return TransportError(ConnectErrorKind.REFUSED, target,
                                  f"{name} refused the connection: nothing listens on port {port} (vCenter's HTTPS "
                                  "port is 443; is the address right?)")
        if isinstance(exc, OSError):
            if exc.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
                return TransportError(ConnectErrorKind.UNREACHABLE, target,
                                      f"no route to {name}: {exc.strerror or exc}; check the address and the network")
            return TransportError(ConnectErrorKind.UNREACHABLE, target, f"cannot reach {name}: {exc.strerror or exc}")
        if isinstance(exc, vmodl.MethodFault):
            return TransportError(ConnectErrorKind.PROTOCOL, target,
                                  f"{name} refused the vSphere API login: {getattr(exc, '_wsdlName', '')} {exc.msg}")
        return TransportError(ConnectErrorKind.PROTOCOL, target,
                              f"{name} does not answer as a vSphere API endpoint (https://{host}:{port}/sdk): "
                              f"{type(exc).__name__}: {exc}")


def _tls_message(target: Target, exc: ssl.SSLCertVerificationError) -> str:
    host, port = _host_port(target)
    name = f"{target.name} ({host}:{port})"
    reason = exc.verify_message or exc.reason or str(exc)
    ca_file = target.options.get("ca_file")
    if "hostname" in str(reason).lower() or "ip address mismatch" in str(reason).lower():
        return (f"TLS certificate of {name} does not name {host!r} ({reason}): use the name the certificate "
                "carries as the target's address, or reissue the certificate; verification stays on")
    where = (f"is not signed by the CA in options.ca_file {ca_file}" if ca_file
             else "is not signed by a CA this machine trusts")
    return (f"TLS certificate of {name} {where} ({reason}); refusing to connect. Give the CA that signed it "
            "in the inventory: options: {ca_file: /path/to/vcenter-ca.pem} (vCenter's root CA is in "
            f"https://{host}/certs/download.zip), or, on a lab network only, options: {{insecure: true}} "
            "to skip verification (roce-wizard then warns on every run)")


def _retrieve_exception(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()
