"""RW101 cpu-virtualization — the BIOS has CPU virtualization (Intel VT-x / AMD-V) on

What it checks
    With the server's BMC in the inventory: the Redfish BIOS attribute `ProcVirtualization`
    (Dell iDRAC "Virtualization Technology", HPE iLO "Intel(R) Virtualization Technology") is
    `Enabled` — the current value, and no different value staged for the next reboot.
    Without a BMC, on an ESXi host: `esxcli hardware cpu global get` → `HV Support: 3`
    (0 the CPU has none, 1 present but not usable, 2 disabled in the BIOS, 3 enabled).
    A host whose BMC is in the inventory is judged on the BMC only (one finding per setting);
    bare-metal Linux shows no reliable trace of VT-x, so there it needs the BMC.

Why it matters
    ESXi runs no VM without hardware virtualization, and on Dell PowerEdge the same BIOS switch
    also turns VT-d on, which SR-IOV passthrough needs (RW102).

How to fix by hand
    Dell iDRAC (Redfish; the value is staged, a configuration job applies it at the next reboot):
        curl -sS --cacert bmc-ca.pem -u root:"$BMC_PASSWORD" -X PATCH \
          https://<idrac>/redfish/v1/Systems/System.Embedded.1/Bios/Settings \
          -H 'Content-Type: application/json' -d '{"Attributes": {"ProcVirtualization": "Enabled"}}'
        curl -sS --cacert bmc-ca.pem -u root:"$BMC_PASSWORD" -X POST \
          https://<idrac>/redfish/v1/Managers/iDRAC.Embedded.1/Jobs \
          -H 'Content-Type: application/json' \
          -d '{"TargetSettingsURI": "/redfish/v1/Systems/System.Embedded.1/Bios/Settings"}'
    then reboot the server (ESXi: maintenance mode first). HPE iLO: the same PATCH on
    /redfish/v1/Systems/1/Bios/Settings/ (no job), then reboot. In the BIOS setup: Dell F2 System
    Setup > System BIOS > Processor Settings > Virtualization Technology; HPE F9 > RBSU >
    Virtualization Options > Intel(R) Virtualization Technology.
    Sources: the Dell PATCH + configuration job (`…/Systems/System.Embedded.1/Bios/Settings`,
        `/redfish/v1/Managers/iDRAC.Embedded.1/Jobs` with `TargetSettingsURI`) — Dell "iDRAC9 with Lifecycle
        Controller Version 3.21.21.21 Redfish API Guide" (a copy: https://fdocuments.in/document/idrac9-with-
        lifecycle-controller-version-32121-a-pdf-a-idrac9-lifecycle-controller-v3212121.html) and the recorded
        iDRAC documents in tests/unit/data/redfish/ (the attribute name ProcVirtualization); HPE's PATCH on
        …/Bios/Settings/ — HPE "Bios resource definitions of iLO" (https://servermanagementportal.ext.hpe.com/
        docs/redfishservices/ilos/ilo6/ilo6_166/ilo6_bios_resourcedefns166); `curl` options (-sS, --cacert, -u,
        -X, -H, -d) — curl(1), the real binary (Debian curl); the ESXi read `esxcli hardware cpu global get` →
        `HV Support: 3` — public captures of its output (`CPU Packages: 2 CPU Cores: 24 … HV Support: 3`);
        no VMware reference page was found for it or for what the values 0-2 mean (no vendor document
        states them; they are the meanings commonly given with those captures); it is only read, never
        emitted.

Fix safety
    disruptive: a BIOS change applied by a server reboot (reboot kind bios; it can ride on a host
    reboot when staged first). The PATCH itself changes nothing until then.
"""

from roce_wizard.checklib.bios import bios_plan, bmc_skip, judge_redfish, menu_fix, uses_redfish
from roce_wizard.checklib.findings import bad, excerpt, good, skip
from roce_wizard.model import Check, Facts, Finding, FixPlan, Policy, RebootKind, Severity, Stage, Status, TargetKind

CHECK = Check(
    code="RW101",
    slug="cpu-virtualization",
    title="CPU virtualization (VT-x) enabled in the BIOS",
    stage=Stage.BIOS,
    target=(TargetKind.BMC, TargetKind.ESXI, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=(),
    optional_probes=("redfish_bios", "esxi_cpu_global"),
    reboot=RebootKind.BIOS,
    fix_hint='PATCH …/Bios/Settings {"Attributes": {"ProcVirtualization": "Enabled"}} + config job, then reboot',
)

WHAT = "VT-x"
# VMware KB 1011712: what HV Support says
HV_MEANING = {0: "the CPU has no VT-x/AMD-V", 1: "VT-x/AMD-V present but not usable on this hardware",
              2: "VT-x/AMD-V disabled in the BIOS", 3: "VT-x/AMD-V enabled"}


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    if uses_redfish(facts):
        return judge_redfish(CHECK, facts, WHAT)
    covered = bmc_skip(CHECK, facts)
    if covered is not None:
        return [covered]
    target = facts.target
    if (target is None or target.kind is TargetKind.ESXI) and (target is not None or facts.has("esxi_cpu_global")):
        return _from_hv_support(facts)
    return [skip(CHECK, facts, "Linux shows no reliable trace of the BIOS VT-x setting: add the server's BMC "
                               "to the inventory (kind bmc) to judge it", probes=())]


def _from_hv_support(facts: Facts) -> list[Finding]:
    hv = facts.need("esxi_cpu_global").get("hv_support")
    ev = excerpt(facts.raw.get("esxi_cpu_global"), r"HV Support", r"HVSupport", r"^[^,]*,.*,")
    name = facts.target_name or None
    kw = {"observed": {"hv_support": hv}, "expected": {"hv_support": 3}, "excerpt": ev,
          "probes": ("esxi_cpu_global",), "details": {"source": "from ESXi HV Support"}}
    if hv == 3:
        return [good(CHECK, facts, "VT-x: HV Support 3, enabled (from ESXi HV Support)", **kw)]
    if hv is None:
        return [Finding(CHECK.code, Status.ERROR, "HV Support not readable in `esxcli hardware cpu global get`",
                        target=facts.target_name, evidence=[facts.evidence("esxi_cpu_global", ev)])]
    meaning = HV_MEANING.get(hv, f"unknown value {hv}")
    if hv == 2:
        fix = menu_fix("RW101", name)
    else:
        fix = ("check the CPU model and server support for VT-x/AMD-V (VMware KB 1011712); a BIOS update or "
               "other hardware may be needed\n" + menu_fix("RW101", name))
    return [bad(CHECK, facts, f"VT-x: HV Support {hv}, {meaning} (from ESXi HV Support)", fix=fix, **kw)]


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """Stage the setting through the server's BMC (Redfish); it applies at the host's next reboot."""
    return bios_plan(CHECK, facts, policy, WHAT)
