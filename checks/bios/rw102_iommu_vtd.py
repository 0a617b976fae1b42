"""RW102 iommu-vtd — the BIOS has the IOMMU (Intel VT-d) on, and the OS uses it

What it checks
    With the server's BMC in the inventory: HPE iLO `IntelProcVtd` is `Enabled`; Dell PowerEdge
    has no VT-d setting of its own — `ProcVirtualization` ("Virtualization Technology") turns on
    VT-x and VT-d together, so on Dell this reads ProcVirtualization and leaves a disabled one to
    RW101 (it depends on RW101). Current value, and nothing different staged for the next reboot.
    Without a BMC, on bare-metal Linux: `ls /sys/class/iommu` lists IOMMU units (`dmar0`… Intel,
    `ivhd0`… AMD), else `dmesg` says `DMAR: IOMMU enabled`. When the firmware's DMAR/IVRS ACPI
    table is there but the kernel registered no IOMMU, the BIOS is fine and the kernel command
    line lacks `intel_iommu=on`. On ESXi the shell shows no VT-d state: it needs the BMC (or
    vSphere's `passthruCapable`, which the vsphere stage reads).

Why it matters
    A VF is handed to a VM (or a container with VFIO) through the IOMMU: without VT-d, vSphere
    shows the PF as not passthrough-capable and no VM gets its VF.

How to fix by hand
    HPE iLO (applied at the next reboot, no job):
        curl -sS --cacert ilo-ca.pem -u admin:"$BMC_PASSWORD" -X PATCH \
          https://<ilo>/redfish/v1/Systems/1/Bios/Settings/ \
          -H 'Content-Type: application/json' -d '{"Attributes": {"IntelProcVtd": "Enabled"}}'
    Dell iDRAC: as RW101 (ProcVirtualization, PATCH + configuration job). Then reboot the server.
    BIOS setup: HPE F9 > RBSU > Virtualization Options > Intel(R) VT-d; Dell F2 > System BIOS >
    Processor Settings > Virtualization Technology.
    Linux with the BIOS right but no IOMMU in use: append `intel_iommu=on iommu=pt` to
    GRUB_CMDLINE_LINUX in /etc/default/grub, then
        grub2-mkconfig -o /boot/grub2/grub.cfg
    and reboot.
    Sources: HPE's PATCH on /redfish/v1/Systems/1/Bios/Settings/ and IntelProcVtd — HPE "Bios resource
        definitions of iLO" (https://servermanagementportal.ext.hpe.com/docs/redfishservices/ilos/ilo6/
        ilo6_166/ilo6_bios_resourcedefns166) and the recorded iLO documents in tests/unit/data/redfish/;
        Dell — RW101's sources; `curl` — curl(1), the real binary (Debian curl); intel_iommu=on in
        GRUB_CMDLINE_LINUX — Red Hat Virtualization 4.4, "Appendix E. Configuring a Host for PCI Passthrough",
        https://access.redhat.com/documentation/en-us/red_hat_virtualization/4.4/html/installing_red_hat_
        virtualization_as_a_self-hosted_engine_using_the_command_line/configuring_a_host_for_pci_passthrough_
        she_cli_deploy; iommu=pt and `grub2-mkconfig -o /boot/grub2/grub.cfg` — the DPDK guide, "IOMMU",
        http://dpdk-guide.gitlab.io/dpdk-guide/setup/iommu.html; the reads `ls /sys/class/iommu` (the kernel's
        sysfs-class-iommu ABI) and `dmesg | grep -i -e DMAR -e IOMMU -e IVRS` — corpus linux_dmesg/
        iommu-intel-dsa-1836-iommu-enabled-scalable.txt. No source was found for the `grubby --args` form
        this check used to print: it is gone.

Fix safety
    disruptive: a BIOS (or kernel command line) change that takes a server reboot (reboot kind
    bios; it can ride on a host reboot when staged first).
"""

from roce_wizard.checklib.bios import bios_plan, bmc_skip, judge_redfish, menu_fix, uses_redfish
from roce_wizard.checklib.findings import bad, good, skip
from roce_wizard.model import Check, Evidence, Facts, Finding, FixPlan, Policy, RebootKind, Severity, Stage, TargetKind
from roce_wizard.records.wording import plural

CHECK = Check(
    code="RW102",
    slug="iommu-vtd",
    title="IOMMU (VT-d) enabled",
    stage=Stage.BIOS,
    target=(TargetKind.BMC, TargetKind.ESXI, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=(),
    optional_probes=("redfish_bios", "sysfs_iommu", "linux_dmesg"),
    depends_on=("RW101",),  # Dell: VT-d rides on ProcVirtualization, whose failure is RW101's to report
    reboot=RebootKind.BIOS,
    fix_hint='HPE: PATCH …/Bios/Settings {"Attributes": {"IntelProcVtd": "Enabled"}}; Dell: as RW101; then reboot',
)

WHAT = "VT-d"
KERNEL_ARGS = {"DMAR": "intel_iommu=on iommu=pt", "IVRS": "amd_iommu=on iommu=pt"}


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    if uses_redfish(facts):
        return judge_redfish(CHECK, facts, WHAT)
    covered = bmc_skip(CHECK, facts)
    if covered is not None:
        return [covered]
    target = facts.target
    if target is not None and target.kind is TargetKind.ESXI:
        return [skip(CHECK, facts, "the ESXi shell shows no VT-d state: add the server's BMC to the inventory "
                                   "(kind bmc) to judge it (vSphere's passthruCapable is the vsphere stage's)",
                     probes=())]
    return _from_linux(facts)


def _from_linux(facts: Facts) -> list[Finding]:
    sysfs = facts.get("sysfs_iommu")
    dmesg = facts.get("linux_dmesg") or {}
    if sysfs is None and not facts.has("linux_dmesg"):
        facts.need("sysfs_iommu")  # neither was read: say why (error, or not applicable)
    name = facts.target_name or None
    evidence = []
    if sysfs is not None:
        units = ", ".join(sysfs.get("units") or []) or ("(empty)" if sysfs.get("present") else "(no such directory)")
        evidence.append(Evidence("sysfs_iommu", facts.commands.get("sysfs_iommu"), units))
    if dmesg:
        lines = list(dmesg.get("iommu_evidence") or [])
        evidence.append(Evidence("linux_dmesg", facts.commands.get("linux_dmesg"), "\n".join(lines[:4]) or None))
    observed = {"iommu_units": (sysfs or {}).get("units"), "dmesg_iommu_enabled": dmesg.get("iommu_enabled"),
                "acpi_table": dmesg.get("iommu_acpi_table")}
    kw = {"observed": observed, "expected": "IOMMU units registered / DMAR: IOMMU enabled", "evidence": evidence}
    if sysfs is not None and sysfs.get("units"):
        return [good(CHECK, facts, f"VT-d: the kernel registered {plural(len(sysfs['units']), 'IOMMU unit')} "
                                   f"({', '.join(sysfs['units'][:4])}) (from /sys/class/iommu)",
                     details={"source": "from /sys/class/iommu"}, **kw)]
    if dmesg.get("iommu_enabled") is True:
        return [good(CHECK, facts, "VT-d: the kernel says the IOMMU is enabled (from dmesg)",
                     details={"source": "from dmesg"}, **kw)]
    table = dmesg.get("iommu_acpi_table")
    source = "from /sys/class/iommu" + (" and dmesg" if dmesg else "") if sysfs is not None else "from dmesg"
    if table:
        args = KERNEL_ARGS.get(table, KERNEL_ARGS["DMAR"])
        fix = (f"append {args} to GRUB_CMDLINE_LINUX in /etc/default/grub, regenerate the grub configuration "
               f"(grub2-mkconfig -o /boot/grub2/grub.cfg), then reboot {name or 'the host'}")
        return [bad(CHECK, facts, f"VT-d: the BIOS provides the {table} table but the kernel uses no IOMMU "
                                  f"(no unit in /sys/class/iommu): the kernel command line lacks {args.split()[0]} "
                                  f"({source})", fix=fix, details={"source": source, "kernel_only": True}, **kw)]
    if sysfs is None and dmesg.get("iommu_enabled") is None:
        return [skip(CHECK, facts, "this kernel log says nothing about the IOMMU (from dmesg)",
                     evidence=evidence)]
    extra = f"and check the kernel command line has {KERNEL_ARGS['DMAR']} (GRUB_CMDLINE_LINUX in /etc/default/grub)"
    if dmesg:
        why = "no unit in /sys/class/iommu, no DMAR/IVRS table in the kernel log: VT-d is off in the BIOS"
    else:
        why = ("no unit in /sys/class/iommu (the kernel log was not readable): VT-d is off in the BIOS, or the "
               f"kernel runs without {KERNEL_ARGS['DMAR'].split()[0]}")
    return [bad(CHECK, facts, f"VT-d: no IOMMU in use — {why} ({source})",
                fix=menu_fix("RW102", name, extra), details={"source": source}, **kw)]


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """Stage the setting through the server's BMC (Redfish); it applies at the host's next reboot."""
    return bios_plan(CHECK, facts, policy, WHAT)
