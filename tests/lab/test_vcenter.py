"""The lab's vCenter (lab/vcsim + lab/vcenter/) read and driven the way the vsphere checks will:
pyVmomi over TLS verified against the lab's CA file, property-collector reads, tasks polled by
their state — and the World following what vCenter did, and vCenter what the World did.

The simulator is built once per session into the user's cache dir (a cold build takes about a
minute and ~1.2 GB of memory; later runs reuse the binary) and started per test (~0.2 s).
"""

from __future__ import annotations

import asyncio
import shutil
import ssl
import stat
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pyVim.connect import Disconnect, SmartConnect
from pyVmomi import vim, vmodl

from roce_wizard.lab import faults, scenarios
from roce_wizard.lab.vcenter import (
    ENV_FILE,
    FAULTS,
    PASSWORD_ENV,
    VCenterHandle,
    build_vcsim,
    go_problem,
    inventory_entry,
    start_vcenter,
)
from roce_wizard.lab.world import Vib, World

pytestmark = pytest.mark.skipif(shutil.which("go") is None,
                                reason="Go is not installed: the lab's vCenter simulator cannot be built")

PF1 = "0000:3b:00.0"
PF2 = "0000:3b:00.1"
PC = vmodl.query.PropertyCollector


@pytest.fixture(scope="session")
def vcsim_binary() -> Path:
    started = time.monotonic()
    binary = build_vcsim()
    assert binary is not None and binary.exists(), go_problem()
    print(f"\nvcsim binary {binary} ready in {time.monotonic() - started:.1f} s")
    return binary


def _world(healthy: bool = True) -> World:
    world = scenarios.healthy(2) if healthy else scenarios.fresh(2)
    world.reboot_delay_s = 0.3
    return world


@pytest_asyncio.fixture
async def vc(vcsim_binary: Path, tmp_path: Path) -> AsyncIterator[VCenterHandle]:
    handle = await start_vcenter(_world(), tmp_path, binary=vcsim_binary, poll_interval=0)
    yield handle
    await handle.stop()


def connect(handle: VCenterHandle, context: ssl.SSLContext | None = None, password: str | None = None):
    return SmartConnect(host="127.0.0.1", port=handle.port, user=handle.username, pwd=password or handle.password,
                        sslContext=context or ssl.create_default_context(cafile=str(handle.ca_file)))


def collect(si, vimtype, paths: list[str]) -> dict[str, dict[str, Any]]:
    """One RetrieveContents over a container view: {name: {path: value}}."""
    content = si.RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, [vimtype], True)
    try:
        spec = PC.FilterSpec(
            objectSet=[PC.ObjectSpec(obj=view, skip=True, selectSet=[
                PC.TraversalSpec(name="view", path="view", skip=False, type=vim.view.ContainerView)])],
            propSet=[PC.PropertySpec(type=vimtype, pathSet=["name", *paths])],
        )
        out = {}
        for obj in content.propertyCollector.RetrieveContents([spec]):
            props = {p.name: p.val for p in obj.propSet}
            out[props.pop("name")] = {"obj": obj.obj, **props}
        return out
    finally:
        view.Destroy()


def wait_task(task, timeout: float = 20) -> Any:
    """Poll the task's state (what roce-wizard does; pyVim's WaitForTask is not used)."""
    deadline = time.monotonic() + timeout
    while True:
        info = task.info
        if info.state == vim.TaskInfo.State.success:
            return info.result
        if info.state == vim.TaskInfo.State.error:
            raise info.error
        assert time.monotonic() < deadline, f"task {info.key} still {info.state}"
        time.sleep(0.05)


def sriov_info(host_props: dict[str, Any], pf: str) -> vim.host.SriovInfo:
    infos = [i for i in host_props["config.pciPassthruInfo"] if i.id == pf]
    assert len(infos) == 1 and isinstance(infos[0], vim.host.SriovInfo), infos
    return infos[0]


HOST_PATHS = ["config.pciPassthruInfo", "summary.rebootRequired", "runtime.bootTime", "runtime.connectionState",
              "runtime.inMaintenanceMode", "config.powerSystemInfo.currentPolicy", "configManager"]


def hosts(si) -> dict[str, dict[str, Any]]:
    return collect(si, vim.HostSystem, HOST_PATHS)


# ------------------------------------------------------------------------------ TLS and login


async def test_tls_is_verified_with_the_lab_ca_file(vc: VCenterHandle) -> None:
    assert vc.url == f"https://127.0.0.1:{vc.port}/sdk"
    assert len(vc.thumbprint.split(":")) == 20
    si = connect(vc)
    assert "roce-wizard lab" in si.content.about.fullName
    Disconnect(si)
    # without the lab's CA the certificate is refused: verification is never turned off
    with pytest.raises(ssl.SSLCertVerificationError, match="certificate verify failed"):
        connect(vc, context=ssl.create_default_context())
    with pytest.raises(vim.fault.InvalidLogin):
        connect(vc, password="not-the-password")
    # the inventory entry names the CA file and the password by reference only
    entry = inventory_entry(vc)
    assert entry == {"name": "vcenter", "address": "127.0.0.1", "port": vc.port, "username": vc.username,
                     "password": {"env": PASSWORD_ENV}, "options": {"ca_file": str(vc.ca_file)}}
    env = vc.directory / ENV_FILE
    assert f"{PASSWORD_ENV}={vc.password}\n" in env.read_text()
    assert stat.S_IMODE(env.stat().st_mode) == 0o600


# ------------------------------------------------------------------------------ the healthy world


async def test_healthy_world_as_the_property_collector_reads_it(vc: VCenterHandle) -> None:
    world = vc.world
    si = connect(vc)
    try:
        seen = hosts(si)
        assert sorted(seen) == ["esx-01", "esx-02"]
        managers = set()
        for name, props in seen.items():
            for pf, vfs in ((PF1, 8), (PF2, 7)):
                info = sriov_info(props, pf)
                assert (info.sriovCapable, info.sriovEnabled, info.sriovActive) == (True, True, True)
                assert info.numVirtualFunctionRequested == info.numVirtualFunction == vfs
                assert info.maxVirtualFunctionSupported == 16
            assert props["summary.rebootRequired"] is False
            assert abs(props["runtime.bootTime"].timestamp() - world.hosts[name].boot_time) < 0.01
            assert props["config.powerSystemInfo.currentPolicy"].key == 1
            cm = props["configManager"]
            managers |= {cm.pciPassthruSystem._moId, cm.powerSystem._moId}
            # the passthru system answers for its own host
            assert {i.id for i in cm.pciPassthruSystem.pciPassthruInfo} >= {PF1, PF2}
            assert cm.powerSystem.info.currentPolicy.key == 1
        assert len(managers) == 4  # per host, not shared

        switches = collect(si, vim.DistributedVirtualSwitch, ["config.maxMtu", "config.host", "portgroup"])
        assert list(switches) == ["RoCE-DVS"]
        dvs = switches["RoCE-DVS"]
        assert dvs["config.maxMtu"] == 9000
        members = {m.config.host.name: [p.pnicDevice for p in m.config.backing.pnicSpec] for m in dvs["config.host"]}
        assert members == {"esx-01": ["vmnic2", "vmnic3"], "esx-02": ["vmnic2", "vmnic3"]}
        assert "roce-pg" in {pg.name for pg in dvs["portgroup"]}
        pg_key = next(pg.key for pg in dvs["portgroup"] if pg.name == "roce-pg")

        vms = collect(si, vim.VirtualMachine, ["config.hardware.device", "config.hardware.memoryMB",
                                               "config.memoryReservationLockedToMax", "config.memoryAllocation",
                                               "config.cpuAllocation", "config.latencySensitivity", "runtime.host",
                                               "runtime.powerState"])
        assert sorted(vms) == ["compute-01", "compute-02"]
        for name, props in vms.items():
            cards = [d for d in props["config.hardware.device"] if isinstance(d, vim.vm.device.VirtualSriovEthernetCard)]
            assert len(cards) == 1
            card = cards[0]
            assert card.sriovBacking.physicalFunctionBacking.id == PF1
            assert card.sriovBacking.physicalFunctionBacking.deviceId == "1017"
            assert card.allowGuestOSMtuChange is True
            assert card.backing.port.portgroupKey == pg_key
            assert props["config.memoryReservationLockedToMax"] is True
            assert props["config.memoryAllocation"].reservation == props["config.hardware.memoryMB"] == 16384
            assert props["config.latencySensitivity"].level == "high"
            assert props["config.cpuAllocation"].reservation > 0
            assert props["runtime.host"].name == world.vms[name].host
            assert props["runtime.powerState"] == "poweredOn"
    finally:
        Disconnect(si)


# ------------------------------------------------------------------------------ SR-IOV, reboot, power


async def test_sriov_change_waits_for_a_reboot_and_the_world_follows(vc: VCenterHandle) -> None:
    world = vc.world
    si = connect(vc)
    try:
        host = hosts(si)["esx-01"]
        obj, boot_before = host["obj"], host["runtime.bootTime"]
        passthru = host["configManager"].pciPassthruSystem
        passthru.UpdatePassthruConfig([vim.host.SriovConfig(id=PF1, sriovEnabled=True, numVirtualFunction=4,
                                                            passthruEnabled=False)])
        host = hosts(si)["esx-01"]
        info = sriov_info(host, PF1)
        assert (info.numVirtualFunctionRequested, info.numVirtualFunction, info.sriovActive) == (4, 8, True)
        assert host["summary.rebootRequired"] is True
        assert hosts(si)["esx-02"]["summary.rebootRequired"] is False

        await vc.sync()
        assert world.hosts["esx-01"].sriov_config["3b:00.0"] == {"enabled": True, "requested": 4}
        assert world.hosts["esx-01"].reboot_required()

        # a bad id changes nothing
        with pytest.raises(vmodl.fault.InvalidArgument):
            passthru.UpdatePassthruConfig([vim.host.SriovConfig(id="0000:99:00.0", sriovEnabled=True,
                                                                numVirtualFunction=1, passthruEnabled=False)])
        # vCenter reboots a host only in maintenance mode (or forced)
        with pytest.raises(vim.fault.InvalidState):
            obj.RebootHost_Task(force=False)
        # compute-01 runs there and no DRS moves it: vCenter's task waits for it (vSphere API, HostSystem
        # EnterMaintenanceMode_Task), failing with the timeout fault when one was given, else running until it is off
        with pytest.raises(vim.fault.Timedout):
            wait_task(obj.EnterMaintenanceMode_Task(timeout=1))
        assert hosts(si)["esx-01"]["runtime.inMaintenanceMode"] is False
        waiting = obj.EnterMaintenanceMode_Task(timeout=0)
        await asyncio.sleep(0.3)
        assert waiting.info.state == "running"
        for vm in obj.vm:
            wait_task(vm.PowerOffVM_Task())
        wait_task(waiting)
        task = obj.RebootHost_Task(force=False)
        assert task.info.name.info.wsdlName == "RebootHost_Task"  # pyVmomi resolves the WSDL name to the method
        wait_task(task)

        await vc.sync()  # vCenter took the host down: so does the World
        assert world.hosts["esx-01"].up is False
        deadline = time.monotonic() + 10
        while (host := hosts(si)["esx-01"])["runtime.bootTime"] == boot_before:
            assert host["runtime.connectionState"] == "notResponding"
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        assert host["runtime.connectionState"] == "connected"
        assert host["runtime.inMaintenanceMode"] is True
        assert host["summary.rebootRequired"] is False
        info = sriov_info(host, PF1)
        assert (info.sriovEnabled, info.numVirtualFunctionRequested, info.numVirtualFunction, info.sriovActive) == (
            True, 4, 4, True)

        events = await vc.sync()
        assert ("booted", "esx-01") in events
        esx1 = world.hosts["esx-01"]
        assert esx1.up and esx1.boot_count == 2 and esx1.maintenance_mode
        assert esx1.sriov_config_active["3b:00.0"] == {"enabled": True, "requested": 4}
        assert abs(esx1.boot_time - host["runtime.bootTime"].timestamp()) < 0.01
        assert not esx1.reboot_required()
    finally:
        Disconnect(si)


async def test_power_policy_both_ways(vc: VCenterHandle) -> None:
    world = vc.world
    si = connect(vc)
    try:
        power = hosts(si)["esx-02"]["configManager"].powerSystem
        power.ConfigurePowerPolicy(2)
        assert hosts(si)["esx-02"]["config.powerSystemInfo.currentPolicy"].key == 2
        assert power.info.currentPolicy.shortName == "dynamic"
        await vc.sync()
        assert world.hosts["esx-02"].power_policy == "Balanced"
        assert world.hosts["esx-01"].power_policy == "High Performance"
        power.ConfigurePowerPolicy(1)
        await vc.sync()
        assert world.hosts["esx-02"].power_policy == "High Performance"
        with pytest.raises(vmodl.fault.InvalidArgument):
            power.ConfigurePowerPolicy(9)

        # the ESXi side changes it (esxcli … /Power/CpuPolicy): vCenter shows it
        world.hosts["esx-01"].power_policy = "Balanced"
        await vc.sync()
        assert hosts(si)["esx-01"]["config.powerSystemInfo.currentPolicy"].key == 2
    finally:
        Disconnect(si)


async def test_a_reboot_over_ssh_and_a_vib_install_reach_vcenter(vc: VCenterHandle) -> None:
    world = vc.world
    esx2 = world.hosts["esx-02"]
    si = connect(vc)
    try:
        esx2.vibs_installed["nmst"] = Vib("nmst", "4.20.0.1-1OEM.700.1.0.15843807", "MEL")
        await vc.sync()
        assert hosts(si)["esx-02"]["summary.rebootRequired"] is True
        esx2.up = False  # the lab's SSH `reboot`: down …
        await vc.sync()
        assert hosts(si)["esx-02"]["runtime.connectionState"] == "notResponding"
        world.reboot_host(esx2)  # … and back with a new boot
        esx2.up = True
        await vc.sync()
        host = hosts(si)["esx-02"]
        assert host["runtime.connectionState"] == "connected"
        assert host["summary.rebootRequired"] is False
        assert abs(host["runtime.bootTime"].timestamp() - esx2.boot_time) < 0.01
        state = vc.state()["hosts"]["esx-02"]
        assert state["boot_count"] == esx2.boot_count == 2
        assert await vc.sync() == []  # nothing moved since
    finally:
        Disconnect(si)


# ------------------------------------------------------------------------------ the fresh world, fixed by API


async def test_fresh_world_fixed_through_the_api(vcsim_binary: Path, tmp_path: Path) -> None:
    world = _world(healthy=False)
    vc = await start_vcenter(world, tmp_path, binary=vcsim_binary, poll_interval=0)
    si = connect(vc)
    try:
        seen = hosts(si)
        info = sriov_info(seen["esx-01"], PF1)
        assert (info.sriovCapable, info.sriovEnabled, info.numVirtualFunction, info.sriovActive) == (
            False, False, 0, False)
        assert seen["esx-01"]["config.powerSystemInfo.currentPolicy"].key == 2
        assert collect(si, vim.DistributedVirtualSwitch, []) == {}
        with pytest.raises(vmodl.fault.NotSupported):  # SR-IOV Global is off in the BIOS
            seen["esx-01"]["configManager"].pciPassthruSystem.UpdatePassthruConfig(
                [vim.host.SriovConfig(id=PF1, sriovEnabled=True, numVirtualFunction=8, passthruEnabled=False)])

        # a VDS with both hosts (pnic backing in the create spec), then a port group and MTU 9000
        content = si.RetrieveContent()
        datacenter = content.rootFolder.childEntity[0]
        members = [vim.dvs.HostMember.ConfigSpec(
            operation="add", host=seen[name]["obj"],
            backing=vim.dvs.HostMember.PnicBacking(pnicSpec=[vim.dvs.HostMember.PnicSpec(pnicDevice=n)
                                                             for n in ("vmnic2", "vmnic3")]))
            for name in ("esx-01", "esx-02")]
        create = vim.DistributedVirtualSwitch.CreateSpec(configSpec=vim.dvs.VmwareDistributedVirtualSwitch.ConfigSpec(
            name="RoCE-DVS", host=members))
        dvs = wait_task(datacenter.networkFolder.CreateDVS_Task(create))
        wait_task(dvs.AddDVPortgroup_Task([vim.dvs.DistributedVirtualPortgroup.ConfigSpec(
            name="roce-pg", type="earlyBinding", numPorts=16)]))
        wait_task(dvs.ReconfigureDvs_Task(vim.dvs.VmwareDistributedVirtualSwitch.ConfigSpec(
            configVersion=dvs.config.configVersion, maxMtu=9000)))
        assert dvs.config.maxMtu == 9000
        with pytest.raises(vim.fault.ConcurrentAccess):  # a stale configVersion is refused
            wait_task(dvs.ReconfigureDvs_Task(vim.dvs.VmwareDistributedVirtualSwitch.ConfigSpec(
                configVersion="0", maxMtu=1500)))
        pg = next(p for p in dvs.portgroup if p.name == "roce-pg")

        # a VF for compute-01: only while the VM is off
        vm = collect(si, vim.VirtualMachine, [])["compute-01"]["obj"]
        card = vim.vm.device.VirtualSriovEthernetCard(
            backing=vim.vm.device.VirtualEthernetCard.DistributedVirtualPortBackingInfo(
                port=vim.dvs.PortConnection(switchUuid=dvs.uuid, portgroupKey=pg.key)),
            sriovBacking=vim.vm.device.VirtualSriovEthernetCard.SriovBackingInfo(
                physicalFunctionBacking=vim.vm.device.VirtualPCIPassthrough.DeviceBackingInfo(id=PF1)),
            allowGuestOSMtuChange=True)
        add = vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation="add", device=card)])
        with pytest.raises(vim.fault.InvalidPowerState):
            wait_task(vm.ReconfigVM_Task(add))
        wait_task(vm.PowerOffVM_Task())
        wait_task(vm.ReconfigVM_Task(add))
        backing = next(d for d in vm.config.hardware.device
                       if isinstance(d, vim.vm.device.VirtualSriovEthernetCard)).sriovBacking.physicalFunctionBacking
        assert (backing.id, backing.deviceId, backing.vendorId) == (PF1, "1017", 0x15B3)
        # a passthrough VF needs the memory reserved, and a VF on an active PF
        with pytest.raises(vim.fault.InvalidVmConfig, match="memory reservation"):
            wait_task(vm.PowerOnVM_Task())
        wait_task(vm.ReconfigVM_Task(vim.vm.ConfigSpec(memoryReservationLockedToMax=True)))
        assert vm.config.memoryAllocation.reservation == vm.config.hardware.memoryMB
        with pytest.raises(vim.fault.InsufficientResourcesFault):
            wait_task(vm.PowerOnVM_Task())
        wait_task(vm.ReconfigVM_Task(vim.vm.ConfigSpec(
            latencySensitivity=vim.LatencySensitivity(level="high"))))

        await vc.sync()
        assert world.vcenter.dvs_name == "RoCE-DVS" and world.vcenter.portgroup == "roce-pg"
        assert world.vcenter.dvs_max_mtu == 9000
        assert world.vcenter.dvs_members == {"esx-01": ["vmnic2", "vmnic3"], "esx-02": ["vmnic2", "vmnic3"]}
        compute1 = world.vms["compute-01"]
        assert (compute1.vf_port, compute1.memory_reserved, compute1.latency_sensitivity, compute1.powered_on) == (
            1, True, "high", False)
        assert world.vms["compute-02"].vf_port is None
    finally:
        Disconnect(si)
        await vc.stop()


# ------------------------------------------------------------------------------ faults


def test_faults_are_registered_for_vcenter() -> None:
    table = faults.registry()
    assert {code for code in table if code.startswith("RW3")} == set(FAULTS) == {f"RW30{i}" for i in range(1, 8)}
    assert all(table[code].kind == "vcenter" for code in FAULTS)


async def test_each_fault_shows_in_vcenter_and_a_world_swap_follows(vc: VCenterHandle) -> None:
    """Each fault alone, on a world swapped in under the running simulator (as the lab's reset does)."""
    current = {"world": vc.world}
    vc.world_of = lambda: current["world"]
    healthy_state = vc.state()

    def differences(state: dict[str, Any]) -> set[str]:
        out = set()
        for name, h in state["hosts"].items():
            for pf, v in h["pfs"].items():
                for k in ("enabled", "requested", "num_vfs", "active"):
                    if v[k] != healthy_state["hosts"][name]["pfs"][pf][k]:
                        out.add(f"{name}.{pf}.{k}={v[k]}")
            if h["power_policy"] != healthy_state["hosts"][name]["power_policy"]:
                out.add(f"{name}.power_policy={h['power_policy']}")
        for name, v in state["vms"].items():
            for k, value in v.items():
                if value != healthy_state["vms"][name][k]:
                    out.add(f"{name}.{k}={value}")
        dvs, healthy_dvs = state["dvs"], healthy_state["dvs"]
        if dvs["max_mtu"] != healthy_dvs["max_mtu"]:
            out.add(f"dvs.max_mtu={dvs['max_mtu']}")
        if dvs["members"] != healthy_dvs["members"]:
            out.add(f"dvs.members={sorted(dvs['members'])}")
        return out

    expected = {
        "RW301": {f"esx-02.{PF1}.enabled=False", f"esx-02.{PF1}.requested=0", f"esx-02.{PF1}.num_vfs=0",
                  f"esx-02.{PF1}.active=False"},
        "RW302": {"dvs.members=['esx-01']"},
        "RW303": {"dvs.max_mtu=1500"},
        "RW304": {"compute-02.vf_pf=None"},
        "RW305": {"compute-02.memory_reserved=False"},
        "RW306": {"compute-02.latency_sensitivity=normal"},
        "RW307": {"esx-02.power_policy=Balanced"},
    }
    si = connect(vc)
    try:
        for code, diff in expected.items():
            world = _world()
            assert faults.inject(world, code) == (code, "vcenter")
            current["world"] = world
            await vc.sync()
            assert differences(vc.state()) == diff, code
            if code == "RW302":  # compute-02's VF left the VDS with its host
                vm = collect(si, vim.VirtualMachine, ["config.hardware.device"])["compute-02"]
                card = next(d for d in vm["config.hardware.device"]
                            if isinstance(d, vim.vm.device.VirtualSriovEthernetCard))
                assert isinstance(card.backing, vim.vm.device.VirtualEthernetCard.NetworkBackingInfo)
            current["world"] = _world()
            await vc.sync()
            assert differences(vc.state()) == set(), f"{code} not undone"
    finally:
        Disconnect(si)


# ------------------------------------------------------------------------------ inside the lab


async def test_the_lab_serves_vcenter_and_shares_its_reboots(vcsim_binary: Path, tmp_path: Path) -> None:
    """`Lab.start` runs `serve`: the inventory gets the vcenter target; a reboot vCenter starts goes
    through the lab's own reboot (SSH down, World.reboot_host once), and both show one boot time."""
    from roce_wizard.inventory import load_inventory
    from roce_wizard.lab.server import Lab
    from roce_wizard.model import TargetKind

    world = _world()
    lab = await Lab.start(world, tmp_path / "lab", services=("roce_wizard.lab.vcenter",))
    try:
        inventory = load_inventory(lab.directory / "inventory.yaml")
        [target] = [t for t in inventory.targets if t.kind == TargetKind.VCENTER]
        assert target.options["ca_file"] == str(lab.directory / "vcenter-ca.pem")
        assert any("vCenter: https://127.0.0.1:" in note for note in lab.notes)
        assert [row["state"] for row in lab.status()["targets"] if row["kind"] == "vcenter"] == ["up"]
        from roce_wizard.lab.server import read_env

        password = read_env(lab.directory)[PASSWORD_ENV]  # what `set -a; . DIR/lab.env` exports
        si = SmartConnect(host="127.0.0.1", port=target.port, user=target.credentials.username, pwd=password,
                          sslContext=ssl.create_default_context(cafile=target.options["ca_file"]))
        try:
            obj = hosts(si)["esx-02"]["obj"]
            [vm] = obj.vm
            wait_task(vm.PowerOffVM_Task())  # compute-02: its guest goes down with it
            wait_task(obj.EnterMaintenanceMode_Task(timeout=0))
            wait_task(obj.RebootHost_Task(force=False))
            esx2 = lab.world.hosts["esx-02"]
            deadline = time.monotonic() + 10
            while esx2.up:  # the lab's poller sees vCenter take the host down and reboots it
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
            assert lab.endpoints["esx-02"].rebooting
            while not (esx2.up and esx2.boot_count == 2 and
                       abs(hosts(si)["esx-02"]["runtime.bootTime"].timestamp() - esx2.boot_time) < 0.01):
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.6)  # a few more syncs: no second reboot on either side
            guest = lab.world.guests["compute-02"]
            assert esx2.boot_count == 2 and guest.boot_count == 1 and not guest.up  # its VM is still off
            assert hosts(si)["esx-02"]["runtime.connectionState"] == "connected"
            wait_task(obj.ExitMaintenanceMode_Task(timeout=0))
            wait_task(vm.PowerOnVM_Task())
            while not guest.up:  # powered on: the guest boots once
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
            assert guest.boot_count == 2
        finally:
            Disconnect(si)
    finally:
        await lab.stop()
