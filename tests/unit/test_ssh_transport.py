"""SshTransport against real asyncssh servers on 127.0.0.1 (ephemeral ports, generated keys)."""

from __future__ import annotations

import asyncio
import os
import socket
import stat
from pathlib import Path

import asyncssh
import pytest
import pytest_asyncio

from roce_wizard.model import Credentials, SecretRef, SecretSource, Target, TargetKind
from roce_wizard.transports.base import CommandResult, ConnectErrorKind, Session, Transport, TransportError
from roce_wizard.transports.ssh import SshTransport, known_hosts_name, quote, validate_token

pytestmark = pytest.mark.asyncio

USER = "root"
PASSWORD = "s3cret-Pa55"
KEY_USER = "keyuser"


class FakeHost:
    """An SSH server answering a few commands; counts the connections it accepted."""

    def __init__(self, host_key: asyncssh.SSHKey, authorized: asyncssh.SSHAuthorizedKeys | None):
        self.host_key = host_key
        self.authorized = authorized
        self.connections = 0
        self.auth_attempts = 0  # users that began authenticating (credentials offered)
        self.conns: list[asyncssh.SSHServerConnection] = []
        self.server: asyncssh.SSHAcceptor | None = None
        self.port = 0

    async def start(self) -> FakeHost:
        host = self

        class Server(asyncssh.SSHServer):
            def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
                host.connections += 1
                host.conns.append(conn)

            def begin_auth(self, username: str) -> bool:
                host.auth_attempts += 1
                return True

            def password_auth_supported(self) -> bool:
                return True

            def validate_password(self, username: str, password: str) -> bool:
                return username == USER and password == PASSWORD

        self.server = await asyncssh.create_server(
            Server,
            "127.0.0.1",
            0,
            server_host_keys=[self.host_key],
            authorized_client_keys=self.authorized,
            process_factory=self._process,
            encoding=None,
        )
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    @staticmethod
    async def _process(process: asyncssh.SSHServerProcess) -> None:
        command = process.command or ""
        if command == "echo hi":
            process.stdout.write(b"hi\n")
            process.exit(0)
        elif command == "sleep 5":
            for _ in range(100):
                if process.is_closing():
                    return
                await asyncio.sleep(0.05)
            process.exit(0)
        elif command == "exit 3":
            process.exit(3)
        elif command == "badutf8":
            process.stdout.write(b"caf\xe9\n")
            process.exit(0)
        else:
            word = command.split()[0] if command.split() else command
            process.stderr.write(f"sh: {word}: not found\n".encode())
            process.exit(127)

    def drop(self) -> None:
        """The host goes away (reboot): every connection is cut."""
        for conn in self.conns:
            conn.abort()
        self.conns.clear()

    async def stop(self) -> None:
        self.drop()
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


def known_hosts_line(port: int, key: asyncssh.SSHKey) -> str:
    alg, blob = key.export_public_key("openssh").decode().split()[:2]
    return f"[127.0.0.1]:{port} {alg} {blob}\n"


def target(port: int, name: str = "esx-01", **creds) -> Target:
    creds.setdefault("username", USER)
    creds.setdefault("use_agent", False)
    if "key_file" not in creds:
        creds.setdefault("password", SecretRef(SecretSource.PLAINTEXT, value=PASSWORD))
    return Target(name=name, kind=TargetKind.ESXI, address="127.0.0.1", port=port, credentials=Credentials(**creds))


def resolver(t: Target) -> str | None:
    return t.credentials.password.value if t.credentials.password else None


@pytest.fixture(autouse=True)
def _no_agent(monkeypatch):
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)


@pytest.fixture(scope="module")
def client_key() -> asyncssh.SSHKey:
    return asyncssh.generate_private_key("ssh-ed25519")


@pytest_asyncio.fixture
async def lab(client_key):
    authorized = asyncssh.import_authorized_keys(client_key.export_public_key().decode())
    host = await FakeHost(asyncssh.generate_private_key("ssh-ed25519"), authorized).start()
    yield host
    await host.stop()


@pytest.fixture
def kh(tmp_path, lab) -> Path:
    """known_hosts holding the lab host's key."""
    path = tmp_path / "known_hosts"
    path.write_text(known_hosts_line(lab.port, lab.host_key))
    return path


@pytest_asyncio.fixture
async def transport_factory():
    made: list[SshTransport] = []

    def make(**kw) -> SshTransport:
        kw.setdefault("password_resolver", resolver)
        kw.setdefault("connect_timeout", 3)
        kw.setdefault("command_timeout", 3)
        t = SshTransport(**kw)
        made.append(t)
        return t

    yield make
    for t in made:
        await t.close()


# -- helpers -----------------------------------------------------------------------------------


async def test_protocols_and_helpers():
    t = SshTransport(known_hosts="/nonexistent/kh")
    assert isinstance(t, Transport)
    assert quote("a b; rm -rf /") == "'a b; rm -rf /'"
    assert validate_token("vmnic2", "vmnic") == "vmnic2"
    assert validate_token("0000:3b:00.0", "pci") == "0000:3b:00.0"
    assert validate_token("mlx5_1", r"mlx5_[0-9]+") == "mlx5_1"
    for bad in ("vmnic2; reboot", "vmnic2\n", "$(id)", "", None):
        with pytest.raises(ValueError):
            validate_token(bad, "vmnic")
    assert known_hosts_name("h", 22) == "h"
    assert known_hosts_name("h", 2201) == "[h]:2201"


# -- host keys ---------------------------------------------------------------------------------


async def test_known_host_connects_and_runs(lab, kh, transport_factory):
    tr = transport_factory(known_hosts=kh)
    s = await tr.session(target(lab.port))
    assert isinstance(s, Session)
    r = await s.run("echo hi")
    assert isinstance(r, CommandResult)
    assert (r.stdout, r.exit_status, r.timed_out) == ("hi\n", 0, False)
    r = await s.run("exit 3")
    assert r.exit_status == 3 and not r.timed_out
    r = await s.run("foo --bar")
    assert r.exit_status == 127 and r.stderr == "sh: foo: not found\n"
    r = await s.run("badutf8")
    assert r.stdout == "caf\ufffd\n"


async def test_unknown_host_refused(lab, tmp_path, transport_factory):
    path = tmp_path / "known_hosts"  # does not exist
    tr = transport_factory(known_hosts=path)
    with pytest.raises(TransportError) as ei:
        await tr.session(target(lab.port))
    err = ei.value
    assert err.kind is ConnectErrorKind.HOSTKEY_UNKNOWN
    assert err.target.name == "esx-01"
    msg = str(err)
    assert str(path) in msg and "esx-01" in msg
    assert f"ssh-keyscan -p {lab.port} 127.0.0.1" in msg and "--trust-on-first-use" in msg
    assert lab.host_key.get_fingerprint() in msg  # what the operator should verify
    assert not path.exists()
    assert lab.auth_attempts == 0  # refused at the key exchange: no credentials sent


async def test_unknown_host_other_entries_refused(lab, tmp_path, transport_factory):
    other = asyncssh.generate_private_key("ssh-ed25519")
    path = tmp_path / "known_hosts"
    path.write_text(known_hosts_line(lab.port + 1, other))  # another port: not this host
    tr = transport_factory(known_hosts=path)
    with pytest.raises(TransportError) as ei:
        await tr.session(target(lab.port))
    assert ei.value.kind is ConnectErrorKind.HOSTKEY_UNKNOWN


@pytest.mark.parametrize("alg", ["ssh-ed25519", "ecdsa-sha2-nistp256"])
async def test_changed_key_refused(lab, tmp_path, transport_factory, alg):
    path = tmp_path / "known_hosts"
    path.write_text("# comment\n" + known_hosts_line(lab.port, asyncssh.generate_private_key(alg)))
    for tofu in (False, True):  # trust on first use never overrides a changed key
        tr = transport_factory(known_hosts=path, trust_on_first_use=tofu)
        with pytest.raises(TransportError) as ei:
            await tr.session(target(lab.port))
        err = ei.value
        assert err.kind is ConnectErrorKind.HOSTKEY_CHANGED
        msg = str(err)
        assert "CHANGED" in msg and "man-in-the-middle" in msg
        assert f"{path} line 2" in msg
        assert f"ssh-keygen -R '[127.0.0.1]:{lab.port}'" in msg
        assert lab.host_key.get_fingerprint() in msg
    assert len(path.read_text().splitlines()) == 2  # nothing recorded
    assert lab.auth_attempts == 0


async def test_tofu_records_key_then_strict_connects(lab, tmp_path, transport_factory):
    path = tmp_path / "ssh" / "known_hosts"
    tr = transport_factory(known_hosts=path, trust_on_first_use=True)
    s = await tr.session(target(lab.port))
    assert (await s.run("echo hi")).stdout == "hi\n"
    assert path.read_text() == known_hosts_line(lab.port, lab.host_key)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert lab.auth_attempts == 1  # credentials went only to the host whose key was recorded

    strict = transport_factory(known_hosts=path)
    s2 = await strict.session(target(lab.port))
    assert (await s2.run("echo hi")).exit_status == 0
    # a second TOFU transport does not record the key twice
    again = transport_factory(known_hosts=path, trust_on_first_use=True)
    await again.session(target(lab.port))
    assert path.read_text().count(f"[127.0.0.1]:{lab.port}") == 1


async def test_tofu_appends_to_existing_file(lab, tmp_path, transport_factory):
    path = tmp_path / "known_hosts"
    path.write_text("[127.0.0.1]:1 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBIBB0Vrb2BJGbFCVCyHB7wlfIRPFJeD6Sf1ujUDW6O+")
    tr = transport_factory(known_hosts=path, trust_on_first_use=True)
    await tr.session(target(lab.port))
    lines = path.read_text().splitlines()
    assert lines[1] + "\n" == known_hosts_line(lab.port, lab.host_key)


# -- authentication ----------------------------------------------------------------------------


async def test_wrong_password_is_auth(lab, kh, transport_factory):
    tr = transport_factory(known_hosts=kh, password_resolver=lambda t: "wrong-password-xyz")
    with pytest.raises(TransportError) as ei:
        await tr.session(target(lab.port))
    err = ei.value
    assert err.kind is ConnectErrorKind.AUTH
    msg = str(err)
    assert "'root'" in msg and "password" in msg
    assert "wrong-password-xyz" not in msg and PASSWORD not in msg


async def test_key_auth(lab, kh, tmp_path, client_key, transport_factory):
    key_file = tmp_path / "id_ed25519"
    client_key.write_private_key(str(key_file))
    tr = transport_factory(known_hosts=kh, password_resolver=None)
    s = await tr.session(target(lab.port, username=KEY_USER, key_file=str(key_file)))
    assert (await s.run("echo hi")).stdout == "hi\n"


async def test_unreadable_key_file_is_auth(lab, kh, tmp_path, transport_factory):
    tr = transport_factory(known_hosts=kh, password_resolver=None)
    with pytest.raises(TransportError) as ei:
        await tr.session(target(lab.port, username=KEY_USER, key_file=str(tmp_path / "missing")))
    assert ei.value.kind is ConnectErrorKind.AUTH and "missing" in str(ei.value)


# -- commands ----------------------------------------------------------------------------------


async def test_command_timeout_keeps_connection(lab, kh, transport_factory):
    tr = transport_factory(known_hosts=kh)
    s = await tr.session(target(lab.port))
    r = await s.run("sleep 5", timeout=0.3)
    assert r.timed_out and r.exit_status is None
    assert 0.25 < r.duration_s < 2
    r = await s.run("echo hi")
    assert (r.stdout, r.exit_status) == ("hi\n", 0)
    assert lab.connections == 1


async def test_default_command_timeout(lab, kh, transport_factory):
    tr = transport_factory(known_hosts=kh, command_timeout=0.2)
    s = await tr.session(target(lab.port))
    assert (await s.run("sleep 5")).timed_out


# -- connect errors ----------------------------------------------------------------------------


async def test_connection_refused(tmp_path, transport_factory):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    tr = transport_factory(known_hosts=tmp_path / "kh")
    with pytest.raises(TransportError) as ei:
        await tr.session(target(port))
    assert ei.value.kind is ConnectErrorKind.REFUSED
    assert str(port) in str(ei.value)


async def test_connect_timeout(tmp_path, transport_factory):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)  # the kernel completes the TCP handshake; nobody ever sends a banner
    try:
        tr = transport_factory(known_hosts=tmp_path / "kh", connect_timeout=0.4)
        loop = asyncio.get_running_loop()
        start = loop.time()
        with pytest.raises(TransportError) as ei:
            await tr.session(target(sock.getsockname()[1]))
        assert ei.value.kind is ConnectErrorKind.TIMEOUT
        assert loop.time() - start < 2
    finally:
        sock.close()


async def test_dns_failure(tmp_path, transport_factory):
    tr = transport_factory(known_hosts=tmp_path / "kh")
    t = Target(name="ghost", kind=TargetKind.LINUX, address="no-such-host.invalid", port=2222)
    with pytest.raises(TransportError) as ei:
        await tr.session(t)
    assert ei.value.kind is ConnectErrorKind.DNS


# -- sharing and bounds ------------------------------------------------------------------------


async def test_one_connection_per_host(lab, kh, transport_factory):
    tr = transport_factory(known_hosts=kh)
    t = target(lab.port)

    async def one() -> CommandResult:
        s = await tr.session(t)
        return await s.run("echo hi")

    results = await asyncio.gather(*(one() for _ in range(20)))
    assert all(r.stdout == "hi\n" for r in results)
    assert lab.connections == 1
    assert tr.connects == 1


async def test_concurrent_connects_bounded(tmp_path, client_key, transport_factory):
    hosts = [await FakeHost(asyncssh.generate_private_key("ssh-ed25519"), None).start() for _ in range(5)]
    try:
        path = tmp_path / "known_hosts"
        path.write_text("".join(known_hosts_line(h.port, h.host_key) for h in hosts))
        tr = transport_factory(known_hosts=path, max_concurrent_connects=2)

        async def one(i: int, h: FakeHost) -> CommandResult:
            s = await tr.session(target(h.port, name=f"esx-{i:02}"))
            return await s.run("echo hi")

        results = await asyncio.gather(*(one(i, h) for i, h in enumerate(hosts)))
        assert all(r.exit_status == 0 for r in results)
        assert tr.peak_connects == 2
        assert [h.connections for h in hosts] == [1] * 5
    finally:
        for h in hosts:
            await h.stop()


# -- dropped connections -----------------------------------------------------------------------


async def test_dropped_connection_unreachable_then_reconnects(lab, kh, transport_factory):
    tr = transport_factory(known_hosts=kh)
    t = target(lab.port)
    s = await tr.session(t)
    assert (await s.run("echo hi")).exit_status == 0

    running = asyncio.create_task(s.run("sleep 5", timeout=3))
    await asyncio.sleep(0.2)
    lab.drop()  # the host reboots mid-command
    with pytest.raises(TransportError) as ei:
        await running
    assert ei.value.kind is ConnectErrorKind.DROPPED and ei.value.command == "sleep 5"
    assert "closed while `sleep 5` was running" in ei.value.message
    with pytest.raises(TransportError) as ei:  # the old session stays dead
        await s.run("echo hi")
    assert ei.value.kind is ConnectErrorKind.UNREACHABLE

    s2 = await tr.session(t)  # back up: a new session reconnects
    assert (await s2.run("echo hi")).stdout == "hi\n"
    assert lab.connections == 2


async def test_idle_drop_then_session_reconnects(lab, kh, transport_factory):
    tr = transport_factory(known_hosts=kh)
    t = target(lab.port)
    await (await tr.session(t)).run("echo hi")
    lab.drop()
    await asyncio.sleep(0.1)
    s = await tr.session(t)
    assert (await s.run("echo hi")).exit_status == 0
    assert lab.connections == 2


async def test_close_closes_connections(lab, kh, transport_factory):
    tr = transport_factory(known_hosts=kh)
    s = await tr.session(target(lab.port))
    await tr.close()
    with pytest.raises(TransportError):
        await s.run("echo hi")
