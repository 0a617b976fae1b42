"""Preflight checks RW001–RW003 on recorded (and, where marked, hand-written) outputs."""

from __future__ import annotations

import pytest

from roce_wizard.model import Status, Target, TargetKind
from tests.checkcases import Case, esxi, guest, run_case

# ------------------------------------------------------------------------------------------ RW001
# `connection` is engine-made (not a tool's output): these dicts are what the engine records.


def _conn(ok: bool, kind: str | None = None, message: str = "", transport: str = "ssh", address: str = "10.0.0.21"):
    return {"connection": {"ok": ok, "error_kind": kind, "message": message, "transport": transport, "address": address}}


VCENTER = Target(name="vc-01", kind=TargetKind.VCENTER, address="vc-01.lab", port=443)
SWITCH = Target(name="leaf-01", kind=TargetKind.SWITCH, address="10.0.9.1", device_type="arista_eos")
BMC = Target(name="esx-01-idrac", kind=TargetKind.BMC, address="10.0.8.21")

RW001_ERRORS = [
    ("dns", "[Errno -2] Name or service not known", esxi(), "cannot resolve"),
    ("refused", "[Errno 111] Connect call failed ('10.0.0.21', 22)", esxi(), "refused"),
    ("timeout", "TimeoutError: connect timed out after 10 s", guest(), "timed out"),
    ("unreachable", "[Errno 113] No route to host", guest(kind=TargetKind.LINUX), "no route"),
    ("auth", "Permission denied for user root", guest(), "authentication failed"),
    ("hostkey_unknown", "Host key is not trusted for host 10.0.0.21", esxi(), "unknown"),
    ("hostkey_changed", "Host key for 10.0.0.21 does not match the known_hosts entry", esxi(), "CHANGED"),
    ("protocol", "Invalid SSH identification string", SWITCH, "does not speak"),
]

CASES: list[Case] = [
    Case("RW001", "ssh-ok", Status.PASS, facts=_conn(True), target=esxi(), summary_has="connected"),
    Case("RW001", "vcenter-ok", Status.PASS, facts=_conn(True, transport="vsphere", address="vc-01.lab"),
         target=VCENTER),
    Case("RW001", "bmc-timeout", Status.ERROR, facts=_conn(False, "timeout", "ReadTimeout", "redfish", "10.0.8.21"),
         target=BMC, summary_has="timed out"),
    *[Case("RW001", f"error-{kind}", Status.ERROR, facts=_conn(False, kind, msg), target=tgt, summary_has=has)
      for kind, msg, tgt, has in RW001_ERRORS],
    # issue 11 item 12: the ledger says this tool powered the guest's VM off (vm_restore.vm_power_facts)
    Case("RW001", "vm-powered-off-by-roce-wizard", Status.ERROR,
         facts={**_conn(False, "refused", "[Errno 111] Connect call failed"),
                "tool_vm_power": {"vm": "compute-01", "state": "off", "by": "roce-wizard",
                                  "since": "2026-11-26 12:00:01", "host": "esx-01", "run": "20261126-120000-abcdef"}},
         target=guest(), summary_has="its VM compute-01 is powered off (by roce-wizard at 2026-11-26 12:00:01"),
]

# ------------------------------------------------------------------------------------------ RW002
# tool_presence is our own probe (probes.tool_presence_command); outputs hand-written in its format.

GUEST_ALL = """\
present ibv_devinfo /usr/bin/ibv_devinfo
present rdma /usr/sbin/rdma
present ip /usr/sbin/ip
present ethtool /usr/sbin/ethtool
present show_gids /usr/sbin/show_gids
present ibdev2netdev /usr/bin/ibdev2netdev
present cma_roce_mode /usr/sbin/cma_roce_mode
present ofed_info /usr/bin/ofed_info
"""
GUEST_INBOX = """\
present ibv_devinfo /usr/bin/ibv_devinfo
present rdma /usr/sbin/rdma
present ip /usr/sbin/ip
present ethtool /usr/sbin/ethtool
missing show_gids
missing ibdev2netdev
missing cma_roce_mode
missing ofed_info
"""
GUEST_INBOX_MLNX_TOOLS = GUEST_INBOX.replace("missing show_gids", "present show_gids /usr/sbin/show_gids").replace(
    "missing ibdev2netdev", "present ibdev2netdev /usr/bin/ibdev2netdev").replace(
    "missing cma_roce_mode", "present cma_roce_mode /usr/sbin/cma_roce_mode")
GUEST_NOTHING = """\
missing ibv_devinfo
missing rdma
present ip /usr/sbin/ip
present ethtool /usr/sbin/ethtool
missing show_gids
missing ibdev2netdev
missing cma_roce_mode
missing ofed_info
"""
LINUX_NO_QOS = GUEST_ALL + "missing mlnx_qos\nmissing mlxconfig\nmissing mst\n"
ESXI_ALL = """\
present /opt/mellanox/bin/mst /opt/mellanox/bin/mst
present /opt/mellanox/bin/mlxconfig /opt/mellanox/bin/mlxconfig
present /opt/mellanox/bin/mlxfwmanager /opt/mellanox/bin/mlxfwmanager
present /opt/mellanox/bin/flint /opt/mellanox/bin/flint
"""
ESXI_NO_MFT = """\
missing /opt/mellanox/bin/mst
missing /opt/mellanox/bin/mlxconfig
missing /opt/mellanox/bin/mlxfwmanager
missing /opt/mellanox/bin/flint
"""

CASES += [
    Case("RW002", "guest-all", Status.PASS, {"tool_presence": GUEST_ALL}, target=guest()),
    Case("RW002", "guest-inbox-mlnx-tools", Status.PASS, {"tool_presence": GUEST_INBOX_MLNX_TOOLS}, target=guest(),
         summary_has="inbox"),
    Case("RW002", "esxi-all", Status.PASS, {"tool_presence": ESXI_ALL}, target=esxi()),
    Case("RW002", "esxi-no-mft", Status.FAIL, {"tool_presence": ESXI_NO_MFT}, target=esxi(), summary_has="MFT"),
    Case("RW002", "esxi-no-mft-analyze", Status.FAIL, {"tool_presence": ESXI_NO_MFT}, summary_has="nmst"),
    Case("RW002", "guest-no-verbs", Status.FAIL, {"tool_presence": GUEST_NOTHING}, target=guest(),
         summary_has="ibv_devinfo"),
    Case("RW002", "linux-no-mlnx-qos", Status.FAIL, {"tool_presence": LINUX_NO_QOS},
         target=guest(kind=TargetKind.LINUX), summary_has="mlnx_qos"),
    # show_gids / cma_roce_mode missing is no finding (RW407/RW408 read sysfs/configfs); ibdev2netdev still is
    Case("RW002", "guest-inbox-helpers-missing", Status.WARN, {"tool_presence": GUEST_INBOX}, target=guest(),
         summary_has="ibdev2netdev"),
    Case("RW002", "guest-inbox-with-ibdev2netdev", Status.PASS,
         {"tool_presence": GUEST_INBOX.replace("missing ibdev2netdev", "present ibdev2netdev /usr/bin/ibdev2netdev")},
         target=guest(), summary_has="read from sysfs/configfs"),
]

# ------------------------------------------------------------------------------------------ RW003
# `esxcli system stats uptime get` prints one integer (µs); the vim-cmd excerpt and the boot_id are
# hand-written in the real formats.
HOST_SUMMARY = """\
(vim.host.Summary) {
   host = 'vim.HostSystem:ha-host',
   runtime = (vim.host.RuntimeInfo) {
      connectionState = "connected",
      powerState = "poweredOn",
      inMaintenanceMode = false,
      bootTime = "2024-03-18T09:12:44.123Z",
   },
   rebootRequired = false,
}
"""

CASES += [
    Case("RW003", "esxi-uptime", Status.PASS, {"esxi_uptime": "1813411468917\n"}, target=esxi(),
         summary_has="uptime 1813411468917"),
    Case("RW003", "esxi-uptime-and-boot-time", Status.PASS,
         {"esxi_uptime": "1813411468917\n", "esxi_host_summary": HOST_SUMMARY}, target=esxi(),
         summary_has="2024-03-18"),
    Case("RW003", "linux-boot-id", Status.PASS, {"boot_id": "8c4f2a1e-3b7d-4e59-9a0c-2f6d1b8e7a43\n"},
         target=guest(), summary_has="8c4f2a1e"),
    Case("RW003", "nothing-readable", Status.ERROR, target=guest(), summary_has="unknown"),
    Case("RW003", "boot-id-garbled", Status.ERROR, facts={"boot_id": {"boot_id": "not-a-uuid"}}, target=guest()),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case(case: Case) -> None:
    run_case(case)


def test_rw001_error_summaries_are_distinct() -> None:
    summaries = set()
    for kind, msg, tgt, _ in RW001_ERRORS:
        [finding] = run_case(Case("RW001", kind, Status.ERROR, facts=_conn(False, kind, msg), target=tgt))
        assert finding.fix, kind
        summaries.add(finding.summary)
    assert len(summaries) == len(RW001_ERRORS)


def test_rw001_hostkey_fixes() -> None:
    [unknown] = run_case(Case("RW001", "u", Status.ERROR, facts=_conn(False, "hostkey_unknown"), target=esxi()))
    assert "ssh-keyscan -p 22 10.0.0.21" in unknown.fix
    [changed] = run_case(Case("RW001", "c", Status.ERROR, facts=_conn(False, "hostkey_changed"), target=esxi()))
    assert "ssh-keygen -R" in changed.fix and "find out why" in changed.fix
    [auth] = run_case(Case("RW001", "a", Status.ERROR, facts=_conn(False, "auth"), target=esxi()))
    assert "credentials" in auth.fix or "password" in auth.fix


def test_rw001_covers_every_target_kind() -> None:
    from tests.checkcases import CATALOG

    assert set(CATALOG["RW001"].meta.target_kinds) == set(TargetKind)


def test_rw003_records_which_machine_answered() -> None:
    """Issue 11 item 11: the reboot ledger keys on the machine (SMBIOS UUID / machine-id), not the name."""
    summary = HOST_SUMMARY.replace("   runtime =", '   hardware = (vim.host.Summary.HardwareSummary) {\n'
                                   '      uuid = "4c4c4544-0052-3910-8047-B4C04F4E3732",\n   },\n   runtime =')
    [esx] = run_case(Case("RW003", "e", Status.PASS, {"esxi_uptime": "1813411468917\n", "esxi_host_summary": summary},
                          target=esxi()))
    assert esx.details["system_id"] == "uuid:4c4c4544-0052-3910-8047-b4c04f4e3732"
    [linux] = run_case(Case("RW003", "l", Status.PASS, {"boot_id": "8c4f2a1e-3b7d-4e59-9a0c-2f6d1b8e7a43\n",
                                                        "machine_id": "b08dfa6083e7567a1921a715000001fb\n"},
                            target=guest()))
    assert linux.details["system_id"] == "machine-id:b08dfa6083e7567a1921a715000001fb"
