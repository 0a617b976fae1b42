"""RW207 advanced-pci-off — ADVANCED_PCI_SETTINGS is cleared in the adapter firmware

What it checks
    `mlxconfig -d <mst dev> -e query` → `ADVANCED_PCI_SETTINGS` is `False(0)` (Next Boot, and
    Current when `-e` prints it). Cards whose query has no such key (ConnectX-3) are not judged.

Why it matters
    Seed 000 clears it before enabling SR-IOV: RoCE SR-IOV does not need the advanced PCI knobs,
    and with them exposed a stale BAR size / MSI-X setting from an earlier experiment silently
    limits how many VFs the card can instantiate.

How to fix by hand
        /opt/mellanox/bin/mlxconfig -d <mst device> -y set ADVANCED_PCI_SETTINGS=0
    then reboot the host (batch with the other mlxconfig changes of this stage).
    Sources: `mlxconfig -d <dev> -e query` — corpus mlxconfig_query/* (the Default / Current / Next Boot
        columns); `mlxconfig -d <dev> -y set NAME=value …` — seed 000 (`mlxconfig -d mt4119_pciconf1 -y set
        SRIOV_EN=1 NUM_OF_VFS=16`) and corpus mlxconfig_set/igx-cx7-p3740-link-type-p2-ib-to-eth.txt
        (`set LINK_TYPE_P1=ETH LINK_TYPE_P2=ETH`), mlxconfig_set/cx5-ocp3-next-boot-new-apply-prompt-reboot.txt;
        the /opt/mellanox/bin path on ESXi — NVIDIA MFT "VMware ESXi" (https://docs.nvidia.com/networking/
        display/mftv4330/VMware+ESXi); `mst status -vv`, `esxcli network nic list` — RW202's sources.

Fix safety
    disruptive: writes adapter firmware configuration; takes effect at the next host reboot. The tool
    runs ONE `mlxconfig -d <dev> -y set …` per device for everything this check found wrong; needs
    RW201 and RW202 (the tools and the mst device). A value already set for next boot plans nothing
    (the reboot is RW214's).
"""

from roce_wizard.checklib.esxi import (
    MLXCONFIG,
    mlx_device_name,
    mlx_value,
    mlxconfig_devices,
    mlxconfig_fix_plan,
    mlxconfig_set_step,
    shown_mlx_device,
)
from roce_wizard.checklib.findings import bad, excerpt, good, skip
from roce_wizard.commands.handfix import MST_DEVICE, pasteable
from roce_wizard.model import (
    Check,
    Facts,
    Finding,
    FixPlan,
    MissingFact,
    Policy,
    RebootKind,
    Severity,
    Stage,
    TargetKind,
)

CHECK = Check(
    code="RW207",
    slug="advanced-pci-off",
    title="ADVANCED_PCI_SETTINGS off",
    stage=Stage.ESXI,
    target=TargetKind.ESXI,
    severity=Severity.WARN,
    probes=("mlxconfig_query",),
    optional_probes=("mst_status",),
    depends_on=("RW201", "RW202"),
    reboot=RebootKind.HOST,
    fix_hint="mlxconfig -d <dev> -y set ADVANCED_PCI_SETTINGS=0, then reboot the host",
)


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    findings: list[Finding] = []
    ev = excerpt(facts.raw.get("mlxconfig_query"), r"ADVANCED_PCI_SETTINGS")
    for device in mlxconfig_devices(facts):
        if "ADVANCED_PCI_SETTINGS" not in (device.get("params") or {}):
            continue
        name = mlx_device_name(facts, device)
        label = device.get("device") or device.get("device_type") or name
        next_boot = mlx_value(device, "ADVANCED_PCI_SETTINGS", "next_boot")
        current = mlx_value(device, "ADVANCED_PCI_SETTINGS", "current")
        observed = {"next_boot": next_boot, "current": current}
        if next_boot is not False:
            findings.append(bad(CHECK, facts, f"{label}: ADVANCED_PCI_SETTINGS is {next_boot}"
                                + (f" (current {current})" if current is not None else ""),
                                observed=observed, expected=False, excerpt=ev, subject=label,
                                fix=pasteable(lambda: f"{MLXCONFIG} -d {shown_mlx_device(facts, device)} -y set "
                                              "ADVANCED_PCI_SETTINGS=0  # then reboot the host", MST_DEVICE)))
        elif current not in (None, False):
            findings.append(bad(CHECK, facts, f"{label}: ADVANCED_PCI_SETTINGS cleared for next boot, current "
                                f"still {current}: reboot pending", observed=observed, expected=False,
                                excerpt=ev, subject=label, fix="reboot the host (see RW214)"))
        else:
            findings.append(good(CHECK, facts, f"{label}: ADVANCED_PCI_SETTINGS is False", observed=observed,
                                 expected=False, excerpt=ev, subject=label))
    return findings or [skip(CHECK, facts, "the mlxconfig query printed no ADVANCED_PCI_SETTINGS")]


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """ADVANCED_PCI_SETTINGS=0 on every device where it is not False for next boot."""
    try:
        devices = mlxconfig_devices(facts)
    except MissingFact:
        return None
    steps = [mlxconfig_set_step(mlx_device_name(facts, d), {"ADVANCED_PCI_SETTINGS": 0},
                                {"ADVANCED_PCI_SETTINGS": mlx_value(d, "ADVANCED_PCI_SETTINGS", "next_boot")},
                                "turn ADVANCED_PCI_SETTINGS off")
             for d in devices if "ADVANCED_PCI_SETTINGS" in (d.get("params") or {})
             and mlx_value(d, "ADVANCED_PCI_SETTINGS", "next_boot") is not False]
    return mlxconfig_fix_plan(CHECK, facts, "turn ADVANCED_PCI_SETTINGS off", steps)
