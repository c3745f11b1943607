"""The skeleton in protocols/_template is a working protocol: a copy of it starts from its form,
runs, presents its findings and resumes from any cut with the prompts an uninterrupted run sends,
before a line of it is changed (it is not registered, so the registry-generated contract tests do
not reach it; this runs the same contract on it directly)."""

from __future__ import annotations

from pathlib import Path

import pytest

from backends.base import SamplingOptions
from protocols import _template
from protocols.core.agents import Agent
from protocols.core.moderation import CommandChannel
from store.drive import drive
from store.journal import Journal
from tests.helpers.cut_and_resume import (
    Cut,
    CuttingJournal,
    Person,
    comparable,
    moderator,
    oracles,
    record_of,
    start,
)
from tests.helpers.samples import form_values
from tui.forms import ProtocolSpec

SPEC = ProtocolSpec(_template.DEFINITION)
SAMPLE = _template.DEFINITION.samples[0]


async def test_the_template_runs_presents_and_resumes_at_every_cut(tmp_path: Path) -> None:
    values = form_values(SPEC, SAMPLE)
    straight = oracles(SPEC.roles_for(values))
    with Journal(tmp_path / "whole.db") as journal:
        await start(SPEC, values, journal, "d", straight, Person())
    whole = record_of(tmp_path / "whole.db", "d")
    assert whole["status"] == "finished" and len(whole["turns"]) == SAMPLE.fewest_turns
    [section] = _template.DEFINITION.present(whole["outcome"], whole)
    assert section.claims == {"answers"} and len(section.blocks[0].rows) == SAMPLE.fewest_turns
    for at in range(2, whole["events_recorded"] + 1):
        db = tmp_path / f"cut-{at}.db"
        first = oracles(SPEC.roles_for(values))
        with CuttingJournal(db, at, "after") as journal, pytest.raises(Cut):
            await start(SPEC, values, journal, "d", first, Person())
        cut = record_of(db, "d")
        roles = SPEC.definition.roles_from(cut["participants"])
        fresh = oracles(roles)
        agents = {role: Agent(role, fresh[model], SamplingOptions()) for role, model in roles.items()}
        channel = CommandChannel()
        with Journal(db) as journal:
            await drive(SPEC.definition.resume(cut, agents, channel=channel), journal, moderator(SPEC, channel, cut))
        assert comparable(record_of(db, "d")) == comparable(whole), f"cut after event {at}"
