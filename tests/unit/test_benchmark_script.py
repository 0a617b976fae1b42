"""benchmarks/doctor_scale.py's pure parts: the per-size table, the ratio to 1 host, result counting.
No lab and no timing: fixed numbers in, exact text out."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "doctor_scale.py"


def _script():
    spec = importlib.util.spec_from_file_location("doctor_scale", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ROWS = [  # the measurements (64 and 256 hosts), made up lab numbers
    {"hosts": 64, "targets": 194, "lab_up_s": 9.04, "doctor_wall_s": 11.4, "doctor_duration_s": 10.0,
     "doctor_cpu_s": 10.9, "cpu_per_target_ms": 56.2, "doctor_peak_rss_mb": 120.4, "lab_cpu_s": 3.5,
     "results": 2500, "timeouts": 0, "could_not_run": 0, "exit_code": 0},
    {"hosts": 1, "targets": 4, "lab_up_s": 1.0, "doctor_wall_s": 1.9, "doctor_duration_s": 0.9,
     "doctor_cpu_s": 1.0, "cpu_per_target_ms": 250.0, "doctor_peak_rss_mb": 90.0, "lab_cpu_s": 0.1,
     "results": 70, "timeouts": 0, "could_not_run": 0, "exit_code": 0},
    {"hosts": 256, "targets": 770, "lab_up_s": 40.0, "doctor_wall_s": 100.0, "doctor_duration_s": 98.5,
     "doctor_cpu_s": 97.0, "cpu_per_target_ms": 126.0, "doctor_peak_rss_mb": 264.0, "lab_cpu_s": 20.25,
     "results": 9000, "timeouts": 65, "could_not_run": 65, "exit_code": 2},
]


def test_table_has_one_row_per_size_and_ratio_to_the_1_host_run():
    table = _script().format_table(ROWS).splitlines()
    assert table[0].split() == ["hosts", "targets", "lab", "up", "s", "wall", "s", "run", "s", "CPU", "s",
                                "CPU/target", "ms", "RSS", "MB", "lab", "CPU", "s", "results", "timeouts", "not",
                                "run", "exit", "t/t(1)"]
    assert table[1].split() == ["64", "194", "9.0", "11.40", "10.00", "10.90", "56", "120", "3.50", "2500",
                                "0", "0", "0", "6.00"]
    assert table[2].split()[-1] == "1.00"
    assert table[3].split() == ["256", "770", "40.0", "100.00", "98.50", "97.00", "126", "264", "20.25",
                                "9000", "65", "65", "2", "52.63"]
    assert len({len(line) for line in table}) == 1  # columns aligned


def test_without_a_1_host_run_the_smallest_size_is_the_baseline_and_a_failed_size_shows_its_reason():
    rows = [ROWS[0], ROWS[2], {"hosts": 1000, "problem": "`lab up` exited 1: not ready within 120s"}]
    base, with_ratio = _script().with_ratios(rows)
    assert base == 64
    assert [r["ratio"] for r in with_ratio] == [1.0, 100.0 / 11.4, None]
    table = _script().format_table(rows).splitlines()
    assert table[0].split()[-1] == "t/t(64)"
    assert table[3].split() == ["1000"] + ["-"] * 13
    assert table[4] == "  1000 hosts: `lab up` exited 1: not ready within 120s"


def test_count_results_separates_timeouts_from_other_could_not_run():
    doc = {"results": [
        {"status": "pass", "summary": "MTU 9000"},
        {"status": "error", "summary": "could not run: `esxcli network nic list` timed out after 60s"},
        {"status": "error", "summary": "esx-07 did not complete the SSH handshake within 10s; check sshd"},
        {"status": "error", "summary": "could not run: `vsish -e get /x` exited 1: no such node"},
        {"status": "fail", "summary": "PFC off on priority 3 (timed out is not an error here)"},
    ]}
    assert _script().count_results(doc) == {"results": 5, "could_not_run": 3, "timeouts": 2}
    assert _script().count_results({}) == {"results": 0, "could_not_run": 0, "timeouts": 0}


def test_sizes_are_sorted_unique_and_hosts_adds_one():
    assert _script().parse_sizes("256,1,64", [1000, 64]) == [1, 64, 256, 1000]
