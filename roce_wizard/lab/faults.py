"""Faults named by the check that detects them: `--fault RW208@esx-02`.

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


def inject(world: World, spec: str) -> tuple[str, str]:
    """Apply `CODE[@TARGET]`; without a target the second target of its kind (else the first)."""
    code, _, target = spec.partition("@")
    code = code.strip().upper()
    table = registry()
    if code not in table:
        raise FaultError(f"no lab fault for {code!r}; known: {', '.join(table) or 'none'}")
    fault = table[code]
    candidates = targets_of(world, fault.kind)
    if not candidates:
        raise FaultError(f"{code} needs a {fault.kind} target and the lab has none")
    if target:
        if target not in candidates:
            raise FaultError(f"{code} applies to {fault.kind} targets ({', '.join(candidates)}), not {target!r}")
    else:
        target = candidates[1] if len(candidates) > 1 else candidates[0]
    fault.apply(world, target)
    world.faults.append((code, target))
    return code, target
