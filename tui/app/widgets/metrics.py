"""Per-round metrics: a table like Tables 7.2/7.3 and curves of JSD, WD, MI, CRIT and κ."""

from __future__ import annotations

from typing import Any

from textual.color import Color
from textual.containers import Vertical

from tui.sanitize import plain
from textual.widgets import DataTable
from textual_plotext import PlotextPlot

COLUMNS = (("round", "round"), ("phase", "phase"), ("κ", "kappa"), ("WD", "wd"), ("MI", "mi"), ("CRIT", "crit"), ("JSD", "jsd"))
CURVES = (("JSD", "jsd"), ("WD", "wd"), ("MI", "mi"), ("CRIT", "crit"), ("κ", "kappa"))
#: Each curve's colour, a theme variable (tui/app/theme.py): CRIT is the judge's, κ the moderator's.
CURVE_COLOURS = {"jsd": "metric-jsd", "wd": "metric-wd", "mi": "metric-mi", "crit": "role-judge", "kappa": "role-moderator"}


def fmt(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


class MetricsTable(DataTable):
    def on_mount(self) -> None:
        self.cursor_type = "row"
        for title, _ in COLUMNS:
            self.add_column(title, key=title)

    def show(self, rows: list[dict[str, Any]]) -> None:
        self.clear()
        for row in rows:
            self.add_row(*(plain(fmt(row.get(key))) for _, key in COLUMNS), key=str(row["round"]))


class MetricsPlot(PlotextPlot):
    """The curves of one or two debates (a second set, dotted, to compare), each curve in its
    theme colour; drawn again when the theme changes (plotext takes colours, not variables)."""

    _shown: tuple[list[dict[str, Any]], list[dict[str, Any]] | None, tuple[str, str]] | None = None

    def on_mount(self) -> None:  # PlotextPlot's own on_mount runs too (Textual calls each class's)
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, _theme: object) -> None:
        if self._shown is not None:
            self.show(*self._shown)

    def _colour(self, key: str) -> tuple[int, int, int] | None:
        value = self.app.theme_variables.get(CURVE_COLOURS[key])
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
            for name, key in CURVES:
                points = [(r["round"], r[key]) for r in series if r.get(key) is not None]
                if points:
                    xs, ys = zip(*points)
                    plt.plot(list(xs), list(ys), label=f"{name}{(' ' + suffix) if suffix else ''}", marker=marker,
                             color=self._colour(key))
        if rows:
            plt.xticks([r["round"] for r in rows])
        self.refresh()


class MetricsPanel(Vertical):
    def compose(self):
        yield MetricsTable(id="metrics-table")
        yield MetricsPlot(id="metrics-plot")

    def show(self, rows: list[dict[str, Any]], compare: list[dict[str, Any]] | None = None,
             labels: tuple[str, str] = ("", "other")) -> None:
        self.query_one(MetricsTable).show(rows)
        self.query_one(MetricsPlot).show(rows, compare, labels)
