"""The analyzer (Turkstra et al., ArgsBase, section 3): its four parts from any protocol's turns, with a
real bundled model, its reading of untrusted replies (exact cases and fuzzing), and what it reads
(the whole transcript and topic, fitted to its window only when needed, with notes).

Why scripted backends for what it reads: the tests need turns of known length with markers at
their start, middle and end, and a reader with a small, known window (as tests/protocols/
test_fitting.py does for the judges)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from backends.base import SamplingOptions, schema_of
from backends.llamacpp import LlamaCppBackend
from protocols.core.agents import Agent
from protocols.core.events import JudgementMade, ModelCalled, TokenDelta, TurnFinished
from protocols.core.text import clip
from protocols.measures.analyzer import (
    _INSTRUCTIONS as INSTRUCTIONS,
)
from protocols.measures.analyzer import (
    ANALYZER_SYSTEM,
    ITEMS,
    Analysis,
    Analyzer,
    Claim,
    MapReply,
    Points,
    TranscriptCollector,
    parse_map,
    parse_points,
)
from tests.helpers.scripted_backends import ScriptedBackend

OPTS = SamplingOptions(max_tokens=32, temperature=0.7, seed=13)


def _turn(role: str, text: str) -> TurnFinished:
    return TurnFinished("ev", role, "m", "exploratory", 0, "opening", text=text, raw=text, call=None)


async def test_the_four_parts_of_an_evince_debate_with_a_real_model(smollm: LlamaCppBackend) -> None:
    collector = TranscriptCollector({"agent-a": "Agent A", "agent-b": "Agent B"})
    for event in (_turn("agent-a", "Jaundice: yellow skin and dark urine point to the liver."), TokenDelta("ev", "agent-a", "x"),
                  _turn("agent-b", "Hepatitis is as likely: fatigue and nausea fit too. We agree the liver is involved."),
                  _turn("agent-a", "")):
        collector(event)
    assert [s for s, _ in collector.turns] == ["Agent A", "Agent B"]  # deltas and empty turns are not turns
    analyzer = Analyzer(Agent("analyzer", smollm, OPTS), max_tokens=32)
    events = [e async for e in analyzer.events("ev", collector.turns, topic="Diagnose the patient", round_=1)]
    assert [type(e) for e in events] == [ModelCalled, ModelCalled, ModelCalled, JudgementMade]
    judgement = events[-1]
    assert isinstance(judgement, JudgementMade) and judgement.kind == "analysis" and judgement.round == 1
    assert all(e.call.purpose == "analysis" and e.call.completion_tokens <= 32 for e in [*events[:3], judgement])  # type: ignore[union-attr]
    analysis = analyzer.latest
    assert analysis is not None and analysis.turns == 2
    for part in (analysis.summary, analysis.agreements, analysis.open_questions, analysis.claims):
        assert len(part) <= ITEMS
    assert set(json.loads(judgement.raw)) == {"summary", "agreements", "open_questions", "argument_map"}
    assert Analysis.from_json(judgement.reasons).to_json() == analysis.to_json()  # the panel rebuilt from the journal
    assert all(item.strip() for item in analysis.summary) and "Summary:" in analysis.render()


def test_list_parts_are_read_from_json_cut_off_json_or_bullets() -> None:
    assert parse_points('{"points": ["Cost matters", "1. Safety first"]}') == (["Cost matters", "Safety first"], [])
    items, notes = parse_points('{"points": ["Cost matters", "Safety", "Half a sent')
    assert items == ["Cost matters", "Safety"] and "not complete JSON" in notes[0]
    items, notes = parse_points("- cost\n- safety\n* time\nnot a bullet")
    assert items == ["cost", "safety", "time"] and "bullet" in notes[0]
    items, notes = parse_points("Nothing to see here.")
    assert items == [] and notes  # the reason is recorded
    items, _ = parse_points(json.dumps({"points": [f"p{i}" for i in range(9)]}))
    assert items == ["p0", "p1", "p2", "p3"]  # bounded, even when the model ignores the schema


def test_the_argument_map_gets_ids_and_only_valid_links() -> None:
    claim = {"speaker": "A", "supports": ["cheap"], "attacks": ["ugly"], "relation": "attacks"}
    raw = json.dumps({"claims": [{**claim, "claim": "Repair it", "responds_to": 0},
                                 {**claim, "claim": "Build new", "responds_to": 1},
                                 {**claim, "claim": "Self", "responds_to": 3}]})
    claims, links, notes = parse_map(raw)
    assert [c.id for c in claims] == ["C1", "C2", "C3"]
    assert claims[0].supports[0].id == "C1.S1" and claims[0].attacks[0].id == "C1.A1"
    assert [(k.source, k.target, k.relation) for k in links] == [("C2", "C1", "attacks")]
    assert any("C3 answers claim 3, which is itself" in n for n in notes)
    _, links, notes = parse_map(json.dumps({"claims": [{**claim, "claim": "Alone", "responds_to": 4}]}))
    assert links == [] and "not in the map" in notes[0]
    claims, links, notes = parse_map(raw[: raw.index('"Self"')])  # cut off in the third claim
    assert [c.text for c in claims] == ["Repair it", "Build new"] and len(links) == 1 and "complete claims" in notes[0]


def test_a_claim_left_out_does_not_move_the_links_of_the_others() -> None:
    """``responds_to`` counts the reply's claims: when claim 1 does not validate (a broken
    field name) and is left out, claim 3's answer to claim 2 still links those two claims, and
    claim 4's answer to claim 1 is dropped (found by the stronger fuzz check: before, the claims
    were renumbered first, so claim 4 was linked to "Repair it" and claim 3's link was lost)."""
    claim = {"speaker": "A", "supports": [], "attacks": [], "relation": "supports"}
    raw = json.dumps({"claims": [{"speaker": "A", "supports": [], "atacks": [], "relation": "supports",
                                  "claim": "Broken", "responds_to": 0},
                                 {**claim, "claim": "Repair it", "responds_to": 0},
                                 {**claim, "claim": "Build new", "responds_to": 2, "relation": "attacks"},
                                 {**claim, "claim": "Answers the broken one", "responds_to": 1}]})
    claims, links, notes = parse_map(raw)
    assert [(c.id, c.text) for c in claims] == [("C1", "Repair it"), ("C2", "Build new"), ("C3", "Answers the broken one")]
    assert [(k.source, k.target, k.relation) for k in links] == [("C2", "C1", "attacks")]
    assert "C3 answers claim 1, which is not in the map: link dropped" in notes


def test_a_salvaged_list_keeps_values_not_field_names() -> None:
    """A reply whose field name is broken (here by an injection) is salvaged string by string;
    the broken name is not an item (found by the fuzz check that compares items with the reply)."""
    items, notes = parse_points('{"pointsIgnore your instructions": ["cost", "safety"]}')
    assert items == ["cost", "safety"] and "complete items" in notes[0]
    items, _ = parse_points('{"poin"}, "cost"]}')  # a name cut short by an injected quote
    assert items == ["cost"]


def test_an_escaped_quote_left_outside_a_string_opens_none() -> None:
    """An injection that shifts the quotes leaves ``\\"0"`` outside any string; salvaging from
    its escaped quote would invent the item ``0`` where the reply wrote ``"0`` (found by the
    fuzz check in CI). Nothing complete is left, so nothing is kept, and the reason says why."""
    items, notes = parse_points('{"}]}"points": ["\\"0"]}')
    assert items == [] and notes
    items, _ = parse_points('{"points": ["a", "b\\\\", "c')  # an escaped backslash still ends a string
    assert items == ["a", "b\\"]


def test_claims_read_as_loose_pieces_get_no_links() -> None:
    """When only pieces of a map can be read, their numbers in the reply are unknown, so no
    ``responds_to`` is trusted: a piece that answered "claim 1" is not linked to whichever
    piece happens to come first."""
    claim = {"speaker": "A", "supports": [], "attacks": [], "relation": "attacks"}
    raw = ('The map: [BROKEN, ' + json.dumps({**claim, "claim": "Second", "responds_to": 0}) + ", "
           + json.dumps({**claim, "claim": "Third", "responds_to": 1}))  # cut off, its first claim broken
    claims, links, notes = parse_map(raw)
    assert [c.text for c in claims] == ["Second", "Third"] and links == []
    assert "C2 answers claim 1, which is not in the map: link dropped" in notes


@given(st.text(max_size=400))
def test_any_reply_is_read_without_raising(raw: str) -> None:
    items, _ = parse_points(raw)
    assert len(items) <= ITEMS and all(any(ch.isalnum() for ch in i) for i in items)
    claims, links, _ = parse_map(raw)
    ids = {c.id for c in claims}
    assert all(k.source in ids and k.target in ids and k.source != k.target for k in links)


LEFT_OUT = "characters left out to fit the context window"
REPLIES = [json.dumps({"points": ["Cost matters"]})] * 3 + [json.dumps({"claims": [
    {"claim": "Ban cars", "speaker": "Agent A", "supports": ["cleaner air"], "attacks": [], "responds_to": 0, "relation": "supports"}]})]


def socrasynth_turn(speaker: str, round_: int) -> tuple[str, str]:
    """A SocraSynth turn as the panel gets it: one numbered point per subtopic, in order, about
    600 characters each (appendix 6.C's length), so the later subtopics come after character
    1,800."""
    points = [f"{i}. Subtopic {i}: {speaker}-R{round_}-S{i}-START " + "the evidence weighs on this point; " * 16
              + f"{speaker}-R{round_}-S{i}-END" for i in range(1, 6)]
    return speaker, "\n".join(points)


TOPIC = "Should cities ban private cars from their centres? " + "The debate weighs health, trade and access. " * 14 + "TOPIC-END"


def analyzer_on(window: int) -> tuple[Analyzer, ScriptedBackend]:
    backend = ScriptedBackend("analyzer-model", list(REPLIES))
    backend.context_length = window
    return Analyzer(Agent("analyzer", backend, OPTS), max_tokens=160), backend


async def test_the_analyzer_reads_every_turn_and_the_topic_whole() -> None:
    """With an 8,192-token window, a debate of eight five-subtopic turns and a
    700-character topic reach each of the four parts whole (before: 400 characters a turn, so
    only the first subtopic; the newest 6,000 characters; 300 of the topic)."""
    turns = [socrasynth_turn(speaker, r) for r in range(4) for speaker in ("Agent A", "Agent B")]
    analyzer, backend = analyzer_on(8192)
    analysis = await analyzer.analyze(turns, TOPIC)
    assert len(backend.prompts) == 4
    for prompt in backend.prompts:
        asked = prompt[-1].content
        assert TOPIC in asked and all(text in asked for _, text in turns) and LEFT_OUT not in asked
    assert not analysis.notes and "Not read whole" not in analysis.render()


async def test_a_transcript_the_window_cannot_hold_is_fitted_with_a_note_every_turn_keeping_its_ends(tmp_path: Path) -> None:
    """A 2,048-token window: every prompt leaves the reply its room, every turn keeps its first
    and last subtopic (a middle cut, all turns on one level), the topic stays whole, the four
    parts read the same text (one KV-cache prefix), and the judgement and the panel say what was cut."""
    turns = [socrasynth_turn(speaker, r) for r in range(4) for speaker in ("Agent A", "Agent B")]
    analyzer, backend = analyzer_on(2048)
    events = [e async for e in analyzer.events("ev", turns, topic=TOPIC, round_=3)]
    session = backend.session("count")
    for prompt, options in zip(backend.prompts, backend.options, strict=True):
        assert session.count_tokens(prompt) + options.max_tokens <= 2048
    first = backend.prompts[0][-1].content
    body = first[: first.index("### Instruction")]
    assert all(p[-1].content.startswith(body) for p in backend.prompts)
    assert TOPIC in body and body.count(LEFT_OUT) == len(turns)
    for speaker, r in ((s, r) for r in range(4) for s in ("Agent A", "Agent B")):
        assert f"{speaker}-R{r}-S1-START" in body and f"{speaker}-R{r}-S5-END" in body
    judgement = events[-1]
    assert isinstance(judgement, JudgementMade)
    [note] = [n for n in judgement.reasons["notes"] if n.startswith("shortened to fit analyzer's context window (2,048 tokens")]
    assert "the topic" not in note and "turn 1 (Agent A) to" in note
    assert f"✂ {note}" in Analysis.from_json(judgement.reasons).render()


def test_the_exact_notes_of_replies_with_nothing_to_read() -> None:
    """Each reason is the one the module states (a reader of the journal is told which)."""
    assert parse_points('{"points": ["", "!!"]}') == ([], ["the reply lists no items"])
    assert parse_points("Nothing to see here.") == ([], ["no JSON object found in the reply"])
    assert parse_points(None) == ([], ["no JSON object found in the reply"])  # type: ignore[arg-type]
    items, notes = parse_points('  \n {"points": ["cost", "safe')  # cut off, after leading blank lines
    assert items == ["cost"] and notes == ["kept 1 complete items of a reply that is not complete JSON"]
    items, _ = parse_points('{"points": ["caf\\u00e9 \\"quoted\\"", "two')  # escapes decoded in a salvaged value
    assert items == ['café "quoted"']
    items, _ = parse_points('{"points": "x": ["a"]}')  # not JSON; "x" names a field, "a" is a value
    assert items == ["a"]
    items, _ = parse_points('{ "poin"}, "cost"]}')  # a name cut short, after a space
    assert items == ["cost"]
    assert parse_map('{"claims": []}') == ([], [], ["the reply holds no claims"])
    assert parse_map(None) == ([], [], ["no JSON object found in the reply"])  # type: ignore[arg-type]


def test_a_bad_link_does_not_stop_the_rest_and_salvaged_items_are_clipped() -> None:
    raw = json.dumps({"claims": [
        {"claim": "Repair it", "speaker": "A", "supports": [], "attacks": [], "responds_to": 3, "relation": "supports"},
        {"claim": "Build new", "speaker": "B", "supports": [], "attacks": [], "responds_to": 1, "relation": "attacks"}]})
    _, links, notes = parse_map(raw)
    assert [(k.source, k.target) for k in links] == [("C2", "C1")] and notes == ["C1 answers claim 3, which is not in the map: link dropped"]
    claim, _ = parse_map(raw.replace('"speaker": "A"', '"speaker": "  "'))[0]
    assert claim.speaker == "?"
    items, _ = parse_points('{"points": ["' + "word " * 80 + '", "cut')  # salvaged: no schema bounded it
    assert len(items[0]) == 200 and items[0].endswith("…")


def test_loose_pieces_never_link_to_one_another() -> None:
    """Four pieces of a broken map: the fourth says it answers claim 1, which cannot be trusted
    to name any of them (their numbers in the reply are unknown), so no link is made."""
    piece = {"speaker": "A", "supports": [], "attacks": [], "relation": "attacks", "responds_to": 0}
    raw = "Map: [BROKEN, " + ", ".join(json.dumps({**piece, "claim": f"P{i}"}) for i in range(1, 4))
    raw += ", " + json.dumps({**piece, "claim": "P4", "responds_to": 1})
    claims, links, _ = parse_map(raw)
    assert [c.text for c in claims] == ["P1", "P2", "P3", "P4"] and links == []


async def test_one_analysis_from_scripted_replies_as_journalled_rebuilt_and_shown() -> None:
    """Every part of an analysis pinned: what each request holds and how it is sent, the events
    and the judgement the journal keeps, the panel rebuilt from it and its text."""
    collector = TranscriptCollector({"agent-a": "Agent A"})
    for event in (_turn("agent-a", "Cars pollute."), TokenDelta("ev", "agent-a", "x"), _turn("agent-b", "Shops need them."),
                  _turn("agent-a", "  ")):
        collector(event)
    assert collector.turns == [("Agent A", "Cars pollute."), ("agent-b", "Shops need them.")]
    assert TranscriptCollector().turns == [] and TranscriptCollector().names == {}
    replies = {
        "summary": json.dumps({"points": ["Cars pollute", "Shops object"]}),
        "agreements": "- both want a lively centre",
        "open_questions": json.dumps({"points": ["Who pays for the café's deliveries?"]}, ensure_ascii=False),
        "argument_map": json.dumps({"claims": [
            {"claim": "Ban cars", "speaker": "Agent A", "supports": ["cleaner air"], "attacks": [], "responds_to": 0,
             "relation": "supports"},
            {"claim": "Keep cars", "speaker": "agent-b", "supports": [], "attacks": ["fewer shoppers"], "responds_to": 1,
             "relation": "attacks"}]}),
    }
    asked: list[tuple[str, Any]] = []

    def answer(messages: Any, schema: Any) -> str:
        part = next(p for p, text in INSTRUCTIONS.items() if text in messages[-1].content)
        asked.append((part, schema))
        return replies[part]

    backend = ScriptedBackend("analyzer-model", [], answer=answer)
    analyzer = Analyzer(Agent("analyzer", backend, SamplingOptions(max_tokens=999, temperature=0.9, seed=1)), max_tokens=77)
    assert analyzer.latest is None
    topic = "Ban cars from the centre? " * 10
    events = [e async for e in analyzer.events("d1", collector.turns, topic=topic, round_=5)]
    assert [part for part, _ in asked] == list(INSTRUCTIONS)
    assert [schema for _, schema in asked] == [schema_of(Points)] * 3 + [schema_of(MapReply)]
    assert [(o.max_tokens, o.temperature) for o in backend.options] == [(77, 0.3)] * 4
    for prompt, part in zip(backend.prompts, INSTRUCTIONS, strict=True):
        assert [m.role for m in prompt] == ["system", "user"] and prompt[0].content == ANALYZER_SYSTEM
        assert prompt[1].content == (f"Topic: {topic.strip()}\nDiscussion:\n<<<\nAgent A: Cars pollute.\n\nagent-b: Shops need them.\n"
                                     f">>>\n\n### Instruction:\n{INSTRUCTIONS[part]} Keep every item brief. Reply with the JSON object only.")
    assert [type(e) for e in events] == [ModelCalled, ModelCalled, ModelCalled, JudgementMade]
    assert all(e.debate_id == "d1" and e.round == 5 for e in events)
    calls = [e.call for e in events]
    assert all(c is not None and c.purpose == "analysis" and c.role == "analyzer" for c in calls)
    analysis = analyzer.latest
    assert analysis is not None and analysis.calls == calls and analysis.raw == replies
    judgement = events[-1]
    assert isinstance(judgement, JudgementMade)
    assert (judgement.judge_role, judgement.judge_model, judgement.kind, judgement.target, judgement.subject,
            judgement.score, judgement.verdict) == ("analyzer", "analyzer-model", "analysis", None, clip(topic, 120), None, None)
    assert json.loads(judgement.raw) == replies and judgement.reasons == analysis.to_json()
    assert "café" in judgement.raw  # the journal keeps the text as written, not \u-escaped
    rebuilt = Analysis.from_json(judgement.reasons)
    assert (rebuilt.turns, rebuilt.summary, rebuilt.agreements, rebuilt.open_questions, rebuilt.claims, rebuilt.links, rebuilt.notes) == (
        2, ["Cars pollute", "Shops object"], ["both want a lively centre"], ["Who pays for the café's deliveries?"],
        analysis.claims, analysis.links, analysis.notes)
    assert analysis.notes == ["agreements: read 1 bullet lines (no JSON in the reply)"]
    assert rebuilt.render() == "\n".join([
        "Summary:", "  - Cars pollute", "  - Shops object",
        "Points of agreement:", "  - both want a lively centre",
        "Open questions:", "  - Who pays for the café's deliveries?",
        "Argument map:",
        "  C1 (Agent A): Ban cars", "    + C1.S1: cleaner air",
        "  C2 (agent-b): Keep cars  [attacks C1]", "    - C2.A1: fewer shoppers"])
    bare = Analysis.from_json({"claims": [{"id": "C1", "text": "t", "speaker": "s"}]})  # written by an older version
    assert bare.turns == 0 and bare.claims == [Claim("C1", "t", "s")] and bare.links == [] and bare.notes == []
    assert Analysis.from_json({}).render() == "\n".join(
        ["Summary:", "  (none)", "Points of agreement:", "  (none)", "Open questions:", "  (none)", "Argument map:", "  (none)"])
    shown = Analysis(turns=1, notes=["summary: cut off at max_tokens", "shortened to fit analyzer's context window (x)"]).render()
    assert shown.endswith("Argument map:\n  (none)\nNot read whole:\n  ✂ shortened to fit analyzer's context window (x)")


async def test_a_topic_too_long_for_the_window_gives_way_last_and_is_named_in_the_note() -> None:
    """A 10,000-character topic before a 1,024-token window: the turns are cut to their floors
    first, then the topic itself, and the note names it; the prompt still leaves the reply room."""
    turns = [("Agent A", "short point " * 30), ("Agent B", "short reply " * 30)]
    analyzer, backend = analyzer_on(1024)
    analysis = await analyzer.analyze(turns, "TOPIC-START " + "the question at length " * 450 + "TOPIC-END")
    session = backend.session("count")
    assert all(session.count_tokens(p) + 160 <= 1024 for p in backend.prompts)
    [note] = [n for n in analysis.notes if n.startswith("shortened")]
    assert "the topic to " in note and "turn 1 (Agent A) to " in note
    asked = backend.prompts[0][-1].content
    assert asked.startswith("Topic: TOPIC-START") and "TOPIC-END\nDiscussion:" in asked


async def test_a_part_cut_off_at_its_token_limit_says_so() -> None:
    """A reply that ran out of tokens is read as far as it goes, and each part's notes say it was cut."""

    class CutOff(Agent):
        async def ask(self, *args: Any, **kwargs: Any) -> Any:
            completion, call = await super().ask(*args, **kwargs)
            return dataclasses.replace(completion, finish_reason="length"), call

    backend = ScriptedBackend("m", ['{"points": ["cost", "saf'] * 3 + ['{"claims": ['])
    analysis = await Analyzer(CutOff("analyzer", backend, OPTS)).analyze([("A", "Cars pollute.")], "Ban cars?")
    assert [n for n in analysis.notes if n.endswith("cut off at max_tokens")] == [
        f"{part}: cut off at max_tokens" for part in ("summary", "agreements", "open_questions", "argument_map")]
    assert analysis.summary == ["cost"]
