"""Hand-fix text built from hostile tool output never runs what the host printed (issue 11, item 1).

A recorded ESXi host (the sample cluster's esx-02, examples/sample-cluster/recordings.yaml) is
replayed with outputs that carry shell syntax where the fix-by-hand lines embed host values: the mst
device in the mlxconfig query (RW205-RW208's `mlxconfig -d`), an nmlx5_core parameter value and name
(RW208-RW211's `-p "…"`) and a vmnic in the nic and pauseParams lists (RW212's `pauseParams set -n`).
Every line `doctor --json` gives as "fix" runs through bash (restricted, a PATH holding only `touch`,
in a scratch directory): the canary file the payloads would create must never appear. The plans
`fix` would execute for the same inputs are refused or quoted.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from roce_wizard.catalog import load_catalog
from roce_wizard.cli import app
from roce_wizard.commands.handfix import MST_DEVICE, NMLX5_PARAMS, VMNIC, refused
from roce_wizard.engine import run_checks
from roce_wizard.engine.fixes import plan_fixes
from roce_wizard.inventory import load_inventory
from roce_wizard.model import Safety
from roce_wizard.playbook import load_playbook
from roce_wizard.transports.replay import ReplayTransport
from tests.pastekit import runs_canary

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample-cluster" / "recordings.yaml"
MLXCONFIG = "/opt/mellanox/bin/mlxconfig -d mt4119_pciconf1 -e query"
PARAMS = "esxcli --formatter=csv system module parameters list -m nmlx5_core"
NICS = "esxcli --formatter=csv network nic list"
PAUSE = "esxcli --formatter=csv network nic pauseParams list"
# what an attacker who controls a tool's output would print (single words: ${IFS} for a space; a `#` at
# the end so the rest of the pasted line does not make `touch` fail before it creates the canary)
PAYLOADS = {
    "semicolon": "x;touch${IFS}CANARY;#",
    "dollar-paren": "$(touch${IFS}CANARY)",
    "backticks": "`touch${IFS}CANARY`",
    "single-quote": "x'$(touch${IFS}CANARY)'",
    "double-quote": 'x"$(touch${IFS}CANARY)"',
    "newline": "x\ntouch CANARY #",
    "or": "x||touch${IFS}CANARY;#",
}
INVENTORY = """\
policy: {vib_datastore: /vmfs/volumes/datastore1/mellanox}
targets:
  esxi:
    - name: esx-[1-2]
      address: 127.0.0.1
      username: root
      password: not-used-by-replay
      roce: {pf_pci: "0000:3b:00.0"}
"""


def _csv(value: str) -> str:
    return '"' + value.replace('"', '""') + '"'


def hostile_recording(payload: str) -> dict:
    """esx-02 as recorded, twice, with `payload` in the mst device name, an nmlx5_core value and name, and a
    vmnic. esx-1: firmware values RW205-RW207 fail on (LINK_TYPE IB, ADVANCED_PCI on, SR-IOV off); esx-2:
    SR-IOV on with too few VFs (RW208), trust PCP and ECN off (RW210, RW211)."""
    base = yaml.safe_load(SAMPLE.read_text())["targets"]["esx-02"]["commands"]
    return {"targets": {"esx-1": {"commands": _host(base, payload, sriov=False)},
                        "esx-2": {"commands": _host(base, payload, sriov=True)}}}


def _host(base: dict, payload: str, sriov: bool) -> dict:
    commands = copy.deepcopy(base)
    one_line = payload.replace("\n", ";")  # the mlxconfig header is line-based: a newline cannot sit in it
    query = commands[MLXCONFIG]["stdout"]
    query = re.sub(r"(?m)^(Device:\s+)\S+", lambda m: m.group(1) + "mt4119" + one_line, query)
    if sriov:
        query = re.sub(r"(?m)^(\*?\s+NUM_OF_VFS\s+).*$", r"\g<1>8               4               4", query)
    else:
        query = re.sub(r"(?m)^(\*?\s+LINK_TYPE_P1\s+).*$", r"\1ETH(2)          ETH(2)          IB(1)", query)
        query = re.sub(r"(?m)^(\*?\s+ADVANCED_PCI_SETTINGS\s+).*$", r"\1False(0)        True(1)         True(1)",
                       query)
        query = re.sub(r"(?m)^(\*?\s+SRIOV_EN\s+).*$", r"\1True(1)         False(0)        False(0)", query)
    commands[MLXCONFIG]["stdout"] = query
    params = commands[PARAMS]["stdout"].splitlines()
    params = [ln if ",DRSS," not in ln else ln.split(",DRSS,")[0] + f",DRSS,int,{_csv(payload)}," for ln in params]
    if sriov:
        params = [re.sub(r",trust_state,int,2,$", ",trust_state,int,1,", re.sub(r",ecn,int,1,$", ",ecn,int,0,", ln))
                  for ln in params]
    params.append(f'"a parameter the host made up",{_csv("p" + one_line)},int,1,')
    commands[PARAMS]["stdout"] = "\n".join(params) + "\n"
    vmnic = "vmnic9" + payload
    nics = commands[NICS]["stdout"].splitlines()
    row = next(ln for ln in nics if ",vmnic3," in ln)
    commands[NICS]["stdout"] = "\n".join([*nics, row.replace("vmnic3", _csv(vmnic)).replace("3b:00.1", "3b:00.2")]) + "\n"
    pause = commands[PAUSE]["stdout"].splitlines()
    commands[PAUSE]["stdout"] = "\n".join([*pause, f"false,false,{_csv(vmnic)},true,true,true,false,false,"]) + "\n"
    return commands


def fix_lines(results: list[dict]) -> list[str]:
    return [ln for r in results if r.get("fix") for ln in r["fix"].splitlines()]


def test_the_paste_harness_sees_an_unquoted_payload(tmp_path):
    """The harness is honest: the line the first version printed runs the canary; quoted, it does not."""
    assert runs_canary("/opt/mellanox/bin/mlxconfig -d mt4119$(touch${IFS}CANARY) -y set SRIOV_EN=1", tmp_path)
    assert runs_canary('esxcli system module parameters set -m nmlx5_core -p "DRSS=$(touch${IFS}CANARY)"', tmp_path)
    assert not runs_canary("/opt/mellanox/bin/mlxconfig -d 'mt4119$(touch${IFS}CANARY)' -y set SRIOV_EN=1", tmp_path)


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_doctor_fix_lines_never_run_a_hostile_value(payload, tmp_path, monkeypatch):
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    (tmp_path / "inventory.yaml").write_text(INVENTORY)
    (tmp_path / "rec.yaml").write_text(yaml.safe_dump(hostile_recording(payload)))
    result = CliRunner().invoke(app, ["doctor", "-i", str(tmp_path / "inventory.yaml"), "--replay",
                                      str(tmp_path / "rec.yaml"), "--stage", "esxi", "--json"])
    out = json.loads(result.stdout)
    by_check: dict[str, list[dict]] = {}
    for r in out["results"]:
        by_check.setdefault(r["check"], []).append(r)
    # the checks whose fix embeds a hostile value fail and say why no command is shown
    fixes = {code: [r["fix"] for r in by_check.get(code, []) if r.get("fix")] for code in
             ("RW205", "RW206", "RW207", "RW208", "RW209", "RW210", "RW211", "RW212")}
    for code in ("RW205", "RW206", "RW207"):
        assert fixes[code] and all(f == refused(MST_DEVICE) for f in fixes[code]), (code, fixes[code])
    assert fixes["RW208"] and all(f.startswith(refused(MST_DEVICE) + "\n" + refused(NMLX5_PARAMS))
                                  for f in fixes["RW208"]), fixes["RW208"]
    for code in ("RW209", "RW210", "RW211"):
        assert fixes[code] and all(f == refused(NMLX5_PARAMS) for f in fixes[code]), (code, fixes[code])
    assert refused(VMNIC) in fixes["RW212"], fixes["RW212"]
    assert any(f.startswith("esxcli network nic pauseParams set -n vmnic2 ") for f in fixes["RW212"])  # the sane one
    lines = fix_lines(out["results"])
    assert lines
    ran = [ln for ln in lines if runs_canary(ln, tmp_path)]
    assert not ran, ran


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_fix_plans_for_hostile_values_are_refused_or_quoted(payload, tmp_path):
    (tmp_path / "inventory.yaml").write_text(INVENTORY)
    (tmp_path / "rec.yaml").write_text(yaml.safe_dump(hostile_recording(payload)))
    inventory = load_inventory(tmp_path / "inventory.yaml")
    book = load_playbook("vsphere-sriov")
    chosen = {c: k for c, k in load_catalog([]).items() if book.stage_of(c) is not None and not c.startswith("RW6")}
    report = asyncio.run(run_checks(list(inventory.targets), chosen, ReplayTransport.from_file(tmp_path / "rec.yaml"),
                                    inventory.policy, stage_of={c: book.stage_of(c) for c in chosen}))
    planned, errors = plan_fixes(report, inventory.policy, {Safety.SAFE, Safety.DISRUPTIVE})
    refusals = [e for e in errors if "not planned: refusing to put" in e]  # said as a refusal, not a crash
    assert {e.split()[0] for e in refusals} >= {"RW205", "RW206", "RW207", "RW208", "RW209", "RW210", "RW211"}, errors
    steps = [s.command for p in planned for s in p.plan.steps]
    ran = [c for c in steps if runs_canary(c, tmp_path)]
    assert not ran, ran


def test_a_clean_host_still_gets_its_commands(tmp_path, monkeypatch):
    """The validation leaves ordinary names alone: the same replay with plain values shows the commands."""
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    (tmp_path / "inventory.yaml").write_text(INVENTORY)
    (tmp_path / "rec.yaml").write_text(yaml.safe_dump(hostile_recording("7")))
    result = CliRunner().invoke(app, ["doctor", "-i", str(tmp_path / "inventory.yaml"), "--replay",
                                      str(tmp_path / "rec.yaml"), "--stage", "esxi", "--json"])
    fixes = [r["fix"] for r in json.loads(result.stdout)["results"] if r.get("fix")]
    assert "/opt/mellanox/bin/mlxconfig -d mt41197 -y set LINK_TYPE_P1=2  # then reboot the host" in fixes, fixes
    assert any(f.startswith('esxcli system module parameters set -m nmlx5_core -p "DRSS=7 ') and " p7=1 " in f
               for f in fixes), fixes
    assert any(f.startswith("esxcli network nic pauseParams set -n vmnic97 ") for f in fixes), fixes
    assert not any("not shown as a command" in f for f in fixes), fixes
    assert os.path.exists(tmp_path / "rec.yaml")
