"""Stance labels per step and Triem's stance-change measures: the parser, the reader
with a person's confirmation, and the analysis."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backends.base import SamplingOptions
from backends.llamacpp import LlamaCppBackend
from protocols.core.agents import Agent
from protocols.core.definition import confirm_from_lines
from protocols.humanloop.stance import (
    HALLUCINATION,
    LEGAL_LABELS,
    LEGAL_RUBRIC,
    NONE,
    StanceReader,
    StanceStep,
    analyze,
    change_rates,
    exact_label,
    parse_stance,
    stance_schema,
    triem_code,
)
from tests.helpers.scripted_backends import ScriptedBackend

QUESTION = "Should the court of appeals affirm, reverse, or remand?"
ALLOWED = {*LEGAL_LABELS, NONE, HALLUCINATION}


# -- the parser ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "label"), [
    ('{"stance": "affirm", "evidence": "we should affirm"}', "affirm"),
    ('```json\n{"stance": " Reverse ", "evidence": "overturn it",}\n```', "reverse"),   # fence, spacing, trailing comma
    ("{'stance': 'REMAND', 'evidence': 'send it back'}", "remand"),                       # single quotes
    ('{"stance": "none", "evidence": ""}', NONE),
    ("**Affirm.**", "affirm"),                                                            # a bare label, no JSON
])
def test_a_label_spelled_exactly_is_read(raw: str, label: str) -> None:
    parsed = parse_stance(raw, LEGAL_LABELS)
    assert parsed.label == label and parsed.rejected is None


@pytest.mark.parametrize(("raw", "why"), [
    ("I would not affirm the decision.", "no JSON"),                     # contains 'affirm': never read by substring
    ('{"stance": "not affirm", "evidence": "x"}', "not one of"),
    ('{"stance": "reverse and remand", "evidence": "x"}', "not one of"),  # the clerk must pick one label
    ('{"stance": "affrim", "evidence": "x"}', "not one of"),              # no fuzzy repair of dispositions
    ('{"evidence": "x"}', "stance"),
    ("", "no JSON"),
])
def test_anything_else_is_a_rejection_with_its_reason(raw: str, why: str) -> None:
    parsed = parse_stance(raw, LEGAL_LABELS)
    assert parsed.label is None and parsed.rejected and why in parsed.rejected


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_arbitrary_text_never_raises_and_is_a_label_or_a_rejection(raw: str) -> None:
    parsed = parse_stance(raw, LEGAL_LABELS)
    assert (parsed.label in ALLOWED) != bool(parsed.rejected)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.sampled_from([*LEGAL_LABELS, NONE, "Affirm", "REMAND ", "reverse!"]), st.text(max_size=30)),
       st.text(max_size=60))
def test_json_replies_with_any_stance_value_are_read_exactly_or_rejected(stance: str, evidence: str) -> None:
    parsed = parse_stance(json.dumps({"stance": stance, "evidence": evidence}), LEGAL_LABELS)
    assert (parsed.label in ALLOWED) != bool(parsed.rejected)
    assert parsed.label == exact_label(stance, LEGAL_LABELS)


# -- the reader and the person's confirmation -----------------------------------------------------


async def test_the_clerk_labels_a_real_turn_and_the_person_can_change_it(smollm: LlamaCppBackend) -> None:
    clerk = Agent("clerk", smollm, SamplingOptions(max_tokens=60, seed=5))
    reader = StanceReader(clerk, LEGAL_LABELS, question=QUESTION, rubric=LEGAL_RUBRIC, max_tokens=60,
                          confirm=confirm_from_lines(["remand", "no such label"]))
    text = "The statute plainly covers this conduct. I vote to AFFIRM the district court. Confidence: 80."
    changed = await reader.read("s1", role="agent-1", speaker="AI Judge 1", text=text, round_=1)
    kept = await reader.read("s1", role="agent-1", speaker="AI Judge 1", text=text, round_=2)
    assert changed.kind == "stance" and changed.target == "agent-1" and changed.round == 1
    assert changed.verdict == "remand" and changed.call is not None and changed.call.purpose == "stance"
    assert changed.reasons["confirmation"] in ("changed by the person", "confirmed")  # confirmed if the clerk said remand
    assert kept.reasons["extracted"] == kept.verdict  # an answer that is no label keeps the clerk's
    assert any("not a label" in n for n in kept.reasons["notes"])
    for j in (changed, kept):
        assert j.reasons["extracted"] in ALLOWED or j.reasons["rejected"]


async def test_a_rejected_reading_is_recorded_with_its_reason_and_the_person_supplies_the_stance() -> None:
    """Scripted clerk: a real grammar-constrained model cannot be made to answer off the enum."""
    clerk = Agent("clerk", ScriptedBackend("scripted", ['{"stance": "not affirm", "evidence": "x"}'] * 2), SamplingOptions())
    unconfirmed = StanceReader(clerk, LEGAL_LABELS, question=QUESTION)
    confirmed = StanceReader(clerk, LEGAL_LABELS, question=QUESTION, confirm=confirm_from_lines(["reverse"]))
    missing = await unconfirmed.read("s2", role="agent-1", speaker="Judge 1", text="…", round_=1)
    supplied = await confirmed.read("s2", role="agent-1", speaker="Judge 1", text="…", round_=1)
    assert missing.verdict is None and "not one of" in missing.reasons["rejected"]
    assert missing.reasons["confirmation"] == "default"
    assert supplied.verdict == "reverse" and supplied.reasons["confirmation"] == "changed by the person"
    assert missing.raw == '{"stance": "not affirm", "evidence": "x"}'


# -- the analysis -------------------------------------------------------------------------------


def steps(table: dict[str, list[str | None]]) -> list[StanceStep]:
    return [StanceStep(r, role, label) for role, labels in table.items() for r, label in enumerate(labels, start=1)]


def test_changes_per_seat_per_transition_and_their_direction_relative_to_the_human() -> None:
    a = analyze(steps({
        "agent-1": ["affirm", "reverse", "reverse"],   # 1→2 toward the human (who said reverse in round 1)
        "agent-2": ["reverse", "affirm", NONE],         # 1→2 away from the human; 2→3 undetermined (none)
        "agent-3": ["remand", NONE, "affirm"],          # 2→3 compares with remand (held before the neutral round)
        "human": ["reverse", "reverse", "affirm"],      # the person's own changes are not counted
    }), roles=["agent-1", "agent-2", "agent-3", "human"], human="human")
    assert a["condition"] == "human present" and a["rounds"] == [1, 2, 3]
    by = {(t["role"], t["to_round"]): t for t in a["transitions"]}
    assert len(a["transitions"]) == 6  # three AI seats × two transitions
    assert by[("agent-1", 2)]["changed"] and by[("agent-1", 2)]["direction"] == "toward"
    assert by[("agent-1", 3)]["changed"] is False
    assert by[("agent-2", 2)]["direction"] == "away" and by[("agent-2", 3)]["changed"] is None
    assert by[("agent-3", 2)]["changed"] is None
    assert by[("agent-3", 3)] == {"role": "agent-3", "from_round": 2, "to_round": 3, "from": "remand", "to": "affirm",
                                 "changed": True, "human_stance": "reverse", "direction": "other",
                                 "triem_codes": ["3", "affirm"], "triem_changed": True}
    assert (a["opportunities"], a["changes"], a["toward_human"], a["away_from_human"]) == (4, 3, 1, 1)
    assert a["change_rate"] == pytest.approx(0.75)
    assert a["by_transition"]["1→2"]["changes"] == 2 and a["by_transition"]["2→3"]["opportunities"] == 2
    assert a["by_role"]["agent-2"] == {"opportunities": 1, "changes": 1, "change_rate": 1.0,
                                       "toward_human": 0, "away_from_human": 1,
                                       "triem": {"opportunities": 2, "changes": 2, "change_rate": 1.0, "via_no_stance": 1,
                                                 "unlabelled": 0}}
    assert json.loads(json.dumps(a)) == a  # JSON types only: the journal's copy compares equal


def test_change_rates_pool_opportunities_by_condition() -> None:
    ai = analyze(steps({"agent-1": ["affirm", "affirm"], "agent-2": ["reverse", "affirm"]}))
    with_human = analyze(steps({"agent-1": ["affirm", "reverse"], "human": ["reverse", "reverse"]}), human="human")
    none_taken = analyze(steps({"agent-1": [None, NONE]}))
    rates = change_rates([ai, with_human, none_taken])
    assert rates["AI only"] == {"debates": 2, "opportunities": 2, "changes": 1, "toward_human": 0, "away_from_human": 0,
                                "change_rate": 0.5, "toward_share": None,
                                "triem": {"opportunities": 2, "changes": 1, "change_rate": 0.5, "via_no_stance": 0,
                                          "unlabelled": 1}}
    assert rates["human present"]["change_rate"] == 1.0 and rates["human present"]["toward_share"] == 1.0


# -- Triem's own count beside ours ---------------------------------------------


def test_triem_counts_two_opportunities_per_ai_seat_with_no_stance_and_hallucination_coded_3() -> None:
    """Triem: "20 and 23 changes ... out of 1200 total opportunities for change of opinion (two
    per agent per debate)", "400 total opportunities" with the human; labels coded 1 == AFFIRM,
    0 == not AFFIRM, "Hallucinations and 'NONE' values were encoded as the number 3". Triem's
    count takes every AI seat's every round transition and a change of code; ours leaves steps
    without a position out. Failed on the old code (no HALLUCINATION label, no Triem count)."""
    a = analyze(steps({
        "agent-1": ["affirm", NONE, "affirm"],            # Triem: 1→3, 3→1: two changes; ours: no change (affirm kept)
        "agent-2": ["reverse", "remand", "affirm"],       # both: reverse→remand is none, remand→affirm is one
        "agent-3": ["affirm", HALLUCINATION, HALLUCINATION],  # Triem: 1→3 once; ours: no opportunity
        "human": ["reverse", "reverse", "reverse"],       # the person's own steps are not counted
    }), roles=["agent-1", "agent-2", "agent-3", "human"], human="human", binary="affirm")
    assert (a["opportunities"], a["changes"]) == (3, 1)
    assert a["triem"] == {"opportunities": 6, "changes": 4, "change_rate": 4 / 6, "via_no_stance": 3, "unlabelled": 0}
    assert a["by_transition"]["1→2"]["triem"]["changes"] == 2 and a["by_transition"]["2→3"]["triem"]["changes"] == 2
    by = {(t["role"], t["to_round"]): t for t in a["transitions"]}
    assert by[("agent-1", 2)]["triem_codes"] == ["1", "3"] and by[("agent-1", 2)]["changed"] is None
    assert [triem_code(x, "affirm") for x in ("affirm", "remand", NONE, HALLUCINATION, None)] == ["1", "0", "3", "3", None]
    assert triem_code("yes", None) == "yes"  # a label set without a pivot: the label is its own code


def test_triem_pools_to_the_papers_denominators() -> None:
    """Triem's 1,200 (phases 1 and 2: 2 × 100 debates × 3 judges × 2 transitions) and 400 (phase 3:
    100 debates × 2 AI judges × 2 transitions): the same shape in miniature, 10 debates each."""
    ai = [analyze(steps({f"agent-{k}": ["affirm", "affirm", "reverse" if d == k == 1 else "affirm"]
                         for k in (1, 2, 3)}), binary="affirm") for d in range(10)]
    human = [analyze(steps({"agent-1": ["affirm", NONE, "affirm"], "agent-2": ["reverse"] * 3, "human": ["reverse"] * 3}),
                     human="human", binary="affirm") for _ in range(10)]
    rates = change_rates([*ai, *human])
    assert rates["AI only"]["triem"]["opportunities"] == 10 * 3 * 2 and rates["AI only"]["triem"]["changes"] == 1
    assert rates["human present"]["triem"]["opportunities"] == 10 * 2 * 2
    assert rates["human present"]["triem"]["changes"] == 20 and rates["human present"]["changes"] == 0
    assert rates["human present"]["triem"]["change_rate"] == pytest.approx(0.5)


def test_hallucination_is_a_label_the_clerk_and_the_person_can_give() -> None:
    """Appendix ii's HALLUCINATION ("an agent became confused about its stance"): always offered
    beside the question's positions and NONE. Failed on the old code."""
    assert exact_label("HALLUCINATION", LEGAL_LABELS) == HALLUCINATION
    assert parse_stance('{"stance": "Hallucination", "evidence": "votes to reverse a finding it agrees with"}',
                        LEGAL_LABELS).label == HALLUCINATION
    assert stance_schema(LEGAL_LABELS)["properties"]["stance"]["enum"] == [*LEGAL_LABELS, NONE, HALLUCINATION]
    with pytest.raises(ValueError, match="hallucination"):
        StanceReader(Agent("clerk", ScriptedBackend("m", []), SamplingOptions()), ("affirm", HALLUCINATION), question=QUESTION)
