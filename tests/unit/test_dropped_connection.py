"""A connection that closes while a command runs: doctor says so, and keeps what the host had answered.

A real asyncssh server on 127.0.0.1 answers the sample cluster's recorded esx-01 outputs (a host set
up as the policy says: every check passes) and cuts the connection when the firmware query
(`mlxconfig … query`, a probe that runs after the first wave) arrives.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import asyncssh
import pytest
import pytest_asyncio
import yaml

from roce_wizard.catalog import load_catalog
from roce_wizard.engine import run_checks
from roce_wizard.inventory import load_inventory
from roce_wizard.model import Credentials, ExitCode, SecretRef, SecretSource, Status, TargetKind
from roce_wizard.playbook import load_playbook
from roce_wizard.transports.ssh import SshTransport

pytestmark = pytest.mark.asyncio

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample-cluster"
PASSWORD = "drop-test-Pa55"
DROP_ON = "/opt/mellanox/bin/mlxconfig -d mt4119_pciconf1 -e query"


class DroppingHost:
    """Answers esx-01's recorded commands; aborts the connection when DROP_ON arrives."""

    def __init__(self) -> None:
        recorded = yaml.safe_load((SAMPLE / "recordings.yaml").read_text(encoding="utf-8"))["targets"]["esx-01"]
        self.answers = recorded["commands"]
        self.key = asyncssh.generate_private_key("ssh-ed25519")
        self.asked: list[str] = []
        self.server: asyncssh.SSHAcceptor | None = None
        self.port = 0

    async def start(self) -> DroppingHost:
        class Server(asyncssh.SSHServer):
            def begin_auth(self, username: str) -> bool:
                return True

            def password_auth_supported(self) -> bool:
                return True

            def validate_password(self, username: str, password: str) -> bool:
                return username == "root" and password == PASSWORD

        self.server = await asyncssh.create_server(Server, "127.0.0.1", 0, server_host_keys=[self.key],
                                                   process_factory=self._process)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def _process(self, process: asyncssh.SSHServerProcess) -> None:
        command = process.command or ""
        self.asked.append(command)
        if command == DROP_ON:
            await asyncio.sleep(0.05)  # the command is running...
            process.channel.get_connection().abort()  # ...when the host goes away
            return
        answer = self.answers.get(command)
        if answer is None:
            process.stderr.write(f"sh: {command.split()[0]}: not found\n")
            process.exit(127)
            return
        process.stdout.write(answer.get("stdout", ""))
        process.stderr.write(answer.get("stderr", ""))
        process.exit(answer.get("exit_status", 0))

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


@pytest_asyncio.fixture
async def host():
    h = await DroppingHost().start()
    yield h
    await h.stop()


async def test_drop_mid_command_names_the_command_and_keeps_earlier_answers(host, tmp_path, monkeypatch):
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    inventory = load_inventory(SAMPLE / "inventory.yaml")
    esx = next(t for t in inventory.targets if t.name == "esx-01")
    esx = dataclasses.replace(esx, address="127.0.0.1", port=host.port, credentials=Credentials(
        username="root", password=SecretRef(SecretSource.PLAINTEXT, value=PASSWORD), use_agent=False))
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(f"[127.0.0.1]:{host.port} {host.key.export_public_key().decode()}")
    book = load_playbook("vsphere-sriov")
    chosen = {code: c for code, c in load_catalog([]).items()
              if book.stage_of(code) is not None and TargetKind.ESXI in c.meta.target_kinds and code[:3] in ("RW0", "RW2")}
    transport = SshTransport(known_hosts=known_hosts, connect_timeout=5, command_timeout=10,
                             password_resolver=lambda t: PASSWORD)
    try:
        report = await run_checks([esx], chosen, transport, inventory.policy,
                                  stage_of={code: book.stage_of(code) for code in chosen})
    finally:
        await transport.close()
    assert DROP_ON in host.asked
    by_code = {f.check: f for f in report.findings}

    reach = by_code["RW001"]
    assert reach.status is Status.ERROR
    assert reach.summary == f"the connection to 127.0.0.1:{host.port} closed while `{DROP_ON}` was running"
    assert reach.observed["command"] == DROP_ON and reach.observed["error_kind"] == "dropped"
    assert "no route" not in reach.summary + (reach.fix or "")

    # answered in the first wave, before the drop: judged as usual (esx-01 is set up as the policy says)
    for code in ("RW201", "RW204", "RW209", "RW210", "RW211", "RW212", "RW213"):
        assert by_code[code].status is Status.PASS, f"{code}: {by_code[code].summary}"

    # the firmware query never answered: the checks that read it could not run, and say why
    for code in ("RW205", "RW206", "RW207"):
        finding = by_code[code]
        assert finding.status in (Status.ERROR, Status.SKIP), f"{code}: {finding.summary}"
        seen = f"{finding.summary} {finding.details.get('unjudged', '')}"
        assert f"could not run: the connection closed while `{DROP_ON}` was running" in seen, f"{code}: {seen}"
    assert not any(f.status is Status.FAIL for f in report.findings)
    assert report.exit_code is ExitCode.INCOMPLETE


async def test_bmc_closing_the_connection_under_a_request_is_a_drop_naming_it(tmp_path):
    """The lab's Redfish BMC (real TLS on 127.0.0.1) closes the connection instead of answering."""
    from roce_wizard.lab import redfish, scenarios
    from roce_wizard.model import Target
    from roce_wizard.transports.base import ConnectErrorKind, TransportError
    from roce_wizard.transports.redfish import RedfishTransport

    handle = await redfish.start_bmcs(scenarios.healthy(1), tmp_path)
    try:
        bmc = Target(name="bmc-esx-01", kind=TargetKind.BMC, address="127.0.0.1", port=handle.ports["esx-01"],
                     host="esx-01", options={"ca_file": str(handle.ca_file)},
                     credentials=Credentials(username=handle.username,
                                             password=SecretRef(SecretSource.PLAINTEXT, value=handle.password)))
        async with RedfishTransport(password_resolver=lambda t: handle.password) as transport:
            session = await transport.session(bmc)
            assert (await session.run("GET /redfish/v1/Systems")).exit_status == 0

            def reset(req):  # noqa: ANN001, ANN202 - the BMC resets while serving the request
                raise ConnectionResetError(104, "Connection reset by peer")

            handle.bmcs["esx-01"].handle = reset
            with pytest.raises(TransportError) as err:
                await session.run("GET /redfish/v1/Systems")
    finally:
        await handle.stop()
    assert err.value.kind is ConnectErrorKind.DROPPED and err.value.command == "GET /redfish/v1/Systems"
    assert "closed while `GET /redfish/v1/Systems` was running" in err.value.message


async def test_switch_closing_the_connection_under_a_command_is_a_drop_naming_it(tmp_path, monkeypatch):
    """The lab's EOS CLI over real SSH; the switch cuts the connection when `show interfaces` arrives.
    netmiko reads a dead channel as "no prompt yet": the transport must look at the channel."""
    from roce_wizard.lab import switch as sw_mod
    from roce_wizard.lab.scenarios import healthy
    from roce_wizard.transports.base import ConnectErrorKind, TransportError
    from tests.unit.test_switch_transport import PASSWORD as SWITCH_PASSWORD
    from tests.unit.test_switch_transport import known_line, target, transport

    processes: list[asyncssh.SSHServerProcess] = []
    shell = sw_mod._shell

    async def watched_shell(process, *args):  # noqa: ANN001, ANN202 - the lab's shell, its process kept
        processes.append(process)
        return await shell(process, *args)

    def on_line(switch: str, line: str) -> None:
        if line == "show interfaces":
            processes[-1].channel.get_connection().abort()

    monkeypatch.setattr(sw_mod, "_shell", watched_shell)
    key = asyncssh.generate_private_key("ssh-ed25519")
    acceptor = await sw_mod.start_switch_server(healthy(1, "eos"), "sw-eos-1", key, password=SWITCH_PASSWORD,
                                                on_line=on_line)
    port = acceptor.sockets[0].getsockname()[1]
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(known_line(port, key))
    tr = transport(tmp_path)
    try:
        session = await tr.session(target(port, known_hosts))
        assert (await session.run("show hostname")).ok
        with pytest.raises(TransportError) as err:
            await session.run("show interfaces", timeout=2)
    finally:
        await tr.close()
        acceptor.close()
    assert err.value.kind is ConnectErrorKind.DROPPED and err.value.command == "show interfaces"
    assert "closed while `show interfaces` was running" in err.value.message
