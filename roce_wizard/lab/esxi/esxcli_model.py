"""esxcli's output model (table, CSV, XML, key-value renderers) and its option parser."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape as xml_escape

from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.tools.words import bool_word
from roce_wizard.lab.world import EsxiHost

# ==================================================================================== esxcli output model


@dataclass
class Out:
    """What an esxcli command returns, rendered by the chosen formatter.

    kind: "table" (rows under a header), "structs" (key: value blocks), "scalar", "none".
    fields: (human label, csv name) in the human order; extra: csv/keyvalue-only fields.
    """

    kind: str
    type_name: str = "Struct"
    fields: list[tuple[str, str]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    value: Any = None
    title: str | None = None  # a line printed above a struct (`Installation Result`)


def _fields(*labels: str) -> list[tuple[str, str]]:
    return [(label, label.replace(" ", "")) for label in labels]


def _cell(value: Any, none: str = "") -> str:
    if value is None:
        return none
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _render_table(out: Out) -> str:
    labels = [label for label, _ in out.fields]
    keys = [key for _, key in out.fields]
    cells = [[_cell(row.get(k), "-") for k in keys] for row in out.rows]  # esxcli shows an unset value as -
    widths = [max([len(label)] + [len(r[i]) for r in cells]) for i, label in enumerate(labels)]
    right = []
    for k in keys:
        sample = next((row.get(k) for row in out.rows if row.get(k) not in (None, "")), None)
        right.append(isinstance(sample, (int, bool)) and not isinstance(sample, str))
    lines = ["  ".join(label.ljust(w) for label, w in zip(labels, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    for r in cells:
        lines.append("  ".join(c.rjust(w) if rt else c.ljust(w) for c, w, rt in zip(r, widths, right)).rstrip())
    return "\n".join(lines) + "\n"


def _render_structs(out: Out) -> str:
    blocks = []
    for row in out.rows:
        lines = [f"   {label}: {_cell(row.get(key))}".rstrip() for label, key in out.fields]
        blocks.append("\n".join(lines) + "\n")
    text = "\n".join(blocks)
    if out.title:
        text = out.title + "\n" + text + "\n"
    return text


def _render_csv(out: Out) -> str:
    if out.kind == "scalar":
        return _cell(out.value) + "\n"
    names = sorted({key for _, key in out.fields} | set(out.extra))
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    buf.write(",".join(names) + ",\n")
    for row in out.rows:
        writer.writerow([_csv_cell(row.get(n)) for n in names] + [""])
    return buf.getvalue()


def _csv_cell(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return _cell(value)


def _xsd(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return "string"


def _render_keyvalue(out: Out) -> str:
    if out.kind == "scalar":
        return f"{out.type_name}.{_xsd(out.value)}={_cell(out.value)}\n"
    names = sorted({key for _, key in out.fields} | set(out.extra))
    lines = []
    for row in out.rows:
        for n in names:
            value = row.get(n)
            if isinstance(value, list):
                lines.extend(f"{out.type_name}.{n}.string[]={v}" for v in value)
                continue
            lines.append(f"{out.type_name}.{n}.{_xsd(value)}={_cell(value)}")
        lines.append("")
    return "\n".join(lines) + ("\n" if lines else "")


def _render_xml(out: Out) -> str:
    head = ('<?xml version="1.0" encoding="utf-8"?>\n'
            '<output xmlns="http://www.vmware.com/Products/ESX/5.0/esxcli">\n<root>\n')
    tail = "</root>\n</output>\n"
    if out.kind == "scalar":
        return head + f"   <{_xsd(out.value)}>{xml_escape(_cell(out.value))}</{_xsd(out.value)}>\n" + tail
    names = sorted({key for _, key in out.fields} | set(out.extra))

    def structure(row: dict[str, Any], indent: str) -> str:
        parts = [f'{indent}<structure typeName="{out.type_name}">\n']
        for n in names:
            value = row.get(n)
            parts.append(f'{indent}   <field name="{n}">\n')
            if isinstance(value, list):
                parts.append(f'{indent}      <list type="string">\n')
                parts.extend(f"{indent}         <string>{xml_escape(str(v))}</string>\n" for v in value)
                parts.append(f"{indent}      </list>\n")
            else:
                t = _xsd(value)
                parts.append(f"{indent}      <{t}>{xml_escape(_cell(value))}</{t}>\n")
            parts.append(f"{indent}   </field>\n")
        parts.append(f"{indent}</structure>\n")
        return "".join(parts)

    if out.kind == "table" or len(out.rows) != 1:
        body = '   <list type="structure">\n' + "".join(structure(r, "      ") for r in out.rows) + "   </list>\n"
    else:
        body = structure(out.rows[0], "   ")
    return head + body + tail


def _render(out: Out, formatter: str | None) -> str:
    if out.kind == "none":
        return ""
    if formatter == "csv":
        return _render_csv(out)
    if formatter == "keyvalue":
        return _render_keyvalue(out)
    if formatter == "xml":
        return _render_xml(out)
    if out.kind == "scalar":
        return _cell(out.value) + "\n"
    if out.kind == "table":
        return _render_table(out)
    return _render_structs(out)


# ==================================================================================== esxcli commands


@dataclass(frozen=True)
class Opt:
    short: str | None
    long: str
    kind: str = "str"  # str | bool | long | flag
    required: bool = False
    multi: bool = False
    help: str = ""


@dataclass(frozen=True)
class Cmd:
    path: tuple[str, ...]
    help: str
    opts: tuple[Opt, ...]
    run: Callable[[Ctx, EsxiHost, dict[str, Any]], Out | Reply]


class _UsageError(Exception):
    pass


def _opt_label(opt: Opt) -> str:
    names = (f"-{opt.short}|" if opt.short else "") + f"--{opt.long}"
    if opt.kind == "flag":
        return names
    kind = opt.kind if opt.kind in ("bool", "long") else "str"
    return f"{names}=<{kind}>"


def _cmd_usage(cmd: Cmd) -> str:
    lines = [f"Usage: esxcli {' '.join(cmd.path)} [cmd options]", "", "Description: ",
             f"  {cmd.path[-1]:<22}{cmd.help}", ""]
    if cmd.opts:
        lines.append("Cmd options:")
        for opt in cmd.opts:
            label = _opt_label(opt)
            help_text = opt.help + (" (required)" if opt.required else "")
            if len(label) >= 22:
                lines.append(f"  {label}")
                lines.append(f"  {'':<22}{help_text}")
            else:
                lines.append(f"  {label:<22}{help_text}")
    return "\n".join(lines) + "\n"


def _parse_opts(cmd: Cmd, args: list[str]) -> dict[str, Any]:
    by_long = {o.long.lower(): o for o in cmd.opts}
    by_short = {o.short: o for o in cmd.opts if o.short}
    values: dict[str, Any] = {}
    i = 0
    while i < len(args):
        tok = args[i]
        inline: str | None = None
        if tok.startswith("--") and len(tok) > 2:
            name, eq, rest = tok[2:].partition("=")
            opt = by_long.get(name.lower())
            inline = rest if eq else None
        elif tok.startswith("-") and len(tok) >= 2 and tok != "-":
            opt = by_short.get(tok[1])
            inline = tok[2:] or None
            if inline is not None and inline.startswith("="):
                inline = inline[1:]
        else:
            raise _UsageError(f"Error: Invalid argument '{tok}'")
        if opt is None:
            raise _UsageError(f"Error: Invalid option {tok.split('=')[0]}")
        if opt.kind == "flag":
            if inline is not None and bool_word(inline) is None:
                raise _UsageError(f"Error: Invalid option {tok}")
            values[opt.long] = True if inline is None else bool(bool_word(inline))
            i += 1
            continue
        if inline is None:
            i += 1
            if i >= len(args):
                raise _UsageError(f"Error: Missing required value for option -{opt.short}|--{opt.long}"
                                  if opt.short else f"Error: Missing required value for option --{opt.long}")
            inline = args[i]
        value: Any = inline
        if opt.kind == "bool":
            value = bool_word(inline)
            if value is None:
                raise _UsageError(f"Error: Invalid data constraint for parameter '{opt.long}'. "
                                  f"Expected one of: [true, false, 1, 0, yes, no], got '{inline}'")
        elif opt.kind == "long":
            try:
                value = int(inline, 0)
            except ValueError:
                raise _UsageError(f"Error: Invalid data constraint for parameter '{opt.long}'. "
                                  f"Expected an integer, got '{inline}'") from None
        if opt.multi:
            values.setdefault(opt.long, []).append(value)
        else:
            values[opt.long] = value
        i += 1
    for opt in cmd.opts:
        if opt.required and opt.long not in values:
            label = f"-{opt.short}|--{opt.long}" if opt.short else f"--{opt.long}"
            raise _UsageError(f"Error: Missing required parameter {label}")
    return values
