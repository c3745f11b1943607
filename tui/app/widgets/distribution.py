"""The agents' current distributions as bars (and the consensus once there is one).

Each agent's bars are in its role colour (``$role-a``, ``$role-b``, ``$role-consensus``, see
:mod:`tui.app.theme`), written as :class:`~textual.content.Content` spans that name the theme
variable, so a change of theme recolours the bars already shown. Labels come from models:
plain text, never markup.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from tui.app.theme import role_style
from tui.sanitize import terminal_safe

LABEL_WIDTH = 22
BAR_WIDTH = 18


def bars(title: str, probs: dict[str, float], style: str, label_width: int = LABEL_WIDTH,
         bar_width: int = BAR_WIDTH) -> Content:
    """A title line, then one line per label (the five likeliest): label, bar, percentage."""
    lines = [Content.styled(terminal_safe(title), f"bold {style}").truncate(label_width + bar_width + 6, ellipsis=True)]
    for label, p in sorted(probs.items(), key=lambda lp: -lp[1])[:5]:
        filled = round(p * bar_width)
        lines.append(Content.assemble(
            Content(terminal_safe(label)).truncate(label_width, ellipsis=True, pad=True), " ",
            ("█" * filled + "·" * (bar_width - filled), style), " ",
            Content(f"{p:.0%}").right(4)))
    return Content("\n").join(lines)


def widths(available: int) -> tuple[int, int]:
    """Label and bar widths that fit ``available`` cells (a narrow side panel shortens both)."""
    if available <= 0:  # not laid out yet
        return LABEL_WIDTH, BAR_WIDTH
    label = min(max(available - BAR_WIDTH - 6, 8), LABEL_WIDTH)
    return label, min(max(available - label - 6, 4), BAR_WIDTH)


class Distributions(Static):
    """Latest distribution per agent, in the order the agents first spoke."""

    def __init__(self, **kwargs) -> None:
        super().__init__(Content.styled("no distributions yet", "dim"), **kwargs)
        self.latest: dict[str, dict[str, float]] = {}

    def set(self, role: str, probs: dict[str, float]) -> None:
        self.latest[role] = probs
        self._draw()

    def on_resize(self) -> None:
        if self.latest:
            self._draw()

    def _draw(self) -> None:
        label, bar = widths(self.content_region.width)
        self.update(Content("\n").join(bars(name, dist, role_style(name), label, bar) for name, dist in self.latest.items()))
