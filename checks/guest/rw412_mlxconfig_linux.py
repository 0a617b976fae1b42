"""RW412 mlxconfig-linux — bare-metal firmware config: Ethernet ports, SR-IOV, VF count

What it checks
    On a bare-metal Linux host, what RW205–RW208 check on ESXi, read with
    `mlxconfig -d <pci> -e query` and `/sys/class/net/<netdev>/device/sriov_totalvfs`:
    - LINK_TYPE_P<n> of the RoCE port is ETH(2) (only VPI cards print it; when roce.pf_pci is
      known, port n = PCI function + 1, else every printed port) — RW205;
    - SRIOV_EN is True(1) (NUM_OF_VFS can be 8 while SRIOV_EN is False) — RW206;
    - ADVANCED_PCI_SETTINGS is False(0) — warn — RW207;
    - NUM_OF_VFS ≥ the VFs wanted on ONE PF (the largest entry of inventory roce.vfs), and
      sriov_totalvfs ≥ that too (it reflects the firmware value after a power cycle) — RW208.
      NUM_OF_VFS is "the total number of VFs that can be supported" (mlxconfig's parameter text, in
      mstflint's tools layouts as total_vfs), and it is a ceiling per PF: a ConnectX-4 Lx with
      NUM_OF_VFS=8 shows sriov_totalvfs 8 on its second port (corpus
      sriov_numvfs/cx4lx-sriov-totalvfs-8.txt): per PF, never summed over ports.
      `policy.num_of_vfs_rule` is the site's rule for ESXi's max_vfs (RW208); on Linux each PF's
      `sriov_numvfs` meets the per-PF ceiling directly, and the finding says so.
    A value whose Next Boot differs from Current is reported as a pending reboot.

Why it matters
    An IB-mode port carries no RoCE; without SRIOV_EN or with too few VFs in firmware,
    `echo N > sriov_numvfs` fails and no VM or container gets its VF.

How to fix by hand
    mlxconfig -d <pci> -y set LINK_TYPE_P1=2 SRIOV_EN=1 NUM_OF_VFS=<n per PF> ADVANCED_PCI_SETTINGS=0
    then reboot the host (a warm reboot may not load Next Boot values: mlxfwreset -d <pci> -y reset,
    or power cycle); afterwards: echo <n> > /sys/class/net/<netdev>/device/sriov_numvfs
    Sources: `mlxconfig -d <pci> -e query` / `-y set …` — corpus mlxconfig_query/* and
    mlxconfig_set/igx-cx7-p3740-link-type-p2-ib-to-eth.txt (`mlxconfig -d 0005:03:00.0 set
    LINK_TYPE_P1=ETH …`), mlxconfig_set/cx5-ocp3-next-boot-new-apply-prompt-reboot.txt
    (`set SRIOV_EN=1 NUM_OF_VFS=8`); `sriov_totalvfs` / `sriov_numvfs` — the kernel's sysfs-bus-pci
    ABI and corpus sriov_numvfs/*, ip_link_vf/cx4-pve-bridge-member-8-vfs-zero-mac-query-rss.txt
    (`echo 8 > …/sriov_numvfs`); `mlxfwreset -d <pci> -y reset` — NVIDIA Firmware Tools (MFT)
    Documentation, mlxfwreset (its known issues show `mlxfwreset --device <dev> reset`,
    https://docs.nvidia.com/networking/display/mftv4301113lts/MFT+Known+Issues), and the open-source twin
    mstfwreset(1) of mstflint (`--device/-d`, `--yes/-y`, `reset`;
    https://manpages.ubuntu.com/manpages/mantic/man1/mstfwreset.1.html).

Fix safety
    disruptive: writes adapter firmware configuration; takes effect after a host reboot / fw reset.
    `roce-wizard fix` runs one `mlxconfig -d <pci> -y set …` with every wrong value (LINK_TYPE_P<n>=2,
    SRIOV_EN=1, ADVANCED_PCI_SETTINGS=0, NUM_OF_VFS=<wanted>) and asks for a host reboot. A value
    already right for Next Boot and only waiting for the reboot is no plan: the reboot ledger carries it.
"""

import re

from roce_wizard.checklib.esxi import safe_mlx_device
from roce_wizard.checklib.findings import bad, excerpt, good, skip
from roce_wizard.commands.handfix import MST_DEVICE, refused
from roce_wizard.model import (
    Check,
    Facts,
    Finding,
    FixPlan,
    Policy,
    RebootKind,
    Safety,
    Severity,
    Stage,
    Status,
    Step,
    TargetKind,
)
from roce_wizard.probes import UnsafeValue, safe

CHECK = Check(
    code="RW412",
    slug="mlxconfig-linux",
    title="Firmware config (bare metal)",
    stage=Stage.GUEST,
    target=TargetKind.LINUX,
    severity=Severity.FAIL,
    probes=("mlxconfig_query",),
    optional_probes=("sriov_numvfs",),
    reboot=RebootKind.HOST,
    fix_hint="mlxconfig -d <pci> -y set LINK_TYPE_P1=2 SRIOV_EN=1 NUM_OF_VFS=<n> ADVANCED_PCI_SETTINGS=0; reboot",
)


def _val(device: dict, name: str) -> tuple[object, object, bool]:
    """(next_boot, current, pending) of a parameter; (None, None, False) when not printed."""
    p = (device.get("params") or {}).get(name)
    if not p:
        return None, None, False
    nb = p.get("next_boot", p.get("current"))
    cur = p.get("current", nb)
    return nb, cur, "current" in p and "next_boot" in p and p["current"] != p["next_boot"]


def _port_of(pci: str | None) -> int | None:
    m = re.search(r"\.([0-7])$", pci or "")
    return int(m.group(1)) + 1 if m else None


def _wanted_per_pf(t) -> int | None:
    """The VFs one PF must offer: the largest of roce.vfs (NUM_OF_VFS is per PF; never sum ports)."""
    return max(t.roce.vfs) if t and t.roce.vfs else None


def _reboot(pci: str) -> str:
    return f"then reboot the host (warm reboot may not apply it: mlxfwreset -d {pci} -y reset, or power cycle)"


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    devices = list(facts.need("mlxconfig_query").get("devices", []))
    raw = facts.raw.get("mlxconfig_query")
    t = facts.target
    wanted = _wanted_per_pf(t)
    totalvfs = (facts.get("sriov_numvfs") or {}).get("value")
    findings: list[Finding] = []
    for device in devices:
        label = device.get("device") or device.get("device_type") or "device"
        pci = (t.roce.pf_pci if t and t.roce.pf_pci else None) or label
        # the device mlxconfig printed goes into the fix lines: validated and quoted, or none is shown
        try:
            safe_mlx_device(pci)
            unsafe = ""
        except UnsafeValue:
            unsafe = refused(MST_DEVICE)
        mlx = f"mlxconfig -d {pci} -y set"

        def add(status_ok: bool, summary: str, name: str, observed: object, expected: object, fix: str,
                warn: bool = False, subject: str = label) -> None:
            ev = excerpt(raw, rf"\b{re.escape(name)}\b")
            if status_ok:
                findings.append(good(CHECK, facts, summary, observed=observed, expected=expected, excerpt=ev,
                                     subject=subject))
                return
            f = bad(CHECK, facts, summary, observed=observed, expected=expected, excerpt=ev, subject=subject,
                    fix=(unsafe or fix) if fix else fix)
            if warn:
                f.status = Status.WARN
            findings.append(f)

        # RW205 link type on the RoCE port(s)
        port = _port_of(t.roce.pf_pci) if t and t.roce.pf_pci else None
        names = [f"LINK_TYPE_P{port}"] if port else sorted(
            n for n in (device.get("params") or {}) if re.fullmatch(r"LINK_TYPE_P\d", n))
        for name in names:
            nb, cur, pending = _val(device, name)
            if nb is None:
                continue  # ETH-only card: no LINK_TYPE key
            obs = {"next_boot": nb, "current": cur}
            if nb != "ETH":
                add(False, f"RW205: {name} is {nb} on {label}, not ETH", name, obs, "ETH",
                    f"{mlx} {name}=2  # {_reboot(pci)}")
            elif pending:
                add(False, f"RW205: {name} is ETH for next boot on {label} but {cur} now: reboot pending", name, obs,
                    "ETH", _reboot(pci))
            else:
                add(True, f"RW205: {name} is ETH on {label}", name, obs, "ETH", "")
        # RW206 SRIOV_EN
        nb, cur, pending = _val(device, "SRIOV_EN")
        sriov_on = nb is True
        if nb is not None:
            obs = {"next_boot": nb, "current": cur}
            if nb is not True:
                add(False, f"RW206: SRIOV_EN is False on {label}", "SRIOV_EN", obs, True,
                    f"{mlx} SRIOV_EN=1  # {_reboot(pci)}")
            elif pending:
                add(False, f"RW206: SRIOV_EN is set for next boot on {label} but not current: reboot pending",
                    "SRIOV_EN", obs, True, _reboot(pci))
            else:
                add(True, f"RW206: SRIOV_EN is True on {label}", "SRIOV_EN", obs, True, "")
        # RW207 ADVANCED_PCI_SETTINGS (warn)
        nb, cur, _ = _val(device, "ADVANCED_PCI_SETTINGS")
        if nb is not None:
            obs = {"next_boot": nb, "current": cur}
            add(nb is False, f"RW207: ADVANCED_PCI_SETTINGS is {nb} on {label}", "ADVANCED_PCI_SETTINGS", obs, False,
                f"{mlx} ADVANCED_PCI_SETTINGS=0  # {_reboot(pci)}", warn=True)
        # RW208 NUM_OF_VFS and sriov_totalvfs vs the VFs wanted
        nb, cur, pending = _val(device, "NUM_OF_VFS")
        if nb is None:
            continue
        obs = {"num_of_vfs": nb, "current": cur, "sriov_totalvfs": totalvfs, "wanted": wanted,
               "rule": "per PF (Linux: each PF's sriov_numvfs against the per-PF NUM_OF_VFS)"}
        if wanted is None:
            findings.append(skip(CHECK, facts, f"RW208: NUM_OF_VFS is {nb} on {label}; judging it needs the "
                                 "inventory's roce.vfs", observed=obs, expected=">= VFs wanted",
                                 excerpt=excerpt(raw, r"NUM_OF_VFS"), subject=label))
            continue
        need = f"{mlx} SRIOV_EN=1 NUM_OF_VFS={max(wanted, nb if isinstance(nb, int) else 0)}" if not sriov_on \
            else f"{mlx} NUM_OF_VFS={wanted}"
        if not sriov_on and _val(device, "SRIOV_EN")[0] is not None:
            # NUM_OF_VFS can be set while SRIOV_EN is False (two separate mlxconfig keys; no vendor page
            # or capture here shows the pair, a reviewer's trap) — then the card offers no VF
            add(False, f"RW208: NUM_OF_VFS {nb} on {label} offers no VF while SRIOV_EN is False", "NUM_OF_VFS", obs,
                wanted, f"{need}  # {_reboot(pci)}")
        elif not isinstance(nb, int) or nb < wanted:
            add(False, f"RW208: NUM_OF_VFS {nb} on {label} < {wanted} VFs wanted on one PF (a per-PF ceiling)",
                "NUM_OF_VFS", obs, wanted,
                f"{need}  # {_reboot(pci)}")
        elif isinstance(totalvfs, int) and totalvfs < wanted:
            add(False, f"RW208: sriov_totalvfs is {totalvfs} < {wanted} wanted although NUM_OF_VFS is {nb}: "
                "the firmware value is not active yet (reboot / power cycle pending)", "NUM_OF_VFS", obs, wanted,
                _reboot(pci))
        elif pending:
            add(False, f"RW208: NUM_OF_VFS {nb} is for next boot on {label} (current {cur}): reboot pending",
                "NUM_OF_VFS", obs, wanted, _reboot(pci))
        else:
            extra = f", sriov_totalvfs {totalvfs}" if totalvfs is not None else ""
            add(True, f"RW208: NUM_OF_VFS {nb}{extra} covers the {wanted} VFs wanted per PF on {label} (a per-PF "
                "ceiling, not summed over ports)", "NUM_OF_VFS", obs, wanted, "")
    if not findings:
        findings.append(skip(CHECK, facts, "the mlxconfig query printed none of LINK_TYPE_P*, SRIOV_EN, "
                             "ADVANCED_PCI_SETTINGS, NUM_OF_VFS", expected="those parameters",
                             excerpt=excerpt(raw, r"Device")))
    return findings


_PCI = re.compile(r"^(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


def _sets(device: dict, t, wanted: int | None) -> tuple[dict[str, int], dict[str, object]]:
    """(parameter -> value to write, parameter -> Next Boot now) for one device."""
    sets: dict[str, int] = {}
    before: dict[str, object] = {}
    port = _port_of(t.roce.pf_pci) if t and t.roce.pf_pci else None
    names = [f"LINK_TYPE_P{port}"] if port else sorted(
        n for n in (device.get("params") or {}) if re.fullmatch(r"LINK_TYPE_P\d", n))
    for name in names:
        nb = _val(device, name)[0]
        if nb is not None and nb != "ETH":
            sets[name], before[name] = 2, nb
    nb = _val(device, "SRIOV_EN")[0]
    if nb is not None and nb is not True:
        sets["SRIOV_EN"], before["SRIOV_EN"] = 1, nb
    nb = _val(device, "ADVANCED_PCI_SETTINGS")[0]
    if nb is not None and nb is not False:
        sets["ADVANCED_PCI_SETTINGS"], before["ADVANCED_PCI_SETTINGS"] = 0, nb
    nb = _val(device, "NUM_OF_VFS")[0]
    if nb is not None and wanted is not None and (not isinstance(nb, int) or nb < wanted):
        sets["NUM_OF_VFS"], before["NUM_OF_VFS"] = int(wanted), nb
    return sets, before


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """One mlxconfig set per device with every wrong Next Boot value, then a host reboot; None when
    compliant or when only a reboot is pending."""
    t = facts.target
    wanted = _wanted_per_pf(t)
    steps = []
    for device in facts.need("mlxconfig_query").get("devices", []):
        pci = (t.roce.pf_pci if t and t.roce.pf_pci else None) or device.get("device")
        sets, before = _sets(device, t, wanted)
        if not sets or not pci or not _PCI.match(pci):
            continue
        args = " ".join(f"{k}={v}" for k, v in sets.items())
        steps.append(Step(f"write the firmware configuration of {pci} (Next Boot values)",
                          f"mlxconfig -d {safe(pci, _PCI)} -y set {args}",
                          before=" ".join(f"{k}={v}" for k, v in before.items()), after=args))
    if not steps:
        return None
    return FixPlan(CHECK.code, facts.target_name, "set the RoCE card's firmware configuration (Ethernet ports, "
                   "SR-IOV, VF count)", steps=tuple(steps), safety=Safety.DISRUPTIVE, reboot=RebootKind.HOST,
                   reboot_reason="mlxconfig writes Next Boot values: a host reboot loads them (a warm reboot may "
                   "not: mlxfwreset -d <pci> -y reset, or a power cycle)")
