"""RW415 pcie-link: LnkCap/LnkSta on real outputs: the full `lspci -vvv` listing (lspci_vvv) and the
grep-filtered shapes people paste (lspci_link: `lspci -s <bdf> -vv | grep Lnk`, a script's bare BDF line before
its Lnk lines)."""

from __future__ import annotations

import pytest

from roce_wizard.parsers import ParseError, parse
from roce_wizard.parsers.detect import detect
from tests.conftest import corpus_files, corpus_text

CXL = "lspci_link/cxl-notes-grep-lnk-per-device-x8-downgraded.txt"
MI50 = "lspci_link/mi50-script-bdf-lines-gen1-x8-downgraded.txt"


@pytest.mark.parametrize("kind", ["lspci_vvv", "lspci_link"])
def test_every_sample_detected_as_its_kind(kind):
    for path in corpus_files(kind):
        assert detect(corpus_text(path)).kind == kind


def test_full_listing_cap_equals_status():
    f = parse("lspci_vvv", corpus_text("lspci_vvv/cx7-mcx755106as-sriov-cap-vfs0.txt"))
    assert f["link_cap"] == {"speed_gts": 32.0, "width": 16} == f["link_status"]
    assert f["sriov"]["total_vfs"] == 16


def test_grep_lnk_per_command_names_each_device():
    f = parse("lspci_link", corpus_text(CXL))
    assert [(d["pci"], d["link_cap"]["width"], d["link_status"]["width"]) for d in f["devices"]] == [
        ("1f:00.0", 16, 8), ("47:00.0", 16, 8), ("08:00.0", 8, 8)]
    assert f["pci"] == "1f:00.0" and f["link_status"] == {"speed_gts": 32.0, "width": 8, "width_downgraded": True}
    with pytest.raises(ParseError):  # not the full listing: nothing here may read as "no SR-IOV capability"
        parse("lspci_vvv", corpus_text(CXL))


def test_bare_bdf_lines_head_their_link_lines():
    f = parse("lspci_link", corpus_text(MI50))
    assert [d["pci"] for d in f["devices"]] == ["31:00.0", "34:00.0", "4b:00.0", "4e:00.0"]
    assert all(d["link_cap"] == {"speed_gts": 16.0, "width": 16} for d in f["devices"])
    assert f["devices"][3]["link_status"] == {"speed_gts": 2.5, "speed_downgraded": True,
                                              "width": 8, "width_downgraded": True}


def test_grep_lnk_without_command_has_unknown_pci():
    f = parse("lspci_link", "\t\tLnkCap:\tPort #0, Speed 8GT/s, Width x16, ASPM not supported\n"
                           "\t\tLnkSta:\tSpeed 8GT/s (ok), Width x8 (downgraded)\n")
    assert f["pci"] is None and f["link_status"] == {"speed_gts": 8.0, "width": 8, "width_downgraded": True}


@pytest.mark.parametrize("shape", ["crlf", "ansi", "pdsh", "unindented"])
def test_pasted_shapes(shape):
    text = corpus_text(CXL)
    if shape == "crlf":
        text = text.replace("\n", "\r\n")
    elif shape == "ansi":
        text = text.replace("LnkSta", "\x1b[01;31m\x1b[KLnkSta\x1b[m\x1b[K")
    elif shape == "pdsh":  # the launcher's own command line on top, each output line prefixed
        f = parse("lspci_link", "$ pdsh -w h3 'lspci -s 1f:00.0 -vv | grep Lnk'\n"
                  + "\n".join(f"h3: {ln}" for ln in text.split("\n")[1:3]))
        assert (f["host"], f["pci"], f["link_status"]["width"]) == ("h3", "1f:00.0", 8)
        return
    else:
        text = "\n".join(ln.strip() for ln in text.split("\n"))
    f = parse("lspci_link", text)
    assert [(d["pci"], d["link_status"]["width"]) for d in f["devices"]] == [
        ("1f:00.0", 8), ("47:00.0", 8), ("08:00.0", 8)]


def test_odd_digits_are_not_a_width():
    f = parse("lspci_link", "$ lspci -s 3b:00.0 -vv | grep Lnk\n\tLnkCap:\tSpeed 8GT/s, Width x１６\n\tLnkSta:\tSpeed 8GT/s, Width x8\n")
    assert f["link_cap"] == {"speed_gts": 8.0} and f["link_status"]["width"] == 8


@pytest.mark.parametrize("garbage", ["", "hello\nworld", "$ lspci -s 3b:00.0 -vv | grep Lnk\n"])
def test_garbage_raises(garbage):
    with pytest.raises(ParseError):
        parse("lspci_link", garbage)


def test_mlxconfig_keys_for_rw413_on_real_captures():
    # RW413 firmware half: the existing mlxconfig parser already reads these keys (no `-e q` capture with
    # Default/Current/Next and these keys is public; next_boot is what the captures show)
    p = parse("mlxconfig_query", corpus_text("mlxconfig_query/cx6-egrep-roce-cc-lldp-dcbx-off-9-space-indent.txt"))
    params = p["devices"][0]["params"]
    assert params["ROCE_CC_PRIO_MASK_P1"]["next_boot"] == 255 and params["CNP_802P_PRIO_P1"]["next_boot"] == 6
    full = parse("mlxconfig_query", corpus_text("mlxconfig_query/cx4lx-mcx4121a-full-next-boot-trailing-pad.txt"))
    assert full["devices"][0]["params"]["CNP_DSCP_P1"]["next_boot"] == 48
