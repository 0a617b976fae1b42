"""RW415 pcie-link on recorded outputs: real `lspci -vv` and grep'd `lspci … | grep Lnk` captures (tests/data/corpus,
INDEX.md names each source) and one hand-written non-root read (tests/data/issue15_host/README.md)."""

from __future__ import annotations

from pathlib import Path

from roce_wizard.model import Status, TargetKind
from tests.checkcases import CATALOG, Case, esxi, guest, run_case
from tests.conftest import corpus_text

CX7 = corpus_text("lspci_vvv/cx7-mcx755106as-sriov-cap-vfs0.txt")  # 32GT/s x16 of 32GT/s x16
CXL = corpus_text("lspci_link/cxl-notes-grep-lnk-per-device-x8-downgraded.txt")  # x8 (downgraded) of x16
MI50 = corpus_text("lspci_link/mi50-script-bdf-lines-gen1-x8-downgraded.txt")  # 2.5GT/s x8 of 16GT/s x16
DENIED = (Path(__file__).parents[2] / "data" / "issue15_host" / "lspci-vv-not-root-access-denied.txt").read_text(
    encoding="utf-8")


def node(pci: str | None = None):
    return guest("node-01", TargetKind.LINUX, netdev="ens1f0np0", **({"pf_pci": pci} if pci else {}))


CASES = [
    Case("RW415", "cx7-gen5-x16-as-capable", Status.PASS, {"lspci_vvv": CX7}, target=node("0000:21:00.0"),
         summary_has="32 GT/s x16, as capable"),
    Case("RW415", "cxl-x8-of-x16", Status.FAIL, {"lspci_link": CXL}, target=node(),
         summary_has="width x8 of x16 (lspci: downgraded)"),
    Case("RW415", "mi50-gen1-x8", Status.FAIL, {"lspci_link": MI50}, target=node("0000:31:00.0"),
         summary_has="speed 2.5 GT/s of 16 and width x8 of x16"),
    Case("RW415", "not-root", Status.SKIP, {"lspci_vvv": DENIED}, target=node("0000:3b:00.0"),
         summary_has="without root"),
    Case("RW415", "esxi-not-read", Status.SKIP, {}, target=esxi(), summary_has="not read on ESXi"),
]


def test_cases():
    for case in CASES:
        run_case(case)


def test_the_inventorys_device_is_judged_not_the_others():
    (f,) = run_case(CASES[2])  # four MI50s listed: only 31:00.0, the inventory's pf_pci
    assert f.subject == "31:00.0" and f.observed == {"link_cap": "16 GT/s x16", "link_status": "2.5 GT/s x8"}


def test_no_fix_plan_only_advice():
    assert CATALOG["RW415"].plan_fix is None
    (f, *_), = [run_case(CASES[1])]
    assert "reseat" in f.fix and "BIOS" in f.fix
