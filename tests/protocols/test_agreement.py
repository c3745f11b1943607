"""The agreement judge (Heller et al., section 3.2.1): the exact-parse rule, both ways of asking with
the real bundled models, and the hook EVINCE and SocraSynth use as an extra stopping signal."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backends.base import SamplingOptions
from backends.llamacpp import LlamaCppBackend
from protocols.core.agents import Agent
from protocols.core.events import DebateFinished, DebateStarted, Event, MetricsComputed
from protocols.measures.agreement_judge import AGREEMENT, LABELS, MORE_DEBATE, AgreementJudge, parse_verdict
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.scripted_backends import ScriptedBackend

OPTS = SamplingOptions(max_tokens=40, temperature=0.7, seed=11)
ROUND = [("Participant 1", "We should repair the old library: it is cheaper and loved."),
         ("Participant 2", "I agree, repairing is cheaper, and we keep the building people love.")]
TOPIC = "Build a new library or repair the old one?"


@pytest.mark.parametrize(("raw", "verdict", "exact"), [
    ("AGREEMENT", AGREEMENT, True),
    ("MORE DEBATE", MORE_DEBATE, True),
    ("  more   debate \n", MORE_DEBATE, True),
    ("**Agreement.**", AGREEMENT, True),
    ("MORE_DEBATE", MORE_DEBATE, True),
    ('{"verdict": "AGREEMENT"}', AGREEMENT, True),      # what the schema-constrained judge writes
    ('{ "verdict" :"MORE DEBATE"}', MORE_DEBATE, True),
    ('"AGREEMENT"', AGREEMENT, True),
    ("NO AGREEMENT", MORE_DEBATE, False),                # Algorithm 1's substring test would say AGREEMENT
    ("AGREEMENT? Not yet: MORE DEBATE", MORE_DEBATE, False),
    ("They have reached agreement.", MORE_DEBATE, False),
    ("AGREEMENTS", MORE_DEBATE, False),
    ('{"verdict": "agreed"}', MORE_DEBATE, False),
    ('{"verdict": 1}', MORE_DEBATE, False),
    ('{"verdict": "AGREEMENT"', MORE_DEBATE, False),     # cut off: not wholly JSON
    ("AGREEMENT\x1b[2J", MORE_DEBATE, False),
    ("", MORE_DEBATE, False),
])
def test_the_exact_rule(raw: str, verdict: str, exact: bool) -> None:
    parsed = parse_verdict(raw)
    assert (parsed.verdict, parsed.exact) == (verdict, exact)
    assert (parsed.note is None) == exact
    if not exact:
        assert "not exactly AGREEMENT or MORE DEBATE" in parsed.note and "read as MORE DEBATE" in parsed.note


@given(st.text())
def test_any_reply_gives_a_label_and_a_reason_when_it_is_not_one(raw: str) -> None:
    parsed = parse_verdict(raw)
    assert parsed.verdict in LABELS
    if parsed.exact:
        assert parsed.note is None
    else:
        assert parsed.verdict == MORE_DEBATE and parsed.note


@given(st.sampled_from(LABELS), st.sampled_from([str.upper, str.lower, str.title]), st.text(" \t\n", max_size=3))
def test_a_label_in_any_case_and_spacing_is_read_exactly(label: str, case, pad: str) -> None:
    parsed = parse_verdict(pad + case(label).replace(" ", "  ") + pad)
    assert parsed.verdict == label and parsed.exact


async def test_the_judge_writes_one_of_the_two_labels(smollm: LlamaCppBackend) -> None:
    judge = AgreementJudge(Agent("judge", smollm, OPTS))
    verdict = await judge.assess(ROUND, TOPIC)
    assert verdict.verdict in LABELS and verdict.exact, verdict  # the schema's enum holds the model to the set
    assert verdict.raw and verdict.mode == "generate" and judge.last is verdict
    call = verdict.calls[0]
    assert call.purpose == "agreement" and call.options["temperature"] == 0.0 and call.completion_tokens <= 24
    assert verdict.metrics() == {"agreement": 1.0 if verdict.agreed else 0.0}


async def test_score_mode_reads_the_closed_set_by_log_likelihood(smollm: LlamaCppBackend) -> None:
    verdict = await AgreementJudge(Agent("judge", smollm, OPTS), mode="score").assess(ROUND, TOPIC)
    assert verdict.p_agreement is not None and 0.0 <= verdict.p_agreement <= 1.0
    assert verdict.agreed == (verdict.p_agreement > 0.5)
    assert verdict.exact and verdict.calls[0].purpose == "score" and verdict.calls[0].completion_tokens == 0
    assert set(verdict.metrics()) == {"agreement", "p_agreement"}


async def test_replies_outside_the_label_set_read_as_more_debate_with_the_raw_kept() -> None:
    """Scripted judge: a real model under the schema cannot be made to write "NO AGREEMENT" or
    prose; a server without structured output can, and the rule must hold there."""
    backend = ScriptedBackend("scripted-judge", ["NO AGREEMENT", "Yes, they clearly agree.", "AGREEMENT"])
    judge = AgreementJudge(Agent("judge", backend, OPTS))
    verdicts = [await judge.assess(ROUND, TOPIC) for _ in range(3)]
    assert [v.verdict for v in verdicts] == [MORE_DEBATE, MORE_DEBATE, AGREEMENT]
    assert [v.raw for v in verdicts] == ["NO AGREEMENT", "Yes, they clearly agree.", "AGREEMENT"]
    assert "read as MORE DEBATE" in verdicts[0].notes[0] and verdicts[2].notes == []
    prompt = backend.prompts[0][-1].content
    assert "Participant 2: I agree" in prompt and "AGREEMENT or MORE DEBATE" in prompt and TOPIC in prompt


async def test_the_stopping_signal_is_journalled_as_a_judgement_and_a_metric(smollm: LlamaCppBackend, tmp_path: Path) -> None:
    """How EVINCE and SocraSynth use the judge: its JudgementMade, then ``last.metrics()`` beside
    WD/MI/JSD in the round's MetricsComputed."""
    judge = AgreementJudge(Agent("judge", smollm, OPTS))

    async def rounds() -> AsyncIterator[Event]:
        yield DebateStarted("sig", "evince", "t", TOPIC, {}, (judge.agent.participant(),))
        for r in range(2):
            async for event in judge.events("sig", r, ROUND, TOPIC):
                yield event
            assert judge.last is not None
            yield MetricsComputed("sig", r, {"wd": 0.1, **judge.last.metrics()})
        yield DebateFinished("sig", "finished", "done", {})

    with Journal(tmp_path / "j.db") as journal:
        await drive(rounds(), journal)
        debate = Queries(journal).debate("sig")
    assert debate is not None
    verdicts = [j for j in debate["judgements"] if j["kind"] == "agreement"]
    assert [j["round"] for j in verdicts] == [0, 1]
    assert all(j["verdict"] in LABELS and j["raw"] and j["reasons"]["mode"] == "generate" for j in verdicts)
    assert [m["agreement"] for m in debate["metrics"]] == [1.0 if j["verdict"] == AGREEMENT else 0.0 for j in verdicts]
    assert [c["purpose"] for c in debate["model_calls"]] == ["agreement", "agreement"]
