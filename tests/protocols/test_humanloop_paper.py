"""Triem to the letter: the 0-100 confidence of every step parsed and stored, the
single-instance "synthetic" condition, and volatility counted as affirm / not-affirm.

Why scripted backends here: the tests need statements that state exact confidences and take
exact positions (and a synthetic panel's reply laid out judge by judge), which a real model
does not produce on demand; tests/protocols/test_humanloop.py runs the same protocol on the real
bundled models.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from backends.base import SamplingOptions
from protocols import humanloop
from protocols.core.agents import Agent
from protocols.humanloop import HumanloopAgents, HumanloopConfig, split_statements
from protocols.humanloop.stance import StanceStep, analyze, parse_confidence
from protocols.humanloop.study import present as present_stances
from protocols.humanloop.study import stances as stance_study
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.scripted_backends import ScriptedBackend
from tui.headless.sections import renderables

OPTS = SamplingOptions(max_tokens=64, temperature=0.7, seed=7)
CASE = "A doctor recorded patients' conversations for a training program; the lower court convicted him."


def clerk(*labels: str) -> Agent:
    return Agent("clerk", ScriptedBackend("clerk-model", [json.dumps({"stance": s, "evidence": ""}) for s in labels]), OPTS)


@pytest.mark.parametrize(("text", "value"), [
    ("I would affirm. Confidence: 85", 85.0),
    ("Reverse, citing Smith v. Jones. My confidence in this reasoning is 72/100.", 72.0),
    ("I am 90% confident that the conviction should stand.", 90.0),
    ("Confidence level: 64.5 out of 100", 64.5),
    ("Judge 2 said confidence 40, but my confidence is 0", 0.0),  # the last rating stated counts
])
def test_a_stated_confidence_is_read(text: str, value: float) -> None:
    assert parse_confidence(text) == (value, None)


@pytest.mark.parametrize(("text", "why"), [
    ("I would affirm the decision.", "no confidence stated"),
    ("Confidence: 140", "outside 0-100"),
    ("Confidence: 1000", "outside 0-100"),
    ("confidence: -5", "no confidence stated"),
    ("", "no confidence stated"),
])
def test_a_missing_or_impossible_confidence_is_not_recorded_and_says_why(text: str, why: str) -> None:
    value, note = parse_confidence(text)
    assert value is None and note is not None and why in note


async def test_each_steps_confidence_is_stored_with_the_turn_and_the_stance(tmp_path: Path) -> None:
    seats = [Agent("a", ScriptedBackend("m1", ["Affirm. Confidence: 80", "Still affirm. Confidence: 85"]), OPTS),
             Agent("b", ScriptedBackend("m2", ["Reverse. Confidence: 55", "No rating this time."]), OPTS)]
    config = HumanloopConfig(case=CASE, rounds=2)
    run = humanloop.Humanloop(config, HumanloopAgents(seats, clerk("affirm", "reverse", "affirm", "reverse")), debate_id="c1")
    with Journal(tmp_path / "j.db") as journal:
        await drive(run.run(), journal)
        debate = Queries(journal).debate("c1")
        report = stance_study(Queries(journal).debates_of(["humanloop"]))
        stored = journal.conn.execute("SELECT role, round, confidence FROM turns ORDER BY seq").fetchall()
    assert [tuple(r) for r in stored] == [("agent-1", 1, 80.0), ("agent-2", 1, 55.0), ("agent-1", 2, 85.0), ("agent-2", 2, None)]
    assert debate is not None
    missing = [t for t in debate["turns"] if t["confidence"] is None]
    assert any("no confidence stated" in n for n in missing[0]["parse_notes"])
    assert [j["score"] for j in debate["judgements"] if j["kind"] == "stance"] == [80.0, 55.0, 85.0, None]
    assert report["debates"]["c1"]["confidence"] == {"agent-1": [80.0, 85.0], "agent-2": [55.0, None]}
    assert report["debates"]["c1"] == debate["outcome"]["analysis"]
    shown = StringIO()
    console = Console(file=shown, width=120, color_system=None)
    for part in renderables(present_stances(report)):
        console.print(part)
    assert "affirm (80)" in shown.getvalue() and "reverse (55)" in shown.getvalue()


async def test_the_synthetic_condition_is_one_instance_simulating_the_whole_panel(tmp_path: Path) -> None:
    rounds = [
        "Judge 1: The recordings breached privacy; affirm. Confidence: 80\n"
        "**Judge 2:** The statute is vague; reverse. Confidence: 60\n"
        "Judge 3: Remand for findings on consent. Confidence: 50",
        "Judge 1: I hold to affirm. Confidence: 82\nJudge 2: Remand instead. Confidence: 58\n",
    ]
    simulator = ScriptedBackend("one-model", rounds)
    panel = HumanloopAgents([Agent("only", simulator, OPTS)],
                            clerk("affirm", "reverse", "remand", "affirm", "remand"))
    config = HumanloopConfig(case=CASE, rounds=2, condition="synthetic")
    run = humanloop.Humanloop(config, panel, debate_id="s1")
    with Journal(tmp_path / "j.db") as journal:
        final = await drive(run.run(), journal)
        debate = Queries(journal).debate("s1")
        report = stance_study(Queries(journal).debates_of(["humanloop"]))
    assert final is not None and final.status == "finished" and debate is not None
    turns = debate["turns"]
    assert [(t["role"], t["kind"], t["round"]) for t in turns] == [("simulator", "simulation", 1), ("simulator", "simulation", 2)]
    assert "simulating a discussion between three judges" in simulator.prompts[0][0].content  # Appendix i's words
    assert simulator.prompts[1][-1].content.startswith("Proceed with round 2. All three judges should speak")
    assert simulator.prompts[1][2].role == "assistant"  # round 1's output joined the one instance's memory
    assert any("no statement headed 'Judge 3'" in n for n in turns[1]["parse_notes"])
    stances = [(j["round"], j["target"], j["verdict"], j["score"]) for j in debate["judgements"] if j["kind"] == "stance"]
    assert stances == [(1, "agent-1", "affirm", 80.0), (1, "agent-2", "reverse", 60.0), (1, "agent-3", "remand", 50.0),
                       (2, "agent-1", "affirm", 82.0), (2, "agent-2", "remand", 58.0), (2, "agent-3", "none", None)]
    analysis = debate["outcome"]["analysis"]
    assert analysis["condition"] == "synthetic" and report["debates"]["s1"] == analysis
    assert set(report["by_condition"]) == {"synthetic"}
    assert analysis["changes"] == 0  # reverse → remand stays "not affirm"
    assert [p["role"] for p in debate["participants"]] == ["simulator", "clerk"]
    with pytest.raises(ValueError, match="no human seat"):
        HumanloopConfig(case=CASE, condition="synthetic", human=humanloop.HumanSeat())


def test_statements_are_split_by_their_judge_headings() -> None:
    parts = split_statements("intro\nJudge 2: b\nJudge 1 - a\n## Judge 3. c", "Judge", 3)
    assert parts == ["a", "b", "c"]
    assert split_statements("nobody is named", "Judge", 2) == ["", ""]


def test_volatility_counts_affirm_versus_not_affirm() -> None:
    """Triem codes 1 == AFFIRM, 0 == not AFFIRM: reverse → remand is no change of mind,
    affirm → remand is one (the old reading counted both)."""
    steps = [StanceStep(1, "agent-1", "reverse"), StanceStep(2, "agent-1", "remand"),
             StanceStep(1, "agent-2", "affirm"), StanceStep(2, "agent-2", "remand")]
    binary = analyze(steps, binary="affirm")
    by = {t["role"]: t["changed"] for t in binary["transitions"]}
    assert by == {"agent-1": False, "agent-2": True}
    assert (binary["opportunities"], binary["changes"]) == (2, 1) and binary["binary"] == "affirm"
    assert analyze(steps)["changes"] == 2  # any change of label, for label sets without a pivot
    assert HumanloopConfig(case=CASE).binary() == "affirm"
    assert HumanloopConfig(case=CASE, labels=("yes", "no")).binary() is None
    with pytest.raises(ValueError, match="binary_label"):
        HumanloopConfig(case=CASE, labels=("yes", "no"), binary_label="maybe")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_arbitrary_text_never_breaks_the_confidence_and_statement_parsers(text: str) -> None:
    value, note = parse_confidence(text)
    assert (value is None) != (note is None)
    assert value is None or 0 <= value <= 100
    parts = split_statements(text, "Judge", 3)
    assert len(parts) == 3 and all(isinstance(p, str) for p in parts)


async def test_the_report_shows_triems_count_beside_ours(tmp_path: Path) -> None:
    """The stance report (the headless command prints it) gives, beside our
    rate, Triem's: every AI seat's every transition an opportunity (two per seat in three rounds,
    the paper's 1,200 and 400), NONE and HALLUCINATION coded 3. Failed on the old code (one
    count only; a neutral step was no opportunity at all)."""
    seats = [Agent("a", ScriptedBackend("m1", ["Affirm.", "Both sides have a point.", "Affirm."]), OPTS),
             Agent("b", ScriptedBackend("m2", ["Reverse.", "Reverse.", "Affirm, on reflection."]), OPTS)]
    labels = clerk("affirm", "reverse", "none", "reverse", "affirm", "affirm")
    run = humanloop.Humanloop(HumanloopConfig(case=CASE, rounds=3), HumanloopAgents(seats, labels), debate_id="t1")
    with Journal(tmp_path / "j.db") as journal:
        await drive(run.run(), journal)
        report = stance_study(Queries(journal).debates_of(["humanloop"]))
    analysis = report["debates"]["t1"]
    assert (analysis["opportunities"], analysis["changes"]) == (3, 1)
    assert analysis["triem"] == {"opportunities": 4, "changes": 3, "change_rate": 0.75, "via_no_stance": 2, "unlabelled": 0}
    assert report["by_condition"]["AI only"]["triem"]["opportunities"] == 4
    shown = StringIO()
    console = Console(file=shown, width=160, color_system=None)
    for part in renderables(present_stances(report)):
        console.print(part)
    text = shown.getvalue()
    assert "AI only: 1 debate(s), 1 change(s) in 3 opportunities (33%)" in text
    assert "Triem's count: 3 change(s) in 4 opportunities (75%; 2 into or out of no stance)" in text
    with pytest.raises(ValueError, match="always added"):
        HumanloopConfig(case=CASE, labels=("yes", "Hallucination"))
