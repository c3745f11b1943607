"""CRIT against seed 004 Table 6.3: Γ from step #6 alone, recursion on reasons that are claims
(step #3), the whole subject within the judge's context, per-argument quality.

Scripted judge (tests/helpers/scripted.py): these tests need exact ratings from the judge to
check the arithmetic, which a real model cannot be made to give on demand.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from backends.base import SamplingOptions
from protocols.core.agents import Agent
from protocols.measures.crit import crit, weighted_score

from tests.helpers.scripted import ScriptedBackend

OPTS = SamplingOptions(max_tokens=200, temperature=0.0)


def reason(text: str, validity: int, credibility: int, **extra: Any) -> dict[str, Any]:
    return {"reason": text, "validity": validity, "credibility": credibility, **extra}


def judged(score: int, reasons: list[dict[str, Any]], rivals: list[dict[str, Any]]) -> str:
    return json.dumps({"claim": "c", "reasons": reasons, "rival_reasons": rivals, "score": score, "justification": "j"})


def judge(*replies: str) -> tuple[Agent, ScriptedBackend]:
    backend = ScriptedBackend("judge", list(replies))
    return Agent("judge", backend, OPTS), backend


async def test_gamma_is_the_step_6_weighted_sum_not_a_blend_with_the_holistic_score() -> None:
    agent, _ = judge(judged(10, [reason("r", 5, 5)], [reason("x", 5, 5)]))
    result = await crit(agent, "doc", author="A")
    assert result.score == pytest.approx(3.0)  # 1 + (√25 − 1)·25/(25+25); the judge's 10 is not mixed in
    assert result.holistic == 10 and result.weighted == pytest.approx(3.0)


async def test_with_no_reason_on_either_side_gamma_is_the_holistic_score() -> None:
    agent, _ = judge(judged(8, [], []))
    result = await crit(agent, "doc", author="A")
    assert result.score == 8 and result.weighted is None  # step #6 has nothing to weigh
    assert any("holistic" in n for n in result.notes)
    assert weighted_score([], []) is None


def r(validity: int, credibility: int) -> dict[str, Any]:
    return reason("r", validity, credibility)


def test_issue_26s_examples_gamma_reads_how_good_the_reasons_are() -> None:
    """Issue 26 item 1: one reason rated 1/1 with no rival scored 10, and 9/9 against 9/9 the
    same 5.5 as 2/2 against 2/2 (the old Γ = 1 + 9·S⁺/(S⁺+S⁻) read only the share)."""
    assert weighted_score([r(1, 1)], []) == 1.0
    assert weighted_score([r(9, 9)], [r(9, 9)]) == pytest.approx(5.0)
    assert weighted_score([r(2, 2)], [r(2, 2)]) == pytest.approx(1.5)
    assert weighted_score([r(3, 2)], []) == pytest.approx(6 ** 0.5)  # a weak unanswered reason: its quality, not 10
    assert weighted_score([r(10, 10)], []) == 10.0 and weighted_score([], [r(1, 1)]) == 1.0


def test_gamma_rises_with_every_rating_of_a_reason_and_falls_with_every_rating_of_a_rival() -> None:
    """Section 6.2.2's 1 (least credible) to 10 (most credible), over every pair of integer
    ratings of one reason and one rival (and with a second, fixed reason)."""
    grid = range(1, 11)
    for g in grid:
        for t in grid:
            for rg, rt in ((1, 1), (5, 5), (9, 9), (10, 3)):
                here = weighted_score([r(g, t)], [r(rg, rt)])
                assert here is not None and 1 <= here <= 10
                assert here <= (g * t) ** 0.5 + 1e-12  # never above the reasons' own quality
                if g < 10:  # a better-rated reason: higher Γ
                    assert weighted_score([r(g + 1, t)], [r(rg, rt)]) > here  # type: ignore[operator]
                if rg < 10:  # a better-rated rival: lower Γ (unless Γ is already the floor, 1)
                    worse = weighted_score([r(g, t)], [r(rg + 1, rt)])
                    assert worse < here or worse == here == 1  # type: ignore[operator]
                    assert weighted_score([r(g, t), r(7, 7)], [r(rg + 1, rt)]) < weighted_score([r(g, t), r(7, 7)], [r(rg, rt)])  # type: ignore[operator]
            assert weighted_score([r(g, t)], []) == pytest.approx((g * t) ** 0.5)  # unanswered: its quality
    weak = [r(3, 3), r(2, 4)]  # a weak case, contested or not, stays weak
    assert max(weighted_score(weak, rivals) for rivals in ([], [r(1, 1)], [r(9, 9)])) < 3.5  # type: ignore[type-var]


async def test_step_3_recurses_on_a_reason_that_is_itself_a_claim() -> None:
    first = judged(9, [reason("the rash proves dengue", 8, 8, is_claim=True)], [reason("no travel", 4, 4)])
    sub = judged(5, [reason("rashes are common", 2, 3)], [reason("many viruses cause rashes", 9, 9)])
    agent, backend = judge(first, sub)
    result = await crit(agent, "Dengue: the rash proves dengue", author="A", depth=1)
    assert len(backend.prompts) == 2 and "the rash proves dengue" in backend.prompts[1][-1].content
    validity = 1 + (2 - 1) * 6 / (6 + 81)  # its reasons' mean γ, discounted by its rivals' share
    rr = result.reasons[0]
    assert rr["validity"] == pytest.approx(validity, abs=1e-3) and rr["credibility"] == 3
    assert rr["recursion"]["first"] == {"validity": 8, "credibility": 8}
    s = rr["validity"] * 3
    assert result.score == pytest.approx(1 + (s ** 0.5 - 1) * s / (s + 16), abs=1e-3)
    assert len(result.calls) == 2
    flat, _ = judge(first)
    unrecursed = await crit(flat, "Dengue: the rash proves dengue", author="A", depth=0)
    assert unrecursed.score == pytest.approx(1 + 7 * 64 / 80) and unrecursed.score > result.score


async def test_the_recursion_does_not_inflate_a_weak_reason_whose_sub_evaluation_has_no_rival() -> None:
    """Issue 26 item 2: a reason rated 3/3 (below EVINCE's gate of 0.5) came back 10/6 from a
    sub-evaluation that listed no rival (its Γ was then 10), and Γ rose 6.0 → 7.5."""
    first = judged(6, [reason("fever means dengue", 3, 3, argument=1, is_claim=True), reason("rash", 8, 8, argument=2)],
                   [reason("no travel", 5, 5)])
    sub = judged(9, [reason("fever is common in dengue", 3, 3), reason("and in many other fevers", 3, 3)], [])
    agent, _ = judge(first, sub)
    result = await crit(agent, "doc", author="A", arguments=["fever", "rash"], depth=1)
    flat, _ = judge(first)
    unrecursed = await crit(flat, "doc", author="A", arguments=["fever", "rash"], depth=0)
    rr = result.reasons[0]
    assert (rr["validity"], rr["credibility"]) == (3.0, 3.0)  # its support's own mean ratings, not Γ = 10
    assert result.argument_scores[1] == 0.3  # still below EVINCE's gate (0.5)
    assert result.score == unrecursed.score  # rated as its support is rated: the recursion moves nothing


async def test_rival_reasons_that_are_claims_are_recursed_as_reasons_are() -> None:
    """Recurse both or neither: a rival flagged is_claim gets its own sub-evaluation, so a
    reason and a rival rated and supported alike end alike (SocraSynth's two cells)."""
    first = judged(5, [reason("pro", 8, 8, is_claim=True)], [reason("con", 8, 8, is_claim=True)])
    support = judged(5, [reason("s", 4, 5)], [])
    agent, backend = judge(first, support, support)
    result = await crit(agent, "doc", author="A", subject="Fever after travel", depth=1)
    assert len(backend.prompts) == 3
    assert backend.prompts[2][-1].content.startswith(  # read in the subject's and the document's context, as a reason is
        "Debate subject:\n<<<\nFever after travel\n\nIt is a rival reason against this document by A:\ndoc\n>>>")
    assert "Document by a rival reason to A:\n<<<\ncon\n>>>" in backend.prompts[2][-1].content
    (pro,), (con,) = result.reasons, result.rivals
    assert (pro["validity"], pro["credibility"]) == (con["validity"], con["credibility"]) == (4.0, 5.0)
    assert con["recursion"]["first"] == {"validity": 8, "credibility": 8}
    many = judged(5, [], [reason(f"con {i}", 8, 8, is_claim=True) for i in range(3)])
    agent, backend = judge(many, support, support)
    capped = await crit(agent, "doc", author="A", depth=1)
    assert len(backend.prompts) == 3 and "recursion" not in capped.rivals[2]
    assert "3 rival reasons are claims; CRIT recursed on the first 2" in capped.notes


async def test_the_judge_sees_the_whole_subject_unless_the_context_cannot_hold_it() -> None:
    long_case = "symptom " * 600 + "LAST-WORD"  # ~4,800 characters, well inside 4,096 tokens
    agent, backend = judge(judged(7, [], []))
    result = await crit(agent, "doc", author="A", subject=long_case, max_tokens=512)
    assert "LAST-WORD" in backend.prompts[0][-1].content and not any("shortened" in n for n in result.notes)
    huge = "symptom " * 6000 + "LAST-WORD"  # ~48,000 characters: more than the context
    agent, backend = judge(judged(7, [], []))
    result = await crit(agent, "doc", author="A", subject=huge, max_tokens=512)
    prompt = backend.prompts[0]
    assert agent.session.count_tokens(prompt) <= backend.context_length - 512
    shown = prompt[-1].content  # the subject's middle gave way, visibly; its beginning and end are kept
    assert "characters left out to fit the context window" in shown and "LAST-WORD" in shown and shown.count("symptom") < 3000
    assert any(n.startswith("shortened to fit judge's context window") and "the subject to" in n for n in result.notes)


async def test_each_cited_argument_gets_a_quality_score() -> None:
    agent, backend = judge(judged(7, [reason("a", 9, 4, argument=1), reason("b", 1, 1, argument=2), reason("c", 4, 9, argument=1)], []))
    result = await crit(agent, "doc", author="A", arguments=["first", "second", "third"])
    assert "[2] second" in backend.prompts[0][-1].content
    assert result.argument_scores == {1: pytest.approx(0.6), 2: pytest.approx(0.1)}  # √(γθ)/10; 3 unrated
