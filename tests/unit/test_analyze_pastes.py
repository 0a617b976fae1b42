"""`roce-wizard analyze --json` on real pastes (issue 13 classes 1, 2, 6; tests/data/pastes/README.md)."""

from __future__ import annotations

import json
import re
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roce_wizard.cli import app
from tests.conftest import CORPUS, DATA, REPO

PASTES = DATA / "pastes"
runner = CliRunner()


def analyze_json(*paths: Path) -> dict:
    result = runner.invoke(app, ["analyze", "--json", *map(str, paths)])
    return json.loads(result.stdout)


def only(out: dict) -> dict:
    (entry,) = out["files"]
    return entry


def part_kinds(entry: dict) -> list[str]:
    return [p["kind"] for p in entry["facts"]["parts"]]


def findings(entry: dict) -> dict[str, dict]:
    return {f["check"]: f for f in entry["findings"]}


# ------------------------------------------------------------------------- class 1: filtered (grep)


def test_grep_filtered_vib_list_is_read_by_its_rows_and_missing_vibs_are_unknown():
    entry = only(analyze_json(PASTES / "filtered/hyperflex-vib-list-grep-cis.txt"))
    assert entry["kind"] == "esxi_vib_list"
    vibs = entry["facts"]["vibs"]
    assert [v["name"] for v in vibs] == ["scvmclient", "stHypervisorSvc", "vmware-esx-STFSNasPlugin", "ucs-tool-esxi"]
    assert vibs[3] == {"name": "ucs-tool-esxi", "version": "1.1.0-1OEM", "vendor": "CIS",
                       "acceptance": "PartnerSupported", "install_date": "2020-04-11"}
    assert entry["facts"]["header"] is False and entry["facts"]["filtered"] is True
    # the rows grep dropped are unknown: no "mft/nmst/nmlx5 not installed" failure on a filtered list
    found = findings(entry)
    assert found["RW201"]["status"] == "skip" and "could not tell" in found["RW201"]["summary"]
    assert found["RW204"]["status"] == "skip" and "could not tell" in found["RW204"]["summary"]


def test_ibdev2netdev_through_column_with_author_notes_is_read():
    entry = only(analyze_json(PASTES / "filtered/imbue-ibdev2netdev-column-t-comments.txt"))
    assert entry["kind"] == "ibdev2netdev"
    links = entry["facts"]["links"]
    assert len(links) == 12
    assert {"dev": "mlx5_1", "port": 1, "netdev": "enp27s0f0np0", "state": "Up"} in links


def test_dmesg_grep_is_dmesg_and_says_it_was_filtered():
    entry = only(analyze_json(PASTES / "filtered/synology-dmesg-grep-mlx5.txt"))
    assert entry["kind"] == "linux_dmesg" and entry["facts"]["lines"] == 6 and entry["facts"]["filtered"] is True


def test_grep_of_ethtool_counters_is_ethtool_stats():
    entry = only(analyze_json(PASTES / "filtered/xsos-ethtool-S-grep-pause.txt"))
    assert entry["kind"] == "ethtool_stats"
    assert entry["facts"]["counters"] == {"rx_pause_frames": 95331, "rx_constant_pause_events": 0,
                                          "tx_pause_frames": 0}


@pytest.mark.parametrize("sample, kind", [
    ("ethtool_stats/byteps-179-prio-all-on-prio0.txt", "ethtool_stats"),
    ("ethtool_stats/mlx5-pause-grep-global-pause-all-zero.txt", "ethtool_stats"),
    ("mlxconfig_query/cx6-egrep-roce-cc-lldp-dcbx-off-9-space-indent.txt", "mlxconfig_query"),
])
def test_filtered_corpus_samples_keep_their_kind(sample, kind):
    entry = only(analyze_json(CORPUS / sample))
    assert entry["kind"] == kind and entry["facts"]


# ------------------------------------------------------------------------- class 6: terminal residue


def test_quoted_esxcli_nic_list_after_a_hash_prompt_is_read():
    entry = only(analyze_json(PASTES / "terminal/aquantia-esxcli-nic-list-hash-prompt-quoted.txt"))
    assert entry["kind"] == "esxi_nic_list"
    assert [(n["name"], n["driver"], n["mtu"]) for n in entry["facts"]["nics"]] == [
        ("vmnic0", "ne1000", 9000), ("vmnic1", "igbn", 9000)]


@pytest.mark.parametrize("sample, hca, mtu", [
    ("terminal/rxe-ibv_devinfo-root-prompt-trailing-space.txt", "rxe0", 1024),
    ("terminal/azhpc-ibv_devinfo-bracket-prompt.txt", "rdmaP23800p0s2", 1024),
])
def test_ibv_devinfo_after_a_prompt_is_read(sample, hca, mtu):
    entry = only(analyze_json(PASTES / sample))
    assert entry["kind"] == "ibv_devinfo"
    (dev,) = entry["facts"]["devices"]
    assert dev["hca_id"] == hca and dev["ports"][0]["active_mtu"] == mtu
    assert dev["ports"][0]["state"] == "PORT_ACTIVE"


def test_mlxconfig_query_after_a_hash_prompt_is_read():
    entry = only(analyze_json(PASTES / "terminal/xcpng-mlxconfig-query-hash-prompt-cx3.txt"))
    assert entry["kind"] == "mlxconfig_query"
    params = entry["facts"]["devices"][0]["params"]
    assert params["SRIOV_EN"]["next_boot"] is True and params["NUM_OF_VFS"]["next_boot"] == 8


def test_crlf_and_colours_give_the_same_facts(tmp_path):
    real = PASTES / "terminal/xcpng-mlxconfig-query-hash-prompt-cx3.txt"
    lines = real.read_text().split("\n")
    # derived: a coloured prompt, `grep --color=always` marking the matches inside output lines, CRLF line
    # ends and trailing spaces
    lines[0] = f"\x1b[1;32m{lines[0]}\x1b[0m"
    lines = [ln.replace("SRIOV_EN", "\x1b[01;31m\x1b[KSRIOV_EN\x1b[m\x1b[K").replace(
        "NUM_OF_VFS", "\x1b[01;31m\x1b[KNUM_OF_VFS\x1b[m\x1b[K") for ln in lines]
    noisy = tmp_path / "noisy.txt"
    noisy.write_bytes(("\r\n".join(ln + "  " for ln in lines)).encode())
    facts = only(analyze_json(noisy))["facts"]
    assert facts == only(analyze_json(real))["facts"]
    assert facts["devices"][0]["params"]["NUM_OF_VFS"]["next_boot"] == 8


def test_a_pasted_session_is_split_per_command_and_judged_together():
    entry = only(analyze_json(PASTES / "terminal/pve-session-lspci-ls-cat-sriov.txt"))
    assert entry["kind"] == "session"
    parts = entry["facts"]["parts"]
    assert [p["command"] for p in parts] == ["lspci | grep VGA", "ls -l | grep vfs", "cat sriov_totalvfs",
                                             "cat sriov_numvfs"]
    assert part_kinds(entry) == ["lspci_list", "unknown", "sriov_numvfs", "sriov_numvfs"]
    assert parts[0]["facts"]["devices"][0]["pci"] == "00:02.0"
    assert parts[1]["facts"] is None  # `ls -l` is no tool we read: unknown, never guessed
    assert (parts[2]["facts"]["value"], parts[2]["facts"]["attribute"]) == (7, "sriov_totalvfs")
    assert (parts[3]["facts"]["value"], parts[3]["facts"]["attribute"]) == (0, "sriov_numvfs")
    assert "RW103" in findings(entry)  # a check judged the session's sriov_numvfs part


def test_session_with_output_before_the_first_prompt():
    entry = only(analyze_json(PASTES / "filtered/sriov-operator-ibdev2netdev-then-lspci-grep.txt"))
    assert entry["kind"] == "session"
    assert part_kinds(entry) == ["ibdev2netdev", "lspci_list"]
    first, second = entry["facts"]["parts"]
    assert first["command"] is None and len(first["facts"]["links"]) == 16
    assert second["facts"]["filtered"] is True and len(second["facts"]["devices"]) == 8


def test_session_of_three_commands_two_tools():
    entry = only(analyze_json(PASTES / "terminal/clearcontainers-session-cat-sriov_totalvfs.txt"))
    assert part_kinds(entry) == ["lspci_list", "sriov_numvfs", "sriov_numvfs"]
    assert [p["facts"].get("value") for p in entry["facts"]["parts"][1:]] == [63, 63]


def test_other_output_of_a_known_tool_is_not_taken_for_the_kind_it_resembles():
    # `ethtool bond0` prints link settings (`Speed: 1000Mb/s` …), not `ethtool -S` counters: only the
    # `dmesg | grep` part is read, and its line count holds the dmesg lines alone
    entry = only(analyze_json(PASTES / "terminal/unraid-session-ethtool-then-dmesg-grep.txt"))
    assert entry["kind"] == "linux_dmesg" and entry["facts"]["lines"] == 7


# ------------------------------------------------------------------------- class 2: launchers


def test_each_rank_of_a_tag_output_paste_is_its_own_entry():
    out = analyze_json(PASTES / "launcher/prrte-output-tag-hostname-4-ranks.txt")
    assert [f["source"] for f in out["files"]] == ["rank 0", "rank 2", "rank 1", "rank 3"]
    assert {f["kind"] for f in out["files"]} == {"unknown"}  # `hostname` is no tool we read


def test_pdsh_paste_of_two_hosts_is_judged_per_host(tmp_path):
    # derived: two real ibv_devinfo outputs with pdsh's `host: ` prefix on every line
    a = (PASTES / "terminal/azhpc-ibv_devinfo-bracket-prompt.txt").read_text().strip().split("\n")[1:]
    b = (PASTES / "terminal/rxe-ibv_devinfo-root-prompt-trailing-space.txt").read_text().strip().split("\n")[1:]
    f = tmp_path / "pdsh.txt"
    f.write_text("\n".join(["$ pdsh -w node[01-02] ibv_devinfo", *(f"node01: {ln}" for ln in a),
                            *(f"node02: {ln}" for ln in b)]) + "\n")
    out = analyze_json(f)
    assert [(e["source"], e["kind"]) for e in out["files"]] == [("host node01", "ibv_devinfo"),
                                                                 ("host node02", "ibv_devinfo")]
    assert [e["facts"]["devices"][0]["hca_id"] for e in out["files"]] == ["rdmaP23800p0s2", "rxe0"]


def test_srun_l_ranks_with_kubectl_timestamps_are_stripped(tmp_path):
    # derived: the real mlxconfig paste as `kubectl logs --timestamps` of `srun -l` would show it
    body = (PASTES / "terminal/xcpng-mlxconfig-query-hash-prompt-cx3.txt").read_text().rstrip("\n").split("\n")
    f = tmp_path / "srun.txt"
    f.write_text("\n".join(f"2025-11-27T06:34:58.716909126Z 0: {ln}" for ln in body) + "\n")
    (entry,) = analyze_json(f)["files"]
    assert entry["source"] == "rank 0" and entry["kind"] == "mlxconfig_query"
    assert entry["facts"]["devices"][0]["params"]["NUM_OF_VFS"]["next_boot"] == 8


# ------------------------------------------------------------------------- the console script


def test_console_script_analyze_json_on_a_session():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    exe = Path(sys.executable).with_name("roce-wizard")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "roce_wizard.cli"]
    done = subprocess.run([*cmd, "analyze", "--json", str(PASTES / "filtered/sriov-operator-ibdev2netdev-then-lspci-grep.txt")],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=120, check=False)
    entry = only(json.loads(done.stdout))
    assert entry["kind"] == "session" and part_kinds(entry) == ["ibdev2netdev", "lspci_list"]
    assert "Traceback" not in done.stderr


# ------------------------------------------------------------------------- class 1 in every parser
# derived, exactly: a grep keeps the matching lines of a real output, so the filtered paste is those lines
# (with the echoed `$ command | grep …` on top, as people paste it); the facts read from it must be the
# full output's facts for those rows — nothing guessed for the rows grep dropped


def grep_paste(tmp_path: Path, sample: str, command: str, pattern: str, prompt: bool = True) -> Path:
    text = (CORPUS / sample).read_text()
    kept = [ln for ln in text.split("\n")[3:] if re.search(pattern, ln) and not ln.lstrip().startswith(("$", "#"))
            and "@" not in ln[:30]]
    f = tmp_path / "grep.txt"
    f.write_text("\n".join(([f"$ {command}"] if prompt else []) + kept) + "\n")
    return f


def full_facts(sample: str) -> dict:
    return only(analyze_json(CORPUS / sample))["facts"]


def test_nic_list_grep_vmnic_rows_equal_the_full_lists_rows(tmp_path):
    sample = "esxi_nic_list/dell-asm-spec-cx4lx-mtu-mismatch-vusb.txt"
    entry = only(analyze_json(grep_paste(tmp_path, sample, "esxcli network nic list | grep vmnic", r"vmnic")))
    assert entry["kind"] == "esxi_nic_list" and entry["facts"]["header"] is False
    full = [n for n in full_facts(sample)["nics"] if n["name"].startswith("vmnic")]
    assert entry["facts"]["nics"] == full and len(full) >= 4


def test_vib_list_grep_mlx_rows_equal_the_full_lists_rows(tmp_path):
    sample = "esxi_vib_list/dell-esxi702-full-list-mel-async-nmlx5.txt"
    entry = only(analyze_json(grep_paste(tmp_path, sample, "esxcli software vib list | grep -i mlx", r"(?i)mlx")))
    assert entry["kind"] == "esxi_vib_list"
    full = [v for v in full_facts(sample)["vibs"] if "mlx" in v["name"].lower()]
    assert entry["facts"]["vibs"] == full and full
    found = findings(entry)
    assert found["RW204"]["status"] != "skip"  # nmlx5-core is among the rows: judged as on the full list
    assert "could not tell" in found["RW201"]["summary"]  # mft/nmst are not: unknown


@pytest.mark.parametrize("sample, command, pattern, kind, key", [
    ("mlxconfig_query/cx4lx-mcx4121a-full-next-boot-trailing-pad.txt",
     "mlxconfig -d /dev/mst/mt4117_pciconf0 q | grep -E 'SRIOV|NUM_OF_VFS|LINK_TYPE'", r"SRIOV|NUM_OF_VFS|LINK_TYPE",
     "mlxconfig_query", lambda f: f["devices"][0]["params"]),
    ("ethtool_stats/byteps-179-prio-all-on-prio0.txt", "ethtool -S enp178s0f0 | grep prio3", r"prio3",
     "ethtool_stats", lambda f: f["counters"]),
    ("show_gids/husky-tab-separated.txt", "show_gids | grep v2", r"v2", "show_gids", lambda f: f["gids"]),
    ("ibdev2netdev/eth4-eth5-ib2-mixed-legacy-names.txt", "ibdev2netdev | grep Up", r"Up", "ibdev2netdev",
     lambda f: f["links"]),
])
def test_grep_of_a_real_output_gives_that_outputs_facts_for_the_kept_rows(tmp_path, sample, command, pattern,
                                                                          kind, key):
    entry = only(analyze_json(grep_paste(tmp_path, sample, command, pattern)))
    assert entry["kind"] == kind and entry["facts"]["filtered"] is True
    got, full = key(entry["facts"]), key(full_facts(sample))
    if isinstance(got, dict):
        assert got and got == {k: v for k, v in full.items() if re.search(pattern, k)}
    else:
        assert got and all(row in full for row in got)


def test_ibv_devinfo_grep_state_mtu_is_read_but_its_device_is_unknown(tmp_path):
    sample = "ibv_devinfo/rxe-soft-roce-verbose-gid-compressed.txt"
    entry = only(analyze_json(grep_paste(tmp_path, sample, "ibv_devinfo | grep -E 'state|mtu'", r"state|mtu")))
    assert entry["kind"] == "ibv_devinfo"
    facts = entry["facts"]
    assert facts["devices"] == [] and facts["partial"] is True
    (port,) = facts["ports_unattributed"]
    assert (port["port"], port["state"], port["max_mtu"], port["active_mtu"]) == (None, "PORT_ACTIVE", 4096, 1024)
    assert entry["findings"] == []  # no device to tie the port to: nothing judged, no "no RDMA device" failure
    # without the echoed command, lone `state:` lines are not recognisable as ibv_devinfo: unknown
    bare = only(analyze_json(grep_paste(tmp_path, sample, "", r"state|mtu", prompt=False)))
    assert bare["kind"] == "unknown"


def test_the_echoed_command_keeps_a_filtered_output_from_passing_for_another_tool(tmp_path):
    # `ibstat | grep -E 'State|Rate'` lines (`Rate: 25`) look like `ethtool -S` counters: with the command
    # saying ibstat they are ibstat or unknown, never ethtool_stats
    sample = "ibstat/cx4lx-mt4117-25g-ethernet-tabs.txt"
    entry = only(analyze_json(grep_paste(tmp_path, sample, "ibstat mlx5_0 | grep -E 'State|Rate|Link layer'",
                                         r"State|Rate|Link layer")))
    assert entry["kind"] in ("ibstat", "unknown") and entry["kind"] != "ethtool_stats"


def test_pause_params_rows_without_their_header_stay_unknown(tmp_path):
    # which boolean column is RX and which TX is only in the header: never guessed from position
    sample = "esxi_pauseparams/esxi80-cx5-vs-esxi70-x710.txt"
    entry = only(analyze_json(grep_paste(tmp_path, sample, "esxcli network nic pauseParams list | grep vmnic",
                                         r"^vmnic")))
    assert entry["kind"] == "unknown" and entry["facts"] is None


def test_human_output_names_each_sessions_command_and_each_rank(tmp_path):
    result = runner.invoke(app, ["analyze", str(PASTES / "terminal/pve-session-lspci-ls-cat-sriov.txt"),
                                 str(PASTES / "launcher/prrte-output-tag-hostname-4-ranks.txt")])
    assert "$ lspci | grep VGA  lspci_list" in result.stdout
    assert "$ cat sriov_totalvfs  sriov_numvfs" in result.stdout
    assert "prrte-output-tag-hostname-4-ranks.txt (rank 2)  unknown" in result.stdout


def test_a_pasted_command_is_printed_as_text_never_as_markup(tmp_path):
    f = tmp_path / "s.txt"
    f.write_text("$ lspci | grep '[bold red]Mellanox[/]'\n"
                 "0c:00.0 Infiniband controller: Mellanox Technologies MT28908 Family [ConnectX-6]\n"
                 "$ cat /sys/class/net/ens1/device/sriov_numvfs\n8\n")
    result = runner.invoke(app, ["analyze", str(f)])
    assert "$ lspci | grep '[bold red]Mellanox[/]'  lspci_list" in result.stdout


# ------------------------------------------------------------------------- one machine vs two machines

QUERY = CORPUS / "mlxconfig_query/hpe-slingshot-cx5-3col-star-marker-elided.txt"  # a real `mlxconfig -e query`
MODULE = "nmlx5_core enabled = 1 options = 'pfctx=0x08 pfcrx=0x08 trust_state=2 max_vfs=0,0,8,7 ecn=1'"


def query_lines() -> list[str]:
    return QUERY.read_text().rstrip("\n").split("\n")[3:]  # the corpus's three annotation lines off


def test_a_session_is_judged_as_one_machine(tmp_path):
    # derived: the real query and the module parameters typed one after the other on one ESXi host
    f = tmp_path / "session.txt"
    f.write_text("\n".join(["[root@esx-01:~] /opt/mellanox/bin/mlxconfig -e -d mt4119_pciconf0 query",
                            *query_lines(), "[root@esx-01:~] esxcfg-module -g nmlx5_core", MODULE,
                            "[root@esx-01:~] "]) + "\n")
    entry = only(analyze_json(f))
    assert entry["kind"] == "session" and part_kinds(entry) == ["mlxconfig_query", "esxi_module_params"]
    assert "RW208" in findings(entry)  # NUM_OF_VFS against max_vfs: needs both parts, judged together


def test_two_hosts_of_a_pdsh_paste_are_never_joined(tmp_path):
    # derived: the same two outputs, but printed by two hosts through pdsh
    f = tmp_path / "pdsh.txt"
    f.write_text("\n".join(["$ pdsh -w esx-[01-02] 'mlxconfig -e query; esxcfg-module -g nmlx5_core'",
                            *(f"esx-01: {ln}" for ln in query_lines()), f"esx-02: {MODULE}"]) + "\n")
    out = analyze_json(f)
    assert [(e["source"], e["kind"]) for e in out["files"]] == [("host esx-01", "mlxconfig_query"),
                                                                 ("host esx-02", "esxi_module_params")]
    assert all("RW208" not in findings(e) for e in out["files"])  # esx-01's VFs never meet esx-02's max_vfs
    assert "RW205" in findings(out["files"][0]) and "RW209" in findings(out["files"][1])  # each judged alone
