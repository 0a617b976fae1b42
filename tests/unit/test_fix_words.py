"""The wizard's words about fixes (issue 17 item 4), pure: the second confirmation tells a change that applies
at once (a switch port's PFC/MTU: reboot kind none) from one that takes effect only after a reboot; the rail
says "blocked" for an all-blocked stage (item 6)."""

from __future__ import annotations

from roce_wizard.engine.fixes import Planned
from roce_wizard.model import FixPlan, RebootKind, Safety, Status, Step, Target, TargetKind
from roce_wizard.tui.board import BLOCKED, PENDING
from roce_wizard.tui.cellwords import rail_text, title_counts
from roce_wizard.tui.screens.fix import disruptive_body


def planned(check: str, target: str, kind: TargetKind, reboot: RebootKind, summary: str) -> Planned:
    plan = FixPlan(check, target, summary, (Step(summary, "true"),), Safety.DISRUPTIVE, reboot)
    return Planned(plan, Target(target, kind, "127.0.0.1"), allowed=True)


def test_switch_changes_apply_at_once_and_host_changes_after_the_reboot():
    body = [t.plain for t in disruptive_body([
        planned("RW209", "esx-01", TargetKind.ESXI, RebootKind.HOST, "PFC on priority 3"),
        planned("RW501", "leaf-1", TargetKind.SWITCH, RebootKind.NONE, "PFC on priority 3 on Ethernet1/1"),
    ], vms=True)]
    now = body.index(next(b for b in body if b.startswith("These apply at once, no reboot")))
    later = body.index(next(b for b in body if "take effect only after the reboot shown" in b))
    assert now < later
    assert body[now + 1] == "  leaf-1 RW501: PFC on priority 3 on Ethernet1/1 (immediately)"
    assert body[later + 1] == "  esx-01 RW209: PFC on priority 3 (after reboot: host)"
    assert "VMs powered off" in body[later]


def test_only_switch_changes_never_speak_of_a_reboot():
    body = " ".join(t.plain for t in disruptive_body([
        planned("RW504", "leaf-1", TargetKind.SWITCH, RebootKind.NONE, "MTU 9216 on Ethernet1/1")]))
    assert "apply at once" in body and "reboot shown" not in body and "take effect only after" not in body


def test_rail_says_blocked_when_every_judged_cell_is_blocked_and_counts_pending_apart():
    blocked = {s: 0 for s in Status} | {Status.SKIP: 16, BLOCKED: 16, PENDING: 0}
    assert rail_text(blocked).plain == "- blocked (16)"
    mixed = {s: 0 for s in Status} | {Status.PASS: 3, PENDING: 2, Status.FAIL: 1, BLOCKED: 0}
    assert rail_text(mixed).plain == "✓3 ⟳2 ✗1 "
    assert rail_text(mixed, running=True).plain == "✓3 ⟳2 ✗1 …"
    title = title_counts(mixed | {Status.ERROR: 1}).plain
    assert "⟳ 2 wait for a reboot" in title and "? 1 could not run" in title and "error" not in title
    assert rail_text({s: 0 for s in Status} | {PENDING: 0, BLOCKED: 0}).plain == "· nothing judged"
    assert rail_text({s: 0 for s in Status} | {Status.SKIP: 4, PENDING: 0, BLOCKED: 0}).plain == "- not applicable (4)"
