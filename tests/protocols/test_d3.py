"""D3 (Bandi & Harrasse): MORE and SAMRE end to end with the real bundled models, jury votes, the swap
audit and per-role token accounting checked against the journal's model_calls rows; the
arithmetic of stopping and deciding; the headless command."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backends.base import SamplingOptions
from backends.llamacpp import LlamaCppBackend
from protocols import d3
from protocols.core.agents import Agent
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.scripted_backends import ScriptedBackend
from tui.cli import main

OPTS = SamplingOptions(max_tokens=60, temperature=0.7, seed=13)
QUESTION = "What is the boiling point of water at sea level?"
ANSWER_A = "100 degrees Celsius (212 °F) at standard atmospheric pressure."
ANSWER_B = "About 50 degrees Celsius."
PERSONA_NAMES = {name for name, _ in d3.PERSONAS}
USAGE = ("calls", "prompt_tokens", "prompt_tokens_evaluated", "completion_tokens")


def journal_usage(calls: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per-role sums of the journal's model_calls rows: the backend's own usage figures."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(USAGE, 0))
    for c in calls:
        row = out[c["role"]]
        row["calls"] += 1
        for key in USAGE[1:]:
            row[key] += c[key]
    return dict(out)


def check_journal(run: d3.D3, debate: dict[str, Any]) -> None:
    """What every D3 run must leave in the journal, whatever the tiny models said."""
    outcome, calls = debate["outcome"], debate["model_calls"]
    assert outcome["usage"] == journal_usage(calls)  # per-role accounting adds up to the backend's usage
    for p, result in zip(run.passes, outcome["passes"], strict=True):
        last_round = p.journal_round(len(p.rounds) + 1)  # the jury's
        in_pass = [c for c in calls if p.first_round <= c["round"] <= last_round]
        by_kind = defaultdict(int)
        for c in in_pass:
            by_kind[d3.role_kind(c["role"])] += c["prompt_tokens"] + c["completion_tokens"]
        used = result["budget"]["used"]
        assert used == {"advocate": by_kind["advocate"], "judge": by_kind["judge"], "juror": by_kind["juror"],
                        "debate": by_kind["advocate"] + by_kind["judge"]}
        votes = [j for j in debate["judgements"] if j["kind"] == "vote" and j["reasons"]["pass"] == result["order"]]
        assert len(votes) == run.config.jury_size and {j["subject"] for j in votes} <= PERSONA_NAMES
        for j in votes:
            assert j["verdict"] in ("A", "B", "tie") or (j["verdict"] is None and j["reasons"]["rejected"])
        scores = [j for j in debate["judgements"] if j["kind"] == "score" and j["reasons"]["pass"] == result["order"]]
        assert len(scores) == 2 * len(p.rounds)
        cumulative = {"A": 0.0, "B": 0.0}
        for j in scores:
            cumulative[j["subject"].removeprefix("answer ")] += j["score"] or 0.0
        assert result["cumulative"] == cumulative
        # majority of the journalled votes, the judge's cumulative score breaking a tie
        assert (result["verdict"], result["decided_by"]) == d3.decide([j["verdict"] for j in votes], cumulative)
    sent = [m.content for p in run.passes for h in p.histories.values() for m in h if m.role != "assistant"]
    for text in sent:  # anonymized: no model names, no A/B
        assert "smollm" not in text and "gemma" not in text and "Answer A" not in text and "Answer B" not in text


# -- the arithmetic -----------------------------------------------------------------------------


def test_majority_vote_with_the_judges_cumulative_score_as_tie_breaker() -> None:
    assert d3.decide(["A", "B", "A", None, "tie"], {"A": 10, "B": 30}) == ("A", "majority")
    assert d3.decide(["A", "B", "tie"], {"A": 31, "B": 30}) == ("A", "judge's cumulative score")
    assert d3.decide(["B", "A"], {"A": 12, "B": 19}) == ("B", "judge's cumulative score")
    assert d3.decide([None, "tie"], {"A": 20, "B": 20}) == ("tie", "tie")


def test_the_gap_is_stable_when_the_last_window_of_gaps_lies_within_epsilon() -> None:
    assert d3.gap_stable([3, 4], window=2, epsilon=1.0)
    assert not d3.gap_stable([3, 5], window=2, epsilon=1.0)
    assert not d3.gap_stable([4], window=2, epsilon=1.0)
    assert d3.gap_stable([-9, 2, 2.5, 3], window=3, epsilon=1.0)
    assert not d3.gap_stable([2, None], window=2, epsilon=10.0)  # a missing score is no evidence of convergence


def test_definition_1_beta_posterior_of_the_gap() -> None:
    assert d3.gap_posterior([]) == (0.5, pytest.approx(1 / 12))
    mean, var = d3.gap_posterior([1, 1, 0.5], prior=(1, 1))   # Beta(3.5, 1.5)
    assert mean == pytest.approx(3.5 / 5) and var == pytest.approx(3.5 * 1.5 / (25 * 6))
    variances = [d3.gap_posterior([1] * t)[1] for t in range(1, 30)]
    assert variances == sorted(variances, reverse=True)  # concentrates as rounds accumulate


def test_budget_specs() -> None:
    assert d3.parse_budget("6000") == d3.Budget(6000, {})
    assert d3.parse_budget("advocate=4000, judge=900").limits() == {"advocate": 4000, "judge": 900}
    assert d3.parse_budget("5000,judge=900").limits() == {"debate": 5000, "judge": 900}
    for bad in ("lots", "juror=5", "judge=-3"):
        with pytest.raises(ValueError):
            d3.parse_budget(bad)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200),
                 st.builds(lambda a, b, r: json.dumps({"score_1": a, "score_2": b, "rationale": r}),
                           st.one_of(st.integers(-5, 30), st.text(max_size=3)), st.integers(-5, 30), st.text(max_size=40))))
def test_a_juror_reply_is_always_a_valid_vote_or_a_recorded_rejection(raw: str) -> None:
    vote = d3.parse_vote(raw)
    if vote.rejected:
        assert vote.choice is None and vote.scores is None
    else:
        assert vote.scores is not None and all(1 <= s <= 20 for s in vote.scores)
        assert vote.choice == (None if vote.scores[0] == vote.scores[1] else 1 if vote.scores[0] > vote.scores[1] else 2)


# -- runs with the bundled models -------------------------------------------------------------


async def test_more_runs_k_advocates_per_answer_in_parallel_then_one_judged_round_and_a_jury(
    smollm: LlamaCppBackend, gemma: LlamaCppBackend, tmp_path: Path
) -> None:
    config = d3.D3Config(QUESTION, ANSWER_A, ANSWER_B, variant="more", k=2, jury_size=2,
                         turn_tokens=40, judge_tokens=80, vote_tokens=60)
    team = d3.D3Agents(Agent("advocate", smollm, OPTS), Agent("judge", gemma, OPTS),
                       [Agent("juror", gemma, OPTS), Agent("juror", smollm, OPTS)])  # jurors on different models
    run = d3.D3(config, team, debate_id="more1")
    with Journal(tmp_path / "j.db") as journal:
        final = await drive(run.run(), journal)
        debate = Queries(journal).debate("more1")
    assert final is not None and final.status == "finished" and debate is not None
    check_journal(run, debate)
    turns = debate["turns"]
    assert sorted(t["role"] for t in turns if t["kind"] == "defense") == ["advocate-1.1", "advocate-1.2", "advocate-2.1", "advocate-2.2"]
    assert [t["role"] for t in turns if t["kind"] == "consolidation"] == ["advocate-1", "advocate-2"]
    assert {t["round"] for t in turns} == {1}
    votes = [j for j in debate["judgements"] if j["kind"] == "vote"]
    assert [j["judge_model"] for j in votes] == ["gemma3-270m", "smollm2-135m"]
    outcome = debate["outcome"]
    assert outcome["variant"] == "more" and outcome["verdict"] in ("A", "B", "tie") and outcome["swap_audit"] is None
    assert len(outcome["passes"][0]["rounds"]) == 1 and outcome["passes"][0]["stop_reason"] == "MORE judges one round"


async def test_samre_stops_on_its_token_budget_and_the_swap_audit_reports_whether_the_verdict_held(
    smollm: LlamaCppBackend, gemma: LlamaCppBackend, tmp_path: Path
) -> None:
    config = d3.D3Config(QUESTION, ANSWER_A, ANSWER_B, variant="samre", max_rounds=3, budget=d3.Budget(tokens=1),
                         swap_audit=True, jury_size=2, turn_tokens=40, judge_tokens=80, vote_tokens=60)
    team = d3.D3Agents(Agent("advocate", gemma, OPTS), Agent("judge", gemma, OPTS), [Agent("juror", smollm, OPTS)])
    run = d3.D3(config, team, debate_id="samre1")
    with Journal(tmp_path / "j.db") as journal:
        final = await drive(run.run(), journal)
        debate = Queries(journal).debate("samre1")
    assert final is not None and final.status == "finished" and debate is not None
    check_journal(run, debate)
    outcome = debate["outcome"]
    assert [p["order"] for p in outcome["passes"]] == ["A/B", "B/A"]
    for p in outcome["passes"]:  # one round is always held; the budget then stops the debate
        assert len(p["rounds"]) == 1 and p["stop_reason"].startswith("token budget")
        assert p["budget"]["limits"] == {"debate": 1} and p["budget"]["within"] is False
    audit = outcome["swap_audit"]
    assert audit["verdicts"] == {"A/B": outcome["passes"][0]["verdict"], "B/A": outcome["passes"][1]["verdict"]}
    assert audit["held"] == (audit["verdicts"]["A/B"] == audit["verdicts"]["B/A"])
    first, swapped = run.passes
    assert first.histories["advocate-1"][0].content.index(ANSWER_A) < first.histories["advocate-1"][0].content.index(ANSWER_B)
    assert swapped.histories["advocate-1"][0].content.index(ANSWER_B) < swapped.histories["advocate-1"][0].content.index(ANSWER_A)
    assert sorted({t["round"] for t in debate["turns"]}) == [1, 3]  # A/B: debate 1, jury 2; B/A: debate 3, jury 4


async def test_unparseable_judge_and_juror_replies_are_recorded_and_the_evaluation_still_decides(tmp_path: Path) -> None:
    """Scripted replies: the exact bad strings cannot be had from a grammar-constrained model."""
    advocate = ScriptedBackend("scripted-advocate", ["Answer 1 is right.", "Answer 2 is right."])
    judge = ScriptedBackend("scripted-judge", ["I like both.", '{"score_1": 99}'])
    juror = ScriptedBackend("scripted-juror", ["Answer 1, obviously.", "still prose",
                                               '{"score_1": 14, "score_2": 9, "rationale": "sound"}'])
    config = d3.D3Config(QUESTION, ANSWER_A, ANSWER_B, variant="samre", max_rounds=1, jury_size=2)
    team = d3.D3Agents(Agent("advocate", advocate, OPTS), Agent("judge", judge, OPTS), [Agent("juror", juror, OPTS)])
    run = d3.D3(config, team, debate_id="bad1")
    with Journal(tmp_path / "j.db") as journal:
        final = await drive(run.run(), journal)
        debate = Queries(journal).debate("bad1")
    assert final is not None and final.status == "finished" and debate is not None
    check_journal(run, debate)
    scores = [j for j in debate["judgements"] if j["kind"] == "score"]
    assert [j["score"] for j in scores] == [None, None]
    assert "recorded as missing" in scores[0]["reasons"]["notes"][-1]
    # Scripted calls finish without yielding to the event loop, so juror-1 takes the first two
    # replies (prose twice: a rejection) and juror-2 the JSON (a vote for Answer 1, i.e. A).
    votes = {j["judge_role"]: j for j in debate["judgements"] if j["kind"] == "vote"}
    assert votes["juror-1"]["verdict"] is None and "no JSON" in votes["juror-1"]["reasons"]["rejected"]
    assert votes["juror-1"]["reasons"]["notes"][-1] == "recorded as missing after a stricter retry"
    assert votes["juror-2"]["verdict"] == "A" and votes["juror-2"]["reasons"]["scores"] == {"A": 14, "B": 9}
    assert debate["outcome"]["verdict"] == "A" and debate["outcome"]["passes"][0]["decided_by"] == "majority"
    assert len(debate["model_calls"]) == 2 + 2 + 3  # advocates; the judge and its retry; juror-1 twice, juror-2 once


@pytest.mark.model
def test_headless_d3_samre_command_prints_the_verdict_and_the_token_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answer = tmp_path / "b.txt"
    answer.write_text(ANSWER_B, encoding="utf-8")
    db = tmp_path / "cli.db"
    assert main(["--db", str(db), "run", "d3-samre", "--question", QUESTION, "--answer-a", ANSWER_A, "--answer-b", f"@{answer}",
                 "--advocate", "gemma3-270m", "--judge", "gemma3-270m", "--jurors", "smollm2-135m", "--jury-size", "1",
                 "--max-rounds", "1", "--budget", "5000,judge=2000", "--turn-tokens", "40", "--judge-tokens", "80",
                 "--vote-tokens", "60", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert "D3: passes and audits" in out and "Pass 1 (answers shown as A/B)" in out  # the protocol's findings (present)
    assert "Budget" in out and "5000" in out and "2000" in out
    with Journal(db) as journal:
        debate = Queries(journal).debate(Queries(journal).debates()[0]["id"])
    assert debate is not None and debate["protocol"] == "d3-samre"
    assert debate["outcome"]["passes"][0]["stop_reason"] == "round budget spent: 1 round(s) held"
    assert debate["outcome"]["usage"] == journal_usage(debate["model_calls"])
    assert debate["config"]["answer_b"] == ANSWER_B  # read from the @file
