"""Per-round metrics: a table like Tables 7.2/7.3 and curves of JSD, WD, MI, CRIT and κ.

Which columns and curves are shown is the protocol's choice (its ``Panel("metrics", …)`` in
``protocols``): EVINCE's WD/MI/CRIT/JSD, SocraSynth's Γ and Δ, the most telling first so that
a narrow side panel cuts the least telling off. A column no round has a value for (SocraSynth's
``agreed`` without its agreement judge) is left out."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from textual.color import Color
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import DataTable, Static
from textual_plotext import PlotextPlot

from tui.sanitize import plain, terminal_safe

#: EVINCE's columns and curves, for a debate whose protocol declares none (a replay of an unknown one).
COLUMNS = (("round", "round"), ("phase", "phase"), ("κ", "kappa"), ("WD", "wd"), ("MI", "mi"), ("CRIT", "crit"), ("JSD", "jsd"))
#: Columns shown even when no round has a value for them.
ALWAYS = {"round", "phase"}
CURVES = (("JSD", "jsd"), ("WD", "wd"), ("MI", "mi"), ("CRIT", "crit"), ("κ", "kappa"))
#: Each curve's colour, a theme variable (tui/app/theme.py): CRIT is the judge's, κ the moderator's.
CURVE_COLOURS = {"jsd": "metric-jsd", "wd": "metric-wd", "mi": "metric-mi", "crit": "role-judge", "kappa": "role-moderator"}


def fmt(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


class MetricsTable(DataTable):
    """The rounds' metrics, one row per round. Each column is as wide as its widest cell, set
    when the rows are: DataTable sizes automatic columns later, when idle, and a header drawn in
    between kept its narrow widths (a live debate's header read "phase  κ  WD" over wider cells)."""

    def __init__(self, columns: tuple[tuple[str, str], ...] = COLUMNS, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.declared = columns
        self.columns_shown: tuple[tuple[str, str], ...] = ()
        self._widths: tuple[int, ...] = ()

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self._columns(self.declared, tuple(cell_len(title) for title, _ in self.declared))  # every heading before any round

    def _columns(self, wanted: tuple[tuple[str, str], ...], widths: tuple[int, ...]) -> None:
        if (wanted, widths) != (self.columns_shown, self._widths):
            self.clear(columns=True)
            self.columns_shown, self._widths = wanted, widths
            for (title, _), width in zip(wanted, widths, strict=True):
                self.add_column(title, key=title, width=width)

    def show(self, rows: list[dict[str, Any]]) -> None:
        wanted = self.columns_shown
        if rows:
            wanted = tuple(c for c in self.declared if c[1] in ALWAYS or any(r.get(c[1]) is not None for r in rows))
        cells = [[fmt(row.get(key)) for _, key in wanted] for row in rows]
        widths = tuple(max([cell_len(title), *(cell_len(line[i]) for line in cells)]) for i, (title, _) in enumerate(wanted))
        self._columns(wanted, widths)
        self.clear()
        for row, line in zip(rows, cells, strict=True):
            self.add_row(*(plain(cell) for cell in line), key=str(row["round"]))


class MetricsPlot(PlotextPlot):
    """The curves of one or two debates (a second set, dotted, to compare), each curve in its
    theme colour; drawn again when the theme changes (plotext takes colours, not variables)."""

    _shown: tuple[list[dict[str, Any]], list[dict[str, Any]] | None, tuple[str, str]] | None = None

    def __init__(self, curves: tuple[tuple[str, str], ...] = CURVES, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.curves = curves

    def on_mount(self) -> None:  # PlotextPlot's own on_mount runs too (Textual calls each class's)
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, _theme: object) -> None:
        if self._shown is not None:
            self.show(*self._shown)

    def _colour(self, key: str) -> tuple[int, int, int] | None:
        value = self.app.theme_variables.get(CURVE_COLOURS.get(key, "foreground"))
        return Color.parse(value).rgb if value else None

    def show(self, rows: list[dict[str, Any]], compare: list[dict[str, Any]] | None = None,
             labels: tuple[str, str] = ("", "other")) -> None:
        self._shown = (rows, compare, labels)
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title("metrics per round")
        plt.xlabel("round")
        for series, suffix, marker in ((rows, labels[0], "braille"), (compare or [], labels[1], "dot")):
            for name, key in self.curves:
                points = [(r["round"], r[key]) for r in series if r.get(key) is not None]
                if points:
                    xs, ys = zip(*points)
                    plt.plot(list(xs), list(ys), label=f"{name}{(' ' + suffix) if suffix else ''}", marker=marker,
                             color=self._colour(key))
        if rows:
            plt.xticks([r["round"] for r in rows])
        self.refresh()


class MetricsPanel(Vertical):
    """The table and the curves; while comparing, a legend says which curves are which debate."""

    def __init__(self, columns: tuple[tuple[str, str], ...] = (), curves: tuple[tuple[str, str], ...] = CURVES,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.columns_shown = columns or COLUMNS
        self.curves = curves

    def compose(self):
        yield MetricsTable(self.columns_shown, id="metrics-table")
        legend = Static(id="compare-legend")
        legend.display = False  # shown only while a comparison is drawn
        yield legend
        yield MetricsPlot(self.curves, id="metrics-plot")

    def show(self, rows: list[dict[str, Any]], compare: list[dict[str, Any]] | None = None,
             labels: tuple[str, str] = ("", "other"), legend: tuple[str, str] | None = None) -> None:
        """``rows`` (and ``compare``'s, dotted); ``legend``: how this debate and the compared one
        are named (title and date), shown above the curves whenever a comparison is drawn."""
        self.query_one(MetricsTable).show(rows)
        key = self.query_one("#compare-legend", Static)
        key.display = compare is not None
        if compare is not None:
            this, other = legend or ("this debate", labels[1])
            colours = [(f"■ {name}  ", f"${CURVE_COLOURS.get(k, 'foreground')}") for name, k in self.curves]
            key.update(Content.assemble(("⣿ solid: ", "bold"), terminal_safe(this), "\n", ("• dotted: ", "bold"),
                                        terminal_safe(other), "\n", *colours))
        self.query_one(MetricsPlot).show(rows, compare, labels)
