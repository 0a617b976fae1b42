"""How `doctor` scales with the cluster: 1, 16, 64 and 256 lab ESXi hosts (each with its guest).

For each size, a practice lab (ESXi hosts and guests only, every SSH command delayed by
--delay, 20 ms by default: a LAN round trip plus the tool's own time) is served by a thread of
this process, and `roce-wizard doctor -i LAB/inventory.yaml --json` runs as a separate process
against it. Measured: the doctor process's wall time and peak RSS (wait4's ru_maxrss), and the
ratio t(largest)/t(1) — the issue's goal is t(256)/t(1) <= 3.

    python benchmarks/doctor_scale.py [--sizes 1,16,64,256] [--delay 0.02] [--concurrency 32] [--no-fsync]

Not run by pytest.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from roce_wizard.lab.control import BackgroundLab, LabSpec  # noqa: E402


def run_doctor(inventory: Path, concurrency: int | None, state_dir: Path,
               no_fsync: bool = False) -> tuple[float, float, int, dict]:
    entry = "import sys; from roce_wizard.cli import main; sys.argv[0] = 'roce-wizard'; main()"
    if no_fsync:  # what the run log's fsync per event costs: the same run with fsync a no-op
        entry = "import os; os.fsync = lambda fd: None; " + entry
    command = [sys.executable, "-c", entry, "doctor", "-i", str(inventory), "--json"]
    if concurrency is not None:
        command += ["--concurrency", str(concurrency)]
    env = {**os.environ, "ROCE_WIZARD_STATE_DIR": str(state_dir)}
    with tempfile.TemporaryFile() as out:
        started = time.monotonic()
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        try:
            summary = json.loads(out.read().decode()).get("summary", {})
        except (ValueError, AttributeError):
            summary = {}
    return wall, usage.ru_maxrss / 1024, proc.returncode, summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,16,64,256", help="ESXi host counts (comma list)")
    parser.add_argument("--delay", type=float, default=0.02, help="per-command delay in the lab, seconds")
    parser.add_argument("--concurrency", type=int, default=None, help="doctor --concurrency (default: doctor's)")
    parser.add_argument("--no-fsync", action="store_true",
                        help="make fsync a no-op in the doctor process (to see what the run log's fsyncs cost)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    rows = []
    with tempfile.TemporaryDirectory(prefix="rw-scale-") as tmp:
        for n in sizes:
            lab_dir = Path(tmp) / f"lab-{n}"
            t0 = time.monotonic()
            runner = BackgroundLab(LabSpec(scenario="healthy", hosts=n, command_delay_s=args.delay), lab_dir,
                                   services=())
            lab = runner.start(timeout=300)
            start_s = time.monotonic() - t0
            try:
                targets = len(lab.endpoints)
                wall, rss_mb, code, summary = run_doctor(lab_dir / "inventory.yaml", args.concurrency,
                                                         Path(tmp) / "state", args.no_fsync)
            finally:
                runner.stop()
            rows.append((n, targets, start_s, wall, rss_mb, code, summary))
            print(f"  {n:>4} hosts: lab up in {start_s:.1f}s, doctor {wall:.2f}s, peak RSS {rss_mb:.0f} MB, "
                  f"exit {code}", file=sys.stderr, flush=True)

    base = rows[0][3]
    print(f"doctor scale (per-command delay {args.delay * 1000:.0f} ms, "
          f"concurrency {args.concurrency or 'default'}, {os.cpu_count()} CPUs"
          f"{', fsync disabled in doctor' if args.no_fsync else ''})")
    print(f"{'hosts':>6} {'targets':>8} {'lab up s':>9} {'doctor s':>9} {'peak RSS MB':>12} {'t/t(1)':>7} "
          f"{'exit':>5}  findings")
    for n, targets, start_s, wall, rss_mb, code, summary in rows:
        counts = ", ".join(f"{k} {v}" for k, v in summary.items() if isinstance(v, int) and v) if summary else "-"
        print(f"{n:>6} {targets:>8} {start_s:>9.1f} {wall:>9.2f} {rss_mb:>12.0f} {wall / base:>7.2f} {code:>5}  {counts}")
    print(f"t({rows[-1][0]})/t({rows[0][0]}) = {rows[-1][3] / base:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
