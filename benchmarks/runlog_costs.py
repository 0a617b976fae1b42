"""What the run log costs doctor, without the lab's noise: replay one recorded run's writes and reads.

    python3 benchmarks/runlog_costs.py RUN_DIR [--repeat 5] [--scale 4]

RUN_DIR is a doctor run directory (e.g. `doctor_scale.py --keep`'s WORK/state/runs/<run>, or
`profile_scale.py`'s OUT/state/runs/<run>). Per repeat, into a new temporary state dir, with this checkout's code
(PYTHONPATH picks the checkout): every raw record written again through `RunLog.raw` (the run's own targets
and probe names, in the order of its files), its results.json through `RunLog.write_results`, and its events
folded into the reboot ledger (`ledger_from_events`, what every doctor look does; `--scale N` repeats the
events under N renamed copies of each target, to show how the fold grows with the hosts). Prints the
process's CPU seconds (user + system) of each part, the median over the repeats. Not run by pytest.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import tempfile
from pathlib import Path


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    from roce_wizard.records.ledger import ledger_from_events
    from roce_wizard.records.runlog import RunLog, read_events

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scale", type=int, default=1)
    args = ap.parse_args()
    records = [(f.parent.name, f.stem, json.loads(f.read_text(encoding="utf-8")))
               for f in sorted((args.run_dir / "raw").rglob("*.json"))]
    results = json.loads((args.run_dir / "results.json").read_text(encoding="utf-8"))
    events = read_events(args.run_dir)
    scaled = [{**e, "target": f"{e['target']}-{k}"} if isinstance(e.get("target"), str) else e
              for k in range(args.scale) for e in events]
    times: dict[str, list[float]] = {"raw": [], "results": [], "ledger": []}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="rw-runlog-costs-") as tmp:
            run = RunLog.create(Path(tmp))
            t = cpu()
            for target, probe, record in records:
                run.raw(target, probe, record)
            times["raw"].append(cpu() - t)
            t = cpu()
            run.write_results(results)
            times["results"].append(cpu() - t)
            run.close()
        t = cpu()
        ledger_from_events(scaled, {})
        times["ledger"].append(cpu() - t)
    print(f"{len(records)} raw records, {len(results.get('results', []))} results, {len(scaled)} events "
          f"(x{args.scale}); median CPU s of {args.repeat}:")
    for part, values in times.items():
        print(f"  {part:8s} {statistics.median(values):.3f}  (min {min(values):.3f}, max {max(values):.3f})")


if __name__ == "__main__":
    main()
