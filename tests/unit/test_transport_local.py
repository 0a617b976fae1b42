"""The local transport runs real commands on this machine (`/bin/sh -c`, as sshd would), and `doctor --local`'s
one-target setup gathers real linux probes through the engine's `gather_target`.

- results look like SSH's: stdout, stderr, exit status; a pipeline is the shell's; output that is not UTF-8 is
  replaced, not fatal;
- a command that overruns its timeout is a result with `timed_out`, and its whole process group (a child it
  started in the background too) is gone afterwards;
- a missing command is the shell's "not found" with exit 127: what the engine's NOT_FOUND_MARKERS read as a
  missing tool over SSH;
- errors are values: a target that is not this machine is a TransportError (unreachable); `close` stops what
  still runs;
- a doctor-style gather over it: boot_id and machine_id read from this machine's /proc and /etc, ofed_info
  either parsed or reported as a missing tool.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import time
from pathlib import Path

import pytest

from roce_wizard.engine import gather_target
from roce_wizard.engine.gather import NOT_FOUND_MARKERS
from roce_wizard.local_setup import LOCAL_SOURCE, local_setup, local_transports
from roce_wizard.model import Target, TargetKind
from roce_wizard.session import SetupError
from roce_wizard.transports.base import ConnectErrorKind, Session, Transport, TransportError
from roce_wizard.transports.local import LocalTransport

HERE = Target(name="node", kind=TargetKind.LINUX, address="localhost")


async def run(command: str, timeout: float | None = None, transport: LocalTransport | None = None):
    transport = transport or LocalTransport(command_timeout=10)
    session = await transport.session(HERE)
    return await session.run(command, timeout=timeout)


def test_it_speaks_the_transport_protocols():
    transport = LocalTransport()
    session = asyncio.run(transport.session(HERE))
    assert isinstance(transport, Transport) and isinstance(session, Session)


async def test_stdout_stderr_and_exit_status_as_the_shell_gives_them():
    result = await run("echo hello; echo oops >&2; exit 3")
    assert (result.stdout, result.stderr, result.exit_status, result.timed_out) == ("hello\n", "oops\n", 3, False)
    assert not result.ok
    piped = await run("printf 'a\\nb\\nc\\n' | grep -c -e a -e c")
    assert piped.ok and piped.stdout == "2\n"


async def test_it_reads_this_machine():
    result = await run("cat /proc/sys/kernel/random/boot_id")
    assert result.ok and result.stdout == Path("/proc/sys/kernel/random/boot_id").read_text()
    assert (await run("echo $LC_ALL")).stdout == "C\n"  # untranslated messages for the parsers


async def test_output_that_is_not_utf8_is_replaced():
    result = await run("printf 'caf\\351\\n'")
    assert result.ok and result.stdout == "caf\ufffd\n"


async def test_a_command_that_overruns_its_timeout_is_a_result_and_its_group_is_gone():
    started = time.monotonic()
    result = await run("sleep 60 & echo $!; wait", timeout=0.5)
    assert result.timed_out and result.exit_status is None and not result.ok
    assert time.monotonic() - started < 10
    child = int(result.stdout.split()[0])  # the background sleep the shell started
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:  # reaped by init: poll, no fixed sleep
        await asyncio.sleep(0.05)
    assert not _alive(child), f"pid {child} (sleep 60) survived the timeout"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


async def test_a_missing_command_is_what_the_engine_calls_not_found():
    result = await run("roce-wizard-no-such-tool --version")
    assert result.exit_status == 127
    assert any(marker in result.stderr.lower() for marker in NOT_FOUND_MARKERS), result.stderr


async def test_a_target_that_is_not_this_machine_is_refused_as_a_value():
    elsewhere = Target(name="esx-01", kind=TargetKind.LINUX, address="192.0.2.7")
    with pytest.raises(TransportError) as err:
        await LocalTransport().session(elsewhere)
    assert err.value.kind is ConnectErrorKind.UNREACHABLE and "not this machine" in err.value.message
    mine = Target(name="me", kind=TargetKind.LINUX, address=socket.gethostname())
    assert (await (await LocalTransport().session(mine)).run("true")).ok


async def test_close_stops_a_command_still_running():
    transport = LocalTransport(command_timeout=60)
    running = asyncio.ensure_future(run("sleep 60", transport=transport))
    while not transport._running:  # the subprocess exists
        await asyncio.sleep(0.01)
    await transport.close()
    result = await asyncio.wait_for(running, 10)
    assert result.exit_status is not None and result.exit_status < 0 and not result.ok  # killed by a signal


def test_the_local_setup_is_this_host_as_one_target():
    setup = local_setup(select_=["RW003", "RW401"])
    [target] = setup.targets
    assert (target.name, target.kind, target.address, target.source) == (
        socket.gethostname(), TargetKind.LINUX, "localhost", LOCAL_SOURCE)
    assert setup.playbook == "baremetal" and sorted(setup.chosen) == ["RW003", "RW401"]
    guest = local_setup(True, netdev="eth1", rdma_dev="mlx5_1")
    assert guest.targets[0].kind is TargetKind.GUEST and guest.playbook == "vsphere-sriov"
    assert (guest.targets[0].roce.netdev, guest.targets[0].roce.rdma_dev) == ("eth1", "mlx5_1")
    with pytest.raises(SetupError, match=r"^--netdev: doctor --local: .*Linux interface name"):
        local_setup(netdev="eth0;reboot")


async def test_a_doctor_gather_of_this_machine_over_the_local_transport():
    setup = local_setup(select_=["RW002", "RW003", "RW401", "RW404"])
    [target] = setup.targets
    transport = local_transports(setup, timeout=30)[target.kind]
    events: list = []
    try:
        facts = await gather_target(target, list(setup.chosen.values()), transport, command_timeout=30,
                                    runlog=None, emit=events.append)
    finally:
        await transport.close()
    assert facts.data["connection"]["ok"] is True
    assert facts.data["boot_id"] == {"boot_id": Path("/proc/sys/kernel/random/boot_id").read_text().strip()}
    assert facts.data["machine_id"] == {"machine_id": Path("/etc/machine-id").read_text().strip()}
    if shutil.which("ofed_info", path=transport.env["PATH"]) is None:
        assert facts.failures["ofed_info"].tool_missing, facts.failures["ofed_info"]
    else:
        assert "ofed_info" in facts.data
    if shutil.which("ip", path=transport.env["PATH"]) is not None:
        assert "ip_json" in facts.data, facts.failures.get("ip_json")
    probes = {e.probe for e in events if e.TYPE == "probe"}
    assert {"boot_id", "machine_id", "ofed_info", "tool_presence"} <= probes
