"""Profile one `doctor --skip RW6` run on a healthy lab of N hosts: the lab process with py-spy (sampling, from
outside: the lab runs as it always does) and doctor under cProfile; print the top functions of both by self and
by cumulative time.

    python3 benchmarks/profile_scale.py --hosts 64 --out /tmp/prof64     # needs `pip install py-spy`
    python3 benchmarks/profile_scale.py --summarize-only --out /tmp/prof64

Writes OUT/lab.collapsed (py-spy's raw collapsed stacks), OUT/doctor.prof (pstats) and OUT/summary.txt.
Not run by pytest; see benchmarks/README.md and benchmarks/PROFILE.md. Linux only, everything on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import io
import os
import pstats
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from doctor_scale import read_env_file

# leaf frames that are a thread waiting, not working (py-spy on a loaded machine counts some of them as active)
IDLE = {"_worker", "ThreadedChildWatcher._do_waitpid", "EpollSelector.select", "Condition.wait", "Event.wait"}


# frames every sample of the event loop passes through: left out of the cumulative list
ENTRY = ("(<frozen runpy>)", "(typer/main.py)", "(typer/core.py)", "(typer/_click/core.py)", "(roce_wizard/cli.py)",
         "(roce_wizard/lab/control.py)", "(asyncio/runners.py)", "(asyncio/base_events.py)", "(threading.py)")


def _frame(text: str) -> str:
    """'func (path/file.py:LINE)' -> 'func (path/file.py)': one entry per function, not per line."""
    name, sep, where = text.partition(" (")
    return f"{name} ({where.split(':')[0].replace(str(REPO) + '/', '')})" if sep else text


def collapsed_top(path: Path, top: int = 15) -> str:
    """Self and cumulative sample counts per function from py-spy's collapsed stacks ('a;b;c N' lines)."""
    own: Counter[str] = Counter()
    cum: Counter[str] = Counter()
    total = 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [_frame(f) for f in stack.split(";") if not f.startswith(("process ", "thread "))]
        if not frames or frames[-1].split(" (")[0] in IDLE:
            continue
        total += n
        own[frames[-1]] += n
        for f in set(frames):
            if not f.endswith(ENTRY):
                cum[f] += n
    out = [f"{total} samples with the GIL, idle waits left out"]
    for title, counter in (("self", own), ("cumulative", cum)):
        out.append(f"\ntop {top} by {title} (% of samples):")
        out.extend(f"  {100 * n / max(total, 1):5.1f}%  {name}" for name, n in counter.most_common(top))
    return "\n".join(out)


def pstats_top(path: Path, top: int = 15) -> str:
    out = []
    for key in ("tottime", "cumulative"):
        buf = io.StringIO()
        pstats.Stats(str(path), stream=buf).strip_dirs().sort_stats(key).print_stats(top)
        text = buf.getvalue()
        out.append(f"\ntop {top} by {key}:\n" + text[text.find("   ncalls"):].rstrip())
    return "\n".join(out)


def run(hosts: int, out: Path, rate: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    lab_dir = out / "lab"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
           "ROCE_WIZARD_STATE_DIR": str(out / "state")}
    cli = [sys.executable, "-m", "roce_wizard.cli"]
    subprocess.run([*cli, "lab", "up", "--detach", "--hosts", str(hosts), "--dir", str(lab_dir)], env=env,
                   check=True, stdout=subprocess.DEVNULL)
    spy = None
    try:
        pid = int((lab_dir / "lab.pid").read_text())
        spy = subprocess.Popen(["py-spy", "record", "-p", str(pid), "-r", str(rate), "-f", "raw", "--gil",
                                "-o", str(out / "lab.collapsed")], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        denv = {**env, **read_env_file(lab_dir / "lab.env")}
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out / "doctor.prof"), "-m", "roce_wizard.cli",
                        "doctor", "-i", str(lab_dir / "inventory.yaml"), "--skip", "RW6", "--json"], env=denv, check=False,
                       stdout=(out / "doctor.json").open("w"), stderr=(out / "doctor.err").open("w"))
        print(f"doctor under cProfile: {time.monotonic() - t0:.1f}s wall", file=sys.stderr)
    finally:
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)
        subprocess.run([*cli, "lab", "down", "--dir", str(lab_dir)], env=env, stdout=subprocess.DEVNULL,
                       check=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=64)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--rate", type=int, default=200, help="py-spy samples per second")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--summarize-only", action="store_true")
    args = ap.parse_args()
    if not args.summarize_only:
        if shutil.which("py-spy") is None:
            print("py-spy is not installed: pip install py-spy", file=sys.stderr)
            return 2
        run(args.hosts, args.out, args.rate)
    text = ("== lab (py-spy) ==\n" + collapsed_top(args.out / "lab.collapsed", args.top)
            + "\n\n== doctor (cProfile) ==" + pstats_top(args.out / "doctor.prof", args.top))
    (args.out / "summary.txt").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
