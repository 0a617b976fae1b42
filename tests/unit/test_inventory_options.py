"""Inventory `options:` validated like every other field (issue 11 item 14), and RW001 naming the
credential that did not resolve.

`doctor` runs as a user runs it (a process of its own): a bad option is exit 2 with file:line:field
and what was expected, before anything is contacted.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from roce_wizard.inventory import InventoryError, load_inventory
from roce_wizard.model import Credentials, Facts, Policy, SecretRef, SecretSource, Status, Target, TargetKind
from tests.conftest import REPO

CLI = [sys.executable, "-m", "roce_wizard.cli"]


def doctor(tmp_path: Path, inventory: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "inventory.yaml").write_text(inventory)
    env = {**os.environ, "PYTHONPATH": str(REPO), "ROCE_WIZARD_STATE_DIR": str(tmp_path / "state"),
           "COLUMNS": "250"}
    return subprocess.run([*CLI, "doctor", "-i", "inventory.yaml"], env=env, capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)


BAD = {
    "timeout-not-a-number": (
        "targets:\n  switch:\n    - name: sw-1\n      device_type: arista_eos\n      options: {connect_timeout: abc}\n",
        "inventory.yaml:5: targets.switch[0].options.connect_timeout: expected a number of seconds > 0 and ≤ 3600, "
        "got 'abc'"),
    "timeout-in-defaults": (
        "defaults:\n  esxi:\n    options:\n      command_timeout: -5\ntargets:\n  esxi:\n    - {name: esx-01}\n",
        "inventory.yaml:4: defaults.esxi.options.command_timeout: expected a number of seconds > 0 and ≤ 86400, "
        "got '-5'"),
    "known-hosts-typo": (
        "targets:\n  esxi:\n    - name: esx-01\n      options:\n        known_host: /etc/ssh/kh\n",
        "inventory.yaml:5: targets.esxi[0].options.known_host: unknown option 'known_host' (did you mean "
        "'known_hosts'?); valid: known_hosts, connect_timeout, command_timeout (for esxi targets)"),
    "option-of-another-kind": (
        "targets:\n  esxi:\n    - {name: esx-01, options: {insecure: true}}\n",
        "inventory.yaml:3: targets.esxi[0].options.insecure: option 'insecure' is not read for esxi targets "
        "(only for vcenter, bmc)"),
    "insecure-not-bool": (
        "targets:\n  vcenter:\n    - {name: vc, options: {insecure: 'yes please'}}\n",
        "inventory.yaml:3: targets.vcenter[0].options.insecure: expected true or false, got 'yes please'"),
    "ca-file-a-list": (
        "targets:\n  bmc:\n    - {name: bmc-1, options: {ca_file: [a, b]}}\n",
        "inventory.yaml:3: targets.bmc[0].options.ca_file: expected a path to a PEM file of the CA"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_option_is_exit_2_with_file_line_field_and_expected(tmp_path, case):
    inventory, message = BAD[case]
    result = doctor(tmp_path, inventory)
    err = " ".join(result.stderr.split())
    assert result.returncode == 2, (result.returncode, result.stdout[-1500:], result.stderr[-1500:])
    assert "Traceback" not in result.stderr
    assert message in err, err


def test_valid_options_keep_their_values_and_site_options_pass_through(tmp_path):
    path = tmp_path / "inventory.yaml"
    path.write_text(
        "defaults:\n  esxi:\n    options: {known_hosts: ~/.ssh/known_hosts, connect_timeout: 10}\n"
        "targets:\n  esxi:\n    - {name: esx-01, options: {command_timeout: 2.5, x_rack: {row: 4}}}\n"
        "  vcenter:\n    - {name: vc, options: {ca_file: /etc/ssl/vc.pem, insecure: false, dvs: HPC DVS, "
        "portgroup: roce-pg}}\n"
        "  guest:\n    - {name: c-01, options: {ofed_bundle: /tmp/MLNX_OFED.tgz}}\n")
    inv = load_inventory(path)
    assert dict(inv.get("esx-01").options) == {"known_hosts": "~/.ssh/known_hosts", "connect_timeout": 10,
                                               "command_timeout": 2.5, "x_rack": {"row": 4}}
    assert dict(inv.get("vc").options) == {"ca_file": "/etc/ssl/vc.pem", "insecure": False, "dvs": "HPC DVS",
                                           "portgroup": "roce-pg"}
    assert inv.get("c-01").options["ofed_bundle"] == "/tmp/MLNX_OFED.tgz"


def test_unknown_option_names_the_closest_only_when_close(tmp_path):
    path = tmp_path / "inventory.yaml"
    path.write_text("targets:\n  esxi:\n    - {name: esx-01, options: {banana: 1}}\n")
    with pytest.raises(InventoryError) as err:
        load_inventory(path)
    assert "unknown option 'banana'; valid:" in str(err.value) and "did you mean" not in str(err.value)


def rw001(target: Target, message: str):
    from roce_wizard.catalog import load_catalog

    check = load_catalog([])["RW001"]
    facts = Facts(data={"connection": {"ok": False, "error_kind": "credential", "message": message,
                                       "transport": "netmiko", "address": target.address}}, target=target)
    (finding,) = check.evaluate(facts, Policy())
    return finding


@pytest.mark.parametrize("ref, message, fix", [
    (SecretRef(SecretSource.ENV, "ROCE_LAB_SWITCH_PASSWORD"),
     "environment variable ROCE_LAB_SWITCH_PASSWORD is not set",
     "read -rs ROCE_LAB_SWITCH_PASSWORD && export ROCE_LAB_SWITCH_PASSWORD  # type the password of admin@10.0.0.9"),
    (SecretRef(SecretSource.KEYRING, "roce wizard/admin"), "keyring has no password for service 'roce wizard'",
     "keyring set 'roce wizard' admin  # store the password of admin@10.0.0.9"),
], ids=["env", "keyring"])
def test_rw001_says_which_reference_did_not_resolve_and_how_to_give_it(ref, message, fix):
    target = Target(name="sw-1", kind=TargetKind.SWITCH, address="10.0.0.9",
                    credentials=Credentials(username="admin", password=ref))
    finding = rw001(target, message)
    assert finding.status is Status.ERROR
    assert finding.summary == f"no password for admin@10.0.0.9: {message}"
    assert finding.fix.startswith(fix)
