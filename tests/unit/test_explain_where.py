"""`roce-wizard explain CODE --where`: a newcomer finds a check's file, probes, fix, tests and lab fault in one hop.

Run as a user runs it (the console script in a subprocess); the paths it prints must exist.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from roce_wizard import where as where_mod
from roce_wizard.catalog import find, load_catalog

PROJECT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("roce-wizard")
    cmd = [exe, *args] if exe else [sys.executable, "-m", "roce_wizard.cli", *args]
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, check=False)


def test_where_prints_the_file_probe_commands_parsers_fix_tests_and_lab_fault():
    result = _run("explain", "RW208", "--where")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "check file:  checks/esxi/rw208_num_vfs_covers_max_vfs.py" in out
    assert (PROJECT / "checks/esxi/rw208_num_vfs_covers_max_vfs.py").is_file()
    # the probes' real commands and the parser function of each
    assert "esxcli --formatter=csv system module parameters list -m nmlx5_core" in out
    assert "/opt/mellanox/bin/mlxconfig -d mt4119_pciconf0 -e query" in out
    assert "roce_wizard.parsers.firmware.mlxconfig.parse_mlxconfig_query (roce_wizard/parsers/firmware/mlxconfig.py)" in out
    assert "plan_fix at checks/esxi/rw208_num_vfs_covers_max_vfs.py:" in out
    # the tests that name it: a file, a test function in it, a Case of the check tables
    assert "tests/unit/checks/test_esxi_checks.py" in out
    assert "test_rw208_trap_15_raises_num_of_vfs_to_16" in out
    assert "trap-15-not-over-15" in out
    assert "lab fault:   RW208 (target kind esxi) — NUM_OF_VFS is 15" in out
    assert "defined in roce_wizard/lab/esxi/faults.py; inject: roce-wizard lab up --fault RW208" in out
    # a slug finds the same check
    assert _run("explain", "num-vfs-covers-max-vfs", "--where").stdout == out


def test_where_json_names_paths_that_exist():
    result = _run("explain", "RW208", "--where", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    root = Path(data["root"])
    assert (root / data["file"]).is_file()
    probes = {p["name"]: p for p in data["probes"]}
    mlx = probes["mlxconfig_query"]
    assert (root / mlx["parser"]["file"]).is_file() and (root / mlx["defined_in"]).is_file()
    assert mlx["parser"]["function"] == "parse_mlxconfig_query"
    assert {"targets": "esxi", "command": "/opt/mellanox/bin/mlxconfig -d mt4119_pciconf0 -e query"} in mlx["commands"]
    assert data["fix"]["plan_fix"].startswith(data["file"] + ":") and data["fix"]["reboot"] == "host"
    files = {f["path"]: f for f in data["tests"]["files"]}
    assert all((root / path).is_file() for path in files)
    assert "test_rw208_says_which_rule_judged_and_plans_by_it" in files["tests/unit/checks/test_esxi_checks.py"]["functions"]
    assert data["lab_fault"]["kind"] == "esxi" and (root / data["lab_fault"]["defined_in"]).is_file()


def test_where_shows_per_kind_commands_and_per_vendor_switch_commands():
    out = _run("explain", "RW411", "--where").stdout  # a guest/linux check
    assert "cat /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos" in out
    out = _run("explain", "RW501", "--where").stdout
    assert "switch (arista_eos): show priority-flow-control" in out
    assert "switch (mellanox_mlnxos): show dcb priority-flow-control" in out


def test_a_check_without_a_lab_fault_says_so():
    result = _run("explain", "RW212", "--where")
    assert result.returncode == 0, result.stderr
    assert "lab fault:   none registered for this code" in result.stdout
    data = json.loads(_run("explain", "RW212", "--where", "--json").stdout)
    assert data["lab_fault"] is None


def test_an_unknown_code_is_a_usage_error_with_a_clear_message():
    result = _run("explain", "RW999", "--where")
    assert result.returncode == 2
    assert "no check 'RW999'" in result.stderr and "Traceback" not in result.stderr
    assert _run("explain", "RW208", "--json").returncode == 2  # --json goes with --where


def test_without_a_tests_directory_the_tests_line_says_so(tmp_path, monkeypatch):
    check = find(load_catalog(), "RW208")
    found = where_mod.tests(check, tests_dir=tmp_path / "site-packages" / "tests")
    assert found["available"] is False and found["files"] == []
    assert "ships none" in found["note"] and "grep -rn RW208 tests/" in found["note"]
    # installed from a wheel the package sits in site-packages, beside no pyproject.toml: a `tests` package
    # there is someone else's, never read as ours
    site = tmp_path / "site-packages"
    (site / "tests").mkdir(parents=True)
    (site / "tests" / "test_other.py").write_text("def test_rw208():\n    assert 'RW208'\n")
    monkeypatch.setattr(where_mod, "ROOT", site)
    assert where_mod.tests(check)["available"] is False


def test_where_shows_a_validate_checks_pair_probes_with_their_steps_and_parsers():
    result = _run("explain", "RW601", "--where")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "perftest_bw — defined in roce_wizard/probes/pairs.py; outputs read at roce_wizard/probes/pairs.py:" in out
    assert "parser roce_wizard.parsers.perf.perftest.parse_perftest (roce_wizard/parsers/perf/perftest.py)" in out
    assert "      sender: timeout 60 ib_send_bw -a -F --report_gbits --tclass=106 -d mlx5_0 -x 3 -p 18600 192.168.100.12" in out
    assert "receiver: nohup timeout 60 ib_send_bw -a -F --report_gbits --tclass=106 -d mlx5_0 -x 3 -p 18600 " in out
    data = json.loads(_run("explain", "RW606", "--where", "--json").stdout)
    (incast,) = data["pair_probes"]
    root = Path(data["root"])
    assert incast["name"] == "incast" and (root / incast["defined_in"]).is_file()
    assert incast["more_steps"] > 0 and any("ib_write_bw -D 5 -s 65536 --tclass=106" in s["command"] for s in incast["steps"])
    assert {p["function"] for p in incast["parsers"]} == {"parse_perftest", "parse_ethtool_stats"}
    env = json.loads(_run("explain", "RW604", "--where", "--json").stdout)["pair_probes"]
    assert env[0]["node_probes"] == ["ucx_config"] and env[0]["steps"] == []
