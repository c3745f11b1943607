"""Per-round metrics: a table like Tables 7.2/7.3 and curves of JSD, WD, MI, CRIT and κ."""

from __future__ import annotations

from typing import Any

from textual.containers import Vertical

from tui.sanitize import plain
from textual.widgets import DataTable
from textual_plotext import PlotextPlot

COLUMNS = (("round", "round"), ("phase", "phase"), ("κ", "kappa"), ("WD", "wd"), ("MI", "mi"), ("CRIT", "crit"), ("JSD", "jsd"))
CURVES = (("JSD", "jsd"), ("WD", "wd"), ("MI", "mi"), ("CRIT", "crit"), ("κ", "kappa"))


def fmt(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


class MetricsTable(DataTable):
    DEFAULT_CSS = "MetricsTable { height: auto; max-height: 12; }"

    def on_mount(self) -> None:
        self.cursor_type = "row"
        for title, _ in COLUMNS:
            self.add_column(title, key=title)

    def show(self, rows: list[dict[str, Any]]) -> None:
        self.clear()
        for row in rows:
            self.add_row(*(plain(fmt(row.get(key))) for _, key in COLUMNS), key=str(row["round"]))


class MetricsPlot(PlotextPlot):
    """The curves of one or two debates (a second set, dashed, to compare)."""

    DEFAULT_CSS = "MetricsPlot { height: 14; min-height: 10; }"

    def show(self, rows: list[dict[str, Any]], compare: list[dict[str, Any]] | None = None,
             labels: tuple[str, str] = ("", "other")) -> None:
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
                    plt.plot(list(xs), list(ys), label=f"{name}{(' ' + suffix) if suffix else ''}", marker=marker)
        if rows:
            plt.xticks([r["round"] for r in rows])
        self.refresh()


class MetricsPanel(Vertical):
    DEFAULT_CSS = "MetricsPanel { height: auto; }"

    def compose(self):
        yield MetricsTable(id="metrics-table")
        yield MetricsPlot(id="metrics-plot")

    def show(self, rows: list[dict[str, Any]], compare: list[dict[str, Any]] | None = None,
             labels: tuple[str, str] = ("", "other")) -> None:
        self.query_one(MetricsTable).show(rows)
        self.query_one(MetricsPlot).show(rows, compare, labels)
