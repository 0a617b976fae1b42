"""RW201 mft-installed — the NVIDIA firmware tools (MFT and NMST) are installed on the host

What it checks
    `esxcli software vib list` lists both the `mft` VIB (mlxconfig, mlxfwmanager, flint) and the
    `nmst` VIB (the mst driver those tools talk through). Any vendor string the tools ship with is
    accepted (MEL, Mellanox, NVIDIA). However they were installed — from the .vib files or from an
    offline bundle / component .zip (NVIDIA's MFT for ESXi comes in both forms; see Sources) — the host
    lists the VIBs the package holds, so the list is the one place to look.

Why it matters
    Every firmware check and fix of the esxi stage (link type, SR-IOV, NUM_OF_VFS, firmware
    version) goes through /opt/mellanox/bin. Without MFT nothing can be read or set; without NMST
    `mst status` finds no device and mlxconfig cannot open the card.

How to fix by hand
    Download the MFT and NMST packages for your ESXi release from NVIDIA, keep them on a datastore
    every host can reach (seed 000's best practice), then on each host, for .vib files:
        esxcli software vib install -v /vmfs/volumes/<datastore>/<dir>/MEL_bootbank_mft_<version>.vib -f
        esxcli software vib install -v /vmfs/volumes/<datastore>/<dir>/MEL_bootbank_nmst_<version>.vib -f
    and for an offline bundle / component .zip:
        esxcli software vib install -d /vmfs/volumes/<datastore>/<dir>/<package>.zip
    then reboot the host (enter maintenance mode first). Batch this reboot with the nmlx5 driver
    install (RW204). ESXi 7+ also has `esxcli software component apply -d <zip>` for component
    packages; no NVIDIA page showing it for MFT was found, so the tool does not emit it.
    Sources: `vib list` / `vib install -v … -f` — seed 000 (`esxcli software vib install -v
    mft-xxx.x86_64.vib -f`) and corpus esxi_vib_list/*, esxi_vib_install/nmst-4-18-install-result-
    reboot-required.txt; `vib install -d <zip>` — seed 000 (`esxcli software vib install -d
    "Mellanox-nmlx5_xxx.zip"`) and VMware's "Adding Third-Party Extensions to Hosts" (a partner's
    VIB package as a ZIP depot, offline depot, installed with `esxcli software vib`,
    https://vdc-download.vmware.com/vmwb-repository/dcr-public/ff27818f-c787-4e25-b901-6db80fcce1bd/
    25440547-cddd-4485-b60a-7317ca968917/doc/cos_upgrade_technote.1.8.html); NVIDIA's "NVIDIA
    Firmware Tools (MFT) Documentation v4.34.1-10 LTS", ESXi (https://docs.nvidia.com/networking/
    display/mftv4341lts/ESXi: "The MFT and MFT-OEM packages in VMware") for the packages themselves;
    no NVIDIA install page with the exact zip command was found.

Fix safety
    disruptive: installs software with --force (-f) into the host image and needs a host reboot
    before the tools work. The tool installs each missing package from policy.vib_datastore: the
    .vib (MEL_bootbank_<name>_*.vib) when the datastore holds one, else the offline bundle whose
    .zip name carries the package's name (any case; `vib install -d`). Exactly one file must match;
    then it lists the host for reboot.
"""

from roce_wizard.checklib.esxi import find_vib, safe_datastore
from roce_wizard.checklib.findings import bad, excerpt, good, skip
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

CHECK = Check(
    code="RW201",
    slug="mft-installed",
    title="MFT and NMST tools installed",
    stage=Stage.ESXI,
    target=TargetKind.ESXI,
    severity=Severity.FAIL,
    probes=("esxi_vib_list",),
    depends_on=(),
    reboot=RebootKind.HOST,
    fix_hint="esxcli software vib install -v <datastore>/MEL_bootbank_{mft,nmst}_<version>.vib -f (or -d <the "
             "package .zip>), then reboot",
)

REQUIRED = ("mft", "nmst")
KNOWN_VENDORS = ("mel", "mellanox", "nvidia", "nvd")


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    vibs = {name: find_vib(facts, name) for name in REQUIRED}
    raw = facts.raw.get("esxi_vib_list")
    observed = {name: (vib.get("version") if vib is not None else None) for name, vib in vibs.items()}
    missing = [name for name, vib in vibs.items() if vib is None]
    expected = "VIBs mft and nmst installed (vendor MEL / Mellanox / NVIDIA)"
    if missing and facts.need("esxi_vib_list").get("header") is False:
        # a grep-filtered list (no header): a VIB not among the pasted rows may still be installed
        verb = "are" if len(missing) > 1 else "is"
        return [skip(CHECK, facts, f"could not tell whether {' and '.join(missing)} {verb} installed: the VIB "
                     "list was filtered (no header) and does not show it", observed=observed, expected=expected)]
    if missing:
        datastore = policy.vib_datastore.rstrip("/")
        fix = "\n".join(
            f"esxcli software vib install -v {datastore}/MEL_bootbank_{name}_*.vib -f" for name in missing
        ) + ("\n# or, when the package is an offline bundle / component .zip: esxcli software vib install -d "
             f"{datastore}/<the {' / '.join(missing)} .zip>"
             "\n# then reboot the host (batch with the nmlx5 driver install, RW204)")
        ev = excerpt(raw, r"^\s*(mft|nmst)\b", r"(^|,)(mft|nmst)(,|$)", r"\bMEL\b|Mellanox|NVIDIA") or excerpt(
            raw, r"Name\s+Version", r"^AcceptanceLevel,"
        )
        return [bad(CHECK, facts, f"VIB{'s' if len(missing) > 1 else ''} {' and '.join(missing)} not installed",
                    observed=observed, expected=expected, excerpt=ev, fix=fix)]
    vendors = {name: vib.get("vendor") for name, vib in vibs.items()}
    odd = [f"{n} from {v}" for n, v in vendors.items() if v and v.strip().lower() not in KNOWN_VENDORS]
    note = f" (unusual vendor: {', '.join(odd)})" if odd else ""
    summary = f"mft {observed['mft']} and nmst {observed['nmst']} installed{note}"
    return [good(CHECK, facts, summary, observed=observed, expected=expected,
                 excerpt=excerpt(raw, r"^\s*(mft|nmst)\s", r"(^|,)(mft|nmst)(,|$)"))]


def _install_command(folder: str, name: str) -> str:
    """`vib install -v` for the package's .vib when the datastore holds one, else `vib install -d` for
    the .zip whose name carries the package name (NVIDIA writes it in capitals: match any case)."""
    vib = f"{folder}/MEL_bootbank_{name}_*.vib"
    zip_glob = f"{folder}/*" + "".join(f"[{c.upper()}{c}]" for c in name) + "*.zip"
    return (f"if ls {vib} >/dev/null 2>&1; then esxcli software vib install -v {vib} -f; "
            f"else esxcli software vib install -d {zip_glob}; fi")


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """Install the missing VIB(s) from the shared datastore; they take effect at the next host reboot."""
    missing = [name for name in REQUIRED if find_vib(facts, name) is None]
    folder = safe_datastore(policy.vib_datastore)
    steps = tuple(
        Step(f"install {name} from {policy.vib_datastore.rstrip('/')} (its .vib, else its offline-bundle .zip)",
             _install_command(folder, name),
             before=f"{name} not installed", after=f"{name} installed (active after reboot)")
        for name in missing
    )
    return FixPlan(check=CHECK.code, target=facts.target_name,
                   summary=f"install {' and '.join(missing)} from {policy.vib_datastore.rstrip('/')}",
                   steps=steps, safety=Safety.DISRUPTIVE, reboot=RebootKind.HOST,
                   reboot_reason="VIBs are loaded at boot: /opt/mellanox/bin and the mst driver work after a "
                                 "host reboot (batch it with the nmlx5 driver install, RW204)")
