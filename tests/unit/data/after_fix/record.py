"""Re-record the after-fix outputs of the ESXi and guest checks (RW201–RW213, RW401–RW414):

    python tests/unit/data/after_fix/record.py            # write every <code>-<name>.json
    python tests/unit/data/after_fix/record.py --check    # compare with the lab, write nothing

Each recording starts from the lab's own fail case for the check (scenarios.healthy() plus the lab
fault named after it), plans with the check's plan_fix, runs each step's command in the simulated
host / guest (tests/fixkit.py: the same shell and tools the lab's sshd runs) and gathers the check's
probes again through the engine. Fixes that wait for a reboot are recorded twice: right after the
steps, BEFORE the reboot (`fix` run again then must plan nothing, or it repeats the change on every
run until the reboot), and after the reboot the plan names (on ESXi, then `mst start`, RW202's fix,
as a boot stops mst). A file holds the target the plan was made for and each probe's output as the
engine parsed it (stdout, plus stderr when the probe's exit status is an answer); tests/checkcases.py
turns it into an after-fix Case.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
REPO = HERE.parents[3]
sys.path.insert(0, str(REPO))

from roce_wizard.engine import gather_target  # noqa: E402
from roce_wizard.engine.fixes import plan_for as planned_fix  # noqa: E402
from roce_wizard.lab import faults, scenarios  # noqa: E402
from roce_wizard.lab import guest as lab_guest  # noqa: E402
from roce_wizard.lab.vcenter import fold_into_world  # noqa: E402
from roce_wizard.lab.world import World  # noqa: E402
from roce_wizard.model import Policy, RebootKind, Safety, Status, Target  # noqa: E402
from roce_wizard.probes import PROBES  # noqa: E402
from tests import fixkit  # noqa: E402
from tests.checkcases import Case, after_fix_target, build_facts, target_record  # noqa: E402

HOST, GUEST, NODE = "esx-01", "compute-01", "node-01"
OFED_TGZ = f"/tmp/{lab_guest.OFED_BUNDLE}-rhel8.4-x86_64.tgz"


@dataclasses.dataclass(frozen=True)
class Recipe:
    code: str
    target: str  # lab name
    setup: Callable[[World], None]  # the fail case: the lab's fault (or the steps that make it)
    target_changes: dict[str, Any] = dataclasses.field(default_factory=dict)  # inventory details
    variant: str = ""  # a second fail case of the same check: part of the file name
    # a manual plan (words, never run): how the change is made instead, and what the file says of it
    by_hand: tuple[Callable[[World], None], str] | None = None


def _fault(code: str, name: str) -> Callable[[World], None]:
    return lambda world: faults.inject(world, f"{code}@{name}")


def _baremetal(code: str, *, rebooted: bool = False) -> Callable[[World], None]:
    def setup(world: World) -> None:
        lab_guest.add_baremetal(world, 1)
        faults.inject(world, f"{code}@{NODE}")
        if rebooted:  # the change the fault made for the next boot is the running state now
            world.reboot_guest(world.guests[NODE])
    return setup


def _rw406_no_address(world: World) -> None:
    """RW406's fail case as test_guest_fixes makes it: the RoCE address gone from the netdev and from
    its NetworkManager profile, the guest rebooted (it comes up without one)."""
    roce_ip = fixkit.target_for(world, GUEST).roce.ip
    for line in (f"ip addr del {roce_ip} dev ens256", "nmcli con mod ens256 ipv4.addresses ''"):
        assert fixkit.run_line(world, GUEST, line).exit_status == 0, line
    world.reboot_guest(world.guests[GUEST])


def rw212_pfc_not_loaded(world: World) -> None:
    """RW212's fail case (the lab has no RW212 fault: on nmlx5 global pause is in effect only while PFC is
    not operational): pfctx/pfcrx set in nmlx5_core's string but not loaded yet (no reboot since), and
    global pause configured on on vmnic2. Its DCB state shows PFC not operational; pause can still be set."""
    host = world.hosts[HOST]
    for name in ("pfctx", "pfcrx"):
        host.module_params_active.pop(name, None)
    nic = next(n for n in host.vmnics if n.name == "vmnic2")
    nic.pause_rx = nic.pause_tx = True


def rw213_through_vcenter(world: World) -> None:
    """RW213's plan is words (no vendor source for the esxcli write): the policy is changed through vCenter
    (RW307's ConfigurePowerPolicy), which the lab's vCenter folds into the World as it does in a live lab."""
    fold_into_world(world, {("hosts", HOST, "power_policy"): "High Performance"}, {})


BM = {"pf_pci": "0000:3b:00.0", "vfs": (8,)}
RECIPES = [
    *(Recipe(f"RW2{n:02d}", HOST, _fault(f"RW2{n:02d}", HOST)) for n in range(1, 13) if n != 12),
    Recipe("RW213", HOST, _fault("RW213", HOST), by_hand=(rw213_through_vcenter, (
        "its plan is manual words; the policy set through vCenter instead (RW307: `vsphere host-power-policy "
        f'{HOST} "High Performance"`, ConfigurePowerPolicy), as the lab\'s vCenter folds it into the host'))),
    Recipe("RW212", HOST, rw212_pfc_not_loaded),
    Recipe("RW401", GUEST, _fault("RW401", GUEST), {"options": {"ofed_bundle": OFED_TGZ}}),
    Recipe("RW405", GUEST, _fault("RW405", GUEST)),
    Recipe("RW406", GUEST, _rw406_no_address, {"ip": "192.168.100.11/24"}),
    Recipe("RW408", GUEST, _fault("RW408", GUEST)),
    Recipe("RW409", NODE, _baremetal("RW409"), BM),
    Recipe("RW410", NODE, _baremetal("RW410"), BM),  # n/a in a VF guest: the PF's pause, on bare metal
    Recipe("RW411", GUEST, _fault("RW411", GUEST)),
    Recipe("RW412", NODE, _baremetal("RW412"), BM),
    # the lab's RW412 fault turns SRIOV_EN off for the next boot only; booted that way it is off now
    # as well, and the fix's SRIOV_EN=1 then waits for a reboot
    Recipe("RW412", NODE, _baremetal("RW412", rebooted=True), BM, variant="sriov-off"),
    Recipe("RW413", NODE, _baremetal("RW413"), BM),  # the sysfs switch now + its boot hook
    Recipe("RW414", GUEST, _fault("RW414", GUEST)),  # the limits.d file: the next login gets it
]


def target_of(world: World, recipe: Recipe) -> Target:
    """fixkit's target, with the inventory details the lab's derived one lacks (as test_guest_fixes)."""
    t = fixkit.target_for(world, recipe.target)
    changes = dict(recipe.target_changes)
    roce = {k: changes.pop(k) for k in ("ip", "pf_pci", "vfs") if k in changes}
    if roce:
        t = dataclasses.replace(t, roce=dataclasses.replace(t.roce, **roce))
    return dataclasses.replace(t, **changes)


class _Raw:
    """Takes the engine's run-log records (one per probe run)."""

    def __init__(self) -> None:
        self.records: dict[str, dict[str, Any]] = {}

    def raw(self, target: str, key: str, record: dict[str, Any]) -> None:
        self.records[key] = record


def gather(world: World, target: Target, code: str) -> tuple[dict[str, str], dict[str, str], Any]:
    """The check's probes run through the engine: (outputs as parsed, failures, the engine's facts)."""
    raw = _Raw()
    facts = asyncio.run(gather_target(target, [fixkit.CATALOG[code]], fixkit.WorldTransport(world),
                                      command_timeout=None, runlog=raw, emit=lambda *_: None))
    outputs, failures = {}, {}
    for key, rec in raw.records.items():
        probe, _, item = key.partition(".")
        assert probe in PROBES and bool(item) == (PROBES[probe].items is not None), f"{key}: unknown probe"
        if item:  # a per-item probe (esxi_dcb_status.vmnic2): {item: stdout}, as the engine stores its facts
            if isinstance((facts.data.get(probe) or {}).get(item), dict):
                outputs.setdefault(probe, {})[item] = rec["stdout"]
            else:
                failures[key] = facts.failures[probe].reason if probe in facts.failures else "not parsed"
            continue
        if key in facts.data:  # what the engine parsed: stdout, plus stderr when the exit is an answer
            answered = not rec["timed_out"] and rec["exit_status"] in PROBES[key].answer_exits
            outputs[key] = rec["stdout"] + (rec["stderr"] if answered else "")
        else:
            failures[key] = facts.failures[key].reason
    return outputs, failures, facts


def snapshot(world: World, recipe: Recipe, target: Target, name: str, how: str) -> dict[str, Any]:
    outputs, failures, facts = gather(world, target, recipe.code)
    record = {"code": recipe.code, "name": name, "how": how, "target": target_record(target),
              "outputs": outputs, "failed_probes": failures}
    # the recording reads back as the engine read it: same facts, same findings, same plan
    case = Case(recipe.code, name, Status.PASS, outputs=outputs, target=after_fix_target(record["target"]))
    again = build_facts(case)
    assert after_fix_target(record["target"]) == target, (target, after_fix_target(record["target"]))
    for probe in outputs:
        assert again.data[probe] == facts.data[probe], f"{recipe.code} {name}: {probe} reads differently"
    check = fixkit.CATALOG[recipe.code]
    judged = [(f.status, f.summary) for f in check.evaluate(facts, Policy())]
    assert judged == [(f.status, f.summary) for f in check.evaluate(again, Policy())], name
    planned = planned_fix(check, facts, Policy())
    record["_judged"] = [f"{s.value}: {t}" for s, t in judged]  # for the reader; the Case asserts
    record["_plans_again"] = None if planned is None else [s.command for s in planned.steps]
    return record


def record_all() -> list[dict[str, Any]]:
    records = []
    for recipe in RECIPES:
        world = scenarios.healthy()
        recipe.setup(world)
        target = target_of(world, recipe)
        plan = planned_fix(fixkit.CATALOG[recipe.code], gather(world, target, recipe.code)[2], Policy())
        assert plan is not None, f"{recipe.code}: the fail case plans nothing"
        prefix = f"{recipe.variant}-" if recipe.variant else ""
        if recipe.by_hand is not None:  # a manual plan is shown, never run
            assert plan.safety is Safety.MANUAL, f"{recipe.code}: by_hand is for manual plans"
            change, said = recipe.by_hand
            change(world)
            records.append(snapshot(world, recipe, target, f"{prefix}after-fix", f"lab fault; {said}"))
            continue
        fixkit.apply(world, recipe.target, plan)
        steps = "; ".join(f"`{s.command}`" for s in plan.steps)
        if plan.reboot is RebootKind.NONE:
            records.append(snapshot(world, recipe, target, f"{prefix}after-fix",
                                    f"lab fault, then the fix's steps ({steps}); effective at once"))
            continue
        records.append(snapshot(world, recipe, target, f"{prefix}after-fix-before-reboot",
                                f"lab fault, then the fix's steps ({steps}); not yet the reboot it "
                                f"names ({plan.reboot.value})"))
        fixkit.reboot_if_needed(world, recipe.target, plan)
        then = ""
        if recipe.target in world.hosts:  # a boot stops mst: RW202's own fix, as `fix` runs it
            mst = fixkit.plan_for(world, recipe.target, "RW202")
            if mst is not None:
                fixkit.apply(world, recipe.target, mst)
                then = ", then RW202's fix (`mst start`)"
        records.append(snapshot(world, recipe, target, f"{prefix}after-fix-rebooted",
                                f"lab fault, then the fix's steps ({steps}), then the reboot it names "
                                f"({plan.reboot.value}){then}"))
    return records


def file_of(code: str, name: str) -> Path:
    return HERE / f"{code.lower()}-{name}.json"


def main(argv: list[str]) -> int:
    records = record_all()
    stale = []
    for rec in records:
        path = file_of(rec["code"], rec["name"])
        text = json.dumps(rec, indent=1, ensure_ascii=False) + "\n"
        if "--check" in argv:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
        print(f"{path.name}: {rec['_judged']}; plans again: {rec['_plans_again']}")
    if stale:
        print("stale (the lab prints something else now):", ", ".join(stale))
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
