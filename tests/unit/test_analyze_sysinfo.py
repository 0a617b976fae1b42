"""`analyze` on an NVIDIA sysinfo-snapshot (folder and .tgz) judges it like a bundle: each member mapped to
its kind by the snapshot's own layout, one part per device where one file holds many (issue 13, class 7)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from roce_wizard.cli import app
from tests.unit.sysinfokit import HOST, TOP, build_snapshot, build_tgz

runner = CliRunner()
EXPECTED = {
    "commands_txt_output/cma_roce_mode.txt#mlx5_0": "cma_roce_mode",
    "commands_txt_output/cma_roce_mode.txt#mlx5_1": "cma_roce_mode",
    "commands_txt_output/ibdev2netdev.txt": "ibdev2netdev",
    "commands_txt_output/ibv_devinfo_v.txt": "ibv_devinfo",
    "commands_txt_output/mlnx_qos_handler.txt#ens14f0": "mlnx_qos",
    "commands_txt_output/mlnx_qos_handler.txt#ens14f1": "mlnx_qos",  # the tool could not run it there
    "commands_txt_output/ofed_info_s.txt": "ofed_info",
    "firmware/mlxconfig_devmstmt4117_pciconf0": "mlxconfig_query",
    "ethtool_S/ethtool_S_enp178s0f0": "ethtool_stats",
    f"{HOST}-20190219-101500.html#ethtool -a eth03": "ethtool_pause",
}


def analyze_json(path: Path) -> tuple[int, dict]:
    result = runner.invoke(app, ["analyze", "--json", str(path)])
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout)


def _members(out: dict, prefix: str) -> dict[str, dict]:
    assert all(f["path"].startswith(prefix) for f in out["files"]), [f["path"] for f in out["files"]]
    return {f["path"].removeprefix(prefix): f for f in out["files"]}


def _verdicts(f: dict) -> dict[str, str]:
    return {x["check"]: x["status"] for x in f["findings"]}


def test_a_snapshot_folder_is_read_by_its_layout(tmp_path):
    root = build_snapshot(tmp_path)
    code, out = analyze_json(root)
    got = _members(out, f"{root}/")
    assert {name: f["kind"] for name, f in got.items()} == EXPECTED  # no "unknown", no lsmod/report noise
    assert {f.get("host") for f in got.values()} == {HOST}
    # a device the tool could not query is said, not dropped and not judged on a default
    failed = got.pop("commands_txt_output/mlnx_qos_handler.txt#ens14f1")
    assert failed["facts"] is None and failed["findings"] == []
    assert failed["error"] == "the snapshot holds no output: Could not run command: mlnx_qos -i ens14f1"
    assert not [f for f in got.values() if f["error"]]
    # per device: mlx5_0 left on the v1 default, mlx5_1 on v2 — two parts of one kind, each its own verdict
    assert _verdicts(got["commands_txt_output/cma_roce_mode.txt#mlx5_0"])["RW408"] == "fail"
    assert _verdicts(got["commands_txt_output/cma_roce_mode.txt#mlx5_1"])["RW408"] == "pass"
    assert got["commands_txt_output/mlnx_qos_handler.txt#ens14f0"]["facts"]["trust"] == "pcp"
    assert _verdicts(got[f"{HOST}-20190219-101500.html#ethtool -a eth03"])["RW410"] == "fail"
    assert _verdicts(got["commands_txt_output/ofed_info_s.txt"])["RW401"] == "pass"
    assert got["firmware/mlxconfig_devmstmt4117_pciconf0"]["facts"]["devices"]
    assert code == 1


def test_a_snapshot_tgz_reads_like_its_folder_named_inside_the_archive(tmp_path):
    archive = build_tgz(tmp_path)
    _, folder = analyze_json(tmp_path / "src" / TOP)
    code, out = analyze_json(archive)
    got = _members(out, f"{archive}:{TOP}/")
    want = _members(folder, f"{tmp_path / 'src' / TOP}/")
    assert {n: (f["kind"], f["facts"], _verdicts(f)) for n, f in got.items()} == \
           {n: (f["kind"], f["facts"], _verdicts(f)) for n, f in want.items()}
    assert code == 1


def test_a_command_the_tool_could_not_run_is_said_not_judged(tmp_path):
    root = build_snapshot(tmp_path)
    # cma_roce_handler() and mlnx_qos_handler() write these instead of an output
    (root / "commands_txt_output" / "cma_roce_mode.txt").write_text(
        "Invoked Command: cma_roce_mode\nFailed to retrieve mlx devices")
    (root / "commands_txt_output" / "mlnx_qos_handler.txt").write_text(
        "Invoked Command: mlnx_qos_handler\nmlnx_qos command not found")
    _, out = analyze_json(root)
    got = _members(out, f"{root}/")
    cma, qos = got["commands_txt_output/cma_roce_mode.txt"], got["commands_txt_output/mlnx_qos_handler.txt"]
    assert (cma["kind"], cma["facts"], cma["findings"]) == ("cma_roce_mode", None, [])
    assert cma["error"] == "the snapshot holds no output: Failed to retrieve mlx devices"
    assert (qos["kind"], qos["facts"], qos["error"]) == ("mlnx_qos", None,
                                                         "the snapshot holds no output: mlnx_qos command not found")


def test_show_pretty_gids_is_said_unread_not_judged_as_an_empty_gid_table(tmp_path):
    root = build_snapshot(tmp_path)
    # show_pretty_gids_handler(): its own table (type and netdev columns, no VER), then n_gids_found
    (root / "commands_txt_output" / "show_pretty_gids.txt").write_text(
        "Invoked Command: show_pretty_gids\nDEV\tPORT\tINDEX\tGID\t\t\t\t\t\tIPv4\n"
        "---\t----\t-----\t---\t\t\t\t\t\t------------\n"
        "mlx5_0\t1\t3\t0000:0000:0000:0000:0000:ffff:c0a8:010b\t\t192.168.1.11  \tRoCE v2\t\tens1f0\n"
        "\nn_gids_found=1\n")
    _, out = analyze_json(root)
    gids = _members(out, f"{root}/")["commands_txt_output/show_pretty_gids.txt"]
    assert gids["facts"] is None and gids["findings"] == [] and "could not be told" in gids["error"]
