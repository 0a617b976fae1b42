"""Text as people paste it -> the tool outputs inside it (issue 13, classes 2 and 6). Pure text, no parsing.

Three layers, applied in this order by `sources` and `commands`:
1. terminal residue (`clean`): ANSI colours, CR/CRLF, trailing spaces, leading/trailing blank lines, a
   Markdown quote (`> `) on every line;
2. launcher prefixes (`strip_launchers`): `kubectl logs --timestamps` (RFC 3339 + space), Open MPI
   `--timestamp-output` and `--tag-output` (`[1,0]<stdout>:`), rank `[0] `, Slurm `srun -l` (`0: `),
   pdsh/clush `host: `. What a prefix names (a rank, a host) becomes the stream's label: a paste of two hosts
   is two machines' outputs and is never merged;
3. prompts (`commands`): a whole terminal session is cut at its prompt lines into one part per command; the
   command typed is kept (it names the tool: `hint_kind`) and stays the part's first line, because some
   parsers read it (`cat .../sriov_numvfs`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

# CSI (colours, cursor moves), OSC (window titles, ended by BEL or ST) and lone two-byte escapes
ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


@dataclass(frozen=True)
class Stream:
    """The lines one rank or host printed, prefixes removed; label None when no launcher named one."""
    label: str | None
    text: str


@dataclass(frozen=True)
class Command:
    """One command of a pasted session: what was typed (None: output before any prompt) and its output,
    the prompt line first."""
    command: str | None
    text: str


def clean(text: str) -> str:
    """Terminal residue off: ANSI escapes, CR/CRLF, trailing spaces, blank lines around, `> ` quoting.
    Tabs are kept (several tools' layouts are tab-separated and their parsers read them so)."""
    text = ANSI_RE.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    out = [ln.rstrip() for ln in text.split("\n")]
    while out and not out[0]:
        out.pop(0)
    while out and not out[-1]:
        out.pop()
    quoted = [ln for ln in out if ln.startswith(">")]
    # a Markdown quote: every line but a leading command line starts with `>`
    if len(quoted) >= 2 and len(quoted) >= len([ln for ln in out if ln]) - 1:
        out = [ln[2:] if ln.startswith("> ") else ln[1:] if ln.startswith(">") else ln for ln in out]
    return "\n".join(out)


# --------------------------------------------------------------------------------------- launchers

# a timestamp before everything else: kubectl/docker `--timestamps` (RFC 3339), Open MPI `--timestamp-output`
_TIMESTAMP_RES = (
    re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?(?: |$)"),
    re.compile(r"^\[?[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\]?(?=\[|\s)\s?"),
)
# (name, regex with a `label` group, how the label reads)
_LABEL_RES = (
    ("ompi-tag", re.compile(r"^\[(?:[^\]\s]*@)?(?:\d+),(?P<label>\d+)\]<std(?:out|err|diag)>: ?"), "rank {}"),
    ("rank", re.compile(r"^\[(?P<label>\d+)\](?: |$)"), "rank {}"),
    ("srun", re.compile(r"^(?P<label>\d+):(?: |$)"), "rank {}"),
    ("host", re.compile(r"^(?P<label>[A-Za-z][\w.-]*[\w]):(?: |$)"), "host {}"),
)


_IP_ONELINE_RE = re.compile(r"^[\w@.-]+(?::? <|\s+inet6?\s)")


def _strip_timestamps(lines: list[str]) -> list[str] | None:
    body = [ln for ln in lines if ln.strip()]
    for rx in _TIMESTAMP_RES:
        if len(body) >= 1 and all(rx.match(ln) for ln in body):
            return [rx.sub("", ln, count=1) if ln.strip() else ln for ln in lines]
    return None


def _labelled(lines: list[str]) -> tuple[str, list[tuple[str, str]]] | None:
    """(style, [(label, rest)]) when every non-blank line carries the same launcher prefix."""
    body = [ln for ln in lines if ln.strip()]
    if len(body) < 2:
        return None
    for style, rx, fmt in _LABEL_RES:
        matches = [rx.match(ln) for ln in body]
        if not all(matches):
            continue
        labels = [m.group("label") for m in matches]
        if style == "host":
            # `key: value` output is not a host prefix: hosts repeat (several lines each) or are named with
            # a digit (node01, f5n18); keys are mostly one-off words (PSID:, RX:, Name:)
            counts = Counter(labels)
            if not (all(n >= 2 for n in counts.values()) and len(counts) < len(labels)) and \
                    not all(re.search(r"\d", lb) for lb in counts):
                continue
        if style == "srun" and all(_IP_ONELINE_RE.match(ln[m.end():]) for m, ln in zip(matches, body)):
            continue  # `ip -o link` / `ip -o addr`: `1: lo: <LOOPBACK…>`, `2: eth0    inet …` — not ranks
        return style, [(fmt.format(m.group("label")), ln[m.end():]) for m, ln in zip(matches, body)]
    return None


def strip_launchers(text: str) -> list[Stream]:
    """The streams of a launcher's output: one per rank or host, in first-seen order; the text itself (one
    unlabelled stream) when no launcher prefix is on every line."""
    lines = text.split("\n")
    # the echoed launcher command on top (`$ pdsh -w node[01-02] ibv_devinfo`) is not prefixed: it heads
    # every stream, so each still says what it ran
    head: list[str] = []
    while lines and (not lines[0].strip() or prompt_split(lines[0]) is not None):
        head.append(lines.pop(0))
    stamped = _strip_timestamps(lines)
    if stamped is not None:
        lines = stamped
    found = _labelled(lines)
    if found is None:
        return [Stream(None, "\n".join(head + lines))]
    _style, pairs = found
    streams: dict[str, list[str]] = {}
    for label, rest in pairs:
        streams.setdefault(label, list(head)).append(rest)
    return [Stream(label, "\n".join(body)) for label, body in streams.items()]


# --------------------------------------------------------------------------------------- prompts

# a conda/venv tag before a prompt: `(base) user@h:~$ cmd`
_ENV_TAG_RE = re.compile(r"^\s*\([\w.-]+\)\s+")
# prompts that can only be prompts: `user@host:~$ `, `[user@host dir]$ `, `shell$ `, ESXi `[root@esx:~] `
# (`[RV] Reserved…` in lspci -vvv and `[hcn1:2663:0]` in UCX logs are output: a bracket with no sign after it
# is a prompt only with `user@host` inside, as ESXi's `[root@esx-01:~] ` is)
_STRONG_PROMPT_RE = re.compile(
    r"^\s*(?:\[[^\]]*\]\s*[#$]|\[[\w.-]+@[\w.-]+(?:[: ][^\]]*)?\]|[\w.-]+@[\w.-]+(?::[^\s#$]*)?\s*[#$]"
    r"|[\w.-]+:\S*\s*[#$]|[\w-]+\$)\s+(?=\S)"
)
# `$ cmd` is a prompt; `# cmd` / `#cmd` / `> cmd` only before a command we know (`# Size  Bandwidth` is OSU's)
_WEAK_PROMPT_RE = re.compile(r"^\s*(?P<sign>[#$>])\s*(?=\S)")

KNOWN_COMMANDS = frozenset({
    "esxcli", "esxcfg-nics", "esxcfg-module", "vmware", "vim-cmd", "localcli", "mlxconfig", "mst", "flint",
    "mstflint", "mlxfwmanager", "mlxup", "mlxlink", "mlxreg", "ibv_devinfo", "ibv_devices", "show_gids",
    "ibdev2netdev", "rdma", "ibstat", "ibstatus", "cma_roce_mode", "ofed_info", "ucx_info", "ethtool",
    "mlnx_qos", "dmesg", "lspci", "ip", "cat", "ls", "grep", "egrep", "cd", "echo", "sudo", "modprobe",
    "lsmod", "uname", "hostname", "ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_write_lat", "ib_read_lat",
    "ib_send_lat", "ib_atomic_bw", "ib_atomic_lat", "mpirun", "mpiexec", "srun", "pdsh", "clush", "ssh",
    "lscpu", "nvidia-smi", "show_counters", "nv", "sysctl", "devlink", "tail", "head", "awk", "sed",
})


def _first_word(command: str) -> str:
    words = command.split()
    while words and (words[0] in ("sudo", "time", "env") or "=" in words[0]):
        words = words[1:]
    return words[0].rsplit("/", 1)[-1] if words else ""


def prompt_split(line: str) -> str | None:
    """The command typed on a prompt line; None when the line is not a prompt with a command."""
    s = _ENV_TAG_RE.sub("", line, count=1)
    m = _STRONG_PROMPT_RE.match(s)
    if m:
        command = s[m.end():].strip()
        # `[0] Transfer size…` / `[   12.3] mlx5_core…` are output, not `[user@host dir]$`
        if re.match(r"^\s*\[[\d\s.,]*\]", s):
            return None
        return command or None
    m = _WEAK_PROMPT_RE.match(s)
    if m:
        command = s[m.end():].strip()
        if m.group("sign") == "$" or _first_word(command) in KNOWN_COMMANDS:
            return command
    return None


def commands(text: str) -> list[Command]:
    """The parts of a pasted session, cut at each prompt line that carries a command. Output before the
    first prompt is a part with command None; a bare prompt (nothing typed) only ends a part."""
    parts: list[Command] = []
    command: str | None = None
    body: list[str] = []

    def flush() -> None:
        if command is not None or any(ln.strip() for ln in body):
            parts.append(Command(command, "\n".join(body).strip("\n")))

    for line in text.split("\n"):
        typed = prompt_split(line)
        bare = typed is None and _is_bare_prompt(line)
        if typed is not None or bare:
            flush()
            command, body = (typed, [line]) if typed is not None else (None, [])
            continue
        body.append(line)
    flush()
    return parts


def _is_bare_prompt(line: str) -> bool:
    s = _ENV_TAG_RE.sub("", line, count=1).rstrip()
    return bool(re.fullmatch(r"\s*(?:\[[^\]]*[@:][^\]]*\]\s*[#$]?|[\w.-]+@[\w.-]+(?::\S*)?\s*[#$])", s))


# --------------------------------------------------------------------------------------- hints

# what an echoed command names; a pipeline counts only through filters that keep the tool's own lines
_HINTS: tuple[tuple[str, str], ...] = (
    (r"esxcli (?:software )?vib list", "esxi_vib_list"),
    (r"esxcli network nic list", "esxi_nic_list"),
    (r"esxcli network nic pauseparams list", "esxi_pause_params"),
    (r"esxcli network sriovnic vf list", "esxi_sriovnic_vf_list"),
    (r"esxcli network sriovnic list", "esxi_sriovnic_list"),
    (r"esxcli system module parameters list|esxcfg-module -g", "esxi_module_params"),
    (r"esxcfg-nics -l", "esxi_esxcfg_nics"),
    (r"mlxconfig\b.*\s(?:q|query)\b", "mlxconfig_query"),
    (r"mlxconfig\b.*\sset\b", "mlxconfig_set"),
    (r"mst status", "mst_status"),
    (r"(?:mst)?flint\b.*\s(?:q|query)\b", "flint_query"),
    (r"mlxfwmanager|mlxup", "mlxfwmanager"),
    (r"ibv_devinfo", "ibv_devinfo"),
    (r"show_gids", "show_gids"),
    (r"ibdev2netdev", "ibdev2netdev"),
    (r"rdma link", "rdma_link"),
    (r"rdma stat(?:istic)?", "rdma_statistic"),
    (r"ibstatus", "ibstatus"),
    (r"ibstat", "ibstat"),
    (r"cma_roce_mode", "cma_roce_mode"),
    (r"ofed_info", "ofed_info"),
    (r"ucx_info", "ucx_info"),
    (r"ethtool (?:-a|--show-pause)", "ethtool_pause"),
    (r"ethtool (?:-S|--statistics)", "ethtool_stats"),
    (r"mlnx_qos", "mlnx_qos"),
    (r"dmesg", "linux_dmesg"),
    (r"lspci\b.*\s-[a-zA-Z]*v", "lspci_vvv"),  # -v, -vv, -vvv, -nnvv: the verbose layout
    (r"lspci", "lspci_list"),
    (r"cat \S*sriov_(?:num|total)vfs", "sriov_numvfs"),
    (r"ib_(?:write|read|send|atomic)_(?:bw|lat)", "perftest"),
    (r"osu_\w+", "osu"),
)
# tools whose outputs the hints cover, so a command of theirs the hints do not name printed something else
# (`ethtool IF` settings, `ethtool -i` driver info, `ethtool -k` offloads)
_OTHER_OUTPUTS_KNOWN = frozenset({"ethtool"})
_LAUNCHERS = frozenset({"mpirun", "mpiexec", "srun", "pdsh", "clush", "ssh", "timeout", "numactl", "taskset",
                        "nohup", "watch", "kubectl", "docker", "podman", "prterun"})
_FILTERS = ("grep", "egrep", "fgrep", "head", "tail", "less", "more", "cat", "column", "sort")


def _stages(command: str) -> list[str]:
    """A pipeline's stages: split at `|` outside quotes (`egrep "A|B"` is one stage)."""
    stages, current, quote = [], [], ""
    for ch in command:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "|":
            stages.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    stages.append("".join(current).strip())
    return stages


def hint_kind(command: str | None) -> str | None:
    """The kind an echoed command names, e.g. `esxcli software vib list | grep -i mlx` -> esxi_vib_list;
    None when the command is not one we know or a pipeline stage rewrites its lines (`| awk`, `| wc -l`)."""
    if not command or re.search(r";|&&|\|\|", command):
        return None  # several commands (`a; b`, also inside pdsh's quotes): which printed what is not said
    stages = _stages(command)
    if any(_first_word(s) not in _FILTERS for s in stages[1:]):
        return None
    words = stages[0].split()
    while words and (words[0] in ("sudo", "time", "env", "exec") or ("=" in words[0] and words[0][0] != "-")):
        words.pop(0)
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    line = " ".join([program, *words[1:]])
    line = re.sub(r"\s--formatter[= ]\S+|\s--debug\b", "", line)  # esxcli's global options
    if program == "lspci" and any(re.search(r"Lnk", st) for st in stages[1:]):
        return "lspci_link"  # `lspci -s X -vv | grep Lnk`: the link lines only, not the verbose listing
    for pattern, kind in _HINTS:
        subject = line.lower() if "pauseparams" in pattern else line
        if program in _LAUNCHERS:  # `mpirun -np 2 ./osu_bw`, `pdsh -w n[1-2] ibv_devinfo`: the tool is further on
            if re.search(r"(?:\s|/)(?:" + pattern + ")", subject):
                return kind
        elif re.match(r"(?:" + pattern + r")(?:\s|$|\b)", subject):
            return kind
    return None


def tool_kinds(command: str | None) -> frozenset[str]:
    """Every kind the command's tool can print (`ethtool bond0` -> ethtool_pause, ethtool_stats): when the
    command names none of them (`hint_kind` is None), a text detected as one of them is that tool's OTHER
    output (`ethtool IF` settings are not `ethtool -S` counters), so the detection does not hold."""
    if not command:
        return frozenset()
    tool = _first_word(_stages(command)[0])
    if tool not in _OTHER_OUTPUTS_KNOWN:
        return frozenset()  # a tool whose every output the hints may not know: no ruling out
    return frozenset(kind for pattern, kind in _HINTS if _pattern_tool(pattern) == tool)


def _pattern_tool(pattern: str) -> str:
    m = re.match(r"(?:\(\?:\w+\)\?)?([\w-]+)", pattern)
    return m.group(1) if m else ""


def filtered(command: str | None) -> bool:
    """Whether the echoed command filtered the tool's lines (`| grep`): rows it dropped are unknown."""
    return bool(command) and any(_first_word(s) in ("grep", "egrep", "fgrep", "head", "tail")
                                 for s in _stages(command)[1:])


__all__ = ["ANSI_RE", "Command", "KNOWN_COMMANDS", "Stream", "clean", "commands", "filtered", "hint_kind",
           "prompt_split", "strip_launchers", "tool_kinds"]
