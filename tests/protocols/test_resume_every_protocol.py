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

Oracle backends (tests/helpers/scripted_backends.py): a reply is a function of its prompt, so fresh backends
of a resumed run answer as the first ones did; a real model cannot be made to. The journal is a
real SQLite file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from backends.base import SamplingOptions
from protocols.core.agents import Agent
from protocols.core.moderation import CommandChannel
from store.drive import drive
from store.journal import Journal
from tests.helpers.cut_and_resume import Cut, CuttingJournal, Person, comparable, moderator, oracles, record_of, start
from tests.helpers.samples import ALL, form_values, spec_of
from tui.protocol_catalog import resumable


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
                    asked = first[model].prompts_of(role) + fresh[model].prompts_of(role)
                    assert asked == backend.prompts_of(role), f"{label}: {role}'s prompts on {model} differ from the uninterrupted run's"
            assert first_person.prompts + person.prompts == straight_person.prompts, f"{label}: the person was asked otherwise"
