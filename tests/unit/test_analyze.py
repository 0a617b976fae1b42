"""`roce-wizard analyze`: detection and facts on every real corpus sample, checks judged offline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roce_wizard.cli import app
from roce_wizard.parsers.detect import detect, strip_annotations
from tests.conftest import CORPUS, corpus_text

runner = CliRunner()
# corpus folder -> kind id where the two differ
KIND_OF_DIR = {"osu_benchmarks": "osu", "esxi_pauseparams": "esxi_pause_params",
               "cumulus_nv_show_qos_roce": "nvue_qos_roce", "onyx_show_dcb_pfc": "onyx_pfc",
               "onyx_show_interfaces": "onyx_interfaces", "sonic_show_pfc": "sonic_pfc"}
ALL_SAMPLES = sorted(f"{p.parent.name}/{p.name}" for p in CORPUS.glob("*/*.txt"))
# whole terminal sessions of two tools (issue 13, class 6): analyze reads them as kind `session`, the
# folder's kind being one of its parts
SESSIONS = {"ip_link_vf/cx4-pve-bridge-member-8-vfs-zero-mac-query-rss.txt": ("lspci_list", "ip_link_vf"),
            "rdma_statistic/mlx5-bond0-single-line-resp-cqe-errors.txt": ("ibdev2netdev", "rdma_statistic")}


def analyze_json(*paths: str | Path) -> tuple[int, dict]:
    result = runner.invoke(app, ["analyze", "--json", *map(str, paths)])
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("sample", ALL_SAMPLES)
def test_every_corpus_sample_is_detected_as_its_kind(sample):
    folder = sample.split("/")[0]
    kind = detect(corpus_text(sample)).kind
    assert kind == KIND_OF_DIR.get(folder, folder)


@pytest.mark.parametrize("sample", ALL_SAMPLES)
def test_analyze_json_gives_facts_for_every_covered_sample(sample):
    code, out = analyze_json(CORPUS / sample)
    (entry,) = out["files"]
    folder = sample.split("/")[0]
    if sample in SESSIONS:
        assert entry["kind"] == "session"
        assert tuple(p["kind"] for p in entry["facts"]["parts"]) == SESSIONS[sample]
        assert all(p["facts"] for p in entry["facts"]["parts"])
    else:
        assert entry["kind"] == KIND_OF_DIR.get(folder, folder)
    assert entry["facts"], f"{sample}: no facts"
    assert entry["error"] is None
    assert code in (0, 1, 3)


def test_annotation_lines_are_dropped_and_never_needed():
    raw = (CORPUS / "show_gids/husky-tab-separated.txt").read_text()
    assert strip_annotations(raw) == corpus_text("show_gids/husky-tab-separated.txt")
    assert detect(corpus_text("show_gids/husky-tab-separated.txt")).kind == "show_gids"


def test_unknown_text_gives_kind_unknown_and_no_facts(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("We rebooted the rack on Tuesday and the coffee machine is broken.\n")
    code, out = analyze_json(f)
    assert out["files"][0]["kind"] == "unknown" and out["files"][0]["facts"] is None
    assert out["files"][0]["findings"] == [] and code == 0


def test_mlxconfig_e_query_alone_judges_link_type_sriov_advanced_pci_and_pending_reboot(tmp_path):
    shutil.copy(CORPUS / "mlxconfig_query/hpe-slingshot-cx5-3col-star-marker-elided.txt", tmp_path / "q.txt")
    code, out = analyze_json(tmp_path / "q.txt")
    checks = {f["check"]: f["status"] for f in out["files"][0]["findings"]}
    assert checks.get("RW207") == "warn"  # ADVANCED_PCI_SETTINGS True
    assert "RW214" in checks
    assert "RW208" not in checks  # needs the module params beside it


MLXCONFIG_E = """
Device #1:
----------

Device type:        ConnectX5
Name:               MCX556A-ECA_Ax
Description:        ConnectX-5 VPI adapter card; EDR IB (100Gb/s) and 100GbE; dual-port QSFP28; PCIe3.0 x16; tall bracket; ROHS R6
Device:             mt4119_pciconf1

Configurations:                                      Default         Current         Next Boot
         NUM_OF_VFS                                  0               16              16
         SRIOV_EN                                    False(0)        True(1)         True(1)
         LINK_TYPE_P1                                IB(1)           ETH(2)          ETH(2)
         LINK_TYPE_P2                                IB(1)           ETH(2)          ETH(2)
         ADVANCED_PCI_SETTINGS                       False(0)        False(0)        False(0)
"""
MODULE_PARAMS = "nmlx5_core enabled = 1 options = 'pfctx=0x08 pfcrx=0x08 trust_state=2 max_vfs=0,0,8,7 ecn=1'\n"


def test_module_params_beside_the_query_judge_num_vfs_too(tmp_path):
    (tmp_path / "mlxconfig.txt").write_text(MLXCONFIG_E)
    (tmp_path / "module.txt").write_text(MODULE_PARAMS)
    code, out = analyze_json(tmp_path)
    by_kind = {f["kind"]: f for f in out["files"]}
    assert set(by_kind) == {"mlxconfig_query", "esxi_module_params"}
    statuses = {f["check"]: f["status"] for f in by_kind["mlxconfig_query"]["findings"]}
    assert statuses["RW208"] == "pass"  # 16 > 0+0+8+7
    assert statuses["RW205"] == "pass" and statuses["RW206"] == "pass"
    params = {f["check"]: f["status"] for f in by_kind["esxi_module_params"]["findings"]}
    assert params["RW209"] == "pass" and params["RW210"] == "pass"
    assert code == 0


def test_num_vfs_too_small_fails_with_the_fix(tmp_path):
    (tmp_path / "mlxconfig.txt").write_text(MLXCONFIG_E.replace("16              16", "15              15"))
    (tmp_path / "module.txt").write_text(MODULE_PARAMS)
    code, out = analyze_json(tmp_path)
    rw208 = [f for file in out["files"] for f in file["findings"] if f["check"] == "RW208"]
    assert rw208 and rw208[0]["status"] == "fail" and rw208[0]["fix"]
    assert code == 1


def test_missing_file_is_a_usage_error():
    result = runner.invoke(app, ["analyze", "/nonexistent/file.txt"])
    assert result.exit_code == 2 and "no such file" in result.output
