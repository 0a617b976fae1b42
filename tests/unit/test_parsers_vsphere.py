"""The vSphere query parsers on what the transport printed against the lab's vCenter
(tests/unit/fixtures/vsphere/, recorded by its record.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roce_wizard.parsers import PARSERS, ParseError, parse
from roce_wizard.parsers.detect import detect
from roce_wizard.parsers.vsphere import find_object, fragment

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "vsphere"


def rec(name: str) -> str:
    return (FIXTURES / f"{name}.json").read_text(encoding="utf-8")


def test_hosts_healthy():
    facts = parse("vsphere_hosts", rec("healthy.hosts"))
    assert facts["vcenter"]["full_name"].startswith("VMware vCenter Server 7.0.2")
    assert [h["name"] for h in facts["hosts"]] == ["esx-01", "esx-02"]
    h = facts["hosts"][0]
    assert h["connection_state"] == "connected" and h["reboot_required"] is False
    assert h["in_maintenance_mode"] is False and h["boot_time"].startswith("20")
    assert h["power_policy"] == {"key": 1, "short_name": "static"}
    assert {"device": "vmnic2", "pci": "0000:3b:00.0", "driver": "nmlx5_core"} in h["pnics"]
    pf = next(p for p in h["pci_passthru"] if p["id"] == "0000:3b:00.0")
    assert pf == {"id": "0000:3b:00.0", "sriov": True, "passthru_capable": True, "passthru_enabled": False,
                  "passthru_active": False, "sriov_capable": True, "sriov_enabled": True, "sriov_active": True,
                  "num_vfs_requested": 8, "num_vfs": 8, "max_vfs_supported": 16}


def test_hosts_fault_and_fresh():
    esx2 = parse("vsphere_hosts", rec("rw301.hosts"))["hosts"][1]
    pf = next(p for p in esx2["pci_passthru"] if p["id"] == "0000:3b:00.0")
    assert (pf["sriov_enabled"], pf["num_vfs_requested"], pf["num_vfs"], pf["sriov_active"]) == (False, 0, 0, False)
    fresh = parse("vsphere_hosts", rec("fresh.hosts"))["hosts"][0]
    assert fresh["power_policy"]["key"] == 2
    assert not any(p["sriov_capable"] for p in fresh["pci_passthru"] if p["sriov"])
    pending = parse("vsphere_hosts", rec("reboot-pending.hosts"))["hosts"][0]
    pf = next(p for p in pending["pci_passthru"] if p["id"] == "0000:3b:00.0")
    assert pending["reboot_required"] is True and (pf["num_vfs_requested"], pf["num_vfs"]) == (4, 8)


def test_vms():
    facts = parse("vsphere_vms", rec("healthy.vms"))
    vm = facts["vms"][1]
    assert vm == {
        "name": "compute-02", "host": "esx-02", "power_state": "poweredOn", "memory_mb": 16384, "num_cpu": 8,
        "memory_reservation_locked_to_max": True, "memory_reservation_mb": 16384, "cpu_reservation_mhz": 18352,
        "latency_sensitivity": "high", "host_cpu_mhz": 2294,
        "sriov_adapters": [{"label": "SR-IOV network adapter 1", "key": 203, "pf_id": "0000:3b:00.0",
                            "allow_guest_mtu_change": True, "backing": "dvs", "switch": "RoCE-DVS",
                            "switch_uuid": vm["sriov_adapters"][0]["switch_uuid"], "portgroup": "roce-pg",
                            "portgroup_key": "dvportgroup-35", "network": None}],
    }
    # the lab's RW302 fault: the host left the VDS, its VM's VF sits on the standard network
    card = parse("vsphere_vms", rec("rw302.vms"))["vms"][1]["sriov_adapters"][0]
    assert (card["backing"], card["network"], card["portgroup"]) == ("network", "VM Network", None)
    assert parse("vsphere_vms", rec("rw304.vms"))["vms"][1]["sriov_adapters"] == []
    assert parse("vsphere_vms", rec("rw306.vms"))["vms"][1]["latency_sensitivity"] == "normal"


def test_dvs():
    facts = parse("vsphere_dvs", rec("healthy.dvs"))
    assert facts["datacenters"] == ["RoCE-DC"]
    [dvs] = facts["switches"]
    assert dvs["name"] == "RoCE-DVS" and dvs["max_mtu"] == 9000
    assert dvs["members"] == {"esx-01": ["vmnic2", "vmnic3"], "esx-02": ["vmnic2", "vmnic3"]}
    # the simulator does not mark the uplink port group: vSphere's name for it does
    assert [(p["name"], p["uplink"]) for p in dvs["portgroups"]] == [("RoCE-DVS-DVUplinks-31", True),
                                                                      ("roce-pg", False)]
    assert parse("vsphere_dvs", rec("rw303.dvs"))["switches"][0]["max_mtu"] == 1500
    assert parse("vsphere_dvs", rec("fresh.dvs"))["switches"] == []


@pytest.mark.parametrize("name,kind", [("healthy.hosts", "vsphere_hosts"), ("healthy.vms", "vsphere_vms"),
                                       ("healthy.dvs", "vsphere_dvs"), ("fresh.dvs", "vsphere_dvs")])
def test_detected_by_its_query_line(name, kind):
    assert detect(rec(name)).kind == kind


def test_detected_by_its_shape_and_pasted_after_a_prompt():
    doc = json.loads(rec("healthy.hosts"))
    del doc["query"]
    text = "[admin@jump ~]$ python vsphere_dump.py hosts\n" + json.dumps(doc, indent=2)
    assert detect(text).kind == "vsphere_hosts"
    assert parse("vsphere_hosts", text)["hosts"][1]["name"] == "esx-02"


def test_other_json_is_not_vsphere():
    ip_json = '[{"ifindex": 1, "ifname": "lo", "mtu": 65536, "addr_info": []}]'
    assert detect(ip_json).kind == "ip_json"
    for kind in ("vsphere_hosts", "vsphere_vms", "vsphere_dvs"):
        assert PARSERS[kind].sniff(ip_json) == 0
        with pytest.raises(ParseError):
            parse(kind, ip_json)


def test_bad_json_names_the_line():
    lines = rec("healthy.hosts").splitlines()
    lines[3] = lines[3][:40]  # a host line cut short (a truncated paste)
    with pytest.raises(ParseError, match=r"invalid JSON.*\(line 4\)") as info:
        parse("vsphere_hosts", "\n".join(lines))
    assert info.value.line == 4
    with pytest.raises(ParseError, match=r"\(line 3\)"):  # the document ends after its first line
        parse("vsphere_hosts", "$ cat hosts.json\n" + "\n".join(lines[:1]) + "\n")
    with pytest.raises(ParseError, match="no JSON object"):
        parse("vsphere_dvs", "nothing here\n")


def test_the_wrong_query_is_refused():
    with pytest.raises(ParseError, match="output of `vsphere vms`, not `vsphere hosts`"):
        parse("vsphere_hosts", rec("healthy.vms"))


def test_absent_properties_are_null_not_guessed():
    doc = json.loads(rec("healthy.hosts"))
    host = doc["hosts"][0]
    for key in ("runtime.bootTime", "summary.rebootRequired", "config.powerSystemInfo.currentPolicy"):
        host[key] = None
    h = parse("vsphere_hosts", json.dumps(doc))["hosts"][0]
    assert (h["boot_time"], h["reboot_required"], h["power_policy"]) == (None, None, None)


def test_evidence_fragments_quote_one_object():
    raw = rec("healthy.hosts")
    line, obj = find_object(raw, "esx-02")
    assert line == 5 and obj["name"] == "esx-02"
    text = fragment(raw, "esx-02", "summary.rebootRequired", "config.pciPassthruInfo", match={"id": "0000:3b:00.1"})
    assert text.startswith("line 5: esx-02: ") and '"numVirtualFunction": 7' in text and "0000:3b:00.0" not in text
    assert fragment(raw, "esx-09", "summary.rebootRequired") is None
