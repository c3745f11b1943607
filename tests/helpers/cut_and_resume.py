"""Cutting a debate at a journal write and resuming it, for the resume contract's tests.

A :class:`CuttingJournal` makes the process die at a chosen write; :func:`start` runs a protocol
the way the app and the CLI start it, with moderator commands sent at fixed events
(:func:`moderator`); :func:`comparable` is what must be the same however often a debate was cut.
The backends are oracles (tests/helpers/scripted_backends.py): a reply is a function of its prompt, so the
fresh backends of a resumed run answer as the first ones did, which a real model cannot be made
to do; the journal is a real SQLite file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from backends.base import SamplingOptions
from protocols.core.agents import Agent
from protocols.core.events import Event, Interject, Pause, Resume, SetContentiousness, TurnFinished
from protocols.core.moderation import CommandChannel
from protocols.core.replay import counted
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.scripted_backends import Draw, OracleBackend
from tui.forms import ProtocolSpec

OPTS = SamplingOptions(max_tokens=64, temperature=0.7, seed=5)


class Cut(Exception):
    """The process dying at a journal write."""


class CuttingJournal(Journal):
    """A journal whose process dies at its ``at``-th counted event: ``before`` writing it (the
    replies that led to it already kept) or right ``after``."""

    def __init__(self, path: Path, at: int, where: str) -> None:
        super().__init__(path)
        self.at, self.where, self.n = at, where, 0

    def record(self, event: Event) -> int | None:
        if counted(event):
            self.n += 1
            if self.n == self.at and self.where == "before":
                raise Cut
        row = super().record(event)
        if counted(event) and self.n == self.at:
            raise Cut
        return row


class Person:
    """The person's seat: an answer drawn from the prompt, and every prompt kept."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return Draw(prompt).sentence()


def moderator(spec: ProtocolSpec, channel: CommandChannel, journalled: dict[str, Any] | None = None) -> Callable[[Event], None]:
    """Commands at fixed events of a run: after the 2nd turn an interjection to every role, a
    pause and its resume; after the 4th, a contentiousness change where the protocol has one.

    For a resumed run (``journalled``: the debate as the cut left it), the count goes on from the
    journalled turns, and a command that was due but never took effect (it was in memory when the
    process died) is sent again at once, as a person would send it again."""
    due: dict[int, list[Any]] = {2: [Interject("Consider the cost to patients.", to="all"), Pause(), Resume()]}
    if spec.definition.commands.contentiousness:
        due[4] = [SetContentiousness(0.4)]
    turns = 0
    if journalled is not None:
        turns = len(journalled["turns"])
        took = [m["kind"] for m in journalled["moderator_events"] if m["checkpoint"] is not None]
        sent = [command for at, commands in sorted(due.items()) if turns >= at for command in commands]
        for command in sent[len(took):]:  # commands take effect in the order sent
            channel.send(command)

    def on_event(event: Event) -> None:
        nonlocal turns
        if isinstance(event, TurnFinished):
            turns += 1
            for command in due.get(turns, []):
                channel.send(command)
    return on_event


def record_of(db: Path, debate_id: str) -> dict[str, Any]:
    """The debate as the journal at ``db`` holds it."""
    with Journal(db) as journal:
        debate = Queries(journal).debate(debate_id)
    assert debate is not None
    return debate


def comparable(debate: dict[str, Any]) -> dict[str, Any]:
    """What must be the same however often the debate was cut: what was said and judged, the
    commands and the outcome."""
    return json.loads(json.dumps({
        "status": debate["status"], "outcome": debate["outcome"],
        "turns": [(t["round"], t["role"], t["kind"], t["text"], t["request"]) for t in debate["turns"]],
        "judgements": [(j["round"], j["judge_role"], j["kind"], j["target"], j["score"], j["verdict"]) for j in debate["judgements"]],
        "commands": [(m["kind"], m["payload"], m["checkpoint"]) for m in debate["moderator_events"] if m["kind"] != "resume_debate"],
        "metrics": debate["metrics"],
    }))


async def start(spec: ProtocolSpec, values: dict[str, Any], journal: Journal, debate_id: str,
                backends: dict[str, OracleBackend], person: Person) -> None:
    """Run the protocol of ``spec`` on ``values`` into ``journal``, moderated by :func:`moderator`."""
    roles = spec.roles_for(values)
    agents = {role: Agent(role, backends[model], OPTS) for role, model in roles.items()}
    channel = CommandChannel()
    events = spec.build(values, agents, debate_id, channel, person)
    await drive(events, journal, moderator(spec, channel))


def oracles(roles: dict[str, str]) -> dict[str, OracleBackend]:
    """One oracle backend per model of ``roles`` (role -> model)."""
    return {model: OracleBackend(model) for model in set(roles.values())}
