"""CRIT's judge call step by step: the prompt word for word, the retry under the stricter schema,
the record of a judge that fails twice, step #3's recursion in every branch, and what the journal
keeps.

test_crit.py checks Γ's arithmetic and the subject's fitting. Here what a judge is actually sent
and what comes back into the journal: the roles and the text of each prompt (the prompt is the
method, for a model), the schema, token budget and temperature of each attempt, every note, and
the recursion's limits and bookkeeping. Scripted judges (tests/helpers/scripted_backends.py): the replies
must be exact. (Found by mutation testing, ``benchmarks/mutation.py``: each test failed for a
change to ``protocols/measures/crit.py`` the others let through.)
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from typing import Any

import pytest

from backends.base import Message, SamplingOptions
from protocols.core.agents import Agent
from protocols.core.fitting import Section
from protocols.measures.crit import JUDGE_SYSTEM, CritReply, RatedReason, StrictCritReply, argument_scores, crit, weighted_score
from tests.helpers.scripted_backends import ScriptedBackend

OPTS = SamplingOptions(max_tokens=200, temperature=0.7)
APPLY = ("Apply CRIT: (1) state the document's main claim; (2) list up to {n} reasons supporting it, each with validity "
         "(1-10: does it support the claim?) and credibility (1-10: is its source credible?){cite}{recurse}; (3) list up "
         "to {n} rival reasons against the claim, rated{marked} the same way; (4) give an overall score from 1 (not credible) to "
         "10 (most credible) and a short justification.")
CITE = " and the number of the argument it comes from (0 if none)"
RECURSE = "; mark is_claim true when a reason is itself a conclusion that needs support of its own"
NO_JSON = "no JSON object found in the reply"


class Judge(ScriptedBackend):
    """A scripted judge that also keeps each call's schema and can report a reply cut off."""

    def __init__(self, replies: Sequence[str], finish: Sequence[str] = ()) -> None:
        super().__init__("judge-model", list(replies))
        self.finish = list(finish)
        self.schemas: list[Any] = []

    def _new_session(self, name: str):  # type: ignore[no-untyped-def]
        session = super()._new_session(name)
        complete = session.complete

        async def recording(messages, options=None, *, schema=None):  # type: ignore[no-untyped-def]
            self.schemas.append(schema)
            done = await complete(messages, options, schema=schema)
            return dataclasses.replace(done, finish_reason=self.finish.pop(0)) if self.finish else done

        session.complete = recording  # type: ignore[method-assign]
        return session


def reason(text: str, validity: int, credibility: int, **extra: Any) -> dict[str, Any]:
    return {"reason": text, "validity": validity, "credibility": credibility, **extra}


def judged(reasons: Sequence[dict[str, Any]] = (), rivals: Sequence[dict[str, Any]] = (), score: int = 7,
           claim: str = "c", justification: str = "j") -> str:
    return json.dumps({"claim": claim, "reasons": list(reasons), "rival_reasons": list(rivals), "score": score,
                       "justification": justification})


def agent(backend: Judge, temperature: float = 0.7) -> Agent:
    return Agent("judge", backend, dataclasses.replace(OPTS, temperature=temperature))


async def test_the_judges_prompt_word_for_word_then_the_stricter_retry() -> None:
    backend = Judge(["I would rather not say.", judged([reason("r", 5, 5)])])
    await crit(agent(backend), " Dengue: fever and rash. ", author="Agent A", counter="Malaria: travel to Ghana.",
               subject="A 34-year-old with fever", arguments=[" fever ", "rash"])
    material = ("Debate subject:\n<<<\nA 34-year-old with fever\n>>>\n\n"
                "Document by Agent A:\n<<<\nDengue: fever and rash.\n>>>\n\n"
                "The document's numbered arguments:\n<<<\n[1] fever\n[2] rash\n>>>\n\n"
                "Counter-arguments from the opponent:\n<<<\nMalaria: travel to Ghana.\n>>>\n\n")
    first, retry = backend.prompts
    assert first == [Message("system", JUDGE_SYSTEM),
                     Message("user", material + APPLY.format(n=5, cite=CITE, recurse=RECURSE, marked=" and marked"))]
    assert retry == [Message("system", JUDGE_SYSTEM),
                     Message("user", material + APPLY.format(n=1, cite=CITE, recurse="", marked="") + "\n\n"
                             "Reply with the JSON object only, keep every text field very short.")]
    assert "never instructions" in JUDGE_SYSTEM  # the markers' meaning, told to the judge


async def test_a_document_alone_is_asked_without_citations() -> None:
    backend = Judge([judged()])
    await crit(agent(backend), "doc", author="A")
    assert backend.prompts[0][1] == Message("user", "Document by A:\n<<<\ndoc\n>>>\n\n"
                                            + APPLY.format(n=5, cite="", recurse=RECURSE, marked=" and marked"))


async def test_each_attempt_has_its_schema_budget_and_temperature() -> None:
    backend = Judge(["prose", judged([reason("r", 5, 5)])])
    result = await crit(agent(backend, temperature=0.7), "doc", author="A", max_tokens=222)
    assert backend.schemas == [CritReply, StrictCritReply]
    assert [(o.max_tokens, o.temperature) for o in backend.options] == [(222, 0.3), (222, 0.0)]
    assert [c.purpose for c in result.calls] == ["crit", "crit"]
    cool = Judge([judged()])
    await crit(agent(cool, temperature=0.1), "doc", author="A")
    assert cool.options[0].temperature == 0.1  # a cooler judge keeps its own temperature


async def test_a_reply_recovered_on_the_retry_keeps_both_calls_and_says_why_it_retried() -> None:
    retry = judged([reason("r", 5, 5)])
    backend = Judge(["prose", retry])
    result = await crit(agent(backend), "doc", author="A")
    assert result.notes == [f"attempt 1: {NO_JSON}"]
    assert result.raw == retry and len(result.calls) == 2 and result.calls[0] is not result.calls[1]


async def test_a_judge_that_fails_twice_is_recorded_as_missing_with_each_reason() -> None:
    backend = Judge(["I cannot judge this.", '{"claim": "cut off'], finish=["stop", "length"])
    result = await crit(agent(backend), "doc", author="A")
    assert (result.score, result.holistic, result.weighted) == (None, None, None)
    assert result.notes == [f"attempt 1: {NO_JSON}", f"attempt 2: {NO_JSON} (cut off at max_tokens)",
                            "recorded as missing after a stricter retry"]
    assert result.raw == '{"claim": "cut off' and [c.purpose for c in result.calls] == ["crit", "crit"]
    assert result.reasons_json()["notes"] == result.notes


async def test_the_reasons_that_are_there_decide_gamma_either_side_alone_included() -> None:
    only_support = await crit(agent(Judge([judged([reason("r", 6, 5)], score=2)])), "doc", author="A")
    only_rivals = await crit(agent(Judge([judged(rivals=[reason("x", 6, 5)], score=9)])), "doc", author="A")
    assert (only_support.score, only_rivals.score) == (5.477, 1.0)  # √(6·5) unanswered, 1 unsupported; not the judge's 2 or 9
    assert not any("holistic" in n for n in only_support.notes + only_rivals.notes)
    holistic = await crit(agent(Judge([judged(score=8)])), "doc", author="A")
    assert holistic.notes == ["no reason rated on either side: Γ is the judge's holistic score (step #7)"]


async def test_what_the_journal_keeps_of_a_judgement() -> None:
    reply = judged([reason("r", 7, 6, argument=1)], [reason("x", 3, 3)], score=9, claim="dengue", justification="fits")
    result = await crit(agent(Judge([reply])), "doc", author="A", arguments=["fever"], depth=0)
    assert (result.score, result.weighted, result.holistic) == (5.514, 5.514, 9)  # 1 + (√42 − 1)·42/51, to three decimals
    assert (result.claim, result.justification, result.raw) == ("dengue", "fits", reply)
    assert result.reasons_json() == {
        "claim": "dengue",
        "reasons": [{"reason": "r", "validity": 7, "credibility": 6, "argument": 1, "is_claim": False}],
        "rival_reasons": [{"reason": "x", "validity": 3, "credibility": 3, "argument": 0, "is_claim": False}],
        "holistic_score": 9, "weighted_score": 5.514, "argument_scores": {"1": 0.6481},
        "justification": "fits", "notes": [],
    }


def test_weighted_score_reads_rated_reasons_as_parsed_or_as_dicts() -> None:
    parsed = [RatedReason(reason="r", validity=7, credibility=6)], [RatedReason(reason="x", validity=3, credibility=3)]
    dumped = [r.model_dump() for r in parsed[0]], [r.model_dump() for r in parsed[1]]
    assert weighted_score(*parsed) == weighted_score(*dumped) == pytest.approx(1 + (42 ** 0.5 - 1) * 42 / 51)


def test_a_reason_that_cites_no_argument_scores_none() -> None:
    reasons = [reason("a", 2, 3, argument=2), reason("b", 9, 9, argument=0), reason("c", 9, 9)]
    assert argument_scores(reasons, 3) == {2: 0.2449}  # √6/10 to four decimals; 0 and a missing number cite nothing


async def test_depth_zero_makes_no_recursive_call() -> None:
    backend = Judge([judged([reason("a claim", 8, 8, is_claim=True)])])
    result = await crit(agent(backend), "doc", author="A", depth=0)
    assert len(backend.prompts) == 1 and "recursion" not in result.reasons[0]


async def test_the_recursion_asks_about_the_reason_in_its_documents_context() -> None:
    backend = Judge([judged([reason("the rash proves dengue", 8, 8, is_claim=True)]), judged([reason("s", 4, 4)])])
    await crit(agent(backend), "Dengue, as the rash proves.", author="Agent A", subject="Fever after travel", max_tokens=111)
    assert backend.prompts[1][1] == Message("user", (
        "Debate subject:\n<<<\nFever after travel\n\nIt is a reason given in this document by Agent A:\n"
        "Dengue, as the rash proves.\n>>>\n\nDocument by a reason given by Agent A:\n<<<\nthe rash proves dengue\n>>>\n\n"
        + APPLY.format(n=5, cite="", recurse=RECURSE, marked=" and marked")))
    assert [o.max_tokens for o in backend.options] == [111, 111]


async def test_by_default_the_recursion_goes_one_level_deep_and_depth_two_goes_two() -> None:
    nested = [judged([reason("claim", 8, 8, is_claim=True)]), judged([reason("sub-claim", 6, 6, is_claim=True)]),
              judged([reason("ground", 5, 5)])]
    one = Judge(nested)
    await crit(agent(one), "doc", author="A")
    two = Judge(nested)
    result = await crit(agent(two), "doc", author="A", depth=2)
    assert (len(one.prompts), len(two.prompts)) == (2, 3)
    assert len(result.calls) == 3


async def test_at_most_two_claims_are_recursed_and_a_third_is_noted() -> None:
    claims = [reason(f"claim {i}", 8, 8, is_claim=True) for i in range(3)]
    two = await crit(agent(Judge([judged(claims[:2]), judged(), judged()])), "doc", author="A")
    assert not any("are claims" in n for n in two.notes)
    backend = Judge([judged(claims), judged(), judged()])
    three = await crit(agent(backend), "doc", author="A")
    assert len(backend.prompts) == 3 and "recursion" not in three.reasons[2]
    assert "3 reasons are claims; CRIT recursed on the first 2" in three.notes


async def test_a_failed_sub_evaluation_keeps_the_first_ratings_and_the_next_claim_is_still_judged() -> None:
    backend = Judge([judged([reason("first", 8, 7, is_claim=True), reason("second", 6, 5, is_claim=True)]),
                     "prose", "more prose",                      # the first claim's judge fails twice
                     judged([reason("s", 2, 3), reason("t", 2, 4)], [reason("u", 9, 9)])])
    result = await crit(agent(backend), "doc", author="A")
    first, second = result.reasons
    assert first["recursion"] == {"failed": True, "kept": {"validity": 8, "credibility": 7}}
    assert (first["validity"], first["credibility"]) == (8, 7)
    sub_gamma = round(1 + (8 ** 0.5 - 1) * 14 / (14 + 81), 3)  # its own Γ, journalled
    # its strongest reason's γ (2), discounted by its rival's share as Γ is, to three decimals; that reason's θ
    assert (second["validity"], second["credibility"]) == (round(1 + (2 - 1) * 14 / (14 + 81), 3), 4)
    assert second["recursion"] == {
        "first": {"validity": 6, "credibility": 5}, "sub_score": sub_gamma, "sub_claim": "c",
        "sub_reasons": [{"reason": "s", "validity": 2, "credibility": 3, "argument": 0, "is_claim": False},
                        {"reason": "t", "validity": 2, "credibility": 4, "argument": 0, "is_claim": False}],
        "sub_rivals": [{"reason": "u", "validity": 9, "credibility": 9, "argument": 0, "is_claim": False}],
    }
    assert len(result.calls) == 4 and result.calls[-1] is not result.calls[0]  # every sub-call, then the judgement


async def test_a_sub_evaluation_with_only_rivals_keeps_the_first_credibility() -> None:
    backend = Judge([judged([reason("claim", 8, 7, is_claim=True)]), judged(rivals=[reason("u", 9, 9)])])
    result = await crit(agent(backend), "doc", author="A")
    assert (result.reasons[0]["validity"], result.reasons[0]["credibility"]) == (1.0, 7)


async def test_a_document_in_ranked_parts_is_shown_one_part_a_line() -> None:
    backend = Judge([judged()])
    await crit(agent(backend), [Section("position", "Position: dengue."), Section("round 1", "Round 1: the rash.")],
               author="A", counter=[Section("c1", "Round 1: malaria.")])
    assert backend.prompts[0][1].content.startswith(
        "Document by A:\n<<<\nPosition: dengue.\nRound 1: the rash.\n>>>\n\n"
        "Counter-arguments from the opponent:\n<<<\nRound 1: malaria.\n>>>\n\nApply CRIT:")


async def test_what_does_not_fit_is_shortened_and_the_note_names_it() -> None:
    backend = Judge([judged([reason("r", 5, 5)])])
    result = await crit(agent(backend), "d" * 30_000, author="A", counter="c" * 30_000, max_tokens=222)
    assert len(result.notes) == 1 and re.fullmatch(
        r"shortened to fit judge's context window \(4,096 tokens, 222 kept for the reply\): "
        r"the document to [\d,]+ of 30,000 characters \(its middle left out\); "
        r"the counter-arguments to [\d,]+ of 30,000 characters \(its middle left out\)", result.notes[0])


async def test_the_cited_evidence_is_shown_word_for_word_with_how_to_rate_by_it() -> None:
    """θ rates a reason's source (section 6.2.2), so the judge reads the evidence the debaters
    cited, after the arguments and before the task, with what a checked passage is worth."""
    backend = Judge([judged([reason("r", 5, 5)])])
    await crit(agent(backend), "Dengue: fever and rash.", author="Agent A", counter="Malaria: travel.",
               sources="  [P1] NS1 antigen positive (checked)\n[P2] not found  ")
    assert backend.prompts[0][1].content == (
        "Document by Agent A:\n<<<\nDengue: fever and rash.\n>>>\n\n"
        "Counter-arguments from the opponent:\n<<<\nMalaria: travel.\n>>>\n\n"
        "The user's evidence, as the debaters cited it (each citation checked):\n"
        "[P1] NS1 antigen positive (checked)\n[P2] not found\n"
        "Rate a reason's credibility by its source: high when a checked passage above supports it, low when "
        "it rests on a citation that did not check or on no source at all.\n\n"
        + APPLY.format(n=5, cite="", recurse=RECURSE, marked=" and marked"))
    blank = Judge([judged([reason("r", 5, 5)])])
    await crit(agent(blank), "doc", author="A", sources=" \n ")
    assert "evidence" not in blank.prompts[0][1].content  # only white space: no evidence part


async def test_the_cited_evidence_gives_way_first_and_keeps_its_beginning() -> None:
    """The arguments are what CRIT judges: evidence too long for the window is cut before a
    document that fits, at its end (the passages are listed most relevant first), and the note says so."""
    backend = Judge([judged([reason("r", 5, 5)])])
    document = "the rash and the fever point to dengue. " * 25  # 1,000 characters
    evidence = "EVIDENCE-START " + "a passage of the user's file. " * 1200 + "EVIDENCE-END"
    result = await crit(agent(backend), document, author="A", sources=evidence, max_tokens=222)
    shown = backend.prompts[0][1].content
    assert document.strip() in shown and "EVIDENCE-START" in shown and "EVIDENCE-END" not in shown
    assert len(result.notes) == 1 and re.fullmatch(
        r"shortened to fit judge's context window \(4,096 tokens, 222 kept for the reply\): "
        r"the cited evidence to [\d,]+ of 36,027 characters \(its end left out\)", result.notes[0]), result.notes


async def test_the_subject_gives_way_before_the_document() -> None:
    """The document is what CRIT judges: a long subject is shortened first, the document kept whole."""
    backend = Judge([judged([reason("r", 5, 5)])])
    document = "the rash and the fever point to dengue. " * 300  # 12,000 characters, about 3,000 tokens
    result = await crit(agent(backend), document, author="A", subject="s" * 40_000, max_tokens=222)
    assert document.strip() in backend.prompts[0][1].content
    assert len(result.notes) == 1 and "the subject to " in result.notes[0] and "the document" not in result.notes[0]


async def test_without_a_subject_the_recursion_shows_the_document_alone() -> None:
    backend = Judge([judged([reason("the rash proves dengue", 8, 8, is_claim=True)]), judged([reason("s", 4, 4)])])
    await crit(agent(backend), "Dengue, as the rash proves.", author="Agent A")
    assert backend.prompts[1][1].content.startswith(
        "Debate subject:\n<<<\nIt is a reason given in this document by Agent A:\nDengue, as the rash proves.\n>>>\n\n")


async def test_a_recursed_reason_takes_its_strongest_supports_ratings() -> None:
    backend = Judge([judged([reason("claim", 8, 7, is_claim=True)]),
                     judged([reason("s", 2, 3), reason("t", 5, 2), reason("u", 3, 4)])])
    result = await crit(agent(backend), "doc", author="A")
    assert (result.reasons[0]["validity"], result.reasons[0]["credibility"]) == (3, 4)  # u: 3·4 = 12 beats 10 and 6


async def test_a_sub_evaluation_that_rates_nothing_keeps_the_first_ratings() -> None:
    """Its Γ would be only the judge's holistic score: no rating of the reason to take."""
    backend = Judge([judged([reason("claim", 8, 7, is_claim=True)], score=3), judged(score=10)])
    result = await crit(agent(backend), "doc", author="A")
    assert (result.reasons[0]["validity"], result.reasons[0]["credibility"]) == (8, 7)
    assert result.reasons[0]["recursion"] == {"unrated": True, "kept": {"validity": 8, "credibility": 7}}


async def test_the_retry_is_read_against_the_stricter_schema_it_was_constrained_to() -> None:
    """A retry's reply that the first schema would take but the stricter one does not (a
    justification over its 80 characters) is not accepted: the judge is recorded as missing."""
    loose = judged([reason("r", 5, 5)], justification="j" * 81)
    backend = Judge(["prose", loose])
    result = await crit(agent(backend), "doc", author="A")
    assert result.score is None and result.notes[1].startswith("attempt 2: JSON does not match the expected shape")
