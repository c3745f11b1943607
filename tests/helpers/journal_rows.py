"""A debate's first rows for journal tests: its start, and a turn with the call that made it."""

from __future__ import annotations

from protocols.core.events import CallRecord, DebateStarted, Participant, TurnFinished
from store.journal import Journal

#: The model call behind each :func:`turn`.
CALL = CallRecord("agent-a", "smollm2-135m", "turn", {"temperature": 0.7}, 120, 30, 40, 1.25, 0.05)


def start(journal: Journal, debate_id: str = "d1", title: str = "Tea or coffee?") -> None:
    """Journal the start of an EVINCE debate between the two bundled models."""
    journal.record(DebateStarted(
        debate_id, "evince", title, "Which is better for a morning debate?", {"rounds": 3},
        (Participant("agent-a", "smollm2-135m", "llamacpp"), Participant("agent-b", "gemma3-270m", "llamacpp")),
    ))


def turn(debate_id: str = "d1", text: str = "Tea calms the mind.", role: str = "agent-a", **kw) -> TurnFinished:
    """A finished turn saying ``text`` (``round`` 1 unless ``kw`` says; other ``kw`` reach the event)."""
    return TurnFinished(debate_id, role, "smollm2-135m", "exploratory", kw.pop("round", 1), "argument", text, text, CALL, **kw)
