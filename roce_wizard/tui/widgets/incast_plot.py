"""The validate stage's pictures in the wizard: the incast plot of a selected finding (RW605's details
"incast": one point per step) and the fabric sentence per node pair (records/fabric.py) above the grid.

The plot is drawn with rich, block characters, not a plotting library: at 80x24 the detail pane is about
60 columns by 7 rows, and a braille line chart (textual-plotext, tried) needs 12+ rows to be legible, draws
the 64 KiB and 1 MiB lines on top of each other (their values are within 1%) and leaves the counter deltas
for a separate table anyway. A bar per step is exact at any width, keeps each step's numbers on its row, shows
the one-stream line and the hold threshold (RW605's 80%) as marks on every bar, and reads as plain text.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from roce_wizard.model import Finding
from roce_wizard.records.fabric import pair_sentences
from roce_wizard.records.report import result_rows
from roce_wizard.records.svg import _size_label as size_label
from roce_wizard.textsafe import printable

HOLD = 0.80  # RW605's threshold: N streams must keep this share of one stream's aggregate
# the per-step counter deltas (checklib.traffic.counter_point), in the order the table shows them
DELTAS = (("pauses_p", "pauses prio {p}"), ("pauses_other", "other prio"), ("ecn_marked", "ECN marked"),
          ("cnp_sent", "CNP sent"), ("cnp_handled", "CNP handled"), ("discards", "drops"))
BLOCKS = " ▏▎▍▌▋▊▉█"


def incast_points(details: Any) -> list[dict[str, Any]]:
    """The steps of a finding's incast that measured something: {"streams", "size", "gbps", deltas…}."""
    raw = details.get("incast") if isinstance(details, dict) else None
    out = []
    for p in raw if isinstance(raw, list) else []:
        if isinstance(p, dict) and isinstance(p.get("streams"), int) and isinstance(p.get("gbps"), int | float):
            out.append(p)
    return out


def delta_labels(points: list[dict[str, Any]]) -> list[str]:
    """The delta columns' headers, when the steps read counters (a step without them has no "pauses_p")."""
    if not any("pauses_p" in p for p in points):
        return []
    prio = next((p.get("priority") for p in points if p.get("priority") is not None), "?")
    return [label.format(p=prio) for _, label in DELTAS]


def bar(value: float, scale: float, width: int, marks: dict[int, str]) -> Text:
    """A horizontal bar of `width` cells (eighths of a block); the marks are drawn over it or past its end."""
    cells = round(max(0.0, value) / scale * width * 8) if scale > 0 else 0
    full, part = divmod(min(cells, width * 8), 8)
    filled = full + (1 if part else 0)
    text = Text()
    for col in range(width):
        if col in marks:
            text.append(marks[col], style="bold yellow on cyan" if col < filled else "bold yellow")
        elif col < full:
            text.append("█", style="cyan")
        elif col == full and part:
            text.append(BLOCKS[part], style="cyan")
        else:
            text.append(" ")
    return text


class IncastChart:
    """Aggregate Gb/s per step as bars, grouped by message size, against the one-stream line (│) and the
    hold threshold (┊); below, each step's counter deltas. Fits the width it is given."""

    def __init__(self, points: list[dict[str, Any]], link_gbps: float | None = None) -> None:
        self.points = points
        self.link = link_gbps

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(options.max_width, 30)
        sizes: dict[Any, list[dict[str, Any]]] = {}
        for p in self.points:
            sizes.setdefault(p.get("size"), []).append(p)
        scale = max([float(p["gbps"]) for p in self.points] + [float(self.link or 0)]) or 1.0
        barw = max(8, width - 16)  # the row: "  N " + bar + " 96.1" + " 100%"
        yield Text.assemble(("Gb/s per step", "bold"), "  ", ("│", "bold yellow"), " one stream  ",
                            ("┊", "bold yellow"), f" {HOLD:.0%} of it (holds)")
        for size, steps in sizes.items():
            single = next((float(s["gbps"]) for s in steps if s["streams"] == 1 and s["gbps"]), None)
            yield Text(size_label(size), style="bold")
            marks = {}
            if single:
                marks[min(barw - 1, round(single / scale * barw))] = "│"
                marks.setdefault(min(barw - 1, round(single * HOLD / scale * barw)), "┊")
            for s in sorted(steps, key=lambda s: s["streams"]):
                share = float(s["gbps"]) / single if single else None
                style = "" if share is None or share >= HOLD else "bold red"
                line = Text(f"{s['streams']:>3} ")
                line.append_text(bar(float(s["gbps"]), scale, barw, marks))
                line.append(f" {float(s['gbps']):>5.1f}", style=style)
                line.append(f" {share:>4.0%}" if share is not None else "     ", style=style)
                yield line
        labels = delta_labels(self.points)
        if labels:
            yield Text("counter deltas during each step", style="bold")
            table = Table(box=None, padding=(0, 1, 0, 0), show_edge=False, header_style="bold", expand=False)
            table.add_column("step", no_wrap=True)
            for label in labels:
                table.add_column(label, justify="right", overflow="fold")
            for p in self.points:
                table.add_row(f"{size_label(p.get('size'))}×{p['streams']}",
                              *[delta_text(p.get(key)) for key, _ in DELTAS])
            yield table


def delta_text(value: Any) -> Text:
    if value is None:
        return Text("n/a", style="dim")
    return Text(f"+{value}", style="dim" if value == 0 else "")


class IncastPlot(Vertical):
    """One finding's incast: a heading (check, pair, the pair's fabric sentence) and the chart."""

    DEFAULT_CSS = """
    IncastPlot { height: auto; margin: 0 0 1 0; border-bottom: solid $primary-darken-2; }
    IncastPlot Static { height: auto; }
    """

    def __init__(self, finding: Finding, sentence: str | None = None) -> None:
        super().__init__(classes="incast-plot")
        self.finding = finding
        self.points = incast_points(finding.details)
        self.labels = delta_labels(self.points)
        self.sentence = sentence

    def compose(self) -> ComposeResult:
        pair = self.finding.subject or self.finding.details.get("pair") or self.finding.target
        yield Static(Text.assemble((f"{self.finding.check} incast", "bold underline"), f" · {printable(str(pair))}",
                                   f" · {len(self.points)} steps"), classes="incast-title")
        link = self.finding.details.get("link_gbps")
        yield Static(IncastChart(self.points, link if isinstance(link, int | float) else None),
                     classes="incast-chart")
        if self.sentence:
            yield Static(Text.assemble(("fabric: ", "bold"), printable(self.sentence)), classes="incast-fabric")


def show_incast(pane: Widget, findings: Iterable[Finding], sentences: dict[str, str] | None = None) -> None:
    """Mount one IncastPlot per finding with incast points at the top of the detail pane; remove old ones."""
    wanted = [f for f in findings if incast_points(f.details)]
    shown = list(pane.query(IncastPlot))
    if len(shown) == len(wanted) and all(p.finding is f for p, f in zip(shown, wanted, strict=True)):
        return  # a redraw of the same cell: keep the widgets (and the pane's scroll)
    for old in shown:
        old.remove()
    plots = [IncastPlot(f, (sentences or {}).get(f.subject or "")) for f in wanted]
    if plots:
        pane.mount(*plots, before=0)


# ---------------------------------------------------------------------------- the fabric, above the grid


class FabricSummary(Static):
    """One sentence per measured node pair (records/fabric.py), shown on the validate stage only. Narrow
    (under 120 columns), one line per pair cut with an ellipsis: the whole sentence is in the incast plot."""

    DEFAULT_CSS = """
    FabricSummary { height: auto; max-height: 8; padding: 0 1; border-bottom: solid $primary-darken-2; }
    FabricSummary.-empty { display: none; }
    FabricSummary.-narrow { text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self) -> None:
        super().__init__(id="fabric")
        self.sentences: list[str] = []

    def show(self, sentences: list[str], wide: bool) -> None:
        self.sentences = sentences
        self.set_class(not sentences, "-empty")
        self.set_class(not wide, "-narrow")
        text = Text()
        for i, sentence in enumerate(sentences):
            text.append(("\n" if i else "") + "fabric: ", style="bold")
            text.append(printable(sentence))
        self.update(text)


def fabric_sentences(report: Any) -> dict[str, str]:
    """{pair: sentence} of a run report, the summary's (records/fabric.py over the JSON contract's rows)."""
    if report is None or not any(f.check in ("RW607", "RW608") for f in report.findings):
        return {}
    return {s.split(" ", 1)[0]: s for s in pair_sentences(result_rows(report))}
