"""Which EVINCE rounds have metrics: a round's WD/MI/JSD need both agents' predictions, and a
turn without one is journalled as such (never given an invented one), so a real small model's
debate may leave some rounds without metrics."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any


def rounds_both_predicted(turns: Iterable[tuple[int, str, bool]]) -> list[int]:
    """The rounds, in order, in which agent A and agent B both predicted; ``turns`` gives each
    debate turn as (round, role, whether it holds a distribution)."""
    have = {(round_, role) for round_, role, predicted in turns if predicted}
    return sorted({round_ for round_, _ in have if {(round_, "agent-a"), (round_, "agent-b")} <= have})


def says_no_prediction(notes: Iterable[str]) -> bool:
    """Whether a turn's parse notes record that it gave no prediction (and why)."""
    return any("no prediction" in note for note in notes)


#: One whole prediction object as the reply schema orders its keys (llama.cpp's JSON-schema
#: grammar writes properties in schema order), read without Symposium's own parser.
_WHOLE_PREDICTION = re.compile(r'\{\s*"label"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"probability"\s*:\s*'
                               r'(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*,\s*"argument"\s*:\s*"(?:[^"\\]|\\.)*"\s*\}')


def whole_predictions(raw: str, labels: Iterable[str]) -> list[str]:
    """The labels of the complete prediction objects in a raw reply that name a label of the
    class set with a probability in (0, 1] — an independent reading, by regular expression,
    of what any correct parser must accept (a reply cut off later keeps these parts)."""
    known = {label.casefold(): label for label in labels}
    found = []
    for match in _WHOLE_PREDICTION.finditer(raw):
        label, probability = match.group(1), float(match.group(2))
        if label.casefold() in known and 0 < probability <= 1:
            found.append(known[label.casefold()])
    return found


def assert_parsed_where_readable(turns: Iterable[dict[str, Any]], labels: Iterable[str]) -> None:
    """Every journalled debate turn whose raw reply holds a whole prediction of a known label
    has a distribution naming it, and at least one turn of the run holds one: a parser that
    rejected everything (or a run that never predicted) fails here, whatever a small model
    wrote elsewhere in its replies."""
    labels = list(labels)
    readable = 0
    for t in turns:
        seen = whole_predictions(t["raw"], labels)
        if not seen:
            continue
        readable += 1
        assert t["distribution"], f"turn {t['seq']} holds a whole prediction of {seen[0]} but was not parsed: {t['parse_notes']}"
        assert seen[0] in t["distribution"], (seen, t["distribution"])
    assert readable > 0, "no turn of the run held a whole prediction: nothing was checked"
