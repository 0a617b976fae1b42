"""The commands that read: analyze (pasted outputs), export (support bundle), reboots (the ledger),
explain, checks, version."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from roce_wizard import __version__
from roce_wizard.catalog import find
from roce_wizard.cli.base import _err, _load_checks, _split, app
from roce_wizard.cli.envfile_option import EnvFile
from roce_wizard.completion import complete_codes
from roce_wizard.console import make_console
from roce_wizard.model import Policy
from roce_wizard.seeds import seed_notes
from roce_wizard.textsafe import printable


@app.command()
def analyze(
    paths: Annotated[list[Path], typer.Argument(help="Files, directories, run dirs or support bundles; "
                                                "several run dirs (or a directory of them) merge into one report.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print {files: [{path, kind, facts, findings}]}.")] = False,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Show the facts read from each file.")] = False,
    checks_dir: Annotated[list[Path] | None, typer.Option(help="A directory of site checks to load as well.")] = None,
) -> None:
    """Judge pasted tool outputs offline: detect the tool, parse, run every check the facts allow."""
    from roce_wizard.analyze import InputError, analyze_paths, exit_code_of  # noqa: PLC0415
    from roce_wizard.records.report import STYLE, SYMBOL  # noqa: PLC0415

    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise _err(f"no such file: {', '.join(missing)}")
    from roce_wizard.records.merge import run_roots  # noqa: PLC0415

    roots = run_roots(paths)
    if len(roots) > 1:  # many nodes' run directories: one merged report (cli/merge.py)
        from roce_wizard.cli.merge import analyze_merged  # noqa: PLC0415

        raise typer.Exit(analyze_merged(roots, paths, _load_checks(checks_dir), as_json=as_json, verbose=verbose))
    try:  # a FIFO or device argument, a hostile or corrupt archive: refused with its name, exit 2
        files = analyze_paths(paths, _load_checks(checks_dir), Policy())
    except InputError as exc:
        raise _err(escape(str(exc))) from None
    code = exit_code_of(files)
    if as_json:
        sys.stdout.write(json.dumps({"version": 1, "files": [f.to_dict() for f in files], "exit_code": code},
                                    indent=2, ensure_ascii=False, default=str) + "\n")
        raise typer.Exit(code)
    console = make_console()
    for f in files:
        source = f" ({f.source})" if f.source else ""  # the rank or host a launcher prefix named
        console.print(f"[bold]{escape(printable(f.path + source))}[/]  [cyan]{f.kind}[/]"
                      + (f"  [red]{escape(printable(f.error))}[/]" if f.error else ""),
                      highlight=False, soft_wrap=True)
        for part in f.parts:  # a pasted session: what each command printed (commands are the paste's text)
            console.print(f"    [dim]$ {escape(printable(part.command or '(output above the first prompt)'))}"
                          f"  {part.kind}[/]", highlight=False, soft_wrap=True)
        if verbose and f.facts is not None:
            console.print_json(json.dumps(f.facts, default=str), ensure_ascii=True)  # \u-escapes C1 controls too
        seen = set()
        for finding in f.findings:
            others = [n for n in finding.details.get("files", ()) if n != f.path]  # read with another file
            key = (finding.check, finding.subject, finding.summary, tuple(others))
            if key in seen:
                continue
            seen.add(key)
            # escaped: summaries and fixes carry brackets (pyVmomi calls, `[...]` lists) rich would eat
            where = f"{escape(printable(finding.target))}: " if finding.target else ""  # a run's results: per host
            console.print(f"    [{STYLE[finding.status]}]{SYMBOL[finding.status]}[/] {finding.check} {where}"
                          f"{escape(printable(finding.summary))}"
                          + (f"  [dim](with {escape(printable(', '.join(others)))})[/]" if others else ""),
                          highlight=False, soft_wrap=True)
            if finding.fix and finding.status.value in ("fail", "warn"):
                console.print(f"        fix: {escape(printable(finding.fix))}", highlight=False, soft_wrap=True)
        if f.kind == "unknown":
            console.print("    [dim]not recognised as the output of any tool roce-wizard reads[/]", highlight=False)
    raise typer.Exit(code)


@app.command()
def export(
    output: Annotated[Path | None, typer.Option("-o", "--output", help="The .tar.gz to write (default "
                                               "roce-wizard-bundle-<run id>.tar.gz here).")] = None,
    run: Annotated[list[Path] | None, typer.Option("--run", help="The run directory to export; repeated, or a "
                                                   "directory of many runs: one merged bundle.")] = None,
    last: Annotated[bool, typer.Option("--last", help="Export the newest run (the default).")] = False,
    inventory: Annotated[Path | None, typer.Option("-i", "--inventory", help="Inventory YAML (default: the one "
                                                   "the run recorded).")] = None,
    env_file: EnvFile = None,  # the credentials to redact are the ones the inventory references
    anonymize: Annotated[bool, typer.Option("--anonymize", help="Also replace hostnames, IPs, MACs, GUIDs and "
                                            "serials with consistent pseudonyms.")] = False,
    list_only: Annotated[bool, typer.Option("--list", help="Show what would be included and redacted; write nothing.")] = False,
) -> None:
    """Write a support bundle (.tar.gz) of one run: summary (Markdown + HTML), results, events, raw outputs,
    versions, reboot ledger and the inventory, with every secret removed."""
    from roce_wizard.records.bundle import BundleError, build_bundle, check_writable, find_run, listing  # noqa: PLC0415
    from roce_wizard.records.bundle.merged import build_merged_bundle  # noqa: PLC0415
    from roce_wizard.records.merge import run_roots  # noqa: PLC0415

    if run and last:
        raise _err("--run and --last: pick one")
    roots = run_roots(run or [])
    try:
        if len(roots) > 1:  # many nodes' runs: one bundle with the merged report (records/bundle/merged.py)
            bundle = build_merged_bundle(roots, inventory_path=inventory, anonymize=anonymize)
        else:
            for given in (run or [])[1:]:
                find_run(given)  # a second --run that is no run directory is said, not ignored
            bundle = build_bundle(find_run(run[0] if run else None), inventory_path=inventory, anonymize=anonymize)
        target = output if output is not None else Path.cwd() / bundle.default_name()
        if list_only:
            for line in listing(bundle, target):
                typer.echo(line)
            raise typer.Exit(0)
        check_writable(target)
        bundle.write(target)
    except BundleError as exc:
        raise _err(str(exc)) from None
    total = bundle.redaction_total()
    typer.echo(f"wrote {target} ({target.stat().st_size} bytes, {len(bundle.members)} files"
               + (", anonymized" if anonymize else "") + "); redacted: "
               + (", ".join(f"{n} {k}" for k, n in sorted(total.items())) or "nothing needed redacting"))
    for note in bundle.notes:
        typer.echo(f"note: {note}")


@app.command("reboots")
def reboots_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the ledger as JSON.")] = False,
    host: Annotated[list[str] | None, typer.Option("--host", help="Only these hosts (names or globs).")] = None,
    history: Annotated[bool, typer.Option("--history", help="Also list every reboot.")] = False,
) -> None:
    """The reboot ledger: per host its boot, what waits for a reboot and why, and the reboots so far.

    Derived from the run logs (`fix`, `doctor`), so it is there after the tool was killed. Host names
    repeat across sites: entries are per machine (the identity each run read), grouped by cluster, and
    each item names the run that recorded it."""
    import fnmatch  # noqa: PLC0415

    from roce_wizard.records.ledger import all_events, ledger_from_events  # noqa: PLC0415
    from roce_wizard.records.ledger_scope import clusters  # noqa: PLC0415

    patterns = _split(host)
    events = all_events()
    groups = []
    for number, (runs, ids) in enumerate(clusters(events), 1):
        members = set(runs)
        book = {name: entry for name, entry in sorted(ledger_from_events(
                    [e for e in events if e.get("run") in members]).items())
                if not patterns or any(fnmatch.fnmatchcase(name, p) for p in patterns)}
        if book:
            label = f"cluster {number}" if ids else "unidentified (runs that read no host identity)"
            groups.append((label, runs, ids, book))
    if as_json:
        hosts = [{**e.to_dict(), "cluster": label, "cluster_runs": runs}
                 for label, runs, _, book in groups for e in book.values()]
        sys.stdout.write(json.dumps({"version": 1, "hosts": hosts}, indent=2) + "\n")
        return
    console = make_console()
    if not groups:
        known = sorted(ledger_from_events(events))
        if patterns and known:  # the filter matched nothing in a ledger that has hosts: say so, and which it has
            console.print(printable(f"no host matches {', '.join(repr(p) for p in patterns)} (the ledger has: "
                                    f"{', '.join(known[:20])}{', …' if len(known) > 20 else ''})"),
                          highlight=False, markup=False, soft_wrap=True)
            return
        console.print("the ledger is empty: no fix has waited for a reboot yet", highlight=False)
        return
    for label, runs, ids, book in groups:
        if len(groups) > 1 or ids:
            machines = ", ".join(f"{n} {sid}" for n, sid in sorted(ids.items()) if n in book)
            console.print(f"[bold underline]{escape(printable(label))}[/]"
                          + (f": {escape(printable(machines))}" if machines else "")
                          + (f"  [dim](runs {runs[0]} … {runs[-1]})[/]" if len(runs) > 1
                             else f"  [dim](run {runs[0]})[/]"),
                          highlight=False, soft_wrap=True)
        for name, entry in book.items():
            extra = " (left in maintenance mode)" if entry.in_maintenance else ""
            console.print(f"[bold]{escape(printable(name))}[/]  {entry.state.value}{extra}  "
                          f"boot: {escape(printable(entry.boot_id or 'unknown'))}  "
                          f"reboots: {entry.reboots}", highlight=False, soft_wrap=True)
            for item in entry.pending:
                when = "rebooted, not yet seen current" if item.booted_over else f"waits for: {item.reboot.value}"
                console.print(f"  {item.check} {escape(printable(item.reason))}  [dim]({when}; run {item.run or '?'})[/]",
                              highlight=False, soft_wrap=True)
            for vm in entry.powered_off_vms:
                since = entry.to_dict()["powered_off"][entry.powered_off_vms.index(vm)]["since"]
                console.print(f"  [red]VM {escape(printable(vm))} powered off by roce-wizard at {since or '?'} "
                              f"(run {entry.powered_off_run.get(vm, '?')}), still off[/]", highlight=False,
                              soft_wrap=True)
            if history:
                for record in entry.history:
                    data = record.to_dict()
                    verdict = ("verified" if record.verified else "failed: " + (record.error or "")
                               if record.verified is False or record.error else "not verified")
                    console.print(printable(f"  reboot {data['requested_at']} via {record.via or '?'} "
                                            f"(run {record.run or '?'}): back {data['back_at'] or '-'}, {verdict}"),
                                  highlight=False, markup=False, soft_wrap=True)


@app.command()
def explain(
    code_or_slug: Annotated[str, typer.Argument(help="A check code (RW208) or slug.",
                                                           autocompletion=complete_codes)],
    where: Annotated[bool, typer.Option("--where", help="Where it lives: its file, probes (commands, parsers), "
                                        "fix, tests and lab fault.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="With --where: print it as JSON.")] = False,
) -> None:
    """Print a check's documentation: what it checks, why, how to fix by hand, fix safety."""
    if as_json and not where:
        raise _err("--json goes with --where (`roce-wizard explain CODE --where --json`)")
    checks = _load_checks(None)
    check = find(checks, code_or_slug)
    if check is None:
        raise _err(f"no check {code_or_slug!r}; `roce-wizard checks` lists them")
    meta = check.meta
    console = make_console()
    if where:
        from roce_wizard.where import render  # noqa: PLC0415
        from roce_wizard.where import where as where_of

        data = where_of(check)
        if as_json:
            sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        else:
            for line in render(data):
                console.print(printable(line), highlight=False, markup=False, soft_wrap=True)
        return
    console.print(f"[bold]{meta.code} {meta.slug}[/] — {meta.title}", highlight=False)
    console.print(f"stage: {meta.stage.value} · targets: {', '.join(k.value for k in meta.target_kinds)} · "
                  f"severity: {meta.severity.value} · reboot: {meta.reboot.value}", highlight=False)
    if meta.depends_on:
        console.print(f"depends on: {', '.join(meta.depends_on)}", highlight=False)
    for section in ("What it checks", "Why it matters", "How to fix by hand", "Fix safety"):
        console.print(f"\n[bold underline]{section}[/]", highlight=False)
        console.print(printable(check.doc[section]), highlight=False, markup=False, soft_wrap=True)
    notes = seed_notes(" ".join(check.doc.values()))
    if notes:  # the short names of published sources the text uses, spelled out
        console.print("\n[bold underline]Sources cited as \"seed NNN\"[/]", highlight=False)
        for note in notes:
            console.print(printable(note), highlight=False, markup=False, soft_wrap=True)


@app.command("checks")
def list_checks(
    checks_dir: Annotated[list[Path] | None, typer.Option(help="Site checks directory.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list: code, slug, title, stage, targets, "
                                          "severity, reboot, has_fix, fix_safety, depends_on.")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the catalog as Markdown (docs/checks.md): "
                                           "a table and each check's documentation.")] = False,
) -> None:
    """List every check: code, slug, stage, severity, title."""
    if as_json and markdown:
        raise _err("--json and --markdown: pick one")
    if as_json or markdown:
        from roce_wizard.catalog_doc import catalog_entries, catalog_markdown  # noqa: PLC0415

        checks = _load_checks(checks_dir)
        sys.stdout.write(json.dumps(catalog_entries(checks), indent=2, ensure_ascii=False) + "\n" if as_json
                         else catalog_markdown(checks))
        return
    console = make_console()
    for check in _load_checks(checks_dir).values():
        m = check.meta
        console.print(f"{m.code}  {m.slug:<30} {m.stage.value:<9} {m.severity.value:<5} {m.title}", highlight=False)


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo(f"roce-wizard {__version__}")

