"""How `roce-wizard doctor --skip RW6` scales with the cluster: one practice lab per size (1, 64, 256 ESXi hosts).

For each size N: `roce-wizard lab up --detach --hosts N` starts the lab as its own process (every target on
127.0.0.1), `roce-wizard doctor -i LAB/inventory.yaml --skip RW6 --json` runs against it as a child of this
script, and `roce-wizard lab down` stops it. Measured per size:

- doctor: wall time, CPU (user + system) and peak RSS, from os.wait4() on the doctor process itself (all three
  include the interpreter's start and imports); "run s" is the duration doctor reports itself (without them);
- the lab: CPU used while doctor ran (the lab process and its children, e.g. the vCenter simulator,
  read from /proc/PID/stat before and after), so a slow simulator is never mistaken for a slow tool;
- doctor's results: how many, how many could not run (status error), how many of those timed out;
- t(N)/t(1): doctor's wall time over the 1-host run's (the smallest size's when 1 is not asked for).

    python3 benchmarks/doctor_scale.py [--sizes 1,64,256] [--hosts 1000] [--command-delay 0.2] [--json FILE]

Not run by pytest; see benchmarks/README.md. Linux only (the lab's CPU comes from /proc).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
LOOPBACK = "127.0.0.1"
# an error result that says it waited: a command's timeout (engine), a connect/handshake/login/answer deadline
TIMEOUT_TEXT = re.compile(r"timed out|\bwithin [0-9.]+ ?s\b|timeout", re.IGNORECASE)

# ------------------------------------------------------------------------------------------------ pure parts


def parse_sizes(sizes: str, extra: list[int] | None = None) -> list[int]:
    """'1,64,256' plus --hosts values: sorted, unique, each >= 1 (ValueError otherwise)."""
    values = [int(s) for s in sizes.split(",") if s.strip()] + list(extra or [])
    if not values or any(v < 1 for v in values):
        raise ValueError(f"host counts must be >= 1: {values}")
    return sorted(set(values))


def count_results(doc: dict[str, Any]) -> dict[str, int]:
    """From doctor's JSON: results, could_not_run (status error), timeouts (errors that say they waited)."""
    rows = doc.get("results") or []
    errors = [r for r in rows if r.get("status") == "error"]
    timeouts = [r for r in errors if TIMEOUT_TEXT.search(json.dumps([r.get("summary"), r.get("evidence"),
                                                                      r.get("details")], default=str))]
    return {"results": len(rows), "could_not_run": len(errors), "timeouts": len(timeouts)}


def with_ratios(rows: list[dict[str, Any]]) -> tuple[int | None, list[dict[str, Any]]]:
    """Each row plus 'ratio' = doctor_wall_s / the baseline's (the 1-host row, else the smallest size that
    ran). Returns (baseline hosts, rows); rows without a wall time get ratio None."""
    ran = [r for r in rows if r.get("doctor_wall_s")]
    if not ran:
        return None, [{**r, "ratio": None} for r in rows]
    base = next((r for r in ran if r["hosts"] == 1), min(ran, key=lambda r: r["hosts"]))
    return base["hosts"], [{**r, "ratio": r["doctor_wall_s"] / base["doctor_wall_s"] if r.get("doctor_wall_s")
                            else None} for r in rows]


COLUMNS = [  # header, key, format
    ("hosts", "hosts", "{:d}"), ("targets", "targets", "{:d}"), ("lab up s", "lab_up_s", "{:.1f}"),
    ("wall s", "doctor_wall_s", "{:.2f}"), ("run s", "doctor_duration_s", "{:.2f}"),
    ("CPU s", "doctor_cpu_s", "{:.2f}"),
    ("CPU/target ms", "cpu_per_target_ms", "{:.0f}"), ("RSS MB", "doctor_peak_rss_mb", "{:.0f}"),
    ("lab CPU s", "lab_cpu_s", "{:.2f}"), ("results", "results", "{:d}"), ("timeouts", "timeouts", "{:d}"),
    ("not run", "could_not_run", "{:d}"), ("exit", "exit_code", "{:d}"), ("t/t(1)", "ratio", "{:.2f}"),
]


def format_table(rows: list[dict[str, Any]]) -> str:
    """The per-size table (doctor's numbers, then the lab's CPU separately, then the ratio to 1 host);
    a missing number prints as '-', a size that failed gets its reason under the table."""
    base, rows = with_ratios(rows)
    headers = [h if key != "ratio" else f"t/t({base if base is not None else 1})" for h, key, _ in COLUMNS]
    cells = [[("-" if row.get(key) is None else fmt.format(row[key])) for _, key, fmt in COLUMNS] for row in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(cell, widths, strict=True)) for cell in cells]
    lines += [f"  {row['hosts']} hosts: {row['problem']}" for row in rows if row.get("problem")]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ processes


def proc_cpu(pid: int) -> float | None:
    """CPU seconds (user + system, incl. reaped children) of PID from /proc/PID/stat; None if gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime


def process_tree(root: int) -> list[int]:
    """ROOT and its live descendants (the lab and the vCenter simulator it runs)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


def tree_cpu(root: int) -> dict[int, float]:
    return {pid: cpu for pid in process_tree(root) if (cpu := proc_cpu(pid)) is not None}


def cpu_delta(before: dict[int, float], after: dict[int, float]) -> float:
    return sum(cpu - before.get(pid, 0.0) for pid, cpu in after.items())


def read_env_file(path: Path) -> dict[str, str]:
    """lab.env's NAME=VALUE lines (the lab's generated credentials; never printed)."""
    env = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            name, sep, value = line.strip().partition("=")
            if sep and not name.startswith("#") and name.isidentifier():
                env[name] = value
    return env


def non_loopback(inventory: Path) -> list[str]:
    """Every address/url host in the inventory that is not 127.0.0.1 (the benchmark refuses to run then)."""
    text = inventory.read_text(encoding="utf-8")
    found = re.findall(r"^\s*-?\s*address:\s*['\"]?([^\s'\"#]+)", text, re.MULTILINE)
    found += re.findall(r"https?://([^/:\s'\"]+)", text)
    return sorted({a for a in found if a != LOOPBACK})


class Bench:
    """One benchmark run: a work dir, the labs it started (to stop them whatever happens)."""

    def __init__(self, work: Path, command_delay: float) -> None:
        self.work, self.command_delay = work, command_delay
        path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))  # measure this checkout
        self.env = {**os.environ, "PYTHONPATH": path,
                    "ROCE_WIZARD_STATE_DIR": str(work / "state"), "NO_COLOR": "1"}
        self.live: set[Path] = set()

    def cli(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "roce_wizard.cli", *args]

    def lab_up(self, hosts: int, lab_dir: Path) -> int:
        """Start the lab detached; return its pid. The launcher runs in its own session so Ctrl-C reaches only
        this script, which then stops the lab."""
        if running := self._lab_pids(lab_dir):
            raise RuntimeError(f"a lab is already running in {lab_dir} (pid {running[0]}); not starting another")
        self.live.add(lab_dir)
        argv = self.cli("lab", "up", "--detach", "--hosts", str(hosts), "--dir", str(lab_dir),
                        "--command-delay", str(self.command_delay))
        launcher = subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        try:
            out, _ = launcher.communicate(timeout=max(120.0, hosts * 2.0))
        except BaseException:
            launcher.kill()
            launcher.wait()
            raise
        pid = self._lab_pids(lab_dir)
        if launcher.returncode != 0 or not pid:
            tail = " | ".join(out.decode(errors="replace").strip().splitlines()[-3:])
            raise RuntimeError(f"`lab up` exited {launcher.returncode}: {tail}")
        return pid[0]

    def _lab_pids(self, lab_dir: Path) -> list[int]:
        """The lab serving LAB_DIR: lab.pid, or a `lab up ... --dir LAB_DIR --detached-child` process (a lab whose
        launcher was stopped before it wrote lab.pid)."""
        pids = []
        try:
            pids.append(int((lab_dir / "lab.pid").read_text().strip()))
        except (OSError, ValueError):
            pass
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    argv = (entry / "cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                if b"--detached-child" in argv and str(lab_dir).encode() in argv:
                    pids.append(int(entry.name))
        return [p for p in dict.fromkeys(pids) if proc_cpu(p) is not None]

    def lab_down(self, lab_dir: Path) -> None:
        """`lab down`; if that fails, SIGTERM (then SIGKILL) the lab processes of LAB_DIR found by _lab_pids."""
        if lab_dir not in self.live:
            return
        if (lab_dir / "lab.pid").exists():
            subprocess.run(self.cli("lab", "down", "--dir", str(lab_dir)), env=self.env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, check=False)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = self._lab_pids(lab_dir)
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and self._lab_pids(lab_dir):
                time.sleep(0.1)
        if self._lab_pids(lab_dir):
            print(f"doctor_scale: could not stop the lab in {lab_dir}; pids {self._lab_pids(lab_dir)}",
                  file=sys.stderr)
        else:
            self.live.discard(lab_dir)

    def doctor(self, lab_dir: Path) -> dict[str, Any]:
        env = {**self.env, **read_env_file(lab_dir / "lab.env")}
        out_path = lab_dir.parent / f"{lab_dir.name}.doctor.json"
        err_path = lab_dir.parent / f"{lab_dir.name}.doctor.err"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            started = time.monotonic()
            proc = subprocess.Popen(self.cli("doctor", "-i", str(lab_dir / "inventory.yaml"), "--skip", "RW6",
                                             "--json"), env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
            try:
                _, status, usage = os.wait4(proc.pid, 0)
            except BaseException:
                proc.kill()
                proc.wait()
                raise
            proc.returncode = os.waitstatus_to_exitcode(status)
            wall = time.monotonic() - started
        try:
            doc = json.loads(out_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = {}
        row = {"doctor_wall_s": wall, "doctor_user_s": usage.ru_utime, "doctor_sys_s": usage.ru_stime,
               "doctor_cpu_s": usage.ru_utime + usage.ru_stime, "doctor_peak_rss_mb": usage.ru_maxrss / 1024,
               "exit_code": proc.returncode, "doctor_duration_s": (doc.get("summary") or {}).get("duration_s"),
               "targets": (doc.get("summary") or {}).get("targets"), **count_results(doc)}
        if not doc:
            tail = " | ".join(err_path.read_text(errors="replace").strip().splitlines()[-2:])
            row["problem"] = f"doctor printed no JSON (exit {proc.returncode}): {tail}"
        return row

    def run_size(self, hosts: int) -> dict[str, Any]:
        lab_dir = self.work / f"lab-{hosts}"
        row: dict[str, Any] = {"hosts": hosts, "command_delay_s": self.command_delay}
        t0 = time.monotonic()
        try:
            pid = self.lab_up(hosts, lab_dir)
            row["lab_up_s"] = time.monotonic() - t0
            if bad := non_loopback(lab_dir / "inventory.yaml"):
                raise RuntimeError(f"the lab's inventory names addresses other than {LOOPBACK}: {bad}")
            before = tree_cpu(pid)
            row["lab_up_cpu_s"] = sum(before.values())
            row.update(self.doctor(lab_dir))
            after = tree_cpu(pid)
            row["lab_cpu_s"] = cpu_delta(before, after)
            row["lab_processes"] = len(after)
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            row["problem"] = str(exc)
        finally:
            t1 = time.monotonic()
            self.lab_down(lab_dir)
            row["lab_down_s"] = time.monotonic() - t1
        if row.get("targets") and row.get("doctor_cpu_s") is not None:
            row["cpu_per_target_ms"] = row["doctor_cpu_s"] / row["targets"] * 1000
        return row


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,64,256", help="ESXi host counts, comma list (default 1,64,256)")
    parser.add_argument("--hosts", type=int, action="append", default=[], metavar="N",
                        help="add a size, e.g. --hosts 1000 (repeatable)")
    parser.add_argument("--command-delay", type=float, default=0.0, metavar="S",
                        help="passed to `lab up --command-delay`: seconds each simulated SSH command takes")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the raw numbers as JSON to FILE")
    parser.add_argument("--lab-dir", type=Path, metavar="DIR",
                        help="work directory (labs, doctor output); default a new temporary one, removed at the end")
    parser.add_argument("--reuse-lab-dir", action="store_true", help="accept a --lab-dir that is not empty")
    parser.add_argument("--keep", action="store_true", help="keep the temporary work directory (doctor's JSON)")
    args = parser.parse_args(argv)
    try:
        sizes = parse_sizes(args.sizes, args.hosts)
    except ValueError as exc:
        parser.error(str(exc))
    if args.command_delay < 0:
        parser.error("--command-delay must be >= 0")
    if args.lab_dir is not None:
        work = args.lab_dir.resolve()
        if work.exists() and (not work.is_dir() or (any(work.iterdir()) and not args.reuse_lab_dir)):
            parser.error(f"--lab-dir {work} exists and is not an empty directory (pass --reuse-lab-dir to use it)")
        work.mkdir(parents=True, exist_ok=True, mode=0o700)
    else:
        work = Path(tempfile.mkdtemp(prefix="rw-doctor-scale-"))

    for sig in (signal.SIGTERM, signal.SIGHUP):  # stop the lab on these as on Ctrl-C (unless ignored, e.g. nohup)
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, _interrupt)
    bench = Bench(work, args.command_delay)
    rows: list[dict[str, Any]] = []
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    print(f"doctor --skip RW6 on the healthy lab: sizes {','.join(map(str, sizes))}, command delay "
          f"{args.command_delay:g}s, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; work dir {work}",
          flush=True)
    code = 0
    try:
        for hosts in sizes:
            row = bench.run_size(hosts)
            rows.append(row)
            print(f"  {hosts} hosts: lab up {row.get('lab_up_s', 0):.1f}s, doctor {row.get('doctor_wall_s', 0):.1f}s, "
                  f"lab down {row.get('lab_down_s', 0):.1f}s" + (f" - {row['problem']}" if row.get("problem") else ""),
                  file=sys.stderr, flush=True)
            code = code or (1 if row.get("problem") else 0)
    except KeyboardInterrupt:
        print("doctor_scale: interrupted; stopping the lab", file=sys.stderr, flush=True)
        code = 130
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not skip the lab's shutdown
        for lab_dir in list(bench.live):
            bench.lab_down(lab_dir)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if bench.live:
            code = code or 1
        elif args.lab_dir is None and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if rows:
        print(format_table(rows))
    if args.json is not None:
        _, with_ratio = with_ratios(rows)
        raw = {"started": started, "command_delay_s": args.command_delay, "cpus": os.cpu_count(), "sizes": with_ratio}
        args.json.write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
