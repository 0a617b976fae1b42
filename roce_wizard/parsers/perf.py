"""Parsers for the validate-stage tools: perftest, OSU micro-benchmarks, UCX logs of an MPI run.

Kinds (DOMAIN §6):

- ``perftest``        ib_send_bw / ib_write_bw / ib_read_bw / ib_atomic_bw and the ``_lat`` twins.
- ``osu``             OSU micro-benchmarks (``# OSU MPI Latency Test v5.8`` + ``# Size ...`` table).
- ``openmpi_ucx_log`` an MPI run with UCX log lines (``... UCX  INFO  ep_cfg[0]: tag(...)``).

Format rules were read from the tools' sources, not guessed from samples:

perftest (linux-rdma/perftest ``src/perftest_parameters.[ch]``, ``src/perftest_communication.[ch]``):
  * banner ``<verb> [Bidirectional ][Post List ]BW|Latency [forwarding ][Multicast ]Test`` with verb one of
    ``Send``, ``Send_imm``, ``RDMA_Write``, ``RDMA_Write_imm``, ``RDMA_Read``, ``Atomic <op>``;
  * ``key : value`` header, two pairs per line (tab-separated as printed, space-separated once pasted);
    ``GID index`` is printed only when a GID index is in use;
  * `` local address: LID %#04x QPN %#06x PSN %#06x [RKey .. VAddr ..]`` then `` GID: %02d:..`` (16
    DECIMAL bytes, so an IPv4-mapped GID reads ``...:255:255:192:168:06:116``);
  * table header ``#bytes #iterations BW peak[<unit>] BW average[<unit>] MsgRate[Mpps]`` or
    ``#bytes #iterations t_min[usec] ... 99% percentile[usec] 99.9% percentile[usec]``;
  * bandwidth unit: ``Gb/sec`` with ``--report_gbits`` (10^9 bit), otherwise ``MiB/sec`` — which perftest
    printed as ``MB/sec`` until 2024 (commit 1d202bb "MB is for Megabytes, this is Mebibyte"): the value has
    always been bytes / 0x100000 (``format_factor = report_fmt == MBS ? 0x100000 : 125000000``).  So both
    ``MB/sec`` and ``MiB/sec`` convert with 2^20 bytes: Gb/s = value * 8 * 1.048576 / 1000.
  * errors go to stderr, interleaved with stdout (``Conflicting CPU frequency values detected`` can land
    inside the result table).

OSU (``c/util/osu_util.c`` of OMB 5.x/7.x): ``# OSU MPI[-CUDA] <name> Test v<ver>`` then
``# Size<padding>Latency (us)`` / ``Bandwidth (MB/s)`` / ``Avg Latency(us)[ Min Latency(us) Max
Latency(us) Iterations]`` / ``MB/s Messages/s``; optional ``Validation`` and ``P50 Tail Lat(us)`` columns.

UCX (openucx/ucx ``src/ucs/debug/log.c``, ``src/ucp/core/ucp_worker.c``, ``src/ucp/wireup/select.c``,
``src/ucp/core/ucp_context.c``):
  * log line ``[sec.usec] [host:pid:thread] file.c:line UCX  LEVEL <message>``;
  * used transports per endpoint configuration, at INFO level:
    ``ep_cfg[N]: tag(self/memory cma/memory rc_mlx5/mlx5_0:1); rma(...)`` (UCX <= 1.13),
    ``<ctx|0xaddr> self|intra-node|inter-node cfg#N tag(...) rma(...) am(...) ka(...)`` (UCX >= 1.14);
    (``ka`` is the keepalive lane and carries no data); with ``UCX_PROTO_INFO=y`` the same appears as
    ``| <ctx> inter-node cfg#N | ... |`` (or ``| mpi ep_cfg[N] | ... |``) protocol tables whose rows name
    ``tl/dev``, and newest releases print an ``Endpoint Config #N (..., type: inter-node)`` lane table;
  * a failed selection: ``no <criteria> transport to <peer>: tl/dev - reason, tl/dev - reason``;
  * a UCX_NET_DEVICES / UCX_TLS entry that does not exist:
    ``network device 'mlx5_0:1' is not available, please use one or more of: 'eth0'(tcp), ...``.
  A configuration that holds a shared-memory transport is intra-node (UCX's own rule in select.c), so the
  old ``ep_cfg[N]`` lines are classified that way; UCX never says "fell back to TCP": the parser reports
  what was selected for remote peers and leaves ``rdma`` None when the text does not say.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from roce_wizard.parsers.base import Facts, ParseError, Parser, is_digits, is_elision, lines, to_bool, to_int

# --------------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------------

_NUM_RE = re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$")

# A prompt a person pasted before a command (kept local: PROMPT_RE in base needs the first command char).
_PROMPT_PREFIX_RE = re.compile(
    r"^\s*(?:\[[^\]]*\]\s*[#$]|[\w.-]+@[\w.-]+(?::[^\s#$]*)?\s*[#$]|[$>]|#(?=\s))\s*"
)


def _to_float(value: str | None) -> float | None:
    if value is None:
        return None
    s = value.strip()
    if not _NUM_RE.match(s):
        return None
    try:
        return float(s)
    except ValueError:
        return None


def _strip_prompt(line: str) -> str:
    return _PROMPT_PREFIX_RE.sub("", line, count=1)


def _uniq(items: list[Any]) -> list[Any]:
    seen: list[Any] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


# --------------------------------------------------------------------------------------------------
# perftest
# --------------------------------------------------------------------------------------------------

_PT_BANNER_RE = re.compile(
    r"^\s*(?P<verb>Send_imm|Send|RDMA_Write_imm|RDMA_Write|RDMA_Read|Atomic(?:\s+(?P<atomic>[A-Z_]+))?)\s+"
    r"(?P<bidir>Bidirectional\s+)?(?:Post List\s+)?(?P<kind>BW|Latency)\s+(?:forwarding\s+)?"
    r"(?:Multicast\s+)?Test\s*$"
)
_PT_VERB = {
    "Send": "send",
    "Send_imm": "send",
    "RDMA_Write": "write",
    "RDMA_Write_imm": "write",
    "RDMA_Read": "read",
    "Atomic": "atomic",
}
_PT_BINARIES = r"ib_(?:send|write|read|atomic)_(?:bw|lat)|raw_ethernet_(?:bw|lat|burst_lat|fs_rate)"
_PT_CMD_RE = re.compile(
    r"^(?:sudo\s+(?:-\S+\s+)*)?(?:[A-Za-z_]\w*=\S*\s+)*(?:(?:time|numactl(?:\s+-\S+)*|taskset\s+\S+)\s+)*"
    r"(?:\S*/)?(?P<bin>" + _PT_BINARIES + r")(?P<args>(?:\s.*)?)$"
)
_PT_ADDR_RE = re.compile(
    r"^\s*(?P<side>local|remote)\s+address\s*:\s*LID\s+(?P<lid>\S+)\s+QPN\s+(?P<qpn>\S+)\s+PSN\s+(?P<psn>\S+)"
    r"(?P<rest>.*)$"
)
_PT_GID_RE = re.compile(r"^\s*(?P<which>M?GID)\s*:\s*(?P<gid>[0-9A-Fa-f]+(?::[0-9A-Fa-f]+)+)\s*$")
_PT_KV_RE = re.compile(r"([A-Za-z][A-Za-z0-9_ .*/\-]*?)\s*:\s*(\S+)")
_PT_HEADER_KEYS = {
    "dual-port": "dual_port",
    "device": "device",
    "number of qps": "num_qps",
    "transport type": "transport_type",
    "connection type": "connection",
    "using srq": "using_srq",
    "pcie relax order": "pcie_relax_order",
    "ibv_wr* api": "ibv_wr_api",
    "tx depth": "tx_depth",
    "rx depth": "rx_depth",
    "cq moderation": "cq_moderation",
    "mtu": "mtu",
    "link type": "link_type",
    "gid index": "gid_index",
    "gid index2": "gid_index2",
    "max inline data": "max_inline_data",
    "outstand reads": "outstand_reads",
    "rdma_cm qps": "rdma_cm",
    "data ex. method": "data_exchange",
    "numa node": "numa_node",
}
_PT_INT_KEYS = {"num_qps", "tx_depth", "rx_depth", "cq_moderation", "gid_index", "gid_index2", "numa_node",
                "outstand_reads"}
_PT_BOOL_KEYS = {"dual_port", "using_srq", "pcie_relax_order", "ibv_wr_api", "rdma_cm"}

# Column labels of the result table, as printed (RESULT_FMT* in perftest_parameters.h).
_PT_COL_RE = re.compile(
    r"#bytes|#iterations|#sl|BW peak\[[^\]]*\]|BW average\[[^\]]*\]|BW Port[0-9]\[[^\]]*\]"
    r"|MsgRate(?: Port[0-9])?\[[^\]]*\]|t_(?:min|max|typical|avg|stdev)\[[^\]]*\]"
    r"|99(?:\.9)?%(?:\s*percentile)?\[[^\]]*\]|tps average|CPU_Util\[[^\]]*\]"
)
_PT_ROW_RE = re.compile(r"^\s*[0-9]+(?:\s+[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+|inf|nan)(?:[eE][-+]?[0-9]+)?)+\s*$",
                        re.I)

_PT_WARN_RE = re.compile(
    r"^\s*(?:WARNING\b|Warning\b|Conflicting CPU frequency values detected|Requested mtu is higher"
    r"|Changing to active mtu|libibverbs: Warning|\S+: Warning:)"
)
_PT_ERR_RE = re.compile(
    r"^\s*(?:Couldn'?t\b|Could not\b|Failed\b|failed\b|Unable to\b|Error\b|ERROR\b|Problems? (?:with|in)\b"
    r"|Cannot\b|Can't\b|No IB devices? found|IB device \S+ not found|Completion with error|Bad wc"
    r"|Invalid\b|Test exited|poll CQ failed|Poll send CQ|unexpected CM|rdma_get_cm_events failed"
    r"|Perftest doesn't|No such\b|\S+: got completion with error|ibv_\w+\(?\)? failed)"
)
_PT_ERROR_SIGNATURES = (
    (re.compile(r"Unable to Connect the HCA's through the link"), 40),
    (re.compile(r"Failed to modify QP [0-9]+ to (?:INIT|RTR|RTS)"), 30),
    (re.compile(r"Couldn't connect to \S+:[0-9]+"), 25),
    (re.compile(r"Unable to open file descriptor for socket connection"), 30),
    (re.compile(r"Unable to init the socket connection"), 30),
    (re.compile(r"Couldn't (?:get device info|create QP|allocate|create CQ)"), 15),
)

# perftest options that take a value (getopt string + long options with has_arg = 1).
_PT_SHORT_WITH_ARG = set("wypdimsntuSxcqIoMrQAlDfBTLEJjKkXW")
_PT_LONG_WITH_ARG = set(
    "port ib-dev ib-port mtu size iters tx-depth qp-timeout sl gid-index connection qp vector inline_size outs "
    "tos hop_limit MGID rx-depth cq-mod atomic_type post_list duration margin source_mac dest_mac dest_ip "
    "source_ip dest_port source_port ethertype limit_bw limit_msgrate report-counters force-link remote_mac "
    "local_mac remote_ip local_ip remote_port local_port pkey_index burst_size typical_pkt_size rate_limit "
    "rate_limit_type rate_units output out_json_file latency_gap flow_label retry_count payload_file_path "
    "use_cuda use_cuda_bus_id cuda_mem_type use_rocm use_neuron use_hl use_mlu use_opencl opencl_platform_id "
    "gpu_touch mmap mmap-offset dlid tclass wait_destroy flows flows_burst reply_every vlan_pcp "
    "recv_post_list".split()
)

_MIB_BITS_PER_UNIT = 8 * 1.048576 / 1000  # one MiB/sec (2^20 bytes) in Gb/s
_BW_TO_GBPS = {"gb/sec": 1.0, "mib/sec": _MIB_BITS_PER_UNIT, "mb/sec": _MIB_BITS_PER_UNIT}


def bw_to_gbps(value: float | None, unit: str | None) -> float | None:
    """Convert a perftest bandwidth value printed in ``unit`` to Gb/s (None when the unit is unknown)."""
    if value is None or unit is None:
        return None
    factor = _BW_TO_GBPS.get(unit.strip().lower())
    return None if factor is None else value * factor


def _pt_command(line: str) -> dict[str, Any] | None:
    body = _strip_prompt(line).strip()
    m = _PT_CMD_RE.match(body)
    if not m:
        return None
    try:
        argv = shlex.split(m.group("args"))
    except ValueError:
        argv = m.group("args").split()
    cmd: dict[str, Any] = {"test": m.group("bin"), "argv": argv, "line": body, "options": {}, "server": None}
    opts: dict[str, Any] = cmd["options"]
    positional: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg.startswith("--"):
            name, eq, val = arg[2:].partition("=")
            if eq:
                opts[name] = val
            elif name in _PT_LONG_WITH_ARG and i + 1 < len(argv):
                opts[name] = argv[i + 1]
                i += 1
            else:
                opts[name] = True
        elif arg.startswith("-") and len(arg) > 1:
            flag = arg[1]
            if flag in _PT_SHORT_WITH_ARG:
                if len(arg) > 2:
                    opts[flag] = arg[2:]
                elif i + 1 < len(argv):
                    opts[flag] = argv[i + 1]
                    i += 1
            else:
                # -a, -b, -R, or a single-dash long name perftest accepts too (-report_gbits)
                opts[arg[1:]] = True
        else:
            positional.append(arg)
        i += 1
    if positional:
        cmd["server"] = positional[-1]
    return cmd


def _pt_cmd_opt(cmd: dict[str, Any] | None, *names: str) -> Any:
    if not cmd:
        return None
    for name in names:
        if name in cmd["options"]:
            return cmd["options"][name]
    return None


def _gid_ipv4(gid: str | None) -> str | None:
    """perftest prints 16 decimal bytes; an IPv4-mapped GID ends in 255:255:a:b:c:d."""
    if not gid:
        return None
    parts = gid.split(":")
    if len(parts) != 16 or not all(is_digits(p) for p in parts):
        return None
    octets = [int(p) for p in parts]
    if any(o > 255 for o in octets) or any(octets[:10]) or octets[10:12] != [255, 255]:
        return None
    return ".".join(str(o) for o in octets[12:])


def _gid_zero(gid: str | None) -> bool | None:
    if not gid:
        return None
    try:
        return all(int(p, 16) == 0 for p in gid.split(":"))
    except ValueError:
        return None


def _pt_columns(header: str) -> list[str]:
    return [re.sub(r"\s+", " ", c) for c in _PT_COL_RE.findall(header)]


def _pt_col_key(col: str) -> tuple[str, str | None]:
    """Map a result-table label to (key stem, unit as printed)."""
    unit_m = re.search(r"\[([^\]]*)\]", col)
    unit = unit_m.group(1) if unit_m else None
    name = col.split("[", 1)[0].strip()
    if col == "#bytes":
        return "bytes", None
    if col == "#iterations":
        return "iterations", None
    if col == "#sl":
        return "sl", None
    if name == "BW peak":
        return "bw_peak", unit
    if name == "BW average":
        return "bw_avg", unit
    m = re.match(r"BW Port([0-9])", name)
    if m:
        return f"bw_port{m.group(1)}", unit
    if name == "MsgRate":
        return "msg_rate", unit
    m = re.match(r"MsgRate Port([0-9])", name)
    if m:
        return f"msg_rate_port{m.group(1)}", unit
    m = re.match(r"t_(min|max|typical|avg|stdev)", name)
    if m:
        return f"t_{m.group(1)}", unit
    if name.startswith("99.9%"):
        return "p999", unit
    if name.startswith("99%"):
        return "p99", unit
    if name == "tps average":
        return "tps_avg", None
    if name == "CPU_Util":
        return "cpu_util_pct", None
    return re.sub(r"\W+", "_", name).strip("_").lower(), unit


def _pt_row(cols: list[str], values: list[str], peak_measured: bool) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for col, raw in zip(cols, values):
        stem, unit = _pt_col_key(col)
        num = _to_float(raw)
        if stem in ("bytes", "iterations", "sl"):
            row[stem] = to_int(raw)
        elif stem in ("bw_peak", "bw_avg") or stem.startswith("bw_port"):
            row[stem] = num
            gbps = bw_to_gbps(num, unit)
            if stem == "bw_peak" and not peak_measured:
                gbps = None
            row[f"{stem}_gbps"] = gbps
        elif stem.startswith("msg_rate"):
            row[f"{stem}_mpps"] = num
        elif stem.startswith("t_") or stem in ("p99", "p999"):
            suffix = "us" if (unit or "").lower() == "usec" else (unit or "raw").lower()
            row[f"{stem}_{suffix}"] = num
        else:
            row[stem] = num
    return row


def _pt_segments(ls: list[str]) -> list[tuple[int, int]]:
    """Split a paste holding several perftest runs at their banners (a command line goes with the run after it)."""
    banners = [i for i, ln in enumerate(ls) if _PT_BANNER_RE.match(ln)]
    if len(banners) <= 1:
        return [(0, len(ls))]
    starts = [0]
    for prev, cur in zip(banners, banners[1:]):
        start = cur
        for j in range(cur - 1, prev, -1):
            if _pt_command(ls[j]):
                start = j
                break
            if _PT_ROW_RE.match(ls[j]) or "#bytes" in ls[j]:
                break
        # include the dashed line right above the banner
        while start > prev + 1 and set(ls[start - 1].strip()) == {"-"}:
            start -= 1
        starts.append(start)
    ends = starts[1:] + [len(ls)]
    return list(zip(starts, ends))


def _pt_parse_segment(ls: list[str]) -> tuple[Facts, int]:
    """Parse one run; also return how many perftest-specific things were recognised."""
    recognised = 0
    facts: Facts = {
        "test": None,
        "bidirectional": None,
        "link_type": None,
        "mtu": None,
        "gid_index": None,
        "device": None,
        "connection": None,
        "transport_type": None,
        "rdma_cm": None,
        "local_gid": None,
        "remote_gid": None,
        "rows": [],
        "unit": None,
        "error": None,
        "errors": [],
        "warnings": [],
        "side": None,
        "command": None,
        "server": None,
        "force_link": None,
    }
    header: dict[str, str] = {}
    cmd: dict[str, Any] | None = None
    banner: re.Match[str] | None = None
    cols: list[str] = []
    raw_rows: list[list[str]] = []
    addresses: dict[str, dict[str, Any]] = {}
    last_side: str | None = None

    for ln in ls:
        s = ln.strip()
        if not s or is_elision(s) or set(s) <= {"-", "*", "`"}:
            continue
        if cmd is None:
            c = _pt_command(ln)
            if c:
                cmd = c
                recognised += 1
                continue
        m = _PT_BANNER_RE.match(ln)
        if m:
            if banner is None:
                banner = m
                recognised += 3
            continue
        if "Waiting for client" in s:
            facts["side"] = "server"
            recognised += 1
            continue
        if s.startswith("*") and s.endswith("*"):
            continue
        m = _PT_ADDR_RE.match(ln)
        if m:
            last_side = m.group("side")
            rest = m.group("rest")
            entry: dict[str, Any] = {"lid": m.group("lid"), "qpn": m.group("qpn"), "psn": m.group("psn")}
            for km in re.finditer(r"(RKey|VAddr|OUT|SRQn)\s+(\S+)", rest):
                entry[km.group(1).lower()] = km.group(2)
            addresses.setdefault(last_side, entry)
            recognised += 2
            continue
        m = _PT_GID_RE.match(ln)
        if m:
            if last_side is not None:
                addresses.setdefault(last_side, {}).setdefault("gid", m.group("gid"))
            recognised += 1
            continue
        if "#bytes" in s:
            found = _pt_columns(s)
            if found and not cols:
                cols = found
                recognised += 3
            continue
        if cols and _PT_ROW_RE.match(ln):
            raw_rows.append(s.split())
            continue
        if _PT_WARN_RE.match(ln):
            facts["warnings"].append(s)
            continue
        if _PT_ERR_RE.match(ln):
            facts["errors"].append(s)
            recognised += 1
            continue
        for km in _PT_KV_RE.finditer(ln):
            key = re.sub(r"\s+", " ", km.group(1).strip()).lower()
            if key in _PT_HEADER_KEYS and _PT_HEADER_KEYS[key] not in header:
                header[_PT_HEADER_KEYS[key]] = km.group(2)
                recognised += 1

    if banner is not None:
        verb = _PT_VERB[banner.group("verb").split()[0]]
        suffix = "bw" if banner.group("kind") == "BW" else "lat"
        if header.get("connection") == "RawEth":
            facts["test"] = f"raw_ethernet_{suffix}"
        else:
            facts["test"] = f"ib_{verb}_{suffix}"
        facts["bidirectional"] = bool(banner.group("bidir")) if suffix == "bw" else None
        facts["banner"] = banner.group(0).strip()
    elif cmd is not None:
        facts["test"] = cmd["test"]
    if cmd is not None:
        facts["command"] = cmd["line"]
        if facts["bidirectional"] is None and facts["test"] and facts["test"].endswith("_bw"):
            if _pt_cmd_opt(cmd, "b", "bidirectional"):
                facts["bidirectional"] = True
        force = _pt_cmd_opt(cmd, "force-link")
        facts["force_link"] = force if isinstance(force, str) else None
        facts["server"] = cmd["server"]
        if facts["side"] is None:
            facts["side"] = "client" if cmd["server"] else "server"

    for key, raw in header.items():
        if key in _PT_INT_KEYS:
            facts[key] = to_int(raw)
        elif key in _PT_BOOL_KEYS:
            facts[key] = to_bool(raw)
        elif key in ("mtu", "max_inline_data"):
            num = re.match(r"[0-9]+", raw)
            facts[key] = int(num.group(0)) if num else None
        else:
            facts[key] = raw
    if facts["device"] is None:
        dev = _pt_cmd_opt(cmd, "d", "ib-dev")
        facts["device"] = dev if isinstance(dev, str) else None
    if facts["gid_index"] is None:
        gidx = _pt_cmd_opt(cmd, "x", "gid-index")
        facts["gid_index"] = to_int(gidx) if isinstance(gidx, str) else None
    if facts["rdma_cm"] is None and cmd is not None and _pt_cmd_opt(cmd, "R", "rdma_cm"):
        facts["rdma_cm"] = True

    for side in ("local", "remote"):
        addr = addresses.get(side)
        gid = addr.get("gid") if addr else None
        facts[f"{side}_gid"] = gid
        facts[f"{side}_gid_ipv4"] = _gid_ipv4(gid)
        facts[f"{side}_gid_zero"] = _gid_zero(gid)
        if addr:
            facts[f"{side}_address"] = {k: v for k, v in addr.items() if k != "gid"}

    peak_measured = not any("BW peak won't be measured" in w for w in facts["warnings"])
    facts["peak_measured"] = peak_measured if cols and "BW peak" in " ".join(cols) else None
    if cols:
        units = [u for u in (_pt_col_key(c)[1] for c in cols) if u]
        facts["unit"] = units[0] if units else None
        facts["columns"] = cols
        facts["rows"] = [_pt_row(cols, vals, peak_measured) for vals in raw_rows]
        recognised += len(raw_rows)
    facts["error"] = facts["errors"][0] if facts["errors"] else None
    return facts, recognised


def parse_perftest(text: str) -> Facts:
    ls = lines(text)
    runs: list[Facts] = []
    total = 0
    for start, end in _pt_segments(ls):
        facts, recognised = _pt_parse_segment(ls[start:end])
        if recognised:
            runs.append(facts)
            total += recognised
    if not runs or (total < 2 and not any(r["test"] for r in runs)):
        raise ParseError("perftest", "no perftest banner, header, address, table or error line found")
    facts = dict(runs[0])
    if len(runs) > 1:
        facts["runs"] = runs
    return facts


def sniff_perftest(text: str) -> int:
    score = 0
    ls = lines(text)
    if any(_PT_BANNER_RE.match(ln) for ln in ls):
        score += 50
    if re.search(r"#bytes\s+#iterations\s+(?:#sl\s+)?(?:BW peak|t_min|t_avg)", text):
        score += 30
    if re.search(r"^\s*(?:local|remote) address\s*:\s*LID\s", text, re.M):
        score += 15
    keys = sum(1 for k in ("Link type", "rdma_cm QPs", "Data ex. method", "Max inline data", "Mtu")
               if re.search(r"^\s*" + re.escape(k) + r"\s*:", text, re.M | re.I))
    score += min(keys * 5, 15)
    if any(_pt_command(ln) for ln in ls):
        score += 20
    for rx, pts in _PT_ERROR_SIGNATURES:
        if rx.search(text):
            score += pts
    return min(score, 100)


# --------------------------------------------------------------------------------------------------
# OSU micro-benchmarks
# --------------------------------------------------------------------------------------------------

_OSU_TITLE_RE = re.compile(
    r"^\s*#\s*OSU\s+(?P<title>.*?\bTest)(?:\s+v(?P<version>[0-9][\w.\-]*))?\s*$"
)
_OSU_ROW_RE = re.compile(
    r"^\s*(?:[0-9]+\s+)?[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
    r"(?:\s+(?:[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:[eE][-+]?[0-9]+)?|Pass|Fail|N/A|-))*\s*$"
)
_OSU_COL_RE = re.compile(r"[^\s()](?:(?!\s{2})[^()])*?\s?\([^)]*\)|\S+")

# Title (accelerator marker and version removed, lower-case) -> benchmark binary (OMB 5.x - 7.x sources).
_OSU_TITLES = {
    "mpi latency test": "osu_latency",
    "mpi bandwidth test": "osu_bw",
    "mpi bi-directional bandwidth test": "osu_bibw",
    "mpi multiple bandwidth / message rate test": "osu_mbw_mr",
    "mpi multi latency test": "osu_multi_lat",
    "mpi multi-threaded latency test": "osu_latency_mt",
    "mpi multi-process latency test": "osu_latency_mp",
    "mpi latency persistent test": "osu_latency_persistent",
    "mpi bandwidth persistent test": "osu_bw_persistent",
    "mpi bi-directional bandwidth persistent test": "osu_bibw_persistent",
    "mpi init test": "osu_init",
    "mpi hello world test": "osu_hello",
    "mpi allgather latency test": "osu_allgather",
    "mpi allgatherv latency test": "osu_allgatherv",
    "mpi allreduce latency test": "osu_allreduce",
    "mpi all-to-all personalized exchange latency test": "osu_alltoall",
    "mpi all-to-allv personalized exchange latency test": "osu_alltoallv",
    "mpi all-to-allw personalized exchange latency test": "osu_alltoallw",
    "mpi barrier latency test": "osu_barrier",
    "mpi broadcast latency test": "osu_bcast",
    "mpi gather latency test": "osu_gather",
    "mpi gatherv latency test": "osu_gatherv",
    "mpi reduce latency test": "osu_reduce",
    "mpi reduce_scatter latency test": "osu_reduce_scatter",
    "mpi reduce_scatter_block latency test": "osu_reduce_scatter_block",
    "mpi scatter latency test": "osu_scatter",
    "mpi scatterv latency test": "osu_scatterv",
    "mpi non-blocking allgather latency test": "osu_iallgather",
    "mpi non-blocking allgatherv latency test": "osu_iallgatherv",
    "mpi non-blocking allreduce latency test": "osu_iallreduce",
    "mpi non-blocking all-to-all latency test": "osu_ialltoall",
    "mpi non-blocking all-to-allv personalized exchange latency test": "osu_ialltoallv",
    "mpi non-blocking all-to-allw personalized exchange latency test": "osu_ialltoallw",
    "mpi non-blocking barrier latency test": "osu_ibarrier",
    "mpi non-blocking broadcast latency test": "osu_ibcast",
    "mpi non-blocking gather latency test": "osu_igather",
    "mpi non-blocking gatherv latency test": "osu_igatherv",
    "mpi non-blocking reduce latency test": "osu_ireduce",
    "mpi non-blocking reduce_scatter latency test": "osu_ireduce_scatter",
    "mpi non-blocking reduce_scatter_block latency test": "osu_ireduce_scatter_block",
    "mpi non-blocking scatter latency test": "osu_iscatter",
    "mpi non-blocking scatterv latency test": "osu_iscatterv",
    "mpi neighborhood allgather latency test": "osu_neighbor_allgather",
    "mpi neighborhood allgatherv latency test": "osu_neighbor_allgatherv",
    "mpi neighborhood alltoall latency test": "osu_neighbor_alltoall",
    "mpi neighborhood all-to-allv latency test": "osu_neighbor_alltoallv",
    "mpi_put latency test": "osu_put_latency",
    "mpi_put bandwidth test": "osu_put_bw",
    "mpi_put bi-directional bandwidth test": "osu_put_bibw",
    "mpi_get latency test": "osu_get_latency",
    "mpi_get bandwidth test": "osu_get_bw",
    "mpi_accumulate latency test": "osu_acc_latency",
    "mpi_get_accumulate latency test": "osu_get_acc_latency",
    "mpi_fetch_and_op latency test": "osu_fop_latency",
    "mpi_compare_and_swap latency test": "osu_cas_latency",
    "openshmem put test": "osu_oshm_put",
    "openshmem get test": "osu_oshm_get",
    "openshmem put message rate test": "osu_oshm_put_mr",
    "openshmem atomic operation rate test": "osu_oshm_atomics",
    "openshmem barrier latency test": "osu_oshm_barrier",
    "openshmem broadcast latency test": "osu_oshm_broadcast",
    "openshmem collect latency test": "osu_oshm_collect",
    "openshmem fcollect latency test": "osu_oshm_fcollect",
    "openshmem reduce latency test": "osu_oshm_reduce",
}
_OSU_ACCEL_RE = re.compile(r"-(CUDA|OpenACC|ROCm|ROCM|SYCL|CXL)\b")
_OSU_BIN_RE = re.compile(r"(?:^|[\s/])(osu_[a-z_]+)\b")


def _osu_normalise_title(title: str) -> tuple[str, str | None]:
    accel_m = _OSU_ACCEL_RE.search(title)
    accel = accel_m.group(1) if accel_m else None
    norm = _OSU_ACCEL_RE.sub("", title)
    norm = re.sub(r"\s+", " ", norm).strip().lower()
    return norm, accel


def _osu_columns(header: str) -> list[str]:
    body = header.lstrip().lstrip("#").strip()
    cols: list[str] = []
    if re.match(r"Size\b", body):
        cols.append("Size")
        body = body[4:]
    cols.extend(c.strip() for c in _OSU_COL_RE.findall(body))
    return cols


def _osu_unit(col: str) -> str | None:
    m = re.search(r"\(([^)]*)\)", col)
    if m:
        return m.group(1).strip()
    if col in ("MB/s", "Messages/s"):
        return col
    return None


def _osu_key(col: str) -> str:
    s = col.lower().replace("(%)", "_pct").replace("/s", "_per_s")
    s = re.sub(r"\((us|ms|mb_per_s)\)", r"_\1", s)
    return re.sub(r"[^a-z0-9]+", "_", s).strip("_")


def _osu_parse_block(ls: list[str]) -> tuple[Facts, int]:
    recognised = 0
    facts: Facts = {"benchmark": None, "version": None, "title": None, "accelerator": None,
                    "columns": [], "rows": [], "notes": []}
    cols: list[str] = []
    have_title = False
    for ln in ls:
        s = ln.strip()
        if not s or is_elision(s):
            continue
        m = _OSU_TITLE_RE.match(ln)
        if m and not have_title:
            have_title = True
            recognised += 3
            title = m.group("title").strip()
            facts["title"] = "OSU " + title
            facts["version"] = m.group("version")
            norm, accel = _osu_normalise_title(title)
            facts["accelerator"] = accel
            facts["benchmark"] = _OSU_TITLES.get(norm)
            continue
        if s.startswith("#"):
            body = s.lstrip("#").strip()
            if re.match(r"(?:Size\b|Avg Latency)", body) and not cols:
                cols = _osu_columns(s)
                facts["columns"] = [c for c in cols if c != "Size"]
                recognised += 2
            elif body:
                facts["notes"].append(body)
            continue
        if not facts.get("command") and not _OSU_ROW_RE.match(ln) and _OSU_BIN_RE.search(ln):
            facts["command"] = _strip_prompt(ln).strip()
        if cols and _OSU_ROW_RE.match(ln):
            tokens = s.split()
            value_cols = [c for c in cols if c != "Size"]
            row: dict[str, Any] = {"bytes": None}
            if "Size" in cols:
                row["bytes"] = to_int(tokens[0])
                tokens = tokens[1:]
            if not tokens or not value_cols:
                continue
            row["value"] = _to_float(tokens[0])
            row["unit"] = _osu_unit(value_cols[0])
            values: dict[str, Any] = {}
            for col, tok in zip(value_cols, tokens):
                num: Any = to_int(tok) if is_digits(tok) and _osu_unit(col) is None else _to_float(tok)
                values[_osu_key(col)] = num if num is not None else tok
            if len(value_cols) > 1:
                row["values"] = values
            facts["rows"].append(row)
            recognised += 1
    if facts["benchmark"] is None and facts.get("command"):
        bm = _OSU_BIN_RE.search(facts["command"])
        facts["benchmark"] = bm.group(1) if bm else None
    facts["unit"] = facts["rows"][0]["unit"] if facts["rows"] else (
        _osu_unit(facts["columns"][0]) if facts["columns"] else None)
    return facts, recognised


def parse_osu(text: str) -> Facts:
    ls = lines(text)
    titles = [i for i, ln in enumerate(ls) if _OSU_TITLE_RE.match(ln)]
    bounds = [0] + titles[1:] + [len(ls)] if titles else [0, len(ls)]
    runs: list[Facts] = []
    for start, end in zip(bounds, bounds[1:]):
        facts, recognised = _osu_parse_block(ls[start:end])
        if recognised >= 2 and (facts["title"] or facts["rows"]):
            runs.append(facts)
    if not runs:
        raise ParseError("osu", "no '# OSU ... Test' title or '# Size' result table found")
    facts = dict(runs[0])
    if len(runs) > 1:
        facts["runs"] = runs
    return facts


def sniff_osu(text: str) -> int:
    score = 0
    if re.search(r"^\s*#\s*OSU\s+(?:MPI|OpenSHMEM|UPC|NCCL|RCCL|\S+).*\bTest\b", text, re.M):
        score += 60
    if re.search(r"^\s*#\s*Size\s+.*(?:Latency|Bandwidth|MB/s)", text, re.M) or re.search(
            r"^\s*#\s*Avg Latency\(us\)", text, re.M):
        score += 25
    if score and re.search(r"^\s*(?:[0-9]+\s+)?[0-9]+\.[0-9]+(?:\s|$)", text, re.M):
        score += 10
    return min(score, 95)


# --------------------------------------------------------------------------------------------------
# UCX log of an MPI run
# --------------------------------------------------------------------------------------------------

_UCX_LEVELS = "FATAL|ERROR|WARN|DIAG|INFO|DEBUG|TRACE|REQ|DATA|ASYNC|FUNC|POLL|PRINT"
_UCX_LINE_RE = re.compile(r"\bUCX\s+(?P<level>" + _UCX_LEVELS + r")\s+(?P<msg>.*)$")
_UCX_PREFIX_RE = re.compile(
    r"^\s*\[(?P<ts>[0-9]+\.[0-9]+)\]\s+\[(?P<host>[^:\]\s]+)\s*:\s*(?P<pid>[0-9]+)\s*:(?P<tid>[^\]]*)\]\s+"
    r"(?P<src>[\w.+-]+):(?P<srcline>[0-9]+)\s"
)

_RDMA_TL_RE = re.compile(r"^(?:rc|ud|dc)(?:_verbs|_mlx5|_x|_v|_gda)?$|^cm$")
_SHM_TLS = {"posix", "sysv", "xpmem", "knem", "cma", "mm"}
_ACCEL_TLS = {"cuda_copy", "cuda_ipc", "gdr_copy", "rocm_copy", "rocm_ipc", "rocm_gdr", "ze_copy", "ze_ipc",
              "ze_gdr", "gaudi_gdr"}
_CM_TLS = {"sockcm", "rdmacm", "tcp_sockcm"}
_OTHER_TLS = {"self", "tcp", "srd", "gga", "gga_mlx5", "ugni_rdma", "ugni_smsg", "ugni_udt"}
_KNOWN_TLS = (
    {"rc", "rc_verbs", "rc_mlx5", "rc_x", "rc_v", "rc_gda", "ud", "ud_verbs", "ud_mlx5", "ud_x", "ud_v",
     "dc", "dc_mlx5", "dc_x", "cm"} | _SHM_TLS | _ACCEL_TLS | _CM_TLS | _OTHER_TLS
)
_TL_DEV_RE = re.compile(
    r"(?<![\w/])(?P<tl>" + "|".join(sorted(_KNOWN_TLS, key=len, reverse=True)) + r")/(?P<dev>[A-Za-z0-9_.:\-]+)"
)
_PSEUDO_DEVS = {"memory", "memory0", "sockaddr", "cuda", "rocm", "ze", "self", "xpmem", "knem", "cma", "posix",
                "sysv", "gaudi"}
_NON_DATA_GROUPS = {"ka", "keepalive", "wireup", "cm", "failed"}
_EP_TYPE_RE = re.compile(r"\b(?P<type>self|intra-node|inter-node)\s+cfg#(?P<idx>[0-9]+)")
_EP_CFG_OLD_RE = re.compile(r"\bep_cfg\[(?P<idx>[0-9]+)\]\s*:")
_EP_TABLE_TITLE_RE = re.compile(
    r"Endpoint Config #(?P<idx>[0-9]+) \((?:[^)]*?)type: (?P<type>self|intra-node|inter-node)\)"
)
_GROUP_RE = re.compile(r"(?P<name>[A-Za-z_]+)\((?P<body>[^()]*)\)")
_NO_TL_RE = re.compile(r"\bno (?P<criteria>[\w -]+?) transport to (?P<peer>.*?):\s(?P<list>.*)$")
_UNAVAIL_RE = re.compile(
    r"\b(?P<what>network device|shared memory device|acceleration device|auxiliary device|self device|device"
    r"|transport)s? (?P<names>'[^']*'(?:,\s*'[^']*')*) (?:is|are) not available, please use one or more of:"
    r"\s*(?P<avail>.*)$"
)
_AVAIL_ITEM_RE = re.compile(r"'(?P<name>[^']*)'(?:\((?P<type>[^)]*)\))?")


_EP_CFG_CELL_RE = re.compile(r"\bep_cfg\[(?P<idx>[0-9]+)\]\s*\|")


def _classify_ep(tls: set[str]) -> str:
    """UCX's rule (wireup/select.c): a configuration holding a shared-memory transport is intra-node."""
    if "self" in tls:
        return "self"
    if tls & (_SHM_TLS | {"cuda_ipc", "rocm_ipc", "ze_ipc"}):
        return "intra-node"
    return "inter-node"


def _tl_class(tl: str) -> str:
    if tl == "self":
        return "self"
    if tl in _SHM_TLS:
        return "shm"
    if tl in _ACCEL_TLS:
        return "accel"
    if tl in _CM_TLS:
        return "cm"
    if tl == "tcp":
        return "tcp"
    if _RDMA_TL_RE.match(tl):
        return "rdma"
    return "other"


def _ucx_groups(msg: str) -> list[tuple[str, list[tuple[str, str]]]]:
    out = []
    for gm in _GROUP_RE.finditer(msg):
        pairs = [(m.group("tl"), m.group("dev")) for m in _TL_DEV_RE.finditer(gm.group("body"))]
        if pairs:
            out.append((gm.group("name").lower(), pairs))
    return out


_COMPACT_PREFIX_RE = re.compile(r"^\s*\[[0-9]+\.[0-9]+\]\s+\[[^\]]*\]\s*")
_UNUSED_ENV_RE = re.compile(r"unused (?:env|environment) variables?:\s*(?P<names>.*?)\s*(?:\(set UCX_WARN|$)")


def parse_openmpi_ucx_log(text: str) -> Facts:
    ls = lines(text)
    facts: Facts = {
        "transports": [],
        "devices": [],
        "rdma": None,
        "tcp": None,
        "errors": [],
        "warnings": [],
        "ep_configs": [],
        "unreachable": [],
        "unavailable": [],
        "available": [],
        "unused_env": [],
        "memory_domains": [],
        "fatal": [],
        "hosts": [],
        "version": None,
        "env": {},
    }
    recognised = 0
    error_lines = 0
    table: dict[str, Any] | None = None  # an open '|' table: type, index, source, tl, groups
    offered: list[str] = []
    remote_evidence = False

    def add_tl(tl: str, dev: str) -> None:
        offered.append(tl)
        if _tl_class(tl) in ("rdma", "tcp", "other") and dev not in _PSEUDO_DEVS:
            facts["devices"].append(dev)

    def add_cfg(ep_type: str, idx: int | None, groups: list[tuple[str, list[tuple[str, str]]]],
                source: str) -> None:
        nonlocal remote_evidence
        for _, pairs in groups:
            for tl, dev in pairs:
                add_tl(tl, dev)
        lanes: dict[str, list[str]] = {}
        for name, pairs in groups:
            lanes.setdefault(name, [])
            lanes[name].extend(f"{tl}/{dev}" for tl, dev in pairs)
        data_tls = _uniq([tl for name, pairs in groups if name not in _NON_DATA_GROUPS for tl, _ in pairs])
        if ep_type == "inter-node":
            remote_evidence = True
        if source in ("proto_info", "lane_table"):
            # one table describes one configuration: merge its rows
            for cfg in facts["ep_configs"]:
                if (cfg["type"], cfg["index"], cfg["source"]) == (ep_type, idx, source):
                    for name, tokens in lanes.items():
                        cfg["lanes"].setdefault(name, [])
                        cfg["lanes"][name] = _uniq(cfg["lanes"][name] + tokens)
                    cfg["data_transports"] = _uniq(cfg["data_transports"] + data_tls)
                    return
        cfg = {"index": idx, "type": ep_type, "source": source, "lanes": lanes, "data_transports": data_tls}
        if cfg not in facts["ep_configs"]:
            facts["ep_configs"].append(cfg)

    def close_table() -> None:
        nonlocal table
        groups = [(name, _uniq(pairs)) for name, pairs in table["groups"].items() if pairs] if table else []
        if table is not None and groups:
            ep_type = table["type"] or _classify_ep({tl for _, pairs in groups for tl, _ in pairs})
            add_cfg(ep_type, table["index"], groups, table["source"])
        table = None

    for ln in ls:
        s = ln.strip()
        if not s or is_elision(s):
            continue
        pm = _UCX_PREFIX_RE.match(ln)
        if pm:
            facts["hosts"].append(pm.group("host"))
        lm = _UCX_LINE_RE.search(ln)
        level = lm.group("level") if lm else None
        msg = lm.group("msg").strip() if lm else _COMPACT_PREFIX_RE.sub("", s)

        if "Assertion" in s and "failed" in s:
            facts["fatal"].append(re.sub(r"^\[[^\]]*\]\s*", "", s).strip())
            recognised += 1
        elif re.search(r"Caught signal [0-9]+|Fatal error in \w+|^Abort\([0-9]+\)", s):
            facts["fatal"].append(s)

        if level:
            recognised += 1
        if level in ("ERROR", "FATAL"):
            error_lines += 1
            facts["errors"].append(msg)
        elif level == "WARN":
            facts["warnings"].append(msg)

        for mdm in re.finditer(r"\bmd\[[0-9]+\]=(?P<md>[\w.\-]+)", msg):
            facts["memory_domains"].append(mdm.group("md"))
        if level:
            # "Version 1.10.0" (ucp_context) and "UCP version is 1.12" (ucp_worker) are both printed
            vm = re.search(r"\bversion(?: is)? ([0-9]+\.[0-9]+(?:\.[0-9]+)?)", msg, re.I)
            if vm and facts["version"] is None:
                facts["version"] = vm.group(1)
            em = re.search(r"UCX_\* env variables?:\s*(.*)$", msg)
            if em:
                for kv in em.group(1).split():
                    k, eq, v = kv.partition("=")
                    if eq and k.startswith("UCX_"):
                        facts["env"].setdefault(k, v)
            uem = _UNUSED_ENV_RE.search(msg)
            if uem:
                facts["unused_env"].extend(n.strip() for n in uem.group("names").split(",") if n.strip())

        um = _UNAVAIL_RE.search(msg)
        if um:
            recognised += 1
            what = um.group("what")
            for name in re.findall(r"'([^']*)'", um.group("names")):
                item = {"kind": what, "name": name}
                if item not in facts["unavailable"]:
                    facts["unavailable"].append(item)
            for am in _AVAIL_ITEM_RE.finditer(um.group("avail")):
                item = {"kind": what, "name": am.group("name"), "type": am.group("type")}
                if item not in facts["available"]:
                    facts["available"].append(item)
            continue

        nm = _NO_TL_RE.search(msg)
        if nm:
            recognised += 2
            entries = []
            for part in re.split(r",\s+(?=[A-Za-z_]+/)", nm.group("list")):
                tm = _TL_DEV_RE.match(part.strip())
                if not tm:
                    continue
                reason = part.strip()[tm.end():].lstrip(" -").strip() or None
                entries.append({"transport": tm.group("tl"), "device": tm.group("dev"), "reason": reason})
                add_tl(tm.group("tl"), tm.group("dev"))
            shm_unreachable = any(
                _tl_class(e["transport"]) in ("shm", "self") and "unreachable" in (e["reason"] or "").lower()
                for e in entries)
            failure = {
                "criteria": nm.group("criteria").strip(),
                "peer": nm.group("peer").strip(),
                "remote_peer": True if shm_unreachable else None,
                "transports": entries,
            }
            if failure not in facts["unreachable"]:
                facts["unreachable"].append(failure)
            if shm_unreachable:
                remote_evidence = True
            continue

        body = msg.lstrip()
        if body.startswith(("|", "+")):
            # a table: UCX_PROTO_INFO=y protocol tables, or the endpoint lane table of newer releases
            tt = _EP_TABLE_TITLE_RE.search(body)
            pt = _EP_TYPE_RE.search(body) or _EP_CFG_CELL_RE.search(body)
            if tt or pt:
                close_table()
                title = tt or pt
                ep_type = title.groupdict().get("type")
                table = {"type": ep_type, "index": int(title.group("idx")),
                         "source": "lane_table" if tt else "proto_info", "tl": None, "groups": {}}
                recognised += 2
                continue
            if table is None or body.startswith("+"):
                for m in _TL_DEV_RE.finditer(body):
                    add_tl(m.group("tl"), m.group("dev"))
                continue
            cells = [c.strip() for c in body.strip("|").split("|")]
            if table["source"] == "lane_table":
                if len(cells) >= 2 and cells[1]:
                    if cells[0] in _KNOWN_TLS:
                        table["tl"] = cells[0]
                    if table["tl"] and cells[0] in ("", table["tl"]):
                        types = {t.strip() for t in cells[3].split(",")} if len(cells) > 3 else set()
                        group = "keepalive" if types and types <= _NON_DATA_GROUPS else "lanes"
                        table["groups"].setdefault(group, []).append((table["tl"], cells[1].split()[0]))
            else:
                table["groups"].setdefault("proto", []).extend(
                    (m.group("tl"), m.group("dev")) for m in _TL_DEV_RE.finditer(body))
            continue
        close_table()

        em2 = _EP_TYPE_RE.search(msg)
        om = _EP_CFG_OLD_RE.search(msg)
        groups = _ucx_groups(msg)
        if em2 and groups:
            add_cfg(em2.group("type"), int(em2.group("idx")), groups, "cfg")
            recognised += 2
            continue
        if om and groups:
            ep_type = _classify_ep({tl for _, pairs in groups for tl, _ in pairs})
            add_cfg(ep_type, int(om.group("idx")), groups, "ep_cfg")
            recognised += 2
            continue

        # any other UCX line naming tl/dev pairs: offered, endpoint type unknown
        if level:
            for m in _TL_DEV_RE.finditer(msg):
                add_tl(m.group("tl"), m.group("dev"))
        if re.search(r"\bucp_\w+|\buct_\w+", s):
            recognised += 1

    close_table()
    if not recognised:
        raise ParseError("openmpi_ucx_log", "no UCX log line, endpoint configuration or ucp_/uct_ reference found")

    remote_tls = _uniq([tl for cfg in facts["ep_configs"] if cfg["type"] == "inter-node"
                        for tl in cfg["data_transports"]])
    if remote_tls:
        facts["rdma"] = any(_tl_class(tl) == "rdma" for tl in remote_tls)
        facts["tcp"] = "tcp" in remote_tls
    elif remote_evidence:
        facts["rdma"] = False
        facts["tcp"] = False
    facts["remote_transports"] = remote_tls
    facts["transports"] = _uniq(offered)
    facts["devices"] = _uniq(facts["devices"])
    facts["memory_domains"] = _uniq(facts["memory_domains"])
    facts["hosts"] = _uniq(facts["hosts"])
    facts["unused_env"] = _uniq(facts["unused_env"])
    facts["error_lines"] = error_lines
    facts["errors"] = _uniq(facts["errors"])
    facts["warnings"] = _uniq(facts["warnings"])
    facts["fatal"] = _uniq(facts["fatal"])
    if re.search(r"^\s*#\s*OSU\s", text, re.M):
        try:
            facts["osu"] = parse_osu(text)
        except ParseError:
            pass
    return facts


def sniff_openmpi_ucx_log(text: str) -> int:
    score = 0
    ucx_lines = len(re.findall(r"\bUCX\s+(?:" + _UCX_LEVELS + r")\s", text))
    if ucx_lines:
        score += 50
        if ucx_lines >= 3:
            score += 10
    if re.search(r"\bep_cfg\[[0-9]+\]\s*[:|]|\b(?:self|intra-node|inter-node)\s+cfg#[0-9]+|\bno [\w -]+ transport to\s"
                 r"|Endpoint Config #[0-9]+ \(.*type: (?:self|intra-node|inter-node)\)", text):
        score += 40
    if re.search(r"^\s*\[[0-9]+\.[0-9]+\]\s+\[[^\]]+:\s*[0-9]+\s*:[^\]]*\]\s+[\w.+-]+:[0-9]+\s", text, re.M):
        score += 10
    if score and re.search(r"\bucp_\w+|\buct_\w+", text):
        score += 10
    return min(score, 100)


# --------------------------------------------------------------------------------------------------
# ucx_info -c: the configuration a UCX process gets here (defaults < $prefix/etc/ucx/ucx.conf < env)
# --------------------------------------------------------------------------------------------------

_UCX_CONF_RE = re.compile(r"^\s*(UCX_[A-Z0-9_]+)=(.*?)\s*$")


def parse_ucx_config(text: str) -> Facts:
    """``ucx_info -c`` (or a ucx.conf): ``UCX_NAME=value`` lines -> ``config{name: value}``.

    ucx_info prints every variable, one per line, with its value as the process would get it; a
    config file holds the same lines plus comments and ``[section]`` headers, which are skipped."""
    config: dict[str, str] = {}
    for ln in lines(text):
        m = _UCX_CONF_RE.match(_strip_prompt(ln))
        if m:
            config[m.group(1)] = m.group(2)
    if not config:
        raise ParseError("ucx_config", "no UCX_NAME=value line found")
    return {"config": config}


def sniff_ucx_config(text: str) -> int:
    hits = len(re.findall(r"^\s*UCX_[A-Z0-9_]+=", text, re.M))
    return min(100, 30 + 10 * hits) if hits >= 3 else 0


PARSERS: dict[str, Parser] = {
    "ucx_config": Parser("ucx_config", parse_ucx_config, sniff_ucx_config,
                         "ucx_info -c: UCX's effective configuration (UCX_NAME=value lines)"),
    "perftest": Parser(
        "perftest", parse_perftest, sniff_perftest,
        "perftest ib_{send,write,read,atomic}_{bw,lat} output (client or server side)",
    ),
    "osu": Parser("osu", parse_osu, sniff_osu, "OSU micro-benchmarks output"),
    "openmpi_ucx_log": Parser(
        "openmpi_ucx_log", parse_openmpi_ucx_log, sniff_openmpi_ucx_log,
        "MPI run output with UCX log lines (UCX_LOG_LEVEL=info)",
    ),
}
