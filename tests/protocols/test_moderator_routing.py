"""The moderator's commands reach the roles each protocol declares (``HONOURED``), and only them.

Scripted backends (tests/helpers/scripted_backends.py): the tests are about where an interjection goes
and when a command takes effect, which must not depend on what a model happens to say. Each
interjection is checked where the journal keeps it: the ``interject`` moderator event, the
addressed role's next request (the turns table's ``request`` column) or, for the roles that
have no turns (D3's judge and jurors), their judgement's reasons and the prompt the backend got.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from backends.base import SamplingOptions
from protocols import agreement as conference
from protocols import d3, deliberation, evince, humanloop, socrasynth
from protocols.core.agents import Agent
from protocols.core.events import (
    DebateStarted,
    Event,
    Interject,
    JudgementMade,
    PhaseChanged,
    SetContentiousness,
    SkipToConclusion,
    Stop,
    TurnFinished,
)
from protocols.core.moderation import CommandChannel, Honoured
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers import socrasynth_scripted as ssp
from tests.helpers.scripted_backends import ScriptedBackend

OPTS = SamplingOptions(max_tokens=40, temperature=0.7, seed=3)
SAID = "Consider the cost to <b>[red]small</red> towns."  # markup-like on purpose: it is kept as typed


def test_numbered_and_exact_entries_give_a_debates_own_roles_in_order() -> None:
    honoured = Honoured(interject=("advocate-1", "advocate-2", "judge", "juror-"))
    roles = ["advocate-1.1", "advocate-2", "advocate-1", "judge", "juror-10", "juror-2", "juror-1", "jurors", "juror-x"]
    assert honoured.targets(roles) == ("advocate-1", "advocate-2", "judge", "juror-1", "juror-2", "juror-10")
    assert honoured.addresses("juror-3") and not honoured.addresses("advocate-1.1") and not honoured.addresses("juror-")
    assert Honoured().targets(roles) == ()


def test_only_socrasynth_and_evince_offer_contentiousness_and_every_protocol_declares_its_commands() -> None:
    declared = {m.__name__: m.HONOURED for m in (evince, socrasynth, conference, deliberation, humanloop, d3)}
    assert {name for name, h in declared.items() if h.contentiousness} == {"protocols.evince", "protocols.socrasynth"}
    assert all(h.interject and h.stop and h.skip and h.pause for h in declared.values())


async def _journalled(events: Any, tmp_path: Path, debate_id: str, on_event: Callable[[Event], None] | None = None) -> dict[str, Any]:
    sinks = [on_event] if on_event else []
    with Journal(tmp_path / f"{debate_id}.db") as journal:
        final = await drive(events, journal, *sinks)
        debate = Queries(journal).debate(debate_id)
    assert final is not None and debate is not None
    return debate


def _interjections(debate: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["payload"]["to"], m["payload"]["text"]) for m in debate["moderator_events"] if m["kind"] == "interject"]


def _requests(debate: dict[str, Any], role: str) -> list[str]:
    return [t["request"] or "" for t in debate["turns"] if t["role"] == role]


async def _participants(run: Any) -> tuple[str, ...]:
    """The roles a run announces in its DebateStarted (what the Debate screen offers from)."""
    events = run.run()
    first = await events.__anext__()
    await events.aclose()
    assert isinstance(first, DebateStarted)
    return tuple(p.role for p in first.participants)


# -- the contract: "all" reaches exactly the roles offered -----------------------------------------


def _conference(channel: CommandChannel | None = None) -> conference.Conference:
    config = conference.ConferenceConfig(issue="Library or repair?", topics=["budget"], max_rounds=2)
    agents = conference.ConferenceAgents(
        [Agent("participant-1", ScriptedBackend("p1", [f"one {i}" for i in range(9)]), OPTS),
         Agent("participant-2", ScriptedBackend("p2", [f"two {i}" for i in range(9)]), OPTS),
         Agent("participant-3", ScriptedBackend("p3", [f"three {i}" for i in range(9)]), OPTS)],
        Agent("judge", ScriptedBackend("judge", ["MORE DEBATE"] * 4), OPTS))
    return conference.Conference(config, agents, debate_id="route-c", channel=channel)


def _deliberation(channel: CommandChannel | None = None) -> deliberation.Deliberation:
    async def person(prompt: str) -> str:
        return "I agree."

    config = deliberation.DeliberationConfig(topic="Phones in schools?", max_turns=6, analyze_every=0)
    agents = deliberation.DeliberationAgents(
        Agent("moderator", ScriptedBackend("mod", ["Let us begin."] + ['{"next_speaker": "Deliberator 2"}', "Go on."] * 9), OPTS),
        [Agent("deliberator-1", ScriptedBackend("d1", [f"one {i}" for i in range(9)]), OPTS),
         Agent("deliberator-2", ScriptedBackend("d2", [f"two {i}" for i in range(9)]), OPTS)])
    return deliberation.Deliberation(config, agents, person, debate_id="route-dl", channel=channel)


def _humanloop(channel: CommandChannel | None = None, condition: str = "multiagent") -> humanloop.Humanloop:
    panel = [Agent("judge", ScriptedBackend(f"seat-{i}", [f"Judge {i} says affirm. Confidence: 70"] * 6), OPTS) for i in (1, 2)]
    clerk = Agent("clerk", ScriptedBackend("clerk", ['{"stance": "affirm"}'] * 12), OPTS)
    config = humanloop.HumanloopConfig(case="A contract dispute.", rounds=2, turn_tokens=24, condition=condition)  # type: ignore[arg-type]
    return humanloop.Humanloop(config, humanloop.HumanloopAgents(panel, clerk), debate_id="route-hl", channel=channel)


def _d3(channel: CommandChannel | None = None, variant: str = "samre", swap: bool = False) -> tuple[d3.D3, dict[str, ScriptedBackend]]:
    scores = json.dumps({"score_1": 15, "feedback_1": "good", "score_2": 9, "feedback_2": "thin"})
    vote = json.dumps({"score_1": 14, "score_2": 8, "rationale": "sound"})
    backends = {"advocate": ScriptedBackend("adv", [f"defense {i}" for i in range(20)]),
                "judge": ScriptedBackend("judge", [scores] * 8),
                "juror": ScriptedBackend("juror", [vote] * 8)}
    config = d3.D3Config("Boiling point of water?", "100 °C", "50 °C", variant=variant, max_rounds=2, k=2,  # type: ignore[arg-type]
                         jury_size=2, swap_audit=swap, epsilon=0.0, window=3)
    team = d3.D3Agents(Agent("advocate", backends["advocate"], OPTS), Agent("judge", backends["judge"], OPTS),
                       [Agent("juror", backends["juror"], OPTS)])
    return d3.D3(config, team, debate_id="route-d3", channel=channel), backends


def _evince() -> evince.Evince:
    config = evince.EvinceConfig(case="fever", labels=evince.LabelSet(["Malaria", "Dengue"]))
    agents = evince.EvinceAgents(*(Agent(r, ScriptedBackend(r, []), OPTS) for r in ("agent-a", "agent-b", "judge")))
    return evince.Evince(config, agents, debate_id="route-ev")


@pytest.mark.parametrize("make", [_conference, _deliberation, _humanloop, lambda: _humanloop(condition="synthetic"),
                                  lambda: _d3()[0], lambda: _d3(variant="more")[0], _evince,
                                  lambda: socrasynth.SocraSynth(socrasynth.SocraSynthConfig(subject="Cars?"), ssp.agents(),
                                                                debate_id="route-ss")],
                         ids=["agreement", "deliberation", "humanloop", "humanloop-synthetic", "d3-samre", "d3-more", "evince",
                              "socrasynth"])
async def test_all_reaches_exactly_the_roles_an_interjection_may_name(make: Callable[[], Any]) -> None:
    """The Debate screen offers ``HONOURED.targets(participants)``; "all" goes to the protocol's
    moderation roles. They must be the same set, or "all" would miss a listed role (or reach one
    that is not offered)."""
    run = make()
    module = {conference.Conference: conference, deliberation.Deliberation: deliberation, humanloop.Humanloop: humanloop,
              d3.D3: d3, evince.Evince: evince, socrasynth.SocraSynth: socrasynth}[type(run)]
    offered = module.HONOURED.targets(await _participants(run))
    assert offered and set(offered) == set(run.moderation.roles)


# -- each protocol: the named role hears it in its next request, no one else does ------------------


async def test_the_conference_participant_named_hears_the_facilitator_and_no_one_else(tmp_path: Path) -> None:
    channel = CommandChannel()
    run = _conference(channel)

    def on(event: Event) -> None:
        if isinstance(event, TurnFinished) and event.role == "participant-1" and event.round == 0:
            channel.send(Interject(SAID, to="participant-3"))

    debate = await _journalled(run.run(), tmp_path, "route-c", on)
    assert _interjections(debate) == [("participant-3", SAID)]
    asks = _requests(debate, "participant-3")
    assert f"The facilitator adds: {SAID}" in asks[0]  # its turn in the same round, after participant-2's
    assert sum(SAID in a for r in ("participant-1", "participant-2", "participant-3") for a in _requests(debate, r)) == 1


async def test_a_deliberator_named_hears_the_host_and_no_one_else(tmp_path: Path) -> None:
    channel = CommandChannel()
    channel.send(Interject(SAID, to="deliberator-2"))
    debate = await _journalled(_deliberation(channel).run(), tmp_path, "route-dl")
    assert _interjections(debate) == [("deliberator-2", SAID)]
    asks = _requests(debate, "deliberator-2")
    assert asks and f"Note from the host: {SAID}" in asks[0]
    assert not any(SAID in a for r in ("moderator", "deliberator-1") for a in _requests(debate, r))


@pytest.mark.parametrize("condition, to", [("multiagent", "agent-2"), ("synthetic", "simulator")])
async def test_the_panel_seat_named_hears_the_moderator_and_no_one_else(condition: str, to: str, tmp_path: Path) -> None:
    channel = CommandChannel()
    run = _humanloop(channel, condition)

    def on(event: Event) -> None:
        if isinstance(event, TurnFinished) and event.round == 1 and event.role in ("agent-1", "simulator"):
            channel.send(Interject(SAID, to=to))

    debate = await _journalled(run.run(), tmp_path, "route-hl", on)
    assert _interjections(debate) == [(to, SAID)]
    asks = [t for t in debate["turns"] if t["request"] and SAID in t["request"]]
    assert [(t["role"], t["round"]) for t in asks] == [(to, 1 if to == "agent-2" else 2)]
    assert f"The moderator says: {SAID}" in asks[0]["request"]


async def test_d3_samre_routes_to_an_advocate_the_judge_and_a_juror(tmp_path: Path) -> None:
    channel = CommandChannel()
    run, backends = _d3(channel)

    def on(event: Event) -> None:
        if isinstance(event, TurnFinished) and event.role == "advocate-1" and event.round == 1:
            channel.send(Interject("advocate two, be brief", to="advocate-2"))
            channel.send(Interject("judge, weigh accuracy", to="judge"))
            channel.send(Interject(SAID, to="juror-2"))

    debate = await _journalled(run.run(), tmp_path, "route-d3", on)
    assert [to for to, _ in _interjections(debate)] == ["advocate-2", "judge", "juror-2"]
    asks = _requests(debate, "advocate-2")
    assert "The moderator says: advocate two, be brief" in asks[0] and not any("be brief" in a for a in asks[1:])
    assert not any("be brief" in a for a in _requests(debate, "advocate-1"))
    scores = [j for j in debate["judgements"] if j["kind"] == "score"]
    assert [j["reasons"].get("moderator") for j in scores] == [["The moderator says: judge, weigh accuracy"]] * 2 + [None] * 2
    judged = [p for p in backends["judge"].prompts if "weigh accuracy" in p[-1].content]
    assert len(judged) == 1 and "Round 1." in judged[0][-1].content  # the round-1 scoring, once
    votes = {j["judge_role"]: j for j in debate["judgements"] if j["kind"] == "vote"}
    assert votes["juror-2"]["reasons"]["moderator"] == [f"The moderator says: {SAID}"] and "moderator" not in votes["juror-1"]["reasons"]
    heard = [p for p in backends["juror"].prompts if SAID in p[-1].content]
    assert len(heard) == 1


async def test_d3_more_gives_an_advocates_words_to_its_whole_side(tmp_path: Path) -> None:
    channel = CommandChannel()
    channel.send(Interject(SAID, to="advocate-1"))
    run, _ = _d3(channel, variant="more")
    debate = await _journalled(run.run(), tmp_path, "route-d3", None)
    heard = sorted(t["role"] for t in debate["turns"] if t["request"] and SAID in t["request"])
    assert heard == ["advocate-1", "advocate-1.1", "advocate-1.2"]  # k = 2 defenders and the consolidation


async def test_d3_all_reaches_every_role_once_and_skip_ends_without_the_swap_pass(tmp_path: Path) -> None:
    channel = CommandChannel()
    channel.send(Interject(SAID, to="all"))
    run, backends = _d3(channel, swap=True)

    def on(event: Event) -> None:
        if isinstance(event, JudgementMade) and event.kind == "score" and event.round == 1 and event.target == "advocate-1":
            channel.send(SkipToConclusion())

    debate = await _journalled(run.run(), tmp_path, "route-d3", on)
    told = [t["role"] for t in debate["turns"] if t["request"] and SAID in t["request"]]
    assert sorted(told) == ["advocate-1", "advocate-2"]
    assert sum(SAID in p[-1].content for p in backends["judge"].prompts) == 1
    assert sum(SAID in p[-1].content for p in backends["juror"].prompts) == 2  # juror-1 and juror-2, once each
    assert [m["kind"] for m in debate["moderator_events"]] == ["interject", "skip_to_conclusion"]
    assert len(debate["outcome"]["passes"]) == 1 and debate["outcome"]["swap_audit"] is None
    assert "no swap pass" in debate["stop_reason"]
    assert max(t["round"] for t in debate["turns"]) == 1  # the second SAMRE round never started


async def test_d3_stop_between_the_advocates_ends_before_the_other_speaks(tmp_path: Path) -> None:
    channel = CommandChannel()
    run, backends = _d3(channel)

    def on(event: Event) -> None:
        if isinstance(event, TurnFinished) and event.role == "advocate-1":
            channel.send(Stop("enough"))

    debate = await _journalled(run.run(), tmp_path, "route-d3", on)
    assert debate["status"] == "stopped" and [t["role"] for t in debate["turns"]] == ["advocate-1"]
    assert not backends["judge"].prompts and not backends["juror"].prompts


async def test_socrasynth_takes_a_contentiousness_set_after_the_debate_in_its_conciliatory_stage(tmp_path: Path) -> None:
    """Δ set during the debate follows Table 6.2 from the next round (test_socrasynth.py); set
    during the evaluative stage, it is the conciliatory stage's κ, in both agents' requests."""
    channel = CommandChannel()
    config = socrasynth.SocraSynthConfig(subject=ssp.SUBJECT, max_rounds=1, subtopics=1, case_check=False, turn_tokens=64)
    run = socrasynth.SocraSynth(config, ssp.agents(), debate_id="route-ss", channel=channel)

    def on(event: Event) -> None:
        if isinstance(event, PhaseChanged) and event.phase == "evaluation":
            channel.send(SetContentiousness(0.65))

    debate = await _journalled(run.run(), tmp_path, "route-ss", on)
    joint = [t for t in debate["turns"] if t["phase"] == "conciliatory"]
    assert [t["kappa"] for t in joint] == [0.65, 0.65]
    assert all("the moderator sets contentiousness to 0.65" in t["request"] for t in joint)
    debated = [t for t in debate["turns"] if t["kind"] in ("opening", "refutation", "closing")]
    assert debated and all(t["kappa"] != 0.65 for t in debated)


async def test_socrasynth_keeps_a_rounds_delta_when_contentiousness_is_set_between_its_turns(tmp_path: Path) -> None:
    """Heard once a round has begun, an override leaves the round under way at its Δ (both agents
    argue a round at one Δ) and takes over from the next round; it used to look up the
    restarted schedule at round −1 and fail."""
    channel = CommandChannel()
    config = socrasynth.SocraSynthConfig(subject=ssp.SUBJECT, max_rounds=2, subtopics=1, case_check=False, turn_tokens=64,
                                         crit_tolerance=9.0)
    run = socrasynth.SocraSynth(config, ssp.agents(), debate_id="route-ss2", channel=channel)

    def on(event: Event) -> None:
        if isinstance(event, PhaseChanged) and event.phase == "refutation" and event.round == 1:  # heard before LLM+ speaks
            channel.send(SetContentiousness(0.4))

    debate = await _journalled(run.run(), tmp_path, "route-ss2", on)
    assert debate["status"] == "finished"
    argued = [(t["kind"], t["round"], t["kappa"]) for t in debate["turns"] if t["kind"] in ("opening", "refutation", "closing")]
    assert argued == [("opening", 0, 0.9), ("opening", 0, 0.9), ("refutation", 1, 0.75), ("refutation", 1, 0.75),
                      ("refutation", 2, 0.4), ("refutation", 2, 0.4), ("closing", 3, pytest.approx(0.4 / 1.2)),
                      ("closing", 3, pytest.approx(0.4 / 1.2))]
