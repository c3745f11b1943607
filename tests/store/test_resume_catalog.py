"""Which journalled debate can be resumed, by which protocol, with which models and sampling
(protocols/registry.py ``resumable``; protocols/core/definition.py ``ProtocolDefinition.roles_from``,
``recorded_options`` and ``resume``), read from the journal's rows.

`symposium resume` and Home's `r` both start here: the journal names the protocol and its
participants (role, model, backend, sampling options); the form's roles are rebuilt from them,
and each resumed agent must sample as it did before the cut, or the replies after the cut are
not the ones an uninterrupted run would have had (a seed, a temperature set for one agent).
The last test runs a real journal (SQLite) with oracle backends (tests/helpers/scripted_backends.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from backends.base import SamplingOptions
from protocols.core.agents import Agent
from protocols.core.definition import ProtocolDefinition, Role
from protocols.core.events import Event, Interject, Notice
from protocols.core.moderation import CommandChannel
from protocols.core.replay import counted
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.scripted_backends import OracleBackend
from tui.forms import FormError, ProtocolSpec
from tui.protocol_catalog import SPECS, resumable


def seat(role: str, model: str, backend: str = "llamacpp", options: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"role": role, "model_id": model, "backend": backend, "options": options or {}, "details": {}}


def debate(protocol: str, participants: list[dict[str, Any]], **rest: Any) -> dict[str, Any]:
    return {"id": "d1", "protocol": protocol, "status": "interrupted", "events_recorded": 7,
            "participants": participants, **rest}


# -- resumable ---------------------------------------------------------------------------------

@pytest.mark.parametrize("status", ["finished", "stopped"])
def test_a_debate_that_ended_is_not_resumed(status: str) -> None:
    with pytest.raises(FormError) as error:
        resumable(debate("evince", [], status=status))
    assert str(error.value) == f"debate d1 is {status}; only an unfinished debate can be resumed"


@pytest.mark.parametrize("status", ["running", "interrupted", "failed"])
def test_a_debate_cut_off_or_failed_is_resumed_by_its_own_protocol_with_its_models(status: str) -> None:
    spec, roles = resumable(debate("agreement", [seat("participant-1", "m1"), seat("participant-2", "m2"),
                                                 seat("judge", "mj")], status=status))
    assert spec is SPECS["agreement"]
    assert roles == {"participant-1": "m1", "participant-2": "m2", "judge": "mj"}


def test_a_protocol_that_journals_its_variant_is_resumed_by_the_protocol() -> None:
    for variant in ("d3-samre", "d3-more"):
        assert resumable(debate(variant, [seat("advocate-1", "ma")]))[0] is SPECS["d3"]


def test_a_protocol_this_symposium_does_not_run_is_refused_naming_what_it_runs() -> None:
    with pytest.raises(FormError) as error:
        resumable(debate("oxford-union", []))
    assert str(error.value) == ("debate d1: its protocol 'oxford-union' is not one this Symposium runs "
                                f"({', '.join(SPECS)}); open it with `symposium show` instead")


def test_a_debate_journalled_before_replies_were_kept_is_refused() -> None:
    with pytest.raises(FormError) as error:
        resumable(debate("evince", [], events_recorded=None))
    assert str(error.value) == ("debate d1 was journalled before Symposium kept its models' replies (journal "
                                "layout v5), so it cannot be resumed exactly; start it again")
    assert resumable(debate("evince", [], events_recorded=0))[0] is SPECS["evince"], "nothing recorded yet is resumable"


# -- roles_from --------------------------------------------------------------------------------

def test_roles_are_the_form_s_own_with_the_models_that_played_them_and_not_the_person() -> None:
    humanloop = SPECS["humanloop"]
    played = [seat("human", "human", backend="human"), seat("agent-1", "m1"), seat("agent-2", "m2"),
              seat("clerk", "mc"), seat("observer", "mo")]
    assert humanloop.definition.roles_from(played) == {"agent-1": "m1", "agent-2": "m2", "clerk": "mc"}
    assert humanloop.definition.roles_from(played) == humanloop.roles_for(
        {**humanloop.defaults(), "case": "c", "agent": "m1, m2", "clerk": "mc"}), "roles_from is not the inverse of roles_for"


def test_a_list_of_models_is_read_up_to_its_first_missing_seat() -> None:
    agreement = SPECS["agreement"]
    played = [seat("participant-1", "m1"), seat("participant-2", "m2"), seat("participant-4", "m4"), seat("judge", "mj")]
    assert agreement.definition.roles_from(played) == {"participant-1": "m1", "participant-2": "m2", "judge": "mj"}


def test_a_model_field_journalled_per_seat_takes_its_first_seat_s_model() -> None:
    d3 = SPECS["d3"]
    played = [seat("judge", "mj"), seat("advocate-1", "ma"), seat("advocate-2", "mb"), seat("juror-1", "m1")]
    assert d3.definition.roles_from(played) == {"advocate": "ma", "judge": "mj", "juror-1": "m1"}


def test_a_role_the_journal_does_not_hold_is_left_out() -> None:
    assert SPECS["evince"].definition.roles_from([seat("agent-a", "ma"), seat("moderator", "mm"), seat("agent-bb", "mb")]) \
        == {"agent-a": "ma"}
    assert SPECS["evince"].definition.roles_from([seat("agent-a", "ma", backend="human")]) == {}


# -- recorded_options --------------------------------------------------------------------------

def test_each_role_samples_as_journalled_with_its_stop_strings_as_a_tuple() -> None:
    a = {"max_tokens": 64, "temperature": 0.3, "seed": 5, "stop": ["</s>", "END"]}
    j = {"max_tokens": 32, "temperature": 0.0, "seed": 9}
    opts = SPECS["evince"].definition.recorded_options([seat("agent-a", "ma", options=a), seat("agent-b", "mb"),
                                                 seat("judge", "mj", options=j)])
    assert opts == {"agent-a": SamplingOptions(max_tokens=64, temperature=0.3, seed=5, stop=("</s>", "END")),
                    "judge": SamplingOptions(max_tokens=32, temperature=0.0, seed=9, stop=())}


def test_a_person_s_seat_never_gives_a_model_its_sampling() -> None:
    """A person may sit in one of a role's seats (``advocate-1``): the role's model samples as
    its own seat was journalled."""
    d3 = SPECS["d3"]
    played = [seat("advocate-1", "human", backend="human", options={"seed": 3}), seat("advocate-2", "mb", options={"seed": 2})]
    assert d3.definition.roles_from(played) == {"advocate": "mb"}
    assert d3.definition.recorded_options(played) == {"advocate": SamplingOptions(seed=2)}


def test_a_seat_per_side_gives_the_form_role_its_first_seat_s_options_and_the_person_none() -> None:
    d3 = SPECS["d3"]
    opts = d3.definition.recorded_options([seat("advocate-1", "ma", options={"seed": 1}), seat("advocate-2", "ma", options={"seed": 2}),
                                seat("juror-1", "m1", backend="human", options={"seed": 3})])
    assert opts == {"advocate": SamplingOptions(seed=1)}


# -- resume: the journalled config and each agent's journalled sampling ------------------------

class Cut(Exception):
    """The process dying right after a journal write."""


class CuttingJournal(Journal):
    def __init__(self, path: Path, at: int) -> None:
        super().__init__(path)
        self.at, self.n = at, 0

    def record(self, event: Event) -> int | None:
        row = super().record(event)
        self.n += counted(event)
        if self.n == self.at:
            raise Cut
        return row


VALUES = {"issue": "Build a new library or repair the old one?", "topics": "needs; costs", "participant": "m1, m2",
          "judge": "mj", "max_rounds": "2", "profile": "small"}
#: Each agent's own sampling (the judge keeps the default): what a resumed agent must keep.
OPTIONS = {"participant-1": SamplingOptions(max_tokens=48, temperature=0.9, seed=3, stop=("END",)),
           "participant-2": SamplingOptions(max_tokens=40, temperature=0.2, seed=4)}


async def run(db: Path, cut_at: int | None) -> None:
    spec = SPECS["agreement"]
    values = {**spec.defaults(), **VALUES}
    roles = spec.roles_for(values)
    agents = {role: Agent(role, OracleBackend(model), OPTIONS.get(role, SamplingOptions())) for role, model in roles.items()}

    async def person(prompt: str) -> str:
        raise AssertionError("agreement has no person's seat")

    journal = CuttingJournal(db, cut_at) if cut_at is not None else Journal(db)
    with journal:
        await drive(spec.build(values, agents, "d", CommandChannel(), person), journal)


def calls(db: Path) -> list[tuple[str, str, dict[str, Any]]]:
    with Journal(db) as journal:
        d = Queries(journal).debate("d")
    assert d is not None
    return [(c["role"], c["purpose"], c["options"]) for c in d["model_calls"]]


async def test_a_resumed_debate_runs_under_its_journalled_config_and_each_agent_samples_as_it_did(tmp_path: Path) -> None:
    straight = tmp_path / "straight.db"
    await run(straight, None)
    db = tmp_path / "cut.db"
    with pytest.raises(Cut):
        await run(db, 4)
    with Journal(db) as journal:
        cut = Queries(journal).debate("d")
    assert cut is not None
    spec, roles = resumable(cut)
    # Fresh agents that would sample otherwise: the journal decides how each samples.
    agents = {role: Agent(role, OracleBackend(model), SamplingOptions(max_tokens=999, temperature=1.5, seed=77))
              for role, model in roles.items()}

    async def person(prompt: str) -> str:
        raise AssertionError("agreement has no person's seat")

    with Journal(db) as journal:
        final = await drive(spec.resume(cut, agents, CommandChannel(), person), journal)
    assert final is not None and final.status == "finished"
    assert calls(db) == calls(straight), "a resumed agent sampled otherwise than it did before the cut"
    assert all(agent.options.seed == 77 for agent in agents.values()), "the caller's agents were changed"


@dataclasses.dataclass(frozen=True)
class PlainConfig:
    """A config without a ``from_description`` of its own, as a new protocol's may be."""

    topic: str
    rounds: int = 1


async def test_a_protocol_without_its_own_reading_of_a_journalled_config_resumes_under_every_field_journalled() -> None:
    """The generic reading (protocols.core.params.from_description) takes the config's fields and
    leaves what ``describe()`` adds for readers; each agent samples as journalled, or as given
    where the journal kept no options for its role; commands sent to the resumed run reach it."""
    started: list[tuple[Any, dict[str, SamplingOptions], str, Any]] = []

    async def start(config: Any, agents: Mapping[str, Agent], debate_id: str, channel: CommandChannel,
                    person: Any, evidence: Any) -> AsyncIterator[Event]:
        started.append((config, {r: a.options for r, a in agents.items()}, debate_id, channel.poll()))
        yield Notice(debate_id, "note", str(await person.speak("Your view?")))

    spec = ProtocolSpec(ProtocolDefinition("plain", "Plain", "", PlainConfig, (),
                                           (Role("speaker", "Speaker"), Role("listener", "Listener"),
                                            Role("human", "You", kind="person")),
                                           lambda v: {}, dict, start))
    journalled = {"id": "d9", "config": {"topic": "tides", "rounds": 2, "shown_only": "for readers"},
                  "participants": [seat("speaker", "ms", options={"seed": 4, "stop": ["END"]})], "events_recorded": 0}
    given = SamplingOptions(seed=1)
    agents = {"speaker": Agent("speaker", OracleBackend("ms"), given),
              "listener": Agent("listener", OracleBackend("ml"), given)}
    channel = CommandChannel()
    channel.send(Interject("hello"))

    async def person(prompt: str) -> str:
        return f"the person's answer to {prompt}"

    events = [e async for e in spec.resume(journalled, agents, channel, person)]
    assert started == [(PlainConfig("tides", 2), {"speaker": SamplingOptions(seed=4, stop=("END",)), "listener": given},
                        "d9", Interject("hello"))]
    assert [type(e).__name__ for e in events] == ["DebateResumed", "Notice"]
    assert isinstance(events[1], Notice) and events[1].text == "the person's answer to Your view?"


@dataclasses.dataclass(frozen=True)
class WordsConfig:
    """A config that journals its subject in another form than its field (as EVINCE journals its
    label set as a list): only its own ``from_description`` can read it back."""

    topic: str

    def describe(self) -> dict[str, Any]:
        return {"words": self.topic.split()}

    @classmethod
    def from_description(cls, data: dict[str, Any]) -> WordsConfig:
        return cls(" ".join(data["words"]))


async def test_a_config_that_reads_its_own_journalled_description_is_resumed_through_it() -> None:
    configs: list[Any] = []

    async def start(config: Any, agents: Mapping[str, Agent], debate_id: str, channel: CommandChannel,
                    person: Any, evidence: Any) -> AsyncIterator[Event]:
        configs.append((config, person))
        yield Notice(debate_id, "note", "started")

    async def person(prompt: str) -> str:
        raise AssertionError("no person's seat")

    spec = ProtocolSpec(ProtocolDefinition("words", "Words", "", WordsConfig, (), (), lambda v: {}, dict, start))
    described = WordsConfig("spring tides").describe()
    events = [e async for e in spec.resume({"id": "d8", "config": described, "participants": [], "events_recorded": 0},
                                           {}, CommandChannel(), person)]
    assert configs == [(WordsConfig("spring tides"), None)], "a protocol without a person's seat was given one"
    assert len(events) == 2
