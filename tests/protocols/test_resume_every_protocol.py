"""Every protocol resumes after a cut at any journal write with the prompts an uninterrupted run
sends, message for message (the mechanism is protocols/core/replay.py).

Each protocol's sample runs (its definition's ``samples``) are started the way the app and the
CLI start them (the protocol's form spec) and run straight through, with moderator commands sent at fixed events (an interjection, a pause and its resume,
and a contentiousness change where the protocol has one). Then, for every event the journal
counts, it is run again and cut there, once right after the event is written and once right
before (the replies that led to it already kept), and resumed from the journal the way
`symposium resume` and Home's `r` do, on fresh backends and with no live commands. For every
role, the prompts of the cut run and the resumed run together must be the uninterrupted run's
(so no finished call is asked again and every command took effect again where it first did), the
person is asked exactly what they were asked before, and the journal ends holding the same turns,
judgements and outcome.

Oracle backends (tests/helpers/oracle.py): a reply is a function of its prompt, so fresh backends
of a resumed run answer as the first ones did; a real model cannot be made to. The journal is a
real SQLite file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from backends.base import SamplingOptions
from protocols.core.agents import Agent
from protocols.core.events import (
    Event,
    Interject,
    Pause,
    Resume,
    SetContentiousness,
    TurnFinished,
)
from protocols.core.moderation import CommandChannel
from protocols.core.replay import counted
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.oracle import Draw, OracleBackend
from tests.helpers.samples import ALL, form_values, spec_of
from tui.forms import ProtocolSpec
from tui.protocol_catalog import resumable

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
    roles = spec.roles_for(values)
    agents = {role: Agent(role, backends[model], OPTS) for role, model in roles.items()}
    channel = CommandChannel()
    events = spec.build(values, agents, debate_id, channel, person)
    await drive(events, journal, moderator(spec, channel))


def oracles(roles: dict[str, str]) -> dict[str, OracleBackend]:
    return {model: OracleBackend(model) for model in set(roles.values())}


@pytest.mark.timeout(300)  # a scripted run resumed at every cut: 75 s for SocraSynth on a busy two-core machine
@pytest.mark.parametrize("case", list(ALL))
async def test_every_protocol_resumes_with_an_uninterrupted_run_s_prompts_at_every_cut(tmp_path: Path, case: str) -> None:
    spec = spec_of(case)
    values = form_values(spec, ALL[case][1])
    straight_db = tmp_path / "straight.db"
    straight, straight_person = oracles(spec.roles_for(values)), Person()
    with Journal(straight_db) as journal:
        await start(spec, values, journal, "d", straight, straight_person)
    whole = record_of(straight_db, "d")
    assert whole["status"] == "finished", whole["stop_reason"]
    events = whole["events_recorded"]
    assert events >= 12, f"{case}: too short a debate to test ({events} events)"
    kinds = {m["kind"] for m in whole["moderator_events"]}
    assert {"interject", "pause", "resume"} <= kinds, f"{case}: the commands did not all take effect ({kinds})"
    roles = {role for b in straight.values() for role, _, _ in b.calls}

    for at in range(1, events + 1):
        for where in ("before", "after") if at > 1 else ("after",):  # before the start: no debate to resume
            label = f"{case}: cut {where} event {at} of {events}"
            db = tmp_path / f"cut-{at}-{where}.db"
            first, first_person = oracles(spec.roles_for(values)), Person()
            with CuttingJournal(db, at, where) as journal:
                with pytest.raises(Cut):
                    await start(spec, values, journal, "d", first, first_person)
            cut = record_of(db, "d")
            assert cut["status"] == "running", label
            resumed_spec, roles_by_model = resumable(cut)
            assert resumed_spec is spec
            assert roles_by_model == spec.roles_for(values), label
            fresh, person = oracles(roles_by_model), Person()
            agents = {role: Agent(role, fresh[model], SamplingOptions()) for role, model in roles_by_model.items()}
            channel = CommandChannel()
            on_event = moderator(spec, channel, cut)
            with Journal(db) as journal:
                final = await drive(spec.resume(cut, agents, channel, person), journal, on_event)
            assert final is not None and final.status == "finished", label
            assert comparable(record_of(db, "d")) == comparable(whole), label
            for model, backend in straight.items():
                for role in roles:
                    asked = first[model].prompts(role) + fresh[model].prompts(role)
                    assert asked == backend.prompts(role), f"{label}: {role}'s prompts on {model} differ from the uninterrupted run's"
            assert first_person.prompts + person.prompts == straight_person.prompts, f"{label}: the person was asked otherwise"
