"""Finds and loads check modules from `checks/` (built in) and from user directories, by path.

A check module defines ``CHECK`` (a ``Check``), ``evaluate(facts, policy)``, and a docstring with
the sections ``What it checks`` / ``Why it matters`` / ``How to fix by hand`` / ``Fix safety``.
A site can drop its own check files into a directory of its own and pass it with ``--checks-dir``.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterable
from pathlib import Path

from roce_wizard.model import Check, LoadedCheck, Stage
from roce_wizard.records.wording import plural_word

SECTIONS = ("What it checks", "Why it matters", "How to fix by hand", "Fix safety")
CODE_RE = re.compile(r"^RW\d{3}$")
SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
STAGE_ORDER = {stage: i for i, stage in enumerate(Stage)}


class CatalogError(Exception):
    """A check file that cannot be loaded: names the file and what is wrong."""


def builtin_checks_dir() -> Path:
    here = Path(__file__).resolve().parent
    source_tree = here.parent / "checks"
    if source_tree.is_dir():
        return source_tree
    import roce_wizard_checks  # installed wheel: checks/ shipped as this package  # noqa: PLC0415

    return Path(roce_wizard_checks.__file__).parent


def parse_doc(doc: str, path: str) -> dict[str, str]:
    """Split a check docstring into its fixed sections (title line first)."""
    lines = doc.strip("\n").splitlines()
    sections: dict[str, list[str]] = {"title": [lines[0].strip()] if lines else []}
    current = None
    for line in lines[1:]:
        header = line.strip().rstrip(":")
        if header in SECTIONS and not line.startswith((" ", "\t")):
            current = header
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    missing = [s for s in SECTIONS if s not in sections]
    if missing:
        raise CatalogError(f"{path}: docstring lacks {plural_word(len(missing), 'section')} {', '.join(missing)}")
    return {k: _dedent("\n".join(v)).strip() for k, v in sections.items()}


def _dedent(text: str) -> str:
    import textwrap  # noqa: PLC0415

    return textwrap.dedent(text)


def load_file(path: Path) -> LoadedCheck:
    name = f"roce_wizard_check_{path.parent.name}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CatalogError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # a broken site check must name itself, not crash the run
        raise CatalogError(f"{path}: failed to import: {exc!r}") from exc
    meta = getattr(module, "CHECK", None)
    evaluate = getattr(module, "evaluate", None)
    if not isinstance(meta, Check):
        raise CatalogError(f"{path}: defines no CHECK = Check(...)")
    if not callable(evaluate):
        raise CatalogError(f"{path}: defines no evaluate(facts, policy)")
    if not CODE_RE.match(meta.code):
        raise CatalogError(f"{path}: code {meta.code!r} is not RWnnn")
    if not SLUG_RE.match(meta.slug):
        raise CatalogError(f"{path}: slug {meta.slug!r} is not kebab-case")
    doc = parse_doc(module.__doc__ or "", str(path))
    compare = getattr(module, "compare_targets", None)
    plan_fix = getattr(module, "plan_fix", None)
    return LoadedCheck(meta=meta, evaluate=evaluate, doc=doc, path=str(path),
                       compare=compare if callable(compare) else None,
                       plan_fix=plan_fix if callable(plan_fix) else None)


def load_catalog(extra_dirs: Iterable[Path] = ()) -> dict[str, LoadedCheck]:
    """All checks by code, built-in first; a duplicate code or slug is an error naming both files."""
    checks: dict[str, LoadedCheck] = {}
    slugs: dict[str, str] = {}
    for directory in (builtin_checks_dir(), *map(Path, extra_dirs)):
        if not directory.is_dir():
            raise CatalogError(f"{directory}: no such checks directory")
        for path in sorted(directory.rglob("rw*.py")):
            loaded = load_file(path)
            if loaded.code in checks:
                raise CatalogError(f"{path}: code {loaded.code} already defined by {checks[loaded.code].path}")
            if loaded.meta.slug in slugs:
                raise CatalogError(f"{path}: slug {loaded.meta.slug} already used by {slugs[loaded.meta.slug]}")
            checks[loaded.code] = loaded
            slugs[loaded.meta.slug] = loaded.path
    return dict(sorted(checks.items(), key=lambda kv: (STAGE_ORDER[kv[1].meta.stage], kv[0])))


def matches(check: Check, selector: str) -> bool:
    """A selector is a code (RW208), a code prefix (RW2, RW20) or a slug."""
    sel = selector.strip()
    return check.code == sel.upper() or check.slug == sel.lower() or (
        sel.upper().startswith("RW") and check.code.startswith(sel.upper())
    )


def select(
    checks: dict[str, LoadedCheck], include: Iterable[str] = (), exclude: Iterable[str] = ()
) -> dict[str, LoadedCheck]:
    include, exclude = [s for s in include if s], [s for s in exclude if s]
    for sel in (*include, *exclude):
        if not any(matches(c.meta, sel) for c in checks.values()):
            raise CatalogError(f"selector {sel!r} matches no check (give a code like RW208, a prefix like RW2, or a slug)")
    return {
        code: c
        for code, c in checks.items()
        if (not include or any(matches(c.meta, s) for s in include)) and not any(matches(c.meta, s) for s in exclude)
    }


def find(checks: dict[str, LoadedCheck], code_or_slug: str) -> LoadedCheck | None:
    for c in checks.values():
        if c.code == code_or_slug.upper() or c.meta.slug == code_or_slug.lower():
            return c
    return None
