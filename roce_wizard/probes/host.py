"""Probes of a Linux host's limits and of its card's DCQCN and PCIe link (RW413-RW415).

- ``roce_ecn_sysfs`` (bare metal): MLNX_OFED's per-priority DCQCN switches, every priority of both points,
  `grep -H . /sys/class/net/<if>/ecn/roce_np/enable/* /sys/class/net/<if>/ecn/roce_rp/enable/*`
  (NVIDIA MLNX_OFED "Explicit Congestion Notification (ECN)": one file per priority, 0/1). Without MLNX_OFED the
  globs match nothing and grep says `No such file or directory` (exit 2): an answer, which the parser records.
- ``ulimit_memlock``: `ulimit -l` in the SSH session's shell — the limit PAM (pam_limits, limits.conf(5)) gives a
  login of this user, which is also what `mpirun` over SSH gives its ranks.
- ``systemd_limit_memlock``: `systemctl show -p LimitMEMLOCK -p LoadState slurmd.service` (systemctl(1) `show`,
  systemd.exec(5) LimitMEMLOCK=): Slurm's jobs inherit slurmd's limit, not the login's; `LoadState=not-found`
  says there is no slurmd on the host (read by RW414 from the output).
- ``lspci_vvv`` (bare metal): `lspci -vv -s <roce.pf_pci>` (pciutils lspci(8)): LnkCap / LnkSta. As root:
  otherwise lspci prints `Capabilities: <access denied>` and the link lines are missing.
"""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.commands.shell import safe
from roce_wizard.model import Target, TargetKind
from roce_wizard.probes import Probe

LINUXY = (TargetKind.GUEST, TargetKind.LINUX)
BAREMETAL = (TargetKind.LINUX,)

_IFNAME = re.compile(r"^[A-Za-z0-9_.@-]{1,15}$")
_PCI = re.compile(r"^(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
SLURMD = "slurmd.service"


def _ecn_sysfs(target: Target, facts: dict[str, Any]) -> str | None:
    if not target.roce.netdev:
        return None
    base = f"/sys/class/net/{safe(target.roce.netdev, _IFNAME)}/ecn"
    return f"grep -H . {base}/roce_np/enable/* {base}/roce_rp/enable/*"


def _lspci(target: Target, facts: dict[str, Any]) -> str | None:
    if not target.roce.pf_pci:
        return None
    return f"lspci -vv -s {safe(target.roce.pf_pci, _PCI)}"


PROBES = (
    Probe("roce_ecn_sysfs", BAREMETAL, _ecn_sysfs, "roce_ecn_sysfs", answer_exits=(2,),
          why_not="the inventory gives no roce.netdev for this target"),
    Probe("ulimit_memlock", LINUXY, lambda t, f: "ulimit -l", "ulimit_memlock"),
    Probe("systemd_limit_memlock", LINUXY, lambda t, f: f"systemctl show -p LimitMEMLOCK -p LoadState {SLURMD}",
          "systemd_limit_memlock"),
    Probe("lspci_vvv", BAREMETAL, _lspci, "lspci_vvv",
          why_not="the inventory gives no roce.pf_pci (the RoCE card's PCI address) for this host"),
)
