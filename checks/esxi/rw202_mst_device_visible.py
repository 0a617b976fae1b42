"""RW202 mst-device-visible — mst lists the RoCE adapter

What it checks
    `/opt/mellanox/bin/mst status -vv` lists an mst device (e.g. `ConnectX5  mt4119_pciconf1
    3b:00.0`) on the RoCE card: the same PCI bus:device as the inventory's roce.pf_pci (or as the
    RoCE vmnics in `esxcli network nic list`). With no inventory (`analyze`), any ConnectX /
    BlueField device counts.

Why it matters
    mlxconfig and mlxfwmanager address the card by its mst device name (mt4119_pciconf1). Until
    mst is started after the NMST install, or when the card is not seen at all, every firmware
    check and fix of this stage is blind.

How to fix by hand
        /opt/mellanox/bin/mst start
        /opt/mellanox/bin/mst status -vv
    If mst runs but the card is missing, `mst restart` (stable device names), and compare the
    inventory's roce.pf_pci with `esxcli network nic list`.
    Sources: `mst start`, `mst restart`, `mst status -vv` — NVIDIA Firmware Tools (MFT) Documentation v4.33.0, "VMware ESXi" (mst start / restart / status -vv, the
        /opt/mellanox/bin paths), https://docs.nvidia.com/networking/display/mftv4330/VMware+ESXi,
        seed 000 (`mst start`) and corpus mst_status/esxi-smartx-mst-status-and-vv.txt; `esxcli network nic
        list` — corpus esxi_nic_list/*.

Fix safety
    safe: starts the mst access driver; nothing on the adapter changes. No reboot. Needs RW201 in
    effect (the NMST VIB installed and the host rebooted). When mst runs but the RoCE card is not
    among its devices the plan is manual (`mst restart`, then compare roce.pf_pci by hand).
"""

import re

from roce_wizard.checklib.findings import bad, excerpt, good
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
    Step,
    TargetKind,
)
from roce_wizard.records.wording import plural

CHECK = Check(
    code="RW202",
    slug="mst-device-visible",
    title="mst sees the RoCE card",
    stage=Stage.ESXI,
    target=TargetKind.ESXI,
    severity=Severity.FAIL,
    probes=("mst_status",),
    optional_probes=("esxi_nic_list",),
    depends_on=("RW201",),
    reboot=RebootKind.NONE,
    fix_hint="/opt/mellanox/bin/mst start (then mst status -vv)",
)

MST = "/opt/mellanox/bin/mst"


def _card(pci: str | None) -> str | None:
    """'0000:3b:00.1' / '3b:00.0' -> '3b:00' (the adapter: bus and device, any function)."""
    if not pci:
        return None
    m = re.search(r"([0-9a-fA-F]{2,3}):([0-9a-fA-F]{2})\.[0-9a-fA-F]$", pci.strip())
    return f"{int(m.group(1), 16):02x}:{m.group(2).lower()}" if m else None


def _roce_card(facts: Facts) -> str | None:
    target = facts.target
    if target is None:
        return None
    if target.roce.pf_pci:
        return _card(target.roce.pf_pci)
    nics = {n.get("name"): n for n in (facts.get("esxi_nic_list") or {}).get("nics", [])}
    for vmnic in target.roce.vmnics:
        card = _card((nics.get(vmnic) or {}).get("pci"))
        if card:
            return card
    return None


def _label(dev: dict) -> str:
    parts = [dev.get("device_type"), dev.get("mst"), dev.get("pci")]
    return " ".join(p for p in parts if p)


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    mst = facts.need("mst_status")
    devices = [d for d in mst.get("devices", []) if d.get("mst") or d.get("pci")]
    raw = facts.raw.get("mst_status")
    ev_devices = excerpt(raw, r"\bmt\d+_", r"^\s*\S+\s+\S+\s+[0-9a-f]{2,4}:[0-9a-f]{2}")
    with_mst = [d for d in devices if d.get("mst")]
    if not with_mst:
        how = (
            f"PCI functions {', '.join(d['pci'] for d in devices if d.get('pci'))} have no mst device"
            if devices else "no devices"
        )
        return [bad(CHECK, facts, f"mst lists {how}: mst is not started (or sees no adapter)",
                    observed=[_label(d) for d in devices],
                    expected="an mst device on the RoCE card", excerpt=ev_devices or excerpt(raw, r"MST|PCI"),
                    fix=f"{MST} start\n{MST} status -vv")]
    card = _roce_card(facts)
    if card is None:
        connectx = [d for d in with_mst if re.match(r"(ConnectX|BlueField)", d.get("device_type") or "", re.I)
                    or re.match(r"mt\d+_", (d.get("mst") or "").rsplit("/", 1)[-1])]
        if connectx:
            return [good(CHECK, facts, f"mst lists {plural(len(connectx), 'ConnectX device')}: "
                         + ", ".join(_label(d) for d in connectx),
                         observed=[_label(d) for d in connectx], expected="a ConnectX device", excerpt=ev_devices)]
        return [bad(CHECK, facts, "mst lists no ConnectX device", observed=[_label(d) for d in with_mst],
                    expected="a ConnectX device", excerpt=ev_devices, fix=f"{MST} restart\n{MST} status -vv")]
    on_card = [d for d in with_mst if _card(d.get("pci")) == card]
    if on_card:
        return [good(CHECK, facts, f"RoCE card {card} is {on_card[0].get('mst')} ({on_card[0].get('device_type')})",
                     observed=[_label(d) for d in on_card], expected=f"an mst device at {card}.x",
                     excerpt=excerpt(raw, re.escape(card)), subject=card)]
    if not any(d.get("pci") for d in with_mst):
        # plain `mst status` prints no PCI addresses: a device is there, but not provably ours
        return [good(CHECK, facts, f"mst lists {', '.join(d['mst'] for d in with_mst)} "
                     f"(no PCI addresses printed: run mst status -vv to tie one to {card})",
                     observed=[_label(d) for d in with_mst], expected=f"an mst device at {card}.x",
                     excerpt=ev_devices, subject=card)]
    return [bad(CHECK, facts, f"RoCE card {card} is not among the mst devices ("
                + ", ".join(_label(d) for d in with_mst) + ")",
                observed=[_label(d) for d in with_mst], expected=f"an mst device at {card}.x",
                excerpt=ev_devices, subject=card,
                fix=f"{MST} restart\n{MST} status -vv  # still no {card}.x: check roce.pf_pci against "
                    "`esxcli network nic list`")]


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """`mst start` when no device has an mst name; a manual `mst restart` when the card is missing."""
    devices = [d for d in facts.need("mst_status").get("devices", []) if d.get("mst")]
    if not devices:
        return FixPlan(check=CHECK.code, target=facts.target_name, summary="start mst (the mst access driver)",
                       steps=(Step("start mst", f"{MST} start", before="mst not started",
                                   after="mst devices listed"),),
                       safety=Safety.SAFE, reboot=RebootKind.NONE, needs=("RW201",))
    return FixPlan(check=CHECK.code, target=facts.target_name,
                   summary="mst runs but does not list the RoCE card: restart it and compare roce.pf_pci with "
                           "`esxcli network nic list` by hand",
                   steps=(Step("restart mst (stable device names)", f"{MST} restart"),
                          Step("look for the RoCE card", f"{MST} status -vv")),
                   safety=Safety.MANUAL, reboot=RebootKind.NONE, needs=("RW201",))
