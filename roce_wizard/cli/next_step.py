"""What a run leaves and the command that goes on from there (as ruff and flutter doctor end):
doctor's closing lines ("3 problems fixable with `roce-wizard fix -i inv.yaml` (1 needs
--allow-disruptive); 1 target could not be reached (esx-04: connection refused)") and the
summary `fix` ends with (what it did not apply, and why).

Computed from the run's findings and the fix plans the engine makes of them (engine.fixes.plan_fixes,
pure): the same plans `fix` would show. A displayed command carries only values the setup already
validated (selectors that matched a check, host patterns that matched a target, a file that loaded),
quoted with shlex.join; a value with a control character drops the command altogether.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roce_wizard.model import Safety, Status
from roce_wizard.records.wording import plural, plural_word
from roce_wizard.textsafe import printable

# RW001's error kinds (transports.base.ConnectErrorKind) in a few words
_UNREACHABLE = {
    "dns": "name does not resolve", "refused": "connection refused", "timeout": "timed out",
    "auth": "login rejected", "hostkey_unknown": "host key unknown", "hostkey_changed": "host key changed",
    "unreachable": "unreachable", "dropped": "connection dropped", "protocol": "protocol error",
    "tls": "certificate does not verify", "credential": "password reference unresolved",
}
_SHOWN = 3  # names listed before "…"


@dataclass
class Leftover:
    """A run's open ends, each with its reason."""

    safe: list[Any] = field(default_factory=list)  # engine.fixes.Planned that `fix` runs as it is
    disruptive: list[Any] = field(default_factory=list)  # Planned that needs --allow-disruptive
    waiting: list[Any] = field(default_factory=list)  # Planned that waits for another fix first
    manual: list[Any] = field(default_factory=list)  # Planned shown, never run (manual, or no step)
    by_hand: list[Any] = field(default_factory=list)  # failing findings no plan covers
    problems: dict[tuple[str, str], int] = field(default_factory=dict)  # (target, check) -> failing findings
    blocked: dict[tuple[str, str], int] = field(default_factory=dict)  # root (check, target) -> blocked findings
    unreachable: list[tuple[str, str]] = field(default_factory=list)  # (target, why)
    not_run: int = 0  # other findings that could not be judged (a tool missing, a command timing out)

    def count(self, planned: Iterable[Any]) -> int:
        """Failing findings the plans cover."""
        return sum(self.problems.get((p.target.name, p.plan.check), 0) for p in planned)


def leftover(report: Any, planned: Sequence[Any], *, applied: Iterable[tuple[str, str]] = (),
             allow: set[Any] | None = None) -> Leftover:
    """Sort a run's findings (`report`: an engine RunReport) by what can happen to them: the plans for them by
    safety, the failures without a plan, the findings blocked by a root cause, the targets that could not be
    reached. A finding belongs to the target whose checks judged it (a vCenter's findings name its hosts; its
    plans are the vCenter's), as plans do. `applied`: (target, check) a fix run applied (not left).
    `allow`: the safeties the run allowed (default: what `fix` runs without --allow-disruptive)."""
    out = Leftover()
    applied = set(applied)
    judged = [(run.target.name, f) for run in report.runs for f in run.findings]
    judged += [(f.target, f) for f in report.cross_target]
    for owner, f in judged:
        if f.status in (Status.FAIL, Status.WARN) and f.blocked_by is None:
            out.problems[(owner, f.check)] = out.problems.get((owner, f.check), 0) + 1
        elif f.status is Status.SKIP and f.blocked_by is not None:
            if (f.blocked_by[1], f.blocked_by[0]) in applied:  # its root was just fixed: judged again after it
                continue
            out.blocked[f.blocked_by] = out.blocked.get(f.blocked_by, 0) + 1
        elif f.status is Status.ERROR and f.check == "RW001":
            kind = (f.details or {}).get("error_kind")
            out.unreachable.append((f.target, _UNREACHABLE.get(kind, kind or "could not connect")))
        elif f.status is Status.ERROR:
            out.not_run += 1
    allow = allow if allow is not None else {Safety.SAFE}
    covered: set[tuple[str, str]] = set()
    for p in planned:
        key = (p.target.name, p.plan.check)
        if key not in out.problems or key in applied:  # a blocked check planned to ride its root's reboot
            continue
        covered.add(key)
        if p.plan.safety is Safety.MANUAL or not p.plan.steps:
            out.manual.append(p)
        elif p.waits_for:
            out.waiting.append(p)
        elif p.plan.safety in allow:
            out.safe.append(p)
        else:
            out.disruptive.append(p)
    out.by_hand = [f for owner, f in judged if (owner, f.check) in out.problems
                   and (owner, f.check) not in covered | applied]
    return out


def fix_command(inventory: Path | None, playbook: str | None, *, select_: Sequence[str] = (),
                skip: Sequence[str] = (), stage: Sequence[str] = (), host: Sequence[str] = (),
                checks_dir: Sequence[Path] = (), extra: Sequence[str] = ()) -> str | None:
    """`roce-wizard fix` with the selection the user ran; None when a value would not show as itself."""
    argv = ["roce-wizard", "fix"]
    if inventory is not None and inventory != Path("inventory.yaml"):
        argv += ["-i", str(inventory)]
    if playbook:
        argv += ["--playbook", playbook]
    for option, values in (("--select", select_), ("--skip", skip), ("--stage", stage), ("--host", host),
                           ("--checks-dir", [str(d) for d in checks_dir])):
        for value in values:
            argv += [option, value]
    argv += list(extra)
    if any(printable(a) != a or "\n" in a or "\t" in a for a in argv):
        return None
    return shlex.join(argv)


def _names(items: list[str]) -> str:
    shown = ", ".join(items[:_SHOWN])
    return shown + (", …" if len(items) > _SHOWN else "")


def _codes(planned: list[Any]) -> list[str]:
    return list(dict.fromkeys(f"{p.plan.check} on {p.target.name}" for p in planned))


def _blocked(left: Leftover) -> str:
    roots = [f"{code} on {target}" for (code, target), _ in sorted(left.blocked.items(), key=lambda kv: -kv[1])]
    n = sum(left.blocked.values())
    return f"{plural(n, 'check')} blocked by {_names(roots)} (judged once {'it passes' if len(roots) == 1 else 'they pass'})"


def _reach(left: Leftover) -> list[str]:
    parts = []
    if left.unreachable:
        n = len(left.unreachable)
        parts.append(f"{plural(n, 'target')} could not be reached "
                     f"({_names([f'{name}: {why}' for name, why in left.unreachable])})")
    if left.not_run:
        parts.append(f"{plural(left.not_run, 'check')} could not run (? above)")
    return parts


def doctor_lines(left: Leftover, command: str | None) -> list[str]:
    """doctor's closing lines: what `fix` would do, what is left by hand; what could not run. None when healthy."""
    lines = []
    first = []
    fixable = left.count(left.safe) + left.count(left.disruptive) + left.count(left.waiting)
    if fixable:
        run = f"`{command}`" if command else "`roce-wizard fix` (with this run's options)"
        notes = []
        if left.disruptive:
            d = left.count(left.disruptive)
            notes.append(f"{d} {plural_word(d, 'needs')} --allow-disruptive")
        if left.waiting:
            w = left.count(left.waiting)
            notes.append(f"{w} after another fix")
        first.append(f"{plural(fixable, 'problem')} fixable with {run}" + (f" ({'; '.join(notes)})" if notes else ""))
    hand = left.count(left.manual) + len(left.by_hand)
    if hand:
        codes = list(dict.fromkeys([p.plan.check for p in left.manual] + [f.check for f in left.by_hand]))
        first.append(f"{hand} to fix by hand (`roce-wizard explain {codes[0]}`"
                     + (f"; also {_names(codes[1:])}" if len(codes) > 1 else "") + ")")
    if first:
        lines.append("; ".join(first))
    second = _reach(left) + ([_blocked(left)] if left.blocked else [])
    if second:
        lines.append("; ".join(second))
    return lines


def fix_lines(left: Leftover, *, allow_disruptive: bool) -> list[str]:
    """What a fix run did not apply and why, one line per reason."""
    lines = []
    if left.disruptive and not allow_disruptive:
        n = len(left.disruptive)
        lines.append(f"{plural(n, 'disruptive fix', 'disruptive fixes')} not applied ({_names(_codes(left.disruptive))}): "
                     "rerun with --allow-disruptive")
    if left.waiting:
        waits = list(dict.fromkeys(c for p in left.waiting for c in p.waits_for))
        lines.append(f"{plural(len(left.waiting), 'fix', 'fixes')} {plural_word(len(left.waiting), 'waits')} for "
                     f"{_names(waits)} to pass first ({_names(_codes(left.waiting))})")
    manual = _codes(left.manual) + list(dict.fromkeys(f"{f.check} on {f.target}" for f in left.by_hand))
    if manual:
        codes = list(dict.fromkeys([p.plan.check for p in left.manual] + [f.check for f in left.by_hand]))
        lines.append(f"{plural(len(manual), 'manual fix', 'manual fixes')} ({_names(manual)}): see "
                     f"`roce-wizard explain {codes[0]}`"
                     + (" and the others' codes" if len(codes) > 1 else ""))
    if left.blocked:
        lines.append(_blocked(left))
    lines += _reach(left)
    return lines
