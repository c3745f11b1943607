"""EVINCE against Chang, chapter 7: Update steers κ, the CRIT quality gate, no
invented positions, paragraph-long arguments, the rationale over all rounds, the label flag.

Scripted backends (tests/helpers/scripted_backends.py) here: each test needs agents that say *exactly*
a given thing (converge, diverge, fail to parse, cite an argument the judge rates low), which a
real model cannot be made to do on demand. The real-model run is tests/protocols/test_evince.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from backends.base import ChatStream, Message, SamplingOptions
from protocols import evince
from protocols.core.events import DebateFinished, JudgementMade, MetricsComputed, ModelCalled, TurnFinished
from protocols.measures.crit import CritReply, StrictCritReply
from protocols.measures.labels import LabelSet
from tests.helpers.evince_scripted import LABELS, agents, config, entropy_bits, judge_reply, reply, run_all, user_prompts
from tests.helpers.scripted_backends import ScriptedBackend


class SchemaRecorder(ScriptedBackend):
    """A scripted backend that also keeps the JSON schema each turn was constrained to."""

    def __init__(self, model_id: str, replies: Sequence[str]) -> None:
        super().__init__(model_id, replies)
        self.schemas: list[Any] = []

    def _new_session(self, name: str):  # type: ignore[no-untyped-def]
        session = super()._new_session(name)
        chat = session.chat

        def recording(messages: Sequence[Message], options: SamplingOptions | None = None, *, schema: Any = None) -> ChatStream:
            self.schemas.append(schema)
            return chat(messages, options, schema=schema)

        session.chat = recording  # type: ignore[method-assign]
        return session


# --- point 1: Update steers κ; the quality gate ---------------------------------------------------


async def test_the_default_schedule_is_update_and_the_metrics_steer_kappa() -> None:
    """Figure 7.1: κ ← Update(κ, ΔWD, ΔMI, ΔJSD, ΔCRIT). Same config, two debates: agents that
    converge get a lower κ in round 2 than agents that drift apart."""
    assert evince.EvinceConfig(case="x").schedule == "adaptive"
    b_fixed = reply({"Dengue": 0.6, "Chikungunya": 0.4})
    converging = [reply({"Malaria": 0.7, "Typhoid": 0.3}), reply({"Dengue": 0.5, "Chikungunya": 0.3, "Zika": 0.2}),
                  reply({"Dengue": 0.6, "Chikungunya": 0.4})]
    diverging = [reply({"Dengue": 0.5, "Chikungunya": 0.5}), reply({"Zika": 0.5, "Chikungunya": 0.5}),
                 reply({"Malaria": 0.7, "Typhoid": 0.3})]
    kappas = []
    for script in (converging, diverging):
        events = await run_all(config(eps_wd=0, eps_mi=0, eps_jsd=0, eps_crit=0),
                               agents(ScriptedBackend("a", script), ScriptedBackend("b", [b_fixed] * 3), ScriptedBackend("j", [])))
        kappas.append([e.kappa for e in events if isinstance(e, MetricsComputed)])
    (conv, div) = kappas
    assert conv[0] == div[0] == pytest.approx(0.9)
    assert conv[2] < div[2] - 0.05, kappas


async def test_the_quality_gate_drops_a_low_crit_argument_from_the_exchange_and_the_rationale() -> None:
    strong, weak = "joint pain and rash after a mosquito bite", "the moon was full that night"
    a = ScriptedBackend("a", [reply({"Dengue": 0.7, "Zika": 0.3}, [strong, weak])])
    b = ScriptedBackend("b", [reply({"Dengue": 0.6, "Chikungunya": 0.4}, ["arthralgia"])])
    judge = ScriptedBackend("j", [
        judge_reply(8, [{"reason": strong, "validity": 9, "credibility": 9, "argument": 1},
                        {"reason": weak, "validity": 2, "credibility": 2, "argument": 2}]),
        judge_reply(7, [{"reason": "arthralgia", "validity": 7, "credibility": 7, "argument": 1}]),
    ])
    events = await run_all(config(crit_judge=True, max_rounds=0, gate_threshold=0.5), agents(a, b, judge))
    b_saw = user_prompts(b)[0]
    assert strong in b_saw and weak not in b_saw  # only admitted arguments reach the opponent
    crit_a = next(e for e in events if isinstance(e, JudgementMade) and e.target == "agent-a")
    assert [d["argument"] for d in crit_a.reasons["gate"]["dropped"]] == [weak]  # journalled
    assert crit_a.reasons["gate"]["dropped"][0]["quality"] == pytest.approx(0.2)
    final = events[-1]
    assert isinstance(final, DebateFinished)
    assert final.outcome["rationale"]["agent-a"] == [strong]
    assert [d["argument"] for d in final.outcome["gate_dropped"]] == [weak]


async def test_agent_as_opening_with_no_counter_yet_scores_its_reasons_quality_not_ten() -> None:
    """In round 0 A has no counter-argument, and the judge often lists no
    rival; Γ is then the quality of A's reasons (√(γθ) averaged), not 10 (as under the old
    share-only Γ). B's opening is judged against A's: the two are not scored alike."""
    a = ScriptedBackend("a", [reply({"Dengue": 0.7, "Zika": 0.3}, ["fever"])])
    b = ScriptedBackend("b", [reply({"Dengue": 0.6, "Chikungunya": 0.4}, ["arthralgia"])])
    judge = ScriptedBackend("j", [judge_reply(9, [{"reason": "fever", "validity": 6, "credibility": 6, "argument": 1}]),
                                  judge_reply(7, [{"reason": "arthralgia", "validity": 6, "credibility": 6, "argument": 1}],
                                              [{"reason": "A's dengue", "validity": 6, "credibility": 6}])])
    events = await run_all(config(crit_judge=True, max_rounds=0, crit_depth=0), agents(a, b, judge))
    scores = {e.target: e.score for e in events if isinstance(e, JudgementMade)}
    assert "Counter-arguments" not in user_prompts(judge)[0] and "Counter-arguments" in user_prompts(judge)[1]
    assert scores == {"agent-a": 6.0, "agent-b": 3.5}  # 1 + (6 − 1)·36/(36+36) for B


# --- point 3: arguments are paragraphs ------------------------------------------------------------


async def test_default_turns_allow_paragraph_long_arguments_that_reach_the_opponent_whole() -> None:
    para1, para2 = ("Fever with retro-orbital pain and a maculopapular rash " * 8).strip(), ("Thrombocytopenia " * 25).strip()
    assert len(para1) > 400 and len(para2) > 400
    a = SchemaRecorder("a", [reply({"Dengue": 0.8, "Zika": 0.2}, [para1, para2])])
    b = SchemaRecorder("b", [reply({"Dengue": 0.7, "Zika": 0.3})])
    events = await run_all(config(max_rounds=0), agents(a, b, ScriptedBackend("j", [])))
    assert events[-1].outcome["rationale"]["agent-a"] == [para1, para2]  # type: ignore[attr-defined]  # no judge: all admitted
    schema = a.schemas[0]
    argument = schema["$defs"]["Prediction"]["properties"]["argument"]
    assert argument["maxLength"] >= 500 and schema["properties"]["arguments"]["items"]["maxLength"] >= 500
    assert para1 in user_prompts(b)[0] and para2 in user_prompts(b)[0]
    small = evince.EvinceConfig.small_model(case="x", labels=LABELS)
    assert small.turn_tokens <= 256 and small.argument_limit() < 200  # the bundled models' profile …
    assert small.argument_limit() >= 60  # … still writes a sentence per argument, not a clause
    assert evince.EvinceConfig.SMALL_MODEL_PROFILE["turn_tokens"] == small.turn_tokens


# --- point 6: the label-error flag ----------------------------------------------------------------


@pytest.mark.parametrize(("a_probs", "b_probs", "flagged"), [
    ({"Dengue": 0.4, "Zika": 0.35, "Malaria": 0.25}, {"Dengue": 0.4, "Zika": 0.3, "Malaria": 0.3}, False),  # unconfident miss
    ({"Dengue": 0.9, "Zika": 0.1}, {"Zika": 0.9, "Dengue": 0.1}, False),  # confident agents who disagree
    ({"Dengue": 0.9, "Zika": 0.1}, {"Dengue": 0.85, "Zika": 0.15}, True),  # confident, agreed, against the label
])
async def test_label_error_flag_fires_only_on_a_confident_agreed_consensus(a_probs: dict[str, float], b_probs: dict[str, float],
                                                                          flagged: bool) -> None:
    events = await run_all(config(max_rounds=0, reference_label="Malaria"),
                           agents(ScriptedBackend("a", [reply(a_probs)]), ScriptedBackend("b", [reply(b_probs)]), ScriptedBackend("j", [])))
    check = events[-1].outcome["label_check"]  # type: ignore[attr-defined]
    assert check["agrees"] is False
    assert (check["flag"] is not None) == flagged, check


# --- point 7: no invented positions ---------------------------------------------------------------


async def test_an_unparsed_reply_never_reaches_the_opponent_or_the_judge_as_a_prediction() -> None:
    """A's reply and its stricter retry both fail in round 1: B is told A gave none, the judge
    does not judge A, round 1 has no metrics, and a stale position never counts as converged."""
    same_a, same_b = reply({"Dengue": 0.6, "Chikungunya": 0.4}), reply({"Dengue": 0.6, "Chikungunya": 0.4})
    a = ScriptedBackend("a", [same_a, "I am not sure, maybe something viral.", "still not JSON", same_a])
    b = ScriptedBackend("b", [same_b] * 3)
    judge = ScriptedBackend("j", [judge_reply(7)] * 10)
    events = await run_all(config(crit_judge=True), agents(a, b, judge))
    turns = [e for e in events if isinstance(e, TurnFinished)]
    a1 = next(t for t in turns if t.role == "agent-a" and t.round == 1)
    assert a1.distribution is None and a1.parsed is None
    assert any("no prediction this turn" in n for n in a1.parse_notes)
    assert any(isinstance(e, ModelCalled) and e.call.purpose == "retry" and e.round == 1 for e in events)
    b_round1 = user_prompts(b)[1]
    assert "gave no usable prediction" in b_round1 and "predicts" not in b_round1
    judged = [(e.target, e.round) for e in events if isinstance(e, JudgementMade)]
    assert ("agent-a", 1) not in judged and ("agent-b", 1) in judged
    assert len(judge.prompts) == 5  # A0, B0, B1, A2, B2
    b1_judged = judge.prompts[2][-1].content
    assert "Document by Agent B" in b1_judged and "Counter-arguments" not in b1_judged  # A's old position is not its answer
    assert [e.round for e in events if isinstance(e, MetricsComputed)] == [0, 2]
    final = events[-1]
    assert isinstance(final, DebateFinished) and final.stop_reason.startswith("round cap reached")  # never "converged"


async def test_a_retry_under_a_stricter_schema_recovers_the_prediction() -> None:
    a = SchemaRecorder("a", ["prose, no JSON", reply({"Dengue": 0.7, "Zika": 0.3})])
    b = ScriptedBackend("b", [reply({"Dengue": 0.6, "Zika": 0.4})])
    events = await run_all(config(max_rounds=0), agents(a, b, ScriptedBackend("j", [])))
    a0 = next(e for e in events if isinstance(e, TurnFinished) and e.role == "agent-a")
    assert a0.distribution == pytest.approx({"Dengue": 0.7, "Zika": 0.3})
    assert any("retry under a stricter schema gave one" in n for n in a0.parse_notes)
    assert "predicts: Dengue 70%" in user_prompts(b)[0]
    first, retry = a.schemas
    assert retry["$defs"]["Prediction"]["properties"]["argument"]["maxLength"] <= first["$defs"]["Prediction"]["properties"]["argument"]["maxLength"]


# --- point 8: CRIT in EVINCE: the whole case, the rationale over all rounds -----------------------


async def test_the_judge_sees_the_whole_case_and_the_rationale_is_the_union_over_rounds() -> None:
    case = "A patient presents with " + ", ".join(f"symptom number {i}" for i in range(120)) + ", and FINAL-CLUE."
    assert len(case) > 2000
    a = ScriptedBackend("a", [reply({"Dengue": 0.6, "Zika": 0.4}, ["first-round reason"]),
                              reply({"Dengue": 0.7, "Zika": 0.3}, ["second-round reason"])])
    b = ScriptedBackend("b", [reply({"Dengue": 0.5, "Zika": 0.5}, ["b first"]), reply({"Dengue": 0.6, "Zika": 0.4}, ["b second"])])
    judge = ScriptedBackend("j", [judge_reply(7)] * 10)
    events = await run_all(config(case=case, crit_judge=True, max_rounds=1, eps_wd=0, eps_mi=0, eps_jsd=0, eps_crit=0),
                           agents(a, b, judge))
    assert all("FINAL-CLUE" in p[-1].content for p in judge.prompts)
    rationale = events[-1].outcome["rationale"]  # type: ignore[attr-defined]
    assert rationale["agent-a"] == ["first-round reason", "second-round reason"]
    assert rationale["agent-b"] == ["b first", "b second"]


# --- Heller et al.'s agreement judge beside the information metrics -----------------------------


async def test_the_agreement_judge_is_logged_beside_the_metrics_and_stops_the_debate() -> None:
    """Each round with metrics gets one verdict, stored as metric ``agreement``; AGREEMENT from
    round 1 on ends the debate (Heller et al.), though WD and MI have not converged."""
    # Positions that keep moving, so that WD, MI and JSD do not settle and end it first.
    a = ScriptedBackend("a", [reply({"Dengue": p, "Zika": 1 - p}) for p in (0.9, 0.5, 0.2)])
    b = ScriptedBackend("b", [reply({"Chikungunya": p, "Dengue": 1 - p}) for p in (0.9, 0.4, 0.8)])
    judge = ScriptedBackend("j", ["MORE DEBATE", "AGREEMENT", "AGREEMENT"])
    events = await run_all(config(agreement_judge=True), agents(a, b, judge))
    verdicts = [e for e in events if isinstance(e, JudgementMade) and e.kind == "agreement"]
    metrics = [e for e in events if isinstance(e, MetricsComputed)]
    assert [(v.round, v.verdict) for v in verdicts] == [(0, "MORE DEBATE"), (1, "AGREEMENT")]
    assert [(m.round, m.metrics["agreement"]) for m in metrics] == [(0, 0.0), (1, 1.0)]
    final = events[-1]
    assert isinstance(final, DebateFinished) and final.stop_reason.startswith("the agreement judge")


# --- Figure 7.1 step 3: P_f = (Γ_A·P_A + Γ_B·P_B)/(Γ_A + Γ_B), checked by hand ----------------------


async def test_the_final_distribution_is_weighted_by_each_agent_s_crit_score() -> None:
    """The judges rate A and B differently (8 and 2 in round 0, 6 and 4 in round 1; no reasons
    rated, so Γ is the judge's own score); P_f, the mixture's entropy and the information
    gain are compared with values worked out by hand. Equal weights would give other numbers
    at every step (P_f(Malaria) 0.35 instead of 0.56 in round 0)."""
    a = ScriptedBackend("a", [reply({"Malaria": 0.7, "Dengue": 0.3}), reply({"Malaria": 0.5, "Dengue": 0.5})])
    b = ScriptedBackend("b", [reply({"Dengue": 0.6, "Typhoid": 0.4}), reply({"Dengue": 0.8, "Malaria": 0.2})])
    judge = ScriptedBackend("j", [judge_reply(8), judge_reply(2), judge_reply(6), judge_reply(4)])  # A0, B0, A1, B1
    events = await run_all(config(crit_judge=True, max_rounds=1, eps_wd=0, eps_mi=0, eps_jsd=0, eps_crit=0),
                           agents(a, b, judge))  # the opening round and one refutation round
    assert not (a.replies or b.replies or judge.replies) and len(judge.prompts) == 4  # the script, exactly
    scores = [(e.target, e.round, e.score) for e in events if isinstance(e, JudgementMade)]
    assert scores == [("agent-a", 0, 8.0), ("agent-b", 0, 2.0), ("agent-a", 1, 6.0), ("agent-b", 1, 4.0)]
    # Round 0: (8·{M .7, D .3} + 2·{D .6, T .4}) / 10 = {M .56, D .36, T .08}
    # Round 1: (6·{M .5, D .5} + 4·{D .8, M .2}) / 10
    p1 = {"Dengue": 0.62, "Malaria": 0.38}
    m0, m1 = (e.metrics for e in events if isinstance(e, MetricsComputed))
    assert m0["entropy_mixture"] == pytest.approx(entropy_bits(0.56, 0.36, 0.08), abs=1e-9)
    assert m1["entropy_mixture"] == pytest.approx(entropy_bits(0.62, 0.38), abs=1e-9)
    assert m1["info_gain"] == pytest.approx(entropy_bits(0.56, 0.36, 0.08) - entropy_bits(0.62, 0.38), abs=1e-9)
    assert (m0["crit_a"], m0["crit_b"], m0["crit"]) == pytest.approx((0.8, 0.2, 0.5))
    final = events[-1]
    assert isinstance(final, DebateFinished)
    assert final.outcome["weights"] == {"agent-a": 6.0, "agent-b": 4.0}
    assert final.outcome["final_distribution"] == pytest.approx(p1, abs=1e-9)
    assert list(final.outcome["final_distribution"]) == ["Dengue", "Malaria"] and final.outcome["top"] == "Dengue"
    # Tables 7.2/7.3's last row over two rounds: WD ½(.7 + .3 + .4) = 0.7 → ½(.3 + .3) = 0.3; CRIT 0.5 both times
    assert final.outcome["improvement"]["wd"] == -57.1 and final.outcome["improvement"]["crit"] == 0.0


# --- CRIT's retry inside EVINCE: a judge reply that does not parse ---------------------------------


async def test_an_unparsed_judge_reply_is_retried_once_under_the_stricter_schema_then_recorded_missing() -> None:
    """Round 0: the judge's reply on A does not parse, nor does its retry: A's score is missing
    (None, with the reasons), and the debate goes on. The judge's reply on B does not parse
    either, but its retry does: B's score is the retry's. Each retry is one call, at
    temperature 0, under :class:`StrictCritReply`'s schema and the prompt's stricter wording."""
    a = ScriptedBackend("a", [reply({"Dengue": 0.7, "Zika": 0.3})])
    b = ScriptedBackend("b", [reply({"Dengue": 0.6, "Chikungunya": 0.4})])
    judge = SchemaRecorder("j", ["The argument seems fine to me.", '{"claim": "x", "score": 7',  # A: both fail
                                 "Score: 9/10", judge_reply(3)])                               # B: the retry parses
    events = await run_all(config(crit_judge=True, max_rounds=0), agents(a, b, judge))  # the opening round only
    assert len(judge.prompts) == 4  # exactly one retry per judgement, no third call
    assert judge.schemas == [CritReply, StrictCritReply] * 2
    assert [o.temperature for o in judge.options[1::2]] == [0.0, 0.0]
    assert all("Reply with the JSON object only" in p[-1].content for p in judge.prompts[1::2])
    assert not any("Reply with the JSON object only" in p[-1].content for p in judge.prompts[0::2])
    crit_a, crit_b = (e for e in events if isinstance(e, JudgementMade))
    assert crit_a.target == "agent-a" and crit_a.score is None
    assert crit_a.reasons["notes"][-1] == "recorded as missing after a stricter retry"
    assert crit_a.reasons["notes"][0].startswith("attempt 1:") and crit_a.reasons["notes"][1].startswith("attempt 2:")
    assert crit_b.target == "agent-b" and crit_b.score == 3.0
    assert crit_b.reasons["notes"][0].startswith("attempt 1:")
    # The failed attempts are journalled as model calls (purpose crit) beside the judgement's own.
    extra_calls = [e.call.purpose for e in events if isinstance(e, ModelCalled)]
    assert extra_calls == ["crit", "crit"]  # A's first attempt, B's first attempt
    assert crit_a.call is not None and crit_b.call is not None
    final = events[-1]
    assert isinstance(final, DebateFinished) and final.status == "finished"
    assert final.outcome["crit"] == {"agent-a": None, "agent-b": 3.0}
    assert final.outcome["weights"] == {"agent-a": 3.0, "agent-b": 3.0}  # a missing score takes the known mean


def test_the_label_order_an_agent_reads_depends_on_the_debate_not_the_case() -> None:
    """The shuffled class list is in every request, a redacted copy's too: seeded by the case, it
    would let a reader test guesses of the masked case (hash a guess, compare the order). Seeded
    by the debate's id, a resumed debate keeps it and the case changes nothing."""
    labels = LabelSet(tuple(f"Disease {i}" for i in range(20)), closed=True)
    team = agents(ScriptedBackend("a", []), ScriptedBackend("b", []), ScriptedBackend("j", []))

    def order(case: str, debate_id: str, role: str = "agent-a") -> list[str]:
        return evince.Evince(config(case=case, labels=labels), team, debate_id=debate_id)._label_order(role)

    assert order("Maria Lopez, 54, fever", "d1") == order("John Smith, 71, rash", "d1")  # the case changes nothing
    assert order("fever", "d1") != order("fever", "d2")  # each debate its own order
    assert order("fever", "d1") != order("fever", "d1", "agent-b")  # and each agent
    assert sorted(order("fever", "d1")) == sorted(labels.labels)
