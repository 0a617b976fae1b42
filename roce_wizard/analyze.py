"""Offline judgement of pasted tool outputs, run directories and support bundles.

Files in one directory are taken as one machine's outputs: an `mlxconfig -e query` alone judges
RW205–RW207 and pending reboot; with a module-params file beside it, RW208 too.
A run directory's raw/<target>/<probe>.json records are read with the probe's own parser.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roce_wizard.engine import analyzable, evaluate_check
from roce_wizard.model import Facts, Finding, LoadedCheck, Policy, Status
from roce_wizard.parsers import PARSERS, ParseError
from roce_wizard.parsers.base import parser_bug
from roce_wizard.parsers.detect import UNKNOWN, strip_annotations
from roce_wizard.parsers.session import SESSION, Part, Reading, read_paste
from roce_wizard.probes import PROBES
from roce_wizard.untrusted import MAX_FILE_BYTES, InputError, check_argument, extract_archive, read_bounded

__all__ = ["InputError", "analyze_paths", "exit_code_of", "judge_group", "read_all", "read_one"]

BUNDLE_MANIFEST = "bundle.json"  # what marks a support bundle's top directory (roce_wizard.bundle.MANIFEST)
MAX_BYTES = MAX_FILE_BYTES  # a pasted output larger than this is not a tool output we read


@dataclass
class AnalyzedFile:
    path: str
    kind: str
    facts: dict[str, Any] | None
    group: str
    raw: str = ""
    error: str | None = None
    findings: list[Finding] = field(default_factory=list)
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
            "findings": [
                {"check": f.check, "status": f.status.value, "summary": f.summary, "subject": f.subject,
                 "observed": f.observed, "expected": f.expected, "fix": f.fix}
                for f in self.findings
            ],
        }


def _iter_files(paths: Iterable[Path], tmp: Path) -> Iterable[tuple[Path, str]]:
    """(file, group) pairs; a directory's files form one group; a .tar.gz bundle is unpacked."""
    for path in paths:
        if path.is_dir():
            # a support bundle (roce-wizard export): only its raw/ holds tool outputs; the rest is its report
            bundles = {m.parent for m in path.rglob(BUNDLE_MANIFEST)}
            for f in sorted(p for p in path.rglob("*") if p.is_file()):
                if f.name in ("results.json", "events.jsonl", "latest") or f.name.startswith("."):
                    continue
                if any(b in f.parents and b / "raw" not in f.parents for b in bundles):
                    continue
                yield f, str(f.parent)
        elif path.name.endswith((".tar.gz", ".tgz")):
            # checked header by header, then only files and directories written, all under tmp (InputError: exit 2)
            dest = Path(tempfile.mkdtemp(dir=tmp)) / path.name
            extract_archive(path, dest)
            yield from _iter_files([dest], tmp)
        else:
            yield path, str(path.parent)


def read_one(path: Path, group: str) -> AnalyzedFile:
    """The file's first reading (a run record or a one-machine paste has exactly one)."""
    return read_all(path, group)[0]


def read_all(path: Path, group: str) -> list[AnalyzedFile]:
    """One AnalyzedFile per machine the file speaks for: a pdsh/srun paste of two hosts or ranks gives two,
    each in a group of its own (its facts are never joined with another host's)."""
    try:  # regular files only (a FIFO is never waited on), at most MAX_BYTES of it
        text = read_bounded(path, MAX_BYTES).decode("utf-8", errors="replace")
    except InputError as exc:  # TooLarge says where reading stopped
        return [AnalyzedFile(str(path), UNKNOWN, None, group, error=str(exc).removeprefix(f"{path}: "))]
    try:
        return _judge_text(path, group, text)
    except RecursionError:  # JSON (or any structure) nested deeper than a parser can walk
        return [AnalyzedFile(str(path), UNKNOWN, None, group,
                             error="nested too deeply to read (thousands of levels): not a tool output roce-wizard "
                                   "reads")]


def _from_reading(path: Path, group: str, r: Reading) -> AnalyzedFile:
    return AnalyzedFile(str(path), r.kind, r.facts, group if r.label is None else f"{group} [{r.label}]",
                        raw=r.text, error=r.error, source=r.label, parts=r.parts)


def _judge_text(path: Path, group: str, text: str) -> list[AnalyzedFile]:
    kind = None
    if path.suffix == ".json":
        record = _run_record(text)
        if record is not None:  # a run-log raw record: the probe that ran it names the kind
            probe = path.stem.split(".", 1)[0]
            text = record
            kind = PROBES[probe].parser if probe in PROBES else None
    text = strip_annotations(text)
    if kind is None:  # a pasted text: terminal residue, launcher prefixes and prompts are read by read_paste
        return [_from_reading(path, group, r) for r in read_paste(text)]
    try:
        facts = PARSERS[kind].parse(text)
    except ParseError as exc:
        return [AnalyzedFile(str(path), kind, None, group, raw=text, error=str(exc))]
    except Exception as exc:  # a parser's own bug: this file is unreadable, the other files are still judged
        return [AnalyzedFile(str(path), kind, None, group, raw=text, error=parser_bug(exc, PARSERS[kind].parse))]
    return [AnalyzedFile(str(path), kind, facts, group, raw=text)]


def _run_record(text: str) -> str | None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    if isinstance(data, dict) and "command" in data and "stdout" in data and data.get("exit_status") == 0:
        return str(data["stdout"])
    return None


def analyze_paths(paths: Iterable[str | Path], checks: dict[str, LoadedCheck], policy: Policy) -> list[AnalyzedFile]:
    """Raises InputError (exit 2) for an argument that is not a file or directory, or a hostile archive."""
    paths = list(paths)
    for p in paths:
        check_argument(Path(p))
    with tempfile.TemporaryDirectory(prefix="roce-wizard-analyze-") as tmp:
        files = [a for f, group in _iter_files([Path(p) for p in paths], Path(tmp)) for a in read_all(f, group)]
    groups: dict[str, list[AnalyzedFile]] = {}
    for f in files:
        groups.setdefault(f.group, []).append(f)
    for members in groups.values():
        judge_group(members, checks, policy)
    return files


def judge_group(members: list[AnalyzedFile], checks: dict[str, LoadedCheck], policy: Policy) -> None:
    """Evaluate every check whose facts the group holds; file each finding under the files it read."""
    data: dict[str, Any] = {}
    raw: dict[str, str] = {}
    owners: dict[str, list[AnalyzedFile]] = {}
    for f in members:
        # two files of one kind in a directory: the later one wins for judging, both keep their facts
        for kind, facts, text in f.judged():
            data[kind] = facts
            raw[kind] = text
            if not any(o is f for o in owners.setdefault(kind, [])):
                owners[kind].append(f)
    kinds = set(data)
    for check in checks.values():
        if not analyzable(check, kinds):
            continue
        findings = evaluate_check(check, Facts(data=dict(data), target=None, raw=raw), policy)
        findings = [f for f in findings if not (f.status is Status.SKIP and "not applicable" in f.summary)]
        used = [k for k in (*check.meta.probes, *check.meta.optional_probes) if k in kinds]
        filed: list[AnalyzedFile] = []  # a session holding two of the kinds gets the findings once
        for owner in (o for kind in used for o in owners[kind]):
            if not any(o is owner for o in filed):
                filed.append(owner)
                owner.findings.extend(findings)


def exit_code_of(files: list[AnalyzedFile]) -> int:
    from roce_wizard.engine import exit_code_for  # noqa: PLC0415

    return int(exit_code_for(f for a in files for f in a.findings))
