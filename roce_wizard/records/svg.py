"""Plots for reports as inline SVG: no script, no external asset (a support bundle's page stands alone)."""

from __future__ import annotations

import html
from typing import Any

_COLORS = ("#0969da", "#cf222e", "#1a7f37", "#9a6700", "#8250df", "#bc4c00")


def incast_svg(points: list[dict[str, Any]], width: int = 560, height: int = 300) -> str:
    """Aggregate throughput vs streams, one line per message size, as an inline SVG (no script, no assets);
    below it, when the steps carry counter deltas (RW605's points), each step's pauses per priority and ECN/CNP."""
    series: dict[Any, list[tuple[float, float]]] = {}
    for p in points:
        try:
            point = (float(p["streams"]), float(p["gbps"]))
        except (KeyError, TypeError, ValueError, AttributeError):  # a step that measured nothing: no point
            continue
        series.setdefault(p.get("size"), []).append(point)
    if not series:
        return ""
    xs = [x for s in series.values() for x, _ in s]
    ys = [y for s in series.values() for _, y in s]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    y1 = max(ys) * 1.1 or 1.0
    left, right, top, bottom = 56, 130, 16, 40
    pw, ph = width - left - right, height - top - bottom

    def sx(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * pw

    def sy(y: float) -> float:
        return top + ph - y / y1 * ph

    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="incast: throughput vs streams">'),
           f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>']
    for i in range(5):
        y = y1 * i / 4
        out.append(f'<text x="{left - 6}" y="{sy(y) + 4:.1f}" font-size="11" text-anchor="end">{y:.0f}</text>'
                   f'<line x1="{left}" x2="{left + pw}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" stroke="#eee"/>')
    for x in sorted(set(xs)):
        out.append(f'<text x="{sx(x):.1f}" y="{top + ph + 16}" font-size="11" text-anchor="middle">{x:g}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 6}" font-size="12" text-anchor="middle">streams</text>'
               f'<text x="14" y="{top + ph / 2}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 14 {top + ph / 2})">Gb/s</text>')
    for i, (size, pts) in enumerate(sorted(series.items(), key=lambda kv: str(kv[0]))):
        color = _COLORS[i % len(_COLORS)]
        pts = sorted(pts)
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{path}"/>')
        out += [f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{color}"/>' for x, y in pts]
        out.append(f'<text x="{left + pw + 8}" y="{top + 14 + 16 * i}" font-size="11" fill="{color}">'
                   f'{html.escape(_size_label(size))}</text>')
    out += _counter_lines(points, top + ph + 44)
    out.append("</svg>")
    svg = "".join(out)
    extra = len(_counter_rows(points))
    if extra:  # room below the plot for the counters beside each step
        wide, grown = max(width, 720), height + 18 * (extra + 1) + 8
        svg = svg.replace(f'width="{width}" height="{height}" viewBox="0 0 {width} {height}"',
                          f'width="{wide}" height="{grown}" viewBox="0 0 {wide} {grown}"', 1)
    return svg


def _counter_rows(points: list[dict[str, Any]]) -> list[str]:
    """One line per step that read counters: the per-priority pauses and the ECN/CNP deltas beside its Gb/s."""
    rows = []
    for p in points:
        if not isinstance(p, dict) or "pauses_p" not in p:
            continue
        prio = p.get("priority")

        def n(key: str, p: dict[str, Any] = p) -> str:
            v = p.get(key)
            return "n/a" if v is None else f"+{v}"

        rows.append(f"{_size_label(p.get('size'))} × {p.get('streams')}: {p.get('gbps')} Gb/s | pauses prio {prio} "
                    f"{n('pauses_p')}, other {n('pauses_other')} | ECN marked {n('ecn_marked')} | CNPs sent "
                    f"{n('cnp_sent')}, handled {n('cnp_handled')} | drops {n('discards')}")
    return rows


def _counter_lines(points: list[dict[str, Any]], y: float) -> list[str]:
    rows = _counter_rows(points)
    if not rows:
        return []
    out = [f'<text x="8" y="{y:.0f}" font-size="11" font-weight="bold">counters during each step (deltas)</text>']
    out += [f'<text x="8" y="{y + 18 * (i + 1):.0f}" font-size="10">{html.escape(r)}</text>' for i, r in enumerate(rows)]
    return out


def _size_label(size: Any) -> str:
    try:
        n = int(size)
    except (TypeError, ValueError):
        return str(size)
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"
