"""Item 5 of issue 12: inbox rdma-core hosts (no MLNX_OFED show_gids / cma_roce_mode) give RW407/RW408 the same
facts from the kernel's files. Formats: Linux Documentation/ABI/stable/sysfs-class-infiniband (gids/<i>,
gid_attrs/types/<i> "IB/RoCE v1" | "RoCE v2", gid_attrs/ndevs/<i>), EINVAL on an unused entry's type/netdev
(UCX PR openucx/ucx#11237), Documentation/ABI/testing/configfs-rdma_cm (default_roce_mode, the group made by
mkdir). GNU grep 3.8's `-H` prints `path:line` and `grep: path: <strerror>` (checked against /usr/bin/grep)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from roce_wizard.lab import scenarios
from roce_wizard.lab.guest import rdma_sysfs
from roce_wizard.model import Status
from roce_wizard.parsers import PARSERS
from roce_wizard.probes import PROBES, SYSFS_GIDS
from tests.fixkit import run, run_line, statuses, target_for

GUEST = "compute-01"

# HAND-WRITTEN in the documented formats (no raw paste of this grep was found): an mlx5 port with a link-local
# GID (v1, v2), the IPv4 GID (v1, v2), then unused entries 4 and 5 (zeros; type/netdev EINVAL).
GREP = """\
/sys/class/infiniband/mlx5_0/ports/1/gids/0:fe80:0000:0000:0000:0250:56ff:fea1:0102
/sys/class/infiniband/mlx5_0/ports/1/gids/1:fe80:0000:0000:0000:0250:56ff:fea1:0102
/sys/class/infiniband/mlx5_0/ports/1/gids/2:0000:0000:0000:0000:0000:ffff:c0a8:640b
/sys/class/infiniband/mlx5_0/ports/1/gids/3:0000:0000:0000:0000:0000:ffff:c0a8:640b
/sys/class/infiniband/mlx5_0/ports/1/gids/4:0000:0000:0000:0000:0000:0000:0000:0000
/sys/class/infiniband/mlx5_0/ports/1/gids/5:0000:0000:0000:0000:0000:0000:0000:0000
/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/0:IB/RoCE v1
/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/1:RoCE v2
/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/2:IB/RoCE v1
/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/3:RoCE v2
/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0:ens256
/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/1:ens256
/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/2:ens256
/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/3:ens256
grep: /sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/4: Invalid argument
grep: /sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/5: Invalid argument
grep: /sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/4: Invalid argument
grep: /sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/5: Invalid argument
"""


def test_sysfs_gids_give_show_gids_facts():
    facts = PARSERS["show_gids"].parse(GREP)
    assert facts["source"] == "sysfs"
    assert [(g["index"], g["ver"], g["ipv4"], g["netdev"]) for g in facts["gids"]] == [
        (0, "v1", None, "ens256"), (1, "v2", None, "ens256"), (2, "v1", "192.168.100.11", "ens256"),
        (3, "v2", "192.168.100.11", "ens256")]  # the unused 4 and 5 are not GIDs
    assert PARSERS["show_gids"].sniff(GREP) >= 90


def test_configfs_mode_and_a_missing_group():
    read = PARSERS["cma_roce_mode"].parse(
        "$ cat /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode\nRoCE v2\n")
    assert (read["mode"], read["device"], read["port"], read["source"]) == ("RoCE v2", "mlx5_0", 1, "configfs")
    gone = PARSERS["cma_roce_mode"].parse(
        "cat: /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode: No such file or directory\n")
    assert gone["mode"] is None and gone["configfs_missing"] is True


@pytest.mark.skipif(shutil.which("grep") is None, reason="no grep binary")
def test_real_grep_h_prints_the_formats_the_parser_reads(tmp_path):
    """GNU grep's own -H output: `path:line` for a hit, `grep: path: <strerror>` for a read error."""
    (tmp_path / "gids").mkdir()
    (tmp_path / "gids" / "0").write_text("fe80:0000:0000:0000:0250:56ff:fea1:0102\n")
    out = subprocess.run(["grep", "-H", ".", str(tmp_path / "gids" / "0"), str(tmp_path)], capture_output=True,
                         text=True, check=False)
    assert out.stdout == f"{tmp_path}/gids/0:fe80:0000:0000:0000:0250:56ff:fea1:0102\n"
    assert out.stderr == f"grep: {tmp_path}: Is a directory\n" and out.returncode == 2


def test_probes_read_the_kernel_files_when_the_tools_are_missing():
    world = scenarios.healthy()
    target = target_for(world, GUEST)
    inbox = {"tool_presence": {"present": {}, "missing": ["show_gids", "cma_roce_mode"]},
             "rdma_link": {"links": [{"dev": "mlx5_0", "port": 1, "netdev": target.roce.netdev}]}}
    assert PROBES["show_gids"].command(target, inbox) == f"grep -H . {SYSFS_GIDS}"
    assert PROBES["cma_roce_mode"].command(target, inbox) == (
        "cat /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode")  # read-only: no mkdir
    assert PROBES["show_gids"].command(target, {}) == "show_gids"


def test_lab_inbox_guest_judged_from_sysfs_and_configfs():
    world = scenarios.healthy()
    rdma_sysfs.make_inbox(world.guests[GUEST], configfs_group="mlx5_0")  # a boot hook made the group
    assert run_line(world, GUEST, "show_gids").exit_status == 127
    report = run(world, GUEST, ["RW002", "RW407", "RW408"])
    by = {f.check: f for f in report.findings}
    assert by["RW407"].status is Status.PASS and "3" in by["RW407"].summary, by["RW407"].summary
    assert by["RW408"].status is Status.PASS, by["RW408"].summary
    assert report.runs[0].facts.data["show_gids"]["source"] == "sysfs"
    commands = report.runs[0].facts.commands
    assert commands["cma_roce_mode"] == "cat /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode"


def test_lab_inbox_guest_without_the_configfs_group_cannot_tell_and_says_why():
    world = scenarios.healthy()
    rdma_sysfs.make_inbox(world.guests[GUEST])
    report = run(world, GUEST, ["RW408"])
    (finding,) = [f for f in report.findings if f.check == "RW408"]
    assert finding.status is Status.SKIP and "mkdir /sys/kernel/config/rdma_cm/mlx5_0" in finding.summary
    assert "default_roce_mode" not in "".join(world.guests[GUEST].rdma_cm_groups)  # nothing was created
    assert run_line(world, GUEST, "ls /sys/kernel/config/rdma_cm/mlx5_0").exit_status != 0


def test_a_configfs_group_made_before_the_last_boot_is_gone():
    world = scenarios.healthy()
    guest = world.guests[GUEST]
    rdma_sysfs.make_inbox(guest, configfs_group="mlx5_0")
    assert statuses(world, GUEST, "RW408") == {Status.PASS}
    world.reboot_guest(guest)
    assert statuses(world, GUEST, "RW408") == {Status.SKIP}
