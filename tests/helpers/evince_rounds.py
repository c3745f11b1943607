"""Which EVINCE rounds have metrics: a round's WD/MI/JSD need both agents' predictions, and a
turn without one is journalled as such (never given an invented one), so a real small model's
debate may leave some rounds without metrics."""

from __future__ import annotations

from collections.abc import Iterable


def rounds_both_predicted(turns: Iterable[tuple[int, str, bool]]) -> list[int]:
    """The rounds, in order, in which agent A and agent B both predicted; ``turns`` gives each
    debate turn as (round, role, whether it holds a distribution)."""
    have = {(round_, role) for round_, role, predicted in turns if predicted}
    return sorted({round_ for round_, _ in have if {(round_, "agent-a"), (round_, "agent-b")} <= have})


def says_no_prediction(notes: Iterable[str]) -> bool:
    """Whether a turn's parse notes record that it gave no prediction (and why)."""
    return any("no prediction" in note for note in notes)
