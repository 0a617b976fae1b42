"""Parsers of the BIOS evidence (roce_wizard/parsers/redfish.py): `redfish_bios`, `sysfs_iommu`.

The Redfish documents in tests/unit/data/redfish/ were captured once from the practice lab's BMCs
with the real RedfishTransport (`redfish bios`, `GET …/Bios`): an iDRAC-style Dell R740 and an
iLO 5-style HPE DL380 Gen10 (lab fault RW102: Intel VT-d disabled). `sysfs_iommu` fixtures are
HAND-WRITTEN in `ls`'s formats (GNU coreutils messages).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roce_wizard.parsers import PARSERS
from roce_wizard.parsers.base import ParseError
from roce_wizard.parsers.detect import detect
from roce_wizard.parsers.redfish import guess_vendor
from tests.conftest import corpus_text

DATA = Path(__file__).parent / "data" / "redfish"
DELL = (DATA / "dell-r740-idrac-redfish-bios.json").read_text()
DELL_GET_BIOS = (DATA / "dell-r740-idrac-get-bios.json").read_text()
HPE_VTD_OFF = (DATA / "hpe-dl380-ilo5-redfish-bios-vtd-disabled.json").read_text()


def parse(kind: str, text: str) -> dict:
    return PARSERS[kind].parse(text)


def test_redfish_bios_document_dell():
    f = parse("redfish_bios", DELL)
    assert f["vendor"] == "dell" and f["source"] == "redfish bios"
    assert f["attributes"]["ProcVirtualization"] == "Enabled"
    assert f["attributes"]["SriovGlobalEnable"] == "Enabled"
    assert f["attributes"]["SysProfile"] == "PerfPerWattOptimizedOs"
    assert f["pending"] == {}
    assert f["settings_uri"] == "/redfish/v1/Systems/System.Embedded.1/Bios/Settings"
    assert f["system"]["manager_uri"] == "/redfish/v1/Managers/iDRAC.Embedded.1"
    assert f["system"]["model"] == "PowerEdge R740"
    assert detect(DELL).kind == "redfish_bios"


def test_redfish_bios_document_hpe():
    f = parse("redfish_bios", HPE_VTD_OFF)
    assert f["vendor"] == "hpe"
    assert (f["attributes"]["IntelProcVtd"], f["attributes"]["Sriov"], f["attributes"]["PowerRegulator"]) == (
        "Disabled", "Enabled", "OsControl")
    assert f["settings_uri"] == "/redfish/v1/Systems/1/Bios/Settings/"
    assert detect(HPE_VTD_OFF).kind == "redfish_bios"


def test_a_pasted_bios_resource_with_prompt_and_curl_line():
    text = ("$ curl -s -u root:calvin https://idrac/redfish/v1/Systems/System.Embedded.1/Bios | python3 -m json.tool\n"
            + DELL_GET_BIOS)
    assert detect(text).kind == "redfish_bios"
    f = parse("redfish_bios", text)
    assert f["vendor"] == "dell"  # told by the attribute names
    assert f["pending"] is None  # a Bios resource does not say what is staged
    assert f["attributes"]["SriovGlobalEnable"] == "Enabled"
    assert f["settings_uri"] == "/redfish/v1/Systems/System.Embedded.1/Bios/Settings"
    assert f["source"] == "Bios resource"


def test_pending_values_and_unknown_vendor():
    doc = json.loads(DELL)
    doc["pending"] = {"SriovGlobalEnable": "Disabled"}
    doc["vendor"] = None
    f = parse("redfish_bios", json.dumps(doc))
    assert f["pending"] == {"SriovGlobalEnable": "Disabled"} and f["vendor"] == "dell"
    assert guess_vendor({"Sriov": "Enabled"}) == "hpe"
    assert guess_vendor({"Foo": "Bar"}) is None


def test_not_a_bios():
    settings = json.dumps({"@odata.id": "/redfish/v1/Systems/System.Embedded.1/Bios/Settings",
                           "@odata.type": "#Bios.v1_1_0.Bios", "Id": "Settings", "Attributes": {}})
    with pytest.raises(ParseError):
        parse("redfish_bios", settings)
    with pytest.raises(ParseError):
        parse("redfish_bios", '{"Members": []}')
    with pytest.raises(ParseError):
        parse("redfish_bios", "HV Support: 3")
    assert PARSERS["redfish_bios"].sniff('{"Members": []}') == 0
    assert detect(settings).kind != "redfish_bios"


# HAND-WRITTEN: `ls /sys/class/iommu` on an Intel server (two DMAR units), an AMD EPYC one, `ls -l`,
# a kernel without the iommu class, and an empty directory (IOMMU off).
IOMMU_INTEL = "dmar0\ndmar1\n"
IOMMU_AMD_PASTE = "[root@node-01 ~]# ls /sys/class/iommu\nivhd0  ivhd1  ivhd2  ivhd3\n"
IOMMU_LONG = ("$ ls -l /sys/class/iommu/\ntotal 0\n"
              "lrwxrwxrwx 1 root root 0 Mar  4 09:12 dmar0 -> ../../devices/virtual/iommu/dmar0\n"
              "lrwxrwxrwx 1 root root 0 Mar  4 09:12 dmar1 -> ../../devices/virtual/iommu/dmar1\n")
IOMMU_NO_DIR = "ls: cannot access '/sys/class/iommu': No such file or directory\n"


@pytest.mark.parametrize(("text", "present", "units"), [
    (IOMMU_INTEL, True, ["dmar0", "dmar1"]),
    (IOMMU_AMD_PASTE, True, ["ivhd0", "ivhd1", "ivhd2", "ivhd3"]),
    (IOMMU_LONG, True, ["dmar0", "dmar1"]),
    (IOMMU_NO_DIR, False, []),
    ("", True, []),
])
def test_sysfs_iommu(text, present, units):
    f = parse("sysfs_iommu", text)
    assert (f["present"], f["units"], f["count"]) == (present, units, len(units))
    if text:
        assert detect(text).kind == "sysfs_iommu"


def test_sysfs_iommu_refuses_other_text():
    with pytest.raises(ParseError):
        parse("sysfs_iommu", "ls: cannot open directory '/sys/class/iommu': Permission denied\n")
    # a one-word output of another tool is not taken for an IOMMU listing
    assert detect("8\n").kind != "sysfs_iommu"
    assert PARSERS["sysfs_iommu"].sniff("RoCE v2\n") == 0


def test_dmesg_tells_the_firmware_iommu_table():
    f = parse("linux_dmesg", corpus_text("linux_dmesg/iommu-intel-dsa-1836-iommu-enabled-scalable.txt"))
    assert f["iommu_enabled"] is True and f["iommu_acpi_table"] == "DMAR"
    # the BIOS has VT-d on (DMAR table) but the kernel runs without intel_iommu=on
    g = parse("linux_dmesg", "[    0.011873] ACPI: DMAR 0x000000006FF9B000 000170 (v01 DELL   PE_SC3   00000001 DELL 00000001)\n"
                             "[    0.011921] ACPI: Reserving DMAR table memory at [mem 0x6ff9b000-0x6ff9b16f]\n")
    assert g["iommu_enabled"] is None and g["iommu_acpi_table"] == "DMAR"
    h = parse("linux_dmesg", corpus_text("linux_dmesg/blog-pve-mlx5-pcie-x8-limited.txt"))
    assert "iommu_acpi_table" not in h
