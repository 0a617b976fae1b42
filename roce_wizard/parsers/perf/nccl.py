"""NCCL's `NCCL_DEBUG=INFO` log and the nccl-tests result table (`all_reduce_perf` and its siblings).

Kind ``nccl_log``. What it reads (formats from real logs in NVIDIA/nccl and NVIDIA/nccl-tests issues, see
tests/data/corpus/nccl/):

- the transport NCCL chose, in order of proof: the channel lines (`Channel 00/0 : 0[0] -> 1[0] [send] via
  NET/IB/0[/GDRDMA]` or `via NET/Socket/0`), then `Using network IB|Socket|IBext_v6|…`, then the init lines
  `NET/IB : Using [0]mlx5_0:1/RoCE [1]… [RO]; OOB eth0:10.0.0.1<0>` / `NET/Socket : Using [0]eth0:10.0.0.1<0>`
  (NCCL up to 2.4 printed both init lines while it probed both transports, so an IB line outweighs a Socket one);
- per host (the `host:pid:tid [dev] NCCL INFO` prefix), so two nodes that disagree make `net` null;
- `NCCL_* set by environment to …` (the NCCL environment RW604 prints), `NCCL version`, WARN lines and
  nccl-tests' `Test NCCL failure`/`Test failure` lines;
- the result table: the column names come from its `#  size  count  type  redop  root  time  algbw  busbw
  #wrong  time …` header (older nccl-tests: no root, an `error` float instead of `#wrong`); rows of 13 fields
  with no header in sight are read with the current layout (size count type redop root, then time algbw busbw
  #wrong out-of-place and in-place), which nccl-tests has printed since 2.0; `# Out of bounds values : 0 OK`;
  `# Avg bus bandwidth : 0.81`.

Facts: `net` ("IB"/"Socket"/null), `devices` (["mlx5_0:1", …] as the chosen transport's line lists them),
`device_details[]` ({name, port, link_layer "RoCE"/"IB", sharp} or {name, address} for sockets), `link_layer`
("RoCE"/"IB"/null when mixed or unknown), `net_by_host`, `oob`, `network`, `channels` (count per transport),
`gdrdma`, `env`, `version`, `warnings`, `failures`, `ranks[]`, `hosts`, `rows[]` ({bytes, count, type, redop,
root, out_of_place{time_us, algbw_gbs, busbw_gbs, wrong|error}, in_place{…}}), `busbw_by_size` (out-of-place),
`avg_busbw_gbs`, `out_of_bounds`, `wrong_total`. A value the log does not show is null.
"""

from __future__ import annotations

import re

from roce_wizard.parsers.base import Facts, ParseError, is_digits, lines, to_int
from roce_wizard.parsers.paste import clean, strip_launchers
from roce_wizard.parsers.perf.common import _to_float, _uniq

_MSG = re.compile(r"\bNCCL (INFO|WARN) ?(.*)$")
_HOST = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?([A-Za-z0-9][\w.-]*):[0-9]+:[0-9]+\s")
_IB_USING = re.compile(r"^NET/IB\s*:\s*Using\s+(.*?)\s*(?:;\s*OOB\s+(\S+?)(?:<[0-9]+>)?)?\s*$")
_IB_DEV = re.compile(r"\[[0-9]+\]([^\s:\[\]]+):([0-9]+)/(RoCE|IB)(/SHARP)?")
_SOCK_USING = re.compile(r"^NET/Socket\s*:\s*Using\s+(.*)$")
_SOCK_DEV = re.compile(r"\[[0-9]+\]([^\s:\[\]]+):(\S*?)<[0-9]+>")
_NETWORK = re.compile(r"^Using network (\S+)")
_VIA = re.compile(r"\bvia NET/([A-Za-z]\w*)/[0-9]+(/GDRDMA)?")
_ENV = re.compile(r"^(NCCL_[A-Z0-9_]+) set by environment to (.*?)\.?\s*$")
_VERSION = re.compile(r"\bNCCL version (\S+)")
_FAILURE = re.compile(r"\bTest (?:NCCL )?failure\b.*$")
_RANK = re.compile(r"^#\s*Rank\s+([0-9]+)\s+(?:Group\s+[0-9]+\s+)?Pid\s+([0-9]+)\s+on\s+(\S+)\s+device\s+([0-9]+)")
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*([0-9]+)\s*(OK|FAILED)?")
_UNITS = re.compile(r"^#\s*\(B\)\s+\(elements\)")
# the layout nccl-tests prints for every collective since 2.0 (all_reduce_perf: redop sum, root -1)
_DEFAULT_COLUMNS = ["size", "count", "type", "redop", "root",
                    "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"]


def _net_name(raw: str) -> str:
    return "IB" if raw == "IB" or raw.startswith("IBext") else raw


def _half(columns: list[str], tokens: list[str]) -> dict:
    out: dict = {}
    for name, tok in zip(columns, tokens):
        if name == "time":
            out["time_us"] = _to_float(tok)
        elif name in ("algbw", "busbw"):
            out[f"{name}_gbs"] = _to_float(tok)
        elif name == "#wrong":
            out["wrong"] = to_int(tok)
        elif name == "error":
            out["error"] = _to_float(tok)
    return out


def _row(columns: list[str], tokens: list[str]) -> dict | None:
    if len(tokens) != len(columns) or not is_digits(tokens[0]):
        return None
    if "time" not in columns:
        return None
    first = columns.index("time")
    second = columns.index("time", first + 1) if columns.count("time") > 1 else len(columns)
    lead = dict(zip(columns[:first], tokens[:first]))
    row = {"bytes": to_int(lead.get("size")), "count": to_int(lead.get("count")), "type": lead.get("type"),
           "redop": lead.get("redop"), "root": to_int(lead["root"]) if "root" in lead else None,
           "out_of_place": _half(columns[first:second], tokens[first:second])}
    if second < len(columns):
        row["in_place"] = _half(columns[second:], tokens[second:])
    if row["type"] is not None and not re.fullmatch(r"[A-Za-z][\w]*", row["type"]):
        return None
    return row


def parse_nccl_log(text: str) -> Facts:
    text = "\n".join(s.text for s in strip_launchers(clean(text)))
    per_host: dict[str, dict] = {}
    ib_devices: list[dict] = []
    sock_devices: list[dict] = []
    oob: list[str] = []
    networks: list[str] = []
    channels: dict[str, int] = {}
    env: dict[str, str] = {}
    warnings: list[str] = []
    failures: list[str] = []
    ranks: list[dict] = []
    rows: list[dict] = []
    columns: list[str] | None = None
    facts: Facts = {"version": None, "gdrdma": None, "avg_busbw_gbs": None, "out_of_bounds": None}
    seen = False
    for ln in lines(text):
        s = ln.strip()
        if not s:
            continue
        if (m := _VERSION.search(s)):
            facts["version"] = m.group(1)
            seen = True
        if (m := _FAILURE.search(s)):
            failures.append(m.group(0).strip())
            seen = True
            continue
        m = _MSG.search(s)
        if m:
            seen = True
            level, msg = m.group(1), m.group(2).strip()
            hm = _HOST.match(ln)
            host = hm.group(1) if hm else ""
            h = per_host.setdefault(host, {"via": set(), "network": None, "ib": False, "socket": False})
            if level == "WARN":
                warnings.append(msg)
                continue
            if (mm := _IB_USING.match(msg)):
                h["ib"] = True
                for dm in _IB_DEV.finditer(mm.group(1)):
                    dev = {"name": dm.group(1), "port": int(dm.group(2)), "link_layer": dm.group(3),
                           "sharp": bool(dm.group(4))}
                    if dev not in ib_devices:
                        ib_devices.append(dev)
                if mm.group(2):
                    oob.append(mm.group(2).rstrip(":"))
            elif (mm := _SOCK_USING.match(msg)):
                h["socket"] = True
                for dm in _SOCK_DEV.finditer(mm.group(1)):
                    dev = {"name": dm.group(1), "address": dm.group(2) or None}
                    if dev not in sock_devices:
                        sock_devices.append(dev)
            elif (mm := _NETWORK.match(msg)):
                h["network"] = _net_name(mm.group(1))
                networks.append(mm.group(1))
            elif (mm := _ENV.match(msg)):
                env[mm.group(1)] = mm.group(2)
            for vm in _VIA.finditer(msg):
                net = _net_name(vm.group(1))
                h["via"].add(net)
                channels[net] = channels.get(net, 0) + 1
                if net == "IB":
                    facts["gdrdma"] = bool(facts["gdrdma"]) or bool(vm.group(2))
            continue
        if (m := _RANK.match(s)):
            ranks.append({"rank": int(m.group(1)), "pid": int(m.group(2)), "host": m.group(3),
                          "device": int(m.group(4))})
            seen = True
            continue
        if (m := _AVG.match(s)):
            facts["avg_busbw_gbs"] = _to_float(m.group(1))
            seen = True
            continue
        if (m := _OOB.match(s)):
            facts["out_of_bounds"] = {"values": int(m.group(1)), "ok": (m.group(2) == "OK") if m.group(2) else None}
            seen = True
            continue
        if s.startswith("#"):
            words = s.lstrip("#").split()
            if "size" in words and "busbw" in words and "time" in words:
                columns = words
                seen = True
            elif _UNITS.match(s):
                seen = True
            continue
        tokens = s.split()
        row = _row(columns or _DEFAULT_COLUMNS, tokens)
        if row is not None:
            rows.append(row)
            seen = True
    if not seen:
        raise ParseError("nccl_log", "no NCCL INFO/WARN line, nccl-tests table or `# Avg bus bandwidth` found")

    net_by_host: dict[str, str | None] = {}
    for host, h in per_host.items():
        if h["via"]:
            net = next(iter(h["via"])) if len(h["via"]) == 1 else None
        elif h["network"]:
            net = h["network"]
        elif h["ib"]:
            net = "IB"
        elif h["socket"]:
            net = "Socket"
        else:
            continue
        net_by_host[host] = net
    chosen = set(net_by_host.values())
    net = next(iter(chosen)) if len(chosen) == 1 else None
    facts["net"] = net if net in ("IB", "Socket") else None
    facts["net_by_host"] = net_by_host
    facts["network"] = _uniq(networks)[0] if len(_uniq(networks)) == 1 else (_uniq(networks) or None)
    details = ib_devices if facts["net"] == "IB" else sock_devices if facts["net"] == "Socket" else []
    facts["device_details"] = details
    facts["devices"] = _uniq([f"{d['name']}:{d['port']}" if "port" in d else d["name"] for d in details])
    layers = {d["link_layer"] for d in details if "link_layer" in d}
    facts["link_layer"] = next(iter(layers)) if len(layers) == 1 else None
    facts["oob"] = _uniq(oob)
    facts["channels"] = channels
    facts["env"] = env
    facts["warnings"] = warnings
    facts["failures"] = failures
    facts["ranks"] = ranks
    facts["hosts"] = _uniq([r["host"] for r in ranks] + [h for h in per_host if h])
    facts["rows"] = rows
    facts["busbw_by_size"] = {r["bytes"]: r["out_of_place"].get("busbw_gbs") for r in rows
                              if r["bytes"] is not None}
    wrong = [half["wrong"] for r in rows for half in (r["out_of_place"], r.get("in_place") or {})
             if half.get("wrong") is not None]
    facts["wrong_total"] = sum(wrong) if wrong else None
    return facts


def sniff_nccl_log(text: str) -> int:
    head = text[:200_000]
    if re.search(r"\bNCCL (?:INFO|WARN) ", head) or re.search(r"^\s*#\s*Avg bus bandwidth\s*:", head, re.MULTILINE):
        return 95
    if re.search(r"^\s*#.*\bsize\b.*\bcount\b.*\bbusbw\b", head, re.MULTILINE) or re.search(
            r"^\s*#\s*\(B\)\s+\(elements\)", head, re.MULTILINE):
        return 85
    if re.search(r"^\s*NCCL version [0-9]", head, re.MULTILINE):
        return 80
    return 0
