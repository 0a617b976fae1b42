"""Builds a small NVIDIA sysinfo-snapshot folder (and its .tgz) in the real tool's layout from real outputs.

The layout and the file formats follow sysinfo-snapshot.py of github.com/Mellanox/linux-sysinfo-snapshot at
commit 0a9dce7314785f27bfa58a846bdd644cb35c2b14 (version 3.7.9.9); tests/data/sysinfo_snapshot/README.md cites
the functions each piece follows. The command outputs are real ones from tests/data/corpus (their echoed
command lines dropped: the snapshot holds only what the command printed).
"""

from __future__ import annotations

import tarfile
from pathlib import Path

from tests.conftest import corpus_text

HOST = "cpn57"
DATE = "20190219-101500"
TOP = f"sysinfo-snapshot-v3.7.9.9-{HOST}-{DATE}"


def _output(relpath: str, drop_prefixes: tuple[str, ...] = ("$ ", "# ")) -> str:
    """A corpus sample without the command lines its author pasted above the output."""
    lines = [ln for ln in corpus_text(relpath).split("\n") if not ln.startswith(drop_prefixes)]
    return "\n".join(lines).strip("\n") + "\n"


def _txt(command: str, output: str) -> str:  # add_txt_command_output()
    return f"Invoked Command: {command}\n{output}"


def _html_section(sec: int, name: str, content: str) -> str:  # html_write_paragraph(), a non-string command
    return (f'<a name="sec{sec}"></a><small><a href="#index">[back to index]</a></small> '
            f"<h2>{name}</h2><p>{content.replace('<', '&lt;').replace('>', '&gt;')}</p>")


def build_snapshot(base: Path) -> Path:
    root = base / TOP
    for sub in ("firmware", "pcie_files", "err_messages", "commands_txt_output", "ethtool_S"):
        (root / sub).mkdir(parents=True)
    txt = root / "commands_txt_output"
    (txt / "hostname.txt").write_text(_txt("hostname", f"{HOST}\n"))
    (txt / "ibdev2netdev.txt").write_text(_txt("ibdev2netdev", _output("ibdev2netdev/eth4-eth5-ib2-mixed-legacy-names.txt")))
    (txt / "ofed_info_s.txt").write_text(_txt("ofed_info -s", _output("ofed_info/bf3-doca-ofed-internal-23-07.txt")))
    (txt / "ibv_devinfo_v.txt").write_text(_txt("ibv_devinfo -v", _output("ibv_devinfo/rxe-soft-roce-verbose-gid-compressed.txt")))
    # cma_roce_handler("mode"): "cma_roce_mode -d <dev>\n\n<output>" per device, "\n\n---------------\n\n" between
    cma = _output("cma_roce_mode/cx4lx-default-ib-roce-v1-then-set-v2.txt").split("\n")[0]  # the default: v1
    (txt / "cma_roce_mode.txt").write_text(_txt("cma_roce_mode", f"cma_roce_mode -d mlx5_0\n\n{cma}\n\n---------------\n\n"
                                                "cma_roce_mode -d mlx5_1\n\nRoCE v2\n"))
    # mlnx_qos_handler(): "\n\nmlnx_qos -i <iface>\n<output>\n____________\n\n" per interface
    qos = _output("mlnx_qos/ens14f0-trust-pcp-no-dscp-map.txt", ("mlnx_qos ",))
    (txt / "mlnx_qos_handler.txt").write_text(_txt("mlnx_qos_handler", f"\n\nmlnx_qos -i ens14f0\n{qos}\n____________\n\n"
                                                   "\n\nmlnx_qos -i ens14f1\nCould not run command: mlnx_qos -i ens14f1"
                                                   "\n____________\n\n"))
    (txt / "lsmod.txt").write_text(_txt("lsmod", "Module                  Size  Used by\nmlx5_ib               385024  0\n"))
    # general_fw_commands_handler('fwconfig'): firmware/mlxconfig_<device without : . />, the command line first
    mlxconfig = _output("mlxconfig_query/cx4lx-mcx4121a-full-next-boot-trailing-pad.txt")
    (root / "firmware" / "mlxconfig_devmstmt4117_pciconf0").write_text(
        f"mlxconfig -d /dev/mst/mt4117_pciconf0 -e  q\n{mlxconfig}\n")
    # ethtool_S_output(): ethtool_S/ethtool_S_<iface>, the output only
    (root / "ethtool_S" / "ethtool_S_enp178s0f0").write_text(_output("ethtool_stats/byteps-179-prio-all-on-prio0.txt"))
    # ethtool_all_interfaces_handler(): in the HTML report only, "ethtool <option> <iface>\n<output>" blocks
    pause = _output("ethtool_pause/eth03-global-pause-rx-tx-on-tabs.txt")
    ethtool_all = ("ethtool version 4.8\n\nethtool  eth03\nCould not run command: ethtool  eth03\n____________\n\n"
                   f"ethtool -a eth03\n{pause}\n____________\n\n"
                   "ethtool -S output:\n\nethtool -S enp178s0f0\n"
                   "<td><a href=ethtool_S/ethtool_S_enp178s0f0>ethtool -S enp178s0f0</a></td>\n\n"
                   "--------------------------------------------------")
    report = ("<html><head><title>report</title></head><body><h2>1. Server Commands: </h2>"
              + _html_section(1001, "ethtool_all_interfaces", ethtool_all)
              + _html_section(1002, "hostname", HOST) + "</body></html>")
    (root / f"{HOST}-{DATE}.html").write_text(report)
    (root / "performance_tuning_analyze.html").write_text("<html><body>mlnx_tune</body></html>")
    (root / "err_messages" / "dummy_functions").write_text("The full command is: mst status\nmst: command not found\n\n")
    return root


def build_tgz(base: Path) -> Path:
    root = build_snapshot(base / "src")
    out = base / f"{TOP}.tgz"
    with tarfile.open(out, "w:gz") as tar:  # create_tar_file(): tar -czf <dir>.tgz -C <path> <dir>
        tar.add(root, arcname=TOP)
    return out
