"""Shell completion of check codes and slugs (`--select`, `--skip`, `explain`).

Typer calls the completion callback on every <Tab>, in a fresh process: importing all 55 check modules
(and what they import) for that would make the shell lag, so the built-in checks' code, slug and title
are read from their source with `ast` (every built-in check declares `CHECK = Check(code="RW…",
slug="…", title="…", …)` with literal strings); a check whose declaration is not literal is loaded the
usual way. Site checks (`--checks-dir`) are not offered: completion does not see the other options.

A completion callback must never raise: a traceback would be pasted into the user's command line, so
any failure here completes nothing.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path


def _literal_check(path: Path) -> tuple[str, str, str] | None:
    """(code, slug, title) from `CHECK = Check(code=…, slug=…, title=…)` in `path`, or None."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in tree.body:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "CHECK" for t in node.targets)
                and isinstance(node.value, ast.Call)):
            fields = {kw.arg: kw.value.value for kw in node.value.keywords
                      if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)}
            if {"code", "slug", "title"} <= set(fields):
                return fields["code"], fields["slug"], fields["title"]
    return None


@functools.cache
def builtin_checks() -> tuple[tuple[str, str, str], ...]:
    """(code, slug, title) of every built-in check, sorted by code."""
    from roce_wizard.catalog import CatalogError, builtin_checks_dir, load_file  # noqa: PLC0415

    found = []
    for path in sorted(builtin_checks_dir().rglob("rw*.py")):
        entry = _literal_check(path)
        if entry is None:
            try:
                meta = load_file(path).meta
            except CatalogError:
                continue
            entry = (meta.code, meta.slug, meta.title)
        found.append(entry)
    return tuple(sorted(found))


def complete_codes(incomplete: str) -> list[tuple[str, str]]:
    """Completions for a check selector: codes (`RW2` → RW201…), slugs (`pfc` → pfc-on-roce-priority),
    each with its help text (shown by zsh, fish and PowerShell). In a comma list (`RW201,RW2`) the last
    item is completed and the rest kept, leaving out checks already listed. With nothing typed: codes."""
    try:
        head, _, last = incomplete.rpartition(",")
        last = last.strip()
        prefix = f"{head}," if head else ""
        listed = {item.strip().upper() for item in head.split(",")} | {item.strip().lower() for item in head.split(",")}
        out = []
        for code, slug, title in builtin_checks():
            if code in listed or slug in listed:
                continue
            if code.startswith(last.upper()):
                out.append((prefix + code, f"{slug}: {title}"))
        if last:
            out += [(prefix + slug, f"{code}: {title}") for code, slug, title in builtin_checks()
                    if slug.startswith(last.lower()) and code not in listed and slug not in listed]
        return out
    except Exception:  # noqa: BLE001 - see the module docstring: completion must never print a traceback
        return []
