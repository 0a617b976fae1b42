"""The lab BMCs' account, limits and BIOS attribute tables per vendor (Dell iDRAC, HPE iLO)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from roce_wizard.lab.world import EsxiHost

PASSWORD_ENV = "ROCE_LAB_BMC_PASSWORD"  # the inventory's {env: …} for every lab BMC
USERNAME = "root"  # iDRAC's default account
CA_FILE = "bmc-ca.pem"
CERT_FILE = "bmc-cert.pem"
KEY_FILE = "bmc-key.pem"

BASE = "Base.1.12"  # the DMTF Base message registry iDRAC 5.x/6.x answers with
IDRAC = "IDRAC.2.8"  # iDRAC's own registry prefix (SYS409, SYS011, …)

SESSION_TIMEOUT_S = 1800  # iDRAC's default idle session timeout
IDLE_CONNECTION_S = 120.0  # keep-alive connections idle longer than this are closed
MAX_BODY = 1 << 20
RESET_TYPES = ("On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "Nmi", "ForceOn",
               "PushPowerButton", "PowerCycle", "Suspend", "Pause", "Resume")
LAB_RESET_TYPES = ("ForceRestart", "GracefulRestart", "PowerCycle")  # the ones that reboot a server


# ---------------------------------------------------------------------------- BIOS attributes


@dataclass(frozen=True)
class Attr:
    """One BIOS attribute as the vendor's attribute registry describes it."""

    name: str
    display: str
    values: tuple[str, ...] = ()  # Enumeration values
    default: Any = None
    kind: str = "Enumeration"  # Enumeration / String / Integer
    read_only: bool = False
    key: str | None = None  # where the world keeps it in EsxiHost.bios (None: the name itself)
    profile: bool = False  # Dell: dictated by SysProfile unless SysProfile is Custom
    identity: str | None = None  # read-only facts of the machine (model, service tag, …)
    lower: int = 0  # Integer bounds / String max length
    upper: int = 0
    menu: str = "SysInformation"

    @property
    def world_key(self) -> str:
        return self.key or self.name


_ED = ("Enabled", "Disabled")

DELL_PROFILES = ("PerfPerWattOptimizedDapc", "PerfPerWattOptimizedOs", "PerfOptimized", "Custom")
# What each system profile sets (Dell 14G "System Profile Settings"); Custom keeps the user's own values.
_DELL_PROFILE_VALUES: dict[str, dict[str, str]] = {
    "PerfPerWattOptimizedDapc": {"ProcPwrPerf": "SysDbpm", "ProcCStates": "Enabled", "ProcC1E": "Enabled",
                                 "ProcTurboMode": "Enabled", "EnergyPerformanceBias": "BalancedPerformance",
                                 "UncoreFrequency": "DynamicUFS", "MemFrequency": "MaxPerf",
                                 "MemPatrolScrub": "Standard", "MonitorMwait": "Enabled"},
    "PerfPerWattOptimizedOs": {"ProcPwrPerf": "OsDbpm", "ProcCStates": "Enabled", "ProcC1E": "Enabled",
                               "ProcTurboMode": "Enabled", "EnergyPerformanceBias": "BalancedPerformance",
                               "UncoreFrequency": "DynamicUFS", "MemFrequency": "MaxPerf",
                               "MemPatrolScrub": "Standard", "MonitorMwait": "Enabled"},
    "PerfOptimized": {"ProcPwrPerf": "MaxPerf", "ProcCStates": "Disabled", "ProcC1E": "Disabled",
                      "ProcTurboMode": "Enabled", "EnergyPerformanceBias": "MaxPower",
                      "UncoreFrequency": "MaxUFS", "MemFrequency": "MaxPerf", "MemPatrolScrub": "Standard",
                      "MonitorMwait": "Enabled"},
}

DELL_ATTRIBUTES: tuple[Attr, ...] = (
    Attr("SystemModelName", "System Model Name", kind="String", read_only=True, identity="model"),
    Attr("SystemManufacturer", "System Manufacturer", kind="String", read_only=True, identity="manufacturer"),
    Attr("SystemBiosVersion", "System BIOS Version", kind="String", read_only=True, identity="bios_version"),
    Attr("SystemServiceTag", "System Service Tag", kind="String", read_only=True, identity="service_tag"),
    Attr("SysMemSize", "System Memory Size", kind="String", read_only=True, identity="memory", menu="MemSettings"),
    Attr("MemTest", "System Memory Testing", _ED, "Disabled", menu="MemSettings"),
    Attr("MemOpMode", "Memory Operating Mode",
         ("OptimizerMode", "FaultResilientMode", "MirrorMode", "SpareMode"), "OptimizerMode", menu="MemSettings"),
    Attr("NodeInterleave", "Node Interleaving", _ED, "Disabled", menu="MemSettings"),
    Attr("LogicalProc", "Logical Processor", _ED, "Enabled", menu="ProcSettings"),
    Attr("ProcVirtualization", "Virtualization Technology", _ED, "Enabled", menu="ProcSettings"),
    Attr("ProcAdjCacheLine", "Adjacent Cache Line Prefetch", _ED, "Enabled", menu="ProcSettings"),
    Attr("ProcHwPrefetcher", "Hardware Prefetcher", _ED, "Enabled", menu="ProcSettings"),
    Attr("ProcX2Apic", "x2APIC Mode", _ED, "Enabled", menu="ProcSettings"),
    Attr("ProcCores", "Number of Cores per Processor", ("All", "1", "2", "4", "6", "8", "10", "12"), "All",
         menu="ProcSettings"),
    Attr("BootMode", "Boot Mode", ("Bios", "Uefi"), "Uefi", menu="BootSettings"),
    Attr("EmbSata", "Embedded SATA", ("AhciMode", "RaidMode", "Off"), "AhciMode", menu="SataSettings"),
    Attr("SriovGlobalEnable", "SR-IOV Global Enable", _ED, "Enabled", menu="IntegratedDevices"),
    Attr("MmioAbove4Gb", "Memory Mapped I/O above 4GB", _ED, "Enabled", menu="IntegratedDevices"),
    Attr("OsWatchdogTimer", "OS Watchdog Timer", _ED, "Disabled", menu="IntegratedDevices"),
    Attr("SerialComm", "Serial Communication", ("OnNoConRedir", "OnConRedirCom1", "OnConRedirCom2", "Off"),
         "OnNoConRedir", menu="SerialCommSettings"),
    Attr("SysProfile", "System Profile", DELL_PROFILES, "PerfPerWattOptimizedDapc", menu="SysProfileSettings"),
    Attr("ProcPwrPerf", "CPU Power Management", ("SysDbpm", "MaxPerf", "OsDbpm"), "SysDbpm", profile=True,
         menu="SysProfileSettings"),
    Attr("MemFrequency", "Memory Frequency", ("MaxPerf", "MaxReliability", "2933MHz", "2666MHz", "2400MHz"),
         "MaxPerf", profile=True, menu="SysProfileSettings"),
    Attr("ProcTurboMode", "Turbo Boost", _ED, "Enabled", profile=True, menu="SysProfileSettings"),
    Attr("ProcC1E", "C1E", _ED, "Enabled", profile=True, menu="SysProfileSettings"),
    Attr("ProcCStates", "C States", _ED, "Enabled", profile=True, menu="SysProfileSettings"),
    Attr("MemPatrolScrub", "Memory Patrol Scrub", ("Standard", "Extended", "Disabled"), "Standard",
         profile=True, menu="SysProfileSettings"),
    Attr("UncoreFrequency", "Uncore Frequency", ("DynamicUFS", "MaxUFS", "MinUFS"), "DynamicUFS", profile=True,
         menu="SysProfileSettings"),
    Attr("EnergyPerformanceBias", "Energy Efficient Policy",
         ("MaxPower", "BalancedPerformance", "BalancedEfficiency", "LowPower"), "BalancedPerformance",
         profile=True, menu="SysProfileSettings"),
    Attr("MonitorMwait", "Monitor/Mwait", _ED, "Enabled", profile=True, menu="SysProfileSettings"),
    Attr("SecureBoot", "Secure Boot", _ED, "Disabled", menu="SysSecurity"),
    Attr("AcPwrRcvry", "AC Power Recovery", ("On", "Off", "Last"), "Last", menu="SysSecurity"),
    Attr("AcPwrRcvryDelay", "AC Power Recovery Delay", ("Immediate", "Random", "User"), "Immediate",
         menu="SysSecurity"),
    Attr("AcPwrRcvryUserDelay", "User Defined Delay (60s to 240s)", kind="Integer", default=60, lower=60,
         upper=240, menu="SysSecurity"),
    Attr("AssetTag", "Asset Tag", kind="String", default="", upper=63, menu="MiscSettings"),
)

# iLO 5 (Gen10) names; the ones the world reads are stored under the Dell key (see Attr.key).
_HPE_POWER_REGULATOR = {"PerfPerWattOptimizedOs": "OsControl", "PerfPerWattOptimizedDapc": "DynamicPowerSavings",
                        "PerfOptimized": "StaticHighPerf", "Custom": "DynamicPowerSavings"}
HPE_ATTRIBUTES: tuple[Attr, ...] = (
    Attr("SerialNumber", "Serial Number", kind="String", read_only=True, identity="service_tag"),
    Attr("ProductId", "Product ID", kind="String", read_only=True, identity="product_id"),
    Attr("BootMode", "Boot Mode", ("Uefi", "LegacyBios"), "Uefi"),
    Attr("ProcHyperthreading", "Intel(R) Hyper-Threading", _ED, "Enabled", key="LogicalProc"),
    Attr("ProcVirtualization", "Intel(R) Virtualization Technology (Intel VT)", _ED, "Enabled"),
    Attr("IntelProcVtd", "Intel(R) VT-d", _ED, "Enabled"),
    Attr("Sriov", "SR-IOV", _ED, "Enabled", key="SriovGlobalEnable"),
    Attr("ProcTurbo", "Intel(R) Turbo Boost Technology", _ED, "Enabled"),
    Attr("MinProcIdlePower", "Minimum Processor Idle Power Core C-State", ("C6", "C1E", "NoCStates"), "C6"),
    Attr("PowerRegulator", "Power Regulator",
         ("DynamicPowerSavings", "StaticLowPower", "StaticHighPerf", "OsControl"), "DynamicPowerSavings"),
    Attr("WorkloadProfile", "Workload Profile",
         ("GeneralPowerEfficientCompute", "GeneralPeakFrequencyCompute", "GeneralThroughputCompute",
          "Virtualization-PowerEfficient", "Virtualization-MaxPerformance", "LowLatency", "MissionCritical",
          "TransactionalApplicationProcessing", "HighPerformanceCompute", "DecisionSupport",
          "GraphicProcessing", "I/OThroughput", "Custom"), "GeneralPowerEfficientCompute"),
    Attr("WorkloadProfileName", "Server Asset Tag", kind="String", default="", upper=31),
)


@dataclass(frozen=True)
class Vendor:
    """What differs between an iDRAC and an iLO: resource ids, registry, how settings get applied."""

    name: str
    system_id: str
    manager_id: str
    attributes: tuple[Attr, ...]
    jobs: bool  # staged values need a configuration job (iDRAC) or apply at the next reboot (iLO)
    trailing_slash: bool  # iLO spells its URIs with a trailing slash
    product: str
    model: str
    manager_model: str
    manager_firmware: str
    bios_version: str
    registry: str

    def attr(self, name: str) -> Attr | None:
        return self._by_name.get(name)  # type: ignore[attr-defined]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {a.name: a for a in self.attributes})


DELL = Vendor("dell", "System.Embedded.1", "iDRAC.Embedded.1", DELL_ATTRIBUTES, jobs=True, trailing_slash=False,
              product="Integrated Dell Remote Access Controller", model="PowerEdge R740",
              manager_model="14G Monolithic", manager_firmware="5.10.50.00", bios_version="2.12.2",
              registry="BiosAttributeRegistry.v1_0_3")
HPE = Vendor("hpe", "1", "1", HPE_ATTRIBUTES, jobs=False, trailing_slash=True,
             product="ProLiant DL380 Gen10", model="ProLiant DL380 Gen10", manager_model="iLO 5",
             manager_firmware="iLO 5 v2.72", bios_version="U30 v2.68 (07/14/2022)",
             registry="BiosAttributeRegistryU30.v1_2_68")
VENDORS = {"dell": DELL, "hpe": HPE}


def bmc_vendor(host: EsxiHost) -> str:
    """The kind of BMC a host's server has: "dell" (iDRAC, the default) or "hpe" (iLO 5)."""
    return host.bmc_vendor or "dell"


def set_bmc_vendor(host: EsxiHost, vendor: str) -> None:
    if vendor not in VENDORS:
        raise ValueError(f"BMC vendor {vendor!r}: expected one of {', '.join(VENDORS)}")
    host.bmc_vendor = vendor


def bmc_name(host: str) -> str:
    return f"bmc-{host}"
