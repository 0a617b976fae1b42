"""Building findings: pass / fail (or warn) / skip with their evidence, and the excerpts behind them.

Checks stay pure: these functions only read `Facts` and build `Finding`s.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from roce_wizard.model import Check, Evidence, Facts, Finding, Severity, Status

__all__ = ["bad", "excerpt", "failing", "good", "shown", "skip", "version_tuple"]


def _finding(check: Check, facts: Facts, status: Status, summary: str, **kw: Any) -> Finding:
    probes = kw.pop("probes", None) or check.probes[:1]
    evidence = kw.pop("evidence", None)
    if evidence is None:
        ex = kw.pop("excerpt", None)
        evidence = [Evidence(probe=p, command=facts.commands.get(p), excerpt=ex if i == 0 else None) for i, p in enumerate(probes)]
    else:
        kw.pop("excerpt", None)
    return Finding(check=check.code, status=status, summary=summary, target=facts.target_name, evidence=evidence, **kw)


def good(check: Check, facts: Facts, summary: str, **kw: Any) -> Finding:
    return _finding(check, facts, Status.PASS, summary, **kw)


def bad(check: Check, facts: Facts, summary: str, **kw: Any) -> Finding:
    """A failing finding at the check's severity (fail, or warn for warn-level checks)."""
    status = Status.WARN if check.severity is Severity.WARN else Status.FAIL
    return _finding(check, facts, status, summary, **kw)


def skip(check: Check, facts: Facts, summary: str, **kw: Any) -> Finding:
    """Not applicable here (e.g. QoS in a VF guest belongs to the PF)."""
    return _finding(check, facts, Status.SKIP, summary, **kw)


def excerpt(raw: str | None, *patterns: str, limit: int = 6) -> str | None:
    """The raw output lines that carry the observation (for the evidence)."""
    if not raw:
        return None
    regexes = [re.compile(p, re.I) for p in patterns]
    hits = [ln.rstrip() for ln in raw.splitlines() if any(r.search(ln) for r in regexes)]
    return "\n".join(hits[:limit]) or None


def version_tuple(version: str | None) -> tuple[int, ...] | None:
    """'4.21.71.101-1OEM.702.0.0.17473468' -> (4, 21, 71, 101); None when unreadable."""
    if not version:
        return None
    m = re.match(r"^\s*(\d+(?:\.\d+)*)", version)
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def failing(findings: list[Finding]) -> list[Finding]:
    """The findings a fix is about (fail, or warn for warn-level checks)."""
    return [f for f in findings if f.status in (Status.FAIL, Status.WARN)]


def shown(value: str | None, validator: Callable[[str], str], placeholder: str) -> str:
    """A host value for a fix-by-hand line: validated and quoted (UnsafeValue when it does not fit), or
    `placeholder` (`<netdev>`) when there is none."""
    return validator(value) if value else placeholder
