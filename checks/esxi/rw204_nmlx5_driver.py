"""RW204 nmlx5-driver — the native nmlx5 driver is installed at the policy version or newer

What it checks
    `esxcli software vib list` → the `nmlx5-core` VIB and its version, compared with
    policy.min_nmlx5_version (seed 000: 4.21.71.101 on ESXi 7.0U2). The inbox VMware build
    (vendor VMW, `-…vmw.…` versions) counts like any other: by its version.

Why it matters
    SR-IOV for RoCE, the PFC / trust / ECN module parameters and the firmware pairing of RW203 all
    come with the nmlx5 driver. An old inbox driver either lacks the parameters or ignores them,
    and no VF appears.

How to fix by hand
    Download the nmlx5 offline bundle for your ESXi release (VMware / NVIDIA site), put it on the
    shared datastore, then on each host:
        esxcli software vib install -d /vmfs/volumes/<datastore>/<dir>/Mellanox-nmlx5_<version>-package.zip
    and reboot the host (batch it with the MFT/NMST install of RW201).
    Sources: `esxcli software vib install -d <zip>` — seed 000 (`esxcli software vib install -d
        "Mellanox-nmlx5_xxx.zip"`) and VMware's "Adding Third-Party Extensions to Hosts" (a ZIP depot installed
        with `esxcli software vib`, https://vdc-download.vmware.com/vmwb-repository/dcr-public/ff27818f-c787-
        4e25-b901-6db80fcce1bd/25440547-cddd-4485-b60a-7317ca968917/doc/cos_upgrade_technote.1.8.html);
        `esxcli software vib list` — corpus esxi_vib_list/*.

Fix safety
    disruptive: replaces the NIC driver of every ConnectX port on the host, including service
    ports; takes effect at the next host reboot. The tool installs the offline bundle
    policy.vib_datastore/Mellanox-nmlx5_*.zip (exactly one file must match) and lists the host for
    reboot (batched with MFT/NMST, RW201).
"""

from roce_wizard.checklib.esxi import find_vib, safe_datastore
from roce_wizard.checklib.findings import bad, excerpt, good, skip, version_tuple
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
    code="RW204",
    slug="nmlx5-driver",
    title="nmlx5 driver version",
    stage=Stage.ESXI,
    target=TargetKind.ESXI,
    severity=Severity.FAIL,
    probes=("esxi_vib_list",),
    depends_on=(),
    reboot=RebootKind.HOST,
    fix_hint="esxcli software vib install -d <datastore>/Mellanox-nmlx5_<version>.zip, then reboot",
)


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    raw = facts.raw.get("esxi_vib_list")
    core = find_vib(facts, "nmlx5-core")
    minimum = policy.min_nmlx5_version
    expected = f"nmlx5-core >= {minimum}"
    fix = (f"esxcli software vib install -d {policy.vib_datastore.rstrip('/')}/Mellanox-nmlx5_*.zip"
           f"  # the nmlx5 offline bundle >= {minimum}; then reboot the host")
    ev = excerpt(raw, r"nmlx5", r"^\s*Name\s+Version", r"^AcceptanceLevel,")
    if core is None and facts.need("esxi_vib_list").get("header") is False:
        # a grep-filtered list (no header): nmlx5-core not among the pasted rows may still be installed
        return [skip(CHECK, facts, "could not tell whether nmlx5-core is installed: the VIB list was filtered "
                     "(no header) and does not show it", expected=expected)]
    if core is None:
        return [bad(CHECK, facts, "nmlx5-core VIB is not installed (no native ConnectX-4+ driver)",
                    observed=None, expected=expected, excerpt=ev, fix=fix)]
    version, vendor = core.get("version"), core.get("vendor")
    observed = {"version": version, "vendor": vendor}
    have, want = version_tuple(version), version_tuple(minimum)
    inbox = (vendor or "").strip().upper() in ("VMW", "VMWARE") or "vmw" in (version or "")
    kind = "inbox (VMware)" if inbox else f"{vendor or 'unknown vendor'}"
    ev = excerpt(raw, r"nmlx5")
    if have is None:
        return [bad(CHECK, facts, f"nmlx5-core version {version!r} is unreadable", observed=observed,
                    expected=expected, excerpt=ev, fix=fix)]
    if want and have < want:
        return [bad(CHECK, facts, f"nmlx5-core {version} ({kind}) is older than {minimum}", observed=observed,
                    expected=expected, excerpt=ev, fix=fix)]
    return [good(CHECK, facts, f"nmlx5-core {version} ({kind}) >= {minimum}", observed=observed,
                 expected=expected, excerpt=ev)]


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """Install the nmlx5 offline bundle from the shared datastore; the new driver loads at the next boot."""
    core = find_vib(facts, "nmlx5-core")
    folder = safe_datastore(policy.vib_datastore)
    step = Step(f"install the nmlx5 offline bundle (>= {policy.min_nmlx5_version})",
                f"esxcli software vib install -d {folder}/Mellanox-nmlx5_*.zip",
                before=f"nmlx5-core {core.get('version')}" if core else "nmlx5-core not installed",
                after=f"nmlx5-core from {policy.vib_datastore.rstrip('/')}/Mellanox-nmlx5_*.zip (active after reboot)")
    return FixPlan(check=CHECK.code, target=facts.target_name,
                   summary=f"install the nmlx5 driver bundle >= {policy.min_nmlx5_version}", steps=(step,),
                   safety=Safety.DISRUPTIVE, reboot=RebootKind.HOST,
                   reboot_reason="the new nmlx5 driver loads at the next boot (batch with RW201's VIBs)")
