"""A protocol's findings (:mod:`protocols.core.present`) drawn on a terminal with Rich.

What ``symposium run`` prints when a debate ends and what ``show`` prints of a journalled one:
the same sections the HTML report draws, so the three never disagree. Every string is model or
user text: it becomes a :class:`~rich.text.Text` after :func:`terminal_safe`, never markup. A
chart is shown as its numbers (a terminal draws no SVG), one row per category or round.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table as RichTable
from rich.text import Text

from protocols.core.present import BarChart, Bullets, DefList, Figures, LineChart, Para, Section, Table, num
from tui.sanitize import terminal_safe

_PARA_STYLES = {"h": "bold", "sub": "bold dim", "lead": "", "note": "dim", "warn": "bold yellow", "hash": "dim"}


def renderables(sections: Iterable[Section]) -> list[RenderableType]:
    """Each section's title, then its blocks."""
    out: list[RenderableType] = []
    for section in sections:
        out.append(Text(f"\n{terminal_safe(section.title)}", style="bold underline"))
        out += [r for block in section.blocks if (r := block_renderable(block)) is not None]
    return out


def block_renderable(block: Any) -> RenderableType | None:
    """One block as Rich draws it (``None``: nothing to show)."""
    match block:
        case Para():
            return Text(terminal_safe(str(block.text)), style=_PARA_STYLES.get(block.kind, ""))
        case DefList():
            grid = RichTable.grid(padding=(0, 2))
            grid.add_column(style="bold", no_wrap=True)
            grid.add_column()
            for key, value in block.items:
                grid.add_row(Text(terminal_safe(key)), _inline(value))
            return grid
        case Table():
            table = RichTable(title=Text(terminal_safe(block.caption)) if block.caption else None)
            for head in block.headers:
                table.add_column(Text(terminal_safe(str(head))))
            for row in block.rows:
                table.add_row(*(_inline(v) for v in row))
            return table
        case Bullets():
            lines: list[RenderableType] = []
            for item in block.items:
                drawn = _inline(item)
                lines.append(Text("• ") + drawn if isinstance(drawn, Text) else Group(Text("•"), drawn))
            return Group(*lines)
        case Figures():
            charts: list[RenderableType] = [r for chart in block.charts if (r := _chart(chart)) is not None]
            if not charts:
                return None
            if block.caption:
                charts.append(Text(terminal_safe(block.caption), style="dim"))
            return Group(*charts)
    return Text(terminal_safe(num(block)))


def _inline(value: Any) -> RenderableType:
    """A value inside a list or table: a scalar as text, a nested block drawn."""
    if isinstance(value, Para | DefList | Table | Bullets | Figures):
        return block_renderable(value) or Text("")
    return Text(terminal_safe(num(value) if not isinstance(value, str) else value))


def _chart(chart: Any) -> RenderableType | None:
    """A chart's numbers as a small table: rounds × series, or categories × groups."""
    if isinstance(chart, LineChart):
        rounds = sorted({x for values in chart.series.values() for x, _ in values})
        if not rounds:
            return None
        table = RichTable(title=Text(terminal_safe(chart.title)))
        table.add_column("round")
        names: Sequence[str] = list(chart.series)
        for name in names:
            table.add_column(Text(terminal_safe(name)), justify="right")
        by_series = {name: dict(values) for name, values in chart.series.items()}
        for x in rounds:
            table.add_row(Text(num(x if x != int(x) else int(x))), *(Text(num(by_series[n].get(x))) for n in names))
        return table
    if isinstance(chart, BarChart):
        categories = list(dict.fromkeys(c for values in chart.groups.values() for c in values))
        if not categories:
            return None
        table = RichTable(title=Text(terminal_safe(chart.title)))
        table.add_column("")
        for group in chart.groups:
            table.add_column(Text(terminal_safe(group)), justify="right")
        for category in categories:
            cells = []
            for values in chart.groups.values():
                v = values.get(category)
                cells.append(Text("—" if v is None else (f"{v:.0%}" if chart.percent else num(v))))
            table.add_row(Text(terminal_safe(category)), *cells)
        return table
    return None
