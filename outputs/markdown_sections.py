"""A protocol's findings (:mod:`protocols.core.present`) as Markdown: the export's and ``show``'s
part of what each protocol presents, beside the HTML report and the app's panel. Every string is
untrusted text and goes through :mod:`outputs.markdown_text` (shown as written, never read as
structure); a chart is given as its numbers, a table of rounds or categories."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from outputs.markdown_text import block, inline
from protocols.core.present import BarChart, Bullets, DefList, Figures, LineChart, Para, Section, Table, num


def sections_markdown(sections: Iterable[Section], level: int = 2) -> list[str]:
    """Markdown lines: each section's title as a heading of ``level``, then its blocks."""
    out: list[str] = []
    for section in sections:
        out += ["", f"{'#' * level} {inline(section.title)}"]
        for b in section.blocks:
            out += ["", *_block(b, level)]
    return out


#: A plain number (a score, a share): nothing in it can be read as Markdown, so it is left
#: unescaped and a table of figures stays readable as text.
_NUMBER = re.compile(r"-?\d+(\.\d+)?%?")


def _cell(value: Any) -> str:
    shown = value if isinstance(value, str) else num(value) if not isinstance(value, Para | DefList | Bullets | Table | Figures) else None
    if shown is not None and _NUMBER.fullmatch(shown):
        return shown
    if isinstance(value, Para):
        return inline(value.text)
    if isinstance(value, DefList):
        return "; ".join(f"{inline(k)}: {_cell(v)}" for k, v in value.items)
    if isinstance(value, Bullets):
        return "; ".join(_cell(v) for v in value.items)
    if isinstance(value, Table | Figures):
        return "(a table)"
    return inline(value if isinstance(value, str) else num(value))


def _table(headers: list[Any], rows: list[list[Any]], caption: str = "") -> list[str]:
    out = [f"_{inline(caption)}_", ""] if caption else []
    out.append("| " + " | ".join(inline(str(h)) or " " for h in headers) + " |")
    out.append("| " + " | ".join("---" for _ in headers) + " |")
    out += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return out


def _block(b: Any, level: int) -> list[str]:
    match b:
        case Para():
            if b.kind in ("h", "sub"):
                return [f"{'#' * (level + 1)} {inline(b.text)}"]
            text = block(b.text)
            return [f"_{inline(b.text)}_"] if b.kind in ("note", "warn") else [text]
        case DefList():
            return [f"- **{inline(k)}:** {_cell(v)}" for k, v in b.items]
        case Bullets():
            return [f"- {_cell(v)}" for v in b.items]
        case Table():
            return _table(b.headers, b.rows, b.caption)
        case Figures():
            out: list[str] = []
            for chart in b.charts:
                if isinstance(chart, LineChart):
                    rounds = sorted({x for values in chart.series.values() for x, _ in values})
                    by = {name: dict(values) for name, values in chart.series.items()}
                    out += _table(["round", *chart.series], [[num(x if x != int(x) else int(x)), *(num(by[n].get(x)) for n in chart.series)]
                                                           for x in rounds], chart.title)
                elif isinstance(chart, BarChart):
                    categories = list(dict.fromkeys(c for values in chart.groups.values() for c in values))
                    shown = (lambda v: "—" if v is None else f"{v:.0%}") if chart.percent else (lambda v: "—" if v is None else num(v))
                    out += _table(["", *chart.groups], [[c, *(shown(values.get(c)) for values in chart.groups.values())]
                                                        for c in categories], chart.title)
                out.append("")
            return out
    return [inline(b if isinstance(b, str) else num(b))]
