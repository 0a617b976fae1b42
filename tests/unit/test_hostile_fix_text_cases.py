"""The other checks whose fix by hand embeds a name a host printed (issue 11, item 1).

Recorded failing cases of the guest, firmware and BIOS checks (tests/unit/checks/), with shell syntax
appended to the name their fix line embeds, go through the real parsers and the check; every fix line
runs through the paste harness (tests/pastekit.py): the canary must never appear, and the finding
says why no command is shown. The same case without the payload still shows its command.
"""

from __future__ import annotations

import dataclasses

import pytest

from tests.checkcases import Case, run_case
from tests.pastekit import runs_canary
from tests.unit.checks import test_bios_checks, test_esxi_checks, test_guest_checks, test_vsphere_checks

CASES = {c.id: c for mod in (test_guest_checks, test_esxi_checks, test_bios_checks, test_vsphere_checks)
         for c in mod.CASES}
# (case, the name in its recorded output that reaches the fix line)
PLACES = [
    ("RW402-rxe-on-the-roce-netdev", "rxe0"),  # rdma link delete <dev>
    ("RW408-cx4lx-default-v1", "mlx5_0"),  # cma_roce_mode -d <dev>
    ("RW410-eth03-pause-on", "eth03"),  # ethtool -A <if>
    ("RW411-tclass-106-vs-dscp31", "mlx5_2"),  # echo … > /sys/class/infiniband/<dev>/…
    ("RW412-hpe-advanced-pci-on", "/dev/mst/mt4119_pciconf0"),  # mlxconfig -d <device> (Linux)
    ("RW203-corpus-shasta-old-fw", "MT_0000000011"),  # a PSID after a `#`
    ("RW101-dell-disabled", "/redfish/v1/Systems/System.Embedded.1/Bios/Settings"),  # curl <bmc URI>
]
# single words (the parsers read names as \S+), valid inside a JSON string
PAYLOADS = {
    "dollar-paren": "$(touch${IFS}CANARY)",
    "backticks": "`touch${IFS}CANARY`",
    "semicolon": ";touch${IFS}CANARY;#",
    "single-quote": "'$(touch${IFS}CANARY)'",
}


def with_payload(case: Case, token: str, payload: str) -> Case:
    outputs = {probe: text.replace(token, token + payload) if isinstance(text, str) else text
               for probe, text in case.outputs.items()}
    assert outputs != case.outputs or not payload, f"{token!r} is not in {case.id}'s outputs"
    return dataclasses.replace(case, outputs=outputs)


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
@pytest.mark.parametrize("case_id, token", PLACES, ids=[p[0] for p in PLACES])
def test_fix_lines_of_hostile_names_never_run(case_id, token, payload, tmp_path):
    findings = run_case(with_payload(CASES[case_id], token, payload))
    fixes = [f.fix for f in findings if f.fix and f.status.value in ("fail", "warn")]
    assert fixes, findings
    assert any("not shown as a command" in fix for fix in fixes), fixes
    ran = [ln for fix in fixes for ln in fix.splitlines() if runs_canary(ln, tmp_path)]
    assert not ran, ran


@pytest.mark.parametrize("case_id, token", PLACES, ids=[p[0] for p in PLACES])
def test_the_same_case_with_a_plain_name_shows_its_command(case_id, token):
    fixes = [f.fix for f in run_case(with_payload(CASES[case_id], token, "")) if f.fix]
    assert fixes and not any("not shown as a command" in fix for fix in fixes), fixes
    assert any(token in fix for fix in fixes), fixes


# vSphere names may hold spaces and quotes: the fix's shell line (vhpc_toolkit) quotes them, no refusal
VSPHERE_PLACES = [
    ("RW304-lab-fault-no-vf", "roce-pg"),  # vhpc_toolkit sriov --sriov_port_group <port group vCenter lists>
    ("RW302-fresh-no-vds", "RoCE-DC"),  # vhpc_toolkit dvs --datacenter <datacenter vCenter lists>
]


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
@pytest.mark.parametrize("case_id, token", VSPHERE_PLACES, ids=[p[0] for p in VSPHERE_PLACES])
def test_vsphere_fix_lines_quote_the_names_vcenter_printed(case_id, token, payload, tmp_path):
    findings = run_case(with_payload(CASES[case_id], token, payload))
    lines = [ln for f in findings if f.fix and f.status.value in ("fail", "warn") for ln in f.fix.splitlines()]
    assert any("vhpc_toolkit" in ln and token in ln for ln in lines), lines
    ran = [ln for ln in lines if runs_canary(ln, tmp_path)]
    assert not ran, ran
