"""Shared helpers: reading esxcli tables (human and `--formatter=csv`) and key/value blocks."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from roce_wizard.parsers.base import (
    is_elision,
    is_prompt,
    lines,
    snake,
    to_bool,
    to_int,
)

# ---------------------------------------------------------------------------------------------
# shared helpers

_DASH_ROW_RE = re.compile(r"^\s*-+(?:\s+-+)*\s*$")
_CSV_HEADER_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(?:,[A-Za-z][A-Za-z0-9_]*)+,?$")


def _prompt_host(line: str) -> str | None:
    m = re.match(r"^\s*\[?[\w.-]*@([\w.-]+)", line)
    return m.group(1) if m else None


def _norm(name: str) -> str:
    """A column or field name reduced to lowercase letters and digits: `PCI Device` == `PCIDevice`."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _camel_snake(key: str) -> str:
    """csv field names: `HVReplayCapable` -> `hv_replay_capable`, `CPUCores` -> `cpu_cores`."""
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", key)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    return snake(s)


def _blank_none(value: str | None) -> str | None:
    if value is None:
        return None
    s = value.strip()
    return s if s and s not in ("-", "N/A") else None


def _int_or_none(value: str | None) -> int | None:
    if value is None:
        return None
    m = re.fullmatch(r"\s*(-?[0-9]+)\s*(?:Mbps)?\s*", value)
    return int(m.group(1)) if m else to_int(value)


def _bool_or_none(value: str | None) -> bool | None:
    return None if value is None else to_bool(value)


def _scalar(value: str) -> Any:
    """Key/value outputs: `36` -> 36, `true` -> True, anything else the stripped string."""
    s = value.strip()
    if re.fullmatch(r"-?[0-9]+", s):
        return int(s)
    if s.lower() in ("true", "false"):
        return s.lower() == "true"
    return s


def _spans(dash_row: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"-+", dash_row)]


def _header_names(header: str, spans: list[tuple[int, int]]) -> list[str]:
    names = [n for n in re.split(r"\s{2,}", header.strip()) if n]
    if len(names) == len(spans):
        return names
    # Fall back to slicing the header by the dash runs.
    out = []
    for i, (a, _) in enumerate(spans):
        b = spans[i + 1][0] if i + 1 < len(spans) else len(header)
        out.append(header[a:b].strip())
    return out


def _cells(row: str, spans: list[tuple[int, int]]) -> list[str]:
    """Assign each word of a row to the column whose dash run it overlaps most (the last column
    runs to the end of the line); a word overlapping none goes to the nearest run."""
    words: list[list[str]] = [[] for _ in spans]
    last = len(spans) - 1
    for m in re.finditer(r"\S+", row):
        a, b = m.span()

        def fit(i: int, a: int = a, b: int = b) -> tuple[int, int]:
            s, e = spans[i]
            if i == last:
                e = max(e, b)
            overlap = min(b, e) - max(a, s)
            if overlap > 0:
                return (1, overlap)
            return (0, -(s - b if b <= s else a - e))

        words[max(range(len(spans)), key=fit)].append(m.group(0))
    return [" ".join(w) for w in words]


def _human_tables(text: str) -> list[dict[str, Any]]:
    """Every `header / dashes / rows` table in a paste: {"names": [...], "rows": [{norm: cell}]}."""
    lns = lines(text)
    tables: list[dict[str, Any]] = []
    host: str | None = None  # from the last prompt line above the table, if it names a host
    i = 0
    while i < len(lns) - 1:
        header, dash = lns[i], lns[i + 1]
        if is_prompt(header):
            host = _prompt_host(header)
        if not (header.strip() and _DASH_ROW_RE.match(dash) and not _DASH_ROW_RE.match(header)
                and not is_prompt(header)):
            i += 1
            continue
        spans = _spans(dash)
        names = _header_names(header, spans)
        rows: list[dict[str, str]] = []
        j = i + 2
        while j < len(lns):
            row = lns[j]
            if not row.strip() or is_prompt(row):
                break
            if j + 1 < len(lns) and _DASH_ROW_RE.match(lns[j + 1]):
                break  # the next table's header
            if is_elision(row):
                j += 1
                continue
            cells = _cells(row, spans)
            rows.append({_norm(n): c for n, c in zip(names, cells)})
            j += 1
        tables.append({"names": names, "norm": [_norm(n) for n in names], "rows": rows, "host": host})
        i = j
    return tables


def _csv_tables(text: str) -> list[dict[str, Any]]:
    """Every `--formatter=csv` block: a header of field names, then rows until a blank/prompt line."""
    lns = lines(text)
    tables: list[dict[str, Any]] = []
    i = 0
    while i < len(lns):
        head = lns[i].strip()
        if not _CSV_HEADER_RE.match(head):
            i += 1
            continue
        j = i + 1
        body: list[str] = []
        while j < len(lns) and lns[j].strip() and not is_prompt(lns[j]):
            body.append(lns[j].strip())
            j += 1
        reader = csv.reader(io.StringIO("\n".join([head, *body])))
        all_rows = list(reader)
        names = all_rows[0]
        if names and names[-1] == "":
            names = names[:-1]
        rows = []
        for r in all_rows[1:]:
            if not any(c.strip() for c in r):
                continue
            rows.append({_norm(n): (r[k] if k < len(r) else "") for k, n in enumerate(names)})
        tables.append({"names": names, "norm": [_norm(n) for n in names], "rows": rows, "csv": True})
        i = j
    return tables


def _records(text: str, required: tuple[str, ...]) -> tuple[list[dict[str, str]], bool]:
    """Rows of every human or csv table whose header has all `required` columns (normalised)."""
    req = [_norm(r) for r in required]
    rows: list[dict[str, Any]] = []
    found = False
    n_tables = 0
    for t in _csv_tables(text) + _human_tables(text):
        if all(r in t["norm"] for r in req):
            found = True
            rows.extend({**r, "_table": n_tables, "_host": t.get("host")} for r in t["rows"])
            n_tables += 1
    return rows, found


def _has_header(text: str, required: tuple[str, ...], forbidden: tuple[str, ...] = ()) -> bool:
    """Whether a human (header + dashes) or csv header line carries these columns."""
    req = [_norm(r) for r in required]
    forb = [_norm(f) for f in forbidden]
    lns = lines(text)
    for i, ln in enumerate(lns):
        s = ln.strip()
        if _CSV_HEADER_RE.match(s):
            names = [_norm(n) for n in s.split(",") if n]
        elif i + 1 < len(lns) and _DASH_ROW_RE.match(lns[i + 1]) and s:
            names = [_norm(n) for n in _header_names(ln, _spans(lns[i + 1]))]
        else:
            continue
        if all(r in names for r in req) and not any(f in names for f in forb):
            return True
    return False


def _key_values(text: str) -> list[tuple[str, str]]:
    """`   Key Name: value` lines, in order (prompts and elisions dropped)."""
    out = []
    for raw in lines(text):
        if not raw.strip() or is_prompt(raw) or is_elision(raw):
            continue
        m = re.match(r"^\s*([A-Za-z][A-Za-z0-9 ()/_.-]{0,60}?):(?:\s+(.*?))?\s*$", raw)
        if m:
            out.append((m.group(1).strip(), m.group(2) or ""))
    return out
