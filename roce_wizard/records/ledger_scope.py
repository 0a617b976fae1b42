"""Scoping the reboot ledger to the machines in front of us (issue 11 item 11).

The ledger folds every run under the state dir, and host names repeat across sites (every site has an
esx-01). An event is about a MACHINE, not a name: each run records, per target, the identity the target
reported (RW003's `system_id`: the ESXi host's SMBIOS UUID from `vim-cmd hostsvc/hostsummary`, a Linux
installation's /etc/machine-id). When `fix` folds the ledger it keeps, for the inventory's hosts and
guests, only the events of runs that saw the same machine it sees now; events of a run that saw another
machine (or none: it could not tell) under that name are another cluster's and never cause a reboot here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from roce_wizard.model import Target, TargetKind

IDENTIFIED_KINDS = frozenset({TargetKind.ESXI, TargetKind.LINUX, TargetKind.GUEST})


def event_subject(event: Mapping[str, Any], aliases: Mapping[str, str]) -> str | None:
    """The host or guest an event is about: the one a change waits on (fix-step `host`), the host a VM was
    powered off for (vm-power `host`), else its target."""
    name = event.get("target")
    kind = event.get("type")
    if kind in ("fix-step", "vm-power") and isinstance(event.get("host"), str) and event.get("host"):
        name = event["host"]
    return aliases.get(name, name) if isinstance(name, str) and name else None


def run_identities(events: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    """(run, target) -> the system identity that target reported in that run (RW003's details)."""
    out: dict[tuple[str, str], str] = {}
    for e in events:
        if e.get("type") != "finding" or e.get("check") != "RW003":
            continue
        sid = (e.get("details") or {}).get("system_id")
        if isinstance(sid, str) and sid and isinstance(e.get("target"), str):
            out[(str(e.get("run") or ""), e["target"])] = sid
    return out


def identities_in_run(events: Iterable[Mapping[str, Any]], run: str) -> dict[str, str]:
    """target -> the identity it reported in `run` (read live by that run's checks)."""
    return {target: sid for (r, target), sid in run_identities(events).items() if r == run}


def scope_events(events: list[dict[str, Any]], aliases: Mapping[str, str], identities: Mapping[str, str],
                 scoped: Iterable[str], current: str | None = None,
                 ) -> tuple[list[dict[str, Any]], dict[str, set[str]]]:
    """The events that are about the machines `identities` names (target -> identity read now), for the
    `scoped` targets (the inventory's hosts and guests); events about other targets pass unchanged. A
    scoped target whose identity was not read now keeps none of its events: nothing unconfirmed is
    acted on. The `current` run's own events always count: it acted on the machines in front of it.
    Also returns, per target, the runs whose events were left out (another machine's)."""
    seen = run_identities(events)
    scoped = set(scoped)
    kept: list[dict[str, Any]] = []
    left_out: dict[str, set[str]] = {}
    for e in events:
        subject = event_subject(e, aliases)
        run = str(e.get("run") or "")
        if subject in scoped and (current is None or run != current):
            now = identities.get(subject)
            if now is None or seen.get((run, subject)) != now:
                left_out.setdefault(subject, set()).add(run)
                continue
        kept.append(e)
    return kept, left_out


def scoped_names(targets: Iterable[Target]) -> set[str]:
    return {t.name for t in targets if t.kind in IDENTIFIED_KINDS}


def clusters(events: list[dict[str, Any]]) -> list[tuple[list[str], dict[str, str]]]:
    """Runs grouped by the machines they saw (two runs are one cluster when they saw one machine under
    one name), oldest first: [(runs, {target: identity})]. Runs that recorded no identity at all (logs of
    an older version, or nothing reachable) form a group of their own at the end."""
    seen = run_identities(events)
    runs = list(dict.fromkeys(str(e.get("run") or "") for e in events))
    parent = {r: r for r in runs}

    def root(r: str) -> str:
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    owner: dict[tuple[str, str], str] = {}
    for (run, target), sid in seen.items():
        key = (target, sid)
        if key in owner:
            parent[root(run)] = root(owner[key])
        else:
            owner[key] = run
    groups: dict[str, list[str]] = {}
    for r in runs:
        groups.setdefault(root(r), []).append(r)
    out: list[tuple[list[str], dict[str, str]]] = []
    unidentified: list[str] = []
    for members in groups.values():
        ids = {t: sid for (run, t), sid in seen.items() if run in members}
        if ids:
            out.append((members, ids))
        else:
            unidentified.extend(members)
    if unidentified:
        out.append((unidentified, {}))
    return out
