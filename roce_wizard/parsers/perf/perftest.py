"""perftest: ib_send_bw / ib_write_bw / ib_read_bw / ib_atomic_bw and the ``_lat`` twins.

Format rules were read from the tool's sources, not guessed from samples:

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
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from roce_wizard.parsers.base import Facts, ParseError, is_digits, is_elision, lines, to_bool, to_int
from roce_wizard.parsers.perf.common import _strip_prompt, _to_float

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
