"""ESXi host outputs: esxcli tables (human and `--formatter=csv`), esxcfg-*, vim-cmd.

Human esxcli tables are a header line, a row of dashes whose runs give each column's width, then
rows padded to those widths (text left-aligned, numbers and booleans right-aligned, empty cells
blank).  Cells are therefore read by position against the dash runs, never by splitting on
whitespace.  The csv formatter prints a header of field names with the spaces removed, one row per
record, every line ending with a trailing comma, and quotes values containing commas; fields are
read by header name, never by position (their order differs from the human table).
"""

from __future__ import annotations

import csv
import io
import re
import shlex
from typing import Any

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    Parser,
    is_elision,
    is_prompt,
    lines,
    snake,
    to_bool,
    to_int,
)
from roce_wizard.parsers.esxi_collapsed import collapsed_params

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


# ---------------------------------------------------------------------------------------------
# esxcli network nic list / esxcli network sriovnic list / esxcfg-nics -l


def _nic_from_record(r: dict[str, str]) -> dict[str, Any]:
    link = r.get("linkstatus", r.get("link"))
    return {
        "name": _blank_none(r.get("name")),
        "pci": _blank_none(r.get("pcidevice", r.get("pci"))),
        "driver": _blank_none(r.get("driver")),
        "admin": _blank_none(r.get("adminstatus")),
        "link": _blank_none(link),
        "speed_mbps": _int_or_none(r.get("speed")),
        "duplex": _blank_none(r.get("duplex")),
        "mac": _blank_none(r.get("macaddress")),
        "mtu": _int_or_none(r.get("mtu")),
        "description": _blank_none(r.get("description")),
    }


def _grep_rows(text: str, row_re: re.Pattern[str]) -> tuple[list[re.Match[str]], int]:
    """Rows of a table pasted without its header (`esxcli … | grep vmnic`): the matching lines, and how many
    output lines there were (prompts, blanks and elisions left out)."""
    body = [ln for ln in lines(text) if ln.strip() and not is_prompt(ln) and not is_elision(ln)]
    return [m for m in (row_re.match(ln) for ln in body) if m], len(body)


# `esxcli network nic list` row: name, PCI, driver, admin, link, speed, duplex, MAC, MTU, description
_NIC_ROW_RE = re.compile(
    r"^\s*(?P<name>\S+)\s+(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]|Pseudo)\s+(?P<driver>\S+)\s+"
    r"(?P<admin>Up|Down)\s+(?P<link>Up|Down)\s+(?P<speed>[0-9]+)\s+(?P<duplex>Full|Half)\s+"
    r"(?P<mac>(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2})\s+(?P<mtu>[0-9]+)\s*(?P<description>.*?)\s*$"
)


def parse_esxi_nic_list(text: str) -> Facts:
    rows, found = _records(text, ("Name", "PCI Device", "Driver", "MAC Address", "MTU"))
    if not found:
        matches, _ = _grep_rows(text, _NIC_ROW_RE)
        if not matches:
            raise ParseError("esxi_nic_list", "no `Name  PCI Device  Driver ... MTU` table (or csv) found")
        # header-less (grep-filtered): the rows are read by their shape; NICs the filter dropped are unknown
        return {"nics": [_nic_from_record({**m.groupdict(), "pcidevice": m["pci"], "linkstatus": m["link"],
                                           "adminstatus": m["admin"], "macaddress": m["mac"]})
                         for m in matches], "header": False}
    return {"nics": [_nic_from_record(r) for r in rows if r.get("name")]}


def sniff_esxi_nic_list(text: str) -> int:
    if _has_header(text, ("Name", "PCI Device", "Driver", "Admin Status", "Link Status", "MAC Address")):
        return 90
    matches, total = _grep_rows(text, _NIC_ROW_RE)
    return round(60 * len(matches) / total) if matches else 0


def parse_esxi_sriovnic_list(text: str) -> Facts:
    rows, found = _records(text, ("Name", "PCI Device", "Driver", "MAC Address"))
    if not found:
        raise ParseError("esxi_sriovnic_list", "no `Name  PCI Device  Driver  Link ...` table (or csv) found")
    return {"nics": [_nic_from_record(r) for r in rows if r.get("name")]}


def sniff_esxi_sriovnic_list(text: str) -> int:
    if _has_header(text, ("Name", "PCI Device", "Driver", "Link", "MAC Address"), ("Admin Status", "Link Status")):
        return 85
    return 0


_ESXCFG_HEADER_RE = re.compile(r"^\s*Name\s+PCI\s+Driver\s+Link\s+Speed\s+Duplex\s+MAC Address\s+MTU\s+Description\s*$")
_ESXCFG_ROW_RE = re.compile(
    r"^\s*(?P<name>\S+)\s+(?P<pci>\S+)\s+(?P<driver>\S+)\s+(?P<link>Up|Down)\s+"
    r"(?P<speed>[0-9]+)(?:Mbps)?\s+(?P<duplex>Full|Half|\S+)\s+(?P<mac>(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2})\s+"
    r"(?P<mtu>[0-9]+)\s+(?P<desc>.*?)\s*$"
)


def parse_esxi_esxcfg_nics(text: str) -> Facts:
    nics = []
    header = False
    for raw in lines(text):
        if _ESXCFG_HEADER_RE.match(raw):
            header = True
            continue
        m = _ESXCFG_ROW_RE.match(raw)
        if not m or is_prompt(raw):
            continue
        nics.append({
            "name": m["name"],
            "pci": m["pci"],
            "driver": m["driver"],
            "admin": None,  # esxcfg-nics prints no admin status
            "link": m["link"],
            "speed_mbps": int(m["speed"]),
            "duplex": m["duplex"],
            "mac": m["mac"],
            "mtu": int(m["mtu"]),
            "description": m["desc"] or None,
        })
    if not nics and not header:
        raise ParseError("esxi_esxcfg_nics", "no `esxcfg-nics -l` header or rows found")
    return {"nics": nics}


def sniff_esxi_esxcfg_nics(text: str) -> int:
    if any(_ESXCFG_HEADER_RE.match(ln) for ln in lines(text)):
        return 90
    if any(re.match(r"^\s*vmnic[0-9]+\s", ln) and re.search(r"\s[0-9]+Mbps\s", ln) for ln in lines(text)):
        return 50
    return 0


# ---------------------------------------------------------------------------------------------
# esxcli software vib list / install


# `esxcli software vib list` row: the acceptance level is a closed set, which makes a header-less row
# recognisable; ESXi 8 adds a Platforms column after the install date
_VIB_ROW_RE = re.compile(
    r"^\s*(?P<name>\S+)\s+(?P<version>\S+)\s+(?P<vendor>\S+)\s+"
    r"(?P<acceptancelevel>VMwareCertified|VMwareAccepted|PartnerSupported|CommunitySupported)"
    r"(?:\s+(?P<installdate>[0-9]{4}-[0-9]{2}-[0-9]{2}))?(?:\s+(?P<platforms>\S+))?\s*$"
)


def parse_esxi_vib_list(text: str) -> Facts:
    rows, found = _records(text, ("Name", "Version", "Vendor"))
    if not found:
        matches, _ = _grep_rows(text, _VIB_ROW_RE)
        if not matches:
            raise ParseError("esxi_vib_list", "no `Name  Version  Vendor  Acceptance Level` table (or csv) found")
        # header-less (grep-filtered): VIBs the filter dropped are unknown, not absent
        rows = [{k: v or "" for k, v in m.groupdict().items()} for m in matches]
    vibs = []
    for r in rows:
        if not r.get("name"):
            continue
        vib = {
            "name": r["name"],
            "version": _blank_none(r.get("version")),
            "vendor": _blank_none(r.get("vendor")),
            "acceptance": _blank_none(r.get("acceptancelevel")),
            "install_date": _blank_none(r.get("installdate")),
        }
        if r.get("platforms"):
            vib["platforms"] = r["platforms"]
        vibs.append(vib)
    return {"vibs": vibs} if found else {"vibs": vibs, "header": False}


def sniff_esxi_vib_list(text: str) -> int:
    if _has_header(text, ("Name", "Version", "Vendor", "Acceptance Level")):
        return 90
    matches, total = _grep_rows(text, _VIB_ROW_RE)
    return round(60 * len(matches) / total) if matches else 0


def _vib_ids(value: str | None) -> list[str]:
    if not value:
        return []
    return [v for v in re.split(r"[,\s]+", value.strip().strip("[]")) if v]


def parse_esxi_vib_install(text: str) -> Facts:
    kv: dict[str, str] = {}
    rows, found = _records(text, ("Message", "RebootRequired"))
    if found and rows:
        r = rows[0]
        kv = {"message": r.get("message", ""), "rebootrequired": r.get("rebootrequired", ""),
              "vibsinstalled": r.get("vibsinstalled", ""), "vibsremoved": r.get("vibsremoved", ""),
              "vibsskipped": r.get("vibsskipped", "")}
    else:
        for key, value in _key_values(text):
            kv.setdefault(_norm(key), value)
    error = None
    m = re.search(r"^\s*\[(\w+(?:Error|Exception))\]\s*$", text, re.M)
    if m:
        error = m.group(1)
    if "message" not in kv and "rebootrequired" not in kv and error is None:
        raise ParseError("esxi_vib_install", "no `Installation Result` block found")
    message = kv.get("message") or None
    if error and not message:
        # The error text follows the `[SomeError]` line.
        after = text[m.end():].strip().splitlines() if m else []
        message = " ".join(s.strip() for s in after if s.strip() and not is_prompt(s)) or None
    return {
        "message": message,
        "reboot_required": _bool_or_none(kv.get("rebootrequired")),
        "vibs_installed": _vib_ids(kv.get("vibsinstalled")),
        "vibs_removed": _vib_ids(kv.get("vibsremoved")),
        "vibs_skipped": _vib_ids(kv.get("vibsskipped")),
        "error": error,
    }


def sniff_esxi_vib_install(text: str) -> int:
    t = text
    if re.search(r"^\s*(Installation|Removal) Result\s*$", t, re.M) and "Reboot Required:" in t:
        return 95
    if re.search(r"^\s*VIBs Installed:", t, re.M) and "Reboot Required:" in t:
        return 85
    if _has_header(t, ("Message", "RebootRequired", "VIBsInstalled")):
        return 90
    if re.search(r"^\s*\[\w+(?:Error|Exception)\]\s*$", t, re.M) and re.search(r"\bVIB\b|software vib", t):
        return 60
    return 0


# ---------------------------------------------------------------------------------------------
# esxcli system module parameters list / esxcfg-module -g


def parse_options_string(s: str) -> dict[str, str | None]:
    """`pfctx=0x08 pfcrx=0x08 max_vfs=0,0,8,7` -> {"pfctx": "0x08", ...}, order preserved.

    A bare word (no `=`) maps to None so that ``format_options_string`` gives it back unchanged.
    """
    s = (s or "").strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        s = s[1:-1]
    try:
        tokens = shlex.split(s)
    except ValueError:
        tokens = s.split()
    out: dict[str, str | None] = {}
    for tok in tokens:
        if "=" in tok:
            k, v = tok.split("=", 1)
            out[k] = v
        else:
            out[tok] = None
    return out


def format_options_string(params: dict[str, Any]) -> str:
    """Inverse of ``parse_options_string``: `k=v` words joined by one space, in dict order."""
    words = []
    for k, v in params.items():
        if v is None:
            words.append(k)
            continue
        v = str(v)
        words.append(f"{k}={shlex.quote(v)}" if (not v or re.search(r"\s|['\"]", v)) else f"{k}={v}")
    return " ".join(words)


_ESXCFG_MODULE_RE = re.compile(r"^\s*(\S+)\s+enabled\s*=\s*([0-9]+)\s+options\s*=\s*(['\"])(.*)\3\s*$")
_MODULE_ARG_RE = re.compile(r"(?:parameters\s+list|esxcfg-module\s+-g)\b.*?(?:-m\s+|--module[= ]|-g\s+)(\S+)")
# A value a document put in place of the real one (`max_vfs=<value>`, `<N>`): not any host's setting.
_PLACEHOLDER_RE = re.compile(r"^<[^<>]*>$")
def parse_esxi_module_params(text: str) -> Facts:
    """`esxcli system module parameters list -m M` (table, csv or collapsed) or `esxcfg-module -g M`.

    Several `esxcfg-module -g` lines (one per module) are kept apart in `modules`; the top-level
    `module`/`params` are the first module's. A placeholder value (`max_vfs=<value>`) is listed in
    `placeholders` and left out of `params`: it is no host's setting."""
    modules: list[dict[str, Any]] = []
    for raw in lines(text):
        m = _ESXCFG_MODULE_RE.match(raw)
        if m:
            options = parse_options_string(m.group(4))
            modules.append({
                "module": m.group(1), "enabled": m.group(2) == "1", "options_string": m.group(4),
                "params": {k: ("" if v is None else v) for k, v in options.items()
                           if v is None or not _PLACEHOLDER_RE.match(v)},
                "placeholders": [k for k, v in options.items() if v is not None and _PLACEHOLDER_RE.match(v)],
            })
    params: dict[str, str] = {}
    unreadable: list[str] = []
    rows, table = _records(text, ("Name", "Type", "Value"))
    if table:
        for r in rows:
            name, value = _blank_none(r.get("name")), (r.get("value") or "").strip()
            if name and value:  # an empty Value means "not set": not a parameter of the string
                params.setdefault(name, value)
    else:
        params, unreadable, table = collapsed_params(text)
    if not modules and not table:
        raise ParseError("esxi_module_params",
                         "no `Name  Type  Value  Description` table, csv, or esxcfg-module -g line")
    if modules:
        first = modules[0]
        facts: dict[str, Any] = {"module": first["module"], "params": {**params, **first["params"]},
                                 "options_string": first["options_string"], "enabled": first["enabled"]}
        if first["placeholders"]:
            facts["placeholders"] = first["placeholders"]
        if len(modules) > 1:
            facts["modules"] = modules
        return facts
    module = None
    for raw in lines(text):
        m = _MODULE_ARG_RE.search(raw)
        if m:
            module = m.group(1).strip("'\"")
            break
    facts = {"module": module, "params": params}
    if unreadable:
        facts["unreadable"] = unreadable
    if any(is_elision(ln) for ln in lines(text)):
        facts["elided"] = True  # an author left rows out: a parameter not shown is unknown, not unset
    return facts


def sniff_esxi_module_params(text: str) -> int:
    if any(_ESXCFG_MODULE_RE.match(ln) for ln in lines(text)):
        return 90
    if _has_header(text, ("Name", "Type", "Value", "Description")):
        return 85
    if collapsed_params(text)[2]:
        return 70
    return 0


# ---------------------------------------------------------------------------------------------
# esxcli network nic pauseParams list


def parse_esxi_pause_params(text: str) -> Facts:
    rows, found = _records(text, ("NIC", "Pause RX", "Pause TX"))
    if not found:
        raise ParseError("esxi_pause_params", "no `NIC  Pause Params Supported  Pause RX  Pause TX` table found")
    nics = []
    for r in rows:
        if not r.get("nic"):
            continue
        nics.append({
            "name": r["nic"],
            "pause_rx": _bool_or_none(r.get("pauserx")),
            "pause_tx": _bool_or_none(r.get("pausetx")),
            "autoneg": _bool_or_none(r.get("autonegotiation")),
            "supported": _bool_or_none(r.get("pauseparamssupported")),
            # several outputs pasted together: which one (0-based) and the host its prompt named
            "block": r["_table"],
            "host": r["_host"],
        })
    return {"nics": nics}


def sniff_esxi_pause_params(text: str) -> int:
    return 95 if _has_header(text, ("NIC", "Pause RX", "Pause TX")) else 0


# ---------------------------------------------------------------------------------------------
# esxcli system settings advanced list -o <option>


def parse_esxi_power_policy(text: str) -> Facts:
    # One record per option: csv rows, or `Path:`-led blocks of the human output.  Several options
    # pasted (a full `advanced list`): the CPU policy's record, else the first.
    rows, found = _records(text, ("Path", "StringValue"))
    records: list[dict[str, str]] = [dict(r) for r in rows] if found else []
    if not records:
        for key, value in _key_values(text):
            k = _norm(key)
            if k == "path" or not records:
                records.append({})
            records[-1].setdefault(k, value)
    records = [r for r in records if "path" in r]
    kv = next((r for r in records if r["path"].strip() == "/Power/CpuPolicy"), records[0] if records else {})
    if "path" not in kv:
        raise ParseError("esxi_power_policy", "no `Path:` / `String Value:` block found")
    typ = (kv.get("type") or "").strip().lower() or None
    if typ == "integer":
        value: Any = _int_or_none(kv.get("intvalue"))
        default: Any = _int_or_none(kv.get("defaultintvalue"))
    else:
        value = kv.get("stringvalue", "").strip() if "stringvalue" in kv else None
        default = kv.get("defaultstringvalue", "").strip() if "defaultstringvalue" in kv else None
    return {
        "path": kv["path"].strip(),
        "type": typ,
        "value": value,
        "default": default,
        "int_value": _int_or_none(kv.get("intvalue")),
        "description": (kv.get("description") or "").strip() or None,
    }


def sniff_esxi_power_policy(text: str) -> int:
    if re.search(r"^\s*Path:\s*/Power/CpuPolicy\s*$", text, re.M):
        return 95
    if re.search(r"^\s*Path:\s*/", text, re.M) and re.search(r"^\s*Default String Value:", text, re.M):
        return 70
    if _has_header(text, ("Path", "StringValue", "DefaultStringValue")):
        return 90 if "/Power/CpuPolicy" in text else 70
    return 0


# ---------------------------------------------------------------------------------------------
# esxcli system stats uptime get


def _lone_integers(text: str) -> tuple[list[int], list[str]]:
    values: list[int] = []
    commands: list[str] = []
    for raw in lines(text):
        s = raw.strip()
        if not s:
            continue
        if re.fullmatch(r"-?[0-9]+", s):
            values.append(int(s))
            continue
        if is_prompt(raw) or re.match(r"^(sudo\s+)?(esxcli|cat|vim-cmd)\s", s) or s.startswith("#"):
            commands.append(s)
            continue
        if re.fullmatch(r"Value|-+", s):  # `esxcli --formatter=csv` header-less variants
            continue
        return [], commands
    return values, commands


def parse_esxi_uptime(text: str) -> Facts:
    values, _ = _lone_integers(text)
    if len(values) != 1:
        raise ParseError("esxi_uptime", "expected one integer (microseconds since boot)")
    return {"uptime_us": values[0]}


def sniff_esxi_uptime(text: str) -> int:
    values, commands = _lone_integers(text)
    if len(values) != 1 or values[0] <= 10**6:
        return 0
    if any("uptime" in c for c in commands):
        return 30
    return 1


# ---------------------------------------------------------------------------------------------
# vim-cmd hostsvc/hostsummary


def _vmodl_value(text: str, key: str) -> str | None:
    m = re.search(r"^\s*" + re.escape(key) + r"\s*=\s*(\"(?:[^\"\\]|\\.)*\"|<unset>|[^,\s]+)\s*,?\s*$", text, re.M)
    if not m:
        return None
    v = m.group(1)
    if v == "<unset>":
        return None
    return v[1:-1] if v.startswith('"') else v


def parse_esxi_host_summary(text: str) -> Facts:
    if not re.search(r"\(vim\.host\.Summary\)|rebootRequired\s*=|bootTime\s*=", text):
        raise ParseError("esxi_host_summary", "no vim.host.Summary dump found")
    rr = _vmodl_value(text, "rebootRequired")
    mm = _vmodl_value(text, "inMaintenanceMode")
    return {
        "reboot_required": _bool_or_none(rr),
        "boot_time": _vmodl_value(text, "bootTime"),
        "uuid": _vmodl_value(text, "uuid"),
        "in_maintenance_mode": _bool_or_none(mm),
        "connection_state": _vmodl_value(text, "connectionState"),
        "power_state": _vmodl_value(text, "powerState"),
        "vendor": _vmodl_value(text, "vendor"),
        "model": _vmodl_value(text, "model"),
        "product": _vmodl_value(text, "fullName"),
    }


def sniff_esxi_host_summary(text: str) -> int:
    if "(vim.host.Summary)" in text:
        return 95
    if re.search(r"^\s*rebootRequired\s*=\s*(true|false)", text, re.M):
        return 50
    return 0


# ---------------------------------------------------------------------------------------------
# esxcli hardware cpu global get

_CPU_KEYS = {
    "cpupackages": "cpu_packages",
    "cpucores": "cpu_cores",
    "cputhreads": "cpu_threads",
    "hyperthreadingactive": "hyperthreading_active",
    "hyperthreadingsupported": "hyperthreading_supported",
    "hyperthreadingenabled": "hyperthreading_enabled",
    "hvsupport": "hv_support",
    "hvreplaycapable": "hv_replay_capable",
    "hvreplaydisabledreasons": "hv_replay_disabled_reasons",
}


def parse_esxi_cpu_global(text: str) -> Facts:
    facts: dict[str, Any] = {}
    csv_tables = [t for t in _csv_tables(text) if "hvsupport" in t["norm"] and t["rows"]]
    if csv_tables:
        t = csv_tables[0]
        for name in t["names"]:
            n = _norm(name)
            facts[_CPU_KEYS.get(n, _camel_snake(name))] = _scalar(t["rows"][0].get(n, ""))
    else:
        for key, value in _key_values(text):
            facts[_CPU_KEYS.get(_norm(key), snake(key))] = _scalar(value)
    if "hv_support" not in facts and "cpu_packages" not in facts:
        raise ParseError("esxi_cpu_global", "no `CPU Packages:` / `HV Support:` lines found")
    if not isinstance(facts.get("hv_support"), int):
        facts["hv_support"] = None
    return facts


def sniff_esxi_cpu_global(text: str) -> int:
    has_hv = bool(re.search(r"^\s*HV Support:\s*[0-9]", text, re.M))
    if has_hv and re.search(r"^\s*CPU Packages:", text, re.M):
        return 95
    if has_hv:
        return 60
    if _has_header(text, ("HVSupport", "CPUPackages")):
        return 90
    return 0


# ---------------------------------------------------------------------------------------------
# esxcli network sriovnic vf list -n vmnicN


def parse_esxi_sriovnic_vf_list(text: str) -> Facts:
    rows, found = _records(text, ("VF ID", "Active", "PCI Address"))
    if not found:
        raise ParseError("esxi_sriovnic_vf_list", "no `VF ID  Active  PCI Address  Owner World ID` table found")
    vfs = []
    for r in rows:
        vf_id = _int_or_none(r.get("vfid"))
        if vf_id is None:
            continue
        vfs.append({
            "vf_id": vf_id,
            "active": _bool_or_none(r.get("active")),
            "pci": _blank_none(r.get("pciaddress")),
            "owner_world_id": _int_or_none(_blank_none(r.get("ownerworldid"))),
        })
    nic = None
    m = re.search(r"sriovnic\s+vf\s+list\b.*?(?:-n\s*|--nic-name[= ])(\S+)", text)
    if m:
        nic = m.group(1)
    return {"nic": nic, "vfs": vfs}


def sniff_esxi_sriovnic_vf_list(text: str) -> int:
    return 95 if _has_header(text, ("VF ID", "Active", "PCI Address")) else 0


# ---------------------------------------------------------------------------------------------

PARSERS: dict[str, Parser] = {
    "esxi_nic_list": Parser("esxi_nic_list", parse_esxi_nic_list, sniff_esxi_nic_list,
                            "esxcli network nic list"),
    "esxi_esxcfg_nics": Parser("esxi_esxcfg_nics", parse_esxi_esxcfg_nics, sniff_esxi_esxcfg_nics,
                               "esxcfg-nics -l"),
    "esxi_vib_list": Parser("esxi_vib_list", parse_esxi_vib_list, sniff_esxi_vib_list,
                            "esxcli software vib list"),
    "esxi_vib_install": Parser("esxi_vib_install", parse_esxi_vib_install, sniff_esxi_vib_install,
                               "esxcli software vib install (Installation Result)"),
    "esxi_module_params": Parser("esxi_module_params", parse_esxi_module_params, sniff_esxi_module_params,
                                 "esxcli system module parameters list -m M / esxcfg-module -g M"),
    "esxi_pause_params": Parser("esxi_pause_params", parse_esxi_pause_params, sniff_esxi_pause_params,
                                "esxcli network nic pauseParams list"),
    "esxi_power_policy": Parser("esxi_power_policy", parse_esxi_power_policy, sniff_esxi_power_policy,
                                "esxcli system settings advanced list -o /Power/CpuPolicy"),
    "esxi_uptime": Parser("esxi_uptime", parse_esxi_uptime, sniff_esxi_uptime,
                          "esxcli system stats uptime get"),
    "esxi_host_summary": Parser("esxi_host_summary", parse_esxi_host_summary, sniff_esxi_host_summary,
                                "vim-cmd hostsvc/hostsummary"),
    "esxi_cpu_global": Parser("esxi_cpu_global", parse_esxi_cpu_global, sniff_esxi_cpu_global,
                              "esxcli hardware cpu global get"),
    "esxi_sriovnic_list": Parser("esxi_sriovnic_list", parse_esxi_sriovnic_list, sniff_esxi_sriovnic_list,
                                 "esxcli network sriovnic list"),
    "esxi_sriovnic_vf_list": Parser("esxi_sriovnic_vf_list", parse_esxi_sriovnic_vf_list,
                                    sniff_esxi_sriovnic_vf_list, "esxcli network sriovnic vf list -n vmnicN"),
}

# `esxcli network nic dcb status get` lives in its own small module (this file is large already)
from roce_wizard.parsers.esxi_dcb import PARSERS as _DCB_PARSERS  # noqa: E402

PARSERS.update(_DCB_PARSERS)
