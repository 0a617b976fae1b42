"""ESXi parsers (esxcli human tables and --formatter=csv, esxcfg-*, vim-cmd) on real outputs.

Corpus samples are real captures (tests/data/corpus).  Fixtures marked HAND-WRITTEN were written from
knowledge of ESXi 7/8 output formats for kinds the corpus has no sample of (not captured).
"""

from __future__ import annotations

import pytest

from roce_wizard.parsers import esxi, firmware
from roce_wizard.parsers.base import ParseError
from tests.conftest import corpus_files, corpus_text

SNIFFERS = {**firmware.PARSERS, **esxi.PARSERS}


def assert_sniffed_as(kind: str, text: str) -> None:
    scores = {k: p.sniff(text) for k, p in SNIFFERS.items()}
    mine = scores.pop(kind)
    assert mine > 0, f"{kind} sniffer gave 0"
    rivals = {k: v for k, v in scores.items() if v >= mine}
    assert not rivals, f"{kind} scored {mine} but {rivals} scored as high"


def parse(kind: str, text: str) -> dict:
    return esxi.PARSERS[kind].parse(text)


def by_name(items: list[dict], key: str = "name") -> dict[str, dict]:
    return {i[key]: i for i in items}


# ------------------------------------------------------------------------------ esxi_nic_list


@pytest.mark.parametrize("rel", corpus_files("esxi_nic_list"))
def test_nic_list_sniffed(rel):
    assert_sniffed_as("esxi_nic_list", corpus_text(rel))


def test_nic_list_dell_mtu_mismatch_and_vusb():
    f = parse("esxi_nic_list", corpus_text("esxi_nic_list/dell-asm-spec-cx4lx-mtu-mismatch-vusb.txt"))
    nics = by_name(f["nics"])
    assert list(nics) == [f"vmnic{i}" for i in range(8)] + ["vusb0"]
    assert nics["vmnic4"]["mtu"] == 1500 and nics["vmnic5"]["mtu"] == 9000
    assert nics["vmnic6"]["mtu"] == 1500 and nics["vmnic7"]["mtu"] == 9000
    assert nics["vmnic4"] == {
        "name": "vmnic4", "pci": "0000:3b:00.0", "driver": "nmlx5_core", "admin": "Up", "link": "Up",
        "speed_mbps": 25000, "duplex": "Full", "mac": "ec:0d:9a:7f:3a:96", "mtu": 1500,
        "description": "Mellanox Technologies MT27710 Family [ConnectX-4 Lx]",
    }
    # right-aligned 0 speed of a down port, left-aligned text around it
    assert nics["vmnic2"]["link"] == "Down" and nics["vmnic2"]["speed_mbps"] == 0
    assert nics["vmnic2"]["duplex"] == "Half" and nics["vmnic2"]["driver"] == "igbn"
    assert nics["vmnic0"]["description"] == "Intel(R) Ethernet Controller X710 for 10GbE SFP+"
    assert nics["vusb0"]["pci"] == "Pseudo" and nics["vusb0"]["speed_mbps"] == 100
    assert nics["vusb0"]["description"] == "DellTM iDRAC Virtual NIC USB Device"


# HAND-WRITTEN csv form (`esxcli --formatter=csv network nic list`); a description with a comma.
NIC_LIST_CSV = """[root@esx01:~] esxcli --formatter=csv network nic list
Name,PCIDevice,Driver,AdminStatus,LinkStatus,Speed,Duplex,MACAddress,MTU,Description,
vmnic0,0000:18:00.0,i40en,Up,Up,10000,Full,24:6e:96:5c:d8:1c,1500,"Intel(R) Ethernet Controller X710 for 10GbE SFP+",
vmnic2,0000:3b:00.0,nmlx5_core,Up,Up,100000,Full,b8:59:9f:c4:12:a0,9000,"Mellanox Technologies MT27800 Family [ConnectX-5], port 1",
vmnic3,0000:3b:00.1,nmlx5_core,Up,Down,0,Half,b8:59:9f:c4:12:a1,1500,Mellanox Technologies MT27800 Family [ConnectX-5],
"""

# HAND-WRITTEN: the same fields in another order (read by name, never by position).
NIC_LIST_CSV_SORTED = """AdminStatus,Description,Driver,Duplex,LinkStatus,MACAddress,MTU,Name,PCIDevice,Speed,
Up,Mellanox Technologies MT27800 Family [ConnectX-5],nmlx5_core,Full,Up,b8:59:9f:c4:12:a0,9000,vmnic2,0000:3b:00.0,100000,
"""


def test_nic_list_csv():
    assert_sniffed_as("esxi_nic_list", NIC_LIST_CSV)
    nics = by_name(parse("esxi_nic_list", NIC_LIST_CSV)["nics"])
    assert set(nics) == {"vmnic0", "vmnic2", "vmnic3"}
    assert nics["vmnic2"]["description"] == "Mellanox Technologies MT27800 Family [ConnectX-5], port 1"
    assert nics["vmnic2"]["speed_mbps"] == 100000 and nics["vmnic2"]["mtu"] == 9000
    assert nics["vmnic3"]["link"] == "Down" and nics["vmnic3"]["pci"] == "0000:3b:00.1"
    assert_sniffed_as("esxi_nic_list", NIC_LIST_CSV_SORTED)
    (n,) = parse("esxi_nic_list", NIC_LIST_CSV_SORTED)["nics"]
    assert (n["name"], n["pci"], n["driver"], n["mtu"], n["speed_mbps"], n["admin"]) == (
        "vmnic2", "0000:3b:00.0", "nmlx5_core", 9000, 100000, "Up")


# ------------------------------------------------------------------------------ esxi_esxcfg_nics


@pytest.mark.parametrize("rel", corpus_files("esxi_esxcfg_nics"))
def test_esxcfg_nics_sniffed(rel):
    assert_sniffed_as("esxi_esxcfg_nics", corpus_text(rel))


def test_esxcfg_nics_hpe_cx5():
    f = parse("esxi_esxcfg_nics", corpus_text("esxi_esxcfg_nics/hpe-baremetal-esxi703-cx5.txt"))
    assert f["nics"] == [
        {"name": "vmnic0", "pci": "0000:0f:00.0", "driver": "nmlx5_core", "admin": None, "link": "Up",
         "speed_mbps": 25000, "duplex": "Full", "mac": "88:e9:a4:6b:b8:54", "mtu": 1500,
         "description": "Mellanox Technologies MT27800 Family [ConnectX-5]"},
        {"name": "vmnic1", "pci": "0000:0f:00.1", "driver": "nmlx5_core", "admin": None, "link": "Up",
         "speed_mbps": 25000, "duplex": "Full", "mac": "88:e9:a4:6b:b8:55", "mtu": 1500,
         "description": "Mellanox Technologies MT27800 Family [ConnectX-5]"},
    ]


# ------------------------------------------------------------------------------ esxi_vib_list


@pytest.mark.parametrize("rel", corpus_files("esxi_vib_list"))
def test_vib_list_sniffed(rel):
    assert_sniffed_as("esxi_vib_list", corpus_text(rel))


def test_vib_list_dell_full_list_async_nmlx5():
    f = parse("esxi_vib_list", corpus_text("esxi_vib_list/dell-esxi702-full-list-mel-async-nmlx5.txt"))
    vibs = by_name(f["vibs"])
    assert len(f["vibs"]) == 83  # every row under the dash line
    assert vibs["nmlx5-core"] == {"name": "nmlx5-core", "version": "4.19.70.1-1OEM.700.1.0.15525992",
                                  "vendor": "MEL", "acceptance": "VMwareCertified",
                                  "install_date": "2021-06-15"}
    assert vibs["nmlx5-rdma"]["vendor"] == "MEL"
    assert vibs["nmlx4-core"]["version"] == "3.19.16.8-2vmw.702.0.0.17867351"
    assert vibs["qlnativefc"]["vendor"] == "Marvell"
    assert vibs["dell-configuration-vib"]["acceptance"] == "PartnerSupported"
    assert vibs["tools-light"]["install_date"] == "2022-09-02"
    assert vibs["esx-dvfilter-generic-fastpath"]["version"] == "7.0.2-0.0.17867351"
    assert "mft" not in vibs and "nmst" not in vibs


def test_vib_list_excerpt_header_leading_space():
    f = parse("esxi_vib_list", corpus_text("esxi_vib_list/mft-nmst-mel-partnersupported-excerpt.txt"))
    assert f["vibs"] == [
        {"name": "mft", "version": "4.18.1.14-0", "vendor": "MEL", "acceptance": "PartnerSupported",
         "install_date": "2022-03-13"},
        {"name": "nmst", "version": "4.18.1.14-1OEM.700.1.0.15843807", "vendor": "MEL",
         "acceptance": "PartnerSupported", "install_date": "2022-03-13"},
    ]


# HAND-WRITTEN: ESXi 8 adds a Platforms column.
VIB_LIST_ESXI8 = """[root@esx01:~] esxcli software vib list | grep -E "Name|---|MEL|esx-base"
Name        Version                          Vendor  Acceptance Level  Install Date  Platforms
----------  -------------------------------  ------  ----------------  ------------  ----------------
nmlx5-core  4.23.0.66-1OEM.800.1.0.20613240  MEL     VMwareCertified   2023-09-01    host
nmlx5-rdma  4.23.0.66-1OEM.800.1.0.20613240  MEL     VMwareCertified   2023-09-01    host
mft         4.25.0.62-0                      MEL     PartnerSupported  2023-09-01    host
nmst        4.25.0.62-1OEM.800.1.0.20613240  MEL     PartnerSupported  2023-09-01    host
esx-base    8.0.1-0.25.21813344              VMware  VMwareCertified   2023-08-30    host,embeddedEsx
"""

# HAND-WRITTEN csv form (ESXi 8 field set, alphabetical as the csv formatter prints it).
VIB_LIST_CSV = """AcceptanceLevel,CreationDate,ID,InstallDate,Name,Platforms,Status,Vendor,Version,
PartnerSupported,2023-07-21,MEL_bootbank_mft_4.25.0.62-0,2023-09-01,mft,host,,MEL,4.25.0.62-0,
VMwareCertified,2023-08-30,VMware_bootbank_esx-base_8.0.1-0.25.21813344,2023-08-30,esx-base,"host,embeddedEsx",,VMware,8.0.1-0.25.21813344,
"""


def test_vib_list_esxi8_platforms_and_csv():
    assert_sniffed_as("esxi_vib_list", VIB_LIST_ESXI8)
    vibs = by_name(parse("esxi_vib_list", VIB_LIST_ESXI8)["vibs"])
    assert vibs["nmst"]["version"] == "4.25.0.62-1OEM.800.1.0.20613240"
    assert vibs["esx-base"]["platforms"] == "host,embeddedEsx"
    assert vibs["mft"]["acceptance"] == "PartnerSupported"
    assert_sniffed_as("esxi_vib_list", VIB_LIST_CSV)
    vibs = by_name(parse("esxi_vib_list", VIB_LIST_CSV)["vibs"])
    assert vibs["mft"] == {"name": "mft", "version": "4.25.0.62-0", "vendor": "MEL",
                           "acceptance": "PartnerSupported", "install_date": "2023-09-01",
                           "platforms": "host"}
    assert vibs["esx-base"]["platforms"] == "host,embeddedEsx"


# ------------------------------------------------------------------------------ esxi_vib_install


@pytest.mark.parametrize("rel", corpus_files("esxi_vib_install"))
def test_vib_install_sniffed(rel):
    assert_sniffed_as("esxi_vib_install", corpus_text(rel))


def test_vib_install_nmst_reboot_required():
    f = parse("esxi_vib_install", corpus_text("esxi_vib_install/nmst-4-18-install-result-reboot-required.txt"))
    assert f["reboot_required"] is True
    assert f["message"] == ("The update completed successfully, but the system needs to be rebooted "
                            "for the changes to be effective.")
    assert f["vibs_installed"] == ["MEL_bootbank_nmst_4.18.1.14-1OEM.700.1.0.15843807"]
    assert f["vibs_removed"] == [] and f["vibs_skipped"] == []
    assert f["error"] is None


# HAND-WRITTEN: a driver bundle replacing the inbox VIBs; the csv form; a dependency error.
VIB_INSTALL_DRIVER = """[root@esx01:~] esxcli software vib install -d /vmfs/volumes/datastore1/Mellanox-nmlx5_4.21.71.101-1OEM.702.0.0.17473468_18150468-package.zip
Installation Result
   Message: The update completed successfully, but the system needs to be rebooted for the changes to be effective.
   Reboot Required: true
   VIBs Installed: MEL_bootbank_nmlx5-core_4.21.71.101-1OEM.702.0.0.17473468, MEL_bootbank_nmlx5-rdma_4.21.71.101-1OEM.702.0.0.17473468
   VIBs Removed: VMW_bootbank_nmlx5-core_4.19.16.10-1vmw.702.0.0.17867351, VMW_bootbank_nmlx5-rdma_4.19.16.10-1vmw.702.0.0.17867351
   VIBs Skipped:
"""

VIB_INSTALL_CSV = """Message,RebootRequired,VIBsInstalled,VIBsRemoved,VIBsSkipped,
"Operation finished successfully.",false,,,MEL_bootbank_mft_4.18.1.14-0,
"""

VIB_INSTALL_ERROR = """[root@esx01:~] esxcli software vib install -v /tmp/MEL_bootbank_nmlx5-rdma_4.23.0.66-1OEM.800.1.0.20613240.vib
[DependencyError]
 VIB MEL_bootbank_nmlx5-rdma_4.23.0.66-1OEM.800.1.0.20613240 requires nmlx5-core >= 4.23.0.66, but the requirement cannot be satisfied within the ImageProfile.
 Please refer to the log file for more details.
"""


def test_vib_install_driver_csv_and_error():
    assert_sniffed_as("esxi_vib_install", VIB_INSTALL_DRIVER)
    f = parse("esxi_vib_install", VIB_INSTALL_DRIVER)
    assert f["reboot_required"] is True
    assert f["vibs_installed"] == ["MEL_bootbank_nmlx5-core_4.21.71.101-1OEM.702.0.0.17473468",
                                   "MEL_bootbank_nmlx5-rdma_4.21.71.101-1OEM.702.0.0.17473468"]
    assert len(f["vibs_removed"]) == 2 and f["vibs_skipped"] == []
    assert_sniffed_as("esxi_vib_install", VIB_INSTALL_CSV)
    g = parse("esxi_vib_install", VIB_INSTALL_CSV)
    assert g["reboot_required"] is False and g["message"] == "Operation finished successfully."
    assert g["vibs_installed"] == [] and g["vibs_skipped"] == ["MEL_bootbank_mft_4.18.1.14-0"]
    assert_sniffed_as("esxi_vib_install", VIB_INSTALL_ERROR)
    e = parse("esxi_vib_install", VIB_INSTALL_ERROR)
    assert e["error"] == "DependencyError" and e["reboot_required"] is None
    assert "requires nmlx5-core >= 4.23.0.66" in e["message"]
    assert e["vibs_installed"] == []


# ------------------------------------------------------------------------------ esxi_module_params

# HAND-WRITTEN: `esxcli system module parameters list -m nmlx5_core` after the seed's set.
MODULE_PARAMS_TABLE = """[root@esx01:~] esxcli system module parameters list -m nmlx5_core
Name                 Type          Value    Description
-------------------  ------------  -------  --------------------------------------------------------------------------------------------------------------
DRSS                 int                    Number of RSS queues to use for the default queue. Valid values: [0-16]
RSS                  int                    Number of RSS queues to use for the NetQ. Valid values: [0-16]
ecn                  int           1        Enable the ECN support. Values: 0 - disabled, 1 - enabled (default)
enable_nmlx_debug    int                    Enable debug prints for the core module. Values: 0 - disabled (default), 1 - enabled
max_vfs              array of int  0,0,8,7  Number of PCI VFs to initialize. Values: 0 - disabled (default), N - number of VFs per port
mst_recovery         int                    Enable recovery mode (only NMST module is loaded). Values: 0 - disabled (default), 1 - enabled
pfcrx                int           0x08     Priority based Flow Control policy on RX. Values: 0-255 bitmask, 0x00 - disabled (default)
pfctx                int           0x08     Priority based Flow Control policy on TX. Values: 0-255 bitmask, 0x00 - disabled (default)
supported_num_ports  int                    Sets the maximum supported ports. Values: 1-8, 4 (default)
trust_state          int           2        Port policy to calculate the switch priority and packet color. Values: 1 - TRUST_PCP (default), 2 - TRUST_DSCP
"""

# HAND-WRITTEN: a fresh host, nothing set (the Value column is all blank and only 5 wide).
MODULE_PARAMS_EMPTY = """Name         Type          Value  Description
-----------  ------------  -----  --------------------------------------------------------------------------------------------------------------
DRSS         int                  Number of RSS queues to use for the default queue. Valid values: [0-16]
ecn          int                  Enable the ECN support. Values: 0 - disabled, 1 - enabled (default)
max_vfs      array of int         Number of PCI VFs to initialize. Values: 0 - disabled (default), N - number of VFs per port
pfcrx        int                  Priority based Flow Control policy on RX. Values: 0-255 bitmask, 0x00 - disabled (default)
pfctx        int                  Priority based Flow Control policy on TX. Values: 0-255 bitmask, 0x00 - disabled (default)
trust_state  int                  Port policy to calculate the switch priority and packet color. Values: 1 - TRUST_PCP (default), 2 - TRUST_DSCP
"""

# HAND-WRITTEN csv form: descriptions with commas are quoted, empty Value is an empty field.
MODULE_PARAMS_CSV = """[root@esx01:~] esxcli --formatter=csv system module parameters list -m nmlx5_core
Description,Name,Type,Value,
"Number of RSS queues to use for the default queue. Valid values: [0-16]",DRSS,int,,
"Enable the ECN support. Values: 0 - disabled, 1 - enabled (default)",ecn,int,1,
"Number of PCI VFs to initialize. Values: 0 - disabled (default), N - number of VFs per port",max_vfs,array of int,"0,0,8,7",
"Priority based Flow Control policy on TX. Values: 0-255 bitmask, 0x00 - disabled (default)",pfctx,int,0x08,
"Port policy to calculate the switch priority and packet color. Values: 1 - TRUST_PCP (default), 2 - TRUST_DSCP",trust_state,int,,
"""

# The format given in the brief for `esxcfg-module -g nmlx5_core` (values from seed 000).
ESXCFG_MODULE_G = """[root@esx01:~] esxcfg-module -g nmlx5_core
nmlx5_core enabled = 1 options = 'pfctx=0x08 pfcrx=0x08 trust_state=2 max_vfs=0,0,8,7 ecn=1'
"""


def test_module_params_table_only_set_values():
    assert_sniffed_as("esxi_module_params", MODULE_PARAMS_TABLE)
    f = parse("esxi_module_params", MODULE_PARAMS_TABLE)
    assert f["module"] == "nmlx5_core"
    assert f["params"] == {"ecn": "1", "max_vfs": "0,0,8,7", "pfcrx": "0x08", "pfctx": "0x08", "trust_state": "2"}
    assert "options_string" not in f
    assert_sniffed_as("esxi_module_params", MODULE_PARAMS_EMPTY)
    g = parse("esxi_module_params", MODULE_PARAMS_EMPTY)
    assert g["params"] == {} and g["module"] is None


def test_module_params_csv():
    assert_sniffed_as("esxi_module_params", MODULE_PARAMS_CSV)
    f = parse("esxi_module_params", MODULE_PARAMS_CSV)
    assert f["module"] == "nmlx5_core"
    assert f["params"] == {"ecn": "1", "max_vfs": "0,0,8,7", "pfctx": "0x08"}


def test_esxcfg_module_g_options_string():
    assert_sniffed_as("esxi_module_params", ESXCFG_MODULE_G)
    f = parse("esxi_module_params", ESXCFG_MODULE_G)
    assert f["module"] == "nmlx5_core"
    assert f["options_string"] == "pfctx=0x08 pfcrx=0x08 trust_state=2 max_vfs=0,0,8,7 ecn=1"
    assert f["params"] == {"pfctx": "0x08", "pfcrx": "0x08", "trust_state": "2", "max_vfs": "0,0,8,7", "ecn": "1"}
    assert list(f["params"]) == ["pfctx", "pfcrx", "trust_state", "max_vfs", "ecn"]
    assert f["enabled"] is True
    empty = parse("esxi_module_params", "nmlx5_core enabled = 1 options = ''")
    assert empty["params"] == {} and empty["options_string"] == ""


def test_options_string_helpers_merge_safely():
    current = esxi.parse_options_string("pfctx=0x08 pfcrx=0x08 trust_state=2 max_vfs=0,0,8,7 ecn=1")
    assert list(current.items()) == [("pfctx", "0x08"), ("pfcrx", "0x08"), ("trust_state", "2"),
                                     ("max_vfs", "0,0,8,7"), ("ecn", "1")]
    merged = {**current, "trust_state": "2", "pfctx": "0x10", "DRSS": "4"}
    assert esxi.format_options_string(merged) == "pfctx=0x10 pfcrx=0x08 trust_state=2 max_vfs=0,0,8,7 ecn=1 DRSS=4"
    assert esxi.parse_options_string("") == {}
    assert esxi.parse_options_string("'a=1 b=2'") == {"a": "1", "b": "2"}
    s = "pfctx=0x08 flag max_vfs=0,0,8,7"
    assert esxi.format_options_string(esxi.parse_options_string(s)) == s


# ------------------------------------------------------------------------------ esxi_pause_params


@pytest.mark.parametrize("rel", corpus_files("esxi_pauseparams"))
def test_pause_params_sniffed(rel):
    assert_sniffed_as("esxi_pause_params", corpus_text(rel))


def test_pause_params_two_hosts():
    f = parse("esxi_pause_params", corpus_text("esxi_pauseparams/esxi80-cx5-vs-esxi70-x710.txt"))
    first = [n for n in f["nics"] if n["block"] == 0]
    second = [n for n in f["nics"] if n["block"] == 1]
    assert [n["name"] for n in first] == ["vmnic0", "vmnic1"]
    assert [n["name"] for n in second] == ["vmnic0", "vmnic1", "vmnic2", "vmnic3"]
    assert all(n["pause_rx"] is True and n["pause_tx"] is True for n in first)  # ConnectX-5 default
    assert all(n["pause_rx"] is False and n["pause_tx"] is False for n in second)
    assert all(n["supported"] is True and n["autoneg"] is False for n in f["nics"])
    assert {n["host"] for n in first} == {None} and {n["host"] for n in second} == {"esxi2"}


# HAND-WRITTEN csv form (fields alphabetical).
PAUSE_PARAMS_CSV = """AutoNegotiation,AutoNegotiationResolutionAvail,NIC,PauseParamsSupported,PauseRX,PauseTX,RXAutoNegotiationResolution,TXAutoNegotiationResolution,
false,false,vmnic2,true,false,false,false,false,
false,false,vmnic3,true,true,false,false,false,
"""


def test_pause_params_csv():
    assert_sniffed_as("esxi_pause_params", PAUSE_PARAMS_CSV)
    nics = by_name(parse("esxi_pause_params", PAUSE_PARAMS_CSV)["nics"])
    assert nics["vmnic2"]["pause_rx"] is False and nics["vmnic2"]["pause_tx"] is False
    assert nics["vmnic3"]["pause_rx"] is True and nics["vmnic3"]["pause_tx"] is False
    assert nics["vmnic3"]["autoneg"] is False and nics["vmnic3"]["supported"] is True


# ------------------------------------------------------------------------------ esxi_power_policy

# HAND-WRITTEN: ESXi 7 `esxcli system settings advanced list -o /Power/CpuPolicy`.
POWER_POLICY = """[root@esx01:~] esxcli system settings advanced list -o /Power/CpuPolicy
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

POWER_POLICY_CSV = '''DefaultIntValue,DefaultStringValue,Description,HostSpecific,Impact,IntValue,MaxValue,MinValue,Path,StringValue,Type,ValidCharacters,
0,Balanced,"CPU power management policy: ""High Performance"", ""Balanced"", ""Low Power"", ""Custom""",false,none,0,0,0,/Power/CpuPolicy,High Performance,string,*,
'''


def test_power_policy_human_and_csv():
    assert_sniffed_as("esxi_power_policy", POWER_POLICY)
    f = parse("esxi_power_policy", POWER_POLICY)
    assert (f["path"], f["value"], f["default"], f["type"]) == ("/Power/CpuPolicy", "Balanced", "Balanced", "string")
    assert f["description"].startswith('CPU power management policy: "High Performance"')
    assert_sniffed_as("esxi_power_policy", POWER_POLICY_CSV)
    g = parse("esxi_power_policy", POWER_POLICY_CSV)
    assert (g["path"], g["value"], g["default"]) == ("/Power/CpuPolicy", "High Performance", "Balanced")
    assert g["description"] == 'CPU power management policy: "High Performance", "Balanced", "Low Power", "Custom"'
    # several options pasted: the CPU policy's block is the one read
    other = "   Path: /Net/TcpipHeapSize\n   Type: integer\n   Int Value: 32\n   Default Int Value: 0\n"
    h = parse("esxi_power_policy", other + POWER_POLICY)
    assert (h["path"], h["value"]) == ("/Power/CpuPolicy", "Balanced")
    k = parse("esxi_power_policy", other)
    assert (k["path"], k["type"], k["value"], k["default"]) == ("/Net/TcpipHeapSize", "integer", 32, 0)


# ------------------------------------------------------------------------------ esxi_uptime

# HAND-WRITTEN: `esxcli system stats uptime get` prints microseconds since boot.
UPTIME = """[root@esx01:~] esxcli system stats uptime get
1127012875427
"""


def test_uptime():
    assert_sniffed_as("esxi_uptime", UPTIME)
    assert parse("esxi_uptime", UPTIME) == {"uptime_us": 1127012875427}
    assert esxi.PARSERS["esxi_uptime"].sniff("1127012875427") == 1
    assert firmware.PARSERS["sriov_numvfs"].sniff("1127012875427") == 0
    assert_sniffed_as("esxi_uptime", "1127012875427\n")


# ------------------------------------------------------------------------------ esxi_host_summary

# HAND-WRITTEN: `vim-cmd hostsvc/hostsummary` (abridged vmodl dump, ESXi 7.0U3).
HOST_SUMMARY = """[root@esx01:~] vim-cmd hostsvc/hostsummary
(vim.host.Summary) {
   host = 'vim.HostSystem:ha-host',
   hardware = (vim.host.Summary.HardwareSummary) {
      vendor = "Dell Inc.",
      model = "PowerEdge R740",
      uuid = "4c4c4544-0052-3910-8047-b4c04f4e3732",
      otherIdentifyingInfo = (vim.host.SystemIdentificationInfo) [
         (vim.host.SystemIdentificationInfo) {
            identifierValue = "ABCD123",
            identifierType = (vim.ElementDescription) {
               label = "Service tag",
               summary = "Service tag of the system",
               key = "ServiceTag"
            }
         }
      ],
      memorySize = 412202483712,
      cpuModel = "Intel(R) Xeon(R) Gold 6240 CPU @ 2.60GHz",
      cpuMhz = 2594,
      numCpuPkgs = 2,
      numCpuCores = 36,
      numCpuThreads = 72,
      numNics = 6,
      numHBAs = 4
   },
   runtime = (vim.host.RuntimeInfo) {
      connectionState = "connected",
      powerState = "poweredOn",
      standbyMode = <unset>,
      inMaintenanceMode = false,
      inQuarantineMode = <unset>,
      bootTime = "2023-03-14T09:12:47.231526Z",
      healthSystemRuntime = (vim.host.HealthStatusSystem.Runtime) null,
   },
   rebootRequired = true,
   quickStats = (vim.host.Summary.QuickStats) {
      overallCpuUsage = 1432,
      overallMemoryUsage = 52012,
      uptime = 1127012
   },
   overallStatus = "green",
   config = (vim.host.Summary.ConfigSummary) {
      name = "esx01.lab.local",
      port = 443,
      product = (vim.AboutInfo) {
         name = "VMware ESXi",
         fullName = "VMware ESXi 7.0.3 build-21930508",
         vendor = "VMware, Inc.",
         version = "7.0.3",
         build = "21930508"
      }
   }
}
"""


def test_host_summary():
    assert_sniffed_as("esxi_host_summary", HOST_SUMMARY)
    f = parse("esxi_host_summary", HOST_SUMMARY)
    assert f["reboot_required"] is True
    assert f["boot_time"] == "2023-03-14T09:12:47.231526Z"
    assert f["uuid"] == "4c4c4544-0052-3910-8047-b4c04f4e3732"
    assert f["in_maintenance_mode"] is False
    assert f["vendor"] == "Dell Inc." and f["model"] == "PowerEdge R740"
    assert f["product"] == "VMware ESXi 7.0.3 build-21930508"
    g = parse("esxi_host_summary", HOST_SUMMARY.replace("rebootRequired = true", "rebootRequired = false"))
    assert g["reboot_required"] is False


# ------------------------------------------------------------------------------ esxi_cpu_global

# HAND-WRITTEN: `esxcli hardware cpu global get` (ESXi 7) and its csv form.
CPU_GLOBAL = """[root@esx01:~] esxcli hardware cpu global get
   CPU Packages: 2
   CPU Cores: 36
   CPU Threads: 72
   Hyperthreading Active: true
   Hyperthreading Supported: true
   Hyperthreading Enabled: true
   HV Support: 3
   HV Replay Capable: false
   HV Replay Disabled Reasons: HV Replay is not supported on this CPU
"""

CPU_GLOBAL_CSV = """CPUCores,CPUPackages,CPUThreads,HVReplayCapable,HVReplayDisabledReasons,HVSupport,HyperthreadingActive,HyperthreadingEnabled,HyperthreadingSupported,
36,2,72,false,"HV Replay not supported, nested",2,true,true,true,
"""


def test_cpu_global_human_and_csv():
    assert_sniffed_as("esxi_cpu_global", CPU_GLOBAL)
    f = parse("esxi_cpu_global", CPU_GLOBAL)
    assert f == {
        "cpu_packages": 2, "cpu_cores": 36, "cpu_threads": 72, "hyperthreading_active": True,
        "hyperthreading_supported": True, "hyperthreading_enabled": True, "hv_support": 3,
        "hv_replay_capable": False, "hv_replay_disabled_reasons": "HV Replay is not supported on this CPU",
    }
    assert_sniffed_as("esxi_cpu_global", CPU_GLOBAL_CSV)
    g = parse("esxi_cpu_global", CPU_GLOBAL_CSV)
    assert g["hv_support"] == 2 and g["cpu_cores"] == 36 and g["hyperthreading_active"] is True
    assert g["hv_replay_disabled_reasons"] == "HV Replay not supported, nested"


# ------------------------------------------------------------------------------ esxi_sriovnic_list

# HAND-WRITTEN: `esxcli network sriovnic list` (Link, not Link Status; no Admin Status).
SRIOVNIC_LIST = """[root@esx01:~] esxcli network sriovnic list
Name    PCI Device    Driver      Link  Speed   Duplex  MAC Address        MTU   Description
------  ------------  ----------  ----  ------  ------  -----------------  ----  -------------------------------------------------
vmnic2  0000:3b:00.0  nmlx5_core  Up    100000  Full    b8:59:9f:c4:12:a0  9000  Mellanox Technologies MT27800 Family [ConnectX-5]
vmnic3  0000:3b:00.1  nmlx5_core  Down       0  Half    b8:59:9f:c4:12:a1  9000  Mellanox Technologies MT27800 Family [ConnectX-5]
"""

SRIOVNIC_LIST_CSV = """Description,Driver,Duplex,Link,MACAddress,MTU,Name,PCIDevice,Speed,
Mellanox Technologies MT27800 Family [ConnectX-5],nmlx5_core,Full,Up,b8:59:9f:c4:12:a0,9000,vmnic2,0000:3b:00.0,100000,
"""


def test_sriovnic_list_human_and_csv():
    assert_sniffed_as("esxi_sriovnic_list", SRIOVNIC_LIST)
    nics = by_name(parse("esxi_sriovnic_list", SRIOVNIC_LIST)["nics"])
    assert nics["vmnic2"]["link"] == "Up" and nics["vmnic2"]["speed_mbps"] == 100000
    assert nics["vmnic2"]["pci"] == "0000:3b:00.0" and nics["vmnic2"]["mtu"] == 9000
    assert nics["vmnic3"]["link"] == "Down" and nics["vmnic3"]["speed_mbps"] == 0
    assert nics["vmnic3"]["description"] == "Mellanox Technologies MT27800 Family [ConnectX-5]"
    assert_sniffed_as("esxi_sriovnic_list", SRIOVNIC_LIST_CSV)
    (n,) = parse("esxi_sriovnic_list", SRIOVNIC_LIST_CSV)["nics"]
    assert (n["name"], n["pci"], n["link"], n["mtu"]) == ("vmnic2", "0000:3b:00.0", "Up", 9000)


# ------------------------------------------------------------------------------ esxi_sriovnic_vf_list

# HAND-WRITTEN: `esxcli network sriovnic vf list -n vmnic2` (VF 2 not owned by a VM).
VF_LIST = """[root@esx01:~] esxcli network sriovnic vf list -n vmnic2
VF ID  Active  PCI Address     Owner World ID
-----  ------  --------------  --------------
    0    true  00000:059:00.2         2109455
    1    true  00000:059:00.3         2109876
    2   false  00000:059:00.4
"""

VF_LIST_CSV = """Active,OwnerWorldID,PCIAddress,VFID,
true,2109455,00000:059:00.2,0,
false,,00000:059:00.4,2,
"""


def test_sriovnic_vf_list_human_and_csv():
    assert_sniffed_as("esxi_sriovnic_vf_list", VF_LIST)
    f = parse("esxi_sriovnic_vf_list", VF_LIST)
    assert f["nic"] == "vmnic2"
    assert f["vfs"] == [
        {"vf_id": 0, "active": True, "pci": "00000:059:00.2", "owner_world_id": 2109455},
        {"vf_id": 1, "active": True, "pci": "00000:059:00.3", "owner_world_id": 2109876},
        {"vf_id": 2, "active": False, "pci": "00000:059:00.4", "owner_world_id": None},
    ]
    assert_sniffed_as("esxi_sriovnic_vf_list", VF_LIST_CSV)
    g = parse("esxi_sriovnic_vf_list", VF_LIST_CSV)
    assert g["vfs"] == [
        {"vf_id": 0, "active": True, "pci": "00000:059:00.2", "owner_world_id": 2109455},
        {"vf_id": 2, "active": False, "pci": "00000:059:00.4", "owner_world_id": None},
    ]


# ------------------------------------------------------------------------------ table reader


def test_cells_are_read_by_dash_runs_not_whitespace():
    # An empty middle cell must not shift the following cells left.
    text = "Name   Type  Value  Description\n-----  ----  -----  -----------\nfoo    int          some words here\n"
    (table,) = esxi._human_tables(text)
    assert table["rows"] == [{"name": "foo", "type": "int", "value": "", "description": "some words here"}]


# ------------------------------------------------------------------------------ error path

GARBAGE = "hello world\nthis is not the output of any tool\n"


@pytest.mark.parametrize("kind", sorted(esxi.PARSERS))
def test_garbage_raises_parse_error(kind):
    with pytest.raises(ParseError):
        parse(kind, GARBAGE)
    assert esxi.PARSERS[kind].sniff(GARBAGE) == 0


@pytest.mark.parametrize("kind", sorted(esxi.PARSERS))
def test_empty_text_raises_parse_error(kind):
    with pytest.raises(ParseError):
        parse(kind, "")
