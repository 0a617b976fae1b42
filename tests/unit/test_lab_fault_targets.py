"""`lab up --fault CODE@TARGET` takes the target doctor reports the finding on (issue 14, item 4).

For every fault in the lab's registry: the target doctor reports its finding on is accepted by `--fault` and
lands the fault where the lab injects it. Where doctor reports: on the injection target itself when the check
judges that kind of target (the check's CHECK.target), else, for vCenter's checks that judge the hosts and VMs
vCenter manages, on the host or VM named in REPORTED_BY_DOCTOR (seen on the lab: tests/lab/test_faults.py
asserts every failing finding's target round-trips through `resolve_fault`, so this table cannot drift).
"""

from __future__ import annotations

import pytest

from roce_wizard.catalog import load_catalog
from roce_wizard.lab import guest, scenarios
from roce_wizard.lab.faults import FaultError, inject, registry, targets_of

CATALOG = load_catalog([])
FAULTS = registry()
# vCenter faults whose finding doctor reports on a host or VM, not on the vcenter target (a `lab up` world: the
# fault lands on the second host and its VM)
REPORTED_BY_DOCTOR = {"RW301": "esx-02", "RW302": "esx-02", "RW307": "esx-02",
                      "RW304": "compute-02", "RW305": "compute-02", "RW306": "compute-02"}
# validate checks of a node pair that report a finding on the target the fault is injected on although the check
# judges guests and Linux hosts: RW609 judges the switch ports of the pair's nodes and reports on the switch
REPORTED_WHERE_INJECTED = {"RW609"}


def _world():
    world = scenarios.healthy(2)
    guest.add_baremetal(world, 2)
    return world


def _default_target(world, code: str) -> str:
    candidates = targets_of(world, FAULTS[code].kind)
    return candidates[1] if len(candidates) > 1 else candidates[0]


@pytest.mark.parametrize("code", sorted(FAULTS))
def test_fault_accepts_the_target_doctor_reports_it_on(code):
    world = _world()
    fault, injected_on = FAULTS[code], _default_target(world, code)
    if code in REPORTED_BY_DOCTOR:
        reported = REPORTED_BY_DOCTOR[code]
    elif code in REPORTED_WHERE_INJECTED:
        reported = injected_on
    else:
        check = CATALOG.get(code)
        assert check is None or fault.kind in {k.value for k in check.meta.target_kinds}, (
            f"{code} is injected on a {fault.kind} target but its check judges {check.meta.target_kinds}: "
            "say in REPORTED_BY_DOCTOR where doctor reports it")
        reported = injected_on
    assert inject(world, f"{code}@{reported}") == (code, injected_on)
    assert world.faults == [(code, injected_on)]


@pytest.mark.parametrize(("spec", "message"), [
    ("RW301@esx-01", ("RW301 applies to vcenter targets (vcenter) or the target doctor reports it on (esx-02), "
                      "not 'esx-01'")),
    ("RW304@compute-01", ("RW304 applies to vcenter targets (vcenter) or the target doctor reports it on "
                          "(compute-02), not 'compute-01'")),
    ("RW208@vcenter", "RW208 applies to esxi targets (esx-01, esx-02), not 'vcenter'"),
])
def test_a_target_the_fault_does_not_land_on_is_refused_naming_both(spec, message):
    with pytest.raises(FaultError) as exc:
        inject(_world(), spec)
    assert str(exc.value) == message
