"""Pending is not passing (issue 17 item 2): a check that passes on a value that is staged but not yet in
effect — a VIB installed "active after reboot" (RW201, RW204), nmlx5_core parameters written for the next
load (RW209, RW210), firmware Next Boot values, a BIOS value staged on the BMC — says so.

How checks express "staged" today: not in their findings (they judge what they read, and a written module
parameter reads as the new value) but in the reboot ledger: every fix step that succeeded with a reboot
kind is a `PendingItem` of the host it waits on until a boot happens after it (`awaiting_reboot`). So a
PASS finding of (target, check) with such an item is marked `pending_reboot` here, with what it waits
for. Its status stays `pass` (the JSON contract's statuses are a closed set); the front ends show ⟳ and
exit code 3 says "not proven yet" (judge.exit_code_for).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from roce_wizard.model import Finding, RebootKind, Status, Target

# what each reboot kind is, said after "waits for"
WAITS_FOR = {
    RebootKind.HOST: "a host reboot",
    RebootKind.FW_RESET: "a firmware reset (power cycle)",
    RebootKind.BIOS: "a reboot (BIOS)",
    RebootKind.DRIVER_RELOAD: "a driver reload",
    RebootKind.VM_REBOOT: "a VM reboot",
    RebootKind.VM_POWER_OFF: "a VM power cycle",
}
RW214 = "RW214"  # "something is pending" itself: its items belong to no passing check


def staged_changes(book: Mapping[str, Any]) -> dict[tuple[str, str], Any]:
    """(target, check) -> the ledger's PendingItem no boot has happened since, under the host it waits on and
    the target the change was made on (a BIOS value: the BMC; a VM's setting: the vCenter)."""
    out: dict[tuple[str, str], Any] = {}
    for name, entry in book.items():
        for item in entry.awaiting_reboot:
            if item.check == RW214:
                continue
            for who in (name, item.target):
                out.setdefault((who, item.check), item)
    return out


def waits_for(item: Any) -> str:
    """"waits for a host reboot (the new nmlx5 driver loads at the next boot)"."""
    what = WAITS_FOR.get(item.reboot, f"a reboot ({getattr(item.reboot, 'value', item.reboot)})")
    return f"waits for {what}" + (f" ({item.reason})" if item.reason else "")


def mark_pending(findings: Iterable[Finding], book: Mapping[str, Any]) -> int:
    """Mark the passes whose change waits for a reboot; returns how many."""
    staged = staged_changes(book)
    marked = 0
    for f in findings:
        item = staged.get((f.target, f.check)) if f.status is Status.PASS else None
        if item is not None:
            f.pending_reboot = waits_for(item)
            marked += 1
    return marked


def look_ledger(base: Path, run: str, targets: list[Target]) -> dict[str, Any]:
    """The ledger as one look sees it: a host whose machine identity this run read (RW003) keeps only the
    events of runs that saw that machine (another cluster's esx-01 is not this one); a host it could not
    identify keeps every event under its name (a --select without RW003 still sees its staged changes)."""
    from roce_wizard.records.ledger import all_events, ledger_from_events, vm_aliases  # noqa: PLC0415
    from roce_wizard.records.ledger_scope import identities_in_run, scope_events, scoped_names  # noqa: PLC0415

    events = all_events(base)
    aliases = vm_aliases(targets)
    live = identities_in_run(events, run)
    events, _ = scope_events(events, aliases, live, {n for n in scoped_names(targets) if n in live}, run)
    return ledger_from_events(events, aliases)


def pending_count(findings: Iterable[Finding]) -> int:
    return sum(1 for f in findings if f.status is Status.PASS and f.pending_reboot)
