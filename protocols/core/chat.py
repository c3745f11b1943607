"""The simplest protocol: one person asks one model one question.

It exists so that ``symposium chat`` goes through exactly the same event stream and journal as
a debate (a "debate" with one human turn and one model turn), and so the journal's history
holds quick questions beside debates.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from backends.base import Message
from protocols.core.agents import Agent
from protocols.core.events import DebateFinished, DebateStarted, Event, Participant, TurnFinished


async def run(debate_id: str, agent: Agent, prompt: str, *, system: str | None = None) -> AsyncIterator[Event]:
    """Ask ``agent`` ``prompt`` and stream the reply."""
    yield DebateStarted(
        debate_id,
        protocol="chat",
        title=_title(prompt),
        subject=prompt,
        config={"system": system},
        participants=(Participant("user", "human", "human"), agent.participant()),
    )
    yield TurnFinished(debate_id, "user", "human", "chat", 0, "question", prompt, prompt, call=None)
    messages = ([Message("system", system)] if system else []) + [Message("user", prompt)]
    turn = agent.turn(messages)
    async for event in turn.events(debate_id, phase="chat", round=0, kind="reply"):
        yield event
    assert turn.completion is not None
    reply = turn.completion
    yield TurnFinished(debate_id, agent.role, agent.model_id, "chat", 0, "reply", reply.text, reply.text, call=turn.call())
    yield DebateFinished(debate_id, "finished", reply.finish_reason, {"reply_tokens": reply.usage.completion_tokens})


def _title(prompt: str, width: int = 60) -> str:
    line = " ".join(prompt.split())
    return line if len(line) <= width else line[: width - 1] + "…"
