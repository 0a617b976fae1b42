"""Firmware-tool parsers (mlxconfig, mst, mlxfwmanager/mlxup, flint, sriov_numvfs) on real outputs.

Corpus samples are real captures (tests/data/corpus); SEED_* blocks are copied verbatim from seed 000.
Fixtures marked HAND-WRITTEN were written from knowledge of the tools' formats (not captured).
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
    return firmware.PARSERS[kind].parse(text)


# ------------------------------------------------------------------------------ seed 000 (verbatim)

SEED_MST_STATUS_VV = """[esxi]$ mst status -vv
PCI devices:
-----
DEVICE_TYPE          MST                      PCI
ConnectX4LX(rev:0)   mt4117_pciconf0         1a:00.0
ConnectX4LX(rev:0)   mt4117_pciconf0.1       1a:00.1
ConnectX5(rev:0)     mt4119_pciconf1         3b:00.0
ConnectX5(rev:0)     mt4119_pciconf1.1       3b:00.1"""

SEED_MLXFWMANAGER = """[esxi]$ mlxfwmanager -d 3b:00.0
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


def test_seed_mst_status_vv():
    assert_sniffed_as("mst_status", SEED_MST_STATUS_VV)
    f = parse("mst_status", SEED_MST_STATUS_VV)
    assert [(d["device_type"], d["mst"], d["pci"]) for d in f["devices"]] == [
        ("ConnectX4LX", "mt4117_pciconf0", "1a:00.0"),
        ("ConnectX4LX", "mt4117_pciconf0.1", "1a:00.1"),
        ("ConnectX5", "mt4119_pciconf1", "3b:00.0"),
        ("ConnectX5", "mt4119_pciconf1.1", "3b:00.1"),
    ]
    assert f["pci_module_loaded"] is None and f["config_module_loaded"] is None
    assert all(d["net"] is None and d["rdma"] is None for d in f["devices"])


def test_seed_mlxfwmanager():
    assert_sniffed_as("mlxfwmanager", SEED_MLXFWMANAGER)
    f = parse("mlxfwmanager", SEED_MLXFWMANAGER)
    (d,) = f["devices"]
    assert d["device_type"] == "ConnectX5"
    assert d["part_number"] == "MCX556A-ECA_Ax"
    assert d["psid"] == "MT_0000000008"
    assert d["pci"] == "3b:00.0"
    # the description wrapped onto a second line by the page is joined back
    assert d["description"].endswith("100GbE; dual-port QSFP28; PCIe3.0 x16; tall bracket; ROHS R6")
    assert d["fw_current"] == "16.32.1010" and d["fw_available"] is None
    assert d["versions"] == {
        "FW": {"current": "16.32.1010", "available": None},
        "PXE": {"current": "3.6.0502", "available": None},
        "UEFI": {"current": "14.25.0017", "available": None},
    }
    assert d["status"] == "No matching image found"


# ------------------------------------------------------------------------------ mlxconfig_query


def test_mlxconfig_query_corpus_is_covered():
    assert set(corpus_files("mlxconfig_query")) == {
        "mlxconfig_query/cx3-next-boot-only-short-header-no-name.txt",
        "mlxconfig_query/cx4lx-mcx4121a-full-next-boot-trailing-pad.txt",
        "mlxconfig_query/cx6-egrep-roce-cc-lldp-dcbx-off-9-space-indent.txt",
        "mlxconfig_query/hpe-slingshot-cx5-3col-star-marker-elided.txt",
    }


@pytest.mark.parametrize("rel", corpus_files("mlxconfig_query"))
def test_mlxconfig_query_sniffed(rel):
    assert_sniffed_as("mlxconfig_query", corpus_text(rel))


def test_mlxconfig_query_cx3_short_header():
    f = parse("mlxconfig_query", corpus_text("mlxconfig_query/cx3-next-boot-only-short-header-no-name.txt"))
    assert f["columns"] == ["next_boot"]
    (d,) = f["devices"]
    assert d["device"] == "/dev/mst/mt4099_pciconf0"
    assert d["device_type"] == "ConnectX3"
    assert d["name"] is None and d["description"] is None  # CX-3 header has no Name/Description
    p = d["params"]
    assert p["SRIOV_EN"]["next_boot"] is True
    assert p["NUM_OF_VFS"]["next_boot"] == 8
    assert p["LINK_TYPE_P1"]["next_boot"] == "ETH" and p["LINK_TYPE_P2"]["next_boot"] == "ETH"
    assert p["IP_VER_P1"]["next_boot"] == "IPv4"
    assert p["LEGACY_BOOT_PROTOCOL_P1"]["next_boot"] == "PXE"
    assert p["BOOT_VLAN_EN_P1"]["next_boot"] is False
    assert p["CQ_TIMESTAMP"]["next_boot"] is True
    assert "ADVANCED_PCI_SETTINGS" not in p
    assert "current" not in p["SRIOV_EN"] and "changed" not in p["SRIOV_EN"]
    assert len(p) == 20


def test_mlxconfig_query_cx4lx_full_trailing_padding():
    f = parse("mlxconfig_query", corpus_text("mlxconfig_query/cx4lx-mcx4121a-full-next-boot-trailing-pad.txt"))
    (d,) = f["devices"]
    assert d["device_type"] == "ConnectX4LX"  # trailing padding stripped
    assert d["name"] == "MCX4121A-ACU_Ax"
    assert d["description"].startswith("ConnectX-4 Lx EN network interface card; 25GbE dual-port SFP28")
    assert d["device"] == "/dev/mst/mt4117_pciconf0"
    p = d["params"]
    assert p["SRIOV_EN"]["next_boot"] is True
    assert p["NUM_OF_VFS"]["next_boot"] == 8
    assert p["ADVANCED_PCI_SETTINGS"]["next_boot"] is False
    assert p["ROCE_CONTROL"]["next_boot"] == "ROCE_ENABLE"
    assert p["CNP_DSCP_P1"]["next_boot"] == 48
    assert p["ROCE_CC_PRIO_MASK_P1"]["next_boot"] == 255
    assert p["MEMIC_SIZE_LIMIT"]["next_boot"] == "_256KB"
    assert p["NUM_OF_VL_P1"]["next_boot"] == "_4_VLs"
    assert p["NUM_OF_VL_P1"]["raw"]["next_boot"] == "_4_VLs(3)"
    assert p["PCI_WR_ORDERING"]["next_boot"] == "per_mkey"
    assert p["PCI_DOWNSTREAM_PORT_OWNER"]["next_boot"] == "Array[0..15]"
    assert p["PCI_ATOMIC_MODE"]["next_boot"] == "PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED"
    assert p["DCBX_WILLING_P2"]["next_boot"] is True
    assert p["LLDP_NB_DCBX_P1"]["next_boot"] is False
    assert p["SAFE_MODE_ENABLE"]["next_boot"] is True  # last line, no padding
    assert "LINK_TYPE_P1" not in p  # EN-only card
    assert len(p) == 152  # every non-blank row under the header


def test_mlxconfig_query_egrep_no_header_with_author_notes():
    f = parse("mlxconfig_query", corpus_text("mlxconfig_query/cx6-egrep-roce-cc-lldp-dcbx-off-9-space-indent.txt"))
    (d,) = f["devices"]
    assert d["device"] is None
    assert f["columns"] == ["next_boot"]
    p = d["params"]
    assert set(p) == {"ROCE_CC_PRIO_MASK_P1", "RPG_THRESHOLD_P1", "DCE_TCP_G_P1", "CNP_802P_PRIO_P1",
                      "LLDP_NB_DCBX_P1", "LLDP_NB_RX_MODE_P1", "LLDP_NB_TX_MODE_P1"}
    assert p["ROCE_CC_PRIO_MASK_P1"]["next_boot"] == 255
    assert p["CNP_802P_PRIO_P1"]["next_boot"] == 6
    assert p["DCE_TCP_G_P1"]["next_boot"] == 1019
    # `False(0)  ==> Change to True(1)`: the author's note is not a value
    assert p["LLDP_NB_DCBX_P1"]["next_boot"] is False
    assert p["LLDP_NB_RX_MODE_P1"]["next_boot"] == "OFF"
    assert p["LLDP_NB_TX_MODE_P1"]["next_boot"] == "OFF"


def test_mlxconfig_query_three_columns_star_and_elision():
    f = parse("mlxconfig_query", corpus_text("mlxconfig_query/hpe-slingshot-cx5-3col-star-marker-elided.txt"))
    assert f["columns"] == ["default", "current", "next_boot"]
    (d,) = f["devices"]
    assert d["device_type"] == "ConnectX5"
    assert d["name"] == "MCX515A-CCA_Ax_Bx"
    assert d["description"] == "ConnectX-5 EN network interface card; 100GbE single-port ..."
    p = d["params"]
    assert set(p) == {"MEMIC_BAR_SIZE", "MEMIC_SIZE_LIMIT", "ADVANCED_PCI_SETTINGS",
                      "SAFE_MODE_THRESHOLD", "SAFE_MODE_ENABLE"}
    aps = p["ADVANCED_PCI_SETTINGS"]
    assert aps["default"] is False and aps["current"] is True and aps["next_boot"] is True
    assert aps["changed"] is True
    assert p["SAFE_MODE_THRESHOLD"] == {"default": 10, "current": 10, "next_boot": 10, "changed": False,
                                        "raw": {"default": "10", "current": "10", "next_boot": "10"}}


# HAND-WRITTEN (not captured): `mlxconfig -e q` on ESXi for two cards, no -d, with a Next Boot value
# pending (NUM_OF_VFS current 8, next boot 16).
MLXCONFIG_E_Q_TWO_DEVICES = """[root@esx01:~] /opt/mellanox/bin/mlxconfig -e q

Device #1:
----------

Device type:    ConnectX4LX
Name:           MCX4121A-ACA_Ax
Description:    ConnectX-4 Lx EN network interface card; 25GbE dual-port SFP28; PCIe3.0 x8; ROHS R6
Device:         mt4117_pciconf0

Configurations:                                      Default         Current         Next Boot
         NUM_OF_VFS                                  8               8               8
         SRIOV_EN                                    True(1)         False(0)        False(0)

Device #2:
----------

Device type:    ConnectX5
Name:           MCX556A-ECA_Ax
Description:    ConnectX-5 VPI adapter card; EDR IB (100Gb/s) and 100GbE; dual-port QSFP28; PCIe3.0 x16; tall bracket; ROHS R6
Device:         mt4119_pciconf1

Configurations:                                      Default         Current         Next Boot
*        LINK_TYPE_P1                                IB(1)           ETH(2)          ETH(2)
*        LINK_TYPE_P2                                IB(1)           VPI(3)          ETH(2)
*        NUM_OF_VFS                                  8               8               16
*        SRIOV_EN                                    False(0)        True(1)         True(1)
         ADVANCED_PCI_SETTINGS                       False(0)        False(0)        False(0)
The '*' shows parameters with next value different from default/current value.
"""


def test_mlxconfig_query_two_devices_pending_values():
    assert_sniffed_as("mlxconfig_query", MLXCONFIG_E_Q_TWO_DEVICES)
    f = parse("mlxconfig_query", MLXCONFIG_E_Q_TWO_DEVICES)
    assert [d["device"] for d in f["devices"]] == ["mt4117_pciconf0", "mt4119_pciconf1"]
    cx5 = f["devices"][1]["params"]
    assert cx5["NUM_OF_VFS"]["current"] == 8 and cx5["NUM_OF_VFS"]["next_boot"] == 16
    assert cx5["LINK_TYPE_P1"]["default"] == "IB" and cx5["LINK_TYPE_P2"]["current"] == "VPI"
    assert cx5["LINK_TYPE_P2"]["next_boot"] == "ETH"
    assert cx5["ADVANCED_PCI_SETTINGS"]["changed"] is False
    cx4 = f["devices"][0]["params"]
    assert cx4["SRIOV_EN"]["default"] is True and cx4["SRIOV_EN"]["current"] is False


# HAND-WRITTEN: `mlxconfig -e q | grep` — three value columns and no header.
MLXCONFIG_E_Q_GREP = """# mlxconfig -d 3b:00.0 -e q | grep -E "SRIOV_EN|NUM_OF_VFS"
*        NUM_OF_VFS                                  0                   16                  16
*        SRIOV_EN                                    False(0)            True(1)             True(1)
"""


def test_mlxconfig_query_headerless_three_columns():
    assert_sniffed_as("mlxconfig_query", MLXCONFIG_E_Q_GREP)
    f = parse("mlxconfig_query", MLXCONFIG_E_Q_GREP)
    assert f["columns"] == ["default", "current", "next_boot"]
    p = f["devices"][0]["params"]
    assert p["NUM_OF_VFS"] == {"default": 0, "current": 16, "next_boot": 16, "changed": True,
                               "raw": {"default": "0", "current": "16", "next_boot": "16"}}
    assert p["SRIOV_EN"]["default"] is False and p["SRIOV_EN"]["next_boot"] is True


def test_mlxconfig_value_normalisation():
    n = firmware.normalize_mlxconfig_value
    assert n("True(1)") is True and n("False(0)") is False
    assert n("ETH(2)") == "ETH" and n("IB(1)") == "IB" and n("VPI(3)") == "VPI"
    assert n("16") == 16 and n("0x08") == 8
    assert n("Array[0..15]") == "Array[0..15]"


def test_mlxconfig_query_error_only():
    f = parse("mlxconfig_query", "-E- Failed to open device: mt4119_pciconf9. No such file or directory")
    assert f["devices"] == [] and f["errors"]


# HAND-WRITTEN (approximate): older MFT printed `PCI device:` and a single `Current` column.
MLXCONFIG_OLD_MFT = """Device #1:
----------

Device type:    ConnectX4
PCI device:     /dev/mst/mt4115_pciconf0

Configurations:                              Current
         SRIOV_EN                            True(1)
         NUM_OF_VFS                          8
         LINK_TYPE_P1                        ETH(2)
"""


def test_mlxconfig_query_old_mft_current_column():
    assert_sniffed_as("mlxconfig_query", MLXCONFIG_OLD_MFT)
    f = parse("mlxconfig_query", MLXCONFIG_OLD_MFT)
    assert f["columns"] == ["current"]
    (d,) = f["devices"]
    assert d["device"] == "/dev/mst/mt4115_pciconf0"
    assert d["params"]["SRIOV_EN"]["current"] is True
    assert d["params"]["SRIOV_EN"]["next_boot"] is None  # not printed: unknown, not guessed


# ------------------------------------------------------------------------------ mlxconfig_set


@pytest.mark.parametrize("rel", corpus_files("mlxconfig_set"))
def test_mlxconfig_set_sniffed(rel):
    assert_sniffed_as("mlxconfig_set", corpus_text(rel))


def test_mlxconfig_set_applied_reboot():
    f = parse("mlxconfig_set", corpus_text("mlxconfig_set/cx5-ocp3-next-boot-new-apply-prompt-reboot.txt"))
    assert f["device"] == "/dev/mst/mt4119_pciconf0"
    assert f["device_type"] == "ConnectX5"
    assert f["name"] == "04TRD3_Ax"
    assert f["changes"]["SRIOV_EN"]["next_boot"] is True and f["changes"]["SRIOV_EN"]["new"] is True
    assert f["changes"]["NUM_OF_VFS"]["next_boot"] == 8 and f["changes"]["NUM_OF_VFS"]["new"] == 8
    assert set(f["changes"]) == {"SRIOV_EN", "NUM_OF_VFS"}
    assert f["applied"] is True
    assert f["reboot_needed"] is True


def test_mlxconfig_set_unanswered_prompt():
    f = parse("mlxconfig_set", corpus_text("mlxconfig_set/igx-cx7-p3740-link-type-p2-ib-to-eth.txt"))
    assert f["device"] == "0005:03:00.0"
    assert f["device_type"] == "ConnectX7"
    assert f["name"] == "P3740-B0-QSFP_Ax"
    assert f["changes"]["LINK_TYPE_P1"]["next_boot"] == "ETH" and f["changes"]["LINK_TYPE_P1"]["new"] == "ETH"
    assert f["changes"]["LINK_TYPE_P2"]["next_boot"] == "IB" and f["changes"]["LINK_TYPE_P2"]["new"] == "ETH"
    assert f["applied"] is None
    assert f["reboot_needed"] is None


# HAND-WRITTEN: the user answered `n`.
MLXCONFIG_SET_ABORTED = """[root@esx01:~] mlxconfig -d mt4119_pciconf1 set ADVANCED_PCI_SETTINGS=0

Device #1:
----------

Device type:    ConnectX5
Name:           MCX556A-ECA_Ax
Description:    ConnectX-5 VPI adapter card; EDR IB (100Gb/s) and 100GbE; dual-port QSFP28; PCIe3.0 x16; tall bracket; ROHS R6
Device:         mt4119_pciconf1

Configurations:                                      Next Boot       New
         ADVANCED_PCI_SETTINGS                       True(1)         False(0)

 Apply new Configuration? (y/n) [n] : n
Aborted by user.
"""


def test_mlxconfig_set_aborted():
    assert_sniffed_as("mlxconfig_set", MLXCONFIG_SET_ABORTED)
    f = parse("mlxconfig_set", MLXCONFIG_SET_ABORTED)
    assert f["device"] == "mt4119_pciconf1"
    assert f["changes"]["ADVANCED_PCI_SETTINGS"]["next_boot"] is True
    assert f["changes"]["ADVANCED_PCI_SETTINGS"]["new"] is False
    assert f["applied"] is False and f["reboot_needed"] is False


# ------------------------------------------------------------------------------ mst_status


@pytest.mark.parametrize("rel", corpus_files("mst_status"))
def test_mst_status_sniffed(rel):
    assert_sniffed_as("mst_status", corpus_text(rel))


def test_mst_status_cx3pro_cx5_continuation_lines():
    f = parse("mst_status", corpus_text("mst_status/cx3pro-cx5-mixed-mst-status.txt"))
    assert f["pci_module_loaded"] is True and f["config_module_loaded"] is True
    assert [(d["mst"], d["pci"]) for d in f["devices"]] == [
        ("/dev/mst/mt4103_pciconf0", "0000:04:00.0"),
        ("/dev/mst/mt4103_pci_cr0", "0000:04:00.0"),
        ("/dev/mst/mt4119_pciconf0", "0000:42:00.0"),
    ]
    assert f["devices"][1]["access"] == "PCI direct access"
    assert all(d["device_type"] is None for d in f["devices"])  # plain `mst status` prints no type


def test_mst_status_pci_module_not_loaded_domain_0002():
    f = parse("mst_status", corpus_text("mst_status/cx6lx-domain-0002-pci-module-not-loaded-arm64.txt"))
    assert f["pci_module_loaded"] is False  # 'is not loaded' is not 'loaded'
    assert f["config_module_loaded"] is True
    (d,) = f["devices"]
    assert d["mst"] == "/dev/mst/mt4127_pciconf0"
    assert d["pci"] == "0002:01:00.0"


def test_mst_status_mt4119_not_loaded():
    f = parse("mst_status", corpus_text("mst_status/mt4119-pci-module-not-loaded.txt"))
    assert f["pci_module_loaded"] is False and f["config_module_loaded"] is True
    assert [(d["mst"], d["pci"]) for d in f["devices"]] == [("/dev/mst/mt4119_pciconf0", "0000:06:00.0")]


def test_mst_status_esxi_bare_names_and_vv_table():
    f = parse("mst_status", corpus_text("mst_status/esxi-smartx-mst-status-and-vv.txt"))
    assert f["pci_module_loaded"] is None and f["config_module_loaded"] is None
    assert f["devices"] == [
        {"device_type": "ConnectX5", "mst": "mt4121_pciconf0", "pci": "02:00.0", "net": "vmnic2",
         "rdma": None, "numa": None, "rev": "0"},
        {"device_type": "ConnectX5", "mst": "mt4121_pciconf0.1", "pci": "02:00.1", "net": "vmnic3",
         "rdma": None, "numa": None, "rev": "0"},
    ]


# HAND-WRITTEN: Linux `mst status -v` with RDMA/NET/NUMA filled and blank lines between rows.
MST_STATUS_V_LINUX = """MST modules:
------------
    MST PCI module is not loaded
    MST PCI configuration module loaded
PCI devices:
------------
DEVICE_TYPE             MST                           PCI       RDMA            NET                                     NUMA
ConnectX5(rev:0)        /dev/mst/mt4119_pciconf0      3b:00.0   mlx5_0          net-ens1f0np0                           0

ConnectX5(rev:0)        /dev/mst/mt4119_pciconf0.1    3b:00.1   mlx5_1          net-ens1f1np1                           0

ConnectX6DX(rev:0)      NA                            0000:86:00.0   mlx5_2     net-ens3f0                              1
"""


def test_mst_status_linux_v_table():
    assert_sniffed_as("mst_status", MST_STATUS_V_LINUX)
    f = parse("mst_status", MST_STATUS_V_LINUX)
    assert f["pci_module_loaded"] is False and f["config_module_loaded"] is True
    d0, d1, d2 = f["devices"]
    assert (d0["mst"], d0["pci"], d0["rdma"], d0["net"], d0["numa"]) == (
        "/dev/mst/mt4119_pciconf0", "3b:00.0", "mlx5_0", "ens1f0np0", 0)
    assert d1["mst"] == "/dev/mst/mt4119_pciconf0.1" and d1["rdma"] == "mlx5_1"
    assert d2["mst"] is None and d2["device_type"] == "ConnectX6DX" and d2["pci"] == "0000:86:00.0"
    assert d2["numa"] == 1


# ------------------------------------------------------------------------------ mlxfwmanager


@pytest.mark.parametrize("rel", corpus_files("mlxfwmanager"))
def test_mlxfwmanager_sniffed(rel):
    assert_sniffed_as("mlxfwmanager", corpus_text(rel))


def test_mlxfwmanager_bluefield2_no_pxe_uefi():
    f = parse("mlxfwmanager", corpus_text("mlxfwmanager/bluefield2-dpu-fixture-dev-fw-24-99.txt"))
    (d,) = f["devices"]
    assert d["device_type"] == "BlueField2"
    assert d["part_number"] == "MBF2H536C-CESO_Ax"
    assert d["psid"] == "MT_0000000767"
    assert d["pci"] == "/dev/mst/mt41686_pciconf0"
    assert d["base_guid"] == "08c0eb0300e14b94" and d["base_mac"] == "08c0ebe14b94"
    assert d["versions"] == {"FW": {"current": "24.99.0932", "available": None}}
    assert d["fw_current"] == "24.99.0932" and d["fw_available"] is None
    assert d["status"] == "No matching image found"


def test_mlxfwmanager_esxi_update_flow_keeps_latest_state():
    f = parse("mlxfwmanager", corpus_text("mlxfwmanager/esxi-cx3-mcx311a-update-flow-masked-macs.txt"))
    (d,) = f["devices"]  # the same card queried twice: its latest state
    assert d["pci"] == "mt4099_pci_cr0"
    assert d["part_number"] == "MCX311A-XCA_Ax" and d["psid"] == "MT_1170110023"
    assert d["fw_current"] == "2.42.5000" and d["fw_available"] is None
    assert d["versions"]["PXE"] == {"current": "3.4.0752", "available": None}
    assert d["status"] == "No matching image found"
    assert d["port1_mac"] == "0002c9xxxxxx"  # masked by the author; kept, not choked on
    assert f["restart_needed"] is True


def test_mlxfwmanager_esxi_update_required_first_query():
    text = corpus_text("mlxfwmanager/esxi-cx3-mcx311a-update-flow-masked-macs.txt")
    first = text.split("Perform FW update?")[0]
    (d,) = parse("mlxfwmanager", first)["devices"]
    assert d["fw_current"] == "2.33.5220" and d["fw_available"] == "2.42.5000"
    assert d["versions"]["PXE"] == {"current": "3.4.0467", "available": "3.4.0752"}
    assert d["status"] == "Update required"
    assert d["port1_mac"] == "0002c9232da0" and d["port2_mac"] == "0002c9232da1"


def test_mlxup_vpi_port_guid_and_mac():
    f = parse("mlxfwmanager", corpus_text("mlxfwmanager/mlxup-dell-cx3-vpi-port1-guid-port2-mac.txt"))
    (d,) = f["devices"]
    assert d["device_type"] == "ConnectX3"
    assert d["part_number"] == "01T7NW"
    assert d["psid"] == "DEL1090001019"
    assert d["pci"] == "0000:84:00.0"
    assert d["port1_guid"] == "e41d2d03007b4081" and d["port2_mac"] == "e41d2d7b4082"
    assert "base_mac" not in d
    assert d["fw_current"] == "2.42.5000"
    assert d["versions"]["PXE"]["current"] == "3.4.0752"


def test_mlxfwmanager_two_devices():
    f = parse("mlxfwmanager", corpus_text("mlxfwmanager/shasta-cx5-cx4-two-devices-no-matching-image.txt"))
    cx5, cx4 = f["devices"]
    assert (cx5["device_type"], cx5["part_number"], cx5["psid"], cx5["pci"], cx5["fw_current"]) == (
        "ConnectX5", "MCX515A-CCA_Ax", "MT_0000000011", "/dev/mst/mt4119_pciconf0", "16.26.4012")
    assert (cx4["device_type"], cx4["part_number"], cx4["psid"], cx4["pci"], cx4["fw_current"]) == (
        "ConnectX4", "MCX416A-BCA_Ax", "MT_2130111027", "/dev/mst/mt4115_pciconf0", "12.26.4012")
    assert cx5["versions"]["UEFI"] == {"current": "14.19.0017", "available": None}
    assert cx5["base_guid"] == "ec0d9a03007da71e" and cx4["base_mac"] == "506b4b13982e"
    assert cx5["status"] == cx4["status"] == "No matching image found"


# HAND-WRITTEN: `mlxfwmanager --online -d ...` with an update available and the multi-word
# `UEFI Virtio blk/net` rows newer MFT prints.
MLXFWMANAGER_ONLINE = """Querying Mellanox devices firmware ...

Device #1:
----------

  Device Type:      ConnectX6DX
  Part Number:      MCX623106AN-CDA_Ax
  Description:      ConnectX-6 Dx EN adapter card; 100GbE; Dual-port QSFP56; PCIe 4.0/3.0 x16;
  PSID:             MT_0000000359
  PCI Device Name:  0000:86:00.0
  Base MAC:         0c42a1d2e3f4
  Versions:         Current        Available
     FW             22.36.1010     22.41.1000
     PXE            3.6.0901       3.7.0300
     UEFI           14.29.0014     14.34.0012
     UEFI Virtio blk   22.4.0010      N/A
     UEFI Virtio net   22.4.0010      N/A

  Status:           Update required

---------
Found 1 device(s) requiring firmware update. Please use -u flag to perform the update.
"""


def test_mlxfwmanager_online_update_available():
    assert_sniffed_as("mlxfwmanager", MLXFWMANAGER_ONLINE)
    (d,) = parse("mlxfwmanager", MLXFWMANAGER_ONLINE)["devices"]
    assert d["fw_current"] == "22.36.1010" and d["fw_available"] == "22.41.1000"
    assert d["versions"]["UEFI Virtio net"] == {"current": "22.4.0010", "available": None}
    assert d["status"] == "Update required"
    assert d["pci"] == "0000:86:00.0"


def test_mlxfwmanager_no_devices_error():
    text = ("Querying Mellanox devices firmware ...\n\n"
            "-E- No devices found or specified, mst might be stopped, run 'mst start' to load MST modules\n")
    assert_sniffed_as("mlxfwmanager", text)
    f = parse("mlxfwmanager", text)
    assert f["devices"] == [] and f["errors"][0].startswith("-E- No devices found")


def test_mlxfwmanager_rejects_mlxconfig_output():
    with pytest.raises(ParseError):
        parse("mlxfwmanager", MLXCONFIG_E_Q_TWO_DEVICES)


# ------------------------------------------------------------------------------ flint_query


@pytest.mark.parametrize("rel", corpus_files("flint_query"))
def test_flint_query_sniffed(rel):
    assert_sniffed_as("flint_query", corpus_text(rel))


def test_flint_query_cx4_lenovo_fs3():
    f = parse("flint_query", corpus_text("flint_query/cx4-vpi-lenovo-fs3-psid-lnv.txt"))
    assert f["fw_version"] == "12.28.2006"
    assert f["psid"] == "LNV2180110032"
    assert f["image_type"] == "FS3"
    assert f["product_version"] == "12.28.2006"
    assert f["fw_release_date"] == "15.9.2020"
    assert f["security"] is None  # `Security Attributes: N/A`
    assert f["rom_info"] == [{"type": "UEFI", "version": "14.21.17", "cpu": "AMD64"},
                             {"type": "PXE", "version": "3.6.102", "cpu": "AMD64"}]
    assert f["base_guid"] == "ec0d9a030076eae2" and f["base_guid_num"] == 4
    assert f["base_mac"] == "ec0d9a76eae2"
    assert f["image_vsd"] is None


def test_flint_query_cx7_secure_fw():
    f = parse("flint_query", corpus_text("flint_query/cx7-bdf-short-form-16-guids-secure-fw.txt"))
    assert f["fw_version"] == "28.43.1014"
    assert f["psid"] == "MT_0000001244"
    assert f["image_type"] == "FS4"
    assert f["security"] == "secure-fw"
    assert f["base_mac_num"] == 16
    assert f["rom_info"][0]["cpu"] == "AMD64,AARCH64"


# HAND-WRITTEN: older flint (FS2, ConnectX-3) and a newer one with a pending firmware.
FLINT_FS2 = """Image type:      FS2
FW Version:      2.42.5000
FW Release Date: 5.9.2017
Product Version: 02.42.50.00
Rom Info:        type=PXE version=3.4.752
Device ID:       4099
Description:     Node             Port1            Port2            Sys image
GUIDs:           e41d2d03007b4080 e41d2d03007b4081 e41d2d03007b4082 e41d2d03007b4083
MACs:                                 e41d2d7b4081     e41d2d7b4082
VSD:
PSID:            DEL1090001019
"""

FLINT_PENDING = """# flint -d mt4119_pciconf1 q
Image type:            FS4
FW Version:            16.35.2000
FW Version(Running):   16.32.1010
FW Release Date:       20.10.2022
Product Version:       16.35.2000
Description:           UID                GuidsNumber
Base GUID:             b8599f0300c412a0        4
Base MAC:              b8599fc412a0            4
PSID:                  MT_0000000008
Security Attributes:   N/A
"""


def test_flint_query_fs2_and_pending():
    assert_sniffed_as("flint_query", FLINT_FS2)
    f = parse("flint_query", FLINT_FS2)
    assert f["fw_version"] == "2.42.5000" and f["psid"] == "DEL1090001019" and f["device_id"] == "4099"
    assert f["vsd"] is None
    assert f["guids"].split()[0] == "e41d2d03007b4080"
    assert_sniffed_as("flint_query", FLINT_PENDING)
    g = parse("flint_query", FLINT_PENDING)
    assert g["fw_version"] == "16.35.2000" and g["fw_version_running"] == "16.32.1010"


# ------------------------------------------------------------------------------ sriov_numvfs


@pytest.mark.parametrize("rel", corpus_files("sriov_numvfs"))
def test_sriov_numvfs_sniffed(rel):
    assert_sniffed_as("sriov_numvfs", corpus_text(rel))


def test_sriov_totalvfs_with_command_line():
    f = parse("sriov_numvfs", corpus_text("sriov_numvfs/cx4lx-sriov-totalvfs-8.txt"))
    assert f["value"] == 8
    assert f["attribute"] == "sriov_totalvfs"
    assert f["pci"] == "0000:06:00.1"


def test_lone_integer_small_is_numvfs_large_is_uptime():
    assert firmware.PARSERS["sriov_numvfs"].sniff("16\n") == 1
    assert esxi.PARSERS["esxi_uptime"].sniff("16\n") == 0
    assert_sniffed_as("sriov_numvfs", "16\n")
    assert parse("sriov_numvfs", "$ cat /sys/class/net/ens1f0/device/sriov_numvfs\n0\n")["value"] == 0
    assert firmware.PARSERS["sriov_numvfs"].sniff("1127012875427") == 0


# ------------------------------------------------------------------------------ error path

GARBAGE = "hello world\nthis is not the output of any tool\n"


@pytest.mark.parametrize("kind", sorted(firmware.PARSERS))
def test_garbage_raises_parse_error(kind):
    with pytest.raises(ParseError):
        parse(kind, GARBAGE)
    assert firmware.PARSERS[kind].sniff(GARBAGE) == 0


@pytest.mark.parametrize("kind", sorted(firmware.PARSERS))
def test_empty_text_raises_parse_error(kind):
    with pytest.raises(ParseError):
        parse(kind, "")
