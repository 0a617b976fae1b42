"""RW205 link-type-eth — the RoCE ports of a VPI card are set to Ethernet

What it checks
    `mlxconfig -d <mst dev> -e query` → `LINK_TYPE_P1` / `LINK_TYPE_P2` are `ETH(2)` on the RoCE
    ports (Next Boot, and Current when `-e` prints it). Only VPI cards (InfiniBand + Ethernet, e.g.
    MCX556A) have these keys; Ethernet-only cards lack them and pass. When the inventory names the
    RoCE vmnics and `esxcli network nic list` gives their PCI functions, only those ports are
    judged (function .0 is P1, .1 is P2); otherwise every port is.

Why it matters
    A VPI port in IB(1) mode is an InfiniBand port: ESXi's nmlx5 Ethernet driver shows no vmnic
    for it, so there is nothing to enable SR-IOV or RoCE on.

How to fix by hand
        /opt/mellanox/bin/mlxconfig -d <mst device> -y set LINK_TYPE_P1=2 LINK_TYPE_P2=2
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

import re

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
    code="RW205",
    slug="link-type-eth",
    title="RoCE ports in Ethernet mode",
    stage=Stage.ESXI,
    target=TargetKind.ESXI,
    severity=Severity.FAIL,
    probes=("mlxconfig_query",),
    optional_probes=("esxi_nic_list", "mst_status"),
    depends_on=("RW201", "RW202"),
    reboot=RebootKind.HOST,
    fix_hint="mlxconfig -d <dev> -y set LINK_TYPE_P1=2 LINK_TYPE_P2=2, then reboot the host",
)


def _roce_ports(facts: Facts) -> set[int] | None:
    """Port numbers of the inventory's RoCE vmnics (PCI function + 1), when known."""
    if facts.target is None or not facts.target.roce.vmnics:
        return None
    nics = {n.get("name"): n for n in (facts.get("esxi_nic_list") or {}).get("nics", [])}
    ports = set()
    for vmnic in facts.target.roce.vmnics:
        m = re.search(r"\.([0-7])$", (nics.get(vmnic) or {}).get("pci") or "")
        if not m:
            return None
        ports.add(int(m.group(1)) + 1)
    return ports


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    findings: list[Finding] = []
    raw = facts.raw.get("mlxconfig_query")
    ev = excerpt(raw, r"LINK_TYPE_P\d")
    roce_ports = _roce_ports(facts)
    for device in mlxconfig_devices(facts):
        name = mlx_device_name(facts, device)
        label = device.get("device") or device.get("device_type") or name
        keys = sorted(k for k in (device.get("params") or {}) if re.fullmatch(r"LINK_TYPE_P\d", k))
        if not keys:
            params = device.get("params") or {}
            if facts.need("mlxconfig_query").get("elided") or device.get("headerless"):
                # an absent key proves nothing when rows were left out (EN-only cards print IB_* keys too)
                findings.append(skip(CHECK, facts, f"{label}: could not tell the port type: no LINK_TYPE_P* in the "
                                     "query, but rows were left out (`...`, grep or an excerpt)",
                                     observed="no LINK_TYPE_P*", expected="ETH", subject=label))
                continue
            if "SRIOV_EN" in params or len(params) > 10:
                findings.append(good(CHECK, facts, f"{label}: ETH-only card (no LINK_TYPE_P* in the query)",
                                     observed="no LINK_TYPE_P*", expected="ETH", excerpt=None, subject=label))
            continue  # an egrep'd query without the key: nothing to judge on this device
        ports = [k for k in keys if roce_ports is None or int(k[-1]) in roce_ports] or keys
        observed = {k: {"next_boot": mlx_value(device, k, "next_boot"), "current": mlx_value(device, k, "current")}
                    for k in ports}
        wrong_next = [k for k in ports if observed[k]["next_boot"] != "ETH"]
        wrong_now = [k for k in ports if observed[k]["current"] not in (None, "ETH")]
        if wrong_next:
            sets = " ".join(f"{k}=2" for k in wrong_next)
            what = ", ".join(f"{k}={observed[k]['next_boot']}" for k in wrong_next)
            findings.append(bad(CHECK, facts, f"{label}: {what} (RoCE needs ETH)", observed=observed,
                                expected={k: "ETH" for k in ports}, excerpt=ev, subject=label,
                                fix=pasteable(lambda: f"{MLXCONFIG} -d {shown_mlx_device(facts, device)} -y set {sets}  "
                                              "# then reboot the host", MST_DEVICE)))
        elif wrong_now:
            what = ", ".join(f"{k}={observed[k]['current']}" for k in wrong_now)
            findings.append(bad(CHECK, facts, f"{label}: ETH is set for next boot but current is {what}: "
                                "reboot pending", observed=observed, expected={k: "ETH" for k in ports},
                                excerpt=ev, subject=label, fix="reboot the host (see RW214)"))
        else:
            findings.append(good(CHECK, facts, f"{label}: {', '.join(ports)} ETH", observed=observed,
                                 expected={k: "ETH" for k in ports}, excerpt=ev, subject=label))
    return findings or [skip(CHECK, facts, "the mlxconfig query printed no LINK_TYPE_P* or SR-IOV keys to judge")]


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """LINK_TYPE_Pn=2 (ETH) for every RoCE port whose next-boot link type is not ETH."""
    try:
        devices = mlxconfig_devices(facts)
    except MissingFact:
        return None
    roce_ports = _roce_ports(facts)
    steps = []
    for device in devices:
        keys = sorted(k for k in (device.get("params") or {}) if re.fullmatch(r"LINK_TYPE_P\d", k))
        ports = [k for k in keys if roce_ports is None or int(k[-1]) in roce_ports] or keys
        wrong = [k for k in ports if mlx_value(device, k, "next_boot") != "ETH"]
        if wrong:
            steps.append(mlxconfig_set_step(mlx_device_name(facts, device), {k: 2 for k in wrong},
                                            {k: mlx_value(device, k, "next_boot") for k in wrong},
                                            "set the RoCE ports to Ethernet"))
    return mlxconfig_fix_plan(CHECK, facts, "set the RoCE ports to ETH (LINK_TYPE=2)", steps)
