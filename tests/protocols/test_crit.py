"""CRIT against Chang, Table 6.3: Γ from step #6 alone, recursion on reasons that are claims
(step #3), the whole subject within the judge's context, per-argument quality.

Scripted judge (tests/helpers/scripted_backends.py): these tests need exact ratings from the judge to
check the arithmetic, which a real model cannot be made to give on demand.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from backends.base import SamplingOptions
from protocols.core.agents import Agent
from protocols.measures.crit import crit, side_quality, weighted_score
from tests.helpers.scripted_backends import ScriptedBackend

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


def test_gamma_reads_how_good_the_reasons_are_not_only_their_share() -> None:
    """A share-only Γ = 1 + 9·S⁺/(S⁺+S⁻) gave one reason rated 1/1 with no rival 10, and 9/9
    against 9/9 the same 5.5 as 2/2 against 2/2."""
    assert weighted_score([r(1, 1)], []) == 1.0
    assert weighted_score([r(9, 9)], [r(9, 9)]) == pytest.approx(5.0)
    assert weighted_score([r(2, 2)], [r(2, 2)]) == pytest.approx(1.5)
    assert weighted_score([r(3, 2)], []) == pytest.approx(6 ** 0.5)  # a weak unanswered reason: its quality, not 10
    assert weighted_score([r(10, 10)], []) == 10.0 and weighted_score([], [r(1, 1)]) == 1.0


def test_a_weaker_reason_listed_beside_a_strong_one_does_not_lower_gamma() -> None:
    """Section 6.2.2.2's "weighted sum": a judge that lists one more supporting reason has not
    found the case weaker. With Q⁺ the mean quality, 9/9 alone scored 9, 9/9 + 3/3 6, and 9/9 +
    1/1 5.0, as low as 9/9 against an equally strong rival."""
    assert weighted_score([r(9, 9)], []) == 9.0
    assert weighted_score([r(9, 9), r(3, 3)], []) == 9.0
    assert weighted_score([r(9, 9), r(1, 1)], []) == 9.0
    # SocraSynth's Γ: pro 8/8 ×3 against con 6/6 ×3, then with two more 3/3 reasons for pro
    three = weighted_score([r(8, 8)] * 3, [r(6, 6)] * 3)
    five = weighted_score([r(8, 8)] * 3 + [r(3, 3)] * 2, [r(6, 6)] * 3)
    assert three == pytest.approx(5.48) and five == pytest.approx(1 + 7 * 210 / 318)
    assert five > three  # the extra reasons count, in the share


def test_adding_a_reason_never_lowers_gamma_and_adding_a_rival_never_raises_it() -> None:
    """Every case of up to two reasons and one rival on a grid of ratings, each grown by one
    more reason or one more rival of any rating on the grid."""
    grid = [(g, t) for g in (1, 3, 5, 8, 10) for t in (1, 4, 7, 10)]
    cases = [([a], []) for a in grid] + [([a], [c]) for a in grid for c in grid[::3]] + \
            [([a, b], [c]) for a in grid[::2] for b in grid[1::3] for c in grid[::4]] + [([], [c]) for c in grid]
    for reasons, rivals in cases:
        here = weighted_score(_all(reasons), _all(rivals))
        assert here is not None
        for extra in grid:
            more = weighted_score(_all([*reasons, extra]), _all(rivals))
            fewer = weighted_score(_all(reasons), _all([*rivals, extra]))
            assert more is not None and more >= here - 1e-12, (reasons, rivals, extra)
            assert fewer is not None and fewer <= here + 1e-12, (reasons, rivals, extra)


def _all(pairs: list[tuple[int, int]]) -> list[dict[str, Any]]:
    return [r(g, t) for g, t in pairs]


def test_side_quality_is_the_strongest_reasons_and_none_without_one() -> None:
    assert side_quality([r(3, 3), r(8, 2), r(4, 9)]) == 6.0  # √36: 4/9 is the strongest, listed last
    assert side_quality([r(2, 2)]) == 2.0 and side_quality([]) is None

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
    """A reason rated 3/3 (below EVINCE's gate of 0.5) came back 10/6 from a
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


async def test_the_recursion_rates_a_reason_by_its_strongest_support_and_a_weaker_one_beside_it_moves_nothing() -> None:
    """As Γ reads a side by its strongest reason, step #3 rates r by the strongest reason its
    sub-evaluation found: a 2/2 listed beside a 6/5 leaves r at 6/5 (the mean would make it 4/3.5)."""
    first = judged(7, [reason("travel history shows exposure", 8, 8, is_claim=True)], [reason("no rash", 4, 4)])
    alone = judged(5, [reason("a trip to Ghana", 6, 5)], [reason("short stay", 3, 2)])
    beside = judged(5, [reason("a trip to Ghana", 6, 5), reason("maybe a mosquito bite", 2, 2)], [reason("short stay", 3, 2)])
    results = []
    for sub in (alone, beside):
        agent, _ = judge(first, sub)
        results.append(await crit(agent, "doc", author="A", depth=1))
    (one,), (two,) = results[0].reasons, results[1].reasons
    assert one["validity"] == pytest.approx(1 + 5 * 30 / 36, abs=1e-3) and one["credibility"] == 5
    assert two["validity"] == pytest.approx(1 + 5 * 34 / 40, abs=1e-3) and two["credibility"] == 5
    assert two["validity"] > one["validity"] and results[1].score > results[0].score  # type: ignore[operator]
    tie = judged(5, [reason("a", 9, 4), reason("b", 4, 9)], [])  # equally strong: the first listed
    agent, _ = judge(first, tie)
    (tied,) = (await crit(agent, "doc", author="A", depth=1)).reasons
    assert (tied["validity"], tied["credibility"]) == (9, 4)


async def test_an_arguments_quality_is_its_strongest_reason_so_a_weak_one_citing_it_does_not_drop_it() -> None:
    """EVINCE's gate reads these: an argument cited by an 8/8 reason stays at 0.8 when the judge
    also cites a 2/2 reason for it (a mean, 0.5, would sit on the gate)."""
    agent, _ = judge(judged(7, [reason("a", 8, 8, argument=1), reason("b", 2, 2, argument=1), reason("c", 2, 3, argument=2)], []))
    result = await crit(agent, "doc", author="A", arguments=["first", "second"])
    assert result.argument_scores == {1: 0.8, 2: pytest.approx(0.2449)}
