"""The support bundle (`roce-wizard export`): one run's evidence as a .tar.gz for a support ticket.

    roce-wizard-bundle-<run id>/
        bundle.json          manifest: tool version, run, files, what was redacted (counts, never values)
        summary.md           the findings by stage; validate tables; versions; reboot ledger
        summary.html         the same as one self-contained page (inline CSS, incast plot as inline SVG)
        results.json         what doctor printed (or, for a run without one, rebuilt from its finding events)
        events.jsonl         the run's journal
        raw/<target>/…       every recorded command output (what `analyze` judges), sessions/ when present
        versions.json        tool, Python, platform; per host ESXi build, firmware, driver, OFED
        reboot-ledger.json   per host: pending reboots and reboot history
        inventory.yaml       the inventory as roce-wizard resolved it, credentials as references only

Secrets never reach the archive. Every file goes through the same redaction (roce_wizard.records.bundle.redact): the values the
inventory resolves as secrets (plaintext passwords, the env vars and keyring entries it references, secret-named
options, dotenv files beside it such as a lab's lab.env, the SSH key file's lines), PEM private key blocks,
`password=`/`token:`/`secret`/`community` forms, switch-config secrets per vendor (roce_wizard.switch_secrets),
bearer/basic auth and URL userinfo. The manifest counts, per file, what was redacted in it. Before anything is
written each member is checked byte by byte for every known secret; one left means no bundle (BundleError), not a
leaky one.

`anonymize=True` (roce_wizard.records.bundle.anonymize) also replaces hostnames, IPv4/IPv6 addresses (perftest's decimal GIDs
included), MACs, GUIDs, UUIDs, serial numbers, home directories and site directories with pseudonyms that are
consistent across every file (same input, same pseudonym; MAC, GUID and EUI-64 GID spellings of one address map
alike), keep their syntax (so `analyze` still parses the outputs) and keep structure readable: esxi-01, guest-02,
10.0.1.11 in the same pseudo subnet as its neighbours.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from roce_wizard import __version__
from roce_wizard.analyze_runs import results_from_events
from roce_wizard.records.bundle.anonymize import Anonymizer
from roce_wizard.records.bundle.collect import (
    BundleError,
    load_inventory_at,
    read_json,
    reboot_ledger,
    run_events,
    versions,
)
from roce_wizard.records.bundle.redact import Redactor
from roce_wizard.records.bundle.render import render_html, render_markdown
from roce_wizard.records.bundle.secrets import inventory_document, secret_values

MANIFEST = "bundle.json"


@dataclass
class Member:
    name: str  # path inside the bundle's top directory
    data: bytes
    redactions: dict[str, int] = field(default_factory=dict)


@dataclass
class Bundle:
    run_id: str
    run_dir: Path
    members: list[Member]
    anonymized: bool
    notes: list[str] = field(default_factory=list)

    @property
    def top(self) -> str:
        return f"roce-wizard-bundle-{self.run_id}"

    def default_name(self) -> str:
        return f"{self.top}.tar.gz"

    def redaction_total(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for m in self.members:
            for k, n in m.redactions.items():
                total[k] = total.get(k, 0) + n
        return total

    def tar_bytes(self, mtime: float | None = None) -> bytes:
        stamp = int(mtime if mtime is not None else time.time())
        buf = io.BytesIO()
        # gzip without a file name or host in its header; tar entries owned by nobody in particular
        with gzip.GzipFile(fileobj=buf, mode="wb", mtime=stamp, filename="") as gz, \
                tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            dirs: set[str] = set()
            for member in self.members:
                parts = member.name.split("/")[:-1]
                for i in range(len(parts) + 1):
                    d = "/".join([self.top, *parts[:i]])
                    if d not in dirs:
                        dirs.add(d)
                        info = tarfile.TarInfo(d)
                        info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o700, stamp
                        tar.addfile(info)
                info = tarfile.TarInfo(f"{self.top}/{member.name}")
                info.size, info.mode, info.mtime = len(member.data), 0o600, stamp
                tar.addfile(info, io.BytesIO(member.data))
        return buf.getvalue()

    def write(self, path: Path) -> Path:
        """Write the .tar.gz (0600) atomically: a temporary file beside it, then a rename."""
        data = self.tar_bytes()
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise BundleError(f"cannot write {path}: {exc.strerror or exc}") from None
        return path


def check_writable(path: Path) -> None:
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise BundleError(f"-o {path}: is a directory")
    if not parent.is_dir():
        raise BundleError(f"-o {path}: no such directory {parent}")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise BundleError(f"-o {path}: not writable")


def _transform(name: str, text: str, fn: Callable[[Any, str | None], Any]) -> str:
    """Apply `fn(value, key)` to a JSON document's values (or to the whole text when it is not JSON)."""
    if name.endswith(".jsonl"):
        lines = []
        for line in text.splitlines():
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                lines.append(fn(line, None))
                continue
            lines.append(json.dumps(fn(obj, None), ensure_ascii=False, default=str))
        return "\n".join(lines) + ("\n" if lines else "")
    if name.endswith(".json"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            return fn(text, None)
        return json.dumps(fn(obj, None), indent=1, ensure_ascii=False, default=str) + "\n"
    return fn(text, None)


def _walk_strings(obj: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(obj, dict):
        return {fn(k) if isinstance(k, str) else k: _walk_strings(v, fn) for k, v in obj.items()}  # keys name hosts too
    if isinstance(obj, list):
        return [_walk_strings(v, fn) for v in obj]
    return fn(obj) if isinstance(obj, str) else obj


def build_bundle(run_dir: Path, *, inventory_path: Path | None = None, anonymize: bool = False) -> Bundle:
    """Everything the bundle holds, in memory, redacted (and anonymized) and checked. Writes nothing."""
    events = run_events(run_dir)
    explicit = inventory_path is not None
    if inventory_path is None:
        recorded = next((e.get("path") for e in events if e.get("type") == "inventory" and e.get("path")), None)
        inventory_path = Path(recorded) if recorded else None
    inventory, notes = load_inventory_at(inventory_path, explicit)
    kind = next((e.get("kind") for e in events if e.get("type") == "run-start"), None)

    sources: dict[str, str] = {}
    results = read_json(run_dir / "results.json")
    if not isinstance(results, dict):
        results = results_from_events(events)
        notes.append("results.json rebuilt from the run's finding events (the run wrote none)")
    sources["results.json"] = json.dumps(results, indent=1, ensure_ascii=False, default=str)
    if (run_dir / "events.jsonl").exists():
        sources["events.jsonl"] = (run_dir / "events.jsonl").read_text(encoding="utf-8", errors="replace")
    for sub in ("raw", "sessions"):
        base = run_dir / sub
        for f in sorted(p for p in base.rglob("*") if p.is_file()) if base.is_dir() else []:
            sources[f"{sub}/{f.relative_to(base).as_posix()}"] = f.read_text(encoding="utf-8", errors="replace")

    kinds = {t.name: t.kind.value for t in inventory.targets} if inventory is not None else {}
    hosts = set(kinds) | {e.get("target") for e in events if e.get("type") == "finding" and e.get("target")}
    sources["versions.json"] = json.dumps(versions(run_dir, kinds), indent=1, ensure_ascii=False)
    sources["reboot-ledger.json"] = json.dumps(reboot_ledger(run_dir, events, hosts), indent=1,
                                               ensure_ascii=False, default=str)
    inventory_counts: dict[str, int] = {}  # what inventory_document redacted before the text redaction runs
    if inventory is not None:
        sources["inventory.yaml"] = ("# the inventory as roce-wizard resolved it (host ranges expanded); credentials "
                                     "are references,\n# every secret value is redacted\n"
                                     + yaml.safe_dump(inventory_document(inventory, inventory_counts), sort_keys=False))

    redactor = Redactor(tuple(secret_values(inventory, inventory_path)))
    counts: dict[str, dict[str, int]] = {}
    cleaned: dict[str, str] = {}
    for name, text in sources.items():
        c: dict[str, int] = dict(inventory_counts) if name == "inventory.yaml" else {}
        if name.endswith(".yaml"):
            cleaned[name] = redactor.text(text, c)
        else:
            cleaned[name] = _transform(name, text, lambda obj, key, c=c: redactor.value(obj, c, key))
        counts[name] = c

    anonymizer: Anonymizer | None = None
    if anonymize:
        anonymizer = Anonymizer()
        if inventory is not None:
            anonymizer.seed_inventory(inventory)
        if inventory_path is not None:
            anonymizer.seed_site_dir(inventory_path.resolve().parent.name)
        for host in sorted(h for h in hosts if h):
            anonymizer.seed_name(host, kinds.get(host, "host"))
        for name in sorted(cleaned):  # raw/<target>/: a target this inventory does not name is a host too
            if name.startswith("raw/") and name.count("/") >= 2:
                anonymizer.seed_name(name.split("/")[1], kinds.get(name.split("/")[1], "host"))
        def collect(s: str) -> str:
            anonymizer.collect(s)
            return s

        for name, text in cleaned.items():
            _transform(name, text, lambda obj, key: _walk_strings(obj, collect))
        anonymizer.freeze()
        home = str(Path.home())

        def anon(s: str) -> str:
            return anonymizer.apply(s.replace(home, "~") if len(home) > 1 else s)

        cleaned = {anon(name): _transform(name, text, lambda obj, key: _walk_strings(obj, anon))
                   for name, text in cleaned.items()}
        counts = {anon(name): c for name, c in counts.items()}

    sanitized_results = json.loads(cleaned["results.json"])
    sanitized_versions = json.loads(cleaned["versions.json"])
    sanitized_ledger = json.loads(cleaned["reboot-ledger.json"])
    meta = {"run_id": run_dir.name, "kind": kind, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "anonymized": anonymize}
    cleaned["summary.md"] = render_markdown(meta, sanitized_results, sanitized_versions, sanitized_ledger)
    cleaned["summary.html"] = render_html(meta, sanitized_results, sanitized_versions, sanitized_ledger)
    counts.setdefault("summary.md", {})
    counts.setdefault("summary.html", {})

    members = [Member(name, text.encode("utf-8"), counts.get(name, {})) for name, text in sorted(cleaned.items())]
    manifest = {
        "format": "roce-wizard-bundle", "version": 1, "tool": f"roce-wizard {__version__}", **meta,
        "notes": notes,
        "secrets_known": len(redactor.literals),
        "files": [{"path": m.name, "bytes": len(m.data), "redacted": m.redactions} for m in members],
    }
    members.insert(0, Member(MANIFEST, (json.dumps(manifest, indent=1, ensure_ascii=False) + "\n").encode("utf-8")))

    # the guarantee: nothing is written while a known secret (or an original name, when anonymized) is left
    for m in members:
        for blob in (m.data, m.name.encode("utf-8")):
            leaks = redactor.leaks(blob)
            if leaks:
                raise BundleError(f"refusing to write the bundle: {leaks[0]} survived redaction in {m.name}")
    if anonymizer is not None:
        left = _originals_left(anonymizer, members)
        if left:
            raise BundleError(f"refusing to write the bundle: an original {left[1]} survived anonymization "
                              f"in {left[0]}")
    return Bundle(run_dir.name, run_dir, members, anonymize, notes)


def _originals_left(anonymizer: Anonymizer, members: list[Member]) -> tuple[str, str] | None:
    originals = anonymizer.originals()
    if not originals:
        return None
    pattern = re.compile(r"(?<![A-Za-z0-9_.-])(" + "|".join(map(re.escape, sorted(originals, key=len, reverse=True)))
                         + r")(?![A-Za-z0-9_-])(?!\.\d)")
    for m in members:
        text = m.data.decode("utf-8", errors="replace")
        for where in (m.name, text):
            for hit in pattern.finditer(where):
                return m.name, f"hostname or address ({len(hit.group(1))} characters)"
    return None


def listing(bundle: Bundle, output: Path) -> list[str]:
    """What `export --list` prints: every file with its size and what was redacted in it."""
    lines = [f"would write {output} (run {bundle.run_id}{', anonymized' if bundle.anonymized else ''}):"]
    for m in bundle.members:
        redacted = ", ".join(f"{n} {k}" for k, n in sorted(m.redactions.items()))
        lines.append(f"  {len(m.data):>9}  {bundle.top}/{m.name}" + (f"   redacted: {redacted}" if redacted else ""))
    total = bundle.redaction_total()
    lines.append(f"{len(bundle.members)} files, {sum(len(m.data) for m in bundle.members)} bytes before compression; "
                 + ("redacted: " + ", ".join(f"{n} {k}" for k, n in sorted(total.items())) if total
                    else "nothing needed redacting"))
    lines += [f"note: {n}" for n in bundle.notes]
    return lines
