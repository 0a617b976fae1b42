"""The lab builds a target's virtual files only for a command line that uses them (issue 16, item 4), and
answers exactly what it answered when it built them before every line: the same replies as the eager
reference (tests/fixkit.run_line, which builds them up front) on a real running lab, after a fault, a fix
written through sysfs and a reboot."""

from __future__ import annotations

import pytest

from roce_wizard.lab import guest as lab_guest
from roce_wizard.lab.scenarios import healthy
from roce_wizard.lab.server import Lab
from roce_wizard.lab.server.endpoints import Device, _device_for
from roce_wizard.lab.server.lazy import LazyFiles
from tests.fixkit import run_line

GUEST = "compute-01"
PORT = "/sys/class/infiniband/mlx5_0/ports/1"
LINES = [
    "ethtool -i ens256",
    "cat /proc/sys/kernel/random/boot_id",
    f"cat {PORT}/gids/3 {PORT}/gid_attrs/types/3 {PORT}/gid_attrs/types/200; echo rc=$?",
    "cat /sys/class/infiniband/mlx5_0/tc/1/traffic_class",
    "ls /sys/class/net; test -e /sys/class/net/ens256/mtu && echo yes",
    f"grep -H . {PORT}/counters/port_xmit_data /sys/class/net/ens256/mtu",
    "for f in /sys/class/net/*/operstate; do echo $f; done",
    "esxcli network nic list",  # not installed on a guest: the shell's own answer
]


class _Counting:
    """The real device of each kind, counting how often the lab asks for its files."""

    def __init__(self) -> None:
        self.loads = 0

    def __call__(self, kind: str) -> Device:
        real = _device_for(kind)
        files, errors = real.files, real.file_errors

        def counted_files(world, name):
            self.loads += 1
            return files(world, name)

        def counted_errors(world, name):
            self.loads += 1
            return errors(world, name)

        return Device(real.programs, counted_files if files else None, real.write_file,
                      counted_errors if errors else None)


@pytest.fixture
async def lab(tmp_path):
    counting = _Counting()
    lab = await Lab.start(healthy(1), tmp_path / "lab", devices=counting, services=())
    lab.counting = counting  # type: ignore[attr-defined]
    yield lab
    await lab.stop()


def _same_as_eager(lab: Lab) -> None:
    for line in LINES:
        got = lab.run_command(GUEST, line)
        want = run_line(lab.world, GUEST, line)
        assert (got.stdout, got.stderr, got.exit) == (want.stdout, want.stderr, want.exit_status), line


async def test_a_line_that_reads_no_file_builds_none(lab):
    assert lab.run_command(GUEST, "ethtool -i ens256").exit == 0
    assert lab.run_command("esx-01", "esxcli network nic list").exit == 0
    assert lab.counting.loads == 0
    assert lab.run_command(GUEST, "cat /sys/class/net/ens256/mtu").stdout == "9000\n"
    assert lab.counting.loads == 2  # `cat` looks the path up in both: the unreadable ones, then the files


async def test_answers_match_the_eager_lab_after_faults_fixes_and_reboots(lab):
    _same_as_eager(lab)
    await lab.inject(f"RW003@{GUEST}")  # boot_id unreadable
    assert "Permission denied" in lab.run_command(GUEST, "cat /proc/sys/kernel/random/boot_id").stderr
    _same_as_eager(lab)
    fix = lab.run_command(GUEST, "echo 42 > /sys/class/infiniband/mlx5_0/tc/1/traffic_class; "
                                 "cat /sys/class/infiniband/mlx5_0/tc/1/traffic_class")
    assert fix.stdout == "Global tclass=42\n", fix
    _same_as_eager(lab)
    guest = lab.world.guests[GUEST]
    before = guest.boot_id
    lab.world.reboot_guest(guest)
    assert guest.boot_id != before
    _same_as_eager(lab)


async def test_a_file_read_after_a_program_changed_it_in_the_same_line_shows_the_change(lab):
    """The one answer that changed (lazy.py): the files are built at the line's first lookup, so a program's
    change earlier in the line shows, as on a real machine (the lab used to answer 9000 here)."""
    line = "ip link set dev ens256 mtu 4000; cat /sys/class/net/ens256/mtu"
    assert lab.run_command(GUEST, line).stdout == "4000\n"


def test_lazy_files_is_a_mapping_that_loads_once():
    calls = []
    files = LazyFiles(lambda: calls.append(1) or {"/a": "1\n"})
    assert not files.loaded and calls == []
    assert "/a" in files and files["/a"] == "1\n" and files.get("/b", "x") == "x" and len(files) == 1
    files["/b"] = "2\n"
    assert sorted(files) == ["/a", "/b"] and calls == [1]
    files.clear()
    files.update({"/c": "3\n"})
    assert dict(files) == {"/c": "3\n"} and calls == [1]
    assert LazyFiles(lambda: {"/x": ""}).get("/x") == ""
    assert lab_guest.files  # the guest device still has files (the counting test would prove nothing otherwise)


TREE_LINES = [
    *LINES,
    "for p in 1 2; do nohup sleep 0.01 </dev/null >/tmp/s$p.log 2>&1 & done; wait; cat /tmp/s2.log",
    'x=$(cat /etc/hostname); if [ -n "$x" ]; then echo "${x:-none}" | tee /tmp/h; else echo no; fi',
    "i=0; while [ $i -lt 3 ]; do i=$((i + 1)); done; echo $i >> /tmp/i; { echo a; echo b; } | wc -l",
]


async def test_a_cached_command_tree_is_not_changed_by_running_it(lab):
    """The lab parses each distinct line once (shell/entry.py `_parsed`): running a line must leave its tree
    as a fresh parse gives it, or the next target sent the same line would run something else."""
    from roce_wizard.lab.shell import entry, parse

    entry._parsed.cache_clear()
    for line in TREE_LINES:
        first = lab.run_command(GUEST, line)
        again = lab.run_command(GUEST, line)  # from the cache
        assert (again.stdout, again.stderr, again.exit) == (first.stdout, first.stderr, first.exit), line
        assert entry._parsed(line) == parse(line), line
    assert entry._parsed.cache_info().hits >= 2 * len(TREE_LINES)
