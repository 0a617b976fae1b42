"""RW103 sriov-global — the BIOS has SR-IOV on

What it checks
    With the server's BMC in the inventory: the Redfish BIOS attribute Dell `SriovGlobalEnable`
    ("SR-IOV Global Enable") or HPE `Sriov` is `Enabled` — the current value, and nothing
    different staged for the next reboot.
    Without a BMC, on bare-metal Linux: the RoCE PF shows the SR-IOV capability and
    `/sys/class/net/<netdev>/device/sriov_totalvfs` > 0 (`lspci -vvv` `Total VFs` in a pasted
    output). The firmware's SRIOV_EN hides the capability as well, so a PF without it is judged
    only when RW412 holds. On ESXi the shell shows no trace of this switch (vSphere's
    `HostSriovInfo.sriovCapable` is the vsphere stage's): it needs the BMC.

Why it matters
    With SR-IOV Global off the BIOS assigns no bus numbers and MMIO space to VFs: the firmware
    and the driver can be set up perfectly and the host still instantiates no VF (RW215), so no VM
    gets an RDMA device. Seed 000's day 0 had it off.

How to fix by hand
    Dell iDRAC (the value is staged; a configuration job applies it at the next reboot):
        curl -sS --cacert bmc-ca.pem -u root:"$BMC_PASSWORD" -X PATCH \
          https://<idrac>/redfish/v1/Systems/System.Embedded.1/Bios/Settings \
          -H 'Content-Type: application/json' -d '{"Attributes": {"SriovGlobalEnable": "Enabled"}}'
        curl -sS --cacert bmc-ca.pem -u root:"$BMC_PASSWORD" -X POST \
          https://<idrac>/redfish/v1/Managers/iDRAC.Embedded.1/Jobs \
          -H 'Content-Type: application/json' \
          -d '{"TargetSettingsURI": "/redfish/v1/Systems/System.Embedded.1/Bios/Settings"}'
    then reboot the server (ESXi: maintenance mode first). HPE iLO: PATCH
    {"Attributes": {"Sriov": "Enabled"}} on /redfish/v1/Systems/1/Bios/Settings/, then reboot.
    BIOS setup: Dell F2 > System BIOS > Integrated Devices > SR-IOV Global Enable; HPE F9 > RBSU >
    Virtualization Options > SR-IOV.
    Sources: the Dell PATCH + configuration job and SriovGlobalEnable — RW101's Dell sources and the recorded
        iDRAC documents in tests/unit/data/redfish/; HPE's `Sriov` attribute — HPE "Bios resource definitions of
        iLO" (https://servermanagementportal.ext.hpe.com/docs/redfishservices/ilos/ilo6/ilo6_166/
        ilo6_bios_resourcedefns166); `curl` — curl(1), the real binary (Debian curl); the Linux reads —
        `cat /sys/class/net/<if>/device/sriov_totalvfs` (the kernel's sysfs-bus-pci ABI, corpus
        sriov_numvfs/cx4lx-sriov-totalvfs-8.txt) and `lspci -vvv` (corpus lspci_vvv/cx7-mcx755106as-sriov-cap-
        vfs0.txt).

Fix safety
    disruptive: a BIOS change applied by a server reboot (reboot kind bios; it can ride on the host
    reboot that also applies the firmware and driver settings when staged first).
"""

from roce_wizard.checklib.bios import bios_plan, bmc_skip, judge_redfish, menu_fix, uses_redfish
from roce_wizard.checklib.findings import bad, good, skip
from roce_wizard.model import Check, Facts, Finding, FixPlan, Policy, RebootKind, Severity, Stage, TargetKind

CHECK = Check(
    code="RW103",
    slug="sriov-global",
    title="SR-IOV enabled in the BIOS",
    stage=Stage.BIOS,
    target=(TargetKind.BMC, TargetKind.ESXI, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=(),
    optional_probes=("redfish_bios", "sriov_numvfs", "lspci_vvv"),
    depends_on=("RW412",),  # bare metal: firmware SRIOV_EN off hides the SR-IOV capability too
    reboot=RebootKind.BIOS,
    fix_hint='PATCH …/Bios/Settings {"Attributes": {"SriovGlobalEnable": "Enabled"}} + config job, then reboot',
)

WHAT = "SR-IOV Global"
_MISSING = ("no such file", "not found")


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    if uses_redfish(facts):
        return judge_redfish(CHECK, facts, WHAT)
    covered = bmc_skip(CHECK, facts)
    if covered is not None:
        return [covered]
    target = facts.target
    if target is not None and target.kind is TargetKind.ESXI:
        return [skip(CHECK, facts, "the ESXi shell shows no trace of the BIOS SR-IOV switch: add the server's BMC "
                                   "to the inventory (kind bmc) to judge it (vSphere's sriovCapable is the vsphere "
                                   "stage's)", probes=())]
    if facts.has("lspci_vvv") and not facts.has("sriov_numvfs"):
        return _from_lspci(facts)
    return _from_sysfs(facts)


def _fix(facts: Facts) -> str:
    return menu_fix("RW103", facts.target_name or None,
                    "# first make sure the firmware has SR-IOV on (mlxconfig SRIOV_EN=1, NUM_OF_VFS > 0: RW412)")


def _from_sysfs(facts: Facts) -> list[Finding]:
    failure = facts.failures.get("sriov_numvfs")
    netdev = facts.target.roce.netdev if facts.target is not None else None
    path = f"/sys/class/net/{netdev or '<netdev>'}/device/sriov_totalvfs"
    if failure is not None and any(m in failure.reason.lower() for m in _MISSING) \
            and not failure.reason.startswith("not applicable"):
        return [bad(CHECK, facts, f"{WHAT}: the RoCE PF shows no SR-IOV capability ({path} does not exist) "
                                  "(from sriov_totalvfs)",
                    observed={"sriov_totalvfs": None}, expected={"sriov_totalvfs": "> 0"},
                    excerpt=failure.reason, probes=("sriov_numvfs",), fix=_fix(facts),
                    details={"source": "from sriov_totalvfs"})]
    data = facts.need("sriov_numvfs")
    value = data.get("value")
    attribute = data.get("attribute") or "sriov_totalvfs"
    kw = {"observed": {attribute: value}, "expected": {"sriov_totalvfs": "> 0"}, "probes": ("sriov_numvfs",),
          "excerpt": facts.raw.get("sriov_numvfs", "").strip()[-200:] or None,
          "details": {"source": f"from {attribute}"}}
    if attribute == "sriov_numvfs":  # VFs created now, not the capability: only a positive count says something
        if isinstance(value, int) and value > 0:
            return [good(CHECK, facts, f"{WHAT}: {value} VFs exist on the PF (from sriov_numvfs)", **kw)]
        return [skip(CHECK, facts, "sriov_numvfs counts the VFs created now, not what the BIOS allows "
                                   "(read sriov_totalvfs)", probes=("sriov_numvfs",))]
    if isinstance(value, int) and value > 0:
        return [good(CHECK, facts, f"{WHAT}: the RoCE PF offers {value} VFs (from sriov_totalvfs)", **kw)]
    return [bad(CHECK, facts, f"{WHAT}: the RoCE PF offers {value} VFs (from sriov_totalvfs)", fix=_fix(facts),
                **kw)]


def _from_lspci(facts: Facts) -> list[Finding]:
    data = facts.need("lspci_vvv")
    devices = data.get("devices") or [data]
    pfs = [d for d in devices if "Virtual Function" not in (d.get("description") or "")]
    findings = []
    for dev in pfs:
        sriov = dev.get("sriov")
        total = (sriov or {}).get("total_vfs")
        kw = {"observed": {"sriov_capability": sriov is not None, "total_vfs": total},
              "expected": {"total_vfs": "> 0"}, "probes": ("lspci_vvv",), "subject": dev.get("pci"),
              "details": {"source": "from lspci -vvv"}}
        if dev.get("access_denied") and sriov is None:
            findings.append(skip(CHECK, facts, f"{dev.get('pci')}: capabilities not readable (lspci without root)",
                                 probes=("lspci_vvv",), subject=dev.get("pci")))
        elif isinstance(total, int) and total > 0:
            findings.append(good(CHECK, facts, f"{WHAT}: {dev.get('pci')} has the SR-IOV capability, Total VFs "
                                               f"{total} (from lspci -vvv)", **kw))
        else:
            shown = "no SR-IOV capability" if sriov is None else f"Total VFs {total}"
            findings.append(bad(CHECK, facts, f"{WHAT}: {dev.get('pci')} shows {shown} (from lspci -vvv)",
                                fix=_fix(facts), **kw))
    return findings or [skip(CHECK, facts, "lspci shows no PF", probes=("lspci_vvv",))]


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """Stage the setting through the server's BMC (Redfish); it applies at the host's next reboot."""
    return bios_plan(CHECK, facts, policy, WHAT)
