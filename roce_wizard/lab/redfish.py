"""The practice lab's BMCs: one Redfish service per ESXi host, over HTTPS on 127.0.0.1.

Each server of the world gets a BMC of its own (``bmc-esx-01`` …) on its own ephemeral port, the
way every PowerEdge has its own iDRAC. The BIOS it shows is the world's ``EsxiHost.bios`` (Dell
attribute names), and what a client changes follows iDRAC's rules, because the fix code that runs
against the lab must also work against a real iDRAC:

* ``PATCH …/Bios/Settings`` with ``{"Attributes": {…}}`` only *stages* values: ``Bios`` keeps
  showing the current ones, ``Bios/Settings`` shows the pending ones. Names and values are checked
  against the BIOS attribute registry (``…/Bios/BiosRegistry``); a bad value is a 400 with iDRAC's
  ``SYS409`` message, an unknown name ``PropertyUnknown``, a profile-controlled attribute while
  ``SysProfile`` is not ``Custom`` ``PropertyNotWritable`` — and nothing is staged then.
* Staged values reach the BIOS only through a configuration job:
  ``POST /redfish/v1/Managers/iDRAC.Embedded.1/Jobs {"TargetSettingsURI": "…/Bios/Settings"}``
  (or the PATCH with ``"@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"}``) answers with the
  job's URI in ``Location``; the job moves the values into ``EsxiHost.bios_pending``, it stays
  ``Scheduled`` ("Task successfully scheduled.", JCP001), and the next reboot of the host
  (``World.reboot_host``) applies them and completes it ("Job completed successfully.", PR19).
  Without a job a reboot applies nothing — iDRAC's classic trap. While a job is scheduled a new
  PATCH, or a second job, is refused with ``SYS011`` ("Pending configuration values are already
  committed…"); DELETE on the job abandons the pending values.
* ``POST …/Actions/ComputerSystem.Reset`` with ``GracefulRestart``/``ForceRestart``/``PowerCycle``
  reboots the server: the lab runtime's ``on_reset(host_name)`` does that (SSH side included);
  without one the world is rebooted at once.
* Every resource but ``/redfish``, ``/redfish/v1`` and the login needs Basic auth or an
  ``X-Auth-Token`` from ``POST /redfish/v1/SessionService/Sessions``. One random password per
  lab (user ``root``), which the inventory takes from an environment variable.
* TLS uses a certificate of a CA made for this lab (``bmc-ca.pem`` in the lab directory); the
  inventory gives it as ``options.ca_file`` so that roce-wizard keeps verifying certificates.

A host whose ``bmc_vendor`` is ``"hpe"`` gets an iLO 5-style service instead (``Systems/1``,
attributes ``ProcVirtualization``, ``IntelProcVtd``, ``Sriov``, ``PowerRegulator``…, settings
applied at the next reboot with no job). That is how the lab shows RW102: on Intel PowerEdge
servers VT-d has no attribute of its own, ``ProcVirtualization`` ("Virtualization Technology")
turns on VT-x and VT-d together, so the fault for RW102 alone needs a server that has the knob.

Everything runs on the lab's asyncio loop (plain HTTP/1.1 over ``asyncio`` streams, no web
framework), so the handlers read and change the world without locks.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import datetime as dt
import hashlib
import hmac
import inspect
import ipaddress
import json
import logging
import os
import re
import secrets
import ssl
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from roce_wizard.lab.faults import Fault
from roce_wizard.lab.world import EsxiHost, World

log = logging.getLogger(__name__)

__all__ = [
    "CA_FILE",
    "FAULTS",
    "PASSWORD_ENV",
    "USERNAME",
    "BmcHandle",
    "bmc_name",
    "bmc_vendor",
    "inventory_entry",
    "set_bmc_vendor",
    "start_bmcs",
    "write_certificates",
]

PASSWORD_ENV = "ROCE_LAB_BMC_PASSWORD"  # the inventory's {env: …} for every lab BMC
USERNAME = "root"  # iDRAC's default account
CA_FILE = "bmc-ca.pem"
CERT_FILE = "bmc-cert.pem"
KEY_FILE = "bmc-key.pem"

BASE = "Base.1.12"  # the DMTF Base message registry iDRAC 5.x/6.x answers with
IDRAC = "IDRAC.2.8"  # iDRAC's own registry prefix (SYS409, SYS011, …)

SESSION_TIMEOUT_S = 1800  # iDRAC's default idle session timeout
IDLE_CONNECTION_S = 120.0  # keep-alive connections idle longer than this are closed
MAX_BODY = 1 << 20
RESET_TYPES = ("On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "Nmi", "ForceOn",
               "PushPowerButton", "PowerCycle", "Suspend", "Pause", "Resume")
LAB_RESET_TYPES = ("ForceRestart", "GracefulRestart", "PowerCycle")  # the ones that reboot a server


# ---------------------------------------------------------------------------- BIOS attributes


@dataclass(frozen=True)
class Attr:
    """One BIOS attribute as the vendor's attribute registry describes it."""

    name: str
    display: str
    values: tuple[str, ...] = ()  # Enumeration values
    default: Any = None
    kind: str = "Enumeration"  # Enumeration / String / Integer
    read_only: bool = False
    key: str | None = None  # where the world keeps it in EsxiHost.bios (None: the name itself)
    profile: bool = False  # Dell: dictated by SysProfile unless SysProfile is Custom
    identity: str | None = None  # read-only facts of the machine (model, service tag, …)
    lower: int = 0  # Integer bounds / String max length
    upper: int = 0
    menu: str = "SysInformation"

    @property
    def world_key(self) -> str:
        return self.key or self.name


_ED = ("Enabled", "Disabled")

DELL_PROFILES = ("PerfPerWattOptimizedDapc", "PerfPerWattOptimizedOs", "PerfOptimized", "Custom")
# What each system profile sets (Dell 14G "System Profile Settings"); Custom keeps the user's own values.
_DELL_PROFILE_VALUES: dict[str, dict[str, str]] = {
    "PerfPerWattOptimizedDapc": {"ProcPwrPerf": "SysDbpm", "ProcCStates": "Enabled", "ProcC1E": "Enabled",
                                 "ProcTurboMode": "Enabled", "EnergyPerformanceBias": "BalancedPerformance",
                                 "UncoreFrequency": "DynamicUFS", "MemFrequency": "MaxPerf",
                                 "MemPatrolScrub": "Standard", "MonitorMwait": "Enabled"},
    "PerfPerWattOptimizedOs": {"ProcPwrPerf": "OsDbpm", "ProcCStates": "Enabled", "ProcC1E": "Enabled",
                               "ProcTurboMode": "Enabled", "EnergyPerformanceBias": "BalancedPerformance",
                               "UncoreFrequency": "DynamicUFS", "MemFrequency": "MaxPerf",
                               "MemPatrolScrub": "Standard", "MonitorMwait": "Enabled"},
    "PerfOptimized": {"ProcPwrPerf": "MaxPerf", "ProcCStates": "Disabled", "ProcC1E": "Disabled",
                      "ProcTurboMode": "Enabled", "EnergyPerformanceBias": "MaxPower",
                      "UncoreFrequency": "MaxUFS", "MemFrequency": "MaxPerf", "MemPatrolScrub": "Standard",
                      "MonitorMwait": "Enabled"},
}

DELL_ATTRIBUTES: tuple[Attr, ...] = (
    Attr("SystemModelName", "System Model Name", kind="String", read_only=True, identity="model"),
    Attr("SystemManufacturer", "System Manufacturer", kind="String", read_only=True, identity="manufacturer"),
    Attr("SystemBiosVersion", "System BIOS Version", kind="String", read_only=True, identity="bios_version"),
    Attr("SystemServiceTag", "System Service Tag", kind="String", read_only=True, identity="service_tag"),
    Attr("SysMemSize", "System Memory Size", kind="String", read_only=True, identity="memory", menu="MemSettings"),
    Attr("MemTest", "System Memory Testing", _ED, "Disabled", menu="MemSettings"),
    Attr("MemOpMode", "Memory Operating Mode",
         ("OptimizerMode", "FaultResilientMode", "MirrorMode", "SpareMode"), "OptimizerMode", menu="MemSettings"),
    Attr("NodeInterleave", "Node Interleaving", _ED, "Disabled", menu="MemSettings"),
    Attr("LogicalProc", "Logical Processor", _ED, "Enabled", menu="ProcSettings"),
    Attr("ProcVirtualization", "Virtualization Technology", _ED, "Enabled", menu="ProcSettings"),
    Attr("ProcAdjCacheLine", "Adjacent Cache Line Prefetch", _ED, "Enabled", menu="ProcSettings"),
    Attr("ProcHwPrefetcher", "Hardware Prefetcher", _ED, "Enabled", menu="ProcSettings"),
    Attr("ProcX2Apic", "x2APIC Mode", _ED, "Enabled", menu="ProcSettings"),
    Attr("ProcCores", "Number of Cores per Processor", ("All", "1", "2", "4", "6", "8", "10", "12"), "All",
         menu="ProcSettings"),
    Attr("BootMode", "Boot Mode", ("Bios", "Uefi"), "Uefi", menu="BootSettings"),
    Attr("EmbSata", "Embedded SATA", ("AhciMode", "RaidMode", "Off"), "AhciMode", menu="SataSettings"),
    Attr("SriovGlobalEnable", "SR-IOV Global Enable", _ED, "Enabled", menu="IntegratedDevices"),
    Attr("MmioAbove4Gb", "Memory Mapped I/O above 4GB", _ED, "Enabled", menu="IntegratedDevices"),
    Attr("OsWatchdogTimer", "OS Watchdog Timer", _ED, "Disabled", menu="IntegratedDevices"),
    Attr("SerialComm", "Serial Communication", ("OnNoConRedir", "OnConRedirCom1", "OnConRedirCom2", "Off"),
         "OnNoConRedir", menu="SerialCommSettings"),
    Attr("SysProfile", "System Profile", DELL_PROFILES, "PerfPerWattOptimizedDapc", menu="SysProfileSettings"),
    Attr("ProcPwrPerf", "CPU Power Management", ("SysDbpm", "MaxPerf", "OsDbpm"), "SysDbpm", profile=True,
         menu="SysProfileSettings"),
    Attr("MemFrequency", "Memory Frequency", ("MaxPerf", "MaxReliability", "2933MHz", "2666MHz", "2400MHz"),
         "MaxPerf", profile=True, menu="SysProfileSettings"),
    Attr("ProcTurboMode", "Turbo Boost", _ED, "Enabled", profile=True, menu="SysProfileSettings"),
    Attr("ProcC1E", "C1E", _ED, "Enabled", profile=True, menu="SysProfileSettings"),
    Attr("ProcCStates", "C States", _ED, "Enabled", profile=True, menu="SysProfileSettings"),
    Attr("MemPatrolScrub", "Memory Patrol Scrub", ("Standard", "Extended", "Disabled"), "Standard",
         profile=True, menu="SysProfileSettings"),
    Attr("UncoreFrequency", "Uncore Frequency", ("DynamicUFS", "MaxUFS", "MinUFS"), "DynamicUFS", profile=True,
         menu="SysProfileSettings"),
    Attr("EnergyPerformanceBias", "Energy Efficient Policy",
         ("MaxPower", "BalancedPerformance", "BalancedEfficiency", "LowPower"), "BalancedPerformance",
         profile=True, menu="SysProfileSettings"),
    Attr("MonitorMwait", "Monitor/Mwait", _ED, "Enabled", profile=True, menu="SysProfileSettings"),
    Attr("SecureBoot", "Secure Boot", _ED, "Disabled", menu="SysSecurity"),
    Attr("AcPwrRcvry", "AC Power Recovery", ("On", "Off", "Last"), "Last", menu="SysSecurity"),
    Attr("AcPwrRcvryDelay", "AC Power Recovery Delay", ("Immediate", "Random", "User"), "Immediate",
         menu="SysSecurity"),
    Attr("AcPwrRcvryUserDelay", "User Defined Delay (60s to 240s)", kind="Integer", default=60, lower=60,
         upper=240, menu="SysSecurity"),
    Attr("AssetTag", "Asset Tag", kind="String", default="", upper=63, menu="MiscSettings"),
)

# iLO 5 (Gen10) names; the ones the world reads are stored under the Dell key (see Attr.key).
_HPE_POWER_REGULATOR = {"PerfPerWattOptimizedOs": "OsControl", "PerfPerWattOptimizedDapc": "DynamicPowerSavings",
                        "PerfOptimized": "StaticHighPerf", "Custom": "DynamicPowerSavings"}
HPE_ATTRIBUTES: tuple[Attr, ...] = (
    Attr("SerialNumber", "Serial Number", kind="String", read_only=True, identity="service_tag"),
    Attr("ProductId", "Product ID", kind="String", read_only=True, identity="product_id"),
    Attr("BootMode", "Boot Mode", ("Uefi", "LegacyBios"), "Uefi"),
    Attr("ProcHyperthreading", "Intel(R) Hyper-Threading", _ED, "Enabled", key="LogicalProc"),
    Attr("ProcVirtualization", "Intel(R) Virtualization Technology (Intel VT)", _ED, "Enabled"),
    Attr("IntelProcVtd", "Intel(R) VT-d", _ED, "Enabled"),
    Attr("Sriov", "SR-IOV", _ED, "Enabled", key="SriovGlobalEnable"),
    Attr("ProcTurbo", "Intel(R) Turbo Boost Technology", _ED, "Enabled"),
    Attr("MinProcIdlePower", "Minimum Processor Idle Power Core C-State", ("C6", "C1E", "NoCStates"), "C6"),
    Attr("PowerRegulator", "Power Regulator",
         ("DynamicPowerSavings", "StaticLowPower", "StaticHighPerf", "OsControl"), "DynamicPowerSavings"),
    Attr("WorkloadProfile", "Workload Profile",
         ("GeneralPowerEfficientCompute", "GeneralPeakFrequencyCompute", "GeneralThroughputCompute",
          "Virtualization-PowerEfficient", "Virtualization-MaxPerformance", "LowLatency", "MissionCritical",
          "TransactionalApplicationProcessing", "HighPerformanceCompute", "DecisionSupport",
          "GraphicProcessing", "I/OThroughput", "Custom"), "GeneralPowerEfficientCompute"),
    Attr("WorkloadProfileName", "Server Asset Tag", kind="String", default="", upper=31),
)


@dataclass(frozen=True)
class Vendor:
    """What differs between an iDRAC and an iLO: resource ids, registry, how settings get applied."""

    name: str
    system_id: str
    manager_id: str
    attributes: tuple[Attr, ...]
    jobs: bool  # staged values need a configuration job (iDRAC) or apply at the next reboot (iLO)
    trailing_slash: bool  # iLO spells its URIs with a trailing slash
    product: str
    model: str
    manager_model: str
    manager_firmware: str
    bios_version: str
    registry: str

    def attr(self, name: str) -> Attr | None:
        return self._by_name.get(name)  # type: ignore[attr-defined]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {a.name: a for a in self.attributes})


DELL = Vendor("dell", "System.Embedded.1", "iDRAC.Embedded.1", DELL_ATTRIBUTES, jobs=True, trailing_slash=False,
              product="Integrated Dell Remote Access Controller", model="PowerEdge R740",
              manager_model="14G Monolithic", manager_firmware="5.10.50.00", bios_version="2.12.2",
              registry="BiosAttributeRegistry.v1_0_3")
HPE = Vendor("hpe", "1", "1", HPE_ATTRIBUTES, jobs=False, trailing_slash=True,
             product="ProLiant DL380 Gen10", model="ProLiant DL380 Gen10", manager_model="iLO 5",
             manager_firmware="iLO 5 v2.72", bios_version="U30 v2.68 (07/14/2022)",
             registry="BiosAttributeRegistryU30.v1_2_68")
VENDORS = {"dell": DELL, "hpe": HPE}


def bmc_vendor(host: EsxiHost) -> str:
    """The kind of BMC a host's server has: "dell" (iDRAC, the default) or "hpe" (iLO 5)."""
    return host.bmc_vendor or "dell"


def set_bmc_vendor(host: EsxiHost, vendor: str) -> None:
    if vendor not in VENDORS:
        raise ValueError(f"BMC vendor {vendor!r}: expected one of {', '.join(VENDORS)}")
    host.bmc_vendor = vendor


def bmc_name(host: str) -> str:
    return f"bmc-{host}"


# ---------------------------------------------------------------------------- TLS


def write_certificates(directory: str | os.PathLike[str]) -> tuple[Path, Path, Path]:
    """A CA for this lab and a server certificate it signed for 127.0.0.1, ::1 and localhost.

    Returns (ca_file, cert_file, key_file). The CA file is what clients verify with; the key is
    written 0600. EC P-256 keys: a lab of 256 BMCs starts without waiting on RSA key generation.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.timezone.utc)
    start = now - dt.timedelta(hours=1)

    def usage(cert_sign: bool) -> x509.KeyUsage:
        return x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                             data_encipherment=False, key_agreement=False, key_cert_sign=cert_sign,
                             crl_sign=cert_sign, encipher_only=False, decipher_only=False)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "roce-wizard practice lab"),
                         x509.NameAttribute(NameOID.COMMON_NAME, "roce-wizard lab BMC CA")])
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start).not_valid_after(now + dt.timedelta(days=825))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(usage(True), critical=True)
        .add_extension(ca_ski, critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "roce-wizard practice lab"),
                                 x509.NameAttribute(NameOID.COMMON_NAME, "idrac-lab")]))
        .issuer_name(ca_name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start).not_valid_after(now + dt.timedelta(days=397))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(usage(False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName([
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.IPAddress(ipaddress.ip_address("::1")),
            x509.DNSName("localhost"),
        ]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    ca_file, cert_file, key_file = out / CA_FILE, out / CERT_FILE, out / KEY_FILE
    ca_file.write_bytes(ca_cert.public_bytes(pem))
    cert_file.write_bytes(cert.public_bytes(pem) + ca_cert.public_bytes(pem))
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    os.chmod(key_file, 0o600)
    return ca_file, cert_file, key_file


def _server_context(cert_file: Path, key_file: Path) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(cert_file, key_file)
    return ctx


# ---------------------------------------------------------------------------- Redfish messages


def _message(msg_id: str, message: str, args: list[Any] | None = None, related: list[str] | None = None,
             resolution: str = "None.", severity: str = "Warning") -> dict[str, Any]:
    args = [str(a) for a in (args or [])]
    related = related or []
    return {
        "Message": message,
        "MessageArgs": args,
        "MessageArgs@odata.count": len(args),
        "MessageId": msg_id,
        "RelatedProperties": related,
        "RelatedProperties@odata.count": len(related),
        "Resolution": resolution,
        "Severity": severity,
    }


def _success() -> dict[str, Any]:
    return _message(f"{BASE}.Success", "The request completed successfully.", severity="OK")


def _error_body(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"error": {
        "@Message.ExtendedInfo": list(messages),
        "code": f"{BASE}.GeneralError",
        "message": "A general error has occurred. See ExtendedInfo for more information.",
    }}


class RedfishError(Exception):
    def __init__(self, status: int, *messages: dict[str, Any], headers: dict[str, str] | None = None):
        super().__init__(messages[0]["Message"] if messages else str(status))
        self.status = status
        self.messages = messages
        self.headers = headers or {}


def _no_session() -> RedfishError:
    return RedfishError(401, _message(f"{BASE}.NoValidSession",
                                      "There is no valid session established with the implementation.",
                                      resolution="Establish a session before attempting any operations.",
                                      severity="Critical"),
                        headers={"WWW-Authenticate": 'Basic realm="RedfishService"'})


def _not_found(path: str) -> RedfishError:
    return RedfishError(404, _message(f"{BASE}.ResourceMissingAtURI",
                                      f"The resource at the URI {path} was not found.", [path],
                                      resolution="Place a valid resource at the URI or correct the URI and "
                                                 "resubmit the request.", severity="Critical"))


def _sys011() -> RedfishError:
    return RedfishError(400, _message(
        f"{IDRAC}.SYS011",
        "Pending configuration values are already committed, unable to perform another set operation.",
        resolution="Wait for the scheduled job to complete or delete the configuration job before attempting "
                   "more set attribute operations."))


# ---------------------------------------------------------------------------- HTTP plumbing


@dataclass
class Request:
    method: str
    path: str
    query: str
    version: str
    headers: dict[str, str]
    body: bytes = b""

    def json(self) -> Any:
        if not self.body.strip():
            raise RedfishError(400, _message(
                f"{BASE}.EmptyJSON",
                "The request body submitted contained an empty JSON object and the service is unable to process it.",
                resolution="Add properties in the JSON object and resubmit the request."))
        try:
            return json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            raise RedfishError(400, _message(
                f"{BASE}.MalformedJSON",
                "The request body submitted was malformed JSON and could not be parsed by the receiving service.",
                resolution="Ensure that the request body is valid JSON and resubmit the request.",
                severity="Critical")) from None

    def json_object(self) -> dict[str, Any]:
        data = self.json()
        if not isinstance(data, dict):
            raise RedfishError(400, _message(
                f"{BASE}.MalformedJSON",
                "The request body submitted was malformed JSON and could not be parsed by the receiving service.",
                resolution="Send a JSON object.", severity="Critical"))
        return data


@dataclass
class Response:
    status: int
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


def _etag(body: dict[str, Any]) -> str:
    return '"' + hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16] + '"'


def _render(resp: Response, head_only: bool, keep_alive: bool) -> bytes:
    payload = b"" if resp.body is None else json.dumps(resp.body, indent=2).encode()
    try:
        reason = HTTPStatus(resp.status).phrase
    except ValueError:
        reason = ""
    headers = {
        "Date": formatdate(usegmt=True),
        "Server": "Apache",
        "OData-Version": "4.0",
        "Cache-Control": "no-cache",
        "X-Frame-Options": "DENY",
        "Strict-Transport-Security": "max-age=63072000; includeSubDomains; preload",
        "Access-Control-Allow-Origin": "*",
    }
    if resp.body is not None:
        headers["Content-Type"] = "application/json;odata.metadata=minimal;charset=utf-8"
    headers.update(resp.headers)
    headers["Content-Length"] = str(len(payload))
    headers["Connection"] = "keep-alive" if keep_alive else "close"
    lines = [f"HTTP/1.1 {resp.status} {reason}"] + [f"{k}: {v}" for k, v in headers.items()]
    out = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return out if head_only or resp.status in (204, 304) else out + payload


async def _read_body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, headers: dict[str, str]) -> bytes:
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        chunks: list[bytes] = []
        size = 0
        while True:
            line = await reader.readuntil(b"\r\n")
            n = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if n == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                    pass
                return b"".join(chunks)
            size += n
            if size > MAX_BODY:
                raise RedfishError(413, _message(f"{BASE}.PayloadTooLarge",
                                                 "The supplied payload exceeds the maximum size supported by the "
                                                 "service.", severity="Critical"))
            chunks.append(await reader.readexactly(n))
            await reader.readexactly(2)
    length = int(headers.get("content-length", "0") or 0)
    if length < 0 or length > MAX_BODY:
        raise RedfishError(413, _message(f"{BASE}.PayloadTooLarge",
                                         "The supplied payload exceeds the maximum size supported by the service.",
                                         severity="Critical"))
    return await reader.readexactly(length) if length else b""


def _parse_head(head: bytes) -> Request:
    text = head.decode("latin-1")
    lines = text.split("\r\n")
    try:
        method, target, version = lines[0].split(" ")
    except ValueError:
        raise ValueError(f"bad request line {lines[0]!r}") from None
    if not version.startswith("HTTP/1."):
        raise ValueError(f"unsupported protocol {version!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"bad header line {line!r}")
        key = name.strip().lower()
        headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
    parts = urlsplit(target)
    return Request(method.upper(), unquote(parts.path) or "/", parts.query, version, headers)


# ---------------------------------------------------------------------------- one BMC


def _now_iso(when: float | None = None) -> str:
    return dt.datetime.fromtimestamp(when if when is not None else time.time()).strftime("%Y-%m-%dT%H:%M:%S")


@dataclass
class Job:
    """An iDRAC BIOS configuration job: it commits `values` (world keys) at the host's next boot."""

    id: str
    created: float
    boot_count: int  # the host's boot when the job was created; a later boot ran it
    values: dict[str, Any]
    name: str = "Configure: BIOS.Setup.1-1"

    def state(self, host: EsxiHost) -> str:
        if host.boot_count > self.boot_count:
            return "Completed"
        return "Scheduled" if host.up else "Running"


@dataclass
class Session:
    id: str
    token: str
    username: str
    last_used: float


class Bmc:
    """The Redfish service of one server."""

    def __init__(self, lab: BmcHandle, host: str):
        self.lab = lab
        self.host_name = host
        self.name = bmc_name(host)
        self.staged: dict[str, Any] = {}  # PATCHed, no job yet (iDRAC only): world key -> value
        self.jobs: dict[str, Job] = {}
        self.sessions: dict[str, Session] = {}
        self.server: asyncio.Server | None = None
        self.port = 0
        self._next_session = 1
        self._writers: set[asyncio.StreamWriter] = set()
        self._routes: dict[str, list[tuple[re.Pattern[str], dict[str, Callable[..., Response]]]]] = {}
        self._world: World | None = None
        self.sync_world()

    # -------------------------------------------------------------- world views

    def sync_world(self) -> None:
        """Follow the lab's world: a swapped-in world (tests reset the lab) brings its own BIOS state."""
        world = self.lab.world
        if world is self._world:
            return
        self._world = world
        self.staged.clear()
        self.jobs.clear()
        if self.vendor.jobs and self.host.bios_pending:
            # the world has staged BIOS values waiting for a reboot: a job must have committed them
            self._new_job(dict(self.host.bios_pending))

    @property
    def host(self) -> EsxiHost:
        return self.lab.world.hosts[self.host_name]

    @property
    def vendor(self) -> Vendor:
        """Read on every request: a fault (RW102) may turn this server into an HPE one while the lab runs."""
        return VENDORS[bmc_vendor(self.host)]

    @property
    def routes(self) -> list[tuple[re.Pattern[str], dict[str, Callable[..., Response]]]]:
        vendor = self.vendor
        if vendor.name not in self._routes:
            self._routes[vendor.name] = self._build_routes(vendor)
        return self._routes[vendor.name]

    def _identity(self) -> dict[str, str]:
        digits = "".join(ch for ch in self.host_name if ch.isdigit()) or "0"
        index = int(digits)
        tag = f"RWLAB{index:02d}"[-7:]
        return {
            "model": self.vendor.model,
            "manufacturer": "Dell Inc." if self.vendor is DELL else "HPE",
            "bios_version": self.vendor.bios_version,
            "service_tag": tag if self.vendor is DELL else f"CZ2{index:07d}",
            "product_id": "868703-B21",
            "memory": "384 GB",
            "uuid": str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{tag}.{self.vendor.name}.roce-wizard.lab")),
        }

    def _value(self, attr: Attr, bios: dict[str, Any]) -> Any:
        """An attribute's value in a BIOS whose stored values are `bios` (world keys)."""
        if attr.identity:
            return self._identity()[attr.identity]
        if attr.profile:
            profile = bios.get("SysProfile", DELL.attr("SysProfile").default)  # type: ignore[union-attr]
            table = _DELL_PROFILE_VALUES.get(profile)
            if table is not None and attr.name in table:
                return table[attr.name]
        if attr.name == "PowerRegulator" and attr.world_key not in bios:
            return _HPE_POWER_REGULATOR.get(bios.get("SysProfile", ""), attr.default)
        return bios.get(attr.world_key, attr.default)

    def attributes(self, bios: dict[str, Any] | None = None) -> dict[str, Any]:
        bios = self.host.bios if bios is None else bios
        return {a.name: self._value(a, bios) for a in self.vendor.attributes}

    def pending(self) -> dict[str, Any]:
        """World keys waiting: committed by a job (bios_pending) or, on iDRAC, staged without one."""
        return {**self.host.bios_pending, **self.staged}

    def _names(self, values: dict[str, Any]) -> dict[str, Any]:
        by_key = {a.world_key: a.name for a in self.vendor.attributes if not a.identity}
        return {by_key.get(k, k): v for k, v in values.items()}

    def scheduled_job(self) -> Job | None:
        return next((j for j in self.jobs.values() if j.state(self.host) != "Completed"), None)

    # -------------------------------------------------------------- paths

    def _p(self, path: str) -> str:
        """A resource's @odata.id as this vendor spells it."""
        if self.vendor.trailing_slash and not path.endswith("/"):
            return path + "/"
        return path

    @property
    def system_path(self) -> str:
        return f"/redfish/v1/Systems/{self.vendor.system_id}"

    @property
    def manager_path(self) -> str:
        return f"/redfish/v1/Managers/{self.vendor.manager_id}"

    @property
    def settings_path(self) -> str:
        return f"{self.system_path}/Bios/Settings"

    def _build_routes(self, vendor: Vendor) -> list[tuple[re.Pattern[str], dict[str, Callable[..., Response]]]]:
        sys_ = re.escape(f"/redfish/v1/Systems/{vendor.system_id}")
        mgr = re.escape(f"/redfish/v1/Managers/{vendor.manager_id}")
        flags = re.IGNORECASE if vendor is HPE else 0
        table: list[tuple[str, dict[str, Callable[..., Response]]]] = [
            (r"/redfish", {"GET": self.get_versions}),
            (r"/redfish/v1", {"GET": self.get_root}),
            (r"/redfish/v1/odata", {"GET": self.get_odata}),
            (r"/redfish/v1/Systems", {"GET": self.get_systems}),
            (sys_, {"GET": self.get_system}),
            (sys_ + r"/Actions/ComputerSystem\.Reset", {"POST": self.post_reset}),
            (sys_ + r"/Bios", {"GET": self.get_bios}),
            (sys_ + r"/Bios/Settings", {"GET": self.get_settings, "PATCH": self.patch_settings}),
            (r"/redfish/v1/Managers", {"GET": self.get_managers}),
            (mgr, {"GET": self.get_manager}),
            (r"/redfish/v1/SessionService", {"GET": self.get_session_service}),
            (r"/redfish/v1/SessionService/Sessions", {"GET": self.get_sessions, "POST": self.post_session}),
            (r"/redfish/v1/SessionService/Sessions/(?P<sid>[^/]+)",
             {"GET": self.get_session, "DELETE": self.delete_session}),
        ]
        if vendor is DELL:
            table += [
                (sys_ + r"/Bios/BiosRegistry", {"GET": self.get_registry}),
                (mgr + r"(?:/Oem/Dell)?/Jobs", {"GET": self.get_jobs, "POST": self.post_job}),
                (mgr + r"(?:/Oem/Dell)?/Jobs/(?P<jid>[^/]+)", {"GET": self.get_job, "DELETE": self.delete_job}),
            ]
        return [(re.compile(pattern + r"/?", flags), methods) for pattern, methods in table]

    # -------------------------------------------------------------- dispatch

    PUBLIC = ("/redfish", "/redfish/v1", "/redfish/v1/odata")

    def handle(self, req: Request) -> Response:
        try:
            self.sync_world()
            path = req.path if req.path == "/" else req.path.rstrip("/") or "/"
            public = path.lower() in [p.lower() for p in self.PUBLIC] or (
                req.method == "POST" and path.lower() == "/redfish/v1/sessionservice/sessions")
            if not public:
                self._authenticate(req)
            for pattern, methods in self.routes:
                m = pattern.fullmatch(req.path)
                if m is None:
                    continue
                method = "GET" if req.method == "HEAD" else req.method
                handler = methods.get(method)
                if handler is None:
                    allow = ", ".join(sorted({*methods, "HEAD"} if "GET" in methods else methods))
                    raise RedfishError(405, _message(f"{BASE}.OperationNotAllowed",
                                                     "The HTTP method is not allowed on this resource.",
                                                     severity="Critical"), headers={"Allow": allow})
                resp = handler(req, **m.groupdict())
                if req.method == "GET" and resp.status == 200 and resp.body is not None:
                    resp.headers.setdefault("ETag", _etag(resp.body))
                return resp
            raise _not_found(req.path)
        except RedfishError as exc:
            return Response(exc.status, _error_body(*exc.messages), exc.headers)
        except Exception:  # a bug here must not kill the connection loop
            log.exception("%s: %s %s failed", self.name, req.method, req.path)
            return Response(500, _error_body(_message(f"{BASE}.InternalError",
                                                      "The request failed due to an internal service error.  "
                                                      "The service is still operational.", severity="Critical")))

    def _authenticate(self, req: Request) -> str:
        token = req.headers.get("x-auth-token")
        now = time.monotonic()
        for sid, session in list(self.sessions.items()):
            if now - session.last_used > SESSION_TIMEOUT_S:
                del self.sessions[sid]
        if token:
            for session in self.sessions.values():
                if hmac.compare_digest(session.token, token):
                    session.last_used = now
                    return session.username
            raise _no_session()
        auth = req.headers.get("authorization", "")
        scheme, _, blob = auth.partition(" ")
        if scheme.lower() == "basic" and blob:
            try:
                user, _, password = base64.b64decode(blob.strip(), validate=True).decode("utf-8").partition(":")
            except (binascii.Error, UnicodeDecodeError):
                raise _no_session() from None
            if self.lab.check_password(user, password):
                return user
        raise _no_session()

    # -------------------------------------------------------------- service root, collections

    def get_versions(self, req: Request) -> Response:
        return Response(200, {"v1": "/redfish/v1/"})

    def get_odata(self, req: Request) -> Response:
        names = ("Systems", "Managers", "SessionService")
        return Response(200, {"@odata.context": "/redfish/v1/$metadata", "value": [
            {"kind": "Singleton", "name": n, "url": f"/redfish/v1/{n}"} for n in names]})

    def get_root(self, req: Request) -> Response:
        ident = self._identity()
        body: dict[str, Any] = {
            "@odata.context": "/redfish/v1/$metadata#ServiceRoot.ServiceRoot",
            "@odata.id": self._p("/redfish/v1"),
            "@odata.type": "#ServiceRoot.v1_6_0.ServiceRoot",
            "Id": "RootService",
            "Name": "Root Service",
            "Description": "Root Service",
            "RedfishVersion": "1.11.0" if self.vendor is DELL else "1.6.0",
            "UUID": ident["uuid"],
            "Product": self.vendor.product,
            "Vendor": "Dell" if self.vendor is DELL else "HPE",
            "Systems": {"@odata.id": self._p("/redfish/v1/Systems")},
            "Managers": {"@odata.id": self._p("/redfish/v1/Managers")},
            "SessionService": {"@odata.id": self._p("/redfish/v1/SessionService")},
            "Links": {"Sessions": {"@odata.id": self._p("/redfish/v1/SessionService/Sessions")}},
        }
        if self.vendor is DELL:
            body["Oem"] = {"Dell": {"@odata.type": "#DellServiceRoot.v1_0_0.DellServiceRoot",
                                    "IsBranded": 0, "ServiceTag": ident["service_tag"]}}
        return Response(200, body)

    def _collection(self, path: str, name: str, members: list[str], odata_type: str) -> Response:
        return Response(200, {
            "@odata.context": f"/redfish/v1/$metadata#{odata_type}.{odata_type}",
            "@odata.id": self._p(path),
            "@odata.type": f"#{odata_type}.{odata_type}",
            "Name": name,
            "Members": [{"@odata.id": self._p(m)} for m in members],
            "Members@odata.count": len(members),
        })

    def get_systems(self, req: Request) -> Response:
        return self._collection("/redfish/v1/Systems", "Computer System Collection", [self.system_path],
                                "ComputerSystemCollection")

    def get_managers(self, req: Request) -> Response:
        return self._collection("/redfish/v1/Managers", "Manager Collection", [self.manager_path],
                                "ManagerCollection")

    # -------------------------------------------------------------- system, reset

    def get_system(self, req: Request) -> Response:
        host = self.host
        ident = self._identity()
        attrs = self.attributes()
        threads = 56 if attrs.get("LogicalProc", attrs.get("ProcHyperthreading")) != "Disabled" else 28
        allowed = list(LAB_RESET_TYPES)
        return Response(200, {
            "@odata.context": "/redfish/v1/$metadata#ComputerSystem.ComputerSystem",
            "@odata.id": self._p(self.system_path),
            "@odata.type": "#ComputerSystem.v1_12_0.ComputerSystem",
            "Id": self.vendor.system_id,
            "Name": "System",
            "Description": "Computer System which represents a machine (physical or virtual) and the local "
                           "resources such as memory, cpu and other devices that can be accessed from that machine.",
            "Actions": {"#ComputerSystem.Reset": {
                "target": f"{self.system_path}/Actions/ComputerSystem.Reset",
                "ResetType@Redfish.AllowableValues": allowed,
            }},
            "AssetTag": "",
            "Bios": {"@odata.id": self._p(f"{self.system_path}/Bios")},
            "BiosVersion": self.vendor.bios_version,
            "Boot": {"BootSourceOverrideEnabled": "Disabled", "BootSourceOverrideTarget": "None",
                     "BootSourceOverrideMode": "UEFI" if attrs.get("BootMode") == "Uefi" else "Legacy"},
            "HostName": host.name,
            "IndicatorLED": "Lit",
            "Links": {"ManagedBy": [{"@odata.id": self._p(self.manager_path)}]},
            "Manufacturer": ident["manufacturer"],
            "MemorySummary": {"TotalSystemMemoryGiB": 384, "Status": {"Health": "OK", "State": "Enabled"}},
            "Model": ident["model"],
            "PowerState": "On",
            "ProcessorSummary": {"Count": 2, "LogicalProcessorCount": threads,
                                 "Model": "Intel(R) Xeon(R) Gold 6132 CPU @ 2.60GHz",
                                 "Status": {"Health": "OK", "State": "Enabled"}},
            "SKU": ident["service_tag"],
            "SerialNumber": ident["service_tag"],
            "Status": {"Health": "OK", "HealthRollup": "OK", "State": "Enabled"},
            "SystemType": "Physical",
            "UUID": ident["uuid"],
        })

    def post_reset(self, req: Request) -> Response:
        data = req.json_object()
        action = "ComputerSystem.Reset"
        if "ResetType" not in data:
            raise RedfishError(400, _message(f"{BASE}.ActionParameterMissing",
                                             f"The action {action} requires the parameter ResetType to be present "
                                             "in the request body.", [action, "ResetType"], ["#/ResetType"],
                                             resolution="Supply the action with the required parameter in the "
                                                        "request body when the request is resubmitted.",
                                             severity="Critical"))
        for key in data:
            if key != "ResetType":
                raise RedfishError(400, _message(f"{BASE}.ActionParameterUnknown",
                                                 f"The action {action} was submitted with the invalid parameter "
                                                 f"{key}.", [action, key], [f"#/{key}"]))
        value = data["ResetType"]
        if not isinstance(value, str):
            raise RedfishError(400, _message(f"{BASE}.ActionParameterValueTypeError",
                                             f"The value '{value}' for the parameter ResetType in the action "
                                             f"{action} is of a different type than the parameter can accept.",
                                             [value, "ResetType", action], ["#/ResetType"]))
        if value not in LAB_RESET_TYPES:
            lab_note = (" The practice lab reboots servers but does not power them off; use one of "
                        f"{', '.join(LAB_RESET_TYPES)}." if value in RESET_TYPES else "")
            raise RedfishError(400, _message(f"{BASE}.ActionParameterValueNotInList",
                                             f"The value '{value}' for the parameter ResetType in the action "
                                             f"{action} is not in the list of acceptable values.{lab_note}",
                                             [value, "ResetType", action], ["#/ResetType"],
                                             resolution="Choose a value from the enumeration list that the "
                                                        "implementation can support and resubmit the request."))
        self.lab.reset(self.host_name)
        return Response(204)

    # -------------------------------------------------------------- BIOS

    def get_bios(self, req: Request) -> Response:
        settings: dict[str, Any] = {
            "@odata.type": "#Settings.v1_3_1.Settings",
            "SettingsObject": {"@odata.id": self._p(self.settings_path)},
        }
        if self.vendor is DELL:
            settings["SupportedApplyTimes"] = ["OnReset", "Immediate"]
        else:
            settings["Messages"] = [{"MessageId": "Base.1.0.Success"}]
            settings["Time"] = _now_iso(self.host.boot_time)
        body: dict[str, Any] = {
            "@odata.context": "/redfish/v1/$metadata#Bios.Bios",
            "@odata.id": self._p(f"{self.system_path}/Bios"),
            "@odata.type": "#Bios.v1_1_0.Bios",
            "@Redfish.Settings": settings,
            "Id": "Bios",
            "Name": "BIOS Configuration Current Settings",
            "Description": "BIOS Configuration Current Settings",
            "AttributeRegistry": self.vendor.registry,
            "Attributes": self.attributes(),
        }
        if self.vendor is DELL:
            body["Links"] = {"SoftwareImages": [], "SoftwareImages@odata.count": 0}
        return Response(200, body)

    def get_settings(self, req: Request) -> Response:
        if self.vendor is DELL:
            # iDRAC lists only what is pending (staged or committed by a job)
            pending = self.pending()
            attrs = {n: v for n, v in self.attributes({**self.host.bios, **pending}).items()
                     if n in self._names(pending)}
        else:
            attrs = self.attributes({**self.host.bios, **self.host.bios_pending})  # iLO: the whole future BIOS
        body: dict[str, Any] = {
            "@odata.context": "/redfish/v1/$metadata#Bios.Bios",
            "@odata.id": self._p(self.settings_path),
            "@odata.type": "#Bios.v1_1_0.Bios",
            "Id": "Settings",
            "Name": "BIOS Configuration Pending Settings",
            "Description": "BIOS Configuration Pending Settings",
            "AttributeRegistry": self.vendor.registry,
            "Attributes": attrs,
        }
        if self.vendor is DELL:
            body["@Redfish.SettingsApplyTime"] = {
                "@odata.type": "#Settings.v1_3_1.PreferredApplyTime",
                "ApplyTime": "OnReset",
            }
        return Response(200, body)

    def _validate(self, changes: Any) -> dict[str, Any]:
        """Registry checks on a PATCH's Attributes; returns {world key: value} or raises with every problem."""
        if not isinstance(changes, dict):
            raise RedfishError(400, _message(f"{BASE}.PropertyValueTypeError",
                                             f"The value '{changes}' for the property Attributes is of a different "
                                             "type than the property can accept.", [changes, "Attributes"],
                                             ["#/Attributes"]))
        errors: list[dict[str, Any]] = []
        future = {**self.host.bios, **self.pending()}
        for name, value in changes.items():
            attr = self.vendor.attr(name)
            if attr is not None and not attr.identity and not attr.profile:
                future[attr.world_key] = value
        out: dict[str, Any] = {}
        for name, value in changes.items():
            attr = self.vendor.attr(name)
            where = [f"#/Attributes/{name}"]
            if attr is None:
                errors.append(_message(f"{BASE}.PropertyUnknown",
                                       f"The property {name} is not in the list of valid properties for the "
                                       "resource.", [name], where,
                                       resolution="Remove the unknown property from the request body and resubmit "
                                                  "the request if the operation failed."))
                continue
            read_only = attr.read_only or (attr.profile and future.get("SysProfile") != "Custom")
            if read_only:
                why = (" It is set by SysProfile; set SysProfile to Custom first (in the same request is fine)."
                       if attr.profile else "")
                errors.append(_message(f"{BASE}.PropertyNotWritable",
                                       f"The property {name} is a read only property and cannot be assigned a "
                                       f"value.{why}", [name], where,
                                       resolution="Remove the property from the request body and resubmit the "
                                                  "request if the operation failed."))
                continue
            if attr.kind == "Integer":
                if isinstance(value, bool) or not isinstance(value, int):
                    errors.append(_message(f"{BASE}.PropertyValueTypeError",
                                           f"The value '{value}' for the property {name} is of a different type "
                                           "than the property can accept.", [value, name], where))
                elif not attr.lower <= value <= attr.upper:
                    errors.append(_message(f"{BASE}.PropertyValueOutOfRange",
                                           f"The value '{value}' for the property {name} is not in the supported "
                                           "range of acceptable values.", [value, name], where))
                else:
                    out[attr.world_key] = value
                continue
            if not isinstance(value, str):
                errors.append(_message(f"{BASE}.PropertyValueTypeError",
                                       f"The value '{value}' for the property {name} is of a different type than "
                                       "the property can accept.", [value, name], where))
                continue
            if attr.kind == "String":
                if attr.upper and len(value) > attr.upper:
                    errors.append(_message(f"{BASE}.PropertyValueFormatError",
                                           f"The value '{value}' for the property {name} is of a different format "
                                           "than the property can accept.", [value, name], where))
                else:
                    out[attr.world_key] = value
                continue
            if value not in attr.values:
                if self.vendor is DELL:
                    errors.append(_message(
                        f"{IDRAC}.SYS409",
                        "Unable to set the object properties because an incorrect object value is entered.",
                        [name], [name],
                        resolution="Enter a valid object value and retry the operation. For the values "
                                   f"{name} accepts ({', '.join(attr.values)}), see the attribute registry at "
                                   f"{self.system_path}/Bios/BiosRegistry."))
                else:
                    errors.append(_message(f"{BASE}.PropertyValueNotInList",
                                           f"The value '{value}' for the property {name} is not in the list of "
                                           "acceptable values.", [value, name], where,
                                           resolution=f"Choose one of {', '.join(attr.values)}."))
                continue
            out[attr.world_key] = value
        if errors:
            raise RedfishError(400, *errors)
        return out

    def patch_settings(self, req: Request) -> Response:
        data = req.json_object()
        for key in data:
            if key not in ("Attributes", "@Redfish.SettingsApplyTime"):
                raise RedfishError(400, _message(f"{BASE}.PropertyUnknown",
                                                 f"The property {key} is not in the list of valid properties for "
                                                 "the resource.", [key], [f"#/{key}"]))
        apply_time = None
        if "@Redfish.SettingsApplyTime" in data:
            if not self.vendor.jobs:
                raise RedfishError(400, _message(f"{BASE}.PropertyUnknown",
                                                 "The property @Redfish.SettingsApplyTime is not in the list of "
                                                 "valid properties for the resource.",
                                                 ["@Redfish.SettingsApplyTime"], ["#/@Redfish.SettingsApplyTime"]))
            spec = data["@Redfish.SettingsApplyTime"]
            apply_time = spec.get("ApplyTime") if isinstance(spec, dict) else spec
            if apply_time not in ("OnReset", "Immediate"):
                raise RedfishError(400, _message(f"{BASE}.PropertyValueNotInList",
                                                 f"The value '{apply_time}' for the property ApplyTime is not in the "
                                                 "list of acceptable values.", [apply_time, "ApplyTime"],
                                                 ["#/@Redfish.SettingsApplyTime/ApplyTime"],
                                                 resolution="Use OnReset or Immediate (the lab has no "
                                                            "maintenance windows)."))
        if "Attributes" not in data and apply_time is None:
            raise RedfishError(400, _message(f"{BASE}.NoOperation",
                                             "The request body submitted contain no data to act upon and no changes "
                                             "to the resource took place.",
                                             resolution="Add properties in the JSON object and resubmit the "
                                                        "request."))
        if self.vendor.jobs and self.scheduled_job() is not None:
            raise _sys011()
        changes = self._validate(data.get("Attributes", {}))
        if self.vendor.jobs:
            for key, value in changes.items():
                if self.host.bios.get(key, self._default(key)) == value:
                    self.staged.pop(key, None)  # back to the current value: nothing left to change
                else:
                    self.staged[key] = value
        else:
            for key, value in changes.items():
                if self.host.bios.get(key, self._default(key)) == value:
                    self.host.bios_pending.pop(key, None)
                else:
                    self.host.bios_pending[key] = value
            return Response(200, {"error": {
                "code": "iLO.0.10.ExtendedInfo",
                "message": "See @Message.ExtendedInfo for more information.",
                "@Message.ExtendedInfo": [{"MessageId": "iLO.2.14.SystemResetRequired"}],
            }})
        headers: dict[str, str] = {}
        status = 200
        if apply_time is not None and self.staged:
            job = self._commit()
            headers["Location"] = f"{self.manager_path}/Jobs/{job.id}"
            status = 202
            if apply_time == "Immediate":
                self.lab.reset(self.host_name)
        return Response(status, {"@Message.ExtendedInfo": [_success()]}, headers)

    def _default(self, key: str) -> Any:
        attr = next((a for a in self.vendor.attributes if a.world_key == key), None)
        return attr.default if attr is not None else None

    def get_registry(self, req: Request) -> Response:
        entries = []
        profile = self.attributes().get("SysProfile")
        for order, attr in enumerate(self.vendor.attributes):
            entry: dict[str, Any] = {
                "AttributeName": attr.name,
                "CurrentValue": None,
                "DisplayName": attr.display,
                "DisplayOrder": (order + 1) * 100,
                "HelpText": f"{attr.display}.",
                "Hidden": False,
                "Immutable": attr.read_only,
                "MenuPath": f"./{attr.menu}",
                "ReadOnly": attr.read_only or (attr.profile and profile != "Custom"),
                "Type": attr.kind,
                "WriteOnly": False,
            }
            if attr.kind == "Enumeration":
                entry["Value"] = [{"ValueDisplayName": v, "ValueName": v} for v in attr.values]
            elif attr.kind == "Integer":
                entry.update(LowerBound=attr.lower, UpperBound=attr.upper, ScalarIncrement=1)
            elif attr.upper:
                entry.update(MaxLength=attr.upper, MinLength=0)
            entries.append(entry)
        dependencies = [{
            "Dependency": {"MapFrom": [{"MapFromAttribute": "SysProfile", "MapFromCondition": "NEQ",
                                        "MapFromProperty": "CurrentValue", "MapFromValue": "Custom"}],
                           "MapToAttribute": a.name, "MapToProperty": "ReadOnly", "MapToValue": True},
            "DependencyFor": a.name,
            "Type": "Map",
        } for a in self.vendor.attributes if a.profile]
        return Response(200, {
            "@odata.context": "/redfish/v1/$metadata#AttributeRegistry.AttributeRegistry",
            "@odata.id": f"{self.system_path}/Bios/BiosRegistry",
            "@odata.type": "#AttributeRegistry.v1_3_0.AttributeRegistry",
            "Id": self.vendor.registry,
            "Name": "BIOS Attribute Registry",
            "Description": "This registry defines a representation of BIOS Attribute instances",
            "Language": "en",
            "OwningEntity": "Dell",
            "RegistryVersion": self.vendor.registry.rpartition(".v")[2].replace("_", "."),
            "SupportedSystems": [{"ProductName": self.vendor.model, "SystemId": "SystemBios", "FirmwareVersion":
                                  self.vendor.bios_version}],
            "RegistryEntries": {"Attributes": entries, "Dependencies": dependencies, "Menus": []},
        })

    # -------------------------------------------------------------- jobs (iDRAC)

    def _new_job(self, values: dict[str, Any]) -> Job:
        job = Job(self.lab.new_job_id(), time.time(), self.host.boot_count, dict(values))
        self.jobs[job.id] = job
        return job

    def _commit(self) -> Job:
        """Turn the staged values into a configuration job: the world applies them at the next boot."""
        job = self._new_job(self.staged)
        self.host.bios_pending.update(self.staged)
        self.staged.clear()
        return job

    def _job_body(self, job: Job, path: str) -> dict[str, Any]:
        state = job.state(self.host)
        message, msg_id, percent = {
            "Scheduled": ("Task successfully scheduled.", "JCP001", 0),
            "Running": ("Job in progress.", "PR20", 34),
            "Completed": ("Job completed successfully.", "PR19", 100),
        }[state]
        done = _now_iso(self.host.boot_time) if state == "Completed" else None
        return {
            "@odata.context": "/redfish/v1/$metadata#DellJob.DellJob",
            "@odata.id": path,
            "@odata.type": "#DellJob.v1_5_0.DellJob",
            "ActualRunningStartTime": done,
            "ActualRunningStopTime": done,
            "CompletionTime": done,
            "Description": "Job Instance",
            "EndTime": "TIME_NA",
            "Id": job.id,
            "JobState": state,
            "JobType": "BIOSConfiguration",
            "Message": message,
            "MessageArgs": [],
            "MessageArgs@odata.count": 0,
            "MessageId": msg_id,
            "Name": job.name,
            "PercentComplete": percent,
            "StartTime": _now_iso(job.created),
            "TargetSettingsURI": None,
        }

    def get_jobs(self, req: Request) -> Response:
        base = req.path.rstrip("/")
        members = [f"{base}/{jid}" for jid in self.jobs]
        return Response(200, {
            "@odata.context": "/redfish/v1/$metadata#DellJobCollection.DellJobCollection",
            "@odata.id": base,
            "@odata.type": "#DellJobCollection.DellJobCollection",
            "Description": "Collection of Job Instances",
            "Id": "JobQueue",
            "Name": "JobQueue",
            "Members": [{"@odata.id": m} for m in members],
            "Members@odata.count": len(members),
        })

    def post_job(self, req: Request) -> Response:
        data = req.json_object()
        target = data.get("TargetSettingsURI")
        if target is None:
            raise RedfishError(400, _message(f"{BASE}.CreateFailedMissingReqProperties",
                                             "The create operation failed because the required property "
                                             "TargetSettingsURI was missing from the request.",
                                             ["TargetSettingsURI"], ["#/TargetSettingsURI"],
                                             severity="Critical"))
        if not isinstance(target, str) or target.rstrip("/") != self.settings_path:
            raise RedfishError(400, _message(f"{BASE}.PropertyValueNotInList",
                                             f"The value '{target}' for the property TargetSettingsURI is not in "
                                             "the list of acceptable values.", [target, "TargetSettingsURI"],
                                             ["#/TargetSettingsURI"],
                                             resolution=f"The lab's BMC takes {self.settings_path}."))
        if self.scheduled_job() is not None:
            raise _sys011()
        if not self.staged:
            raise RedfishError(400, _message(f"{BASE}.GeneralError",
                                             "No pending data present to create a Configuration job.",
                                             resolution="PATCH the attributes to change into "
                                                        f"{self.settings_path} first, then create the job."))
        job = self._commit()
        location = f"{req.path.rstrip('/')}/{job.id}"
        return Response(200, {"@Message.ExtendedInfo": [_success()]}, {"Location": location})

    def _job(self, jid: str) -> Job:
        job = self.jobs.get(jid)
        if job is None:
            raise RedfishError(404, _message(f"{BASE}.ResourceMissingAtURI",
                                             f"The resource at the URI {self.manager_path}/Jobs/{jid} was not "
                                             "found.", [jid], severity="Critical",
                                             resolution="Enter the correct job ID and retry the operation."))
        return job

    def get_job(self, req: Request, jid: str) -> Response:
        return Response(200, self._job_body(self._job(jid), req.path.rstrip("/")))

    def delete_job(self, req: Request, jid: str) -> Response:
        job = self._job(jid)
        if job.state(self.host) == "Running":
            raise RedfishError(400, _message(f"{BASE}.GeneralError",
                                             f"Unable to delete the job {jid} because it is running.",
                                             resolution="Wait for the job to complete."))
        if job.state(self.host) == "Scheduled":
            for key in job.values:  # abandon: the committed values are no longer pending
                self.host.bios_pending.pop(key, None)
        del self.jobs[jid]
        return Response(200, {"@Message.ExtendedInfo": [_success()]})

    # -------------------------------------------------------------- managers, sessions

    def get_manager(self, req: Request) -> Response:
        ident = self._identity()
        body: dict[str, Any] = {
            "@odata.context": "/redfish/v1/$metadata#Manager.Manager",
            "@odata.id": self._p(self.manager_path),
            "@odata.type": "#Manager.v1_9_0.Manager",
            "Id": self.vendor.manager_id,
            "Name": "Manager",
            "Description": "BMC",
            "ManagerType": "BMC",
            "Model": self.vendor.manager_model,
            "FirmwareVersion": self.vendor.manager_firmware,
            "PowerState": "On",
            "Status": {"Health": "OK", "State": "Enabled"},
            "UUID": str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{ident['uuid']}.manager")),
            "Links": {"ManagerForServers": [{"@odata.id": self._p(self.system_path)}]},
        }
        if self.vendor is DELL:
            body["Links"]["Oem"] = {"Dell": {"Jobs": {"@odata.id": f"{self.manager_path}/Jobs"}}}
        return Response(200, body)

    def get_session_service(self, req: Request) -> Response:
        return Response(200, {
            "@odata.context": "/redfish/v1/$metadata#SessionService.SessionService",
            "@odata.id": self._p("/redfish/v1/SessionService"),
            "@odata.type": "#SessionService.v1_1_8.SessionService",
            "Id": "SessionService",
            "Name": "Session Service",
            "Description": "Session Service",
            "ServiceEnabled": True,
            "SessionTimeout": SESSION_TIMEOUT_S,
            "Sessions": {"@odata.id": self._p("/redfish/v1/SessionService/Sessions")},
            "Status": {"Health": "OK", "State": "Enabled"},
        })

    def _session_path(self, sid: str) -> str:
        return self._p(f"/redfish/v1/SessionService/Sessions/{sid}")

    def get_sessions(self, req: Request) -> Response:
        return self._collection("/redfish/v1/SessionService/Sessions", "Session Collection",
                                [f"/redfish/v1/SessionService/Sessions/{s}" for s in self.sessions],
                                "SessionCollection")

    def _session_body(self, session: Session) -> dict[str, Any]:
        return {
            "@odata.context": "/redfish/v1/$metadata#Session.Session",
            "@odata.id": self._session_path(session.id),
            "@odata.type": "#Session.v1_3_0.Session",
            "Id": session.id,
            "Name": "User Session",
            "Description": "User Session",
            "UserName": session.username,
        }

    def post_session(self, req: Request) -> Response:
        data = req.json_object()
        user, password = data.get("UserName"), data.get("Password")
        if not isinstance(user, str) or not isinstance(password, str):
            missing = "UserName" if not isinstance(user, str) else "Password"
            raise RedfishError(400, _message(f"{BASE}.CreateFailedMissingReqProperties",
                                             f"The create operation failed because the required property {missing} "
                                             "was missing from the request.", [missing], [f"#/{missing}"],
                                             severity="Critical"))
        if not self.lab.check_password(user, password):
            raise _no_session()
        sid = str(self._next_session)
        self._next_session += 1
        session = Session(sid, secrets.token_hex(16), user, time.monotonic())
        self.sessions[sid] = session
        return Response(201, self._session_body(session),
                        {"X-Auth-Token": session.token, "Location": self._session_path(sid)})

    def _session(self, sid: str) -> Session:
        session = self.sessions.get(sid)
        if session is None:
            raise _not_found(f"/redfish/v1/SessionService/Sessions/{sid}")
        return session

    def get_session(self, req: Request, sid: str) -> Response:
        return Response(200, self._session_body(self._session(sid)))

    def delete_session(self, req: Request, sid: str) -> Response:
        self._session(sid)
        del self.sessions[sid]
        return Response(200, {"@Message.ExtendedInfo": [_success()]})

    # -------------------------------------------------------------- the HTTP server

    async def start(self, context: ssl.SSLContext) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=context,
                                                 ssl_handshake_timeout=15.0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                try:
                    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), IDLE_CONNECTION_S)
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError,
                        ConnectionError, ssl.SSLError):
                    return
                try:
                    req = _parse_head(head)
                except ValueError as exc:
                    writer.write(_render(Response(400, _error_body(_message(
                        f"{BASE}.GeneralError", f"Bad request: {exc}", severity="Critical"))), False, False))
                    await writer.drain()
                    return
                try:
                    req.body = await _read_body(reader, writer, req.headers)
                    resp = self.handle(req)
                except RedfishError as exc:
                    resp = Response(exc.status, _error_body(*exc.messages), exc.headers)
                    req.headers["connection"] = "close"  # the body may not have been read
                except ValueError:
                    resp = Response(400, _error_body(_message(f"{BASE}.GeneralError", "Bad request body framing.",
                                                              severity="Critical")))
                    req.headers["connection"] = "close"
                keep = "close" not in req.headers.get("connection", "").lower() and (
                    req.version == "HTTP/1.1" or "keep-alive" in req.headers.get("connection", "").lower())
                writer.write(_render(resp, req.method == "HEAD", keep))
                await writer.drain()
                if not keep:
                    return
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError, asyncio.LimitOverrunError):
            return
        finally:
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 2.0)

    async def stop(self) -> None:
        if self.server is None:
            return
        self.server.close()
        for writer in list(self._writers):
            writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.server.wait_closed(), 5.0)
        self.server = None

    def describe(self) -> dict[str, Any]:
        self.sync_world()
        return {
            "name": self.name,
            "port": self.port,
            "vendor": self.vendor.name,
            "staged": self._names(self.staged),
            "pending": self._names(self.host.bios_pending),
            "jobs": {jid: job.state(self.host) for jid, job in self.jobs.items()},
        }


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
    """The lab runtime's hook (`lab/server.py` SERVICE_MODULES): start the BMCs, register them.

    Reset actions go through ``lab.reboot`` (SSH side down for the reboot delay, then the world's
    reboot). The password goes to DIR/lab.env (Lab.secret); the inventory reads it from
    $ROCE_LAB_BMC_PASSWORD.
    """
    handle = await start_bmcs(lambda: lab.world, lab.directory, on_reset=lab.reboot)
    lab.secret(PASSWORD_ENV, handle.password)
    lab.register("bmc", handle.inventory_entries(), status=handle.status_rows, stop=handle.stop)


# ---------------------------------------------------------------------------- faults


def _host_of(world: World, target: str) -> EsxiHost:
    name = target.removeprefix("bmc-")
    if name not in world.hosts:
        raise ValueError(f"{target}: no ESXi host {name!r} in the world")
    return world.hosts[name]


def _proc_virtualization_off(world: World, target: str) -> None:
    # the ESXi shell derives `HV Support: 2` (disabled in BIOS) from this attribute
    _host_of(world, target).bios["ProcVirtualization"] = "Disabled"


def _vtd_off(world: World, target: str) -> None:
    host = _host_of(world, target)
    set_bmc_vendor(host, "hpe")  # only servers with a VT-d knob of its own can lose VT-d alone
    host.bios["IntelProcVtd"] = "Disabled"


def _sriov_global_off(world: World, target: str) -> None:
    _host_of(world, target).bios["SriovGlobalEnable"] = "Disabled"


def _dapc_profile(world: World, target: str) -> None:
    _host_of(world, target).bios["SysProfile"] = "PerfPerWattOptimizedDapc"


FAULTS: dict[str, Fault] = {f.code: f for f in (
    Fault("RW101", "bmc", "BIOS Virtualization Technology (ProcVirtualization) disabled (ESXi shows HV Support 2)",
          _proc_virtualization_off),
    Fault("RW102", "bmc", "an HPE iLO server with Intel VT-d (IntelProcVtd) disabled (Dell PowerEdge has no "
                          "separate VT-d knob: ProcVirtualization covers it)", _vtd_off),
    Fault("RW103", "bmc", "BIOS SR-IOV Global Enable (SriovGlobalEnable) disabled: the host gets no VFs, its "
                          "guests no RDMA device", _sriov_global_off),
    Fault("RW104", "bmc", "BIOS System Profile left at the factory PerfPerWattOptimizedDapc (BIOS-controlled "
                          "power management)", _dapc_profile),
)}
