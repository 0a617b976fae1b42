"""`esxcli network nic dcb status get` (esxi_dcb_status) on the only real outputs found
(tests/data/esxi_dcb_status/, provenance in tests/data/PROVENANCE.md) and on the lab's rendering."""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_wizard.parsers import PARSERS, ParseError
from roce_wizard.parsers.detect import detect

DATA = Path(__file__).resolve().parents[1] / "data" / "esxi_dcb_status"


def _text(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_real_host1_pfc_on_priority_3():
    facts = PARSERS["esxi_dcb_status"].parse(_text("cx4lx-host1-ieee-pfc-prio3.txt"))
    by = {n["name"]: n for n in facts["nics"]}
    assert set(by) == {"vmnic3", "vmnic4"}
    for nic in by.values():
        assert (nic["mode"], nic["pfc_enabled"], nic["pfc_priorities"]) == ("IEEE", True, [3])
        assert nic["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0] and nic["sent_pfc_frames"] == [0, 0, 0, 1, 0, 0, 0, 0]
        assert nic["received_pfc_frames"] is None  # not in the output: never invented


def test_real_host2_cee_pfc_off():
    facts = PARSERS["esxi_dcb_status"].parse(_text("cx4lx-host2-cee-pfc-off.txt"))
    assert [(n["name"], n["mode"], n["pfc_enabled"], n["pfc_priorities"]) for n in facts["nics"]] == [
        ("vmnic5", "CEE", False, []), ("vmnic6", "CEE", False, [])]


@pytest.mark.parametrize("name", ["cx4lx-host1-ieee-pfc-prio3.txt", "cx4lx-host2-cee-pfc-off.txt"])
def test_detected(name):
    assert detect(_text(name)).kind == "esxi_dcb_status"


def test_esxcli_struct_layout_with_prompt_names_the_vmnic():
    text = ("[root@esx-01:~] esxcli network nic dcb status get -n vmnic2\n   Mode: IEEE Mode\n   PFC Enabled: true\n"
            "   PFC Configuration: 0 0 0 0 1 0 0 0\n   Sent PFC Frames: 0 0 0 0 0 0 0 0\n")
    (nic,) = PARSERS["esxi_dcb_status"].parse(text)["nics"]
    assert (nic["name"], nic["pfc_priorities"]) == ("vmnic2", [4])


def test_not_a_dcb_status():
    with pytest.raises(ParseError):
        PARSERS["esxi_dcb_status"].parse("Name  Driver\n----  ------\nvmnic0 igbn\n")
