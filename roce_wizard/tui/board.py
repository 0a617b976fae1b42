"""What the wizard shows, as plain values: findings by stage, row (host) and column (check), the
progress of each target in the run under way, and the fix plans in scope of a selection.

Pure: no Textual here, so the screens stay thin and the tests can read the board directly.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum

from roce_wizard.engine import RunReport, TargetRun
from roce_wizard.engine import applicable as check_applies
from roce_wizard.engine.fixes import Planned
from roce_wizard.model import Finding, LoadedCheck, Safety, Stage, Status, Target
from roce_wizard.records.report import PENDING_SYMBOL

# the stages the rail shows, in the Stage order; preflight first so RW001-RW003 have a home too
RAIL = (Stage.PREFLIGHT, Stage.BIOS, Stage.ESXI, Stage.VSPHERE, Stage.GUEST, Stage.LINUX, Stage.SWITCH,
        Stage.VALIDATE)
# worst first: a cell with several subjects shows the worst of them
WORST_FIRST = (Status.FAIL, Status.ERROR, Status.WARN, Status.SKIP, Status.PASS)
RUNNING, NOT_APPLICABLE = "…", "·"
# cell states beside the statuses: a pass on a staged value (waits for a reboot), and a skip caused by another
# check's failure (blocked) as opposed to a check that does not apply; counts() keys them apart
PENDING, BLOCKED = "pending", "blocked"


class Progress(str, Enum):
    """Where a target is in the run under way (the engine's connect/probe events)."""

    WAITING = "waiting"
    CONNECTED = "connected"
    UNREACHABLE = "unreachable"
    DONE = "done"


@dataclass
class TargetProgress:
    state: Progress = Progress.WAITING
    probes: int = 0
    message: str = ""


@dataclass
class Board:
    targets: list[Target]
    checks: dict[str, LoadedCheck]
    stage_of: dict[str, Stage]
    report: RunReport | None = None
    plans: list[Planned] = field(default_factory=list)
    progress: dict[str, TargetProgress] = field(default_factory=dict)
    running: set[str] = field(default_factory=set)  # targets in the run under way
    # (row, check) -> findings and finding -> its run, rebuilt when the report changes: every redraw
    # asks about every cell, so these must not walk all findings each time. The report indexed is held
    # (not its id): a new report may reuse a freed one's id, and cells fill in per target, often.
    _indexed: RunReport | None = field(default=None, repr=False)
    _cells: dict[tuple[str, str], list[Finding]] = field(default_factory=dict, repr=False)
    _runs: dict[int, TargetRun] = field(default_factory=dict, repr=False)
    _rows: dict[str, set[str]] = field(default_factory=dict, repr=False)
    _columns: dict[Stage, list[str]] = field(default_factory=dict, repr=False)

    def _index(self) -> None:
        if self._indexed is self.report and self.report is not None:
            return
        self._cells, self._runs, self._rows = {}, {}, {}
        if self.report is not None:
            for run in self.report.runs:
                for f in run.findings:
                    self._runs[id(f)] = run
            for f in self.report.findings:
                self._cells.setdefault((f.target, f.check), []).append(f)
                self._rows.setdefault(f.check, set()).add(f.target)
        self._indexed = self.report

    def take_run(self, run: TargetRun) -> None:
        """One target's findings, arriving while the run goes on: they replace that target's earlier ones
        (provisional ones too) at once; the rest of the picture stays until the run's report replaces it."""
        if self.report is None:
            self.report = RunReport(self.checks, self.targets, [run], self.stage_of, 0.0, 0.0)
        else:
            self.report = merge_reports(self.report, RunReport(self.report.checks, self.targets, [run],
                                                               self.stage_of, self.report.started, 0.0),
                                        keep_cross=True)
        self.running.discard(run.target.name)

    # ------------------------------------------------------------------ structure

    def stages(self) -> list[Stage]:
        """Rail stages: the six of the wizard plus preflight, and linux when the playbook has it."""
        used = {self.stage_of.get(code, c.meta.stage) for code, c in self.checks.items()}
        always = {Stage.BIOS, Stage.ESXI, Stage.VSPHERE, Stage.GUEST, Stage.SWITCH, Stage.VALIDATE}
        return [s for s in RAIL if s in always or s in used]

    def columns(self, stage: Stage) -> list[str]:
        if stage not in self._columns:  # the checks and their stages are fixed for the app's life
            self._columns[stage] = [code for code, c in self.checks.items()
                                    if self.stage_of.get(code, c.meta.stage) is stage]
        return self._columns[stage]

    def rows(self, stage: Stage) -> list[str]:
        """Hosts of the grid: who the stage's findings are about (a vCenter's findings name hosts and VMs),
        else the targets its checks apply to while nothing is known yet."""
        codes = set(self.columns(stage))
        order = {t.name: i for i, t in enumerate(self.targets)}
        self._index()
        named = {row for code in codes for row in self._rows.get(code, ())}
        if not named:
            named = {t.name for t in self.targets for code in codes if check_applies(self.checks[code], t)}
        return sorted(named, key=lambda n: (order.get(n, len(order)), n))

    # ------------------------------------------------------------------ findings

    def findings(self) -> list[Finding]:
        return self.report.findings if self.report is not None else []

    def cell_findings(self, row: str, code: str) -> list[Finding]:
        self._index()
        return self._cells.get((row, code), [])

    def cell_status(self, row: str, code: str) -> Status | None:
        return worst(f.status for f in self.cell_findings(row, code))

    def cell_pending(self, row: str, code: str) -> bool:
        """The cell passes, but on a value that waits for a reboot (engine/pending.py): ⟳, never ✓."""
        found = self.cell_findings(row, code)
        return worst(f.status for f in found) is Status.PASS and any(f.pending_reboot for f in found)

    def cell_blocked(self, row: str, code: str) -> Finding | None:
        """The finding that says what blocks the cell, when every finding of it is a skip caused by another
        check (not a check that does not apply)."""
        found = self.cell_findings(row, code)
        if found and all(f.status is Status.SKIP and f.blocked_by for f in found):
            return found[0]
        return None

    def cell_text(self, row: str, code: str) -> str:
        if self._row_running(row, code):
            return RUNNING
        status = self.cell_status(row, code)
        if status is None:
            return NOT_APPLICABLE
        return PENDING_SYMBOL if self.cell_pending(row, code) else status.symbol

    def _row_running(self, row: str, code: str) -> bool:
        if not self.running:
            return False
        if row in self.running:
            return True
        # a vCenter's findings are about hosts and VMs: they are re-judged while the vCenter runs
        run = self.run_of_row(row, code)
        return run is not None and run.target.name in self.running

    def counts(self, stage: Stage) -> dict[Status | str, int]:
        """Cells (host × check) per status: what the rail shows. A pending cell counts under PENDING, not
        PASS; BLOCKED counts the SKIP cells that another check's failure blocks (a subset of SKIP)."""
        out: dict[Status | str, int] = {s: 0 for s in Status} | {PENDING: 0, BLOCKED: 0}
        for row in self.rows(stage):
            for code in self.columns(stage):
                status = self.cell_status(row, code)
                if status is None:
                    continue
                out[PENDING if self.cell_pending(row, code) else status] += 1
                if status is Status.SKIP and self.cell_blocked(row, code) is not None:
                    out[BLOCKED] += 1
        return out

    def run_of(self, finding: Finding) -> TargetRun | None:
        self._index()
        return self._runs.get(id(finding))

    def run_of_row(self, row: str, code: str) -> TargetRun | None:
        found = self.cell_findings(row, code)
        return self.run_of(found[0]) if found else None

    # ------------------------------------------------------------------ fixes

    def plans_in(self, stage: Stage, row: str | None = None, code: str | None = None) -> list[Planned]:
        """Fix plans for a cell (row and code), a row (host), a column (check) or the whole stage."""
        columns = set(self.columns(stage))
        return [p for p in self.plans if p.plan.check in columns
                and (code is None or p.plan.check == code)
                and (row is None or row in (p.plan.target, p.target.name))]


def worst(statuses: Iterable[Status]) -> Status | None:
    present = set(statuses)
    return next((s for s in WORST_FIRST if s in present), None)


def merge_reports(old: RunReport | None, new: RunReport, *, keep_cross: bool = False) -> RunReport:
    """A re-verification of some targets folded into the full picture: their runs replace the old
    ones; cross-target judgements come from the re-verification when it made any (`keep_cross`: one
    target's findings mid-run, which has none yet)."""
    if old is None:
        return new
    fresh = {run.target.name: run for run in new.runs}
    runs = [fresh.pop(run.target.name, run) for run in old.runs] + list(fresh.values())
    cross = old.cross_target if keep_cross or not new.cross_target else new.cross_target
    return RunReport(old.checks, old.targets, runs, old.stage_of, new.started, new.duration_s, new.run_dir, cross)


def runnable(planned: list[Planned], include_disruptive: bool) -> list[Planned]:
    """What a confirmed preview may run: plans the engine allowed, disruptive ones only if confirmed twice."""
    out = []
    for p in planned:
        allowed = p.allowed and (p.plan.safety is Safety.SAFE or (include_disruptive and p.plan.safety is Safety.DISRUPTIVE))
        out.append(Planned(p.plan, p.target, allowed, p.waits_for))
    return out
