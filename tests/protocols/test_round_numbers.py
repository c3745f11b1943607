"""One round numbering everywhere, and commands heard too late.

The convention (docs/protocols/common.md, "Round numbers"): round 0 is the opening round, refutation
rounds are 1, 2, … and every later step (EVINCE's recommendations, SocraSynth's evaluation,
conciliatory and Q&A stages) takes the next number after the last round *held*. A round the
moderator skipped or stopped before any turn was taken is not held: it is neither counted in the
outcome nor numbered. Scripted backends: the test needs the skip to land at an exact checkpoint.
"""

from __future__ import annotations

import json
from pathlib import Path

from protocols import evince
from protocols.core.events import (
    DebateFinished,
    Event,
    Interject,
    MetricsComputed,
    ModeratorActed,
    SetContentiousness,
    SkipToConclusion,
    TurnFinished,
)
from protocols.core.moderation import CommandChannel
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.evince_scripted import agents, config, reply
from tests.helpers.scripted_backends import ScriptedBackend

MOVING = [{"Dengue": 0.6, "Zika": 0.4}, {"Zika": 0.7, "Dengue": 0.3}, {"Dengue": 0.55, "Malaria": 0.45}]
RECS = json.dumps({"questions": ["travel history?"], "tests": ["NS1 antigen"]})


def team() -> evince.EvinceAgents:
    a = [reply(MOVING[i % 3]) for i in range(3)] + [RECS]
    b = [reply(MOVING[(i + 1) % 3]) for i in range(3)] + [RECS]
    return agents(ScriptedBackend("a", a), ScriptedBackend("b", b), ScriptedBackend("j", []))


async def _run(path: Path, on_event, cfg: evince.EvinceConfig) -> tuple[list[Event], dict]:
    channel = CommandChannel()
    seen: list[Event] = []

    def sink(event: Event) -> None:
        seen.append(event)
        on_event(event, channel)

    with Journal(path) as journal:
        await drive(evince.run(cfg, team(), debate_id="r", channel=channel), journal, sink)
        stored = Queries(journal).debate("r")
    assert stored is not None
    stored["left_in_channel"] = [channel.poll(), channel.poll()]
    return seen, stored


async def test_a_skip_before_a_round_leaves_no_gap_in_the_numbers(tmp_path: Path) -> None:
    """Skip heard after round 1: round 2 is never held, so the outcome counts the opening and one
    refutation round, and the recommendations are round 2 (main had 3 rounds, 2 refutation
    rounds and recommendations in round 3, with no round 2 in the transcript)."""
    def skip_after_round_1(event: Event, channel: CommandChannel) -> None:
        if isinstance(event, MetricsComputed) and event.round == 1:
            channel.send(SkipToConclusion())

    seen, stored = await _run(tmp_path / "j.db", skip_after_round_1, config(max_rounds=5, recommendations=True))
    debated = sorted({t["round"] for t in stored["turns"] if t["kind"] != "recommendations"})
    recommended = {t["round"] for t in stored["turns"] if t["kind"] == "recommendations"}
    done = seen[-1]
    assert isinstance(done, DebateFinished) and done.outcome["ending"] == "skipped"
    assert debated == [0, 1]
    assert done.outcome["rounds"] == len(debated) and done.outcome["refutation_rounds"] == debated[-1]
    assert recommended == {debated[-1] + 1}
    assert stored["outcome"]["refutation_rounds"] == 1  # the journal says the same


async def test_a_command_heard_after_the_last_turn_is_not_journalled_and_is_left_to_report(tmp_path: Path) -> None:
    """An interjection or a κ sent while the recommendations are written can no longer reach
    anyone: the closing checkpoint does not apply it (no moderator event claims it took
    effect) and leaves it in the channel, where the screen finds it and says it came too late.
    A κ heard while the debate runs does take effect, and is journalled."""
    def steer(event: Event, channel: CommandChannel) -> None:
        if isinstance(event, MetricsComputed) and event.round == 0:
            channel.send(SetContentiousness(0.4))
        if isinstance(event, TurnFinished) and event.kind == "recommendations" and event.role == "agent-b":
            channel.send(Interject("too late", to="both"))
            channel.send(SetContentiousness(0.8))

    seen, stored = await _run(tmp_path / "j.db", steer, config(max_rounds=2, recommendations=True))
    journalled = [(m["kind"], m["payload"]) for m in stored["moderator_events"]]
    assert journalled == [("set_contentiousness", {"value": 0.4})]
    assert not [e for e in seen if isinstance(e, ModeratorActed) and e.kind == "interject"]
    assert stored["left_in_channel"] == [Interject("too late", to="both"), SetContentiousness(0.8)]
    assert [t["kappa"] for t in stored["turns"] if t["round"] == 1 and t["role"] == "agent-a"] == [0.4]


async def test_socrasynth_skipped_to_its_closing_numbers_every_later_stage_without_a_gap(tmp_path: Path) -> None:
    """SocraSynth: a skip heard before refutation round 2 makes round 2 the closing round; the
    evaluation, conciliatory and Q&A stages are 3, 4, 5. Every number from 0 to the last is used."""
    from backends.base import SamplingOptions
    from protocols import socrasynth as ss
    from protocols.core.agents import Agent
    from tests.helpers.scripted_backends import fits

    def agent(role: str) -> Agent:
        return Agent(role, ScriptedBackend(role, [], answer=fits), SamplingOptions(max_tokens=64))

    team = ss.SocraSynthAgents(agent("agent-a"), agent("agent-b"), [agent("judge-1")], qa=agent("qa"))
    cfg = ss.SocraSynthConfig(subject="Should towns ban cars from their centres?", max_rounds=5, subtopics=1,
                              qa_baseline=True, case_check=False)
    channel = CommandChannel()

    def skip_after_round_1(event: Event) -> None:
        if isinstance(event, MetricsComputed) and event.round == 1:
            channel.send(SkipToConclusion())

    with Journal(tmp_path / "j.db") as journal:
        await drive(ss.run(cfg, team, debate_id="s", channel=channel), journal, skip_after_round_1)
        stored = Queries(journal).debate("s")
    assert stored is not None
    used = {t["round"] for t in stored["turns"]} | {j["round"] for j in stored["judgements"] if j["round"] is not None}
    assert used == set(range(max(used) + 1)), sorted(used)
    phases = {p["name"]: p["round"] for p in stored["phases"]}
    assert (phases["closing"], phases["evaluation"], phases["conciliatory"], phases["qa"]) == (2, 3, 4, 5)
    assert [r["round"] for r in stored["outcome"]["rounds"]] == [0, 1, 2]
