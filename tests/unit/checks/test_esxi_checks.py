"""ESXi-stage checks (RW201–RW215) on recorded outputs: corpus samples, the seed's printed outputs,
and hand-written outputs in the real formats (marked HAND-WRITTEN; `--formatter=csv` where the
live probes use it).

Doctor cases carry an inventory target (`esxi()`: PF 0000:3b:00.0, vmnics vmnic2/vmnic3, VFs 8/7 —
the seed host); analyze cases have `target=None`.
"""

from __future__ import annotations

import pytest

from roce_wizard.engine.fixes import plan_for as planned_fix
from roce_wizard.model import Policy, Status
from tests.checkcases import CATALOG, Case, build_facts, esxi, run_case
from tests.conftest import corpus_text

PASS, FAIL, WARN, SKIP = Status.PASS, Status.FAIL, Status.WARN, Status.SKIP
REBOOT = "  # then reboot the host"
PARAMS_SET = 'esxcli system module parameters set -m nmlx5_core -p "{}"' + REBOOT

# ------------------------------------------------------------------------------------ recorded

VIB_DELL = corpus_text("esxi_vib_list/dell-esxi702-full-list-mel-async-nmlx5.txt")  # nmlx5 4.19.70.1, no mft
VIB_MFT = corpus_text("esxi_vib_list/mft-nmst-mel-partnersupported-excerpt.txt")  # mft + nmst only
VIB_INSTALL = corpus_text("esxi_vib_install/nmst-4-18-install-result-reboot-required.txt")
PAUSE_TWO_HOSTS = corpus_text("esxi_pauseparams/esxi80-cx5-vs-esxi70-x710.txt")
PAUSE_CX5_DEFAULT, _, _rest = PAUSE_TWO_HOSTS.partition("[root@esxi2:~]")
PAUSE_X710 = "[root@esxi2:~]" + _rest  # second host: pause off everywhere
MST_SMARTX = corpus_text("mst_status/esxi-smartx-mst-status-and-vv.txt")  # ConnectX5 at 02:00.x
MLX_SLINGSHOT = corpus_text("mlxconfig_query/hpe-slingshot-cx5-3col-star-marker-elided.txt")
MLX_CX4LX = corpus_text("mlxconfig_query/cx4lx-mcx4121a-full-next-boot-trailing-pad.txt")  # Next Boot only
FWM_SHASTA = corpus_text("mlxfwmanager/shasta-cx5-cx4-two-devices-no-matching-image.txt")
FWM_CX3 = corpus_text("mlxfwmanager/esxi-cx3-mcx311a-update-flow-masked-macs.txt")
FLINT_CX4 = corpus_text("flint_query/cx4-vpi-lenovo-fs3-psid-lnv.txt")
NIC_DELL = corpus_text("esxi_nic_list/dell-asm-spec-cx4lx-mtu-mismatch-vusb.txt")  # 2x CX-4 Lx

# Seed 000 figure 7, as printed there (`mst status -vv` and `mlxfwmanager -d 3b:00.0` on the seed host).
MST_SEED = """[esxi]$ mst status -vv
PCI devices:
-----
DEVICE_TYPE          MST                      PCI
ConnectX4LX(rev:0)   mt4117_pciconf0         1a:00.0
ConnectX4LX(rev:0)   mt4117_pciconf0.1       1a:00.1
ConnectX5(rev:0)     mt4119_pciconf1         3b:00.0
ConnectX5(rev:0)     mt4119_pciconf1.1       3b:00.1
"""

FWM_SEED = """[esxi]$ mlxfwmanager -d 3b:00.0
Querying Mellanox devices firmware ...
Device #1:
-----
Device Type:         ConnectX5
Part Number:         MCX556A-ECA_Ax
Description:         ConnectX-5 VPI adapter card; EDR IB (100Gb/s) and 100GbE;
dual-port QSFP28; PCIe3.0 x16; tall bracket; ROHS R6
PSID:                MT_0000000008
PCI Device Name:     3b:00.0
...
Versions:           Current      Available
FW                  16.32.1010  N/A
PXE                 3.6.0502   N/A
UEFI                14.25.0017  N/A
Status:             No matching image found
"""

# ------------------------------------------------------------------------------- HAND-WRITTEN

# HAND-WRITTEN: the seed host's `esxcli --formatter=csv network nic list` (fields alphabetical, as
# the csv formatter prints them): ConnectX-4 Lx service card at 1a:00.x, ConnectX-5 RoCE card at 3b:00.x.
NIC_SEED_CSV = """AdminStatus,Description,Driver,Duplex,LinkStatus,MACAddress,MTU,Name,PCIDevice,Speed,
Up,Mellanox Technologies MT27710 Family [ConnectX-4 Lx],nmlx5_core,Full,Up,0c:42:a1:5e:3a:10,1500,vmnic0,0000:1a:00.0,25000,
Up,Mellanox Technologies MT27710 Family [ConnectX-4 Lx],nmlx5_core,Full,Up,0c:42:a1:5e:3a:11,1500,vmnic1,0000:1a:00.1,25000,
Up,Mellanox Technologies MT27800 Family [ConnectX-5],nmlx5_core,Full,Up,0c:42:a1:d3:98:46,9000,vmnic2,0000:3b:00.0,100000,
Up,Mellanox Technologies MT27800 Family [ConnectX-5],nmlx5_core,Full,Up,0c:42:a1:d3:98:47,9000,vmnic3,0000:3b:00.1,100000,
"""

# HAND-WRITTEN: `mlxconfig -d mt4119_pciconf1 -e query` on the seed host after Figure 11 and the
# third reboot (3-column layout and `*` markers as in the HPE corpus sample; list shortened).
MLX_SEED_E = """Device #1:
----------

Device type:    ConnectX5
Name:           MCX556A-ECA_Ax
Description:    ConnectX-5 VPI adapter card; EDR IB (100Gb/s) and 100GbE; dual-port QSFP28; PCIe3.0 x16; tall bracket; ROHS R6
Device:         mt4119_pciconf1

Configurations:                              Default         Current         Next Boot
*        LINK_TYPE_P1                        IB(1)           ETH(2)          ETH(2)
*        LINK_TYPE_P2                        IB(1)           ETH(2)          ETH(2)
         ADVANCED_PCI_SETTINGS               False(0)        False(0)        False(0)
*        NUM_OF_VFS                          0               16              16
*        SRIOV_EN                            False(0)        True(1)         True(1)
The '*' shows parameters with next value different from default/current value.
"""


def mlx_seed(**rows: tuple[str, str]) -> str:
    """MLX_SEED_E with some rows' (Current, Next Boot) replaced."""
    out = []
    for line in MLX_SEED_E.splitlines():
        words = line.split()
        name = words[1] if line.startswith("*") else (words[0] if words else "")
        if name in rows:
            cur, nxt = rows[name]
            default = words[-3]
            line = f"*        {name:<36}{default:<16}{cur:<16}{nxt}"
        out.append(line)
    return "\n".join(out) + "\n"


MLX_PENDING = mlx_seed(SRIOV_EN=("False(0)", "True(1)"), NUM_OF_VFS=("0", "16"))  # set, not yet rebooted
MLX_15 = mlx_seed(NUM_OF_VFS=("15", "15"))  # trap: 15 is not > 8 + 7
MLX_7 = mlx_seed(NUM_OF_VFS=("7", "7"))  # below vmnic2's 8: a per-PF ceiling too small for that port
PER_PORT = Policy(num_of_vfs_rule="per_port")
MLX_SRIOV_OFF = mlx_seed(SRIOV_EN=("False(0)", "False(0)"))  # trap: NUM_OF_VFS=16, SRIOV_EN False
MLX_P2_IB = mlx_seed(LINK_TYPE_P2=("IB(1)", "IB(1)"))
MLX_P2_PENDING = mlx_seed(LINK_TYPE_P2=("IB(1)", "ETH(2)"))


def module_params_csv(**values: str) -> str:
    """HAND-WRITTEN: `esxcli --formatter=csv system module parameters list -m nmlx5_core` with the
    given values set (the rest empty, as on a host where they were never set)."""
    rows = [
        ("Number of RSS queues to use for the default queue. Valid values: [0-16]", "DRSS", "int"),
        ("Enable the ECN support. Values: 0 - disabled, 1 - enabled (default)", "ecn", "int"),
        ("Number of PCI VFs to initialize. Values: 0 - disabled (default), N - number of VFs per port",
         "max_vfs", "array of int"),
        ("Priority based Flow Control policy on RX. Values: 0-255 bitmask, 0x00 - disabled (default)", "pfcrx", "int"),
        ("Priority based Flow Control policy on TX. Values: 0-255 bitmask, 0x00 - disabled (default)", "pfctx", "int"),
        ("Port policy to calculate the switch priority and packet color. Values: 1 - TRUST_PCP (default), "
         "2 - TRUST_DSCP", "trust_state", "int"),
    ]
    lines = ["Description,Name,Type,Value,"]
    for desc, name, typ in rows:
        v = values.get(name, "")
        lines.append(f'"{desc}",{name},{typ},{chr(34) + v + chr(34) if "," in v else v},')
    return "\n".join(lines) + "\n"


def esxcfg_module(options: str) -> str:
    """HAND-WRITTEN: `esxcfg-module -g nmlx5_core` (what users paste; the string in one line)."""
    return f"[root@esx01:~] esxcfg-module -g nmlx5_core\nnmlx5_core enabled = 1 options = '{options}'\n"


SEED_OPTIONS = "pfctx=0x08 pfcrx=0x08 trust_state=2 max_vfs=0,0,8,7 ecn=1"  # seed 000 figure 11
PARAMS_SEED = module_params_csv(ecn="1", max_vfs="0,0,8,7", pfcrx="0x08", pfctx="0x08", trust_state="2")

# HAND-WRITTEN: `esxcli --formatter=csv software vib list` (ESXi 7.0U2 field set) with the seed's
# versions; and a human table with only the inbox VMware nmlx5 driver.
VIB_SEED_CSV = """AcceptanceLevel,CreationDate,ID,InstallDate,Name,Platforms,Status,Vendor,Version,
PartnerSupported,2022-01-19,MEL_bootbank_mft_4.18.1.14-0,2022-03-13,mft,host,,MEL,4.18.1.14-0,
PartnerSupported,2022-01-19,MEL_bootbank_nmst_4.18.1.14-1OEM.700.1.0.15843807,2022-03-13,nmst,host,,MEL,4.18.1.14-1OEM.700.1.0.15843807,
VMwareCertified,2021-05-24,MEL_bootbank_nmlx5-core_4.21.71.101-1OEM.702.0.0.17473468,2022-03-13,nmlx5-core,host,,MEL,4.21.71.101-1OEM.702.0.0.17473468,
VMwareCertified,2021-05-24,MEL_bootbank_nmlx5-rdma_4.21.71.101-1OEM.702.0.0.17473468,2022-03-13,nmlx5-rdma,host,,MEL,4.21.71.101-1OEM.702.0.0.17473468,
VMwareCertified,2021-04-29,VMware_bootbank_esx-base_7.0.2-0.0.17867351,2021-06-15,esx-base,host,,VMware,7.0.2-0.0.17867351,
"""
VIB_MFT_ONLY_CSV = "\n".join(ln for ln in VIB_SEED_CSV.splitlines() if ",nmst," not in ln) + "\n"
VIB_INBOX = """Name                           Version                              Vendor   Acceptance Level  Install Date
-----------------------------  -----------------------------------  -------  ----------------  ------------
nmlx4-core                     3.19.16.8-2vmw.702.0.0.17867351      VMW      VMwareCertified   2021-06-15
nmlx5-core                     4.19.16.10-1vmw.702.0.0.17867351     VMW      VMwareCertified   2021-06-15
nmlx5-rdma                     4.19.16.10-1vmw.702.0.0.17867351     VMW      VMwareCertified   2021-06-15
esx-base                       7.0.2-0.0.17867351                   VMware   VMwareCertified   2021-06-15
"""

# HAND-WRITTEN: ESXi `mst status` with nmst installed but no device attached yet.
MST_EMPTY = """[root@esx01:~] /opt/mellanox/bin/mst status -vv
MST devices:
------------
"""

# HAND-WRITTEN: mlxfwmanager on the seed card with a newer image offered (`--online` query).
FWM_NEWER = FWM_SEED.replace("FW                  16.32.1010  N/A", "FW                  16.32.1010  16.35.2000").replace(
    "No matching image found", "Update required")

# HAND-WRITTEN: `esxcli --formatter=csv network nic pauseParams list` on the seed host.
PAUSE_SEED_OFF_CSV = """AutoNegotiation,AutoNegotiationResolutionAvail,NIC,PauseParamsSupported,PauseRX,PauseTX,RXAutoNegotiationResolution,TXAutoNegotiationResolution,
false,false,vmnic0,true,true,true,false,false,
false,false,vmnic1,true,true,true,false,false,
false,false,vmnic2,true,false,false,false,false,
false,false,vmnic3,true,false,false,false,false,
"""
PAUSE_SEED_VMNIC3_ON_CSV = PAUSE_SEED_OFF_CSV.replace(
    "false,false,vmnic3,true,false,false,", "false,false,vmnic3,true,true,true,")

# HAND-WRITTEN: `esxcli system settings advanced list -o /Power/CpuPolicy` (ESXi 7) and csv.
POWER_BALANCED = """[root@esx01:~] esxcli system settings advanced list -o /Power/CpuPolicy
   Path: /Power/CpuPolicy
   Type: string
   Int Value: 0
   Default Int Value: 0
   Min Value: 0
   Max Value: 0
   String Value: Balanced
   Default String Value: Balanced
   Valid Characters: *
   Description: CPU power management policy: "High Performance", "Balanced", "Low Power", "Custom"
   Host Specific: false
   Impact: none
"""
POWER_HIGH_CSV = '''DefaultIntValue,DefaultStringValue,Description,HostSpecific,Impact,IntValue,MaxValue,MinValue,Path,StringValue,Type,ValidCharacters,
0,Balanced,"CPU power management policy: ""High Performance"", ""Balanced"", ""Low Power"", ""Custom""",false,none,0,0,0,/Power/CpuPolicy,High Performance,string,*,
'''

# HAND-WRITTEN: `vim-cmd hostsvc/hostsummary` (abridged) on a host with a staged change.
HOST_SUMMARY = """(vim.host.Summary) {
   host = 'vim.HostSystem:ha-host',
   runtime = (vim.host.RuntimeInfo) {
      connectionState = "connected",
      powerState = "poweredOn",
      inMaintenanceMode = true,
      bootTime = "2022-03-13T09:12:47.231526Z",
   },
   config = (vim.host.Summary.ConfigSummary) {
      name = "esx-01.hpc.local",
      product = (vim.AboutInfo) {
         fullName = "VMware ESXi 7.0.2 build-17867351",
      },
   },
   rebootRequired = true,
   managementServerIp = "10.0.0.10",
}
"""
HOST_SUMMARY_OK = HOST_SUMMARY.replace("rebootRequired = true", "rebootRequired = false")

# HAND-WRITTEN: `esxcli --formatter=csv network sriovnic list` / `... sriovnic vf list -n vmnicN`
# (ESXi 7 prints VF PCI addresses with a 5-digit domain and a decimal bus: 059 == 0x3b).
SRIOV_LIST_CSV = """Description,Driver,Duplex,Link,MACAddress,MTU,Name,PCIDevice,Speed,
Mellanox Technologies MT27800 Family [ConnectX-5],nmlx5_core,Full,Up,0c:42:a1:d3:98:46,9000,vmnic2,0000:3b:00.0,100000,
Mellanox Technologies MT27800 Family [ConnectX-5],nmlx5_core,Full,Up,0c:42:a1:d3:98:47,9000,vmnic3,0000:3b:00.1,100000,
"""
SRIOV_LIST_VMNIC2_ONLY = """Name    PCI Device    Driver      Link  Speed   Duplex  MAC Address        MTU   Description
------  ------------  ----------  ----  ------  ------  -----------------  ----  -------------------------------------------------
vmnic2  0000:3b:00.0  nmlx5_core  Up    100000  Full    0c:42:a1:d3:98:46  9000  Mellanox Technologies MT27800 Family [ConnectX-5]
"""


def vf_list_csv(n: int, first_fn: int, owners: int = 0) -> str:
    rows = ["Active,OwnerWorldID,PCIAddress,VFID,"]
    for i in range(n):
        dev, fn = divmod(first_fn + i, 8)
        owner = str(2109455 + i) if i < owners else ""
        rows.append(f"{'true' if i < owners else 'false'},{owner},00000:059:{dev:02d}.{fn},{i},")
    return "\n".join(rows) + "\n"


def vf_list_human(vmnic: str, n: int) -> str:
    rows = [f"[root@esx01:~] esxcli network sriovnic vf list -n {vmnic}",
            "VF ID  Active  PCI Address     Owner World ID",
            "-----  ------  --------------  --------------"]
    rows += [f"{i:5d}   false  00000:059:{(2 + i) // 8:02d}.{(2 + i) % 8}" for i in range(n)]
    return "\n".join(rows) + "\n"


def rw208_fix(n: int) -> str:
    return f"/opt/mellanox/bin/mlxconfig -d mt4119_pciconf1 -y set NUM_OF_VFS={n}" + REBOOT


# ------------------------------------------------------------------------------------ cases

CASES: list[Case] = [
    # RW201 mft-installed
    Case("RW201", "corpus-mft-nmst-mel", PASS, {"esxi_vib_list": VIB_MFT}, summary_has="mft 4.18.1.14-0"),
    Case("RW201", "csv-seed-host", PASS, {"esxi_vib_list": VIB_SEED_CSV}, target=esxi()),
    Case("RW201", "corpus-dell-no-mft", FAIL, {"esxi_vib_list": VIB_DELL}, summary_has="mft and nmst not installed"),
    Case("RW201", "csv-nmst-missing", FAIL, {"esxi_vib_list": VIB_MFT_ONLY_CSV}, target=esxi(),
         summary_has="VIB nmst not installed"),
    # RW202 mst-device-visible
    Case("RW202", "seed-roce-card-3b", PASS, {"mst_status": MST_SEED}, target=esxi(), summary_has="mt4119_pciconf1"),
    Case("RW202", "corpus-smartx-analyze", PASS, {"mst_status": MST_SMARTX}, summary_has="ConnectX"),
    Case("RW202", "corpus-smartx-wrong-card", FAIL, {"mst_status": MST_SMARTX}, target=esxi(),
         summary_has="3b:00 is not among"),
    Case("RW202", "no-devices-mst-not-started", FAIL, {"mst_status": MST_EMPTY}, target=esxi(),
         summary_has="mst is not started"),
    # RW203 firmware-current (warn)
    Case("RW203", "seed-16.32.1010", PASS, {"mlxfwmanager": FWM_SEED}, target=esxi(), summary_has=">= 16.29.1016"),
    Case("RW203", "corpus-flint-cx4-by-major", PASS, {"flint_query": FLINT_CX4}, summary_has="12.28.2006"),
    Case("RW203", "corpus-shasta-old-fw", WARN, {"mlxfwmanager": FWM_SHASTA}, summary_has="older than"),
    Case("RW203", "newer-available", WARN, {"mlxfwmanager": FWM_NEWER}, target=esxi(), summary_has="16.35.2000"),
    Case("RW203", "corpus-cx3-no-policy", SKIP, {"mlxfwmanager": FWM_CX3}, summary_has="no minimum"),
    # RW204 nmlx5-driver
    Case("RW204", "csv-seed-4.21.71.101", PASS, {"esxi_vib_list": VIB_SEED_CSV}, target=esxi()),
    Case("RW204", "corpus-dell-4.19-mel", FAIL, {"esxi_vib_list": VIB_DELL}, summary_has="4.19.70.1"),
    Case("RW204", "corpus-excerpt-absent", FAIL, {"esxi_vib_list": VIB_MFT}, summary_has="not installed"),
    Case("RW204", "inbox-vmw-older", FAIL, {"esxi_vib_list": VIB_INBOX}, summary_has="inbox"),
    # RW205 link-type-eth
    Case("RW205", "seed-eth-both-ports", PASS, {"mlxconfig_query": MLX_SEED_E}, target=esxi()),
    Case("RW205", "corpus-cx4lx-eth-only", PASS, {"mlxconfig_query": MLX_CX4LX}, summary_has="ETH-only card"),
    Case("RW205", "p2-ib", FAIL, {"mlxconfig_query": MLX_P2_IB}, target=esxi(), summary_has="LINK_TYPE_P2=IB"),
    Case("RW205", "p2-ib-not-a-roce-port", PASS, {"mlxconfig_query": MLX_P2_IB, "esxi_nic_list": NIC_SEED_CSV},
         target=esxi(vmnics=("vmnic2",), vfs=(8,))),
    Case("RW205", "p2-eth-pending", FAIL, {"mlxconfig_query": MLX_P2_PENDING}, target=esxi(),
         summary_has="reboot pending"),
    # RW206 sriov-enabled-fw (the exemplar; cases here so that it has recorded pass/fail cases too)
    Case("RW206", "seed-true", PASS, {"mlxconfig_query": MLX_SEED_E}, target=esxi()),
    Case("RW206", "corpus-cx4lx-true", PASS, {"mlxconfig_query": MLX_CX4LX}),
    Case("RW206", "trap-num-of-vfs-16-sriov-false", FAIL, {"mlxconfig_query": MLX_SRIOV_OFF}, target=esxi(),
         summary_has="SRIOV_EN is False"),
    Case("RW206", "set-not-yet-rebooted", FAIL, {"mlxconfig_query": MLX_PENDING}, target=esxi(),
         summary_has="reboot pending"),
    # RW207 advanced-pci-off (warn)
    Case("RW207", "seed-false", PASS, {"mlxconfig_query": MLX_SEED_E}, target=esxi()),
    Case("RW207", "corpus-cx4lx-false", PASS, {"mlxconfig_query": MLX_CX4LX}),
    Case("RW207", "corpus-slingshot-true", WARN, {"mlxconfig_query": MLX_SLINGSHOT}, summary_has="True"),
    # RW208 num-vfs-covers-max-vfs
    Case("RW208", "seed-16-over-8+7", PASS,
         {"mlxconfig_query": MLX_SEED_E, "esxi_module_params": PARAMS_SEED, "esxi_nic_list": NIC_SEED_CSV},
         target=esxi(), summary_has="this card's max_vfs entries (vmnic2=8, vmnic3=7)"),
    Case("RW208", "analyze-mst-maps-card", PASS,
         {"mlxconfig_query": MLX_SEED_E, "esxi_module_params": esxcfg_module(SEED_OPTIONS),
          "esxi_nic_list": NIC_SEED_CSV, "mst_status": MST_SEED}, summary_has="vmnic2=8, vmnic3=7"),
    Case("RW208", "trap-15-not-over-15", FAIL,
         {"mlxconfig_query": MLX_15, "esxi_module_params": PARAMS_SEED, "esxi_nic_list": NIC_SEED_CSV},
         target=esxi(), summary_has="NUM_OF_VFS=15 does not exceed 15"),
    # NUM_OF_VFS is a per-PF ceiling; the site's default rule still asks for Σ+1
    Case("RW208", "per-port-15-covers-8-and-7", PASS,
         {"mlxconfig_query": MLX_15, "esxi_module_params": PARAMS_SEED, "esxi_nic_list": NIC_SEED_CSV},
         target=esxi(), policy=PER_PORT, summary_has="judged by per_port: the firmware covers every port"),
    Case("RW208", "sum-rule-15-says-firmware-covers-every-port", FAIL,
         {"mlxconfig_query": MLX_15, "esxi_module_params": PARAMS_SEED, "esxi_nic_list": NIC_SEED_CSV},
         target=esxi(), summary_has="the firmware already covers every port"),
    Case("RW208", "per-port-7-below-vmnic2", FAIL,
         {"mlxconfig_query": MLX_7, "esxi_module_params": PARAMS_SEED, "esxi_nic_list": NIC_SEED_CSV},
         target=esxi(), policy=PER_PORT, summary_has="below vmnic2=8"),
    Case("RW208", "trap-sriov-en-false", FAIL,
         {"mlxconfig_query": MLX_SRIOV_OFF, "esxi_module_params": PARAMS_SEED, "esxi_nic_list": NIC_SEED_CSV},
         target=esxi(), summary_has="SRIOV_EN is False although NUM_OF_VFS=16"),
    Case("RW208", "max-vfs-differs-from-inventory", FAIL,
         {"mlxconfig_query": MLX_SEED_E, "esxi_module_params": module_params_csv(max_vfs="0,0,8,0", pfctx="0x08"),
          "esxi_nic_list": NIC_SEED_CSV}, target=esxi(), summary_has="vmnic3 has 0"),
    Case("RW208", "analyze-no-nic-list-sum-all-pass", PASS,
         {"mlxconfig_query": MLX_CX4LX, "esxi_module_params": esxcfg_module("max_vfs=4,3")},
         summary_has="sum of ALL max_vfs entries"),
    Case("RW208", "analyze-no-nic-list-sum-all-fail", FAIL,
         {"mlxconfig_query": MLX_CX4LX, "esxi_module_params": esxcfg_module("max_vfs=4,4 ecn=1")},
         summary_has="no nic list"),
    Case("RW208", "analyze-corpus-two-cx4lx-ambiguous", FAIL,
         {"mlxconfig_query": MLX_CX4LX, "esxi_module_params": esxcfg_module("max_vfs=0,0,4,4"),
          "esxi_nic_list": NIC_DELL}, summary_has="cannot tell which entries are this card's"),
    Case("RW208", "doctor-no-nic-list-max-vfs-unset", FAIL,
         {"mlxconfig_query": MLX_15, "esxi_module_params": module_params_csv(pfctx="0x08")}, target=esxi(),
         summary_has="max_vfs is not set"),
    # RW209 pfc-on-roce-priority
    Case("RW209", "seed-csv", PASS, {"esxi_module_params": PARAMS_SEED}, target=esxi()),
    Case("RW209", "decimal-8", PASS, {"esxi_module_params": esxcfg_module("pfctx=8 pfcrx=8 max_vfs=0,0,8,7")}),
    Case("RW209", "trap-pfc-unset-csv", FAIL,
         {"esxi_module_params": module_params_csv(max_vfs="0,0,8,7", trust_state="2")}, target=esxi(),
         summary_has="pfctx is not set"),
    Case("RW209", "trap-pfc-unset-esxcfg", FAIL,
         {"esxi_module_params": esxcfg_module("max_vfs=0,0,8,7 trust_state=2")}),
    Case("RW209", "wrong-priority", FAIL, {"esxi_module_params": esxcfg_module("pfctx=0x10 pfcrx=0x08 ecn=1")},
         summary_has="priority 4, not 3"),
    # RW210 dscp-trust
    Case("RW210", "seed-csv", PASS, {"esxi_module_params": PARAMS_SEED}, target=esxi()),
    Case("RW210", "unset-default-pcp", FAIL,
         {"esxi_module_params": module_params_csv(max_vfs="0,0,8,7", pfcrx="0x08", pfctx="0x08")}, target=esxi(),
         summary_has="driver default: trust PCP"),
    Case("RW210", "trust-pcp", FAIL, {"esxi_module_params": esxcfg_module("trust_state=1 pfctx=0x08 pfcrx=0x08")}),
    Case("RW210", "policy-pcp", PASS, {"esxi_module_params": esxcfg_module("trust_state=1")},
         policy=Policy(trust="pcp")),
    # RW211 ecn-enabled (warn)
    Case("RW211", "seed-csv", PASS, {"esxi_module_params": PARAMS_SEED}, target=esxi()),
    # the nmlx5 default is not assumed (0 in the 4.17 manual, 1 per seed 000 on 4.21)
    Case("RW211", "unset-could-not-tell", WARN, {"esxi_module_params": esxcfg_module("max_vfs=0,0,8,7")},
         summary_has="could not tell whether ECN is on"),
    Case("RW211", "ecn-0", WARN, {"esxi_module_params": esxcfg_module(SEED_OPTIONS.replace("ecn=1", "ecn=0"))}),
    # RW212 global-pause-off
    Case("RW212", "csv-roce-vmnics-off", PASS, {"esxi_pause_params": PAUSE_SEED_OFF_CSV}, target=esxi()),
    Case("RW212", "corpus-esxi70-x710-off", PASS, {"esxi_pause_params": PAUSE_X710}),
    Case("RW212", "corpus-esxi80-cx5-default-on", FAIL, {"esxi_pause_params": PAUSE_CX5_DEFAULT},
         summary_has="global pause on (RX/TX)"),
    Case("RW212", "corpus-two-hosts", FAIL, {"esxi_pause_params": PAUSE_TWO_HOSTS}, summary_has="output 1/vmnic"),
    # PFC configured and no DCB state read: could not tell (nmlx5 disables global pause once PFC is operational)
    Case("RW212", "on-while-pfc-configured", WARN,
         {"esxi_pause_params": PAUSE_SEED_VMNIC3_ON_CSV, "esxi_module_params": PARAMS_SEED}, target=esxi(),
         summary_has="PFC configured (pfctx), which disables global pause once operational"),
    Case("RW212", "analyze-nmlx5-only", FAIL,
         {"esxi_pause_params": PAUSE_SEED_VMNIC3_ON_CSV, "esxi_nic_list": NIC_SEED_CSV}, summary_has="vmnic0"),
    # RW213 host-power-policy (warn)
    Case("RW213", "csv-high-performance", PASS, {"esxi_power_policy": POWER_HIGH_CSV}, target=esxi()),
    Case("RW213", "balanced", WARN, {"esxi_power_policy": POWER_BALANCED}, summary_has="Balanced"),
    # RW214 reboot-pending
    Case("RW214", "corpus-star-marker-is-not-pending", PASS, {"mlxconfig_query": MLX_SLINGSHOT},
         summary_has="nothing waits"),
    Case("RW214", "seed-after-reboot", PASS, {"mlxconfig_query": MLX_SEED_E, "esxi_host_summary": HOST_SUMMARY_OK},
         target=esxi()),
    Case("RW214", "mlxconfig-current-differs", FAIL, {"mlxconfig_query": MLX_PENDING}, target=esxi(),
         summary_has="SRIOV_EN current False(0) -> next boot True(1)"),
    Case("RW214", "corpus-vib-install-reboot-required", FAIL, {"esxi_vib_install": VIB_INSTALL},
         summary_has="MEL_bootbank_nmst_4.18.1.14"),
    Case("RW214", "host-summary-reboot-required", FAIL,
         {"mlxconfig_query": MLX_CX4LX, "esxi_host_summary": HOST_SUMMARY}, summary_has="rebootRequired"),
    Case("RW214", "corpus-next-boot-only-cannot-tell", SKIP, {"mlxconfig_query": MLX_CX4LX},
         summary_has="only the Next Boot column"),
    Case("RW214", "next-boot-only-but-summary-clean", PASS,
         {"mlxconfig_query": MLX_CX4LX, "esxi_host_summary": HOST_SUMMARY_OK}, summary_has="only the Next Boot"),
    # RW215 vfs-instantiated
    Case("RW215", "seed-8-and-7", PASS,
         {"esxi_sriovnic_list": SRIOV_LIST_CSV,
          "esxi_sriovnic_vf_list": {"vmnic2": vf_list_csv(8, 2, owners=1), "vmnic3": vf_list_csv(7, 10)}},
         target=esxi()),
    Case("RW215", "vmnic3-not-sriov", FAIL,
         {"esxi_sriovnic_list": SRIOV_LIST_VMNIC2_ONLY, "esxi_sriovnic_vf_list": {"vmnic2": vf_list_csv(8, 2)}},
         target=esxi(), summary_has="SR-IOV not active on vmnic3"),
    Case("RW215", "one-vf-instead-of-8", FAIL,
         {"esxi_sriovnic_list": SRIOV_LIST_CSV,
          "esxi_sriovnic_vf_list": {"vmnic2": vf_list_csv(1, 2), "vmnic3": vf_list_csv(7, 10)}},
         target=esxi(), summary_has="vmnic2: 1 VFs, inventory roce.vfs asks for 8"),
    Case("RW215", "analyze-single-vf-list-vs-max-vfs", PASS,
         {"esxi_sriovnic_list": SRIOV_LIST_VMNIC2_ONLY, "esxi_sriovnic_vf_list": vf_list_human("vmnic2", 8),
          "esxi_module_params": esxcfg_module("max_vfs=0,0,8,0"), "esxi_nic_list": NIC_SEED_CSV},
         summary_has="its max_vfs entry"),
    Case("RW215", "analyze-vmnic3-missing-by-max-vfs", FAIL,
         {"esxi_sriovnic_list": SRIOV_LIST_VMNIC2_ONLY, "esxi_sriovnic_vf_list": vf_list_human("vmnic2", 8),
          "esxi_module_params": esxcfg_module(SEED_OPTIONS), "esxi_nic_list": NIC_SEED_CSV},
         summary_has="SR-IOV not active on vmnic3"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case(case: Case):
    run_case(case)


def _case(case_id: str) -> Case:
    return next(c for c in CASES if c.id == case_id)


def _worst(case_id: str):
    findings = run_case(_case(case_id))
    return next(f for f in findings if f.status in (Status.FAIL, Status.WARN))


# ------------------------------------------------------------------------- exact fix strings


def test_rw201_fix_installs_each_missing_vib_from_the_datastore():
    assert _worst("RW201-corpus-dell-no-mft").fix == (
        "esxcli software vib install -v /vmfs/volumes/datastore1/mellanox/MEL_bootbank_mft_*.vib -f\n"
        "esxcli software vib install -v /vmfs/volumes/datastore1/mellanox/MEL_bootbank_nmst_*.vib -f\n"
        "# or, when the package is an offline bundle / component .zip: esxcli software vib install -d "
        "/vmfs/volumes/datastore1/mellanox/<the mft / nmst .zip>\n"
        "# then reboot the host (batch with the nmlx5 driver install, RW204)"
    )
    assert _worst("RW201-csv-nmst-missing").fix.splitlines()[0] == (
        "esxcli software vib install -v /vmfs/volumes/datastore1/mellanox/MEL_bootbank_nmst_*.vib -f"
    )


def test_rw202_fix_starts_mst():
    assert _worst("RW202-no-devices-mst-not-started").fix.splitlines()[0] == "/opt/mellanox/bin/mst start"


def test_rw203_fix_names_the_roce_pci():
    assert _worst("RW203-newer-available").fix.startswith("/opt/mellanox/bin/mlxfwmanager --online -u -d 3b:00.0 -f")
    shasta = run_case(_case("RW203-corpus-shasta-old-fw"))
    assert [f.status for f in shasta] == [WARN, WARN]
    assert shasta[1].fix.startswith("/opt/mellanox/bin/mlxfwmanager --online -u -d /dev/mst/mt4115_pciconf0 -f")


def test_rw204_names_the_old_inbox_version():
    f = _worst("RW204-inbox-vmw-older")
    assert f.observed == {"version": "4.19.16.10-1vmw.702.0.0.17867351", "vendor": "VMW"}
    assert f.fix.startswith("esxcli software vib install -d /vmfs/volumes/datastore1/mellanox/Mellanox-nmlx5_*.zip")


def test_rw205_fix_sets_only_the_wrong_port():
    f = _worst("RW205-p2-ib")
    assert f.fix == "/opt/mellanox/bin/mlxconfig -d mt4119_pciconf1 -y set LINK_TYPE_P2=2" + REBOOT
    assert f.subject == "mt4119_pciconf1"


def test_rw207_fix_uses_the_printed_device():
    f = _worst("RW207-corpus-slingshot-true")
    assert f.fix == "/opt/mellanox/bin/mlxconfig -d /dev/mst/mt4119_pciconf0 -y set ADVANCED_PCI_SETTINGS=0" + REBOOT


def test_rw208_trap_15_raises_num_of_vfs_to_16():
    f = _worst("RW208-trap-15-not-over-15")
    assert f.fix.splitlines()[0] == rw208_fix(16)
    assert f.observed["card_entries"] == {"vmnic2": 8, "vmnic3": 7} and f.observed["sum"] == 15


def test_rw208_says_which_rule_judged_and_plans_by_it():
    f = _worst("RW208-sum-rule-15-says-firmware-covers-every-port")
    assert f.observed["rule"] == "sum_plus_one" and f.observed["covers_every_port"] is True
    assert f.observed["card_max"] is None and "maximum was not read" in f.summary
    assert f.fix.splitlines()[0] == rw208_fix(16)
    per_port = _worst("RW208-per-port-7-below-vmnic2")
    assert per_port.observed["rule"] == "per_port" and per_port.observed["covers_every_port"] is False
    assert per_port.fix.splitlines()[0] == rw208_fix(8)  # the largest entry, not Σ+1
    case = next(c for c in CASES if c.id == "RW208-per-port-7-below-vmnic2")
    plan = planned_fix(CATALOG["RW208"], build_facts(case), case.policy)
    assert plan is not None and "NUM_OF_VFS=8" in plan.steps[0].command
    # under the default rule the same 7 is below both: Σ+1 is planned
    assert CATALOG["RW208"].evaluate(build_facts(case), Policy())[0].fix.splitlines()[0] == rw208_fix(16)


def test_rw208_trap_sriov_en_false_sets_sriov_en():
    f = _worst("RW208-trap-sriov-en-false")
    assert f.fix == "/opt/mellanox/bin/mlxconfig -d mt4119_pciconf1 -y set SRIOV_EN=1" + REBOOT


def test_rw208_inventory_mismatch_writes_the_full_string():
    f = _worst("RW208-max-vfs-differs-from-inventory")
    # csv lists the params by name: max_vfs, pfctx; max_vfs takes the inventory's counts and, since
    # `-p` replaces the whole string, the other policy keys are put right in the same string
    assert f.fix == PARAMS_SET.format("max_vfs=0,0,8,7 pfctx=0x08 pfcrx=0x08 trust_state=2 ecn=1")
    assert f.observed == {"vmnic3": 0} and f.expected == {"vmnic2": 8, "vmnic3": 7}


def test_rw211_unset_plans_ecn_1_explicitly_in_the_full_string():
    case = next(c for c in CASES if c.id == "RW211-unset-could-not-tell")
    f = _worst(case.id)
    assert f.observed is None and f.expected == "1, set explicitly"
    assert "ecn=1" in f.fix and "max_vfs=0,0,8,7" in f.fix
    assert planned_fix(CATALOG["RW211"], build_facts(case), case.policy) is not None


def test_rw209_trap_fix_keeps_max_vfs_and_trust_state():
    for case_id in ("RW209-trap-pfc-unset-csv", "RW209-trap-pfc-unset-esxcfg"):
        f = _worst(case_id)
        # ecn too: unset is not assumed to be on (RW211), so the one desired string sets it
        assert f.fix == PARAMS_SET.format("max_vfs=0,0,8,7 trust_state=2 pfctx=0x08 pfcrx=0x08 ecn=1"), case_id
        assert f.details["params_before"] == "max_vfs=0,0,8,7 trust_state=2"


def test_rw209_fix_writes_every_policy_key_so_fixes_cannot_undo_each_other():
    f = _worst("RW209-wrong-priority")
    # trust_state is RW210's, but a string without it would undo RW210's fix when run after it
    assert f.fix == PARAMS_SET.format("pfctx=0x08 pfcrx=0x08 ecn=1 trust_state=2")
    rw210 = CATALOG["RW210"].evaluate(build_facts(next(c for c in CASES if c.id == "RW209-wrong-priority")), Policy())
    assert rw210[0].fix == f.fix  # the two checks' fixes write the same string


def test_rw210_fix_adds_trust_state_to_the_full_string():
    assert _worst("RW210-unset-default-pcp").fix == PARAMS_SET.format(
        "max_vfs=0,0,8,7 pfcrx=0x08 pfctx=0x08 trust_state=2 ecn=1")
    assert _worst("RW210-trust-pcp").fix == PARAMS_SET.format("trust_state=2 pfctx=0x08 pfcrx=0x08 ecn=1")


def test_rw211_fix_keeps_the_seed_string():
    assert _worst("RW211-ecn-0").fix == PARAMS_SET.format(SEED_OPTIONS)


def test_rw212_fix_per_vmnic():
    f = _worst("RW212-on-while-pfc-configured")
    assert f.subject == "vmnic3" and f.status is WARN
    assert f.fix.startswith("esxcli network nic dcb status get -n vmnic3")  # read the operational state first
    two = run_case(_case("RW212-corpus-two-hosts"))
    assert {f.subject: f.status for f in two} == {
        "output 1/vmnic0": FAIL, "output 1/vmnic1": FAIL,
        "esxi2/vmnic0": PASS, "esxi2/vmnic1": PASS, "esxi2/vmnic2": PASS, "esxi2/vmnic3": PASS,
    }
    # analyze with a nic list: every nmlx5 vmnic is judged, vmnic0/1 (pause on) fail
    statuses = {f.subject: f.status for f in run_case(_case("RW212-analyze-nmlx5-only"))}
    assert statuses == {"vmnic0": FAIL, "vmnic1": FAIL, "vmnic2": PASS, "vmnic3": FAIL}


def test_rw213_fix_is_words_without_a_vendor_source():
    # no VMware document gives `esxcli system settings advanced set -o /Power/CpuPolicy` (issue 12 item 2):
    # the fix says the documented client path in words and never prints the esxcli write
    fix = _worst("RW213-balanced").fix
    assert fix.startswith("set the host's CPU power policy to High Performance: vSphere Client > host > Configure")
    assert "esxcli" not in fix and "RW307" in fix


def test_rw214_lists_every_pending_param_with_its_reboot_kind():
    f = _worst("RW214-mlxconfig-current-differs")
    assert [(i["item"], i["reboot"]) for i in f.observed] == [
        ("mt4119_pciconf1: NUM_OF_VFS current 0 -> next boot 16", "host"),
        ("mt4119_pciconf1: SRIOV_EN current False(0) -> next boot True(1)", "host"),
    ]
    # maintenance mode is VMware's documented esxcli line; the reboot is words (no VMware page for the esxcli form)
    assert f.fix.startswith("esxcli system maintenanceMode set --enable true  # then reboot the host (vSphere Client")
    assert "shutdown reboot" not in f.fix


def test_rw215_expected_from_max_vfs_in_analyze():
    findings = run_case(_case("RW215-analyze-vmnic3-missing-by-max-vfs"))
    by = {f.subject: (f.status, f.expected) for f in findings}
    assert by == {"vmnic2": (PASS, 8), "vmnic3": (FAIL, 7)}  # vmnic0/1: max_vfs 0, not candidates
