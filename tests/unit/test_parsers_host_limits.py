"""RW414 memlock (ulimit_memlock on real captures; systemd_limit_memlock per systemd.exec(5)) and RW413's
MLNX_OFED ECN sysfs (roce_ecn_sysfs per NVIDIA's ECN documentation: no public capture of the read was found,
so those inputs are hand-written in the documented `cat`/`grep` shapes, see tests/data/README-issue15.md)."""

from __future__ import annotations

import pytest

from roce_wizard.parsers import ParseError, parse
from roce_wizard.parsers.detect import detect
from tests.conftest import corpus_files, corpus_text


@pytest.mark.parametrize("path", corpus_files("ulimit_memlock"))
def test_every_memlock_sample_is_detected(path):
    assert detect(corpus_text(path)).kind == "ulimit_memlock"


@pytest.mark.parametrize("name, source, unlimited, kib, nbytes", [
    ("clearlinux-2372-ulimit-l-64", "ulimit -l", False, 64, 65536),
    ("telegraf-12980-ubuntu2204-ulimit-a-memlock-64", "ulimit -a", False, 64, 65536),
    ("docker-1099-centos7-ulimit-Ha-unlimited", "ulimit -a", True, None, None),
])
def test_ulimit_shapes(name, source, unlimited, kib, nbytes):
    f = parse("ulimit_memlock", corpus_text(f"ulimit_memlock/{name}.txt"))
    assert (f["source"], f["unlimited"], f["memlock_kib"], f["memlock_bytes"]) == (source, unlimited, kib, nbytes)


def test_ulimit_hard_read_is_said():
    assert parse("ulimit_memlock", corpus_text("ulimit_memlock/docker-1099-centos7-ulimit-Ha-unlimited.txt"))["hard"]
    assert parse("ulimit_memlock", corpus_text("ulimit_memlock/clearlinux-2372-ulimit-l-64.txt"))["hard"] is False


def test_proc_limits_soft_and_hard_bytes():
    f = parse("ulimit_memlock", corpus_text("ulimit_memlock/systemd-11448-proc-1-limits-locked-64m.txt"))
    assert f["source"] == "/proc/<pid>/limits"
    assert (f["memlock_bytes"], f["hard_bytes"], f["unlimited"], f["hard_unlimited"]) == (67108864, 67108864, False, False)


@pytest.mark.parametrize("shape", ["crlf", "ansi", "pdsh-two-hosts"])
def test_ulimit_pasted_shapes(shape):
    text = corpus_text("ulimit_memlock/telegraf-12980-ubuntu2204-ulimit-a-memlock-64.txt")
    if shape == "crlf":
        f = parse("ulimit_memlock", text.replace("\n", "\r\n"))
    elif shape == "ansi":
        f = parse("ulimit_memlock", text.replace("max locked", "\x1b[33mmax locked\x1b[0m"))
    else:
        f = parse("ulimit_memlock", "node01: unlimited\nnode02: 64\n")
        assert f["hosts"]["node01"]["unlimited"] is True and f["hosts"]["node02"]["memlock_kib"] == 64
        assert "memlock_kib" not in f
        return
    assert f["memlock_kib"] == 64


def test_ulimit_value_written_oddly_is_unknown():
    f = parse("ulimit_memlock", "$ ulimit -l\n６４\n")
    assert f["memlock_kib"] is None and f["unlimited"] is None


# systemctl show: `Name=value` lines; LimitMEMLOCK in bytes or `infinity` (systemd.exec(5))
@pytest.mark.parametrize("text, unit, unlimited, nbytes", [
    ("# systemctl show -p LimitMEMLOCK slurmd\nLimitMEMLOCK=infinity\n", "slurmd", True, None),
    ("$ systemctl show slurmd.service | grep MEMLOCK\nLimitMEMLOCK=8388608\nLimitMEMLOCKSoft=8388608\n",
     "slurmd.service", False, 8388608),
    ("LimitMEMLOCK=65536\r\n", None, False, 65536),
    ("LimitMEMLOCK=8M\n", None, None, None),  # systemctl prints bytes; anything else is not read
])
def test_systemd_limit_memlock(text, unit, unlimited, nbytes):
    assert detect(text).kind == "systemd_limit_memlock"
    f = parse("systemd_limit_memlock", text)
    assert (f["unit"], f["unlimited"], f["limit_bytes"]) == (unit, unlimited, nbytes)


# --- roce_ecn_sysfs ---------------------------------------------------------------------------

GREP = ("[root@gpu01 ~]# grep . /sys/class/net/ens1f0/ecn/roce_*/enable/*\n"
        + "".join(f"/sys/class/net/ens1f0/ecn/roce_np/enable/{p}:{int(p == 3)}\n" for p in range(8))
        + "".join(f"/sys/class/net/ens1f0/ecn/roce_rp/enable/{p}:{int(p in (3, 4))}\n" for p in range(8)))


def test_ecn_grep_listing():
    assert detect(GREP).kind == "roce_ecn_sysfs"
    f = parse("roce_ecn_sysfs", GREP)
    assert f["interface"] == "ens1f0"
    assert f["np"] == {p: p == 3 for p in range(8)} and f["rp"][4] is True and f["rp"][0] is False


def test_ecn_single_cat_and_missing_directory():
    f = parse("roce_ecn_sysfs", "$ cat /sys/class/net/ens1f0/ecn/roce_rp/enable/3\n1\n")
    assert f["rp"] == {3: True} and f["np"] == {}
    f = parse("roce_ecn_sysfs", "grep: /sys/class/net/ens1f0/ecn/roce_*/enable/*: No such file or directory\n")
    assert f["missing"] == ["/sys/class/net/ens1f0/ecn/roce_*/enable/*"] and f["interfaces"] == {}


def test_ecn_glob_cat_values_are_not_mapped_to_priorities():
    f = parse("roce_ecn_sysfs", "$ cat /sys/class/net/eth1/ecn/roce_np/enable/*\n0\n0\n0\n1\n0\n0\n0\n0\n")
    assert f["interfaces"] == {} and f["glob_reads"][0]["values"] == ["0", "0", "0", "1", "0", "0", "0", "0"]


def test_ecn_odd_value_is_unreadable():
    f = parse("roce_ecn_sysfs", "/sys/class/net/ens1f0/ecn/roce_np/enable/3:yes\n/sys/class/net/ens1f0/ecn/roce_np/enable/4:1\n")
    assert f["np"] == {4: True}
    assert f["unreadable"] == {"/sys/class/net/ens1f0/ecn/roce_np/enable/3": "yes"}


@pytest.mark.parametrize("shape", ["crlf", "ansi", "pdsh"])
def test_ecn_pasted_shapes(shape):
    body = [ln for ln in GREP.split("\n") if ln.strip()]
    if shape == "crlf":
        text = GREP.replace("\n", "\r\n")
    elif shape == "ansi":  # grep --color=always paints the file name
        text = "\n".join(f"\x1b[35m\x1b[K{ln.rsplit(':', 1)[0]}\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[K{ln.rsplit(':', 1)[1]}"
                         if ln.startswith("/") else ln for ln in body)
    else:
        text = "\n".join(f"gpu01: {ln}" for ln in body[1:]) + "\n" + "\n".join(
            f"gpu02: {ln.replace(':1', ':0')}" for ln in body[1:])
        f = parse("roce_ecn_sysfs", text)
        assert f["hosts"]["gpu01"]["np"][3] is True and f["hosts"]["gpu02"]["np"][3] is False
        return
    assert parse("roce_ecn_sysfs", text)["np"][3] is True


@pytest.mark.parametrize("kind", ["ulimit_memlock", "systemd_limit_memlock", "roce_ecn_sysfs"])
@pytest.mark.parametrize("garbage", ["", "hello world", "LimitNOFILE=1024\nfoo"])
def test_garbage_raises(kind, garbage):
    with pytest.raises(ParseError):
        parse(kind, garbage)
