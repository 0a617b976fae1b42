"""`roce-wizard analyze` on hostile and broken files, as a user runs it (a process of its own).

Crafted archives (made here, in tmp_path) with members that climb out, absolute names, links, devices,
FIFOs, corrupt or non-gzip data, archives that expand past the limits (by their headers, and by a PAX
header that claims a gigabyte); a FIFO and /dev/zero as arguments; JSON nested 100,000 deep. Each is a
clear error naming the file (and the member), exit 2, no traceback, and nothing written outside the
temporary directory (TMPDIR points into tmp_path and is checked afterwards).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.unit.test_analyze import MLXCONFIG_E

CLI = [sys.executable, "-m", "roce_wizard.cli"]
MIB = 1024 * 1024


def analyze(tmp_path: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(scratch), "COLUMNS": "250"}
    return subprocess.run([*CLI, "analyze", *args], env=env, capture_output=True, text=True, timeout=timeout,
                          cwd=tmp_path)


def member(name: str, kind: bytes = tarfile.REGTYPE, data: bytes | None = None, link: str = "") -> tuple:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info, data


def make_tgz(path: Path, *members: tuple) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def assert_refused(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    err = " ".join(result.stderr.split())  # rich wraps long lines
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    for needle in needles:
        assert needle in err, (needle, result.stderr)


def nothing_left(tmp_path: Path) -> None:
    """The temporary directory is gone and nothing was written beside the archive."""
    assert list((tmp_path / "scratch").iterdir()) == []
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path / "escaped").exists()


HOSTILE = {
    "dotdot": (member("bundle/../../evil.txt", data=b"pwned\n"), "member 'bundle/../../evil.txt'", "climbs out"),
    "absolute": (member("/tmp/evil.txt", data=b"pwned\n"), "member '/tmp/evil.txt'", "absolute path"),
    "abs-symlink": (member("bundle/passwd", tarfile.SYMTYPE, link="/etc/passwd"), "member 'bundle/passwd'",
                    "symbolic link to an absolute path"),
    "escaping-symlink": (member("bundle/up", tarfile.SYMTYPE, link="../../escaped"), "member 'bundle/up'",
                         "symbolic link leaving the archive"),
    "hardlink": (member("bundle/shadow", tarfile.LNKTYPE, link="etc/shadow"), "member 'bundle/shadow'",
                 "hard link"),
    "fifo": (member("bundle/pipe", tarfile.FIFOTYPE), "member 'bundle/pipe'", "is a FIFO"),
    "chardev": (member("bundle/zero", tarfile.CHRTYPE), "member 'bundle/zero'", "character device"),
    "blockdev": (member("bundle/sda", tarfile.BLKTYPE), "member 'bundle/sda'", "block device"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_member_is_refused_with_file_and_member_named(tmp_path, case):
    hostile, *needles = HOSTILE[case]
    archive = make_tgz(tmp_path / "bundle.tar.gz", member("bundle/", tarfile.DIRTYPE),
                       member("bundle/ok.txt", data=b"hello\n"), hostile)
    result = analyze(tmp_path, str(archive))
    assert_refused(result, "bundle.tar.gz", *needles)
    nothing_left(tmp_path)


def test_corrupt_gzip_is_refused(tmp_path):
    good = make_tgz(tmp_path / "good.tar.gz", member("a.txt", data=os.urandom(64 * 1024)))
    (tmp_path / "cut.tar.gz").write_bytes(good.read_bytes()[:20_000])
    assert_refused(analyze(tmp_path, str(tmp_path / "cut.tar.gz")), "cut.tar.gz", "corrupt or truncated")
    nothing_left(tmp_path)


def test_non_gzip_file_named_tgz_is_refused(tmp_path):
    (tmp_path / "notes.tgz").write_text("these are not the bytes of an archive\n" * 40)
    assert_refused(analyze(tmp_path, str(tmp_path / "notes.tgz")), "notes.tgz", "not an archive")


def test_archive_expanding_past_the_total_limit_is_refused_before_extraction(tmp_path):
    # 40 members of 8 MiB of zeros: 320 MiB from a ~1.5 MB file, over the 256 MiB an archive may expand to
    archive = tmp_path / "bomb.tgz"
    zeros = bytes(8 * MIB)
    with open(archive, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) as gz, \
            tarfile.open(fileobj=gz, mode="w") as tar:
        for i in range(40):
            info = tarfile.TarInfo(f"b/f{i}.txt")
            info.size = len(zeros)
            tar.addfile(info, io.BytesIO(zeros))
    assert archive.stat().st_size < 4 * MIB
    assert_refused(analyze(tmp_path, str(archive)), "bomb.tgz", "expands to more than 256 MiB",
                   "refused before extraction")
    nothing_left(tmp_path)


def test_member_larger_than_a_tool_output_is_refused_from_its_header(tmp_path):
    archive = make_tgz(tmp_path / "one.tgz", member("big.txt", data=bytes(9 * MIB)))
    assert_refused(analyze(tmp_path, str(archive)), "one.tgz", "member 'big.txt'", "over the 8 MiB")
    nothing_left(tmp_path)


def test_lying_pax_header_is_refused_without_reading_it(tmp_path):
    # a PAX extended header claiming 1 GiB: tarfile reads such a header whole; the bound stops the read first
    block = tarfile.TarInfo("././@PaxHeader")
    block.type, block.size = tarfile.XHDTYPE, 1 << 30
    raw = block.tobuf(format=tarfile.USTAR_FORMAT) + bytes(4096)
    (tmp_path / "pax.tgz").write_bytes(gzip.compress(raw))
    assert_refused(analyze(tmp_path, str(tmp_path / "pax.tgz"), timeout=30), "pax.tgz", "expands to more than")
    nothing_left(tmp_path)


def test_too_many_members_are_refused(tmp_path):
    archive = tmp_path / "many.tgz"
    with tarfile.open(archive, "w:gz", compresslevel=1) as tar:
        for i in range(20_001):
            tar.addfile(tarfile.TarInfo(f"m/{i}"), io.BytesIO(b""))
    assert_refused(analyze(tmp_path, str(archive)), "many.tgz", "more than 20000 members")
    nothing_left(tmp_path)


def test_fifo_argument_is_refused_not_read_forever(tmp_path):
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    assert_refused(analyze(tmp_path, str(fifo), timeout=20), "pipe.txt", "is a FIFO", "refused")


def test_dev_zero_argument_is_refused(tmp_path):
    assert_refused(analyze(tmp_path, "/dev/zero", timeout=20), "/dev/zero", "character device", "refused")


def test_fifo_inside_a_directory_is_skipped_not_waited_on(tmp_path):
    folder = tmp_path / "outputs"
    folder.mkdir()
    os.mkfifo(folder / "pipe.txt")
    (folder / "notes.txt").write_text("nothing a tool printed\n")
    result = analyze(tmp_path, "--json", str(folder), timeout=20)
    assert result.returncode == 0, result.stderr
    assert [Path(f["path"]).name for f in json.loads(result.stdout)["files"]] == ["notes.txt"]


def test_deeply_nested_json_is_a_clear_error_not_a_traceback(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    result = analyze(tmp_path, "--json", str(deep))
    assert "Traceback" not in result.stderr and result.returncode == 0, result.stderr
    (entry,) = json.loads(result.stdout)["files"]
    assert entry["facts"] is None and "nested too deeply" in entry["error"]


def test_file_over_the_byte_bound_says_so(tmp_path):
    big = tmp_path / "huge.txt"
    big.write_bytes(b"x" * (8 * MIB + 1))
    result = analyze(tmp_path, "--json", str(big))
    (entry,) = json.loads(result.stdout)["files"]
    assert "larger than 8 MiB: reading stopped there" in entry["error"]


def test_plain_archive_with_dot_dirs_and_an_inner_symlink_is_still_read(tmp_path):
    query = MLXCONFIG_E.encode()
    archive = make_tgz(tmp_path / "snapshot.tgz", member("./", tarfile.DIRTYPE), member("./host/", tarfile.DIRTYPE),
                       member("./host/mlxconfig.txt", data=query),
                       member("./host/latest.txt", tarfile.SYMTYPE, link="mlxconfig.txt"))
    result = analyze(tmp_path, "--json", str(archive))
    assert result.returncode in (0, 1), result.stderr
    (entry,) = json.loads(result.stdout)["files"]
    assert entry["kind"] == "mlxconfig_query" and entry["findings"]
    nothing_left(tmp_path)
