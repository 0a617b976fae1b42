"""The switch transport is GIVEN its read-back (DESIGN.md: transports only move text): it sends the command the
read-back names, hands the output to the read-back's judge, and rolls back on what the judge reports. Without a
read-back, a step that asks for a verify is refused before anything changes. On the lab's EOS switch over SSH on
loopback; the transport's own modules reach no parser, probe or check helper."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import asyncssh
import pytest

from roce_wizard.lab import switch as sw_mod
from roce_wizard.lab.scenarios import healthy
from roce_wizard.model import Credentials, Target, TargetKind
from roce_wizard.transports.switch import SwitchTransport

PASSWORD = "Sw1tch-s3cret-pw"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def eos():
    world = healthy(1, "eos")
    key = asyncssh.generate_private_key("ssh-ed25519")
    acceptor = await sw_mod.start_switch_server(world, "sw-eos-1", key, password=PASSWORD)
    yield acceptor.sockets[0].getsockname()[1], world
    acceptor.close()


def _target(port: int, tmp_path: Path) -> Target:
    return Target(name="sw-eos-1", kind=TargetKind.SWITCH, address="127.0.0.1", port=port, device_type="arista_eos",
                  credentials=Credentials(username="admin"), options={"known_hosts": str(tmp_path / "known_hosts")})


def _step(mtu: int) -> str:
    meta = {"name": "roce-wizard-test", "vendor": "eos",
            "verify": [{"field": "mtu", "ports": ["Ethernet1"], "expect": {"mtu_min": 9216}}]}
    return "switch-config " + json.dumps(meta) + "\n" + f"interface Ethernet1\n   mtu {mtu}"


async def _apply(port: int, tmp_path: Path, command: str, **kw):
    tr = SwitchTransport(password_resolver=lambda t: PASSWORD, connect_timeout=5, command_timeout=10,
                         trust_on_first_use=True, **kw)
    try:
        return await (await tr.session(_target(port, tmp_path))).run(command)
    finally:
        await tr.close()


async def test_without_a_read_back_a_step_that_asks_for_a_verify_is_refused_unapplied(eos, tmp_path):
    port, world = eos
    ethernet1 = world.switches["sw-eos-1"].ports[0]
    result = await _apply(port, tmp_path, _step(9100))
    assert result.exit_status == 2
    assert "no read-back (verify) function" in result.stderr
    assert ethernet1.mtu == 9216  # nothing was typed


async def test_the_transport_sends_what_the_read_back_names_and_rolls_back_on_what_its_judge_reports(eos, tmp_path):
    port, world = eos
    ethernet1 = world.switches["sw-eos-1"].ports[0]
    asked: list[tuple[str, str, dict]] = []
    outputs: list[str] = []

    def read_back(target: Target, vendor: str, entry: dict):
        asked.append((target.name, vendor, entry))

        def judge(output: str) -> list[str]:
            outputs.append(output)
            return [] if "mtu 9216" in output else ["Ethernet1: not read back as 9216"]

        return "show running-config interfaces Ethernet1", judge

    result = await _apply(port, tmp_path, _step(9100), verify=read_back)
    assert asked == [("sw-eos-1", "eos", {"field": "mtu", "ports": ["Ethernet1"], "expect": {"mtu_min": 9216}})]
    assert outputs and "mtu 9100" in outputs[0]  # the judge saw the switch's answer to the named command
    assert result.exit_status == 1
    assert "VERIFY FAILED (Ethernet1: not read back as 9216)" in result.stdout and "ROLLED BACK" in result.stdout
    assert "verify `show running-config interfaces Ethernet1`" in result.stdout
    assert ethernet1.mtu == 9216


def _imports(path: Path) -> set[str]:
    """The roce_wizard modules a file imports, lazy imports included."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m.startswith("roce_wizard")}


def test_the_switch_transport_reaches_no_parser_probe_or_check_helper():
    seen: set[str] = set()
    todo = [f"roce_wizard.transports.switch.{p.stem}" for p in (ROOT / "roce_wizard/transports/switch").glob("*.py")]
    while todo:
        mod = todo.pop()
        if mod in seen:
            continue
        seen.add(mod)
        base = ROOT / Path(*mod.split("."))
        path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
        if path.exists():
            todo += sorted(_imports(path))
        todo += [mod.rsplit(".", 1)[0]] if "." in mod else []  # importing a module runs its package first
    bad = sorted(m for m in seen if m.startswith(("roce_wizard.parsers", "roce_wizard.probes", "roce_wizard.checklib",
                                                  "roce_wizard.checklib.findings")))
    assert not bad, bad
