"""The bundle's summary.md and summary.html: one set of sections (records.report's findings, then the
versions and the reboot ledger) rendered twice by records.markup. Only the few header lines differ."""

from __future__ import annotations

import html
from typing import Any

from roce_wizard.records import markup
from roce_wizard.records.markup import Lines, Section, Table
from roce_wizard.records.report import results_line, results_sections
from roce_wizard.records.wording import plural

_SECRETS_NOTE = "Secrets were removed from every file of this bundle"
_ANONYMIZED_NOTE = "; hostnames, addresses, MACs, GUIDs and serials are pseudonyms."


def _sections(results: dict[str, Any], vers: dict[str, Any], ledger: dict[str, Any]) -> list[Section]:
    hosts = [[host, v["kind"], v["esxi_build"], v["firmware"], v["driver"], v["ofed"]]
             for host, v in vers.get("hosts", {}).items()]
    return [*results_sections(results.get("results", [])),
            Section("Versions", [Table(["host", "kind", "ESXi build", "firmware", "driver", "OFED"], hosts)]),
            Section("Reboot ledger", [Lines(ledger_lines(ledger))])]


def ledger_lines(ledger: dict[str, Any]) -> list[str]:
    if ledger.get("error"):
        return [f"could not build the ledger: {ledger['error']}"]
    if "hosts" in ledger:
        if not ledger["hosts"]:
            return ["no host has a reboot pending or on record."]
        out = []
        for host, entry in ledger["hosts"].items():
            pending = entry.get("pending") or []
            history = entry.get("history") or []
            out.append(f"- {host}: {entry.get('state')}, {len(pending)} pending, {plural(len(history), 'reboot')} on record"
                       + "".join(f"\n  - pending {p.get('check')}: {p.get('reason')}" for p in pending))
        return out
    events = ledger.get("events") or []
    if not events:
        return ["no fix in this run waits for a reboot."]
    return [f"- {e.get('type')} {e.get('target', '')} {e.get('check', '')} {e.get('description', '')}".rstrip()
            for e in events]


def render_markdown(meta: dict[str, Any], results: dict[str, Any], vers: dict[str, Any],
                    ledger: dict[str, Any]) -> str:
    preamble = [f"# roce-wizard support bundle — run {meta['run_id']}", "",
                f"- tool: roce-wizard {vers.get('roce_wizard')} · Python {vers.get('python')} · {vers.get('platform')}",
                f"- run kind: {meta.get('kind') or 'unknown'} · exported {meta['created']}"
                + (" · anonymized" if meta.get("anonymized") else ""),
                f"- result: {results_line(results.get('summary', {}))}", "",
                _SECRETS_NOTE + (_ANONYMIZED_NOTE if meta.get("anonymized") else "."), ""]
    return markup.markdown(preamble, _sections(results, vers, ledger))


def render_html(meta: dict[str, Any], results: dict[str, Any], vers: dict[str, Any], ledger: dict[str, Any]) -> str:
    e = html.escape
    preamble = [f"<h1>roce-wizard support bundle — run {e(meta['run_id'])}</h1>",
                (f"<p>roce-wizard {e(str(vers.get('roce_wizard')))} · Python {e(str(vers.get('python')))} · "
                 f"{e(str(vers.get('platform')))}<br>run kind: {e(str(meta.get('kind') or 'unknown'))} · exported "
                 f"{e(meta['created'])}{' · anonymized' if meta.get('anonymized') else ''}<br>"
                 f"<strong>{e(results_line(results.get('summary', {})))}</strong></p>"),
                f'<p class="note">{_SECRETS_NOTE}{_ANONYMIZED_NOTE if meta.get("anonymized") else "."}</p>']
    return markup.html(f"roce-wizard support bundle {meta['run_id']}", preamble, _sections(results, vers, ledger))
