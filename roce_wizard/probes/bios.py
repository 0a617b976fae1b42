"""Probes of the bios stage (RW101–RW104).

With a ``bmc`` target for a server in the inventory, its BIOS is read over Redfish
(``redfish bios``: current attributes and pending ones, one JSON document). Without one, the
checks judge what the server's OS shows of its BIOS — the OS-evidence probes below run only on a
host no bmc target manages (engine fact ``bmc_of_host``), so one setting is judged once.
``sriov_numvfs`` (``/sys/class/net/<netdev>/device/sriov_totalvfs``) is the linux stage's probe,
reused as is.
"""

from __future__ import annotations

from typing import Any

from roce_wizard.model import Target, TargetKind
from roce_wizard.probes import Command, Probe

BMC = (TargetKind.BMC,)
ESXI = (TargetKind.ESXI,)
BAREMETAL = (TargetKind.LINUX,)
_HAS_BMC = "the host's BMC is in the inventory: its BIOS is read over Redfish"


def _without_bmc(command: str) -> Command:
    def build(target: Target, facts: dict[str, Any]) -> str | None:
        return None if facts.get("bmc_of_host") else command

    return build


PROBES: tuple[Probe, ...] = (
    Probe("redfish_bios", BMC, lambda t, f: "redfish bios", "redfish_bios"),
    Probe("esxi_cpu_global", ESXI, _without_bmc("esxcli --formatter=csv hardware cpu global get"), "esxi_cpu_global",
          why_not=_HAS_BMC),
    # `ls` exits 2 when the kernel has no IOMMU class at all: an answer ("no IOMMU"), not a failure
    Probe("sysfs_iommu", BAREMETAL, _without_bmc("ls /sys/class/iommu"), "sysfs_iommu", answer_exits=(1, 2),
          why_not=_HAS_BMC),
    Probe("linux_dmesg", BAREMETAL, _without_bmc("dmesg | grep -i -e DMAR -e IOMMU -e IVRS"), "linux_dmesg",
          why_not=_HAS_BMC),
)
