"""Moderated deliberation (Turkstra et al., ArgsBase): the turn rules as properties, the moderator's
choice under any reply, a real deliberation between the bundled models with a scripted person,
the person's seats, the analyzer's cadence, and ``symposium run deliberation``."""

from __future__ import annotations

import io
import itertools
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backends.base import SamplingOptions
from backends.llamacpp import LlamaCppBackend
from protocols import deliberation
from protocols.core.agents import Agent
from protocols.core.events import DebateFinished, JudgementMade, Stop, TurnFinished
from protocols.core.moderation import CommandChannel
from protocols.deliberation import MODERATOR, PERSON, Roster, cap_words, eligible, resolve_choice
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.scripted_backends import ScriptedBackend
from tui.cli import main
from tui.cli.seats import ScriptSeat, StdinSeat
from tui.headless.printer import EventPrinter

OPTS = SamplingOptions(max_tokens=40, temperature=0.7, seed=7)
TOPIC = "Should phones be banned in schools?"
ROSTER = Roster(("deliberator-1", "deliberator-2"))


def assert_turn_rules(order: Sequence[str]) -> None:
    """No one twice in a row; the person in every three consecutive turns."""
    for a, b in itertools.pairwise(order):
        assert a != b, order
    for i in range(len(order) - 2):
        assert PERSON in order[i : i + 3], (i, order)


def simulate(choices: Sequence[str], roster: Roster) -> list[str]:
    """The realized order for a sequence of moderator replies, as the protocol builds it."""
    history = [PERSON, MODERATOR]  # the topic, then the moderator's agenda
    for raw in choices:
        candidates, _ = eligible(history, roster)
        choice = resolve_choice(raw, candidates, roster, history) if len(candidates) > 1 else deliberation.Choice(candidates[0], "rule")
        assert choice.role in candidates
        assert (choice.chosen_by == "fallback") == bool(choice.notes)
        history.append(choice.role)
    return history


names = st.sampled_from(["Moderator", "Deliberator 1", "Deliberator 2", "Deliberator 3", "Person", "human", "moderator"])


@given(st.lists(st.one_of(st.text(max_size=30), names, names.map(lambda n: f'{{"next_speaker": "{n}"}}')), max_size=40),
       st.integers(min_value=2, max_value=4))
def test_any_moderator_choices_keep_the_turn_rules(choices: list[str], n: int) -> None:
    roster = Roster(tuple(f"deliberator-{i}" for i in range(1, n + 1)))
    assert_turn_rules(simulate(choices, roster))


@given(st.text())
def test_any_reply_resolves_to_an_eligible_speaker_with_a_reason(raw: str) -> None:
    candidates = ["deliberator-2", "human"]
    choice = resolve_choice(raw, candidates, ROSTER, [PERSON, MODERATOR, "deliberator-1"])
    assert choice.role in candidates
    if choice.chosen_by == "fallback":
        assert choice.role == "deliberator-2" and "waited longest" in choice.notes[0]  # never spoke: longest wait


@pytest.mark.parametrize(("raw", "role", "by"), [
    ('{"next_speaker": "Deliberator 2"}', "deliberator-2", "moderator"),
    ("  person ", "human", "moderator"),
    ("deliberator-2", "deliberator-2", "moderator"),
    ("Moderator", "deliberator-1", "fallback"),                       # not eligible: spoke last
    ('{"next_speaker": "Person"} and then Deliberator 2', "deliberator-1", "fallback"),
    ("", "deliberator-1", "fallback"),
])
def test_the_moderators_choice(raw: str, role: str, by: str) -> None:
    history = [PERSON, "deliberator-1", "deliberator-2", PERSON, MODERATOR]
    candidates, rule = eligible(history, ROSTER)
    assert candidates == ["deliberator-1", "deliberator-2", "human"] and rule == "anyone but the last speaker"
    choice = resolve_choice(raw, candidates, ROSTER, history)
    assert (choice.role, choice.chosen_by) == (role, by)  # the fallback: deliberator-1 has waited longest


def test_the_rules_that_force_a_speaker() -> None:
    assert eligible([PERSON, MODERATOR, "deliberator-1"], ROSTER) == ([PERSON], "the person speaks at least once every three turns")
    history = [PERSON, MODERATOR, PERSON, MODERATOR, PERSON]  # no deliberator for five turns
    assert eligible(history, ROSTER) == (["deliberator-1", "deliberator-2"], "not heard in the last five turns")
    assert cap_words("one two three", 5) == ("one two three", None)
    shown, note = cap_words("a b c d e f", 4)
    assert shown == "a b c d …" and "cut to 4 words" in note and "had 6" in note


def test_headless_seats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    script = tmp_path / "me.txt"
    script.write_text("first point\n\nsecond point\n/end\nnever read\n", encoding="utf-8")
    seat = ScriptSeat(script)
    assert [asyncio.run(seat("?")) for _ in range(4)] == ["first point", "", "second point", None]
    short = tmp_path / "short.txt"
    short.write_text("only line\n", encoding="utf-8")
    seat = ScriptSeat(short)
    assert [asyncio.run(seat("?")) for _ in range(2)] == ["only line", None]  # the script ran out: the person ends
    monkeypatch.setattr(sys, "stdin", io.StringIO("typed\n\n/end\n"))
    stdin = StdinSeat()
    assert [asyncio.run(stdin("?")) for _ in range(3)] == ["typed", "", None]
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert asyncio.run(stdin("?")) is None  # end of input ends


def _scripted(moderator_replies: list[str]) -> deliberation.DeliberationAgents:
    moderator = ScriptedBackend("scripted-moderator", moderator_replies)
    d1 = ScriptedBackend("scripted-1", [f"one {i}" for i in range(30)])
    d2 = ScriptedBackend("scripted-2", [f"two {i}" for i in range(30)])
    analyzer = ScriptedBackend("scripted-analyzer", ['{"points": ["a point"]}'] * 40)
    return deliberation.DeliberationAgents(Agent("moderator", moderator, OPTS),
                                           [Agent("deliberator-1", d1, OPTS), Agent("deliberator-2", d2, OPTS)],
                                           Agent("analyzer", analyzer, OPTS))


async def test_the_analyzer_runs_every_k_turns_and_at_the_end_and_bad_choices_fall_back() -> None:
    """Scripted moderator: the test needs exact invalid choices (a name that may not speak,
    prose), which a real model under the enum schema does not write."""
    agents = _scripted(["Let us begin.", "Moderator", "I pick nobody", '{"next_speaker": "Deliberator 2"}'] + ["x"] * 20)
    lines = iter(["mine", "", "more", "again", "and again"])  # more than the person's turns: they never end it

    async def person(prompt: str) -> str | None:
        assert "Your turn, Person" in prompt
        return next(lines, None)

    config = deliberation.DeliberationConfig(topic=TOPIC, max_turns=7, analyze_every=3)
    events = [e async for e in deliberation.run(config, agents, person, debate_id="dl2")]
    final = events[-1]
    assert isinstance(final, DebateFinished) and final.status == "finished"
    order = final.outcome["order"]
    assert_turn_rules(order)
    assert len(order) == 9
    analyses = [e.round for e in events if isinstance(e, JudgementMade) and e.kind == "analysis"]
    assert analyses == [4, 7, 8]  # after every 3 turns past the agenda (turns 2-4, 5-7), then at the end
    picks = [e for e in events if isinstance(e, JudgementMade) and e.kind == "next-speaker"]
    assert [p.round for p in picks] == list(range(1, 9))  # one selection per turn after the topic
    fallbacks = [p for p in picks if p.reasons["chosen_by"] == "fallback"]
    assert fallbacks and all(p.reasons["notes"] and p.verdict in p.reasons["eligible"] for p in fallbacks)
    passes = [e for e in events if isinstance(e, TurnFinished) and e.kind == "pass"]
    assert len(passes) == 1 and passes[0].role == PERSON and passes[0].parse_notes == ("the person passed",)


async def test_the_person_ends_it_or_a_stop_does() -> None:
    """Scripted models: this is about the seat and the command channel."""
    async def leaves(prompt: str) -> str | None:
        return None

    config = deliberation.DeliberationConfig(topic=TOPIC, max_turns=9, analyze_every=0)
    events = [e async for e in deliberation.run(config, _scripted(["Agenda.", "Person"] * 5), leaves, debate_id="dl3")]
    final = events[-1]
    assert isinstance(final, DebateFinished) and final.stop_reason == "the person ended the deliberation"
    assert final.outcome["analysis"] is not None  # the final analysis still runs
    assert any(type(e).__name__ == "ModeratorActed" and e.kind == "end" for e in events)

    channel = CommandChannel()

    async def stops(prompt: str) -> str | None:
        channel.send(Stop("time is up"))
        return "last words"

    run = deliberation.Deliberation(config, _scripted(["Agenda.", "Person"] * 5), stops, debate_id="dl4", channel=channel)
    events = [e async for e in run.run()]
    final = events[-1]
    assert isinstance(final, DebateFinished) and final.status == "stopped" and final.stop_reason == "time is up"
    assert final.outcome["order"][-1] == PERSON and final.outcome["analysis"] is None


async def test_a_deliberation_between_the_bundled_models(smollm: LlamaCppBackend, gemma: LlamaCppBackend, tmp_path: Path) -> None:
    script = tmp_path / "person.txt"
    script.write_text("Phones distract students in class.\n\nBut parents want to reach their children.\n", encoding="utf-8")
    config = deliberation.DeliberationConfig(topic=TOPIC, max_turns=3, word_cap=20, turn_tokens=24, analyze_every=0,
                                             analysis_tokens=32)
    agents = deliberation.DeliberationAgents(Agent("moderator", smollm, OPTS),
                                             [Agent("deliberator-1", smollm, OPTS), Agent("deliberator-2", gemma, OPTS)],
                                             Agent("analyzer", smollm, OPTS))
    with Journal(tmp_path / "j.db") as journal:
        final = await drive(deliberation.run(config, agents, ScriptSeat(script), debate_id="dl1"), journal)
        debate = Queries(journal).debate("dl1")
    assert final is not None and final.status == "finished" and debate is not None
    turns = debate["turns"]
    order = [t["role"] for t in turns]
    assert order == final.outcome["order"] and len(order) == 5  # topic, agenda, three turns
    assert_turn_rules(order)
    assert order[:2] == [PERSON, MODERATOR] and turns[0]["kind"] == "topic" and turns[1]["kind"] == "agenda"
    for t in turns:
        if t["role"] == PERSON:
            assert t["model_id"] == "human" and t["finish_reason"] == "human"
        else:
            assert len(t["text"].split()) <= 21 and t["completion_tokens"] <= 24  # 20 words and "…"
            assert len(t["raw"].split()) <= 20 or any("cut to 20 words" in n for n in t["parse_notes"])
    picks = [j for j in debate["judgements"] if j["kind"] == "next-speaker"]
    assert [j["round"] for j in picks] == list(range(1, 5)) and [j["verdict"] for j in picks] == order[1:]
    assert all(j["verdict"] in j["reasons"]["eligible"] for j in picks)
    (analysis,) = [j for j in debate["judgements"] if j["kind"] == "analysis"]
    assert set(analysis["reasons"]) >= {"summary", "agreements", "open_questions", "claims", "links", "notes"}
    assert analysis["reasons"] == final.outcome["analysis"]
    purposes = [c["purpose"] for c in debate["model_calls"]]
    assert purposes.count("analysis") == 4 and "turn-selection" in purposes
    assert {p["role"] for p in debate["participants"]} == {MODERATOR, "deliberator-1", "deliberator-2", "analyzer", PERSON}


@pytest.mark.model
def test_symposium_run_deliberation_headless(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, script = tmp_path / "j.db", tmp_path / "me.txt"
    script.write_text("Phones distract students.\n/end\n", encoding="utf-8")
    assert main(["--db", str(db), "run", "deliberation", "--topic", TOPIC, "--moderator", "smollm2-135m",
                 "--deliberator", "smollm2-135m", "--deliberator", "smollm2-135m", "--human-script", str(script),
                 "--max-turns", "2", "--no-analysis", "--turn-tokens", "16",
                 "--word-cap", "15", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "human (human) · topic" in out and "moderator (smollm2-135m) · agenda" in out
    assert "journalled as" in out
    debate_id = out.rsplit("journalled as", 1)[1].split()[0]
    with Journal(db) as journal:
        debate = Queries(journal).debate(debate_id)
    assert debate is not None and debate["protocol"] == "deliberation"
    order = [t["role"] for t in debate["turns"]]
    assert_turn_rules(order)
    assert order.count(PERSON) <= 2  # the topic, then at most the one scripted line
    assert debate["stop_reason"] in ("the person ended the deliberation", "turn limit reached (2 turns after the agenda)")


def test_the_headless_panel_is_printed_after_each_analysis_as_plain_safe_text() -> None:
    from rich.console import Console

    from protocols.measures.analyzer import Analysis, Claim, Link, Premise

    analysis = Analysis(turns=3, summary=["Phones \x1b[2Jdistract [bold]students[/bold]"], agreements=["Parents matter"],
                        claims=[Claim("C1", "Ban them", "Person", [Premise("C1.S1", "focus")]), Claim("C2", "Allow them", "Deliberator 1")],
                        links=[Link("C2", "C1", "attacks")])

    out = io.StringIO()
    printer = EventPrinter(Console(file=out, width=200))
    printer(JudgementMade("p", "analyzer", "m", "analysis", None, TOPIC, None, None, analysis.to_json(), "{}", 3))
    text = out.getvalue()
    assert "Summary:\n  - Phones distract [bold]students[/bold]" in text and "\x1b" not in text  # no escapes, no markup
    assert "Points of agreement:\n  - Parents matter" in text and "Open questions:\n  (none)" in text
    assert "C2 (Deliberator 1): Allow them  [attacks C1]" in text and "+ C1.S1: focus" in text


def test_an_analyzer_sharing_the_moderators_role_is_refused() -> None:
    """One model may moderate and analyze, but under two roles: the journal keys participants by role."""
    agents = _scripted([])
    shared = deliberation.DeliberationAgents(agents.moderator, agents.deliberators, agents.moderator)

    async def nobody(prompt: str) -> str | None:
        return None

    with pytest.raises(ValueError, match="analyzer needs a role of its own"):
        deliberation.Deliberation(deliberation.DeliberationConfig(topic="phones"), shared, nobody, debate_id="dl-roles")
