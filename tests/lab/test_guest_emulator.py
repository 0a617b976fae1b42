"""The simulated Linux guest and bare-metal host (lab/guest/) read by roce-wizard's REAL parsers and
judged by its REAL checks.

Every command goes through the lab's shell (lab/shell/) as the SSH server runs it; gathering,
evaluation and root-cause resolution are the engine's own (``run_checks`` with a transport that
answers from the world). The lab never imports the parsers or the checks; this test does.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from roce_wizard.catalog import load_catalog
from roce_wizard.engine import RunReport, run_checks
from roce_wizard.lab import guest as G
from roce_wizard.lab import scenarios, shell
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.world import World
from roce_wizard.model import Policy, RoceSpec, Stage, Status, Target, TargetKind
from roce_wizard.parsers import PARSERS
from roce_wizard.probes import GUEST_TOOLS, PROBES, tool_presence_command
from roce_wizard.transports.base import CommandResult

CATALOG = load_catalog()
LINUX_CHECKS = {code: c for code, c in CATALOG.items()
                if c.meta.stage in (Stage.PREFLIGHT, Stage.GUEST)
                and {TargetKind.GUEST, TargetKind.LINUX} & set(c.meta.target_kinds)}
BAD = (Status.FAIL, Status.WARN, Status.ERROR)
LINUXY = (TargetKind.GUEST, TargetKind.LINUX)

# ---------------------------------------------------------------------------- running things on the lab


def sh(world: World, name: str, line: str, env: dict[str, str] | None = None) -> Reply:
    """One command line on a simulated guest, through the lab's shell (as its sshd runs it)."""
    ctx = Ctx(world=world, target=name, files=G.files(world, name), env=dict(env or {}))
    return shell.run(line, ctx, G.programs(world, name),
                     write_file=lambda path, content: G.write_file(world, name, path, content), esxi=False)


def parse(kind: str, text: str) -> dict:
    return PARSERS[kind].parse(text)


class LabSession:
    def __init__(self, world: World, name: str):
        self.world, self.name = world, name

    async def run(self, command: str, timeout: float | None = None) -> CommandResult:
        reply = sh(self.world, self.name, command)
        return CommandResult(command, reply.stdout, reply.stderr, reply.exit, 0.0)

    async def close(self) -> None:
        pass


class LabTransport:
    def __init__(self, world: World):
        self.world = world

    async def session(self, target: Target) -> LabSession:
        return LabSession(self.world, target.name)

    async def close(self) -> None:
        pass


def world_with_baremetal(hosts: int = 2) -> World:
    world = scenarios.healthy(hosts)
    G.add_baremetal(world, 2)
    return world


def target_of(world: World, name: str) -> Target:
    """The target the lab's inventory gives this guest (written before any fault is injected)."""
    g = world.guests[name]
    iface = g.interface(g.roce_netdev)
    ip = iface.ipv4[0] if iface is not None and iface.ipv4 else None
    if g.vm is None:
        return Target(name=name, kind=TargetKind.LINUX, address="127.0.0.1",
                      roce=RoceSpec(netdev=g.roce_netdev, ip=ip, pf_pci="0000:3b:00.0"))
    vm = world.vms[g.vm]
    return Target(name=name, kind=TargetKind.GUEST, address="127.0.0.1",
                  roce=RoceSpec(netdev=g.roce_netdev, ip=ip), host=vm.host, vm=g.vm)


def doctor(world: World, targets: list[Target]) -> RunReport:
    return asyncio.run(run_checks(targets, LINUX_CHECKS, LabTransport(world), Policy(), command_timeout=None))


def reboot(world: World, name: str) -> None:
    """What the lab's server does when a guest answered `reboot`: the world reboots it, the guest boots."""
    world.reboot_guest(world.guests[name])
    G.sync(world, name)


def show(findings) -> str:
    return "\n".join(f"  {f.check}@{f.target} {f.status.value}: {f.summary}"
                     + (f" [blocked by {f.blocked_by[0]}@{f.blocked_by[1]}]" if f.blocked_by else "")
                     for f in findings)


# ---------------------------------------------------------------------------- healthy, and every probe


@pytest.fixture(scope="module")
def baseline() -> tuple[list[Target], RunReport]:
    world = world_with_baremetal()
    targets = [target_of(world, n) for n in world.guests]
    return targets, doctor(world, targets)


def test_healthy_guests_and_hosts_pass_every_check(baseline):
    targets, report = baseline
    bad = [f for f in report.findings if f.status in BAD or f.blocked_by is not None]
    assert not bad, "healthy lab:\n" + show(bad)
    judged = {(f.check, f.target) for f in report.findings if f.status is Status.PASS}
    for t in targets:
        for code in ("RW001", "RW002", "RW003", "RW401", "RW402", "RW403", "RW404", "RW405", "RW406", "RW407",
                     "RW408", "RW411"):
            assert (code, t.name) in judged, f"{code} not judged on {t.name}"
        assert ("RW409", t.name) in judged or t.kind is TargetKind.GUEST
        assert ("RW410", t.name) in judged or t.kind is TargetKind.GUEST  # n/a in a VF guest
        assert ("RW412", t.name) in judged or t.kind is TargetKind.GUEST


def test_every_guest_probe_runs_and_parses(baseline):
    """Each probe the guest and linux checks use ran on the lab and its output parsed."""
    _targets, report = baseline
    for run in report.runs:
        kind = run.target.kind
        wanted = {p for c in LINUX_CHECKS.values() if kind in c.meta.target_kinds
                  for p in (*c.meta.probes, *c.meta.optional_probes) if p in PROBES and kind in PROBES[p].kinds}
        assert wanted, kind
        assert not run.facts.failures, f"{run.target.name}: " + ", ".join(
            f"{p}: {f.reason}" for p, f in run.facts.failures.items())
        assert wanted <= set(run.facts.data), f"{run.target.name}: not gathered {wanted - set(run.facts.data)}"


def test_every_simple_guest_command_answers_in_the_real_format():
    world = world_with_baremetal()
    for name in ("compute-01", "node-01"):
        t = target_of(world, name)
        facts: dict = {}
        for probe in (p for p in PROBES.values() if t.kind in p.kinds and p.items is None):
            command = probe.command(t, facts)
            assert command is not None, f"{probe.name} has no command on {name}"
            reply = sh(world, name, command)
            assert reply.exit == 0, f"{name}: `{command}` exited {reply.exit}: {reply.stderr}"
            facts[probe.name] = parse(probe.parser, reply.stdout)


# ---------------------------------------------------------------------------- one fault, one failing check


def _fault_cases():
    return sorted(G.FAULTS)


# Known gaps outside the lab (reported, not hidden): with no RDMA device at all, `ibv_devinfo` prints
# "No IB devices found" on stderr and exits 255 (rdma-core returns -1). The engine makes that an
# unreadable probe, so RW402 is an *error* (unknown) rather than a failure, and an unknown root cause
# does not mask RW407's real observation (show_gids lists no GID for the netdev).
KNOWN_CASCADES = {"RW402": {"RW407"}}


@pytest.mark.parametrize("code", _fault_cases())
def test_fault_fails_exactly_its_check(baseline, code):
    world = world_with_baremetal()
    targets = [target_of(world, n) for n in world.guests]
    fault = G.FAULTS[code]
    target = "compute-02" if fault.kind == "guest" else "node-02"
    fault.apply(world, target)
    report = doctor(world, targets)
    mine = [f for f in report.findings if f.check == code and f.target == target]
    # RW003 only errors; RW402 errors while the engine turns ibv_devinfo's "No IB devices found"
    # (exit 255) into an unreadable probe instead of handing it to the check
    expected = {"RW003": {Status.ERROR}, "RW402": {Status.FAIL, Status.ERROR}}.get(code, {Status.FAIL})
    assert any(f.status in expected for f in mine), (
        f"{code} on {target} ({fault.description}): {code} said\n{show(mine)}\nall:\n"
        + show([f for f in report.findings if f.status is not Status.PASS]))
    base_skips = {(f.check, f.target, f.subject) for f in baseline[1].findings if f.status is Status.SKIP}
    wrong = []
    for f in report.findings:
        if f.check == code and f.target == target or f.status is Status.PASS:
            continue
        if f.status is Status.SKIP and (f.blocked_by == (code, target) or (f.check, f.target, f.subject) in base_skips):
            continue
        if f.target == target and f.check in KNOWN_CASCADES.get(code, set()):
            continue
        wrong.append(f)
    assert not wrong, f"{code} on {target} ({fault.description}): besides {code}:\n{show(wrong)}"


# RW404 has no fault of its own: active_mtu follows the port's own netdev MTU (mlx5_query_port_roce), so no real
# state lowers it while RW405 passes; a small netdev MTU fails RW405 and RW404 skips, blocked by it
NO_FAULT = {"RW404"}


def test_every_failable_guest_check_has_a_fault():
    failable = {code for code, c in LINUX_CHECKS.items() if code != "RW001"} - NO_FAULT
    assert failable <= set(G.FAULTS), sorted(failable - set(G.FAULTS))


# ---------------------------------------------------------------------------- the world decides


def devices(world: World, name: str) -> list[dict]:
    reply = sh(world, name, "ibv_devinfo")
    if reply.exit != 0:
        assert "No IB devices found" in reply.stderr
        return []
    return parse("ibv_devinfo", reply.stdout)["devices"]


def iface_names(world: World, name: str) -> set[str]:
    return {i["name"] for i in parse("ip_json", sh(world, name, "ip -j link show").stdout)["interfaces"]}


def test_rdma_device_only_with_a_vf_and_active_sriov():
    world = scenarios.healthy(2)
    dev = devices(world, "compute-01")
    assert [d["hca_id"] for d in dev] == ["mlx5_0"]
    assert dev[0]["vendor_part_id"] == 4120 and dev[0]["board_id"] == "MT_0000000008"
    assert dev[0]["fw_ver"] == "16.32.1010" and dev[0]["node_guid"] == "0050:56ff:fea1:0102"
    assert dev[0]["ports"][0]["link_layer"] == "Ethernet" and dev[0]["ports"][0]["state"] == "PORT_ACTIVE"

    world.vms["compute-01"].vf_port = None  # vCenter took the VF away
    assert devices(world, "compute-01") == [] and "ens256" not in iface_names(world, "compute-01")

    world = scenarios.healthy(2)
    world.hosts["esx-01"].bios["SriovGlobalEnable"] = "Disabled"  # the host's SR-IOV is off
    assert devices(world, "compute-01") == [] and devices(world, "compute-02") != []

    world = scenarios.fresh(2)
    assert sh(world, "compute-01", "ibv_devinfo").exit == 127  # no stack, no VF
    assert "ens256" not in iface_names(world, "compute-01")


def test_ofed_install_loads_with_openibd_or_a_reboot():
    world = scenarios.healthy(2)
    g = world.guests["compute-01"]
    g.ofed_version = None
    assert sh(world, "compute-01", "ofed_info -s").exit == 127
    out = sh(world, "compute-01", f"cd {G.OFED_DIR} && ./mlnxofedinstall --force --add-kernel-support")
    assert out.exit == 0 and "Installation passed successfully" in out.stdout
    assert parse("ofed_info", sh(world, "compute-01", "ofed_info -s").stdout)["version"] == "5.4-1.0.3.0"
    assert devices(world, "compute-01") == []  # installed, not loaded
    assert "Loading HCA driver" in sh(world, "compute-01", "/etc/init.d/openibd force-restart").stdout
    assert [d["hca_id"] for d in devices(world, "compute-01")] == ["mlx5_0"]

    g.ofed_version = None
    sh(world, "compute-01", f"{G.OFED_DIR}/mlnxofedinstall --force")
    assert sh(world, "compute-01", "reboot").action == "reboot"
    reboot(world, g.name)
    assert [d["hca_id"] for d in devices(world, "compute-01")] == ["mlx5_0"]


def active_mtu(world: World, name: str = "compute-01") -> int:
    return devices(world, name)[0]["ports"][0]["active_mtu"]


def test_active_mtu_follows_the_smallest_mtu_on_the_path():
    """Bare metal and VF alike: active_mtu is the port's own netdev MTU less the RoCE headers (checks/guest/rw404_active_mtu.py)."""
    world = scenarios.healthy(2)
    assert active_mtu(world) == 4096
    sh(world, "compute-01", "ip link set dev ens256 mtu 1500")
    assert active_mtu(world) == 1024
    sh(world, "compute-01", "ip link set dev ens256 mtu 2200")
    assert active_mtu(world) == 2048
    sh(world, "compute-01", "ip link set dev ens256 mtu 9000")
    assert active_mtu(world) == 4096
    sw = next(iter(world.switches.values()))
    sw.ports[0].mtu = 1500  # esx-01 vmnic2: the switch drops jumbo frames, it does not lower active_mtu
    assert active_mtu(world) == 4096


def test_vf_active_mtu_follows_the_vf_netdev_not_the_host_uplink_or_vds():
    """mlx5_query_port_roce: active_mtu = min(IB_MTU_4096, iboe_get_mtu(ndev->mtu)), ndev the VF's own netdev.

    The host's uplink vmnic and the VDS MTU never show in the guest's ibv_devinfo (a VF reports its own netdev's MTU); the
    netdev's MTU does, at once (the real ibv_devinfo prints `active_mtu: 1024 (3)` for it).
    """
    world = scenarios.healthy(2)
    host = world.hosts["esx-01"]
    world.vcenter.dvs_max_mtu = 1500
    for nic in host.vmnics:
        nic.mtu = 1500
    assert active_mtu(world) == 4096
    reply = sh(world, "compute-01", "ip link set dev ens256 mtu 1500")
    assert reply.exit == 0, reply.stderr
    out = sh(world, "compute-01", "ibv_devinfo -d mlx5_0").stdout
    assert "\t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tactive_mtu:\t\t1024 (3)\n" in out
    # iboe_get_mtu takes 96 bytes of headers (include/rdma/ib_pack.h): 4192 is the least MTU for 4096
    for mtu, expected in ((4191, 2048), (4192, 4096), (2143, 1024), (2144, 2048)):
        assert sh(world, "compute-01", f"ip link set dev ens256 mtu {mtu}").exit == 0
        assert active_mtu(world) == expected, mtu


def v2_index(world: World, name: str = "compute-01") -> int | None:
    gids = parse("show_gids", sh(world, name, "show_gids").stdout)["gids"]
    return next((g["index"] for g in gids if g["ver"] == "v2" and g["ipv4"]), None)


def test_show_gids_is_tab_separated_and_the_v2_index_moves():
    world = scenarios.healthy(2)
    out = sh(world, "compute-01", "show_gids").stdout
    assert out.startswith("DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n")
    assert "mlx5_0\t1\t3\t0000:0000:0000:0000:0000:ffff:c0a8:640b\t192.168.100.11  \tv2\tens256\n" in out
    assert out.endswith("\n\nn_gids_found=4\n")
    assert v2_index(world) == 3
    # a second IPv6 address added now goes after the IPv4: the index stays 3 …
    assert sh(world, "compute-01", "ip addr add fe80::1:2:3:4/64 dev ens256").exit == 0
    assert v2_index(world) == 3
    # … until the next boot, when the link-local comes up before the IPv4: index 5 (the GID table follows address order)
    reboot(world, "compute-01")
    assert v2_index(world) == 5
    # NetworkManager's stable-privacy link-local does the same on a fresh guest
    world = scenarios.healthy(2)
    sh(world, "compute-02", "nmcli con mod ens256 ipv6.addr-gen-mode stable-privacy")
    reboot(world, "compute-02")
    assert v2_index(world, "compute-02") == 5 and v2_index(world, "compute-01") == 3
    # no IPv4: only the link-local pair
    sh(world, "compute-01", "ip addr del 192.168.100.11/24 dev ens256")
    assert v2_index(world) is None
    assert parse("show_gids", sh(world, "compute-01", "show_gids").stdout)["n_gids_found"] == 2


def test_ibv_devinfo_matches_the_real_layout():
    out = sh(scenarios.healthy(2), "compute-01", "ibv_devinfo").stdout
    assert out.startswith("hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t16.32.1010\n")
    assert "\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tmax_mtu:\t\t4096 (5)\n" in out
    verbose = parse("ibv_devinfo", sh(scenarios.healthy(2), "compute-01", "ibv_devinfo -v").stdout)
    gids = verbose["devices"][0]["ports"][0]["gids"]
    assert [(g["index"], g["ver"], g["ipv4"]) for g in gids][2:] == [(2, "v1", "192.168.100.11"),
                                                                       (3, "v2", "192.168.100.11")]


def test_traffic_class_echo_and_cat():
    world = scenarios.healthy(2)
    assert world.guests["compute-01"].traffic_class == 106  # the healthy lab sets DSCP 26 + ECT(0)
    world.guests["compute-01"].traffic_class = None  # a guest where nobody set it
    path = "/sys/class/infiniband/mlx5_0/tc/1/traffic_class"
    assert sh(world, "compute-01", f"cat {path}").stdout == ""
    assert sh(world, "compute-01", f"echo 106 > {path}").exit == 0
    out = sh(world, "compute-01", f"cat {path}")
    assert out.stdout == "Global tclass=106\n"
    assert parse("roce_tc_sysfs", f"# cat {path}\n{out.stdout}")["traffic_class"] == 106
    assert G.write_file(world, "compute-01", path, "abc\n") == "sh: echo: write error: Invalid argument"
    reboot(world, "compute-01")
    assert sh(world, "compute-01", f"cat {path}").stdout == ""  # sysfs does not survive a reboot


def test_rdma_cm_default_roce_tos_reads_as_the_kernel_prints_it():
    world = scenarios.healthy(2)
    assert world.guests["compute-01"].rdma_cm_tos == 106  # the healthy lab's boot hook sets it
    world.guests["compute-01"].rdma_cm_tos = None
    path = "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos"
    # nobody made /sys/kernel/config/rdma_cm/mlx5_0: the file does not exist (configfs-rdma_cm ABI)
    out = sh(world, "compute-01", f"cat {path}")
    assert out.exit == 1 and "No such file or directory" in out.stderr
    world.guests["compute-01"].rdma_cm_tos = 106
    out = sh(world, "compute-01", f"cat {path}")
    assert out.stdout == "106\n"  # cma_configfs.c: "%u\n", a decimal
    assert parse("rdma_cm_tos", f"# cat {path}\n{out.stdout}")["tos"] == 106
    reboot(world, "compute-01")
    assert sh(world, "compute-01", f"cat {path}").exit == 1  # configfs does not survive a reboot (no boot hook)


def test_non_persistent_settings_and_what_nmcli_persists():
    world = scenarios.healthy(2)
    g = world.guests["compute-01"]
    sh(world, "compute-01", "ip link set dev ens256 mtu 1500")
    sh(world, "compute-01", "cma_roce_mode -d mlx5_0 -p 1 -m 1")
    reboot(world, g.name)
    assert g.interface("ens256").mtu == 9000  # NetworkManager's profile applies at boot
    # a fresh guest: the mtu fix must be persisted to survive
    world = scenarios.healthy(2)
    g = world.guests["compute-01"]
    g.interface("ens256").mtu = 1500
    sh(world, "compute-01", "ip link set dev ens256 mtu 9000")
    reboot(world, g.name)
    assert g.interface("ens256").mtu == 1500
    assert sh(world, "compute-01", "nmcli con mod ens256 802-3-ethernet.mtu 9000 && nmcli con up ens256").exit == 0
    reboot(world, g.name)
    assert g.interface("ens256").mtu == 9000
    # rdma_cm mode comes back as v1 after a boot unless a boot hook sets it
    g.cma_persisted = False
    sh(world, "compute-01", "cma_roce_mode -d mlx5_0 -p 1 -m 2")
    reboot(world, g.name)
    assert parse("cma_roce_mode", sh(world, "compute-01", "cma_roce_mode -d mlx5_0 -p 1").stdout)["mode"] == "IB/RoCE v1"
    unit = "[Unit]\nAfter=openibd.service\n[Service]\nType=oneshot\nExecStart=/usr/sbin/cma_roce_mode -d mlx5_0 -p 1 -m 2\n"
    sh(world, "compute-01", f"printf '{unit}' > /etc/systemd/system/roce-cma.service && systemctl enable roce-cma")
    reboot(world, g.name)
    assert parse("cma_roce_mode", sh(world, "compute-01", "cma_roce_mode -d mlx5_0 -p 1").stdout)["mode"] == "RoCE v2"


def test_mlnx_qos_on_a_pf_and_on_a_vf():
    world = world_with_baremetal()
    qos = parse("mlnx_qos", sh(world, "node-01", "mlnx_qos -i ens1f0np0").stdout)
    assert qos["trust"] == "dscp" and qos["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0] and qos["dscp2prio"][26] == 3
    out = sh(world, "node-01", "mlnx_qos -i ens1f0np0 --trust pcp --pfc 0,0,0,0,0,0,0,0")
    qos = parse("mlnx_qos", out.stdout)
    assert qos["trust"] == "pcp" and qos["pfc"] == [0] * 8 and "dscp2prio" not in qos
    vf = sh(world, "compute-01", "mlnx_qos -i ens256")
    assert vf.exit == 1 and "Priority trust state is not supported" in vf.stdout and "Errno 95" in vf.stderr


def test_baremetal_mlxconfig_and_totalvfs():
    world = world_with_baremetal()
    q = parse("mlxconfig_query", sh(world, "node-01", "mlxconfig -d 0000:3b:00.0 -e query").stdout)
    params = q["devices"][0]["params"]
    assert params["SRIOV_EN"]["current"] is True and params["LINK_TYPE_P1"]["next_boot"] == "ETH"
    assert params["NUM_OF_VFS"]["next_boot"] == 8
    out = sh(world, "node-01", "mlxconfig -d 0000:3b:00.0 -y set NUM_OF_VFS=16")
    assert "Please reboot machine" in out.stdout
    after = parse("mlxconfig_query", sh(world, "node-01", "mlxconfig -d 0000:3b:00.0 -e query").stdout)
    num_vfs = after["devices"][0]["params"]["NUM_OF_VFS"]
    assert (num_vfs["default"], num_vfs["current"], num_vfs["next_boot"]) == (0, 8, 16)
    totalvfs = sh(world, "node-01", "cat /sys/class/net/ens1f0np0/device/sriov_totalvfs")
    assert parse("sriov_numvfs", totalvfs.stdout)["value"] == 8


def test_tool_presence_loop():
    world = scenarios.healthy(2)
    world.guests["compute-01"].missing_tools.add("show_gids")
    tp = parse("tool_presence", sh(world, "compute-01", tool_presence_command(GUEST_TOOLS)).stdout)
    assert tp["missing"] == ["show_gids"] and set(tp["present"]) == set(GUEST_TOOLS) - {"show_gids"}
    world.guests["compute-01"].ofed_version = None
    world.guests["compute-01"].rdma_core = True  # inbox rdma-core: verbs, no MLNX_OFED helpers
    tp = parse("tool_presence", sh(world, "compute-01", tool_presence_command(GUEST_TOOLS)).stdout)
    assert set(tp["missing"]) == {"show_gids", "ibdev2netdev", "cma_roce_mode", "ofed_info"}


# ---------------------------------------------------------------------------- perftest


def perftest(world: World, test: str, args: str, server: str = "compute-02", client: str = "compute-01",
             peer: str | None = None) -> tuple[Reply, dict]:
    started = sh(world, server, f"{test} {args}")
    assert started.exit == 0 and "Waiting for client to connect" in started.stdout
    reply = sh(world, client, f"{test} {args} {peer or server}")
    return reply, parse("perftest", reply.stdout + reply.stderr)


def large_bw(facts: dict) -> float:
    rows = [r for r in facts["rows"] if r["bytes"] >= 1 << 20]
    return sum(r["bw_avg_gbps"] for r in rows) / len(rows)


def test_ib_send_bw_reaches_line_rate_at_mtu_4096_and_falls_at_1024():
    world = scenarios.healthy(2)
    reply, f = perftest(world, "ib_send_bw", "-a -F --report_gbits -d mlx5_0")
    assert reply.exit == 0 and f["error"] is None and f["mtu"] == 4096 and f["gid_index"] == 3
    assert f["link_type"] == "Ethernet" and f["local_gid_ipv4"] == "192.168.100.11"
    assert f["remote_gid_ipv4"] == "192.168.100.12"
    assert 93 <= large_bw(f) <= 98 and f["rows"][0]["bytes"] == 2 and f["rows"][-1]["bytes"] == 8388608
    sh(world, "compute-01", "ip link set dev ens256 mtu 1500")  # the client's own netdev: active_mtu 1024
    reply, f = perftest(world, "ib_send_bw", "-a -F --report_gbits -d mlx5_0 -x 3")
    assert f["mtu"] == 1024 and 75 <= large_bw(f) < 90
    # MB/sec without --report_gbits, converted by the parser
    sh(world, "compute-01", "ip link set dev ens256 mtu 9000")
    reply, f = perftest(world, "ib_write_bw", "-s 1048576 -d mlx5_0", peer="192.168.100.12")
    assert f["unit"] == "MB/sec" and 93 <= f["rows"][0]["bw_avg_gbps"] <= 98


def test_ib_send_lat_small_messages():
    world = scenarios.healthy(2)
    reply, f = perftest(world, "ib_send_lat", "-a -F -d mlx5_0 -x 3")
    assert reply.exit == 0 and f["rows"][0]["bytes"] == 2
    assert 1.2 <= f["rows"][0]["t_typical_us"] <= 2.1
    world = world_with_baremetal()
    reply, f = perftest(world, "ib_write_lat", "-d mlx5_0", server="node-02", client="node-01")
    assert 1.2 <= f["rows"][0]["t_typical_us"] < 1.9


def test_perftest_wrong_gid_index_fails_at_rtr_and_no_server_cannot_connect():
    world = scenarios.healthy(2)
    reply, f = perftest(world, "ib_send_bw", "-d mlx5_0 -x 1")  # the link-local v2 GID
    assert reply.exit == 1 and re.match(r"Failed to modify QP \d+ to RTR", f["error"]) and not f["rows"]
    reply, f = perftest(world, "ib_send_bw", "-d mlx5_0 -x 2")  # the IPv4 GID, RoCE v1
    assert reply.exit == 1 and "RTR" in f["error"]
    reply = sh(world, "compute-01", "ib_send_bw -d mlx5_0 compute-02")  # nobody listens
    assert reply.exit == 1 and "Couldn't connect to compute-02:18515" in reply.stderr
    assert parse("perftest", reply.stderr)["error"].startswith("Couldn't connect")


def test_incast_holds_with_pfc_and_collapses_without():
    def aggregate(world: World) -> float:
        servers = [f"-d mlx5_0 -D 5 -s 1048576 --report_gbits -p {18515 + i}" for i in range(4)]
        for args in servers:
            assert sh(world, "compute-01", f"ib_write_bw {args}").exit == 0
        total = 0.0
        for i, args in enumerate(servers):
            reply = sh(world, f"compute-0{2 + i}", f"ib_write_bw {args} --tclass=104 compute-01")
            total += parse("perftest", reply.stdout)["rows"][0]["bw_avg_gbps"]
        return total

    world = scenarios.healthy(5)
    assert aggregate(world) >= 80
    cnp = sh(world, "compute-01", "cat /sys/class/infiniband/mlx5_*/ports/1/hw_counters/np_cnp_sent")
    assert parse("hw_counters", "# cat /sys/class/infiniband/mlx5_*/ports/1/hw_counters/np_cnp_sent\n"
                 + cnp.stdout)["values"][0] > 0  # ECN marked the congestion, the receiver sent CNPs
    sw = next(iter(world.switches.values()))
    for port in sw.ports:
        port.pfc_enabled = False  # half-lossless: the host pauses, the switch does not
    assert aggregate(world) < 50


# ---------------------------------------------------------------------------- MPI + UCX, and the counters


MPI = "mpirun -np 2 --host compute-01,compute-02 -x UCX_NET_DEVICES={dev} -x UCX_LOG_LEVEL=info {extra} osu_latency"


def counters(world: World, name: str) -> tuple[int, int, int]:
    files = G.files(world, name)
    xmit = int(files.get("/sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data", "0"))
    stats = parse("ethtool_stats", sh(world, name, "ethtool -S ens256").stdout)["counters"]
    return xmit, stats["tx_vport_rdma_unicast_bytes"], stats["tx_bytes"]


def mpi(world: World, dev: str = "mlx5_0:1", extra: str = "") -> dict:
    reply = sh(world, "compute-01", MPI.format(dev=dev, extra=extra))
    assert reply.exit == 0, reply.stderr
    return parse("openmpi_ucx_log", reply.stdout)


def test_mpi_uses_rc_mlx5_and_moves_the_rdma_counters():
    world = scenarios.healthy(2)
    before = counters(world, "compute-02")
    f = mpi(world)
    assert f["rdma"] is True and f["tcp"] is False and f["remote_transports"] == ["rc_mlx5"]
    assert "mlx5_0:1" in f["devices"] and f["env"]["UCX_NET_DEVICES"] == "mlx5_0:1"
    assert 1.2 <= f["osu"]["rows"][0]["value"] <= 2.1 and f["osu"]["benchmark"] == "osu_latency"
    after = counters(world, "compute-02")
    assert after[0] > before[0] and after[1] > before[1] and after[2] == before[2]


@pytest.mark.parametrize("case", ["misnamed", "no-vf", "link-local-gid", "gid-with-tcp-allowed"])
def test_mpi_falls_back_to_tcp_silently(case):
    world = scenarios.healthy(2)
    dev, extra = "mlx5_0:1", ""
    if case == "misnamed":
        dev = "mlx5_1:1"
    elif case == "no-vf":
        world.guests["compute-02"].ofed_pending = True  # its RDMA device is gone
    elif case == "link-local-gid":
        extra = "-x UCX_IB_GID_INDEX=1"
    else:
        dev, extra = "all", "-x UCX_IB_GID_INDEX=0"
    before = counters(world, "compute-01")
    f = mpi(world, dev, extra)
    assert f["rdma"] in (None, False) and not f["errors"], f
    if case == "gid-with-tcp-allowed":
        assert f["tcp"] is True and f["remote_transports"] == ["tcp"]
    if case == "misnamed":
        assert {"kind": "network device", "name": "mlx5_1:1"} in f["unavailable"]
    assert 11 <= f["osu"]["rows"][0]["value"] <= 15  # ~13 us: the TCP signature
    after = counters(world, "compute-01")
    assert after[0] == before[0] and after[1] == before[1]  # the RDMA counters did not move
    assert after[2] > before[2]  # TCP did


def test_osu_bw_over_rdma():
    world = scenarios.healthy(2)
    reply = sh(world, "compute-01", "mpirun -np 2 --host compute-01,compute-02 -x UCX_NET_DEVICES=mlx5_0:1 osu_bw")
    osu = parse("osu", reply.stdout)
    assert osu["benchmark"] == "osu_bw" and osu["rows"][-1]["unit"] == "MB/s"
    assert 11000 <= osu["rows"][-1]["value"] <= 12500


def test_a_fault_survives_a_reboot_a_persisted_fix_too():
    world = scenarios.healthy(2)
    sh(world, "compute-02", "ip -j link show")  # the guest has been seen (its state recorded) before the fault
    G.FAULTS["RW405"].apply(world, "compute-02")
    reboot(world, "compute-02")
    assert world.guests["compute-02"].interface("ens256").mtu == 1500
    sh(world, "compute-02", "ip link set dev ens256 mtu 9000")  # the fix, not persisted …
    reboot(world, "compute-02")
    assert active_mtu(world, "compute-02") == 1024  # … is gone after the boot
    sh(world, "compute-02", "ip link set dev ens256 mtu 9000 && nmcli con mod ens256 802-3-ethernet.mtu 9000")
    reboot(world, "compute-02")
    assert active_mtu(world, "compute-02") == 4096
