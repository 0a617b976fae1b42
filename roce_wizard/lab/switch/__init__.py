"""Simulated Ethernet switches: vendor CLIs (Arista EOS, NVIDIA Onyx, Dell OS10) and Cumulus NVUE over SSH.

This module is the SSH server, the faults and the names the rest imports; the CLI lives in cli
(with the eos / onyx / os10 command mixins), the show outputs in render_*,
the shared helpers in common, the state in state, NVUE in nvue.

Each switch in the world gets an asyncssh server whose interactive shell is a :class:`SwitchCli`:
a per-session state machine fed one line at a time, with the vendor's real prompts and modes
(exec ``>``, enable ``#``, config, interface, and the vendor's own sub-modes), show commands
rendered from the :class:`~roce_wizard.lab.world.Switch` in the vendor's real formats (held against
the project's corpus of real captures and the published guides the checks cite), and config commands that change
the world's ``Switch``/``SwitchPort`` state, so a fix made over netmiko is what the next show prints and what
the rest of the lab (guests, perftest, incast) sees.

The world's port fields are the truth: PFC on, no-drop priorities, trust, MTU, flow control, and ECN
on the RoCE queue. What a vendor keeps that the world has no field for (OS10 class-map and
policy-map names, Onyx's switch-wide PFC switch, a non-default DSCP map, ECN on other queues) lives
in a :class:`CliState` kept beside the switch; renderers reconcile it with the port fields first, so
a fault injected straight into the world shows up in vendor syntax like one made at the CLI.

Sessions behave the way netmiko's drivers expect (measured in issue 3): command echo and a bare
prompt for every bare newline (asyncssh ``line_editor=True``), EOS answers ``terminal width 511``
with ``Width set to 511 columns.`` and ``terminal length 0`` with ``Pagination disabled.``, Onyx
``enable`` asks no password and config mode is left one ``exit`` per level, OS10 lands at ``#``
and leaves config with ``end``.

Where each accepted command family comes from (issue 12: the lab takes only what a source shows; every
other line gets the vendor's own error: EOS `% Invalid input (at token N: 'x')` as public eAPI/CLI
fixtures record it, Onyx `% Unrecognized command "x".` + `Type "?" for help.` as a real MLNX-OS capture
prints it, OS10 `% Error: Unrecognized command.` as real OS10 10.5 answers quote it):
  EOS   `interface …` / `qos trust dscp|cos` / `priority-flow-control on` / `priority-flow-control priority N
        no-drop` — seed 004 (a real session); `show priority-flow-control|qos interfaces|interfaces|flowcontrol|
        qos maps|lldp neighbors` — seed 004 and the probes' captures; `tx-queue N` / `random-detect ecn
        minimum-threshold … maximum-threshold …`, `qos map dscp D to traffic-class T`, `flowcontrol send|receive
        on|off`, `mtu N` — Arista EOS User Manual, "Quality of Service" and Arista's AVD/Ansible schemas;
        `configure session NAME` / `commit` / `abort`, `copy running-config flash:F`, `configure replace
        flash:F` (replace) and `copy flash:F running-config` (merge) — an expert review of the project; `terminal
        length|width N` — netmiko's arista_eos driver.
  Onyx  `dcb priority-flow-control enable force|priority N enable`, `interface ethernet X dcb
        priority-flow-control mode on force` — seed 001 and NVIDIA Onyx User Manual, "Priority Flow Control
        (PFC)"; `qos trust L2|L3|both|port`, `qos map dscp-to-switch-priority` — Onyx "QoS Commands";
        `traffic-class N congestion-control ecn minimum-absolute … maximum-absolute …` — Onyx "RoCE
        Commands" (`show roce`); `mtu N force`, `flowcontrol receive|send off force` — public Onyx
        configurations; `configuration write to F no-switch`, `configuration switch-to F` — the Tall Maple CLI
        reference Onyx shares (docs.trellix.com "configuration write", "configuration switch-to"); `no cli
        session paging enable` — netmiko's mellanox_mlnxos driver.
  OS10  `class-map`/`policy-map type network-qos|queuing`, `pause`, `pfc-cos`, `match qos-group|queue`, `wred` /
        `random-detect ecn` / `random-detect color …` / `random-detect NAME`, `service-policy`, `trust-map
        dscp`, `priority-flow-control mode on` — Dell SmartFabric OS10 User Guide 10.5.0, "Configure RoCE on the
        switch"; `mtu` — Dell's dellemc.os10 collection (os10_interface); `copy running-configuration
        config://F` and `copy config://F running-configuration` (a MERGE: restore.py) — an expert review of the project.
  NVUE  lab/switch/nvue.py names its own.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import asyncssh

from roce_wizard.lab.server.config import SSHD_OPTIONS
from roce_wizard.lab.switch.cli import SwitchCli
from roce_wizard.lab.switch.cli_base import _Frame, render_running_config
from roce_wizard.lab.switch.common import resolve_ports, roce_lossless, switch_priority
from roce_wizard.lab.switch.counters import VALIDATE_FAULTS  # RW609: the lab registry reads it from here
from roce_wizard.lab.switch.faults import FAULTS, fault_port
from roce_wizard.lab.switch.nvue import NvueCli
from roce_wizard.lab.switch.state import DEVICE_TYPES, VENDORS, CliState, cli_state, freeze
from roce_wizard.lab.world import Switch, World

# __all__ (at the end): what tests and the rest of the lab take from lab.switch, the code living in its modules

# --------------------------------------------------------------------------------------------
# the SSH server


LAB_VENDORS = (*VENDORS, "nvue")  # NVUE is a Linux shell with `nv` (lab/switch/nvue.py), not a vendor CLI mode tree
_BANNERS = {
    "nvue": "",
    "eos": "",
    "onyx": "\nNVIDIA Onyx Switch Management\n\n",
    "os10": "\nDell EMC Networking OS10 Enterprise\n\n",
}

WorldSource = World | Callable[[], World]
PASSWORD_ENV = "ROCE_LAB_SWITCH_PASSWORD"  # the inventory's {env: …} for every lab switch
USERNAME = "admin"


def _world_of(source: WorldSource) -> World:
    return source() if callable(source) else source


async def _shell(process: asyncssh.SSHServerProcess, source: WorldSource, switch_name: str, port: int,
                 on_line: Callable[[str, str], None] | None, privileged: bool | None) -> None:
    world = _world_of(source)  # the world as it is when the session opens (the lab may swap worlds)
    if switch_name not in world.switches:
        process.stderr.write(f"% {switch_name} is not in the lab's world any more\n")
        process.exit(1)
        return
    world.switches[switch_name].ssh_port = port
    vendor = world.switches[switch_name].vendor
    cli: Any = NvueCli(world, switch_name) if vendor == "nvue" else \
        SwitchCli(world, switch_name, start_privileged=privileged)
    if process.command:  # `ssh switch "show version"`: one command in enable mode, then leave
        if vendor != "nvue":
            cli.stack[-1] = _Frame("enable")
        out = cli.run(process.command)
        if out:
            process.stdout.write(out + "\n")
        process.exit(0)
        return
    process.stdout.write(_BANNERS[cli.vendor] + cli.prompt)
    try:
        while not cli.closed:
            line = await process.stdin.readline()
            if line == "":  # the client closed its side
                break
            out = cli.run(line)
            if on_line is not None:
                on_line(switch_name, line.strip())
            if cli.closed:
                break
            if out:
                process.stdout.write(out + "\n")
            process.stdout.write(cli.prompt)
    except (asyncssh.BreakReceived, asyncssh.TerminalSizeChanged, asyncssh.SignalReceived):
        pass
    except (asyncssh.ConnectionLost, BrokenPipeError, ConnectionError):
        return
    process.exit(0)


async def start_switch_server(
    world: WorldSource,
    switch_name: str,
    host_key: asyncssh.SSHKey,
    port: int = 0,
    *,
    username: str = USERNAME,
    password: str | None = None,
    client_keys: asyncssh.SSHAuthorizedKeys | Iterable[asyncssh.SSHKey] | None = None,
    host: str = "127.0.0.1",
    on_line: Callable[[str, str], None] | None = None,
    privileged: bool | None = None,
) -> asyncssh.SSHAcceptor:
    """Serve one switch's CLI over SSH on `host`:`port` (0: ephemeral) and return the acceptor
    (``close()`` it to stop); sets ``switch.ssh_port`` to the port bound.

    `world` may be a callable returning the current world (a lab that swaps worlds in place): each
    new session takes the world it returns. Authentication is `username` with `password` (what
    netmiko uses) and/or one of `client_keys`. ``on_line(switch, line)`` sees every line typed.
    Sessions start where the vendor puts an ordinary admin: EOS and Onyx at ``>`` (``enable`` asks
    no password), OS10 at ``#``; ``privileged=True`` starts every vendor at ``#`` (an EOS account
    with privilege 15)."""
    switch = _world_of(world).switches[switch_name]
    if switch.vendor not in LAB_VENDORS:
        raise ValueError(f"switch {switch_name}: vendor {switch.vendor!r} has no CLI in the lab")
    if password is None and client_keys is None:
        raise ValueError("start_switch_server needs a password or client keys")
    authorized: asyncssh.SSHAuthorizedKeys | None
    if client_keys is None or isinstance(client_keys, asyncssh.SSHAuthorizedKeys):
        authorized = client_keys
    else:
        authorized = asyncssh.import_authorized_keys(
            "".join(k.export_public_key("openssh").decode() for k in client_keys))
    bound = {"port": port}

    class _Server(asyncssh.SSHServer):
        def begin_auth(self, user: str) -> bool:
            return True

        def password_auth_supported(self) -> bool:
            return password is not None

        def validate_password(self, user: str, offered: str) -> bool:
            return password is not None and user == username and hmac.compare_digest(
                offered.encode(), password.encode())

        def public_key_auth_supported(self) -> bool:
            return authorized is not None

        def validate_public_key(self, user: str, key: asyncssh.SSHKey) -> bool:
            return authorized is not None and user == username and \
                authorized.validate(key, "127.0.0.1", "127.0.0.1") is not None

    async def process_factory(process: asyncssh.SSHServerProcess) -> None:
        await _shell(process, world, switch_name, bound["port"], on_line, privileged)

    acceptor = await asyncssh.create_server(
        _Server,
        host,
        port,
        server_host_keys=[host_key],
        process_factory=process_factory,
        line_editor=True,  # echo and line editing, which netmiko's prompt handling relies on
        **SSHD_OPTIONS,
        server_version={"eos": "OpenSSH_8.7", "onyx": "OpenSSH_7.4", "os10": "OpenSSH_7.9p1",
                        "nvue": "OpenSSH_8.4p1"}[switch.vendor],
    )
    bound["port"] = acceptor.sockets[0].getsockname()[1]
    switch.ssh_port = bound["port"]
    return acceptor


def inventory_entry(switch: Switch, port: int | None = None, *, address: str = "127.0.0.1",
                    username: str = USERNAME, password_env: str = PASSWORD_ENV) -> dict[str, Any]:
    """The switch's target in the lab's inventory.yaml (the password by reference, never inline)."""
    return {
        "name": switch.name,
        "address": address,
        "port": port if port is not None else switch.ssh_port,
        "device_type": DEVICE_TYPES[switch.vendor],
        "username": username,
        "password": {"env": password_env},
    }


def cabling(world: World) -> dict[tuple[str, str], str]:
    """(host or bare-metal Linux name, vmnic or netdev) -> 'switch:port', for the inventory's
    `roce.switch_ports` (what RW507 joins hosts to switch ports by)."""
    out: dict[tuple[str, str], str] = {}
    for sw in world.switches.values():
        for p in sw.ports:
            if p.peer is not None:
                out[p.peer] = f"{sw.name}:{p.name}"
    return out


async def serve(lab: Any) -> None:
    """The lab runtime's hook (`lab/server/` SERVICE_MODULES): one SSH server per switch.

    One random password per lab (user ``admin``), kept in DIR/lab.env (Lab.secret); the
    inventory reads it from $ROCE_LAB_SWITCH_PASSWORD and `lab up` says how to set it. The
    switches' host keys are appended to DIR/known_hosts, and the ESXi / bare-metal entries get
    ``roce.switch_ports`` from the cabling, in vmnic order."""
    world: World = lab.world
    if not world.switches:
        return
    password = secrets.token_urlsafe(18)
    directory = Path(lab.directory)
    acceptors: dict[str, asyncssh.SSHAcceptor] = {}
    keys: dict[str, asyncssh.SSHKey] = {}
    for name, sw in world.switches.items():
        if sw.vendor not in LAB_VENDORS:
            lab.note(f"switch {name}: vendor {sw.vendor!r} has no CLI in the lab; not served")
            continue
        keys[name] = asyncssh.generate_private_key("ssh-ed25519")
        acceptors[name] = await start_switch_server(lambda: lab.world, name, keys[name], 0,
                                                    host=getattr(lab, "host", "127.0.0.1"), password=password)
    lab.secret(PASSWORD_ENV, password)
    host = getattr(lab, "host", "127.0.0.1")
    known = directory / "known_hosts"
    with open(known, "a", encoding="utf-8") as fh:
        for name, acceptor in acceptors.items():
            alg, blob = keys[name].export_public_key("openssh").decode().split()[:2]
            fh.write(f"[{host}]:{acceptor.sockets[0].getsockname()[1]} {alg} {blob} {name}\n")
    wired = cabling(world)
    targets = lab.inventory.get("targets", {})
    for entry in targets.get("esxi", []):
        roce = entry.get("roce")
        if isinstance(roce, dict) and "switch_ports" not in roce:
            ports = [wired.get((entry["name"], nic)) for nic in roce.get("vmnics", [])]
            if ports and all(ports):
                roce["switch_ports"] = ports
    for entry in targets.get("linux", []):
        roce = entry.get("roce")
        if isinstance(roce, dict) and "switch_ports" not in roce and (entry["name"], roce.get("netdev")) in wired:
            roce["switch_ports"] = [wired[(entry["name"], roce.get("netdev"))]]

    def status_rows() -> list[dict[str, Any]]:
        rows = []
        for name, acceptor in acceptors.items():
            sw = lab.world.switches.get(name)
            rows.append({
                "name": name,
                "kind": "switch",
                "state": "up" if acceptor.sockets else "down",
                "port": acceptor.sockets[0].getsockname()[1] if acceptor.sockets else None,
                "vendor": sw.vendor if sw else None,
                "device_type": DEVICE_TYPES.get(sw.vendor) if sw else None,
                "faults": sorted(sw.faults) if sw else [],
                "saved": bool(sw and sw.saved_config),
            })
        return rows

    async def stop() -> None:
        for acceptor in acceptors.values():
            acceptor.close()
        for acceptor in acceptors.values():
            await acceptor.wait_closed()

    entries = [inventory_entry(world.switches[name], acceptor.sockets[0].getsockname()[1], address=host)
               for name, acceptor in acceptors.items()]
    lab.register("switch", entries, status=status_rows, stop=stop,
                 defaults={"options": {"known_hosts": str(known)}})


__all__ = [
    "DEVICE_TYPES",
    "FAULTS",
    "VALIDATE_FAULTS",
    "VENDORS",
    "CliState",
    "SwitchCli",
    "cabling",
    "cli_state",
    "fault_port",
    "freeze",
    "inventory_entry",
    "render_running_config",
    "resolve_ports",
    "roce_lossless",
    "serve",
    "start_switch_server",
    "switch_priority",
]
