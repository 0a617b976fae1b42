"""UCX: the log lines of an MPI run over UCX (``openmpi_ucx_log``) and ``ucx_info -c`` (``ucx_config``).

Format rules were read from the tool's sources, not guessed from samples:

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
from typing import Any

from roce_wizard.parsers.base import Facts, ParseError, is_elision, lines
from roce_wizard.parsers.perf.common import _strip_prompt, _uniq
from roce_wizard.parsers.perf.osu import parse_osu

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
