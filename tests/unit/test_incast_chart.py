"""The wizard's incast chart (tui/widgets/incast_plot.py), as text: bars against the one-stream line and the
80% hold mark, each step's counter deltas below, on RW605's details as the check writes them."""

from __future__ import annotations

import io

from rich.console import Console

from roce_wizard.model import Policy
from roce_wizard.tui.widgets.incast_plot import IncastChart, delta_labels, incast_points
from tests.checkcases import Case, build_facts
from tests.unit.checks.test_validate_traffic import CATALOG, HEALTHY, T


def text(chart: IncastChart, width: int = 60) -> list[str]:
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(chart)
    return console.export_text().splitlines()


def step(streams: int, gbps: float | None, size: int = 65536, **deltas: int | None) -> dict:
    return {"streams": streams, "size": size, "gbps": gbps, **deltas}


def test_a_collapse_shows_each_bar_against_the_one_stream_line_and_the_hold_mark():
    lines = text(IncastChart([step(1, 96.0), step(2, 50.0), step(4, 26.0)], link_gbps=100.0))
    rows = [ln for ln in lines if ln.startswith(" ") and ln.lstrip()[:1].isdigit()]
    assert [r.split()[0] for r in rows] == ["1", "2", "4"]
    assert rows[1].endswith(" 50.0  52%") and rows[2].endswith(" 26.0  27%")
    # the one-stream line (│) and 80% of it (┊) sit in the same column on every row of the size
    assert len({r.index("│") for r in rows}) == 1 and len({r.index("┊") for r in rows[1:]}) == 1
    assert rows[1].index("┊") < rows[1].index("│")
    # 60 columns leave a 44-cell bar for 100 Gb/s (the link): 96 Gb/s fill 42 cells (the hold mark drawn over
    # the bar), 50 Gb/s 22, and the one-stream line sits right after the 96 Gb/s bar
    assert rows[0][4:46] == "█" * 34 + "┊" + "█" * 7 and rows[0][46] == "│"
    assert rows[1][4:27] == "█" * 22 + " "


def test_counter_deltas_per_step_with_the_priority_named_and_missing_counters_as_na():
    points = [step(1, 96.0, priority=3, pauses_p=0, pauses_other=0, ecn_marked=0, cnp_sent=0, cnp_handled=0,
                   discards=0),
              step(2, 95.0, priority=3, pauses_p=1600, pauses_other=7, ecn_marked=10000, cnp_sent=10000,
                   cnp_handled=None, discards=0)]
    assert delta_labels(points) == ["pauses prio 3", "other prio", "ECN marked", "CNP sent", "CNP handled", "drops"]
    lines = text(IncastChart(points))
    deltas = lines[lines.index("counter deltas during each step") + 1:]
    assert deltas[-1].split() == ["64", "KiB×2", "+1600", "+7", "+10000", "+10000", "n/a", "+0"]


def test_steps_without_a_measurement_or_counters():
    details = {"incast": [step(1, 96.0), step(2, None), "junk", step(4, 90.0)]}
    points = incast_points(details)
    assert [p["streams"] for p in points] == [1, 4]
    assert delta_labels(points) == [] and "counter deltas" not in "\n".join(text(IncastChart(points)))
    assert incast_points({"table": {}}) == [] and incast_points(None) == []


def test_rw605_details_on_the_healthy_lab_world_draw_six_steps_and_their_pauses():
    (finding,) = CATALOG["RW605"].evaluate(build_facts(Case("RW605", "x", None, facts=HEALTHY, target=T)), Policy())
    points = incast_points(finding.details)
    assert len(points) == 6 and delta_labels(points)[0] == "pauses prio 3"
    lines = text(IncastChart(points, finding.details.get("link_gbps")), width=56)
    assert max(len(ln) for ln in lines) <= 56
    assert "64 KiB" in lines and "1 MiB" in lines
    four = [ln for ln in lines if ln.startswith("64 KiB×4")]
    assert four and int(four[0].split()[2].lstrip("+")) > 0  # pauses on the RoCE priority under incast
