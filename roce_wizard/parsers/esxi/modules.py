"""esxcli system module parameters list / esxcfg-module -g, and module option strings."""

from __future__ import annotations

import re
import shlex
from typing import Any

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    is_elision,
    lines,
)
from roce_wizard.parsers.esxi.collapsed import collapsed_params
from roce_wizard.parsers.esxi.tables import _blank_none, _has_header, _records

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
