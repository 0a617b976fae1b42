"""The lab's Cumulus NVUE switch (lab/switch_nvue.py): what NVIDIA documents, and nothing else.

- `nv set qos roce trust …` does not exist: refused; `nv set qos roce mode lossless` does.
- `nv config apply` asks `Are you sure? [y/N]` unless `-y`; `nv config apply <rev> -y` puts a revision back.
- netmiko's `cumulus_linux` driver (what the transport maps `cumulus_nvue` to) drives the shell.
"""

from __future__ import annotations

import asyncio

import asyncssh

from roce_wizard.lab import faults as faults_mod
from roce_wizard.lab import switch as sw_mod
from roce_wizard.lab.scenarios import healthy
from roce_wizard.lab.switch.nvue import NvueCli
from roce_wizard.parsers import PARSERS
from roce_wizard.transports.switch import NETMIKO_DEVICE_TYPES


def _cli(fault: str | None = None) -> tuple[NvueCli, object]:
    world = healthy(2, "nvue")
    if fault:
        faults_mod.inject(world, fault)
    return NvueCli(world, "sw-nvue-1"), world


def test_only_documented_nv_lines_are_taken():
    cli, _ = _cli("RW503")
    assert cli.prompt == "cumulus@sw-nvue-1:mgmt:~$ "
    assert cli.run("nv set qos roce trust dscp").startswith("Error: ")  # not an NVUE command
    assert cli.run("nv set qos roce enable on").startswith("Error: ")  # not vouched for by a source here
    assert cli.run("sudo vtysh") == "-bash: sudo: command not found"
    assert cli.run("nv config diff") == ""  # nothing pending after refusals
    assert cli.run("nv set qos roce mode lossless") == ""
    assert "        mode: lossless" in cli.run("nv config diff")


def test_apply_asks_unless_told_yes_and_a_revision_restores_the_config():
    cli, world = _cli("RW501")
    facts = PARSERS["nvue_qos_roce"].parse(cli.run("nv show qos roce"))
    assert facts["mode"] == "lossy" and facts["pfc_priorities"] == []
    cli.run("nv set qos roce")
    assert cli.run("nv config apply") == "Are you sure? [y/N] " and cli.prompt == ""
    assert cli.run("n") == "Aborted by user"
    assert PARSERS["nvue_qos_roce"].parse(cli.run("nv show qos roce"))["mode"] == "lossy"
    assert cli.run("nv config apply -y") == "applied [rev_id: 2]"
    after = PARSERS["nvue_qos_roce"].parse(cli.run("nv show qos roce"))
    assert after["mode"] == "lossless" and after["pfc_priorities"] == [3]
    assert all(p.pfc_enabled for p in world.switches["sw-nvue-1"].ports)
    table = cli.run("nv config revision")
    assert table.splitlines()[0].startswith("Rev ID                State")
    assert cli.run("nv config apply 1 -y") == "applied [rev_id: 1]"
    assert PARSERS["nvue_qos_roce"].parse(cli.run("nv show qos roce"))["mode"] == "lossy"


def test_netmiko_cumulus_linux_drives_the_nvue_lab_switch():
    from netmiko import ConnectHandler

    world = healthy(2, "nvue")
    password = "lab-pw-nvue"

    async def main() -> str:
        acceptor = await sw_mod.start_switch_server(world, "sw-nvue-1", asyncssh.generate_private_key("ssh-ed25519"),
                                                    password=password)
        port = acceptor.sockets[0].getsockname()[1]

        def session() -> str:
            conn = ConnectHandler(device_type=NETMIKO_DEVICE_TYPES["cumulus_nvue"], host="127.0.0.1", port=port,
                                  username="admin", password=password, conn_timeout=10)
            try:
                return conn.send_command("nv show qos roce")
            finally:
                conn.disconnect()

        try:
            return await asyncio.to_thread(session)
        finally:
            acceptor.close()

    out = asyncio.run(main())
    assert PARSERS["nvue_qos_roce"].parse(out)["mode"] == "lossless"


# ------------------------------------------------------------------ doctor over netmiko on the NVUE lab

import pytest  # noqa: E402

from roce_wizard.model import Severity, Status  # noqa: E402
from tests.lab.test_switch_stage import _lab, _show, labs  # noqa: E402,F401 - the stage tests' lab fixture

# NVUE's RoCE settings are switch-wide (one `nv show qos roce`); link pause is not read there (RW505 skips)
NVUE_FAULTS = ("RW501", "RW502", "RW503", "RW504", "RW506", "RW507")


def test_doctor_on_a_healthy_nvue_switch(labs, tmp_path_factory):
    lab = _lab(labs, "nvue", tmp_path_factory)
    lab.reset()
    report = lab.run()
    bad = [f for f in report.findings if f.status is not Status.PASS and not (f.check == "RW505")]
    assert not bad, _show(bad)
    assert {f.status for f in report.findings if f.check == "RW505"} == {Status.SKIP}


@pytest.mark.parametrize("code", NVUE_FAULTS)
def test_doctor_finds_each_nvue_fault_by_its_check(labs, tmp_path_factory, code):
    lab = _lab(labs, "nvue", tmp_path_factory)
    lab.reset()
    try:
        lab.runner.call(lab.lab.inject(code))
        report = lab.run()
    finally:
        lab.reset()
    expected = Status.WARN if lab.checks[code].meta.severity is Severity.WARN else Status.FAIL
    mine = [f for f in report.findings if f.check == code and f.target == lab.switch]
    assert any(f.status is expected for f in mine), _show(mine)
    # lossy RoCE mode on NVUE is both "no PFC" and "no no-drop priority": RW502 reports it too
    also = {"RW501": {"RW502"}}.get(code, set())
    others = [f for f in report.findings if f.check != code and f.check not in also
              and f.status not in (Status.PASS, Status.SKIP)]
    assert not others, _show(others)
