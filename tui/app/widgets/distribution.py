"""The agents' current distributions as bars (and the consensus once there is one)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from tui.sanitize import terminal_safe

BAR_WIDTH = 18


def bars(title: str, probs: dict[str, float], style: str) -> Table:
    table = Table.grid(padding=(0, 1))
    table.add_column(width=22, overflow="ellipsis", no_wrap=True)
    table.add_column(width=BAR_WIDTH)
    table.add_column(justify="right", width=4)
    table.add_row(Text(title, style=f"bold {style}"), "", "")
    for label, p in sorted(probs.items(), key=lambda lp: -lp[1])[:5]:
        filled = round(p * BAR_WIDTH)
        table.add_row(Text(terminal_safe(label)), Text("█" * filled + "·" * (BAR_WIDTH - filled), style=style), f"{p:.0%}")
    return table


class Distributions(Static):
    """Latest distribution per agent, in the order the agents first spoke."""

    DEFAULT_CSS = "Distributions { height: auto; padding: 0 1; }"
    STYLES = {"agent-a": "cyan", "agent-b": "magenta", "consensus": "green"}

    def __init__(self, **kwargs) -> None:
        super().__init__(Text("no distributions yet", style="dim"), **kwargs)
        self.latest: dict[str, dict[str, float]] = {}

    def set(self, role: str, probs: dict[str, float]) -> None:
        self.latest[role] = probs
        grid = Table.grid()
        for name, dist in self.latest.items():
            grid.add_row(bars(name, dist, self.STYLES.get(name, "yellow")))
        self.update(grid)
