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
import html
import io
import json
import os
import platform
import re
import shlex
import sys
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
from roce_wizard.records.bundle.redact import (
    _SECRET_ENV,
    _SECRET_KEY,
    MIN_SECRET_LEN,
    REDACTED,
    Redactor,
    _is_reference,
)

__all__ = ["MIN_SECRET_LEN", "REDACTED", "Anonymizer", "BundleError", "Redactor", "build_bundle", "results_from_events"]

MANIFEST = "bundle.json"


class BundleError(Exception):
    """Bad input (no run, missing run dir, unreadable inventory, unwritable output): exit 2."""


# ---------------------------------------------------------------------------------------- the run


def find_run(run: Path | None, base: Path | None = None) -> Path:
    """The run directory to export: `run` as given, else the newest run under the state dir."""
    from roce_wizard.records.runlog import runs_dir  # noqa: PLC0415

    if run is not None:
        if not run.is_dir():
            raise BundleError(f"--run {run}: no such run directory")
        if not (run / "events.jsonl").exists() and not (run / "raw").is_dir():
            raise BundleError(f"--run {run}: not a run directory (no events.jsonl, no raw/)")
        return run
    root = runs_dir(base)
    # a run's name is its start second and a random suffix: two runs of one second (a doctor, then the fix
    # right after it) are ordered by when their journal was last written, never by the random part
    runs = sorted((p for p in root.iterdir() if p.is_dir()), key=_run_order) if root.is_dir() else []
    latest = root / "latest"
    if latest.is_file():
        named = root / latest.read_text(encoding="utf-8").strip()
        if named.is_dir():
            newest = runs[-1] if runs else named
            return newest if _run_order(newest) > _run_order(named) else named
    if not runs:
        raise BundleError(f"no runs under {root}: run `roce-wizard doctor` first, or pass --run RUN_DIR")
    return runs[-1]


def _run_order(run: Path) -> tuple[str, int]:
    try:
        written = (run / "events.jsonl").stat().st_mtime_ns
    except OSError:
        written = 0
    return run.name[:15], written


def _read_json(path: Path) -> Any:
    from roce_wizard.records.runlog import read_json_file  # noqa: PLC0415

    return read_json_file(path)  # torn (cut mid-character, NUL padding): None, said once


def _events(run_dir: Path) -> list[dict[str, Any]]:
    from roce_wizard.records.runlog import read_events  # noqa: PLC0415

    return read_events(run_dir)



def _key_lines(path: Path) -> list[str]:
    """The body lines of an SSH private key file: if one ever shows up on its own it is redacted too."""
    try:
        text = path.expanduser().read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    if "PRIVATE KEY" not in text:
        return []
    return [ln.strip() for ln in text.splitlines() if len(ln.strip()) >= 16 and not ln.startswith("-----")]


def _dotenv_values(path: Path) -> list[str]:
    out = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        _, _, value = line.removeprefix("export ").partition("=")
        try:
            parts = shlex.split(value)
        except ValueError:
            parts = [value]
        if parts and parts[0]:
            out.append(parts[0])
    return out


def secret_values(inventory: Any | None, inventory_path: Path | None) -> list[str]:
    """Every secret value this machine can resolve for the inventory, to redact by value."""
    from roce_wizard.model import SecretSource  # noqa: PLC0415

    values: list[str] = []
    for target in getattr(inventory, "targets", []) or []:
        ref = target.credentials.password
        if ref is not None:
            if ref.source is SecretSource.PLAINTEXT and ref.value:
                values.append(ref.value)
            elif ref.source is SecretSource.ENV and os.environ.get(ref.name):
                values.append(os.environ[ref.name])
            elif ref.source is SecretSource.KEYRING:
                values.extend(_keyring_value(ref.name))
        if target.credentials.key_file:
            values.extend(_key_lines(Path(target.credentials.key_file)))
        values.extend(_secret_options(target.options))
    # credentials in the environment under a secret-looking name (ESXI_PASSWORD, VC_TOKEN, …)
    values.extend(v for k, v in os.environ.items() if _SECRET_ENV.search(k) and v)
    if inventory_path is not None:  # a dotenv beside the inventory (the practice lab's lab.env is one)
        for name in ("lab.env", ".env"):
            values.extend(_dotenv_values(inventory_path.parent / name))
    return values


def _keyring_value(name: str) -> list[str]:
    service, _, user = name.rpartition("/")
    try:
        import keyring  # noqa: PLC0415

        value = keyring.get_password(service, user)
    except Exception:  # noqa: BLE001 - no keyring, no backend, locked: nothing to redact by value
        return []
    return [value] if value else []


def _secret_options(options: Any, key: str = "") -> list[str]:
    if isinstance(options, dict):
        return [v for k, item in options.items() for v in _secret_options(item, str(k))]
    if isinstance(options, list):
        return [v for item in options for v in _secret_options(item, key)]
    if isinstance(options, str) and key and _SECRET_KEY.search(key) and not _is_reference(options):
        return [options]
    return []


def inventory_document(inventory: Any, counts: dict[str, int] | None = None) -> dict[str, Any]:
    """The inventory as roce-wizard resolved it, host ranges expanded, credentials as references only.
    `counts` learns how many values were redacted (the manifest reports them like any other file's)."""
    from roce_wizard.model import SecretSource  # noqa: PLC0415

    counts = {} if counts is None else counts

    def password(ref: Any) -> Any:
        if ref is None:
            return None
        if ref.source is SecretSource.PLAINTEXT:
            counts["inventory secret"] = counts.get("inventory secret", 0) + 1
            return REDACTED
        if ref.source is SecretSource.PROMPT:
            return "prompt"
        return {ref.source.value: ref.name}

    def options(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: options(v, str(k)) for k, v in value.items()}
        if isinstance(value, list):
            return [options(v, key) for v in value]
        if key and _SECRET_KEY.search(key) and value not in (None, True, False):
            counts["secret field"] = counts.get("secret field", 0) + 1
            return REDACTED
        return value

    targets: dict[str, list[dict[str, Any]]] = {}
    for t in inventory.targets:
        entry: dict[str, Any] = {"name": t.name, "address": t.address}
        if t.port is not None:
            entry["port"] = t.port
        entry["username"] = t.credentials.username
        if t.credentials.password is not None:
            entry["password"] = password(t.credentials.password)
        if t.credentials.key_file:
            entry["key_file"] = t.credentials.key_file  # a path: the key itself never goes in
        for name in ("host", "vm", "device_type"):
            if getattr(t, name):
                entry[name] = getattr(t, name)
        roce = {k: (list(v) if isinstance(v, tuple) else v) for k, v in t.roce.__dict__.items() if v not in (None, ())}
        if roce:
            entry["roce"] = roce
        if t.options:
            entry["options"] = options(dict(t.options))
        targets.setdefault(t.kind.value, []).append(entry)
    return {"policy": inventory.policy.to_dict(), "targets": targets}


# ---------------------------------------------------------------------------------------- versions


def versions(run_dir: Path, kinds: dict[str, str]) -> dict[str, Any]:
    """Tool, Python, platform; per host what its recorded outputs say (\"unknown\" where none did)."""
    from roce_wizard.analyze import read_one  # noqa: PLC0415

    hosts: dict[str, dict[str, Any]] = {}
    raw = run_dir / "raw"
    for target_dir in sorted(p for p in raw.iterdir() if p.is_dir()) if raw.is_dir() else []:
        facts: dict[str, Any] = {}
        for f in sorted(target_dir.glob("*.json")):
            read = read_one(f, str(target_dir))
            if read.facts is not None:
                facts.setdefault(read.kind, read.facts)
        kind = kinds.get(target_dir.name, "")
        if not facts and kind not in ("esxi", "guest", "linux"):
            continue
        hosts[target_dir.name] = _host_versions(facts, kind)
    return {
        "roce_wizard": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "hosts": hosts,
    }


def _host_versions(facts: dict[str, Any], kind: str) -> dict[str, Any]:
    unknown = "unknown"
    out: dict[str, Any] = {"kind": kind or unknown, "esxi_build": unknown, "firmware": unknown,
                           "driver": unknown, "ofed": unknown}
    summary = facts.get("esxi_host_summary") or {}
    if summary.get("product"):
        out["esxi_build"] = summary["product"]
    firmware = sorted({d.get("fw_current") for d in (facts.get("mlxfwmanager") or {}).get("devices", [])
                       if d.get("fw_current")}
                      | {d.get("fw_ver") for d in (facts.get("ibv_devinfo") or {}).get("devices", []) if d.get("fw_ver")})
    if firmware:
        out["firmware"] = ", ".join(firmware)
    vibs = {v.get("name"): v.get("version") for v in (facts.get("esxi_vib_list") or {}).get("vibs", [])}
    drivers = [f"{n} {vibs[n]}" for n in ("nmlx5-core", "nmlx5-rdma") if vibs.get(n)]
    if drivers:
        out["driver"] = ", ".join(drivers)
    elif kind in ("guest", "linux") and facts.get("ofed_info", {}).get("version"):
        out["driver"] = f"mlx5_core (MLNX_OFED {facts['ofed_info']['version']})"
    ofed = facts.get("ofed_info") or {}
    if ofed.get("version"):
        out["ofed"] = f"{ofed.get('flavor') or 'OFED'} {ofed['version']}"
    return out


# ---------------------------------------------------------------------------------------- the ledger


def reboot_ledger(run_dir: Path, events: list[dict[str, Any]], hosts: set[str]) -> dict[str, Any]:
    """The reboot ledger (roce_wizard.reboots) for this run's hosts."""
    from roce_wizard.records.ledger import build_ledger, ledger_from_events  # noqa: PLC0415

    try:
        # under a state dir: every run's events (the ledger spans runs); a run dir elsewhere: its own
        ledger = build_ledger(run_dir.parent.parent) if run_dir.parent.name == "runs" else ledger_from_events(events)
    except Exception as exc:  # noqa: BLE001 - a ledger that cannot be built is reported, the bundle goes on
        return {"source": "roce_wizard.reboots", "error": f"{type(exc).__name__}: {exc}", "hosts": {}}
    return {"source": "roce_wizard.reboots",
            "hosts": {h: entry.to_dict() for h, entry in sorted(ledger.items()) if not hosts or h in hosts}}


# ---------------------------------------------------------------------------------------- reports

_SYMBOL = {"pass": "✓", "warn": "!", "fail": "✗", "error": "?", "skip": "-"}
_STAGES = ("preflight", "bios", "esxi", "vsphere", "guest", "switch", "validate")


def _status_line(summary: dict[str, Any]) -> str:
    ended = f" (final state; the run ended with exit code {summary['exit_code']})" if "exit_code" in summary else ""
    return (f"{summary.get('pass', 0)} passed, {summary.get('warn', 0)} warnings, {summary.get('fail', 0)} failed, "
            f"{summary.get('error', 0)} could not run, {summary.get('skip', 0)} skipped{ended}")


def _by_stage(results: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    rows = results.get("results", [])
    stages = [s for s in _STAGES if any(r.get("stage") == s for r in rows)]
    stages += sorted({r.get("stage") or "other" for r in rows} - set(stages))
    return [(s, [r for r in rows if (r.get("stage") or "other") == s]) for s in stages]


def _tables(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    out = []
    for r in rows:
        table = (r.get("details") or {}).get("table")
        if isinstance(table, dict) and isinstance(table.get("columns"), list) and isinstance(table.get("rows"), list):
            out.append((r, table))
    return out


def _md_cell(value: Any) -> str:
    return str(value if value is not None else "").replace("|", "\\|").replace("\n", " ")


def render_markdown(meta: dict[str, Any], results: dict[str, Any], vers: dict[str, Any],
                    ledger: dict[str, Any]) -> str:
    lines = [f"# roce-wizard support bundle — run {meta['run_id']}", "",
             f"- tool: roce-wizard {vers.get('roce_wizard')} · Python {vers.get('python')} · {vers.get('platform')}",
             f"- run kind: {meta.get('kind') or 'unknown'} · exported {meta['created']}"
             + (" · anonymized" if meta.get("anonymized") else ""),
             f"- result: {_status_line(results.get('summary', {}))}", "",
             "Secrets were removed from every file of this bundle" + (
                 "; hostnames, addresses, MACs, GUIDs and serials are pseudonyms." if meta.get("anonymized") else "."),
             ""]
    rows = results.get("results", [])
    for stage, stage_rows in _by_stage(results):
        lines += [f"## {stage}", "", "| | check | target | subject | summary |", "|---|---|---|---|---|"]
        for r in stage_rows:
            lines.append(f"| {_SYMBOL.get(r.get('status'), '?')} | {r.get('check')} | {_md_cell(r.get('target'))} | "
                         f"{_md_cell(r.get('subject'))} | {_md_cell(r.get('summary'))} |")
        lines.append("")
    failing = [r for r in rows if r.get("status") in ("fail", "warn") and r.get("fix")]
    if failing:
        lines += ["## How to fix by hand", ""]
        for r in failing:
            lines += [f"**{r.get('check')} {r.get('target')}{' ' + r['subject'] if r.get('subject') else ''}**", "",
                      "```", str(r["fix"]), "```", ""]
    for r, table in _tables(rows):
        lines += [f"## {r.get('check')} {r.get('target')} — measured", "",
                  "| " + " | ".join(_md_cell(c) for c in table["columns"]) + " |",
                  "|" + "---|" * len(table["columns"])]
        lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in table["rows"]]
        lines.append("")
    for r in rows:
        if (r.get("details") or {}).get("mpirun"):
            lines += [f"## {r.get('check')} — mpirun", "", "```", str(r["details"]["mpirun"]), "```", ""]
            if r["details"].get("hostfile"):
                lines += ["hostfile:", "", "```", str(r["details"]["hostfile"]), "```", ""]
    lines += ["## Versions", "", "| host | kind | ESXi build | firmware | driver | OFED |", "|---|---|---|---|---|---|"]
    for host, v in vers.get("hosts", {}).items():
        lines.append(f"| {_md_cell(host)} | {v['kind']} | {_md_cell(v['esxi_build'])} | {_md_cell(v['firmware'])} | "
                     f"{_md_cell(v['driver'])} | {_md_cell(v['ofed'])} |")
    lines += ["", "## Reboot ledger", ""] + _ledger_lines(ledger) + [""]
    return "\n".join(lines)


def _ledger_lines(ledger: dict[str, Any]) -> list[str]:
    if ledger.get("error"):
        return [f"could not build the ledger: {ledger['error']}"]
    if "hosts" in ledger:
        if not ledger["hosts"]:
            return ["no host has a reboot pending or on record."]
        out = []
        for host, entry in ledger["hosts"].items():
            pending = entry.get("pending") or []
            history = entry.get("history") or []
            out.append(f"- {host}: {entry.get('state')}, {len(pending)} pending, {len(history)} reboot(s) on record"
                       + "".join(f"\n  - pending {p.get('check')}: {p.get('reason')}" for p in pending))
        return out
    events = ledger.get("events") or []
    if not events:
        return ["no fix in this run waits for a reboot."]
    return [f"- {e.get('type')} {e.get('target', '')} {e.get('check', '')} {e.get('description', '')}".rstrip()
            for e in events]


_CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;color:#222;padding:0 1em}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;
vertical-align:top}th{background:#f3f3f3}.pass{color:#1a7f37}.fail{color:#cf222e;font-weight:bold}.warn{color:#9a6700}
.error{color:#8250df}.skip{color:#777}pre{background:#f6f8fa;padding:.6em;overflow:auto}svg{background:#fff}
.note{color:#555}"""


def render_html(meta: dict[str, Any], results: dict[str, Any], vers: dict[str, Any], ledger: dict[str, Any]) -> str:
    e = html.escape
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>roce-wizard support bundle {e(meta['run_id'])}</title><style>{_CSS}</style></head><body>",
             f"<h1>roce-wizard support bundle — run {e(meta['run_id'])}</h1>",
             (f"<p>roce-wizard {e(str(vers.get('roce_wizard')))} · Python {e(str(vers.get('python')))} · "
              f"{e(str(vers.get('platform')))}<br>run kind: {e(str(meta.get('kind') or 'unknown'))} · exported "
              f"{e(meta['created'])}{' · anonymized' if meta.get('anonymized') else ''}<br>"
              f"<strong>{e(_status_line(results.get('summary', {})))}</strong></p>"),
             '<p class="note">Secrets were removed from every file of this bundle'
             + ("; hostnames, addresses, MACs, GUIDs and serials are pseudonyms." if meta.get("anonymized") else ".")
             + "</p>"]
    rows = results.get("results", [])
    for stage, stage_rows in _by_stage(results):
        parts.append(f"<h2>{e(stage)}</h2><table><tr><th></th><th>check</th><th>target</th><th>subject</th>"
                     "<th>summary</th></tr>")
        for r in stage_rows:
            status = str(r.get("status"))
            parts.append(f'<tr><td class="{e(status)}">{_SYMBOL.get(status, "?")}</td><td>{e(str(r.get("check")))}</td>'
                         f"<td>{e(str(r.get('target') or ''))}</td><td>{e(str(r.get('subject') or ''))}</td>"
                         f"<td>{e(str(r.get('summary') or ''))}</td></tr>")
        parts.append("</table>")
    failing = [r for r in rows if r.get("status") in ("fail", "warn") and r.get("fix")]
    if failing:
        parts.append("<h2>How to fix by hand</h2>")
        for r in failing:
            parts.append(f"<h3>{e(str(r.get('check')))} {e(str(r.get('target')))}"
                         f"{' ' + e(str(r['subject'])) if r.get('subject') else ''}</h3><pre>{e(str(r['fix']))}</pre>")
    for r, table in _tables(rows):
        parts.append(f"<h2>{e(str(r.get('check')))} {e(str(r.get('target')))} — measured</h2><table><tr>"
                     + "".join(f"<th>{e(str(c))}</th>" for c in table["columns"]) + "</tr>")
        parts += ["<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>" for row in table["rows"]]
        parts.append("</table>")
        incast = (r.get("details") or {}).get("incast")
        if isinstance(incast, list) and incast:
            parts.append(incast_svg(incast))
    for r in rows:
        incast = (r.get("details") or {}).get("incast")
        if isinstance(incast, list) and incast and not _tables([r]):
            parts.append(f"<h2>{e(str(r.get('check')))} {e(str(r.get('target')))} — incast</h2>{incast_svg(incast)}")
        if (r.get("details") or {}).get("mpirun"):
            parts.append(f"<h2>{e(str(r.get('check')))} — mpirun</h2><pre>{e(str(r['details']['mpirun']))}</pre>")
            if r["details"].get("hostfile"):
                parts.append(f"<p>hostfile:</p><pre>{e(str(r['details']['hostfile']))}</pre>")
    parts.append("<h2>Versions</h2><table><tr><th>host</th><th>kind</th><th>ESXi build</th><th>firmware</th>"
                 "<th>driver</th><th>OFED</th></tr>")
    for host, v in vers.get("hosts", {}).items():
        parts.append("<tr>" + "".join(f"<td>{e(str(x))}</td>" for x in
                                      (host, v["kind"], v["esxi_build"], v["firmware"], v["driver"], v["ofed"])) + "</tr>")
    parts.append("</table><h2>Reboot ledger</h2><pre>" + e("\n".join(_ledger_lines(ledger))) + "</pre>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


_COLORS = ("#0969da", "#cf222e", "#1a7f37", "#9a6700", "#8250df", "#bc4c00")


def incast_svg(points: list[dict[str, Any]], width: int = 560, height: int = 300) -> str:
    """Aggregate throughput vs streams, one line per message size, as an inline SVG (no script, no assets)."""
    series: dict[Any, list[tuple[float, float]]] = {}
    for p in points:
        try:
            point = (float(p["streams"]), float(p["gbps"]))
        except (KeyError, TypeError, ValueError, AttributeError):  # a step that measured nothing: no point
            continue
        series.setdefault(p.get("size"), []).append(point)
    if not series:
        return ""
    xs = [x for s in series.values() for x, _ in s]
    ys = [y for s in series.values() for _, y in s]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    y1 = max(ys) * 1.1 or 1.0
    left, right, top, bottom = 56, 130, 16, 40
    pw, ph = width - left - right, height - top - bottom

    def sx(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * pw

    def sy(y: float) -> float:
        return top + ph - y / y1 * ph

    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="incast: throughput vs streams">'),
           f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>']
    for i in range(5):
        y = y1 * i / 4
        out.append(f'<text x="{left - 6}" y="{sy(y) + 4:.1f}" font-size="11" text-anchor="end">{y:.0f}</text>'
                   f'<line x1="{left}" x2="{left + pw}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" stroke="#eee"/>')
    for x in sorted(set(xs)):
        out.append(f'<text x="{sx(x):.1f}" y="{top + ph + 16}" font-size="11" text-anchor="middle">{x:g}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 6}" font-size="12" text-anchor="middle">streams</text>'
               f'<text x="14" y="{top + ph / 2}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 14 {top + ph / 2})">Gb/s</text>')
    for i, (size, pts) in enumerate(sorted(series.items(), key=lambda kv: str(kv[0]))):
        color = _COLORS[i % len(_COLORS)]
        pts = sorted(pts)
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{path}"/>')
        out += [f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{color}"/>' for x, y in pts]
        out.append(f'<text x="{left + pw + 8}" y="{top + 14 + 16 * i}" font-size="11" fill="{color}">'
                   f'{html.escape(_size_label(size))}</text>')
    out.append("</svg>")
    return "".join(out)


def _size_label(size: Any) -> str:
    try:
        n = int(size)
    except (TypeError, ValueError):
        return str(size)
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


# ---------------------------------------------------------------------------------------- the bundle


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


def _load_inventory(path: Path | None, explicit: bool) -> tuple[Any | None, list[str]]:
    from roce_wizard.inventory import InventoryError, load_inventory  # noqa: PLC0415

    if path is None:
        return None, ["no inventory: this run recorded none; pass -i inventory.yaml to include it"]
    if not path.is_file():
        if explicit:
            raise BundleError(f"-i {path}: no such file")
        return None, [f"inventory {path} (as the run recorded it) is gone; pass -i to include one"]
    try:
        return load_inventory(path), []
    except InventoryError as exc:
        if explicit:
            raise BundleError(str(exc)) from None
        return None, [f"inventory {path} could not be read: {exc}"]


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
    events = _events(run_dir)
    explicit = inventory_path is not None
    if inventory_path is None:
        recorded = next((e.get("path") for e in events if e.get("type") == "inventory" and e.get("path")), None)
        inventory_path = Path(recorded) if recorded else None
    inventory, notes = _load_inventory(inventory_path, explicit)
    kind = next((e.get("kind") for e in events if e.get("type") == "run-start"), None)

    sources: dict[str, str] = {}
    results = _read_json(run_dir / "results.json")
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
