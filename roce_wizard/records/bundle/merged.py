"""One support bundle of many nodes' runs (`roce-wizard export --run DIR…`; roce_wizard.records.merge).

    roce-wizard-bundle-merged-<n>runs-<newest run id>/
        bundle.json          manifest: what was merged (run, targets, kept for / superseded for) and every file
        summary.md / .html   the MERGED findings (records.merge), versions and reboot ledgers of every run
        results.json         the merged report (doctor's JSON contract plus `merged`)
        runs/<target>-<run id>/…   each run exactly as its own bundle holds it (results, events, raw/, versions,
                             reboot ledger, inventory), its own summary left out

Each run goes through build_bundle, so redaction is the single-run export's, unchanged: every run's secrets
are removed and its members checked for leaks before anything is assembled. The merged results are built from
those redacted results.json files, never from the originals. `--anonymize` is refused here: pseudonyms are
consistent within one run's bundle only, so two runs' "host-01" could be two different machines.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from roce_wizard import __version__
from roce_wizard.records.bundle.build import MANIFEST, Bundle, Member, build_bundle
from roce_wizard.records.bundle.collect import BundleError
from roce_wizard.records.bundle.render import render_html, render_markdown
from roce_wizard.records.merge import RunRead, merge_runs, row_order


def _label(run: RunRead, taken: set[str]) -> str:
    from roce_wizard.records.runlog import file_name  # noqa: PLC0415

    base = file_name(f"{run.targets[0]}-{run.run_id}" if len(run.targets) == 1 else run.run_id)
    label, n = base, 1
    while label in taken:
        n += 1
        label = f"{base}~{n}"
    taken.add(label)
    return label


def build_merged_bundle(roots: list[Path], *, inventory_path: Path | None = None, anonymize: bool = False) -> Bundle:
    """Every run's own (redacted, leak-checked) bundle under runs/, and the merged report on top. Writes nothing."""
    if anonymize:
        raise BundleError("--anonymize exports one run at a time (pseudonyms are consistent within one run's "
                          "bundle only): export each run with --run RUN_DIR --anonymize")
    merged = merge_runs(roots)
    for run in merged.unreadable:
        raise BundleError(f"{run.path}: {run.error}")
    members: list[Member] = []
    said: dict[str, list[str]] = {}  # a run's note -> the runs that said it
    sanitized: dict[str, Any] = {}  # run path -> its redacted results rows, in the merge's own order
    versions: dict[str, Any] = {"hosts": {}}
    ledger: dict[str, Any] = {"hosts": {}}
    taken: set[str] = set()
    labels: dict[str, str] = {}
    for run in merged.runs:
        one = build_bundle(run.path, inventory_path=inventory_path)
        label = labels[str(run.path)] = _label(run, taken)
        by_name = {m.name: m for m in one.members}
        sanitized[str(run.path)] = json.loads(by_name["results.json"].data)
        run_versions = json.loads(by_name["versions.json"].data)
        versions = {**run_versions, "hosts": {**versions["hosts"], **run_versions.get("hosts", {})}}
        ledger["hosts"].update(json.loads(by_name["reboot-ledger.json"].data).get("hosts") or {})
        members += [Member(f"runs/{label}/{m.name}", m.data, m.redactions) for m in one.members
                    if m.name not in ("summary.md", "summary.html")]
        for note in one.notes:
            said.setdefault(note, []).append(label)
    notes = [f"{note} ({labels_[0]})" if len(labels_) == 1 else f"{note} ({len(labels_)} runs: {labels_[0]} …)"
             for note, labels_ in said.items()]  # 500 nodes' one note is said once
    # the merged rows, taken from the redacted results (same runs, same order, same choice per target)
    kept = {(str(r.path), t) for r in merged.runs for t in r.used_for}
    rows = [row for run in merged.runs for row in sanitized[str(run.path)].get("results") or []
            if isinstance(row, dict) and (str(run.path), str(row.get("target") or "")) in kept]
    document = merged.to_dict()
    document["results"] = sorted(rows, key=row_order)
    for entry in document["merged"]["runs"]:
        entry["bundle_dir"] = f"runs/{labels[entry['path']]}"
    newest = merged.runs[-1].run_id if merged.runs else "none"
    run_id = f"merged-{len(merged.runs)}runs-{newest}"
    meta = {"run_id": run_id, "kind": "merged", "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "anonymized": False}
    top = {"results.json": json.dumps(document, indent=1, ensure_ascii=False, default=str) + "\n",
           "summary.md": render_markdown(meta, document, versions, ledger),
           "summary.html": render_html(meta, document, versions, ledger)}
    members = [Member(name, text.encode("utf-8")) for name, text in top.items()] + members
    manifest = {"format": "roce-wizard-bundle", "version": 1, "tool": f"roce-wizard {__version__}", **meta,
                "notes": notes, "merged": document["merged"],
                "files": [{"path": m.name, "bytes": len(m.data), "redacted": m.redactions} for m in members]}
    members.insert(0, Member(MANIFEST, (json.dumps(manifest, indent=1, ensure_ascii=False) + "\n").encode("utf-8")))
    return Bundle(run_id, roots[0], members, False, notes)

