"""NVIDIA sysinfo-snapshot output (github.com/Mellanox/linux-sysinfo-snapshot): its folder or .tgz, as parts.

The layout its sysinfo-snapshot.py writes (read at commit 0a9dce7314785f27bfa58a846bdd644cb35c2b14, v3.7.9.9):

    sysinfo-snapshot-v<version>-<hostname>-<YYYYmmdd-HHMMSS>/      (…-<date> when `hostname` is not approved)
        <hostname>-<date>.html           one <h2>COMMAND</h2><p>OUTPUT</p> section per command
        performance_tuning_analyze.html, sr_iov.html
        commands_txt_output/<cmd>.txt     "Invoked Command: <command>" then its output; the file name is the
                                          command with / : * ? " < | - removed and spaces as _ (ibv_devinfo_v.txt)
        firmware/mlxconfig_<dev>          "mlxconfig -d <dev> -e  q" then its output (mstconfig_<dev> with mstflint)
        firmware/flint_<dev>_q            "flint -d <dev> q" then its output (mstflint_<dev>_q)
        ethtool_S/ethtool_S_<iface>       `ethtool -S <iface>`, nothing before it
        pcie_files/, err_messages/, …
Some commands are one file for many devices: cma_roce_mode.txt ("cma_roce_mode -d <dev>" blocks split by a
dash row), mlnx_qos_handler.txt ("mlnx_qos -i <iface>" blocks ending in an underscore row); `ethtool_all_interfaces`
is in the HTML report only ("ethtool <option> <iface>" blocks). Each becomes one part per device.
Everything in one snapshot is one machine: the host its folder name (or hostname.txt) names.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from roce_wizard.untrusted import MAX_FILE_BYTES, InputError, read_bounded

SNAPSHOT_DIR = re.compile(r"^sysinfo-snapshot-v[\d.]+-(?:(?P<host>.+)-)?\d{8}-\d{6}$")
TXT_DIR = "commands_txt_output"
# commands_txt_output/<name>.txt -> our kind (the command is known: no guessing from the text)
TXT_KINDS = {
    "ibv_devinfo_v": "ibv_devinfo", "ibdev2netdev": "ibdev2netdev", "ofed_info": "ofed_info",
    "ofed_info_s": "ofed_info", "ibstat": "ibstat", "ibstatus": "ibstatus", "mst_status": "mst_status",
    "mst_status_v": "mst_status", "cma_roce_mode": "cma_roce_mode", "mlnx_qos_handler": "mlnx_qos",
}
# files whose format no parser reads yet: said as such (a show_gids reading of show_pretty_gids finds no GID row,
# and "no RoCE v2 GID" would be a verdict on a default)
NOT_READ = {"show_pretty_gids": "show_pretty_gids (the snapshot's own GID table: DEV PORT INDEX GID IPv4 TYPE "
                                "NDEV) is not read yet: its GIDs could not be told"}
_INVOKED = re.compile(r"^Invoked Command: (?P<cmd>.*)$")
_CMA_BLOCK = re.compile(r"^cma_roce_mode -d (?P<dev>\S+)\s*$", re.M)
_QOS_BLOCK = re.compile(r"^mlnx_qos -i (?P<dev>\S+)\s*$", re.M)
_ETHTOOL_BLOCK = re.compile(r"^ethtool (?P<opt>-\w|--[\w-]+)? ?(?P<dev>[\w.:@-]+)\s*$", re.M)
_SECTION = re.compile(r"<h2>(?P<name>[^<]*)</h2>(?P<body>.*?)(?=<a name=|<h2>|</body>|\Z)", re.S)
_ETHTOOL_KINDS = {"-a": "ethtool_pause", "-S": "ethtool_stats"}


@dataclass
class Part:
    name: str  # where it is inside the snapshot: commands_txt_output/cma_roce_mode.txt#mlx5_0
    text: str
    kind: str | None  # None: detect from the text
    error: str | None = None  # the snapshot holds no output here: why (its own "Could not run" line, too large)


def is_snapshot(path: Path) -> bool:
    return path.is_dir() and (SNAPSHOT_DIR.match(path.name) is not None or (path / TXT_DIR).is_dir())


def host_of(root: Path) -> str | None:
    """The machine the snapshot is of: its folder name, else its `hostname` output."""
    m = SNAPSHOT_DIR.match(root.name)
    if m and m.group("host"):
        return m.group("host")
    text = _read(root / TXT_DIR / "hostname.txt")
    lines = [ln.strip() for ln in _body(text or "").splitlines() if ln.strip()]
    return lines[0] if len(lines) == 1 else None


def parts(root: Path) -> Iterator[Part]:
    txt_names: set[str] = set()
    for f in sorted((root / TXT_DIR).glob("*.txt")) if (root / TXT_DIR).is_dir() else []:
        stem = f.name[:-4]
        txt_names.add(stem)
        if stem in NOT_READ:
            yield Part(f"{TXT_DIR}/{f.name}", "", None, NOT_READ[stem])
            continue
        if stem not in TXT_KINDS:
            continue
        text = _read(f)
        if text is None:
            yield Part(f"{TXT_DIR}/{f.name}", "", TXT_KINDS[stem], read_error(f))
            continue
        yield from _split(f"{TXT_DIR}/{f.name}", _body(text), TXT_KINDS[stem])
    for f in sorted((root / "firmware").iterdir()) if (root / "firmware").is_dir() else []:
        kind = ("mlxconfig_query" if f.name.startswith(("mlxconfig_", "mstconfig_"))
                else "flint_query" if f.name.startswith(("flint_", "mstflint_")) and f.name.endswith("_q") else None)
        text = _read(f) if kind else None
        if text is not None:
            first, _, rest = text.partition("\n")  # the command line the tool wrote before the output
            yield Part(f"firmware/{f.name}", rest if first.startswith(("mlxconfig", "mstconfig", "flint", "mstflint"))
                       else text, kind)
    ethtool_s = {f.name.removeprefix("ethtool_S_") for f in (root / "ethtool_S").glob("ethtool_S_*")} \
        if (root / "ethtool_S").is_dir() else set()
    for f in sorted((root / "ethtool_S").glob("ethtool_S_*")) if (root / "ethtool_S").is_dir() else []:
        text = _read(f)
        if text is None or text.startswith("Could not run command"):
            yield _failed(f"ethtool_S/{f.name}", "ethtool_stats", text) if text else \
                Part(f"ethtool_S/{f.name}", "", "ethtool_stats", read_error(f))
        else:
            yield Part(f"ethtool_S/{f.name}", text, "ethtool_stats")
    for f in sorted(root.glob("*.html")):
        if f.name in ("performance_tuning_analyze.html", "sr_iov.html"):
            continue
        text = _read(f)
        if text is not None:
            yield from _html_parts(f.name, text, txt_names, ethtool_s)


def _read(path: Path) -> str | None:
    try:
        return read_bounded(path, MAX_FILE_BYTES).decode("utf-8", errors="replace")
    except InputError:  # too large, or not a regular file: said by read_error()
        return None


def read_error(path: Path) -> str | None:
    try:
        read_bounded(path, MAX_FILE_BYTES)
    except InputError as exc:
        return str(exc).removeprefix(f"{path}: ")
    return None


def _failed(name: str, kind: str | None, text: str) -> Part:
    said = next((ln.strip() for ln in text.splitlines() if "Could not run" in ln), text.strip()[:200])
    return Part(name, "", kind, f"the snapshot holds no output: {said}")


def _body(text: str) -> str:
    first, _, rest = text.partition("\n")
    return rest if _INVOKED.match(first) else text


# what the tool writes instead of an output when it could not run the command (its handlers' own strings)
_TOOL_FAILURES = re.compile(r"^(Could not run.*|No interfaces were found|mlnx_qos command not found|"
                            r"Failed to retrieve mlx devices|There are no mlx devices|Failed to run the command.*)$")


def _split(name: str, text: str, kind: str | None) -> Iterator[Part]:
    """One part per device for the files that hold many; the whole text otherwise."""
    if _TOOL_FAILURES.match(text.strip()):
        yield Part(name, "", kind, f"the snapshot holds no output: {text.strip()[:200]}")
        return
    block = {"cma_roce_mode": _CMA_BLOCK, "mlnx_qos": _QOS_BLOCK}.get(kind or "")
    heads = list(block.finditer(text)) if block else []
    if not heads:
        yield Part(name, text, kind)
        return
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        body = text[head.start():end]  # the command line the tool wrote names the device: the parsers read it
        body = re.sub(r"\n-{5,}\s*\Z|\n_{5,}\s*\Z", "\n", body.rstrip() + "\n")
        if "Could not run command" in body:
            yield _failed(f"{name}#{head.group('dev')}", kind, body)
            continue
        yield Part(f"{name}#{head.group('dev')}", body.strip("\n") + "\n", kind)


def _html_parts(name: str, text: str, txt_names: set[str], ethtool_s: set[str]) -> Iterator[Part]:
    """The report's sections for what has no file of its own: `ethtool_all_interfaces` (pause settings)."""
    for m in _SECTION.finditer(text):
        section = html.unescape(m.group("name")).strip()
        if section != "ethtool_all_interfaces" or "ethtool_all_interfaces" in txt_names:
            continue
        body = html.unescape(re.sub(r"<br\s*/?>", "\n", re.sub(r"<a [^>]*>[^<]*</a>", "", m.group("body"))))
        body = re.sub(r"</?(p|td|small)>", "", body)
        heads = list(_ETHTOOL_BLOCK.finditer(body))
        for i, head in enumerate(heads):
            kind = _ETHTOOL_KINDS.get(head.group("opt") or "")
            if kind is None or (kind == "ethtool_stats" and head.group("dev") in ethtool_s):
                continue
            end = heads[i + 1].start() if i + 1 < len(heads) else len(body)
            part = body[head.end():end].split("\n____________", 1)[0].strip("\n")
            if part.startswith("Could not run command"):
                yield _failed(f"{name}#ethtool {head.group('opt')} {head.group('dev')}", kind, part)
            elif part:
                yield Part(f"{name}#ethtool {head.group('opt')} {head.group('dev')}", part + "\n", kind)
