"""Per-guest lab state the world model has no field for, boot handling, and small reply helpers."""

from __future__ import annotations

import random
import re
import shlex
import zlib
from collections.abc import Callable
from typing import Any

from roce_wizard.lab.proto import Ctx, Program, Reply
from roce_wizard.lab.world import Card, EsxiHost, Guest, MlxParam, SwitchPort, Vmnic, World

OFED_BUNDLE = "MLNX_OFED_LINUX-5.4-1.0.3.0"  # what /tmp/<bundle>-rhel8.4-x86_64/mlnxofedinstall installs
OFED_DIR = f"/tmp/{OFED_BUNDLE}-rhel8.4-x86_64"
UCX_VERSION = "1.12"
OSU_VERSION = "5.7.1"
ROCE_DEV = "mlx5_0"  # the VF's RDMA device in a guest; bare metal: mlx5_<port-1>
LINE = "-" * 87
MTU_ENUM = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
# the VMware PCI slots of the guest's NICs (ens192 -> 0b, ens224 -> 13, ens256 -> 1b)
VM_PCI = {"ens192": "0000:0b:00.0", "ens224": "0000:13:00.0", "ens256": "0000:1b:00.0"}

# ---------------------------------------------------------------------------- the package's entry points

ProgramTable = Callable[[World, str], dict[str, Program]]
FileWriter = Callable[[World, str, str, str], "str | None"]


class _Wired:
    """The guest package's program table and file writer, handed down by lab/guest/__init__.py.

    They sit above this module (the programs read this state), yet a boot hook, `timeout`/`nohup`
    and `systemctl start` run programs: the package wires its own entry points in when it is imported
    (any import of a lab.guest module imports the package first), so no module here imports upwards.
    """

    programs: ProgramTable
    write_file: FileWriter


WIRED = _Wired()


def wire(programs: ProgramTable, write_file: FileWriter) -> None:
    WIRED.programs, WIRED.write_file = programs, write_file


# ---------------------------------------------------------------------------- lab-side state


def _lab(world: World) -> dict[str, Any]:
    """State the world model lacks a field for (deep-copied with the world)."""
    return world.__dict__.setdefault("lab_guest_state", {"guests": {}, "perftest": {}, "waves": {}, "pids": 4000})


def _gs(world: World, guest: Guest) -> dict[str, Any]:
    """This guest's lab state, brought up to date with its boot (a reboot applies what persists)."""
    table = _lab(world)["guests"]
    st = table.get(guest.name)
    if st is None:
        st = table[guest.name] = {
            "boot_id": guest.boot_id,
            # what the machine comes up with: the scenario's (and an injected fault's) state persists
            "nm": {i.name: {"mtu": i.mtu, "ipv4": list(i.ipv4), "autoconnect": i.up} for i in guest.interfaces},
            "persist": {"pause": (guest.pause_rx, guest.pause_tx), "traffic_class": guest.traffic_class,
                        "qos": (guest.qos_trust, list(guest.qos_pfc)), "rdma_cm_tos": guest.rdma_cm_tos},
            "ipv6": {},  # ifname -> extra IPv6 addresses (beyond the EUI-64 link-local)
            "gid_order": {},  # ifname -> addresses in the order the GID table got them
            "ll_mode": "eui64",  # NetworkManager ipv6.addr-gen-mode for the RoCE netdev
            "counters": {},
            "etc": {},  # files written under /etc, /tmp, /root
            "units": {},  # systemd unit -> enabled
            "packages": set(),
            "card": _baremetal_card(guest) if guest.vm is None else None,
        }
        _reset_counters(st, guest)
        return st
    if st["boot_id"] != guest.boot_id:
        st["boot_id"] = guest.boot_id
        _boot(world, guest, st)
    return st


def sync(world: World, guest_name: str) -> None:
    """Apply a reboot `World.reboot_guest` just did (otherwise the next call here applies it)."""
    _gs(world, world.guests[guest_name])


def _boot(world: World, guest: Guest, st: dict[str, Any]) -> None:
    """What a fresh boot of the guest looks like: NetworkManager profiles, non-persistent settings
    back to what persists, counters from zero, the GID table rebuilt, then the boot hooks run."""
    for iface in guest.interfaces:
        prof = st["nm"].get(iface.name)
        if prof:
            iface.mtu, iface.ipv4, iface.up = prof["mtu"], list(prof["ipv4"]), prof["autoconnect"]
    guest.pause_rx, guest.pause_tx = st["persist"]["pause"]
    guest.traffic_class = st["persist"]["traffic_class"]
    guest.rdma_cm_tos = st["persist"].get("rdma_cm_tos")
    guest.qos_trust, guest.qos_pfc = st["persist"]["qos"][0], list(st["persist"]["qos"][1])
    st["gid_order"] = {}
    _reset_counters(st, guest)
    card = st.get("card")
    if card is not None:
        for p in card.config.values():
            p.current = p.next_boot
    _run_boot_hooks(world, guest, st)


def _driver_reload(world: World, guest: Guest, st: dict[str, Any]) -> None:
    """`openibd force-restart`: the new stack loads; sysfs/configfs settings and counters start over."""
    guest.ofed_pending = False
    guest.traffic_class = None
    guest.rdma_cm_tos = None  # rdma_cm reloads: its configfs groups are gone
    if not guest.cma_persisted:
        guest.cma_roce_mode = "IB/RoCE v1"
    st["gid_order"] = {}
    _reset_counters(st, guest)


def _reset_counters(st: dict[str, Any], guest: Guest) -> None:
    seed = zlib.crc32(guest.boot_id.encode())
    st["counters"] = {i.name: {"rx_bytes": 0 if i.name == guest.roce_netdev else 180_000 + seed % 90_000,
                               "tx_bytes": 0 if i.name == guest.roce_netdev else 120_000 + seed % 70_000,
                               "rx_packets": 0 if i.name == guest.roce_netdev else 2_100 + seed % 700,
                               "tx_packets": 0 if i.name == guest.roce_netdev else 1_500 + seed % 500}
                      for i in guest.interfaces}
    st["rdma"] = {"tx_bytes": 0, "rx_bytes": 0, "tx_packets": 0, "rx_packets": 0, "cnp_sent": 0,
                  "cnp_handled": 0, "ecn_marked": 0, "out_of_sequence": 0, "pause_rx": [0] * 8,
                  "pause_tx": [0] * 8, "discards": 0, "out_of_buffer": 0, "prio_rx_bytes": [0] * 8,
                  "prio_tx_bytes": [0] * 8}


def _run_boot_hooks(world: World, guest: Guest, st: dict[str, Any]) -> None:
    """Enabled systemd units written under /etc/systemd/system run their ExecStart lines at boot."""
    table = WIRED.programs(world, guest.name)
    for unit, enabled in st["units"].items():
        text = st["etc"].get(f"/etc/systemd/system/{unit}")
        if enabled and text is not None:
            _exec_unit(world, guest, table, text)


def _exec_unit(world: World, guest: Guest, table: dict[str, Program], text: str) -> None:
    for m in re.finditer(r"^\s*ExecStart=-?(.+)$", text, re.MULTILINE):
        line = m.group(1).strip()
        if line.startswith(("/bin/sh -c ", "/usr/bin/sh -c ", "/bin/bash -c ", "/usr/bin/bash -c ")):
            line = shlex.split(line)[-1]
        _run_simple(world, guest, table, line)


def _run_simple(world: World, guest: Guest, table: dict[str, Program], line: str) -> None:
    """A boot hook's command: `prog args` or `echo N > file` (no shell beyond that)."""
    m = re.fullmatch(r"\s*echo\s+(-n\s+)?(\S+)\s*>\s*(\S+)\s*", line)
    if m:
        WIRED.write_file(world, guest.name, m.group(3), m.group(2).strip("'\"") + "\n")
        return
    argv = shlex.split(line)
    if not argv:
        return
    prog = table.get(argv[0]) or table.get(argv[0].rsplit("/", 1)[-1])
    if prog is not None:
        prog(Ctx(world=world, target=guest.name), argv)


# ---------------------------------------------------------------------------- the world, seen from a guest


def _guest(world: World, name: str) -> Guest:
    return world.guests[name]


def _vf_backing(world: World, guest: Guest) -> tuple[EsxiHost, Vmnic] | None:
    """The host and RoCE uplink the VM's VF hangs off, when the VM has a working VF."""
    vm = world.vms.get(guest.vm or "")
    host = world.hosts.get(vm.host) if vm else None
    if vm is None or host is None or vm.vf_port is None or not vm.powered_on:
        return None
    vmnic = next((n for n in host.vmnics if n.card == len(host.cards) - 1 and n.port == vm.vf_port), None)
    if vmnic is None or world.vf_count(host, vmnic) <= 0:
        return None
    return host, vmnic


def _switch_port(world: World, host: str, port: str) -> SwitchPort | None:
    for sw in world.switches.values():
        for p in sw.ports:
            if p.peer == (host, port):
                return p
    return None


def _baremetal_card(guest: Guest) -> Card:
    """The ConnectX-5 a bare-metal host owns (healthy firmware config, both ports Ethernet)."""
    def p(default: Any, value: Any) -> MlxParam:
        return MlxParam(default, value, value)

    index = zlib.crc32(guest.name.encode()) % 200 + 16
    config = {
        "MEMIC_BAR_SIZE": p(0, 0), "NUM_OF_VFS": p(0, 8), "NUM_OF_PF": p(2, 2), "SRIOV_EN": p(False, True),
        "PF_LOG_BAR_SIZE": p(5, 5), "VF_LOG_BAR_SIZE": p(1, 1), "NUM_PF_MSIX": p(63, 63),
        "NUM_VF_MSIX": p(11, 11), "LINK_TYPE_P1": p("IB", "ETH"), "LINK_TYPE_P2": p("IB", "ETH"),
        "ADVANCED_PCI_SETTINGS": p(False, False), "SAFE_MODE_THRESHOLD": p(10, 10), "SAFE_MODE_ENABLE": p(True, True),
        # DCQCN (RW413): NVIDIA's defaults (corpus mlxconfig_query/cx4lx-mcx4121a-full-next-boot-trailing-pad.txt)
        **{f"{k}_P{n}": p(v, v) for n in (1, 2) for k, v in (("ROCE_CC_PRIO_MASK", 255), ("CNP_DSCP", 48),
                                                              ("CNP_802P_PRIO", 6))},
    }
    return Card("ConnectX5", 4119, "MCX556A-ECA_Ax", "ConnectX-5 VPI adapter card; EDR IB (100Gb/s) and 100GbE; "
                "dual-port QSFP28; PCIe3.0 x16; tall bracket; ROHS R6", "MT_0000000008", "16.32.1010", None, "3b", 0,
                100000, True, config, base_mac=f"0c:42:a1:{index:02x}:7e:20")


# ---------------------------------------------------------------------------- small helpers


def _ok(text: str = "") -> Reply:
    return Reply(stdout=text)


def _err(text: str, code: int = 1) -> Reply:
    return Reply(stderr=text if text.endswith("\n") else text + "\n", exit=code)


def _rng(*parts: Any) -> random.Random:
    return random.Random(zlib.crc32("|".join(map(str, parts)).encode()))

