"""A process that debates forever with the real SmolLM2 model, journalling every turn.

The crash-safety tests start it, wait until it is in the middle of a reply, and kill it.
It prints one line per milestone so the parent knows when to strike:
``finished N`` after turn N is committed, ``streaming N`` once turn N's first tokens arrive.

With ``hold`` as its third argument it stops after each ``streaming N``, mid-reply, until a line
(or the end) arrives on its standard input: the event loop waits in that read, so the reply under
way can be neither finished nor journalled before the parent's kill lands, however slowly the
parent reads; the parent lets the turns it does not strike go on.

    python -m tests.helpers.endless_debate DB DEBATE_ID [hold]
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator

from backends.base import Message, SamplingOptions
from backends.factory import create_backend
from backends.registry import load_registry
from protocols.core.agents import Agent
from protocols.core.events import DebateStarted, Event, TokenDelta, TurnFinished, TurnStarted
from store.drive import drive
from store.journal import Journal


async def endless(debate_id: str, agent: Agent) -> AsyncIterator[Event]:
    yield DebateStarted(debate_id, "endless", "crash test", "tea or coffee", {}, (agent.participant(),))
    history: list[Message] = [Message("user", "Argue for tea over coffee.")]
    n = 0
    while True:
        n += 1
        turn = agent.turn(history)
        async for event in turn.events(debate_id, phase="debate", round=n, kind="argument"):
            yield event
        assert turn.completion is not None
        text = turn.completion.text
        yield TurnFinished(debate_id, agent.role, agent.model_id, "debate", n, "argument", text, text, turn.call())
        history += [Message("assistant", text), Message("user", "Go on.")]


async def main(db: str, debate_id: str, hold: bool = False) -> None:
    backend = create_backend(load_registry().get("smollm2-135m"))
    agent = Agent("agent-a", backend, SamplingOptions(max_tokens=48, temperature=0.8))
    waiting_for_first_token: list[int] = []

    def milestones(event: Event) -> None:
        if isinstance(event, TurnStarted):
            waiting_for_first_token.append(event.round)
        elif isinstance(event, TokenDelta) and waiting_for_first_token:
            print(f"streaming {waiting_for_first_token.pop()}", flush=True)
            if hold:
                sys.stdin.readline()
        elif isinstance(event, TurnFinished):
            print(f"finished {event.round}", flush=True)

    with Journal(db) as journal:
        await drive(endless(debate_id, agent), journal, milestones)


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv[1], sys.argv[2], hold=sys.argv[3:] == ["hold"]))
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
