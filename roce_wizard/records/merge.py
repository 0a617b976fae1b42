"""Many nodes' run directories as ONE report (`roce-wizard analyze DIR…`, `roce-wizard export --run DIR…`).

A site fans `roce-wizard doctor --local` out with srun, Ansible or pdsh: every node leaves a run directory
(its target is the node's hostname) and the directories are collected (rsync, scp, Ansible's fetch) into a
tree such as runs/<host>/runs/<run id>/. `run_roots` finds the run directories (and unpacked support bundles)
under the paths given; `merge_runs` reads each one's results (results.json, or its events in their final
state, as analyze and export read one run) and keeps, PER TARGET, the newest run that judged it: an older
run of the same target is superseded, and said so. The summary counts every kept row; the exit code follows
doctor's rules (a failure: 1; else something that could not run: 3; else 0), and a run whose results cannot
be read at all counts as could-not-run. Nothing is re-judged: the report is what each node concluded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roce_wizard.analyze_runs import is_run_root, results_document
from roce_wizard.model import Evidence, Finding, Stage, Status

CROSS_TARGET = "all targets"  # judgements over a run's targets together (the validate stage's skips)


@dataclass
class RunRead:
    """One run directory as the merge read it."""

    path: Path
    run_id: str
    kind: str | None
    started: float  # the run-start event's time; the directory's name when the journal is torn
    targets: list[str]  # the targets it planned (or, failing that, those its rows name)
    rows: list[dict[str, Any]]
    duration_s: float = 0.0
    error: str | None = None  # why nothing could be read
    used_for: list[str] = field(default_factory=list)
    superseded_for: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "run_id": self.run_id, "kind": self.kind, "started": self.started,
                "targets": self.targets, "used_for": self.used_for, "superseded_for": self.superseded_for,
                **({"error": self.error} if self.error else {})}


@dataclass
class Merged:
    runs: list[RunRead]
    rows: list[dict[str, Any]]
    superseded: list[dict[str, str]]  # {target, run, by}: an older run of a target, and the run kept instead

    @property
    def targets(self) -> list[str]:
        return sorted({r.get("target") or "" for r in self.rows} - {"", CROSS_TARGET})

    @property
    def unreadable(self) -> list[RunRead]:
        return [r for r in self.runs if r.error]

    def counts(self) -> dict[str, int]:
        counts = {s.value: 0 for s in Status}
        for row in self.rows:
            status = row.get("status")
            counts[status if status in counts else "error"] += 1
        return counts

    @property
    def exit_code(self) -> int:
        """doctor's rules over every kept row; an unreadable run is something that could not run."""
        counts = self.counts()
        return 1 if counts["fail"] else 3 if counts["error"] or self.unreadable else 0

    def to_dict(self) -> dict[str, Any]:
        """doctor's JSON contract (version, results, summary) and what the merge read (`merged`)."""
        return {"version": 1, "results": self.rows,
                "summary": {**self.counts(), "targets": len(self.targets),
                            "checks": len({r.get("check") for r in self.rows}), "exit_code": self.exit_code,
                            "runs": len(self.runs), "superseded": len(self.superseded)},
                "merged": {"runs": [r.to_dict() for r in self.runs], "superseded": self.superseded}}


def run_roots(paths: Iterable[Path]) -> list[Path]:
    """The run directories (and unpacked bundles) a path is or holds; one inside another counts once (outer)."""
    found: list[Path] = []
    for path in paths:
        if not path.is_dir():
            continue
        if is_run_root(path):
            found.append(path)
            continue
        for d in sorted(p for p in path.rglob("*") if p.is_dir()):
            if is_run_root(d) and not any(r in d.parents for r in found):
                found.append(d)
    unique: dict[Path, Path] = {}
    for p in found:
        unique.setdefault(p.resolve(), p)
    return list(unique.values())


def _events_head(run: Path) -> list[dict[str, Any]]:
    from roce_wizard.records.runlog import read_events  # noqa: PLC0415

    return read_events(run) if (run / "events.jsonl").is_file() else []


def _started_from_name(name: str) -> float:
    import time  # noqa: PLC0415

    try:
        return time.mktime(time.strptime(name[:15], "%Y%m%d-%H%M%S"))
    except ValueError:
        return 0.0


def read_run(run: Path) -> RunRead:
    events = _events_head(run)
    manifest: dict[str, Any] = {}
    if (run / "bundle.json").is_file():
        try:
            manifest = json.loads((run / "bundle.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            manifest = {}
    run_id = str(manifest.get("run_id") or run.name)
    start = next((e for e in events if e.get("type") == "run-start"), {})
    kind = start.get("kind") or manifest.get("kind")
    started = start.get("ts") if isinstance(start.get("ts"), (int, float)) else _started_from_name(run_id)
    planned = next((e.get("targets") for e in events if e.get("type") in ("plan", "inventory")
                    and isinstance(e.get("targets"), list)), None)
    ended = next((e for e in reversed(events) if e.get("type") == "run-end"), {})
    results = results_document(run)
    if results is None:
        return RunRead(run, run_id, kind, started, [str(t) for t in planned or []], [],
                       error="its results could not be read (no results.json, no readable events)")
    rows = [r for r in results.get("results") or [] if isinstance(r, dict)]
    if not rows:  # a doctor killed before its first verdict: its node was not checked, which is not a pass
        return RunRead(run, run_id, kind, started, [str(t) for t in planned or []], [],
                       error="it recorded no verdict (stopped before the checks ended?)")
    named = list(dict.fromkeys(str(r.get("target") or "") for r in rows) if planned is None else planned)
    targets = [str(t) for t in named if t and t != CROSS_TARGET]
    duration = (results.get("summary") or {}).get("duration_s") or ended.get("duration_s") or 0.0
    return RunRead(run, run_id, kind, float(started), targets, rows, duration_s=float(duration))


def merge_runs(roots: Iterable[Path]) -> Merged:
    """Per target, the rows of the newest run that judged it (runs ordered by start time, then path)."""
    runs = sorted((read_run(r) for r in roots), key=lambda r: (r.started, str(r.path)))
    newest: dict[str, RunRead] = {}
    for run in runs:
        for target in dict.fromkeys(str(row.get("target") or "") for row in run.rows):
            newest[target] = run  # later runs come later: the last one wins
    superseded = []
    for run in runs:
        for target in dict.fromkeys(str(row.get("target") or "") for row in run.rows):
            winner = newest[target]
            if winner is run:
                run.used_for.append(target)
            elif target != CROSS_TARGET:  # each run's own cross-target rows: the newest run's are kept, quietly
                run.superseded_for.append(target)
                superseded.append({"target": target, "run": str(run.path), "by": str(winner.path)})
    rows = [row for run in runs for row in run.rows if newest[str(row.get("target") or "")] is run]
    rows.sort(key=row_order)
    return Merged(runs, rows, superseded)


_STAGES = {s.value: i for i, s in enumerate(Stage)}


def row_order(row: dict[str, Any]) -> tuple[int, str, str]:
    """Stage (in the order doctor runs them), target, check."""
    return _STAGES.get(str(row.get("stage")), len(_STAGES)), str(row.get("target") or ""), str(row.get("check") or "")


def finding_of(row: dict[str, Any]) -> Finding:
    """A results row as the Finding doctor's terminal report renders (evidence and root cause kept)."""
    try:
        status = Status(row.get("status"))
    except ValueError:
        status = Status.ERROR
    blocked = row.get("blocked_by") if isinstance(row.get("blocked_by"), dict) else None
    evidence = [Evidence(**{k: v for k, v in e.items() if k in Evidence.__dataclass_fields__})
                for e in row.get("evidence") or [] if isinstance(e, dict)]
    return Finding(check=str(row.get("check") or "?"), status=status, summary=str(row.get("summary") or ""),
                   target=str(row.get("target") or ""), observed=row.get("observed"), expected=row.get("expected"),
                   evidence=evidence, fix=row.get("fix"), subject=row.get("subject"),
                   blocked_by=(str(blocked.get("check")), str(blocked.get("target"))) if blocked else None,
                   details=row.get("details") if isinstance(row.get("details"), dict) else {})


@dataclass
class _MergedReport:
    """What records.report.render_terminal reads of a run's report, for the merged rows."""

    findings: list[Finding]
    checks: dict[str, Any]
    stage_of: dict[str, Stage]
    targets: list[str]
    duration_s: float
    exit_code: int
    run_dir: str | None = None

    def counts(self) -> dict[str, int]:
        counts = {s.value: 0 for s in Status}
        for f in self.findings:
            counts[f.status.value] += 1
        return counts


def render_merged(merged: Merged, checks: dict[str, Any], console: Any, verbose: bool = False) -> None:
    """The merge's header (which run each target's verdicts come from, what was superseded), then doctor's
    own terminal report of the kept rows. The time shown is the longest run's (the nodes ran side by side)."""
    from rich.markup import escape  # noqa: PLC0415

    from roce_wizard.records.report import render_terminal  # noqa: PLC0415
    from roce_wizard.textsafe import printable  # noqa: PLC0415

    def say(text: str) -> None:
        console.print(text, highlight=False, soft_wrap=True)

    used = [r for r in merged.runs if r.used_for]
    def n(count: int, noun: str) -> str:
        return f"{count} {noun}" + ("" if count == 1 else "s")

    say(f"[bold]merged {len(merged.runs)} run {'directory' if len(merged.runs) == 1 else 'directories'}[/]: "
        f"{n(len(merged.targets), 'target')} from {n(len(used), 'run')}"
        + (f", {len(merged.superseded)} superseded by a newer run of the same target" if merged.superseded else ""))
    pairs: dict[tuple[str, str], list[str]] = {}
    for item in merged.superseded:  # one line per (older run, newer run), however many targets they share
        pairs.setdefault((item["run"], item["by"]), []).append(item["target"])
    for (older, newer), names in pairs.items():
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        say(f"  [dim]{escape(printable(shown))}: {escape(printable(older))} superseded by the newer "
            f"{escape(printable(newer))}[/]")
    for run in merged.unreadable:
        say(f"  [magenta]?[/] {escape(printable(str(run.path)))}: {escape(printable(run.error or ''))}")
    say("")
    stage_of: dict[str, Stage] = {}
    for row in merged.rows:
        try:
            stage_of[str(row.get("check"))] = Stage(row.get("stage"))
        except ValueError:
            stage_of[str(row.get("check"))] = Stage.PREFLIGHT
    report = _MergedReport([finding_of(r) for r in merged.rows], checks, stage_of, merged.targets,
                           max((r.duration_s for r in used), default=0.0), merged.exit_code)
    render_terminal(report, console, verbose=verbose)  # type: ignore[arg-type]


def left_out(paths: Iterable[Path], roots: list[Path]) -> list[Path]:
    """Files among the paths that belong to no run directory (the merge does not read them)."""
    resolved = [r.resolve() for r in roots]
    out = []
    for path in paths:
        files = [path] if not path.is_dir() else sorted(p for p in path.rglob("*") if p.is_file())
        for f in files:
            if f.name == "latest" or f.name.startswith("."):
                continue  # a state dir's pointer to its newest run; hidden files
            if not any(r == f.resolve() or r in f.resolve().parents for r in resolved):
                out.append(f)
    return out
