"""The lab's BMCs: Redfish over verified TLS, iDRAC's staged BIOS settings, config jobs, resets.

Every test talks to real servers on 127.0.0.1 with httpx, trusting only the lab's CA, the way
roce-wizard's bios checks will.
"""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx
import pytest
import yaml

from roce_wizard.lab import faults, redfish, scenarios

SYS = "/redfish/v1/Systems/System.Embedded.1"
BIOS = f"{SYS}/Bios"
SETTINGS = f"{SYS}/Bios/Settings"
JOBS = "/redfish/v1/Managers/iDRAC.Embedded.1/Jobs"


@pytest.fixture
async def lab(tmp_path):
    world = scenarios.healthy(2)
    resets: list[str] = []

    def on_reset(host: str) -> None:
        resets.append(host)
        world.reboot_host(world.hosts[host])

    handle = await redfish.start_bmcs(world, tmp_path, on_reset=on_reset)
    try:
        yield world, handle, resets
    finally:
        await handle.stop()


def client(handle, host: str = "esx-01", auth: bool = True, **kw) -> httpx.AsyncClient:
    verify = ssl.create_default_context(cafile=str(handle.ca_file))
    return httpx.AsyncClient(base_url=handle.url(host), verify=verify,
                             auth=(handle.username, handle.password) if auth else None, timeout=5, **kw)


async def test_bios_attributes_over_verified_tls(lab):
    world, handle, _ = lab
    assert handle.ca_file == Path(handle.directory) / "bmc-ca.pem" and handle.ca_file.exists()
    assert oct((Path(handle.directory) / "bmc-key.pem").stat().st_mode & 0o777) == "0o600"
    assert len(set(handle.ports.values())) == 2  # one BMC, one port per server
    async with client(handle) as c:
        root = (await c.get("/redfish/v1")).json()
        assert root["Systems"]["@odata.id"] == "/redfish/v1/Systems"
        systems = (await c.get("/redfish/v1/Systems")).json()
        assert systems["Members"] == [{"@odata.id": SYS}]
        system = (await c.get(SYS)).json()
        assert system["Bios"]["@odata.id"] == BIOS and system["HostName"] == "esx-01"
        assert system["PowerState"] == "On"
        r = await c.get(BIOS)
        assert r.status_code == 200
        bios = r.json()
        attrs = bios["Attributes"]
        assert attrs["ProcVirtualization"] == "Enabled"
        assert attrs["SriovGlobalEnable"] == "Enabled"
        assert attrs["SysProfile"] == "PerfPerWattOptimizedOs"
        assert attrs["ProcPwrPerf"] == "OsDbpm"  # what the profile dictates
        assert {"LogicalProc", "MemTest", "BootMode", "SystemServiceTag"} <= set(attrs)
        assert bios["@Redfish.Settings"]["SettingsObject"]["@odata.id"] == SETTINGS
        registry = (await c.get(f"{BIOS}/BiosRegistry")).json()
        entry = next(a for a in registry["RegistryEntries"]["Attributes"] if a["AttributeName"] == "SysProfile")
        assert {v["ValueName"] for v in entry["Value"]} >= {"PerfPerWattOptimizedOs", "PerfPerWattOptimizedDapc"}
    async with client(handle, "esx-02") as c:  # the other server's BMC shows the other host
        assert (await c.get(SYS)).json()["HostName"] == "esx-02"


async def test_untrusted_certificate_is_refused(lab):
    _, handle, _ = lab
    async with httpx.AsyncClient(auth=(handle.username, handle.password), timeout=5) as c:  # system CAs only
        with pytest.raises(httpx.ConnectError) as err:
            await c.get(handle.url("esx-01") + BIOS)
    assert "CERTIFICATE_VERIFY_FAILED" in str(err.value)


async def test_authentication_required(lab):
    _, handle, _ = lab
    async with client(handle, auth=False) as c:
        assert (await c.get("/redfish/v1")).status_code == 200  # the service root is public
        r = await c.get(BIOS)
        assert r.status_code == 401
        assert r.json()["error"]["@Message.ExtendedInfo"][0]["MessageId"].endswith("NoValidSession")
        assert (await c.get(BIOS, auth=(handle.username, "wrong"))).status_code == 401
        bad = await c.post("/redfish/v1/SessionService/Sessions", json={"UserName": "root", "Password": "x"})
        assert bad.status_code == 401
        login = await c.post("/redfish/v1/SessionService/Sessions",
                             json={"UserName": handle.username, "Password": handle.password})
        assert login.status_code == 201
        token = login.headers["X-Auth-Token"]
        assert login.headers["Location"].startswith("/redfish/v1/SessionService/Sessions/")
        assert (await c.get(BIOS, headers={"X-Auth-Token": token})).status_code == 200
        assert (await c.delete(login.headers["Location"], headers={"X-Auth-Token": token})).status_code == 200
        assert (await c.get(BIOS, headers={"X-Auth-Token": token})).status_code == 401


async def test_staged_settings_apply_with_a_job_at_the_next_reboot(lab):
    world, handle, _ = lab
    host = world.hosts["esx-01"]
    async with client(handle) as c:
        r = await c.patch(SETTINGS, json={"Attributes": {"SriovGlobalEnable": "Disabled", "MemTest": "Enabled"}})
        assert r.status_code == 200, r.text
        assert (await c.get(BIOS)).json()["Attributes"]["SriovGlobalEnable"] == "Enabled"  # still the old value
        assert (await c.get(SETTINGS)).json()["Attributes"] == {"SriovGlobalEnable": "Disabled", "MemTest": "Enabled"}

        world.reboot_host(host)  # iDRAC: without a config job a reboot applies nothing
        assert host.bios["SriovGlobalEnable"] == "Enabled"
        assert (await c.get(SETTINGS)).json()["Attributes"]["SriovGlobalEnable"] == "Disabled"

        job = await c.post(JOBS, json={"TargetSettingsURI": SETTINGS})
        assert job.status_code == 200, job.text
        location = job.headers["Location"]
        assert location.startswith(f"{JOBS}/JID_") and len(location.rsplit("/", 1)[1]) == 16
        status = (await c.get(location)).json()
        assert (status["JobState"], status["Message"]) == ("Scheduled", "Task successfully scheduled.")
        assert host.bios_pending == {"SriovGlobalEnable": "Disabled", "MemTest": "Enabled"}
        assert host.reboot_required()

        # committed values: no more PATCHes or jobs until the job ran (iDRAC SYS011)
        again = await c.patch(SETTINGS, json={"Attributes": {"LogicalProc": "Disabled"}})
        assert again.status_code == 400
        assert again.json()["error"]["@Message.ExtendedInfo"][0]["MessageId"].endswith("SYS011")
        assert (await c.post(JOBS, json={"TargetSettingsURI": SETTINGS})).status_code == 400

        world.reboot_host(host)
        assert (await c.get(BIOS)).json()["Attributes"]["SriovGlobalEnable"] == "Disabled"
        done = (await c.get(location)).json()
        assert (done["JobState"], done["PercentComplete"], done["Message"]) == (
            "Completed", 100, "Job completed successfully.")
        assert (await c.get(SETTINGS)).json()["Attributes"] == {}
        assert world.vf_count(host, host.vmnics[2]) == 0  # the world follows the BIOS
        listed = (await c.get(JOBS)).json()["Members"]
        assert {"@odata.id": location} in listed


async def test_apply_time_on_reset_creates_the_job_and_delete_abandons_it(lab):
    world, handle, _ = lab
    host = world.hosts["esx-02"]
    async with client(handle, "esx-02") as c:
        r = await c.patch(SETTINGS, json={"@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"},
                                          "Attributes": {"SysProfile": "PerfOptimized"}})
        assert r.status_code == 202 and r.headers["Location"].startswith(f"{JOBS}/JID_")
        assert host.bios_pending == {"SysProfile": "PerfOptimized"}
        assert (await c.delete(r.headers["Location"])).status_code == 200
        assert host.bios_pending == {} and (await c.get(SETTINGS)).json()["Attributes"] == {}
        world.reboot_host(host)
        assert (await c.get(BIOS)).json()["Attributes"]["SysProfile"] == "PerfPerWattOptimizedOs"


async def test_bad_attributes_are_refused_with_redfish_messages(lab):
    world, handle, _ = lab
    async with client(handle) as c:
        r = await c.patch(SETTINGS, json={"Attributes": {"ProcVirtualization": "On", "MemTest": "Enabled"}})
        assert r.status_code == 400
        info = r.json()["error"]["@Message.ExtendedInfo"]
        assert [m["MessageId"] for m in info] == ["IDRAC.2.8.SYS409"]
        assert info[0]["RelatedProperties"] == ["ProcVirtualization"] and info[0]["Message"]
        r = await c.patch(SETTINGS, json={"Attributes": {"ProcVtd": "Enabled"}})
        assert r.status_code == 400
        assert r.json()["error"]["@Message.ExtendedInfo"][0]["MessageId"] == "Base.1.12.PropertyUnknown"
        r = await c.patch(SETTINGS, json={"Attributes": {"ProcCStates": "Disabled"}})  # SysProfile decides it
        assert r.json()["error"]["@Message.ExtendedInfo"][0]["MessageId"] == "Base.1.12.PropertyNotWritable"
        r = await c.patch(SETTINGS, json={"Attributes": {"SysProfile": "Custom", "ProcCStates": "Disabled"}})
        assert r.status_code == 200
        r = await c.patch(SETTINGS, json={"Attributes": {"AcPwrRcvryUserDelay": "90"}})
        assert r.json()["error"]["@Message.ExtendedInfo"][0]["MessageId"] == "Base.1.12.PropertyValueTypeError"
        r = await c.patch(SETTINGS, content=b"{not json", headers={"Content-Type": "application/json"})
        assert r.status_code == 400
        assert (await c.patch(BIOS, json={"Attributes": {}})).status_code == 405
        assert (await c.get(f"{SYS}/Nope")).status_code == 404
        # only the good request was staged; nothing reached the world
        assert (await c.get(SETTINGS)).json()["Attributes"] == {"SysProfile": "Custom", "ProcCStates": "Disabled"}
    assert world.hosts["esx-01"].bios_pending == {}


async def test_reset_action_calls_on_reset(lab):
    world, handle, resets = lab
    boots = world.hosts["esx-02"].boot_count
    async with client(handle, "esx-02") as c:
        system = (await c.get(SYS)).json()
        action = system["Actions"]["#ComputerSystem.Reset"]
        assert "GracefulRestart" in action["ResetType@Redfish.AllowableValues"]
        r = await c.post(action["target"], json={"ResetType": "GracefulRestart"})
        assert r.status_code == 204
        r = await c.post(action["target"], json={"ResetType": "Reboot"})
        assert r.status_code == 400
    assert resets == ["esx-02"] and handle.resets == ["esx-02"]
    assert world.hosts["esx-02"].boot_count == boots + 1


async def test_faults_change_what_the_bmc_shows(tmp_path):
    table = faults.registry()
    assert {c for c, f in table.items() if f.kind == "bmc"} == {"RW101", "RW102", "RW103", "RW104"}
    world = scenarios.healthy(2)
    assert faults.inject(world, "RW103") == ("RW103", "bmc-esx-02")
    faults.inject(world, "RW101@bmc-esx-01")
    host = world.hosts["esx-02"]
    assert all(world.vf_count(host, n) == 0 for n in host.vmnics)
    assert not world.guest_rdma(world.guests["compute-02"]) and world.guest_rdma(world.guests["compute-01"])
    async with await redfish.start_bmcs(world, tmp_path) as handle:
        async with client(handle) as c:
            assert (await c.get(BIOS)).json()["Attributes"]["ProcVirtualization"] == "Disabled"
        async with client(handle, "esx-02") as c:
            assert (await c.get(BIOS)).json()["Attributes"]["SriovGlobalEnable"] == "Disabled"
        faults.inject(world, "RW104@bmc-esx-01")  # faults injected into a running lab show at once
        async with client(handle) as c:
            attrs = (await c.get(BIOS)).json()["Attributes"]
            assert (attrs["SysProfile"], attrs["ProcPwrPerf"]) == ("PerfPerWattOptimizedDapc", "SysDbpm")


async def test_hpe_server_for_rw102(tmp_path):
    world = scenarios.healthy(2)
    faults.inject(world, "RW102@bmc-esx-02")
    host = world.hosts["esx-02"]
    async with await redfish.start_bmcs(world, tmp_path) as handle:
        async with client(handle, "esx-02") as c:
            system = (await c.get("/redfish/v1/Systems/1/")).json()
            assert system["Manufacturer"] == "HPE"
            bios_url = system["Bios"]["@odata.id"]
            assert bios_url == "/redfish/v1/Systems/1/Bios/"
            bios = (await c.get(bios_url)).json()
            attrs = bios["Attributes"]
            assert (attrs["ProcVirtualization"], attrs["IntelProcVtd"], attrs["Sriov"]) == (
                "Enabled", "Disabled", "Enabled")
            assert attrs["PowerRegulator"] == "OsControl"  # HPE's word for the OS-controlled profile
            settings = bios["@Redfish.Settings"]["SettingsObject"]["@odata.id"]
            r = await c.patch(settings, json={"Attributes": {"IntelProcVtd": "Enabled", "Sriov": "Disabled"}})
            assert r.status_code == 200
            assert r.json()["error"]["@Message.ExtendedInfo"][0]["MessageId"].endswith("SystemResetRequired")
            assert (await c.get(bios_url)).json()["Attributes"]["IntelProcVtd"] == "Disabled"
            assert (await c.get(settings)).json()["Attributes"]["IntelProcVtd"] == "Enabled"
            world.reboot_host(host)  # iLO: no job, the next reboot applies it
            attrs = (await c.get(bios_url)).json()["Attributes"]
            assert (attrs["IntelProcVtd"], attrs["Sriov"]) == ("Enabled", "Disabled")
            assert host.bios["SriovGlobalEnable"] == "Disabled"  # the world's (Dell) name for it
            assert (await c.post("/redfish/v1/Managers/1/Jobs", json={})).status_code == 404
        async with client(handle, "esx-01") as c:  # the other server is still a Dell
            assert (await c.get(BIOS)).status_code == 200


async def test_inventory_entry_loads(tmp_path, monkeypatch):
    from roce_wizard.inventory import load_inventory

    entry = redfish.inventory_entry("esx-01", 4443, tmp_path / "bmc-ca.pem", "LAB_BMC_PASSWORD")
    assert entry == {"name": "bmc-esx-01", "address": "127.0.0.1", "port": 4443, "host": "esx-01",
                     "username": "root", "password": {"env": "LAB_BMC_PASSWORD"},
                     "options": {"ca_file": str(tmp_path / "bmc-ca.pem")}}
    path = tmp_path / "inventory.yaml"
    path.write_text(yaml.safe_dump({"targets": {"esxi": [{"name": "esx-01", "address": "127.0.0.1"}],
                                                "bmc": [entry]}}))
    inv = load_inventory(path)
    bmc = inv.get("bmc-esx-01")
    assert (bmc.host, bmc.port, bmc.options["ca_file"]) == ("esx-01", 4443, str(tmp_path / "bmc-ca.pem"))
    assert bmc.credentials.password.name == "LAB_BMC_PASSWORD"


async def test_lab_runtime_serves_the_bmcs(tmp_path):
    import asyncio

    from roce_wizard.lab.server import Lab

    world = scenarios.healthy(1)
    world.reboot_delay_s = 0.1
    async with await Lab.start(world, tmp_path, services=("roce_wizard.lab.redfish",)) as lab:
        entries = lab.inventory["targets"]["bmc"]
        assert [(e["name"], e["host"]) for e in entries] == [("bmc-esx-01", "esx-01")]
        from roce_wizard.lab.server import read_env  # noqa: PLC0415

        assert oct((tmp_path / "lab.env").stat().st_mode & 0o777) == "0o600"
        password = read_env(tmp_path)["ROCE_LAB_BMC_PASSWORD"]
        verify = ssl.create_default_context(cafile=entries[0]["options"]["ca_file"])
        async with httpx.AsyncClient(base_url=f"https://127.0.0.1:{entries[0]['port']}", verify=verify,
                                     auth=("root", password), timeout=5) as c:
            r = await c.patch(SETTINGS, json={"@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"},
                                              "Attributes": {"MemTest": "Enabled"}})
            job = r.headers["Location"]
            assert (await c.post(f"{SYS}/Actions/ComputerSystem.Reset",
                                 json={"ResetType": "ForceRestart"})).status_code == 204
            for _ in range(100):  # lab.reboot: down for reboot_delay_s, then the world's reboot
                if lab.world.hosts["esx-01"].boot_count == 2:
                    break
                await asyncio.sleep(0.02)
            assert (await c.get(job)).json()["JobState"] == "Completed"
            assert (await c.get(BIOS)).json()["Attributes"]["MemTest"] == "Enabled"
            row = next(r for r in lab.status()["targets"] if r["name"] == "bmc-esx-01")
            assert (row["kind"], row["state"], row["port"]) == ("bmc", "up", entries[0]["port"])
            await lab.reset(scenarios.healthy(1))  # a swapped-in world: the BMC shows it
            assert (await c.get(BIOS)).json()["Attributes"]["MemTest"] == "Disabled"
            assert (await c.get(JOBS)).json()["Members"] == []
