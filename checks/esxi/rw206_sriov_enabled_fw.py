"""RW206 sriov-enabled-fw — SR-IOV is enabled in the adapter firmware

What it checks
    `mlxconfig -d <dev> -e query` → `SRIOV_EN` of the RoCE card is `True(1)` in the Next Boot
    column (and, when `-e` prints it, in the Current column too).

Why it matters
    Without SRIOV_EN the card exposes no virtual functions: vSphere shows the PF as not
    SR-IOV capable, `max_vfs` is ignored and no VM gets a VF. NUM_OF_VFS can be 8 while
    SRIOV_EN is False, so a VF count alone proves nothing.

How to fix by hand
        /opt/mellanox/bin/mlxconfig -d <mst device> -y set SRIOV_EN=1
    then reboot the host (the value stays in "Next Boot" until then).
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
    device_label,
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
    code="RW206",
    slug="sriov-enabled-fw",
    title="SR-IOV enabled in firmware",
    stage=Stage.ESXI,
    target=TargetKind.ESXI,
    severity=Severity.FAIL,
    probes=("mlxconfig_query",),
    depends_on=("RW201", "RW202"),
    reboot=RebootKind.HOST,
    fix_hint="mlxconfig -d <dev> -y set SRIOV_EN=1, then reboot the host",
)


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    findings = []
    raw = facts.raw.get("mlxconfig_query")
    for device in mlxconfig_devices(facts):
        next_boot = mlx_value(device, "SRIOV_EN", "next_boot")
        current = mlx_value(device, "SRIOV_EN", "current")
        if next_boot is None and current is None:
            findings.append(skip(CHECK, facts, f"the query of {device_label(device)} does not show SRIOV_EN",
                                 subject=device_label(device)))
            continue  # e.g. egrep'd output: nothing to judge
        label = device_label(device)
        observed = {"next_boot": next_boot, "current": current}
        ev = excerpt(raw, r"SRIOV_EN")
        fix = pasteable(lambda: f"{MLXCONFIG} -d {shown_mlx_device(facts, device)} -y set "
                        "SRIOV_EN=1  # then reboot the host", MST_DEVICE)
        if next_boot is False:
            findings.append(
                bad(CHECK, facts, f"SRIOV_EN is False on {label}", observed=observed, expected=True,
                    excerpt=ev, fix=fix, subject=label)
            )
        elif current is False and next_boot is None:
            # only a Current column (older MFT, or an excerpt): whether the next boot enables it is unknown
            findings.append(
                bad(CHECK, facts, f"SRIOV_EN is False now on {label} (the query shows no Next Boot value: whether "
                    "it is already set for the next boot could not be told)", observed=observed, expected=True,
                    excerpt=ev, fix=fix, subject=label)
            )
        elif current is False:
            findings.append(
                bad(CHECK, facts, f"SRIOV_EN is set for next boot on {label} but not current: reboot pending",
                    observed=observed, expected=True, excerpt=ev, fix="reboot the host (see RW214)", subject=label)
            )
        else:
            findings.append(good(CHECK, facts, f"SRIOV_EN is True on {label}", observed=observed, expected=True,
                                 excerpt=ev, subject=label))
    return findings


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """SRIOV_EN=1 on every device whose next-boot SRIOV_EN is False."""
    try:
        devices = mlxconfig_devices(facts)
    except MissingFact:
        return None
    steps = [mlxconfig_set_step(mlx_device_name(facts, d), {"SRIOV_EN": 1}, {"SRIOV_EN": False}, "enable SR-IOV")
             for d in devices if mlx_value(d, "SRIOV_EN", "next_boot") is False
             or (mlx_value(d, "SRIOV_EN", "next_boot") is None and mlx_value(d, "SRIOV_EN", "current") is False)]
    return mlxconfig_fix_plan(CHECK, facts, "enable SR-IOV in firmware (SRIOV_EN=1)", steps)
