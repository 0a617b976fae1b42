"""`RedfishTransport`: TLS, one login per BMC per run, timeouts."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Self

import httpx

from roce_wizard.model import Target
from roce_wizard.transports.base import ConnectErrorKind, TransportError
from roce_wizard.transports.redfish.client import DEFAULT_PORT, _Bmc, _retrieve
from roce_wizard.transports.redfish.session import RedfishSession


class RedfishTransport:
    """Opens one HTTPS client (and Redfish session) per BMC and hands out sessions on it."""

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
        self.warnings: list[str] = []  # e.g. TLS verification turned off for a target (the CLI prints them)
        self._semaphore = asyncio.Semaphore(max_concurrent_connects)
        self._bmcs: dict[tuple[str, int, str], asyncio.Task[_Bmc]] = {}
        self.connects = 0

    async def session(self, target: Target) -> RedfishSession:
        key = (target.address, target.port or DEFAULT_PORT, target.credentials.username)
        task = self._bmcs.get(key)
        if task is None:
            task = asyncio.ensure_future(self._connect(target))
            task.add_done_callback(_retrieve)
            self._bmcs[key] = task
        try:
            bmc = await asyncio.shield(task)
        except BaseException:
            if self._bmcs.get(key) is task and task.done():  # a later call may try again
                del self._bmcs[key]
            raise
        return RedfishSession(self, target, bmc)

    async def close(self) -> None:
        """Log out of every BMC (best effort) and close the clients."""
        tasks = list(self._bmcs.values())
        self._bmcs.clear()
        for task in tasks:
            if not task.done():
                task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*(b.logout() for b in results if isinstance(b, _Bmc)), return_exceptions=True)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- connecting ------------------------------------------------------------------------------

    def _connect_timeout(self, target: Target) -> float:
        return float(target.options.get("connect_timeout", self.connect_timeout))

    def _command_timeout(self, target: Target) -> float:
        return float(target.options.get("command_timeout", self.command_timeout))

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def _verify(self, target: Target) -> ssl.SSLContext | bool:
        """What httpx verifies the BMC's certificate with: ca_file, else the system trust store;
        False only for an explicit `insecure: true`."""
        insecure = target.options.get("insecure", False)
        if insecure is True or (isinstance(insecure, str) and insecure.strip().lower() in ("true", "yes", "1")):
            self._warn(f"{target.name}: TLS certificate verification is OFF (inventory options.insecure: true): "
                       "whoever answers at that address gets the BMC password; give the BMC's CA as "
                       "options.ca_file instead")
            return False
        ca_file = target.options.get("ca_file")
        if ca_file:
            path = Path(str(ca_file)).expanduser()
            try:
                return ssl.create_default_context(cafile=str(path))
            except (OSError, ssl.SSLError) as exc:
                raise TransportError(
                    ConnectErrorKind.TLS, target,
                    f"cannot load options.ca_file {path} for {target.name}: {getattr(exc, 'strerror', None) or exc}; "
                    "it must be a readable PEM file with the CA certificate that signed the BMC's certificate",
                ) from exc
        return ssl.create_default_context()

    async def _connect(self, target: Target) -> _Bmc:
        async with self._semaphore:
            self.connects += 1
            verify = self._verify(target)
            host, port = target.address, target.port or DEFAULT_PORT
            netloc = f"[{host}]" if ":" in host and not host.startswith("[") else host
            client = httpx.AsyncClient(
                base_url=f"https://{netloc}:{port}", verify=verify, follow_redirects=False,
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
