"""Markdown for the terminal whose tables fit its width: ``symposium show``.

Rich's Markdown draws a table as one Rich table however many columns it has, and shrinks
every column to fit; an EVINCE debate's metrics table (round, phase, κ and sixteen metrics) came
out at 80 columns as "r… p… κ c…", every header and number cut. Here a table too wide
for the terminal is drawn as several tables, each with as many columns as fit, its first column
(the round, the role) repeated in each so that every row can still be read across.
"""

from __future__ import annotations

from typing import ClassVar

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import Markdown, MarkdownElement, TableElement
from rich.table import Table
from rich.text import Text

#: The widest a column is planned to be: longer text (a subtopic, a model's name) wraps in it.
WIDEST_COLUMN = 30
#: Each column's padding and the rule between columns (box.SIMPLE, pad_edge off), planned generously.
COLUMN_GAP = 3


class FittedTable(TableElement):
    """A Markdown table drawn in column groups that each fit the width (first column repeated)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.header is None or self.header.row is None:
            yield from super().__rich_console__(console, options)
            return
        headings = [cell.content for cell in self.header.row.cells]
        rows = [[cell.content for cell in row.cells] for row in (self.body.rows if self.body is not None else [])]
        for group in column_groups(headings, rows, options.max_width):
            table = Table(box=box.SIMPLE, pad_edge=False, style="markdown.table.border", show_edge=True,
                          collapse_padding=True)
            for i in group:
                heading = headings[i].copy()
                heading.stylize("markdown.table.header")
                table.add_column(heading, min_width=headings[i].cell_len)  # a header is never cut
            for row in rows:
                table.add_row(*(row[i] if i < len(row) else Text("") for i in group))
            yield table


def column_groups(headings: list[Text], rows: list[list[Text]], width: int) -> list[list[int]]:
    """The columns of each table to draw, by index: the first column, then as many of the next as
    fit ``width`` (each planned at its widest cell, headers whole, text capped at
    :data:`WIDEST_COLUMN`); every group starts with column 0."""
    def need(i: int) -> int:
        cells = [row[i].cell_len for row in rows if i < len(row)]
        return max(headings[i].cell_len, min(max(cells, default=0), WIDEST_COLUMN)) + COLUMN_GAP

    groups: list[list[int]] = []
    current: list[int] = [0]
    used = need(0)
    for i in range(1, len(headings)):
        if len(current) > 1 and used + need(i) > width:
            groups.append(current)
            current, used = [0], need(0)
        current.append(i)
        used += need(i)
    groups.append(current)
    return groups


class FittedMarkdown(Markdown):
    """:class:`rich.markdown.Markdown` with :class:`FittedTable` for its tables."""

    elements: ClassVar[dict[str, type[MarkdownElement]]] = {**Markdown.elements, "table_open": FittedTable}
