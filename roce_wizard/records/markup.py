"""One document, two renderings: Markdown and a self-contained HTML page.

A report is built once as sections of blocks (a table, a code block, preformatted lines, inline HTML such as
an SVG plot); `markdown` and `html` render the same sections, so the two files of a support bundle cannot
drift apart. Text is escaped here: `|` and line breaks in Markdown table cells, everything in HTML.
"""

from __future__ import annotations

import html as _html
from dataclasses import dataclass, field
from typing import Any

CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;color:#222;padding:0 1em}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;
vertical-align:top}th{background:#f3f3f3}.pass{color:#1a7f37}.fail{color:#cf222e;font-weight:bold}.warn{color:#9a6700}
.error{color:#8250df}.skip{color:#777}.pending{color:#0969da}pre{background:#f6f8fa;padding:.6em;overflow:auto}svg{background:#fff}
.note{color:#555}"""


@dataclass
class Table:
    columns: list[Any]
    rows: list[list[Any]]
    first_cell_class: list[str] | None = None  # per row: the HTML class of its first cell (a status symbol)


@dataclass
class Code:
    text: str
    label: str = ""  # a line said before it ("hostfile:")


@dataclass
class Lines:
    """Lines that are already Markdown (a list); HTML shows them preformatted."""

    lines: list[str]


@dataclass
class Html:
    """Inline HTML (an SVG plot): the HTML page only."""

    html: str


Block = Table | Code | Lines | Html


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)
    level: int = 2  # 3: an item of the section before it (Markdown: a bold line)
    html_only: bool = False  # a section of nothing but a plot


def md_cell(value: Any) -> str:
    return str(value if value is not None else "").replace("|", "\\|").replace("\n", " ")


def markdown(preamble: list[str], sections: list[Section]) -> str:
    lines = list(preamble)
    for section in sections:
        if section.html_only:
            continue
        lines += [f"## {section.title}" if section.level == 2 else f"**{section.title}**", ""]
        for block in section.blocks:
            lines += _md_block(block)
    return "\n".join(lines)


def _md_block(block: Block) -> list[str]:
    if isinstance(block, Table):
        header = "|" + "".join(f" {c} |" if c else " |" for c in map(md_cell, block.columns))
        return [header, "|" + "---|" * len(block.columns),
                *("| " + " | ".join(md_cell(c) for c in row) + " |" for row in block.rows), ""]
    if isinstance(block, Code):
        return ([block.label, ""] if block.label else []) + ["```", block.text, "```", ""]
    if isinstance(block, Lines):
        return [*block.lines, ""]
    return []


def html(title: str, preamble: list[str], sections: list[Section]) -> str:
    """A page with no script, no external asset: inline CSS, `preamble` (HTML already) after the head."""
    e = _html.escape
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{e(title)}</title><style>{CSS}</style></head><body>", *preamble]
    for section in sections:
        tag = f"h{section.level}"
        lines = [line for block in section.blocks for line in _html_block(block)]
        head = f"<{tag}>{e(section.title)}</{tag}>"
        parts += [head + lines[0], *lines[1:]] if lines else [head]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _html_block(block: Block) -> list[str]:
    e = _html.escape
    if isinstance(block, Table):
        classes = block.first_cell_class or []
        rows = []
        for i, row in enumerate(block.rows):
            cells = [f"<td>{e(str(c))}</td>" for c in row]
            if i < len(classes) and cells:
                cells[0] = f'<td class="{e(classes[i])}">{e(str(row[0]))}</td>'
            rows.append("<tr>" + "".join(cells) + "</tr>")
        return ["<table><tr>" + "".join(f"<th>{e(str(c))}</th>" for c in block.columns) + "</tr>", *rows, "</table>"]
    if isinstance(block, Code):
        return [(f"<p>{e(block.label)}</p>" if block.label else "") + f"<pre>{e(block.text)}</pre>"]
    if isinstance(block, Lines):
        return ["<pre>" + e("\n".join(block.lines)) + "</pre>"]
    return [block.html]
