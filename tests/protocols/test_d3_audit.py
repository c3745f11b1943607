"""Bandi & Harrasse (D3), section 4.3: accuracy, Cohen's κ and the self-enhancement audit of D3 verdicts
against reference verdicts, from the pure measures to `symposium d3-report` on a journal.

Why scripted backends in the journal test: the report must be checked against verdicts known
in advance (which answer each juror votes for), which real tiny models do not give on demand;
tests/protocols/test_d3.py runs D3 itself on the real bundled models.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from backends.base import SamplingOptions
from protocols import d3
from protocols.core.agents import Agent
from protocols.core.events import Notice
from protocols.d3.audit import Evaluation, agreement, cohen_kappa, family, self_enhancement
from protocols.d3.study import read_references
from store.drive import drive
from store.journal import Journal
from tests.helpers.scripted_backends import ScriptedBackend
from tui.cli import main

OPTS = SamplingOptions(max_tokens=60, temperature=0.7, seed=13)


def test_cohens_kappa_on_a_hand_checked_table() -> None:
    """10 items: both say A 4 times, both B 3 times, A/B 2, B/A 1. p_o = 0.7; the rater says A
    6/10, the reference 5/10, so p_e = 0.6·0.5 + 0.4·0.5 = 0.5 and κ = (0.7 − 0.5)/(1 − 0.5) = 0.4."""
    rater = ["A"] * 4 + ["A"] * 2 + ["B"] * 1 + ["B"] * 3
    reference = ["A"] * 4 + ["B"] * 2 + ["A"] * 1 + ["B"] * 3
    assert cohen_kappa(rater, reference) == pytest.approx(0.4)
    assert cohen_kappa(["A", "B", "tie"], ["A", "B", "tie"]) == pytest.approx(1.0)
    assert cohen_kappa(["A", "B"], ["B", "A"]) == pytest.approx(-1.0)
    assert cohen_kappa(["A", "A"], ["A", "A"]) is None  # chance agreement is certain: κ undefined
    assert cohen_kappa([], []) is None
    with pytest.raises(ValueError, match="paired"):
        cohen_kappa(["A"], [])


def test_accuracy_counts_a_missing_verdict_as_a_miss() -> None:
    result = agreement([Evaluation("1", "A", "A"), Evaluation("2", None, "B"), Evaluation("3", "B", "B"), Evaluation("4", "A", "B")])
    assert (result["items"], result["correct"], result["accuracy"], result["no_verdict"]) == (4, 2, 0.5, 1)
    assert result["confusion"] == {"A": {"A": 1}, "B": {"none": 1, "B": 1, "A": 1}}


def test_self_enhancement_rate_is_own_family_preferred_against_the_reference() -> None:
    """A gemma juror on 4 items with one gemma answer each: it prefers the gemma answer 3 times,
    twice where the reference prefers the other: rate 2/4. Items where neither answer (or both)
    is from its family are outside its subset."""
    def item(name: str, a: str, b: str, preferred: str, reference: str) -> Evaluation:
        return Evaluation(name, preferred, reference, a, b, {"juror-1": ("gemma3-270m", preferred)})
    rows = self_enhancement([
        item("1", "gemma2-9b", "llama3-8b", "A", "B"),    # own preferred, against the reference
        item("2", "llama3-8b", "gemma2-9b", "B", "A"),    # own preferred, against the reference
        item("3", "gemma2-9b", "qwen2.5-7b", "A", "A"),   # own preferred, and right
        item("4", "qwen2.5-7b", "gemma2-9b", "A", "A"),   # other preferred
        item("5", "qwen2.5-7b", "llama3-8b", "A", "B"),   # no gemma answer: outside the subset
        item("6", "gemma2-9b", "gemma2-27b", "A", "B"),   # both gemma: outside the subset
    ])
    row = rows["juror-1"]
    assert (row["family"], row["subset"], row["prefers_own"], row["favoured_against_reference"]) == ("gemma", 4, 3, 2)
    assert row["rate"] == 0.5 and row["prefers_own_rate"] == 0.75 and row["reference_prefers_own_rate"] == 0.25
    assert family("Qwen2.5-7B-Instruct") == "qwen" and family("meta/llama-3.1-8b") == "llama"
    assert family("my-tune", {"my-tune": "Llama"}) == "llama"


def juror_reply(prefers: int) -> str:
    scores = (15, 8) if prefers == 1 else (8, 15)
    return json.dumps({"score_1": scores[0], "score_2": scores[1], "rationale": "clearer"})


async def evaluate(journal: Journal, debate_id: str, question: str, prefers: int) -> d3.D3:
    """One scripted SAMRE evaluation: both gemma jurors prefer Answer ``prefers``."""
    advocate = ScriptedBackend("llama3-8b", ["Answer 1 is right.", "Answer 2 is right."])
    judge = ScriptedBackend("qwen2.5-7b", [json.dumps({"score_1": 12, "score_2": 11, "feedback_1": "ok", "feedback_2": "ok"})])
    jurors = [Agent("juror", ScriptedBackend("gemma3-270m", [juror_reply(prefers)] * 2), OPTS)]
    config = d3.D3Config(question, "answer one", "answer two", variant="samre", max_rounds=1, jury_size=2,
                         model_a="gemma2-9b", model_b="llama3.1-8b")
    run = d3.D3(config, d3.D3Agents(Agent("advocate", advocate, OPTS), Agent("judge", judge, OPTS), jurors), debate_id=debate_id)
    final = await drive(run.run(), journal)
    assert final is not None and final.status == "finished"
    return run


async def test_d3_report_against_a_reference_set_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "j.db"
    with Journal(db) as journal:
        first = await evaluate(journal, "q1", "Which is right about tides?", prefers=1)   # verdict A (gemma's)
        await evaluate(journal, "q2", "Which is right about  orbits?", prefers=1)       # verdict A (gemma's)
        await evaluate(journal, "q3", "Which is right about comets?", prefers=2)        # verdict B
    notices = [n for n in first.exposure_notices() if isinstance(n, Notice)]
    assert notices and notices[0].kind == "self_enhancement" and set(notices[0].details) == {"juror-1", "juror-2"}
    assert first.outcome()["self_enhancement"]["juror-1"] == {"model": "gemma3-270m", "own": "A", "preferred": "A"}
    reference = tmp_path / "reference.jsonl"
    reference.write_text("\n".join([
        json.dumps({"debate": "q1", "reference": "A"}),
        json.dumps({"question": "Which is right about orbits?", "reference": "B"}),  # matched on the question
        json.dumps({"question": "Which is right about comets?", "reference": "b"}),
        json.dumps({"question": "never asked", "reference": "tie"}),
    ]) + "\n")
    assert main(["--db", str(db), "study", "d3-report", "--reference", str(reference), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["evaluations"] == ["q1", "q2", "q3"]
    agreement_ = report["agreement"]
    assert (agreement_["items"], agreement_["correct"]) == (3, 2)
    # verdicts A, A, B against A, B, B: p_o = 2/3, p_e = (2/3)(1/3) + (1/3)(2/3) = 4/9, κ = (2/9)/(5/9) = 0.4
    assert agreement_["kappa"] == pytest.approx(0.4)
    jurors = report["self_enhancement"]["juror-1"]
    assert (jurors["subset"], jurors["prefers_own"], jurors["favoured_against_reference"]) == (3, 2, 1)
    assert report["self_enhancement"]["panel"]["rate"] == pytest.approx(1 / 3)
    assert "judge" not in report["self_enhancement"]  # qwen judged gemma against llama: no own answer
    assert report["unmatched"] == [f"{reference}: item 4"]
    assert main(["--db", str(db), "study", "d3-report", "--reference", str(reference)]) == 0
    shown = capsys.readouterr().out
    assert re.search(r"Accuracy +0\.667", shown) and re.search(r"Cohen's κ +0\.400", shown) and "Self-enhancement" in shown


def test_a_bad_reference_file_names_the_item_and_the_fix(tmp_path: Path) -> None:
    bad = tmp_path / "ref.jsonl"
    bad.write_text('{"debate": "x", "reference": "maybe"}\n')
    with pytest.raises(ValueError, match=r"item 1: reference 'maybe' is not one of A, B, tie"):
        read_references(bad)
    bad.write_text('{"reference": "A"}\n')
    with pytest.raises(ValueError, match="needs \"debate\""):
        read_references(bad)
    bad.write_text('{"debate": \n')
    with pytest.raises(ValueError, match="line 1: not valid JSON"):
        read_references(bad)
