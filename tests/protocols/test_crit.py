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
from protocols.agents import Agent
from protocols.crit import crit, weighted_score

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
    assert result.score == pytest.approx(5.5)  # 1 + 9·2.5/(2.5+2.5); the judge's 10 is not mixed in
    assert result.holistic == 10 and result.weighted == pytest.approx(5.5)


async def test_with_no_reason_on_either_side_gamma_is_the_holistic_score() -> None:
    agent, _ = judge(judged(8, [], []))
    result = await crit(agent, "doc", author="A")
    assert result.score == 8 and result.weighted == 5.5  # 5.5: the neutral step #6 value, kept for callers
    assert any("holistic" in n for n in result.notes)
    assert weighted_score([], []) == 5.5


async def test_step_3_recurses_on_a_reason_that_is_itself_a_claim() -> None:
    first = judged(9, [reason("the rash proves dengue", 8, 8, is_claim=True)], [reason("no travel", 4, 4)])
    sub = judged(5, [reason("rashes are common", 2, 3)], [reason("many viruses cause rashes", 9, 9)])
    agent, backend = judge(first, sub)
    result = await crit(agent, "Dengue: the rash proves dengue", author="A", depth=1)
    assert len(backend.prompts) == 2 and "the rash proves dengue" in backend.prompts[1][-1].content
    sub_gamma = 1 + 9 * 0.6 / (0.6 + 8.1)  # the reason's own CRIT
    r = result.reasons[0]
    assert r["validity"] == pytest.approx(sub_gamma, abs=1e-3) and r["credibility"] == 3
    assert r["recursion"]["first"] == {"validity": 8, "credibility": 8}
    s = sub_gamma * 3 / 10
    assert result.score == pytest.approx(1 + 9 * s / (s + 1.6), abs=1e-3)
    assert len(result.calls) == 2
    flat, _ = judge(first)
    unrecursed = await crit(flat, "Dengue: the rash proves dengue", author="A", depth=0)
    assert unrecursed.score == pytest.approx(1 + 9 * 6.4 / 8.0) and unrecursed.score > result.score


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
