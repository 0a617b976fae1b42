"""RW104 power-profile — the BIOS runs a performance power profile, not an energy saver

What it checks
    With the server's BMC in the inventory: a performance profile passes — Dell `SysProfile`
    `PerfPerWattOptimizedOs` ("Performance Per Watt (OS)", seed 000's) or `PerfOptimized`
    ("Performance"); HPE iLO `PowerRegulator` `OsControl` ("OS Control Mode") or `StaticHighPerf`
    ("Static High Performance Mode"). Only the energy-saving profiles warn: Dell
    `PerfPerWattOptimizedDapc` (BIOS-driven DAPC) and `DenseCfgOptimized`, HPE
    `DynamicPowerSavings` / `StaticLowPower` (and any value not named here, e.g. Dell `Custom`, whose
    CPU settings this check cannot see). Current value, and nothing else staged for the next
    reboot. Without a BMC the OS cannot see the profile: the check then says so.

Why it matters
    With a BIOS-controlled profile (Dell's factory `PerfPerWattOptimizedDapc`) the BIOS lowers
    clocks and enters C-states behind the hypervisor's back: ESXi's High Performance policy
    (RW213) has nothing to control, and small-message RDMA latency rises and jitters. With the OS
    in control, ESXi's policy decides.

How to fix by hand
    Dell iDRAC:
        curl -sS --cacert bmc-ca.pem -u root:"$BMC_PASSWORD" -X PATCH \
          https://<idrac>/redfish/v1/Systems/System.Embedded.1/Bios/Settings \
          -H 'Content-Type: application/json' -d '{"Attributes": {"SysProfile": "PerfPerWattOptimizedOs"}}'
        curl -sS --cacert bmc-ca.pem -u root:"$BMC_PASSWORD" -X POST \
          https://<idrac>/redfish/v1/Managers/iDRAC.Embedded.1/Jobs \
          -H 'Content-Type: application/json' \
          -d '{"TargetSettingsURI": "/redfish/v1/Systems/System.Embedded.1/Bios/Settings"}'
    then reboot. HPE iLO: PATCH {"Attributes": {"PowerRegulator": "OsControl"}} on
    /redfish/v1/Systems/1/Bios/Settings/, then reboot. BIOS setup: Dell F2 > System BIOS > System
    Profile Settings > System Profile: Performance Per Watt (OS); HPE F9 > RBSU > Power and
    Performance Options > Power Regulator: OS Control Mode. Then set ESXi's policy (RW213).
    Sources: the profiles — Dell OpenManage Server Administrator help "System Profile Settings"
    (System Profile: Performance Per Watt (DAPC), Performance Per Watt (OS), Performance, …; DAPC is
    "a BIOS-controlled dynamic frequency manipulation scheme to save power",
    the help pages shipped in https://linux.dell.com/repo/hardware/DSU_25.06.23/os_dependent/SLES15_64/
    srvadmin/srvadmin-tomcat-11.1.0.0-5773.sles15.x86_64.rpm) and Dell's
    "BIOS Performance and Power Tuning Guidelines for Dell PowerEdge 12th Generation Servers"
    (J. Beckett, 2012); the Redfish attribute names and values — the recorded iDRAC/iLO documents in
    tests/unit/data/redfish/ (`SysProfile`, `PowerRegulator`); the PATCH + job — Dell's iDRAC
    Redfish API guide (`/redfish/v1/Managers/iDRAC.Embedded.1/Jobs` with `TargetSettingsURI`) and
    HPE's "Bios resource definitions of iLO" (https://servermanagementportal.ext.hpe.com/docs/
    redfishservices/ilos/ilo6/ilo6_166/ilo6_bios_resourcedefns166: PATCH …/bios/settings); `curl` — curl(1),
    the real binary (Debian curl).

Fix safety
    disruptive: a BIOS change applied by a server reboot (reboot kind bios; it can ride on a host
    reboot when staged first). The host draws more power under load.
"""

from roce_wizard.checklib.bios import bios_plan, bmc_skip, judge_redfish, uses_redfish
from roce_wizard.checklib.findings import skip
from roce_wizard.model import Check, Facts, Finding, FixPlan, Policy, RebootKind, Severity, Stage, TargetKind

CHECK = Check(
    code="RW104",
    slug="power-profile",
    title="BIOS power profile is a performance profile",
    stage=Stage.BIOS,
    target=(TargetKind.BMC, TargetKind.ESXI, TargetKind.LINUX),
    severity=Severity.WARN,
    probes=(),
    optional_probes=("redfish_bios",),
    reboot=RebootKind.BIOS,
    fix_hint='PATCH …/Bios/Settings {"Attributes": {"SysProfile": "PerfPerWattOptimizedOs"}} + config job, then reboot',
)

WHAT = "power profile"


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    if uses_redfish(facts):
        return judge_redfish(CHECK, facts, WHAT)
    covered = bmc_skip(CHECK, facts)
    if covered is not None:
        return [covered]
    return [skip(CHECK, facts, "the BIOS system profile is not visible from the OS: add the server's BMC to the "
                               "inventory (kind bmc) to judge it", probes=())]


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """Stage the setting through the server's BMC (Redfish); it applies at the host's next reboot."""
    return bios_plan(CHECK, facts, policy, WHAT)
