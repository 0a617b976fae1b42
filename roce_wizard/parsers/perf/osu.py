"""OSU micro-benchmarks.

Format rules were read from the tool's sources, not guessed from samples:

OSU (``c/util/osu_util.c`` of OMB 5.x/7.x): ``# OSU MPI[-CUDA] <name> Test v<ver>`` then
``# Size<padding>Latency (us)`` / ``Bandwidth (MB/s)`` / ``Avg Latency(us)[ Min Latency(us) Max
Latency(us) Iterations]`` / ``MB/s Messages/s``; optional ``Validation`` and ``P50 Tail Lat(us)`` columns.
"""

from __future__ import annotations

import re
from typing import Any

from roce_wizard.parsers.base import Facts, ParseError, is_digits, is_elision, lines, to_int
from roce_wizard.parsers.perf.common import _strip_prompt, _to_float

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
