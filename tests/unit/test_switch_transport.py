"""SwitchTransport (netmiko in threads) against the lab's switch CLIs served on 127.0.0.1.

Host keys are checked against a known_hosts file (never paramiko's AutoAddPolicy), trust on first
use records the key, a changed key is refused; errors map to the TransportError kinds; one netmiko
session per switch; the session log never holds the password.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import asyncssh
import pytest

from roce_wizard.lab import switch as sw_mod
from roce_wizard.lab.scenarios import healthy
from roce_wizard.model import Credentials, Target, TargetKind
from roce_wizard.transports.base import ConnectErrorKind, TransportError
from roce_wizard.transports.switch import SwitchTransport

PASSWORD = "Sw1tch-s3cret-pw"


@pytest.fixture
async def eos():
    world = healthy(1, "eos")
    key = asyncssh.generate_private_key("ssh-ed25519")
    acceptor = await sw_mod.start_switch_server(world, "sw-eos-1", key, password=PASSWORD)
    yield acceptor.sockets[0].getsockname()[1], key, world
    acceptor.close()


def target(port: int, known_hosts: Path, device_type: str = "arista_eos", name: str = "sw-eos-1") -> Target:
    return Target(name=name, kind=TargetKind.SWITCH, address="127.0.0.1", port=port, device_type=device_type,
                  credentials=Credentials(username="admin"), options={"known_hosts": str(known_hosts)})


def transport(tmp_path: Path, password: str | None = PASSWORD, **kw) -> SwitchTransport:
    return SwitchTransport(password_resolver=lambda t: password, connect_timeout=5, command_timeout=10,
                           max_concurrent_connects=4, session_log_dir=tmp_path / "sessions", **kw)


def known_line(port: int, key: asyncssh.SSHKey) -> str:
    alg, blob = key.export_public_key("openssh").decode().split()[:2]
    return f"[127.0.0.1]:{port} {alg} {blob}\n"


async def test_unknown_host_key_is_refused_by_default(eos, tmp_path):
    port, key, _ = eos
    kh = tmp_path / "known_hosts"
    tr = transport(tmp_path)
    with pytest.raises(TransportError) as err:
        await tr.session(target(port, kh))
    await tr.close()
    assert err.value.kind is ConnectErrorKind.HOSTKEY_UNKNOWN
    assert str(kh) in err.value.message and "--trust-on-first-use" in err.value.message
    assert key.get_fingerprint() in err.value.message  # the key it offers, to check by hand
    assert not kh.exists()  # nothing recorded


async def test_trust_on_first_use_records_the_key_then_plain_runs_use_it(eos, tmp_path):
    port, key, _ = eos
    kh = tmp_path / "known_hosts"
    kh.write_text("[127.0.0.1]:1 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl x")
    tr = transport(tmp_path, trust_on_first_use=True)
    session = await tr.session(target(port, kh))
    result = await session.run("show version")
    await tr.close()
    assert result.ok and "Arista" in result.stdout
    lines = kh.read_text().splitlines()
    assert lines[-1] == known_line(port, key).strip()  # `[host]:port alg base64`, on a line of its own
    tr = transport(tmp_path)  # no TOFU: the recorded key is enough
    result = await (await tr.session(target(port, kh))).run("show hostname")
    await tr.close()
    assert result.ok and "sw-eos-1" in result.stdout


async def test_changed_host_key_is_refused_even_with_trust_on_first_use(eos, tmp_path):
    port, _, _ = eos
    kh = tmp_path / "known_hosts"
    kh.write_text(known_line(port, asyncssh.generate_private_key("ssh-ed25519")))
    tr = transport(tmp_path, trust_on_first_use=True)
    with pytest.raises(TransportError) as err:
        await tr.session(target(port, kh))
    await tr.close()
    assert err.value.kind is ConnectErrorKind.HOSTKEY_CHANGED
    assert "ssh-keygen -R" in err.value.message and "CHANGED" in err.value.message


async def test_wrong_password_is_auth_and_never_echoed(eos, tmp_path):
    port, key, _ = eos
    kh = tmp_path / "known_hosts"
    kh.write_text(known_line(port, key))
    tr = transport(tmp_path, password="not-the-Pa55word")
    with pytest.raises(TransportError) as err:
        await tr.session(target(port, kh))
    await tr.close()
    assert err.value.kind is ConnectErrorKind.AUTH
    assert "not-the-Pa55word" not in err.value.message


async def test_nothing_listening_is_refused(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tr = transport(tmp_path)
    with pytest.raises(TransportError) as err:
        await tr.session(target(port, tmp_path / "kh"))
    await tr.close()
    assert err.value.kind is ConnectErrorKind.REFUSED


async def test_unknown_device_type_is_a_protocol_error(tmp_path):
    tr = transport(tmp_path)
    with pytest.raises(TransportError) as err:
        await tr.session(target(22, tmp_path / "kh", device_type="cisco_ios"))
    assert err.value.kind is ConnectErrorKind.PROTOCOL and "cisco_ios" in err.value.message


async def test_one_session_per_switch_commands_serialised_cli_errors_exit_1(eos, tmp_path):
    port, key, _ = eos
    kh = tmp_path / "known_hosts"
    kh.write_text(known_line(port, key))
    tr = transport(tmp_path)
    t = target(port, kh)
    first, second = await asyncio.gather(tr.session(t), tr.session(t))
    results = await asyncio.gather(first.run("show priority-flow-control"), second.run("show qos maps"),
                                   first.run("show flowcontrol"), second.run("show nonsense"))
    running = await first.run("show running-config")  # needs enable: the transport entered it
    await tr.close()
    assert tr.connects == 1
    assert [r.exit_status for r in results] == [0, 0, 0, 1]
    assert results[0].stdout.startswith("The hardware supports PFC") and "Dscp Tc map" in results[1].stdout
    assert results[3].stdout.startswith("% Invalid input")
    assert running.ok and running.stdout.startswith("! Command: show running-config")
    assert "\r" not in results[0].stdout


async def test_session_log_masks_the_password(eos, tmp_path):
    port, key, _ = eos
    kh = tmp_path / "known_hosts"
    kh.write_text(known_line(port, key))
    tr = transport(tmp_path)
    session = await tr.session(target(port, kh))
    # a command that carries the password: the switch echoes it back and says it is invalid
    echoed = await session.run(f"show {PASSWORD}")
    await session.run("show interfaces Ethernet1")
    await tr.close()
    log = (tmp_path / "sessions" / "sw-eos-1.log").read_text()
    assert echoed.exit_status == 1
    assert PASSWORD not in log
    assert "show ********" in log and "Ethernet MTU 9216 bytes" in log


async def test_onyx_and_os10_sessions(tmp_path):
    for vendor, command, expect in (("onyx", "show running-config", "## Running database"),
                                    ("os10", "show running-configuration", "! Version 10.")):
        world = healthy(1, vendor)
        key = asyncssh.generate_private_key("ssh-ed25519")
        acceptor = await sw_mod.start_switch_server(world, f"sw-{vendor}-1", key, password=PASSWORD)
        port = acceptor.sockets[0].getsockname()[1]
        kh = tmp_path / f"kh-{vendor}"
        kh.write_text(known_line(port, key))
        tr = transport(tmp_path)
        try:
            result = await (await tr.session(target(port, kh, sw_mod.DEVICE_TYPES[vendor], f"sw-{vendor}-1"))).run(
                command)
        finally:
            await tr.close()
            acceptor.close()
        assert result.ok and expect in result.stdout, result


async def test_a_command_timeout_is_a_result_and_the_session_goes_on(eos, tmp_path):
    port, key, _ = eos
    kh = tmp_path / "known_hosts"
    kh.write_text(known_line(port, key))
    tr = transport(tmp_path)
    session = await tr.session(target(port, kh))
    slow = await session.run("show interfaces", timeout=1e-4)  # no prompt can come back that fast
    after = await session.run("show hostname")
    await tr.close()
    assert slow.timed_out and slow.exit_status is None
    assert after.ok and "sw-eos-1" in after.stdout
