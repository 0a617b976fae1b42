"""RW104 power-profile — the BIOS leaves power management to the OS

What it checks
    With the server's BMC in the inventory: Dell `SysProfile` is `PerfPerWattOptimizedOs`
    ("Performance Per Watt (OS)", the seed's best practice); on HPE iLO `PowerRegulator` is
    `OsControl` ("OS Control Mode"), the same idea. Current value, and nothing different staged for
    the next reboot. Without a BMC the OS cannot see the profile: the check then says so.

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

Fix safety
    disruptive: a BIOS change applied by a server reboot (reboot kind bios; it can ride on a host
    reboot when staged first). The host draws more power under load.
"""

from roce_wizard.bioskit import bios_plan, bmc_skip, judge_redfish, uses_redfish
from roce_wizard.checkkit import skip
from roce_wizard.model import Check, Facts, Finding, FixPlan, Policy, RebootKind, Severity, Stage, TargetKind

CHECK = Check(
    code="RW104",
    slug="power-profile",
    title="BIOS power profile leaves control to the OS",
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
