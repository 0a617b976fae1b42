"""Faults named by the check that detects them: `--fault RW208@esx-02`.

One convention in every device package: its `faults.py` defines `FAULTS` (code -> Fault) and one
`_rwNNN(world, target)` per fault, named by the code like the fault itself.

Each simulated device module contributes a ``FAULTS`` table of its own; a fault turns a healthy
world into one where exactly its check fails on exactly its target (dependent checks may then
report `skip`, naming it as the root cause). The lab never imports `checks/`: a fault is a change
to the world, and the judge has to notice it from the outputs like on real hardware.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from roce_wizard.lab.world import World

# target kinds as the inventory names them
KINDS = ("esxi", "guest", "linux", "switch", "vcenter", "bmc")
_MODULES = ("roce_wizard.lab.esxi", "roce_wizard.lab.guest", "roce_wizard.lab.server", "roce_wizard.lab.switch",
            "roce_wizard.lab.vcenter", "roce_wizard.lab.redfish")


@dataclass(frozen=True)
class Fault:
    code: str
    kind: str  # the target kind it applies to
    description: str  # what breaks, in an operator's words
    apply: Callable[[World, str], None]
    # the target doctor reports the finding on, when it is not the one the fault is injected on (a vCenter
    # check judges the hosts and VMs vCenter manages: RW301 is reported on esx-02, RW304 on compute-02):
    # (world, injection target) -> reported target; None: reported where injected
    reported_on: Callable[[World, str], str] | None = None
    # further target kinds it can be injected on when named (`RW607@compute-02`); the default target is `kind`'s
    also: tuple[str, ...] = ()

    def reported_target(self, world: World, target: str) -> str:
        return target if self.reported_on is None else self.reported_on(world, target)


class FaultError(ValueError):
    pass


def registry() -> dict[str, Fault]:
    table: dict[str, Fault] = {}
    for name in _MODULES:
        module = importlib.import_module(name)
        # VALIDATE_FAULTS: faults only a measurement between two nodes detects (lab/guest/faults.py)
        for fault in (*getattr(module, "FAULTS", {}).values(), *getattr(module, "VALIDATE_FAULTS", {}).values()):
            if fault.code in table:
                raise RuntimeError(f"fault {fault.code} defined twice")
            table[fault.code] = fault
    return dict(sorted(table.items()))


def targets_of(world: World, kind: str) -> list[str]:
    return {
        "esxi": list(world.hosts),
        "guest": [g.name for g in world.guests.values() if g.vm is not None],
        "linux": [g.name for g in world.guests.values() if g.vm is None],
        "switch": list(world.switches),
        "vcenter": ["vcenter"] if world.vcenter is not None else [],
        "bmc": [f"bmc-{h}" for h in world.hosts],
    }[kind]


def resolve_fault(world: World, code: str, target: str = "") -> tuple[Fault, str]:
    """The fault for `code` and the target it is injected on. `target` may name that target or the one doctor
    reports the finding on (`RW301@esx-02`: vCenter's fault, reported on the host); empty: the second target
    of its kind (else the first)."""
    code = code.strip().upper()
    table = registry()
    if code not in table:
        raise FaultError(f"no lab fault for {code!r}; known: {', '.join(table) or 'none'}")
    fault = table[code]
    candidates = targets_of(world, fault.kind)
    if not candidates:
        raise FaultError(f"{code} needs a {fault.kind} target and the lab has none")
    if not target:
        return fault, candidates[1] if len(candidates) > 1 else candidates[0]
    if target in candidates or any(target in targets_of(world, k) for k in fault.also):
        return fault, target
    reported = {fault.reported_target(world, c): c for c in candidates}
    if target in reported:
        return fault, reported[target]
    also = sorted(set(reported) - set(candidates))
    where = f" or the target doctor reports it on ({', '.join(also)})" if also else ""
    raise FaultError(f"{code} applies to {fault.kind} targets ({', '.join(candidates)}){where}, not {target!r}")


def inject(world: World, spec: str) -> tuple[str, str]:
    """Apply `CODE[@TARGET]` (see resolve_fault); returns the code and the target it was injected on."""
    code, _, target = spec.partition("@")
    fault, target = resolve_fault(world, code, target.strip())
    code = fault.code
    fault.apply(world, target)
    world.faults.append((code, target))
    return code, target
