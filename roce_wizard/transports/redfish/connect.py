"""`RedfishTransport`: TLS, one login per BMC per run, timeouts."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from pathlib import Path

import httpx

from roce_wizard.model import Target
from roce_wizard.transports.base import ConnectErrorKind, TransportError
from roce_wizard.transports.plumbing import ConnectionCache, TransportOptions, conn_key, host_port, option_flag
from roce_wizard.transports.redfish.client import DEFAULT_PORT, BmcStats, _Bmc
from roce_wizard.transports.redfish.session import RedfishSession


class RedfishTransport(TransportOptions):
    """Opens one HTTPS client (and Redfish session) per BMC and hands out sessions on it.

    The client keeps ONE connection to its BMC, kept alive for the whole run (requests to one BMC take
    turns on it, as BMCs serve few connections; no idle expiry on our side: the BMC closes an idle
    connection when it wants to, and a request that finds it closed is retried once on a new one).
    `stats[target name]` counts the connections, requests and logins of the run."""

    def __init__(
        self,
        password_resolver: Callable[[Target], str | None] | None = None,
        connect_timeout: float = 10,
        command_timeout: float = 60,
        max_concurrent_connects: int = 16,
    ):
        super().__init__(connect_timeout=connect_timeout, command_timeout=command_timeout,
                         max_concurrent_connects=max_concurrent_connects, password_resolver=password_resolver)
        self.warnings: list[str] = []  # e.g. TLS verification turned off for a target (the CLI prints them)
        self._bmcs: ConnectionCache[_Bmc] = ConnectionCache()
        self.stats: dict[str, BmcStats] = {}
        # one TLS context per CA source, shared by the BMCs that trust it: a context that loads the system
        # trust store holds ~0.85 MB, and a fleet has hundreds of BMCs (issue 16: RSS at 256 hosts)
        self._contexts: dict[str, ssl.SSLContext] = {}

    async def session(self, target: Target) -> RedfishSession:
        bmc = await self._bmcs.get(conn_key(target, DEFAULT_PORT), lambda: self._connect(target))
        return RedfishSession(self, target, bmc)

    async def close(self) -> None:
        """Log out of every BMC (best effort) and close the clients."""
        bmcs = await self._bmcs.drain()
        await asyncio.gather(*(b.logout() for b in bmcs), return_exceptions=True)

    # -- connecting ------------------------------------------------------------------------------

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def _verify(self, target: Target) -> ssl.SSLContext | bool:
        """What httpx verifies the BMC's certificate with: ca_file, else the system trust store;
        False only for an explicit `insecure: true`."""
        if option_flag(target, "insecure"):
            self._warn(f"{target.name}: TLS certificate verification is OFF (inventory options.insecure: true): "
                       "whoever answers at that address gets the BMC password; give the BMC's CA as "
                       "options.ca_file instead")
            return False
        ca_file = target.options.get("ca_file")
        if ca_file:
            path = Path(str(ca_file)).expanduser()
            key = f"file:{path}"
            if key not in self._contexts:
                try:
                    self._contexts[key] = ssl.create_default_context(cafile=str(path))
                except (OSError, ssl.SSLError) as exc:
                    raise TransportError(
                        ConnectErrorKind.TLS, target,
                        f"cannot load options.ca_file {path} for {target.name}: "
                        f"{getattr(exc, 'strerror', None) or exc}; "
                        "it must be a readable PEM file with the CA certificate that signed the BMC's certificate",
                    ) from exc
            return self._contexts[key]
        if "system" not in self._contexts:
            self._contexts["system"] = ssl.create_default_context()
        return self._contexts["system"]

    async def _connect(self, target: Target) -> _Bmc:
        async with self.connect_slot():
            verify = self._verify(target)
            host, port = host_port(target, DEFAULT_PORT)
            netloc = f"[{host}]" if ":" in host and not host.startswith("[") else host
            client = httpx.AsyncClient(
                base_url=f"https://{netloc}:{port}", verify=verify, follow_redirects=False,
                limits=httpx.Limits(max_connections=1, max_keepalive_connections=1, keepalive_expiry=None),
                timeout=httpx.Timeout(self._command_timeout(target), connect=self._connect_timeout(target)),
                headers={"Accept": "application/json", "OData-Version": "4.0", "User-Agent": "roce-wizard"},
            )
            bmc = _Bmc(self, target, client)
            try:
                async with asyncio.timeout(self._connect_timeout(target) * 3):
                    await bmc.login()
            except TimeoutError as exc:
                await client.aclose()
                raise TransportError(
                    ConnectErrorKind.TIMEOUT, target,
                    f"{bmc.name} did not answer the Redfish login within {self._connect_timeout(target) * 3:g}s",
                ) from exc
            except BaseException:
                await client.aclose()
                raise
            return bmc
