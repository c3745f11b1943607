"""The project's one plotter: charts as SVG, with no script, no font or image from outside, printable.

Both kinds of chart the project draws come from here: the report's charts, inline in its page
(a line chart of values per round: a metric, Γ, κ; horizontal bars: a distribution, scores per
subtopic), and the diagnosis benchmark's chart files (columns with their intervals: Acc@1 per
system, as the paper's Figure 7.2; points with their intervals against a cost). Each chart is
an image to assistive technology, named by its ``<title>``; the benchmark's also carry their
figures as a ``<desc>``.

Every piece of text from outside the code (a title, a series' or a system's name, a label)
goes through :func:`outputs.report.safe.svg_text`; numbers are formatted here. Colours come
from a fixed palette that stays distinct in greyscale print (the series also differ in their
marker shape). The text's look is :data:`CHART_STYLE`: the report's page carries it in its
style sheet, and a chart written as a file of its own (``standalone``) carries its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from outputs.report.safe import Markup, svg_text

#: One colour per series, in order; the second of each pair differs in lightness for print.
PALETTE = ("#1f5fa8", "#c2571a", "#2e8540", "#8a3ea0", "#b8860b", "#5f6b73", "#d0434b", "#0f8b8d")
#: The colour of what the others are measured against (the single models beside their combinations).
GREY = "#9e9e9e"
_MARKERS = ("circle", "square", "diamond", "triangle")

#: The charts' text: the title (``ct``), ticks and legends (``tick``), a category's label (``lab``).
CHART_STYLE = """svg .ct { font-size: 12px; font-weight: 600; fill: var(--ink, #1b1f23); }
svg .tick, svg .lab { font-size: 10px; fill: #333; }"""
#: A chart file's own style: the same classes, larger, as the file is seen alone at its size.
_FILE_STYLE = """svg { font-family: system-ui, "DejaVu Sans", sans-serif; }
svg .ct { font-size: 14px; font-weight: 600; fill: #1b1f23; }
svg .tick, svg .lab { font-size: 12px; fill: #333; }"""


@dataclass(frozen=True)
class Estimate:
    """A named thing's value with its interval (``low`` to ``high``), in a ``group`` that gives
    its colour; ``x``: where it stands across, for :func:`scatter` (a cost)."""

    name: str
    value: float
    low: float
    high: float
    group: str = ""
    x: float = 0.0


def _num(value: float) -> str:
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def _marker(kind: str, x: float, y: float, colour: str, size: float = 3) -> str:
    if kind == "square":
        return f'<rect x="{x - size:.1f}" y="{y - size:.1f}" width="{2 * size:g}" height="{2 * size:g}" fill="{colour}"/>'
    tip = size * 4 / 3
    if kind == "diamond":
        return f'<path d="M{x:.1f} {y - tip:.1f}L{x + tip:.1f} {y:.1f}L{x:.1f} {y + tip:.1f}L{x - tip:.1f} {y:.1f}Z" fill="{colour}"/>'
    if kind == "triangle":
        return f'<path d="M{x:.1f} {y - tip:.1f}L{x + tip:.1f} {y + size:.1f}L{x - tip:.1f} {y + size:.1f}Z" fill="{colour}"/>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{size:g}" fill="{colour}"/>'


def _open(title: str, width: float, height: float, *, kind: str = "", title_x: float = 0, description: str = "",
          standalone: bool = False) -> list[str]:
    """The chart's opening: its size, its accessible name and description, its visible title;
    a ``standalone`` chart (a file of its own) also its style and a white ground."""
    out = [f'<svg class="{"chart " + kind if kind else "chart"}" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}"'
           f' height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img">',
           f"<title>{svg_text(title, drawn=False)}</title>"]
    if description:
        out.append(f"<desc>{svg_text(description, drawn=False)}</desc>")
    if standalone:
        out += [f"<style>{_FILE_STYLE}</style>", '<rect width="100%" height="100%" fill="#fff"/>']
    out.append(f'<text x="{title_x:g}" y="15" class="ct">{svg_text(title)}</text>')
    return out


def _close(out: list[str]) -> Markup:
    return Markup("".join([*out, "</svg>"]))


@dataclass(frozen=True)
class _Axes:
    """A plot area (``left``, ``top``, ``width``, ``height`` in pixels) showing ``x0``–``x1``
    across and ``y0``–``y1`` up, boxed, with its grid."""

    left: float
    top: float
    width: float
    height: float
    x0: float
    x1: float
    y0: float
    y1: float

    def x(self, value: float) -> float:
        return self.left + (value - self.x0) / (self.x1 - self.x0) * self.width

    def y(self, value: float) -> float:
        return self.top + (1 - (value - self.y0) / (self.y1 - self.y0)) * self.height

    def frame(self, y_ticks: Sequence[float], shown: Callable[[float], str] = _num) -> list[str]:
        """The box, a line across at each of ``y_ticks`` and its value (as ``shown``) at the left."""
        out = [f'<rect x="{self.left:g}" y="{self.top:g}" width="{self.width:g}" height="{self.height:g}" fill="#fff"'
               ' stroke="#999" stroke-width="0.8"/>']
        for value in y_ticks:
            y = self.y(value)
            out.append(f'<line x1="{self.left:g}" x2="{self.left + self.width:g}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"'
                       ' stroke-width="0.6"/>')
            out.append(f'<text x="{self.left - 4:g}" y="{y + 3:.1f}" class="tick" text-anchor="end">'
                       f'{shown(value)}</text>')
        return out

    def x_ticks(self, ticks: Sequence[float], label: str) -> list[str]:
        """Each of ``ticks`` under the box, and ``label`` (untrusted text) under them."""
        out = [f'<text x="{self.x(x):.1f}" y="{self.top + self.height + 13:g}" class="tick" text-anchor="middle">'
               f'{_num(x)}</text>' for x in ticks]
        out.append(f'<text x="{self.left + self.width / 2:.1f}" y="{self.top + self.height + 27:g}" class="tick"'
                   f' text-anchor="middle">{svg_text(label)}</text>')
        return out

    def interval(self, x: float, low: float, high: float, colour: str, cap: float = 4) -> list[str]:
        """A vertical line from ``low`` to ``high`` at pixel ``x``, capped at both ends."""
        top, bottom = self.y(high), self.y(low)
        return [f'<path d="M{x:.1f} {top:.1f}V{bottom:.1f}M{x - cap:.1f} {top:.1f}H{x + cap:.1f}M{x - cap:.1f} {bottom:.1f}'
                f'H{x + cap:.1f}" stroke="{colour}" stroke-width="1.2" fill="none"/>']


def _swatches(x: float, y: float, entries: Sequence[tuple[str, str]], *, char_w: float = 7, most: int = 24) -> list[str]:
    """A row of colour keys (``name``, ``colour``) from ``x``, their text's baseline at ``y``;
    each given room for ``most`` characters of ``char_w`` pixels."""
    out: list[str] = []
    for name, colour in entries:
        out.append(f'<rect x="{x:g}" y="{y - 8:g}" width="10" height="9" fill="{colour}"/>')
        out.append(f'<text x="{x + 14:g}" y="{y:g}" class="tick">{svg_text(name)}</text>')
        x += 24 + char_w * min(len(name), most)
    return out


def _colours(estimates: Sequence[Estimate], colours: Mapping[str, str] | None) -> dict[str, str]:
    """Each group's colour: as given, else the palette's in the order the groups first appear."""
    groups = list(dict.fromkeys(e.group for e in estimates))
    given = dict(colours or {})
    return {g: given.get(g) or PALETTE[i % len(PALETTE)] for i, g in enumerate(groups)}


def _ticks(scale: float) -> tuple[float, ...]:
    return tuple(scale * f for f in (0.0, 0.25, 0.5, 0.75, 1.0))


def _two_places(value: float) -> str:
    return f"{value:.2f}"


def _figures(estimates: Sequence[Estimate], x_label: str = "") -> str:
    """The estimates as one sentence, for the chart's ``<desc>``."""
    parts = [f"{e.name}{f' ({e.group})' if e.group else ''}: {e.value:.3f} [{e.low:.3f}, {e.high:.3f}]"
             + (f" at {_num(e.x)} {x_label}" if x_label else "") for e in estimates]
    return "; ".join(parts) + "." if parts else ""


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
    axes = _Axes(left, top, width - left - right, height - top - bottom, x0, x1, y0, y1)
    legend = len(series) > 1  # one series is named by the title
    out = _open(title, width, height + (14 * len(series) if legend else 0), title_x=left)
    out += axes.frame([y0 + fraction * (y1 - y0) for fraction in (0.0, 0.5, 1.0)])
    ticks = sorted(set(xs))
    out += axes.x_ticks(ticks[::max(1, math.ceil(len(ticks) / 10))], x_label)
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
            run.append(f"{axes.x(x):.1f},{axes.y(point):.1f}")
            out.append(_marker(marker, axes.x(x), axes.y(point), colour))
        if legend:
            legend_y = height + 14 * i + 4
            out.append(_marker(marker, left + 4, legend_y - 4, colour))
            out.append(f'<text x="{left + 14}" y="{legend_y}" class="tick">{svg_text(name)}</text>')
    return _close(out)


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
    out = _open(title, width, top + row_h * len(order) + 4, kind="bars")
    if len(names) > 1:
        out += _swatches(label_w, 30, [(name, PALETTE[i % len(PALETTE)]) for i, name in enumerate(names)])
    for row, category in enumerate(order):
        y = top + row * row_h
        shown = category if len(category) <= 34 else category[:33] + "…"
        out.append(f'<text x="{label_w - 6}" y="{y + row_h / 2 + 1:.1f}" class="lab" text-anchor="end">{svg_text(shown)}'
                   f'<title>{svg_text(category, drawn=False)}</title></text>')
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
    return _close(out)


def columns(title: str, estimates: Sequence[Estimate], *, colours: Mapping[str, str] | None = None, scale: float = 1.0,
            standalone: bool = False) -> Markup:
    """A column per estimate from 0 to its value (of ``scale``), its interval drawn over it and
    its value above; names (untrusted text) slanted below, and a key of the groups' colours
    (``colours``: a group's colour, else the palette's). With no estimates, the empty frame: a
    chart written as a file is an image still."""
    left, top, bar, gap, plot_h = 52, 48, 56, 24, 260
    centres = [left + 10 + i * (bar + gap) + bar / 2 for i in range(len(estimates))]
    # a name slants down to the right at 35°: about 5.6 px across and 3.8 px down a character
    width = max([left + 10 + len(estimates) * (bar + gap) + 10, *(c + 5.6 * len(e.name) + 10 for c, e in zip(centres, estimates))])
    height = top + plot_h + 30 + 3.8 * max((len(e.name) for e in estimates), default=0)
    axes = _Axes(left, top, len(estimates) * (bar + gap) + 10, plot_h, 0.0, 1.0, 0.0, scale)
    colour = _colours(estimates, colours)
    out = _open(title, width, height, title_x=left, description=_figures(estimates), standalone=standalone)
    if len(colour) > 1:
        out += _swatches(left, 34, list(colour.items()), char_w=7.5, most=60)
    out += axes.frame(_ticks(scale), _two_places)
    for centre, e in zip(centres, estimates):
        y = axes.y(max(0.0, min(e.value, scale)))
        out.append(f'<rect x="{centre - bar / 2:g}" y="{y:.1f}" width="{bar}" height="{top + plot_h - y:.1f}"'
                   f' fill="{colour[e.group]}"/>')
        out += axes.interval(centre, e.low, e.high, "#000")
        above = min(y, axes.y(e.high)) - 4
        out.append(f'<text x="{centre:g}" y="{above:.1f}" class="tick" text-anchor="middle">{e.value:.2f}</text>')
        out.append(f'<text transform="translate({centre:g},{top + plot_h + 12}) rotate(35)" class="lab">'
                   f'{svg_text(e.name)}</text>')
    return _close(out)


def scatter(title: str, estimates: Sequence[Estimate], *, x_label: str, colours: Mapping[str, str] | None = None,
            scale: float = 1.0, standalone: bool = False) -> Markup:
    """Each estimate a numbered point at its ``x`` (from 0 to the largest) and its value (of
    ``scale``) with its interval, in its group's colour (``colours``, else the palette's); beside,
    the key: the colour, the number and the name (untrusted text). With no estimates, the empty
    frame (as :func:`columns`)."""
    left, top, plot_w, plot_h = 60, 48, 560, 300
    key_x = left + plot_w + 20
    longest = max((len(f"{i + 1}: {e.name}") for i, e in enumerate(estimates)), default=0)
    width = key_x + 24 + int(longest * 7)
    most = max((e.x for e in estimates), default=0.0) or 1.0
    axes = _Axes(left, top, plot_w, plot_h, 0.0, most, 0.0, scale)
    colour = _colours(estimates, colours)
    out = _open(title, width, max(top + plot_h + 44, top + 18 * len(estimates)), title_x=left,
                description=_figures(estimates, x_label), standalone=standalone)
    if len(colour) > 1:
        out += _swatches(left, 34, list(colour.items()), char_w=7.5, most=60)
    out += axes.frame(_ticks(scale), _two_places)
    out += axes.x_ticks(_ticks(most), x_label)
    for i, e in enumerate(estimates):
        cx, cy = axes.x(e.x), axes.y(e.value)
        out += axes.interval(cx, e.low, e.high, colour[e.group], cap=3)
        out.append(_marker("circle", cx, cy, colour[e.group], size=5))
        # right and left of the point by turns: points of one cost stand on one line
        side = -1 if i % 2 else 1
        out.append(f'<text x="{cx + 7 * side:.1f}" y="{cy - 6:.1f}" class="tick"'
                   f' text-anchor="{"end" if side < 0 else "start"}">{i + 1}</text>')
        row = top + 18 * i + 4
        out.append(_marker("square", key_x + 5, row - 4, colour[e.group], size=5))
        out.append(f'<text x="{key_x + 16}" y="{row}" class="lab">{i + 1}: {svg_text(e.name)}</text>')
    return _close(out)
