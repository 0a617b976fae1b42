"""Stripping and splitting pastes (parsers/paste.py) on real pastes (tests/data/pastes, README.md there)."""

from __future__ import annotations

import pytest

from roce_wizard.parsers import PARSERS, ParseError
from roce_wizard.parsers.detect import UNKNOWN, detect, strip_annotations
from roce_wizard.parsers.paste import clean, commands, filtered, hint_kind, prompt_split, strip_launchers
from roce_wizard.parsers.session import read_paste
from tests.conftest import DATA, corpus_text

PASTES = DATA / "pastes"


def paste(rel: str) -> str:
    return (PASTES / rel).read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------------- class 6


def test_markdown_quoted_output_loses_its_quote_marks_and_keeps_the_command():
    text = clean(paste("terminal/aquantia-esxcli-nic-list-hash-prompt-quoted.txt"))
    first, header, dashes, *_ = text.split("\n")
    assert first == "# esxcli network nic list"
    assert header.startswith("Name    PCI Device") and dashes.startswith("------")
    assert not any(ln.startswith(">") for ln in text.split("\n"))


def test_crlf_ansi_colours_trailing_spaces_and_blank_lines_around_come_off():
    real = paste("terminal/xcpng-mlxconfig-query-hash-prompt-cx3.txt")
    # derived: the same real paste as a coloured Windows terminal would give it
    lines = real.split("\n")
    lines[0] = f"\x1b[01;31m\x1b[K{lines[0]}\x1b[m\x1b[K"
    noisy = "\r\n\r\n" + "\r\n".join(ln + "   " for ln in lines) + "\r\n\r\n"
    assert clean(noisy) == clean(real)
    assert "\x1b" not in clean(noisy) and "\r" not in clean(noisy)


def test_tabs_are_kept_for_the_parsers_that_read_them():
    assert "\t" in clean(paste("filtered/hyperflex-vib-list-grep-cis.txt"))


def test_a_whole_session_is_cut_at_each_prompt_with_the_typed_command_kept():
    parts = commands(clean(paste("terminal/pve-session-lspci-ls-cat-sriov.txt")))
    assert [p.command for p in parts] == [
        "lspci | grep VGA", "cd /sys/devices/pci0000:00/0000:00:02.0", "ls -l | grep vfs",
        "cat sriov_totalvfs", "cat sriov_numvfs"]
    assert parts[3].text.split("\n")[1:] == ["7"]
    assert parts[3].text.startswith("root@TigerPVE:")  # the prompt line stays: parsers read the path from it


def test_output_before_the_first_prompt_is_a_part_without_a_command():
    parts = commands(clean(paste("filtered/sriov-operator-ibdev2netdev-then-lspci-grep.txt")))
    assert [p.command for p in parts] == [None, "lspci | grep Mellanox"]
    assert parts[0].text.split("\n")[0] == "mlx5_19 port 1 ==> ibp75s0v7 (Down)"


@pytest.mark.parametrize("line, command", [
    ("[root@esx-01:~] esxcli network nic list", "esxcli network nic list"),
    ("[jijos@hbv2vm2 ~]$ ibv_devinfo", "ibv_devinfo"),
    ("root@gl8:/home/gl8/Desktop/nvme_softroce/librxe-dev# ibv_devinfo ", "ibv_devinfo"),
    ("(ucx_tmp) [qsong@scorp2 myusim]$ ibv_devinfo -vvv", "ibv_devinfo -vvv"),
    ("#esxcli software vib list | grep -i cis", "esxcli software vib list | grep -i cis"),
    ("$ ibdev2netdev | column -t", "ibdev2netdev | column -t"),
    ("shell$ prterun  --map-by ppr:2:node --output tag hostname", "prterun  --map-by ppr:2:node --output tag hostname"),
    # output lines that only look like prompts
    ("# OSU MPI Latency Test v5.6.2", None),
    ("# Size          Latency (us)", None),
    ("\t\t\t[RV] Reserved: checksum good, 1 byte(s) reserved", None),
    ("[hcn1:2663283:0:2663283]        rndv.c:505  Assertion `status == UCS_OK' failed", None),
    ("[   12.925245] mlx5_core 0000:03:00.0: enabling device (0000 -> 0002)", None),
    ("[0] Transfer size (B):          8, Transfer Time (s):     0.000014462", None),
])
def test_prompt_lines_from_real_pastes_give_their_command(line, command):
    assert prompt_split(line) == command


def test_osu_comment_header_lines_do_not_split_a_benchmark_table():
    text = corpus_text("osu_benchmarks/" + sorted(p.name for p in (DATA / "corpus/osu_benchmarks").glob("*.txt"))[0])
    assert all(p.command is None or not p.command.startswith(("OSU", "Size")) for p in commands(clean(text)))


# ------------------------------------------------------------------------------------------- class 2


def test_open_mpi_tag_output_gives_one_stream_per_rank_headed_by_the_echoed_command():
    streams = strip_launchers(clean(paste("launcher/prrte-output-tag-hostname-4-ranks.txt")))
    assert [s.label for s in streams] == ["rank 0", "rank 2", "rank 1", "rank 3"]
    assert [s.text.split("\n")[-1] for s in streams] == ["f5n18", "f5n18", "f5n17", "f5n17"]
    assert all(s.text.startswith("shell$ prterun") for s in streams)


def test_rank_bracket_prefix_is_stripped_and_names_the_rank():
    (stream,) = strip_launchers(clean(paste("launcher/mpich-rank-bracket-pingpong-bw.txt")))
    assert stream.label == "rank 0"
    assert all(ln.startswith("Transfer size (B):") for ln in stream.text.split("\n"))


def test_numeric_srun_style_prefix_is_stripped():
    (stream,) = strip_launchers(clean(paste("launcher/ctest-numeric-prefix-benchmark.txt")))
    assert stream.label == "rank 1"
    assert stream.text.split("\n")[0] == "Test command: /usr/lib64/mpich/bin/mpiexec \"-n\" \"2\" \"./perf_test-main\""
    assert stream.text.split("\n")[7] == "  L1 Data 48 KiB (x8)"  # the output's own indent survives


def test_rfc3339_timestamps_of_container_logs_are_stripped():
    (stream,) = strip_launchers(clean(paste("launcher/supportutils-container-log-rfc3339-timestamp.txt")))
    assert stream.label is None and stream.text.startswith("nginx: [emerg] host not found")


def test_pdsh_host_prefixes_split_two_hosts_outputs():
    # derived: the real outputs of two machines, each line prefixed `host: ` as pdsh prints it
    a = clean(paste("terminal/azhpc-ibv_devinfo-bracket-prompt.txt")).split("\n")[1:]
    b = clean(paste("terminal/rxe-ibv_devinfo-root-prompt-trailing-space.txt")).split("\n")[1:]
    mixed = [f"node01: {ln}" for ln in a[:5]] + [f"node02: {ln}" for ln in b[:5]] + \
            [f"node01: {ln}" for ln in a[5:]] + [f"node02: {ln}" for ln in b[5:]]
    streams = strip_launchers("$ pdsh -w node[01-02] ibv_devinfo\n" + "\n".join(mixed))
    assert [s.label for s in streams] == ["host node01", "host node02"]
    assert streams[0].text.split("\n")[1:] == a and streams[1].text.split("\n")[1:] == b


@pytest.mark.parametrize("sample", [
    "ethtool_pause/eth03-global-pause-rx-tx-on-tabs.txt",          # `RX: on` / `TX: on` key lines
    "flint_query/cx7-bdf-short-form-16-guids-secure-fw.txt",        # `PSID:` `Description:` …
    "ip_link_vf/cx4-pve-bridge-member-8-vfs-zero-mac-query-rss.txt",  # `2: enp1s0np0: <…>` numbered links
])
def test_key_value_and_numbered_outputs_are_not_taken_for_launcher_prefixes(sample):
    (stream,) = strip_launchers(clean(corpus_text(sample)))
    assert stream.label is None


def test_srun_l_ranks_printing_one_line_each_are_ranks_but_ip_oneline_records_are_not():
    # the shapes `srun -l ofed_info -s` and `ip -o link` / `ip -o addr` print (one record per line, `N: ` first)
    ranks = strip_launchers("0: MLNX_OFED_LINUX-5.8-1.0.1.1:\n1: MLNX_OFED_LINUX-5.8-1.0.1.1:\n"
                            "2: MLNX_OFED_LINUX-5.4-3.6.8.1:")
    assert [(s.label, s.text) for s in ranks] == [("rank 0", "MLNX_OFED_LINUX-5.8-1.0.1.1:"),
                                                  ("rank 1", "MLNX_OFED_LINUX-5.8-1.0.1.1:"),
                                                  ("rank 2", "MLNX_OFED_LINUX-5.4-3.6.8.1:")]
    links = "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue\n2: ens1f0np0: <BROADCAST,MULTICAST,UP> mtu 9000"
    addrs = "1: lo    inet 127.0.0.1/8 scope host lo\n2: ens1f0np0    inet 10.0.0.2/24 scope global ens1f0np0"
    assert [s.label for s in strip_launchers(links)] == [None]
    assert [s.label for s in strip_launchers(addrs)] == [None]


# ------------------------------------------------------------------------------------------- hints


@pytest.mark.parametrize("command, kind", [
    ("esxcli software vib list | grep -i cis", "esxi_vib_list"),
    ("esxcli network nic list", "esxi_nic_list"),
    ('mlxconfig -d ${device} query | egrep "ROCE_CC_PRIO_MASK_P${port}|RPG_THRESHOLD_P${port}"', "mlxconfig_query"),
    ("mlxconfig query", "mlxconfig_query"),
    ("ibdev2netdev | column -t", "ibdev2netdev"),
    ("sudo /opt/mellanox/iproute2/sbin/rdma statistic show", "rdma_statistic"),
    ("cat sriov_totalvfs", "sriov_numvfs"),
    ("ethtool -S eth0 | grep prio3", "ethtool_stats"),
    ("ethtool bond0", None),         # link settings: not a kind roce-wizard reads
    ("lspci | wc -l", None),          # a count, not lspci's lines
    ("cat /tmp/ibstat-notes.txt", None),  # the tool's name inside an argument names nothing
    ("mpirun -np 2 --host a,b ./osu_bw", "osu"),  # through a launcher: the program further on
    ("pdsh -w esx-[01-02] 'mlxconfig -e query; esxcfg-module -g nmlx5_core'", None),  # two commands
    ("esxcli --formatter=csv network nic list", "esxi_nic_list"),
    ("dmesg | awk '{print $2}'", None),
])
def test_the_echoed_command_names_the_kind(command, kind):
    assert hint_kind(command) == kind


def test_a_filter_in_the_pipeline_marks_the_output_as_filtered():
    assert filtered("esxcli software vib list | grep -i mlx")
    assert filtered('mlxconfig q | egrep "A|B"')
    assert not filtered("esxcli software vib list") and not filtered("ibdev2netdev | column -t")


# ------------------------------------------------------------------------------ nothing read before is lost

# real samples that are whole sessions of two tools: read as `session` now (the folder's kind is a part)
TWO_TOOL_SESSIONS = {"cx4-pve-bridge-member-8-vfs-zero-mac-query-rss.txt", "mlx5-bond0-single-line-resp-cqe-errors.txt"}
EVERY_SAMPLE = sorted(str(p.relative_to(DATA)) for d in ("corpus", "parser_seeds") for p in (DATA / d).glob("*/*.*")
                      if p.suffix in (".txt", ".json"))


@pytest.mark.parametrize("sample", EVERY_SAMPLE)
def test_every_real_sample_reads_as_before_or_as_a_session_of_its_tools(sample):
    text = strip_annotations((DATA / sample).read_text(encoding="utf-8", errors="replace"))
    kind = detect(text).kind
    (reading,) = read_paste(text)
    if (DATA / sample).name in TWO_TOOL_SESSIONS:
        assert reading.kind == "session" and kind in [p.kind for p in reading.parts]
        return
    assert reading.kind == kind
    if kind == UNKNOWN:
        return
    try:
        before = PARSERS[kind].parse(text)
    except ParseError:
        return
    after = {k: v for k, v in (reading.facts or {}).items() if k != "filtered"}
    assert after == before
