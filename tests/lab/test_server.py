"""The lab's SSH servers, reached with the production SshTransport (host keys checked, key auth)."""

from __future__ import annotations

import asyncio
import json
import stat
import time

import pytest

from roce_wizard.inventory import load_inventory
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.scenarios import healthy
from roce_wizard.lab.server import Device, Lab, read_state
from roce_wizard.transports.base import ConnectErrorKind, TransportError
from roce_wizard.transports.ssh import SshTransport

pytestmark = pytest.mark.asyncio


def _programs(world, name: str) -> dict:
    """A tiny program table: enough to see that commands reach the right target's world."""

    def uptime(ctx: Ctx, argv: list[str]) -> Reply:
        if name in ctx.world.hosts:
            return Reply(stdout=f"{ctx.world.hosts[name].boot_count}\n")
        return Reply(stdout=f"{ctx.world.guests[name].boot_count}\n")

    return {
        "whoami": lambda ctx, argv: Reply(stdout=f"{ctx.target}\n"),
        "bootcount": uptime,
        "reboot": lambda ctx, argv: Reply(stdout="", action="reboot"),
        "fail": lambda ctx, argv: Reply(stderr="fail: bad argument\n", exit=2),
    }


def _files(world, name: str) -> dict:
    return {"/proc/sys/kernel/random/boot_id": world.guests[name].boot_id + "\n"} if name in world.guests else {}


FAKE = Device(programs=_programs, files=_files)


@pytest.fixture
async def lab(tmp_path):
    world = healthy(2)
    world.reboot_delay_s = 0.3
    lab = await Lab.start(world, tmp_path / "lab", devices=lambda kind: FAKE, services=())
    yield lab
    await lab.stop()


def transport(lab: Lab, **kw) -> SshTransport:
    return SshTransport(connect_timeout=5, command_timeout=10, **kw)


async def test_directory_files(lab):
    d = lab.directory
    assert stat.S_IMODE((d / "id_ed25519").stat().st_mode) == 0o600
    kh = (d / "known_hosts").read_text().splitlines()
    assert len(kh) == 4 and all(line.startswith("[127.0.0.1]:") and " ssh-ed25519 " in line for line in kh)
    ports = {ep.port for ep in lab.endpoints.values()}
    assert len(ports) == 4 and 0 not in ports
    inv = load_inventory(d / "inventory.yaml")
    esx = inv.get("esx-01")
    assert (esx.address, esx.port) == ("127.0.0.1", lab.endpoints["esx-01"].port)
    assert esx.credentials.key_file == str(d / "id_ed25519") and esx.credentials.use_agent is False
    assert esx.options["known_hosts"] == str(d / "known_hosts")
    assert esx.roce.pf_pci == "0000:3b:00.0" and esx.roce.vmnics == ("vmnic2", "vmnic3") and esx.roce.vfs == (8, 7)
    guest = inv.get("compute-02")
    assert (guest.host, guest.vm, guest.roce.netdev, guest.roce.ip) == ("esx-02", "compute-02", "ens256",
                                                                         "192.168.100.12/24")
    state = read_state(d)
    assert state["ready"] is True
    assert {t["name"]: t["state"] for t in state["targets"]} == {n: "up" for n in lab.endpoints}


async def test_commands_run_on_the_right_target(lab):
    inv = load_inventory(lab.directory / "inventory.yaml")
    async with transport(lab) as tr:
        for name in ("esx-01", "esx-02", "compute-01"):
            session = await tr.session(inv.get(name))
            result = await session.run("whoami | grep -c -e esx -e compute; whoami")
            assert (result.stdout, result.exit_status) == (f"1\n{name}\n", 0)
        session = await tr.session(inv.get("compute-01"))
        assert (await session.run("cat /proc/sys/kernel/random/boot_id")).stdout.strip() == lab.world.guests[
            "compute-01"].boot_id
        missing = await session.run("ibv_devinfo")
        assert (missing.stderr, missing.exit_status) == ("sh: ibv_devinfo: not found\n", 127)
        bad = await session.run("fail --bogus")
        assert (bad.stderr, bad.exit_status) == ("fail: bad argument\n", 2)
    assert lab.endpoints["esx-01"].commands == 1


async def test_unknown_host_key_is_refused(lab, tmp_path):
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    inv = load_inventory(lab.directory / "inventory.yaml")
    async with transport(lab, known_hosts=empty) as tr:
        with pytest.raises(TransportError) as info:
            await tr.session(inv.get("esx-01"))
    assert info.value.kind is ConnectErrorKind.HOSTKEY_UNKNOWN


async def test_other_client_key_is_rejected(lab, tmp_path):
    import asyncssh

    other = tmp_path / "other_key"
    other.write_bytes(asyncssh.generate_private_key("ssh-ed25519").export_private_key())
    other.chmod(0o600)
    inv = load_inventory(lab.directory / "inventory.yaml")
    target = inv.get("esx-01")
    from dataclasses import replace

    target = replace(target, credentials=replace(target.credentials, key_file=str(other)))
    async with transport(lab) as tr:
        with pytest.raises(TransportError) as info:
            await tr.session(target)
    assert info.value.kind is ConnectErrorKind.AUTH


async def test_reboot_drops_refuses_and_returns_on_the_same_port_and_key(lab):
    inv = load_inventory(lab.directory / "inventory.yaml")
    esx = inv.get("esx-01")
    port = lab.endpoints["esx-01"].port
    key = lab.endpoints["esx-01"].host_key.export_public_key()
    boot_time = lab.world.hosts["esx-01"].boot_time
    async with transport(lab) as tr:
        session = await tr.session(esx)
        assert (await session.run("bootcount")).stdout == "1\n"
        guest_session = await tr.session(inv.get("compute-01"))
        answer = await session.run("reboot")
        assert answer.exit_status == 0
        await asyncio.sleep(0.15)
        with pytest.raises(TransportError) as lost:
            await session.run("bootcount")
        assert lost.value.kind is ConnectErrorKind.UNREACHABLE
        with pytest.raises(TransportError):  # its guest went down with it
            await guest_session.run("whoami")
        with pytest.raises(TransportError) as refused:
            await tr.session(esx)
        assert refused.value.kind is ConnectErrorKind.REFUSED
        assert {t["name"]: t["state"] for t in read_state(lab.directory)["targets"]}["esx-01"] == "rebooting"
        # esx-02 is not affected
        assert (await (await tr.session(inv.get("esx-02"))).run("whoami")).stdout == "esx-02\n"
        deadline = time.monotonic() + 5
        while True:
            try:
                session = await tr.session(esx)  # the same known_hosts entry still matches
                break
            except TransportError:
                assert time.monotonic() < deadline, "esx-01 did not come back"
                await asyncio.sleep(0.05)
        assert (await session.run("bootcount")).stdout == "2\n"
        guest = await tr.session(inv.get("compute-01"))
        assert (await guest.run("bootcount")).stdout == "2\n"
    assert lab.endpoints["esx-01"].port == port
    assert lab.endpoints["esx-01"].host_key.export_public_key() == key
    assert lab.world.hosts["esx-01"].boot_time > boot_time
    rows = {t["name"]: t for t in read_state(lab.directory)["targets"]}
    assert rows["esx-01"]["state"] == "up" and rows["esx-01"]["boot_count"] == 2


async def test_rw001_fault_refuses_connections(lab):
    inv = load_inventory(lab.directory / "inventory.yaml")
    code, target = await lab.inject("RW001")  # default target: the second ESXi host
    assert (code, target) == ("RW001", "esx-02")
    async with transport(lab) as tr:
        with pytest.raises(TransportError) as info:
            await tr.session(inv.get("esx-02"))
        assert info.value.kind is ConnectErrorKind.REFUSED
        assert (await (await tr.session(inv.get("esx-01"))).run("whoami")).exit_status == 0
    state = read_state(lab.directory)
    assert state["faults"] == [["RW001", "esx-02"]]
    assert {t["name"]: t["state"] for t in state["targets"]}["esx-02"] == "refusing"
    # back to a healthy world: it listens again, same port
    port = lab.endpoints["esx-02"].port
    await lab.reset(healthy(2))
    assert lab.endpoints["esx-02"].port == port
    async with transport(lab) as tr:
        assert (await (await tr.session(inv.get("esx-02"))).run("whoami")).stdout == "esx-02\n"


async def test_command_delay(tmp_path):
    lab = await Lab.start(healthy(1), tmp_path / "slow", devices=lambda kind: FAKE, services=(), command_delay_s=0.2)
    try:
        inv = load_inventory(lab.directory / "inventory.yaml")
        async with transport(lab) as tr:
            session = await tr.session(inv.get("esx-01"))
            started = time.monotonic()
            await session.run("whoami")
            assert time.monotonic() - started >= 0.2
    finally:
        await lab.stop()
    state = json.loads((tmp_path / "slow" / "state.json").read_text())
    assert state["ready"] is False and state["stopped"] is True


async def test_register_extension_point(lab):
    stopped = []

    async def stop():
        stopped.append(True)

    lab.register("switch", [{"name": "sw-eos-1", "address": "127.0.0.1", "port": 2222, "device_type": "arista_eos",
                             "username": "admin"}], stop=stop)
    inv = load_inventory(lab.directory / "inventory.yaml")
    assert inv.get("sw-eos-1").device_type == "arista_eos"
    assert any(t["name"] == "sw-eos-1" for t in read_state(lab.directory)["targets"])
    await lab.stop()
    assert stopped == [True]
