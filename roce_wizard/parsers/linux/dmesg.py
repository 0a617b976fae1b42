"""dmesg: IOMMU state and PCIe link width/speed limits."""

from __future__ import annotations

import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    body_lines,
    fraction,
)
from roce_wizard.parsers.linux.common import _float

# ---------------------------------------------------------------------------------------------
# dmesg

# `[    8.387515] …` (seconds since boot, so never the 10-digit epoch of a UCX log line
# `[1621436784.119617] [host:pid] …`), `dmesg -T` dates, and `journalctl -k` lines
_DMESG_TS = re.compile(r"^\s*\[\s*[0-9]{1,9}\.[0-9]{6}\]\s+(?!\[)"
                       r"|^\s*\[[A-Z][a-z]{2} [A-Z][a-z]{2}\s+[0-9]+ [0-9:]+ [0-9]{4}\]"
                       r"|^[A-Z][a-z]{2}\s+[0-9]+ [0-9:]+ \S+ kernel:")
_IOMMU_ON = re.compile(
    r"DMAR: IOMMU enabled|DMAR: Intel\(R\) Virtualization Technology for Directed I/O|"
    r"AMD-Vi: (?:Interrupt remapping enabled|Found IOMMU|AMD IOMMUv2 (?:loaded|driver))|"
    r"AMD-Vi: IOMMU performance counters supported|"
    r"iommu: Default domain type: (?:Translated|Passthrough)|Adding to iommu group|"
    r"iommu: Adding device \S+ to group|arm-smmu(?:-v3)? \S+: (?:probing|[0-9]+ context banks)"
)
_IOMMU_OFF = re.compile(r"DMAR: IOMMU disabled|AMD-Vi: (?:AMD )?IOMMU disabled|"
                        r"\b(?:intel_iommu|amd_iommu)=off\b|No IOMMU found|IOMMU not enabled")
_PCIE_LIMITED = re.compile(
    r"(?:(?P<drv>[\w-]+)\s+)?(?P<dev>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]):\s+"
    r"(?P<avail>[0-9.]+) Gb/s available PCIe bandwidth, limited by (?P<lim>.+?) at (?P<at>\S+)"
    r"(?: \(capable of (?P<cap>[0-9.]+) Gb/s with (?P<caplink>.+?)\))?\s*$"
)
_PCIE_OK = re.compile(
    r"(?:(?P<drv>[\w-]+)\s+)?(?P<dev>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]):\s+"
    r"(?P<avail>[0-9.]+) Gb/s available PCIe bandwidth \((?P<link>[^)]+)\)"
)


def parse_linux_dmesg(text: str) -> Facts:
    body = body_lines(text, ("dmesg", "journalctl"))
    on, off, evidence = False, False, []
    passthrough = None
    acpi_table = None  # the firmware's DMAR (Intel VT-d) / IVRS (AMD-Vi) table: the BIOS has the IOMMU on
    limited: list[dict] = []
    links: list[dict] = []
    kernelish = 0
    for ln in body:
        if _DMESG_TS.match(ln) or re.search(r"\b(?:mlx5_core|DMAR|AMD-Vi|iommu|pci)\b", ln):
            kernelish += 1
        if _IOMMU_ON.search(ln):
            on = True
            evidence.append(ln.strip())
        elif _IOMMU_OFF.search(ln):
            off = True
            evidence.append(ln.strip())
        if acpi_table is None and (m := re.search(r"ACPI: (DMAR|IVRS) 0x[0-9A-Fa-f]+", ln)):
            acpi_table = m.group(1)
        if re.search(r"Default domain type: Passthrough|\biommu=pt\b", ln):
            passthrough = True
        elif re.search(r"Default domain type: Translated", ln) and passthrough is None:
            passthrough = False
        m = _PCIE_LIMITED.search(ln)
        if m:
            limited.append({"device": m.group("dev"), "driver": m.group("drv"),
                            "available_gbps": _float(m.group("avail")), "limited_by": m.group("lim"),
                            "limited_at": m.group("at"), "capable_gbps": _float(m.group("cap")),
                            "capable_link": m.group("caplink")})
            continue
        m = _PCIE_OK.search(ln)
        if m:
            links.append({"device": m.group("dev"), "driver": m.group("drv"),
                          "available_gbps": _float(m.group("avail")), "link": m.group("link")})
    if not kernelish:
        raise ParseError("linux_dmesg", "no kernel log line found")
    facts: Facts = {"iommu_enabled": True if on else (False if off else None),
                    "pcie_limited": limited, "lines": len(body)}
    if evidence:
        facts["iommu_evidence"] = evidence[:10]
    if passthrough is not None:
        facts["iommu_passthrough"] = passthrough
    if acpi_table is not None:
        facts["iommu_acpi_table"] = acpi_table
    if links:
        facts["pcie_bandwidth"] = links
    return facts


def sniff_linux_dmesg(text: str) -> int:
    body = body_lines(text, ("dmesg", "journalctl"))
    f = fraction(body, lambda ln: bool(_DMESG_TS.match(ln)))
    return round(80 * f) if f else 0
