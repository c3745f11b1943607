"""The report's plots as inline SVG: no script, no font or image from outside, printable.

Two kinds are enough for every protocol: a line chart of values per round (a metric, Γ, κ) and
horizontal bars (a distribution, scores per subtopic). Every label goes through
:func:`outputs.report.safe.text`; numbers are formatted here. Colours come from a fixed palette
that stays distinct in greyscale print (the series also differ in their marker shape).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from outputs.report.safe import Markup, tag, text

#: One colour per series, in order; the second of each pair differs in lightness for print.
PALETTE = ("#1f5fa8", "#c2571a", "#2e8540", "#8a3ea0", "#b8860b", "#5f6b73", "#d0434b", "#0f8b8d")
_MARKERS = ("circle", "square", "diamond", "triangle")


def _num(value: float) -> str:
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def _marker(kind: str, x: float, y: float, colour: str) -> str:
    if kind == "square":
        return f'<rect x="{x - 3:.1f}" y="{y - 3:.1f}" width="6" height="6" fill="{colour}"/>'
    if kind == "diamond":
        return f'<path d="M{x:.1f} {y - 4:.1f}L{x + 4:.1f} {y:.1f}L{x:.1f} {y + 4:.1f}L{x - 4:.1f} {y:.1f}Z" fill="{colour}"/>'
    if kind == "triangle":
        return f'<path d="M{x:.1f} {y - 4:.1f}L{x + 4:.1f} {y + 3:.1f}L{x - 4:.1f} {y + 3:.1f}Z" fill="{colour}"/>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>'


def line_chart(title: str, series: Mapping[str, Sequence[tuple[float, float | None]]], *,
               x_label: str = "round", width: int = 290, height: int = 180) -> Markup:
    """Values per round, one line per series (a missing value breaks the line); ``title`` and the
    series' names are untrusted text. Empty when no series has a finite value."""
    points = [(x, y) for values in series.values() for x, y in values if y is not None and math.isfinite(y)]
    if not points:
        return Markup("")
    left, right, top, bottom = 46, 12, 26, 34
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(0.0, min(ys)), max(ys)
    if y1 - y0 < 1e-9:
        y1 = y0 + (abs(y0) or 1.0)
    if x1 == x0:
        x0, x1 = x0 - 0.5, x1 + 0.5
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * plot_w

    def py(y: float) -> float:
        return top + (1 - (y - y0) / (y1 - y0)) * plot_h

    legend = len(series) > 1  # one series is named by the title
    full = height + (14 * len(series) if legend else 0)
    out = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{full}"'
           f' viewBox="0 0 {width} {full}" role="img">',
           str(tag("title", title)),
           f'<text x="{left}" y="15" class="ct">{text(title)}</text>',
           f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fff" stroke="#999" stroke-width="0.8"/>']
    for fraction in (0.0, 0.5, 1.0):
        value = y0 + fraction * (y1 - y0)
        y = py(value)
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd" stroke-width="0.6"/>')
        out.append(f'<text x="{left - 4}" y="{y + 3:.1f}" class="tick" text-anchor="end">{_num(value)}</text>')
    ticks = sorted(set(xs))
    step = max(1, math.ceil(len(ticks) / 10))
    for x in ticks[::step]:
        out.append(f'<text x="{px(x):.1f}" y="{top + plot_h + 13}" class="tick" text-anchor="middle">{_num(x)}</text>')
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h + 27}" class="tick" text-anchor="middle">{text(x_label)}</text>')
    for i, (name, values) in enumerate(series.items()):
        colour, marker = PALETTE[i % len(PALETTE)], _MARKERS[i % len(_MARKERS)]
        run: list[str] = []
        ended: list[tuple[float, float | None]] = [*values, (math.nan, None)]
        for x, point in ended:
            if point is None or not math.isfinite(point):
                if len(run) > 1:
                    out.append(f'<polyline points="{" ".join(run)}" fill="none" stroke="{colour}" stroke-width="2"/>')
                run = []
                continue
            run.append(f"{px(x):.1f},{py(point):.1f}")
            out.append(_marker(marker, px(x), py(point), colour))
        if not legend:
            continue
        legend_y = height + 14 * i + 4
        out.append(_marker(marker, left + 4, legend_y - 4, colour))
        out.append(f'<text x="{left + 14}" y="{legend_y}" class="tick">{text(name)}</text>')
    out.append("</svg>")
    return Markup("".join(out))


def bars(title: str, groups: Mapping[str, Mapping[str, float]], *, scale: float = 1.0, percent: bool = True,
         width: int = 640) -> Markup:
    """Horizontal bars: for each category (a label, a subtopic), one bar per group (an agent, a
    judge), values from 0 to ``scale``; categories ordered by their largest value. Empty when
    there is nothing to draw."""
    categories: dict[str, float] = {}
    for values in groups.values():
        for category, value in values.items():
            categories[category] = max(categories.get(category, 0.0), float(value))
    if not categories:
        return Markup("")
    order = sorted(categories, key=lambda c: -categories[c])
    names = list(groups)
    label_w, value_w, bar_h, gap = 200, 52, 11, 7
    bar_w = width - label_w - value_w - 8
    row_h = bar_h * len(names) + gap
    top = 24 + (14 if len(names) > 1 else 0)
    height = top + row_h * len(order) + 4
    out = [f'<svg class="chart bars" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
           f' viewBox="0 0 {width} {height}" role="img">', str(tag("title", title)),
           f'<text x="0" y="15" class="ct">{text(title)}</text>']
    if len(names) > 1:
        x = label_w
        for i, name in enumerate(names):
            out.append(f'<rect x="{x}" y="22" width="10" height="9" fill="{PALETTE[i % len(PALETTE)]}"/>')
            out.append(f'<text x="{x + 14}" y="30" class="tick">{text(name)}</text>')
            x += 24 + 7 * min(len(name), 24)
    for row, category in enumerate(order):
        y = top + row * row_h
        shown = category if len(category) <= 34 else category[:33] + "…"
        out.append(f'<text x="{label_w - 6}" y="{y + row_h / 2 + 1:.1f}" class="lab" text-anchor="end">{text(shown)}'
                   f'{tag("title", category)}</text>')
        for i, name in enumerate(names):
            found = groups[name].get(category)
            if found is None:
                continue
            value = float(found)
            length = max(0.0, min(1.0, value / scale)) * bar_w
            by = y + i * bar_h
            out.append(f'<rect x="{label_w}" y="{by}" width="{length:.1f}" height="{bar_h - 2}"'
                       f' fill="{PALETTE[i % len(PALETTE)]}"/>')
            shown_value = f"{value:.0%}" if percent else _num(value)
            out.append(f'<text x="{label_w + length + 4:.1f}" y="{by + bar_h - 3}" class="tick">{shown_value}</text>')
    out.append("</svg>")
    return Markup("".join(out))
