"""Offline judgement of pasted tool outputs, run directories, support bundles and NVIDIA sysinfo-snapshots.

Files in one directory are taken as one machine's outputs: an `mlxconfig -e query` alone judges
RW205–RW207 and pending reboot; with a module-params file beside it, RW208 too. Unless they say otherwise:
files naming different hosts (a pasted prompt, the file name) are never judged together, and two files of
one kind are each judged on its own (roce_wizard.analyze_hosts).
A run directory (or a support bundle) is read by its layout (roce_wizard.analyze_runs): raw/<target>/<probe>.json
records with the probe's own parser, a failed command or refused connection as what it is, switch session logs,
and the run's own results.json as findings (a `fix` run's events in their final state); members of an archive
are named archive:path-inside-it. A sysinfo-snapshot folder or .tgz is read by its layout (roce_wizard.sysinfo).
Any other text is a paste (roce_wizard.parsers.session.read_paste): terminal residue and launcher prefixes
stripped, one entry per host or rank a pdsh/srun/mpirun prefix names (`source`, a group of its own), a whole
terminal session read as kind `session` whose parts are judged as that file's facts. A parser's own bug
(anything but ParseError) is that file's error, never the end of the analysis.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from roce_wizard import sysinfo
from roce_wizard.analyze_hosts import by_host, combinations, prompt_host
from roce_wizard.analyze_runs import (
    RUN_RECORD,
    RUN_RESULTS,
    SESSION_LOG,
    findings_of,
    is_run_root,
    record_output,
    results_document,
    session_failure,
)
from roce_wizard.engine import analyzable, evaluate_check
from roce_wizard.model import Facts, Finding, LoadedCheck, Policy, Status
from roce_wizard.parsers import PARSERS, ParseError
from roce_wizard.parsers.base import parser_bug
from roce_wizard.parsers.detect import UNKNOWN, detect, strip_annotations
from roce_wizard.parsers.session import SESSION, Part, Reading, read_paste
from roce_wizard.probes import PROBES
from roce_wizard.untrusted import MAX_FILE_BYTES, InputError, check_argument, extract_archive, read_bounded

__all__ = ["InputError", "analyze_paths", "exit_code_of", "judge_group", "read_all", "read_one", "read_source"]

MAX_BYTES = MAX_FILE_BYTES  # a pasted output larger than this is not a tool output we read


@dataclass
class AnalyzedFile:
    path: str  # what the user sees: the path given, or archive:member (never a temporary extraction path)
    kind: str
    facts: dict[str, Any] | None
    group: str
    raw: str = ""
    error: str | None = None
    findings: list[Finding] = field(default_factory=list)
    host: str | None = None  # the machine a prompt or the file name names (roce_wizard.analyze_hosts)
    item: str | None = None  # a per-item probe's record (esxi_sriovnic_vf_list.vmnic2.json): its item
    source: str | None = None  # the rank or host a launcher prefix named (`node01: `, `[1,0]<stdout>:`)
    parts: list[Part] = field(default_factory=list)  # a `session`'s commands, judged as one machine's outputs

    def judged(self) -> list[tuple[str, dict[str, Any], str]]:
        """(kind, facts, raw) this file gives the checks: a session gives each part it could read."""
        # `partial` facts (a filtered output whose lines cannot be tied to a device) are shown, never judged
        if self.kind == SESSION:
            return [(p.kind, p.facts, p.text) for p in self.parts if p.facts is not None and not p.facts.get("partial")]
        return [(self.kind, self.facts, self.raw)] if self.facts is not None and not self.facts.get("partial") else []

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            **({"source": self.source} if self.source else {}),
            "kind": self.kind,
            "facts": self.facts,
            "error": self.error,
            **({"host": self.host} if self.host else {}),
            "findings": [
                {"check": f.check, "status": f.status.value, "summary": f.summary, "subject": f.subject,
                 "observed": f.observed, "expected": f.expected, "fix": f.fix,
                 **({"target": f.target} if f.target else {}),
                 **({"files": f.details["files"]} if "files" in f.details else {})}
                for f in self.findings
            ],
        }


@dataclass
class Source:
    """One thing to judge: a file, or a part of one (a sysinfo-snapshot command's output for one device)."""

    path: Path
    name: str  # what the user sees
    group: str  # the sources judged together
    text: str | None = None  # already read (a part)
    kind: str | None = None  # the kind its container names
    host: str | None = None
    results: bool = False  # a run's own results (results.json, or its events)
    session: bool = False  # a switch session log the run recorded
    error: str | None = None  # nothing to read here, and why (a snapshot's "Could not run" part)


def _shown(base: str, root: Path, f: Path, archive: bool) -> str:
    rel = f.relative_to(root).as_posix()
    return f"{base}:{rel}" if archive else str(Path(base) / rel)


def _iter_files(paths: Iterable[Path], tmp: Path) -> Iterable[Source]:
    """What to judge under each argument; a .tar.gz (bundle, sysinfo-snapshot) is unpacked under tmp."""
    for path in paths:
        if path.is_dir():
            yield from _dir_sources(path, str(path), tmp, archive=False)
        elif path.name.endswith((".tar.gz", ".tgz")):
            # checked header by header, then only files and directories written, all under tmp (InputError: exit 2)
            dest = Path(tempfile.mkdtemp(dir=tmp)) / "x"
            extract_archive(path, dest)
            yield from _dir_sources(dest, str(path), tmp, archive=True)
        else:
            yield Source(path, str(path), str(path.parent))


def _dir_sources(root: Path, base: str, tmp: Path, archive: bool) -> Iterable[Source]:
    """A directory's files, each directory one group; run dirs, bundles and sysinfo-snapshots by their layout."""
    dirs = [root, *sorted(p for p in root.rglob("*") if p.is_dir())]
    snapshots = [d for d in dirs if sysinfo.is_snapshot(d)]
    runs = [d for d in dirs if is_run_root(d)]
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        if f.name == "latest" or f.name.startswith(".") or any(s in f.parents for s in snapshots):
            continue
        shown = _shown(base, root, f, archive)
        run = next((r for r in runs if r in f.parents), None)
        if run is not None:
            yield from _run_member(run, f, shown)
        elif f.name not in ("results.json", "events.jsonl"):
            yield Source(f, shown, shown.rsplit("/", 1)[0] if "/" in shown else base)
    for snap in snapshots:
        yield from _snapshot_sources(snap, _shown(base, root, snap, archive) if snap != root else base)


def _run_member(run: Path, f: Path, shown: str) -> Iterable[Source]:
    """A run dir's (or a bundle's) member: its tool outputs, and its own results; its reports are not outputs."""
    rel = f.relative_to(run)
    if rel.parts[0] == "raw":
        yield Source(f, shown, shown.rsplit("/", 1)[0])
    elif rel.parts[0] == "sessions":  # one switch's session log: its own machine
        yield Source(f, shown, shown, session=True)
    elif rel.as_posix() == "results.json" or (rel.as_posix() == "events.jsonl" and not (run / "results.json").exists()):
        yield Source(f, shown, shown, results=True)


def _snapshot_sources(root: Path, shown: str) -> Iterable[Source]:
    host = sysinfo.host_of(root)
    for part in sysinfo.parts(root):
        yield Source(root / part.name.split("#", 1)[0], f"{shown}/{part.name}", shown, text=part.text,
                     kind=part.kind, host=host, error=part.error)


def read_one(path: Path, group: str, name: str | None = None) -> AnalyzedFile:
    """The file's first reading (a run record or a one-machine paste has exactly one)."""
    return read_source(Source(path, name or str(path), group))[0]


def read_all(path: Path, group: str) -> list[AnalyzedFile]:
    """Every reading of one file (one per host or rank a pasted pdsh/srun/mpirun output names)."""
    return read_source(Source(path, str(path), group))


def read_source(src: Source) -> list[AnalyzedFile]:
    """One AnalyzedFile per machine the source speaks for: a pdsh/srun paste of two hosts or ranks gives two,
    each in a group of its own (its facts are never joined with another host's); anything else gives one."""
    if src.results:
        return [_run_results(src)]
    if src.error is not None:
        return [AnalyzedFile(src.name, src.kind or UNKNOWN, None, src.group, error=src.error, host=src.host)]
    text = src.text
    if text is None:
        try:  # regular files only (a FIFO is never waited on), at most MAX_BYTES of it
            text = read_bounded(src.path, MAX_BYTES).decode("utf-8", errors="replace")
        except InputError as exc:  # TooLarge says where reading stopped
            return [AnalyzedFile(src.name, UNKNOWN, None, src.group,
                                 error=str(exc).removeprefix(f"{src.path}: "))]
    # the host a prompt names is taken from the text as pasted: read_paste strips the prompts it cuts at
    host = src.host or prompt_host(text)
    try:
        judged = _judge_text(src, text)
    except RecursionError:  # JSON (or any structure) nested deeper than a parser can walk
        judged = [AnalyzedFile(src.name, UNKNOWN, None, src.group,
                               error="nested too deeply to read (thousands of levels): not a tool output "
                                     "roce-wizard reads")]
    for a in judged:
        if a.source is None:  # a launcher's host or rank is its own group; the prompt is the launching machine's
            a.host = host
    return judged


def _run_results(src: Source) -> AnalyzedFile:
    run = src.path.parent
    results = results_document(run)
    if results is None:
        return AnalyzedFile(src.name, RUN_RESULTS, None, src.group, error="the run's results could not be read")
    summary = results.get("summary") if isinstance(results.get("summary"), dict) else {}
    return AnalyzedFile(src.name, RUN_RESULTS, {"summary": summary}, src.group, findings=findings_of(results))


def _judge_text(src: Source, text: str) -> list[AnalyzedFile]:
    judged = _judge_text_as(src, text)
    stem = src.path.stem.split(".", 1)
    if src.path.suffix == ".json" and len(stem) == 2 and stem[0] in PROBES and PROBES[stem[0]].items is not None:
        for a in judged:
            a.item = stem[1]  # one item of a per-item probe: judged with its siblings, as the run did
    return judged


def _from_reading(src: Source, r: Reading) -> AnalyzedFile:
    return AnalyzedFile(src.name, r.kind, r.facts, src.group if r.label is None else f"{src.group} [{r.label}]",
                        raw=r.text, error=r.error, source=r.label, parts=r.parts)


def _judge_text_as(src: Source, text: str) -> list[AnalyzedFile]:
    path, group, kind = src.path, src.group, src.kind
    if path.suffix == ".json" and src.text is None:
        probe = path.stem.split(".", 1)[0]
        output, why, is_record = record_output(text, probe)
        if is_record:  # a run-log raw record: the probe that ran it names the kind
            kind = PROBES[probe].parser if probe in PROBES else None
            if output is None:
                return [AnalyzedFile(src.name, kind or RUN_RECORD, None, group, error=why)]
            text = output
    text = strip_annotations(text)
    if kind is None and src.session:  # the tool's own transcript: what it records, not "not recognised"
        kind = detect(text).kind
        if kind == UNKNOWN:
            return [AnalyzedFile(src.name, SESSION_LOG, None, group, raw=text, error=session_failure(text))]
    if kind is None:  # a pasted text: terminal residue, launcher prefixes and prompts are read by read_paste
        return [_from_reading(src, r) for r in read_paste(text)]
    if kind == UNKNOWN:
        return [AnalyzedFile(src.name, UNKNOWN, None, group, raw=text)]
    try:
        facts = PARSERS[kind].parse(text)
    except ParseError as exc:
        return [AnalyzedFile(src.name, kind, None, group, raw=text, error=str(exc))]
    except Exception as exc:  # a parser's own bug: this file is unreadable, the other files are still judged
        return [AnalyzedFile(src.name, kind, None, group, raw=text, error=parser_bug(exc, PARSERS[kind].parse))]
    return [AnalyzedFile(src.name, kind, facts, group, raw=text)]


def analyze_paths(paths: Iterable[str | Path], checks: dict[str, LoadedCheck], policy: Policy) -> list[AnalyzedFile]:
    """Raises InputError (exit 2) for an argument that is not a file or directory, or a hostile archive."""
    paths = list(paths)
    for p in paths:
        check_argument(Path(p))
    with tempfile.TemporaryDirectory(prefix="roce-wizard-analyze-") as tmp:
        files = [a for src in _iter_files([Path(p) for p in paths], Path(tmp)) for a in read_source(src)]
    groups: dict[str, list[AnalyzedFile]] = {}
    for f in files:
        groups.setdefault(f.group, []).append(f)
    for members in groups.values():
        judge_group(members, checks, policy)
    return files


def judge_group(members: list[AnalyzedFile], checks: dict[str, LoadedCheck], policy: Policy) -> None:
    """Evaluate every check whose facts the group holds, per machine the group names; file each finding
    under the files it read. Two files of one kind are judged each on its own, never one over the other."""
    for unit in by_host(members):
        _judge_unit(unit, checks, policy)


@dataclass(frozen=True)
class _Read:
    """One reading of one kind a file gives the checks (a session gives one per part it could read)."""

    owner: AnalyzedFile
    facts: Any
    raw: str


def _picks(reads: list[_Read]) -> list[tuple[_Read, ...]]:
    """The ways to read one kind: each reading on its own, or, for a run's per-item records (one VF list per
    vmnic), all of them together as {item: facts} the way the run itself held them."""
    items = [r.owner.item for r in reads]
    if len(reads) > 1 and None not in items and len(set(items)) == len(items):
        return [tuple(reads)]
    return [(r,) for r in reads]


def _facts_of(pick: tuple[_Read, ...]) -> tuple[Any, str]:
    if len(pick) == 1 and pick[0].owner.item is None:
        return pick[0].facts, pick[0].raw
    return {r.owner.item: r.facts for r in pick}, "\n".join(r.raw for r in pick)


def _judge_unit(members: list[AnalyzedFile], checks: dict[str, LoadedCheck], policy: Policy) -> None:
    by_kind: dict[str, list[_Read]] = {}
    for f in members:
        if f.kind in (RUN_RESULTS, RUN_RECORD):
            continue
        for kind, facts, raw in f.judged():  # a session's parts count as that file's facts, kind by kind
            by_kind.setdefault(kind, []).append(_Read(f, facts, raw))
    picks = {k: _picks(rs) for k, rs in by_kind.items()}
    kinds = set(by_kind)
    single = {k: ps[0] for k, ps in picks.items() if len(ps) == 1}
    for check in checks.values():
        if not analyzable(check, kinds):
            continue
        used = [k for k in dict.fromkeys((*check.meta.probes, *check.meta.optional_probes)) if k in kinds]
        doubled = any(len(picks[k]) > 1 for k in used)
        for combo in combinations(picks, used):
            chosen = {**single, **dict(zip(used, combo))}
            read = {k: _facts_of(pick) for k, pick in chosen.items()}
            data, raw = {k: v[0] for k, v in read.items()}, {k: v[1] for k, v in read.items()}
            findings = evaluate_check(check, Facts(data=data, target=None, raw=raw), policy)
            findings = [f for f in findings if not (f.status is Status.SKIP and "not applicable" in f.summary)]
            owners: list[AnalyzedFile] = []  # a session holding two of the kinds gets the findings once
            for r in (r for pick in combo for r in pick):
                if not any(o is r.owner for o in owners):
                    owners.append(r.owner)
            if doubled:  # say which files: another file of the same kind says something else
                findings = [replace(f, details={**f.details, "files": [o.path for o in owners]}) for f in findings]
            for owner in owners:
                owner.findings.extend(findings)


def exit_code_of(files: list[AnalyzedFile]) -> int:
    from roce_wizard.engine import exit_code_for  # noqa: PLC0415

    return int(exit_code_for(f for a in files for f in a.findings))
