"""EVINCE (Chang, Figure 7.1) end to end, with the real bundled models and a real journal."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from backends.base import SamplingOptions
from backends.llamacpp import LlamaCppBackend
from protocols import evince
from protocols.core.agents import Agent
from protocols.core.events import (
    DebateFinished,
    Interject,
    JudgementMade,
    MetricsComputed,
    ModelCalled,
    ModeratorActed,
    Pause,
    Resume,
    SetContentiousness,
    Stop,
    TurnFinished,
)
from protocols.core.moderation import CommandChannel
from protocols.measures.labels import LabelSet
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.evince_rounds import rounds_both_predicted, says_no_prediction
from tests.helpers.paths import dev_csv
from tests.helpers.scripted_backends import ScriptedBackend

OPTS = SamplingOptions(max_tokens=96, temperature=0.7, seed=11)


def dev_cases() -> list[dict[str, str]]:
    with dev_csv().open() as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def labels() -> LabelSet:
    return LabelSet(list(dict.fromkeys(r["disease"].strip() for r in dev_cases())))


def case_text(row: dict[str, str]) -> str:
    return "Symptoms: " + ", ".join(s.replace("_", " ") for s in row["symptoms"].split(";"))


def small_config(labels: LabelSet, row: dict[str, str], **kw) -> evince.EvinceConfig:
    """The bundled models run under EVINCE's small-model profile (short turns, short judge replies)."""
    return evince.EvinceConfig.small_model(case=case_text(row), labels=labels, reference_label=row["disease"],
                                           max_rounds=kw.pop("max_rounds", 1), **kw)


async def test_debate_between_the_bundled_models_journals_every_round(
    smollm: LlamaCppBackend, gemma: LlamaCppBackend, labels: LabelSet, tmp_path: Path
) -> None:
    row = next(r for r in dev_cases() if r["disease"].strip() == "Jaundice")
    config = small_config(labels, row, max_rounds=1)  # the opening and one refutation round
    agents = evince.EvinceAgents(Agent("agent-a", smollm, OPTS), Agent("agent-b", gemma, OPTS), Agent("judge", smollm, OPTS))
    with Journal(tmp_path / "j.db") as journal:
        final = await drive(evince.run(config, agents, debate_id="ev1"), journal)
        debate = Queries(journal).debate("ev1")
    assert final is not None and final.status == "finished" and final.stop_reason
    assert debate is not None
    rounds = final.outcome["rounds"]
    assert 1 <= rounds <= 2
    debate_turns = [t for t in debate["turns"] if t["kind"] in ("opening", "refutation")]
    assert len(debate_turns) == 2 * rounds
    predicted = [t for t in debate_turns if t["distribution"]]
    assert predicted
    for t in predicted:  # every stated distribution, for both agents
        assert sum(t["distribution"].values()) == pytest.approx(1.0)
        assert set(t["distribution"]) <= set(labels.labels)
    for t in debate_turns:  # a turn without one says why (never an invented distribution)
        assert t["distribution"] or says_no_prediction(t["parse_notes"])
    scored = rounds_both_predicted((t["round"], t["role"], bool(t["distribution"])) for t in debate_turns)
    assert [m["round"] for m in debate["metrics"]] == scored
    for m in debate["metrics"]:
        for name in ("wd", "mi", "jsd", "nmi", "entropy_a", "entropy_b"):
            assert m[name] is not None
        assert 0 <= m["jsd"] <= 1 and 0 <= m["wd"] <= 1
    assert all(t["kappa"] == pytest.approx(0.9) for t in debate_turns if t["round"] == 0 and t["role"] == "agent-b")
    crits = [j for j in debate["judgements"] if j["kind"] == "crit"]
    assert len(crits) == len(predicted)  # CRIT on every turn that predicted, as it is made
    assert all("claim" in j["reasons"] and "gate" in j["reasons"] for j in crits)
    outcome = debate["outcome"]
    assert sum(outcome["final_distribution"].values()) == pytest.approx(1.0)
    assert outcome["top"] == next(iter(outcome["final_distribution"]))
    assert outcome["label_check"]["reference"] == "Jaundice"
    assert outcome["label_check"]["agrees"] == (outcome["top"] == "Jaundice")
    assert "questions" in outcome["recommendations"]
    assert any(t["kind"] == "recommendations" for t in debate["turns"])
    calls = debate["model_calls"]
    assert {c["purpose"] for c in calls} >= {"turn", "crit"}
    later = [c for c in calls if c["role"] == "agent-a" and c["purpose"] == "turn"][1:]
    assert all(c["prompt_tokens_evaluated"] < c["prompt_tokens"] for c in later)  # KV cache reused


async def test_scored_mode_reads_the_distribution_from_log_likelihoods(
    smollm: LlamaCppBackend, labels: LabelSet, tmp_path: Path
) -> None:
    row = dev_cases()[10]
    config = small_config(labels, row, max_rounds=0, scoring="scored", recommendations=False, turn_tokens=60)
    agents = evince.EvinceAgents(Agent("agent-a", smollm, OPTS), Agent("agent-b", smollm, OPTS), Agent("judge", smollm, OPTS))
    events = [e async for e in evince.run(config, agents, debate_id="ev2")]
    turns = [e for e in events if isinstance(e, TurnFinished)]
    assert len(turns) == 2
    for t in turns:
        assert t.distribution and len(t.distribution) == 3
        assert any("log-likelihood" in n for n in t.parse_notes)
    final = events[-1]
    assert isinstance(final, DebateFinished) and final.outcome["scoring"] == "scored"


async def test_moderator_commands_take_effect_and_are_recorded(smollm: LlamaCppBackend, labels: LabelSet) -> None:
    channel = CommandChannel()
    row = dev_cases()[20]
    config = small_config(labels, row, max_rounds=3, recommendations=False, turn_tokens=60, crit_tokens=80,
                          eps_wd=0, eps_mi=0, eps_jsd=0, eps_crit=0)  # only the moderator ends it
    agents = evince.EvinceAgents(Agent("agent-a", smollm, OPTS), Agent("agent-b", smollm, OPTS), Agent("judge", smollm, OPTS))
    run = evince.Evince(config, agents, debate_id="ev3", channel=channel)
    seen: list[object] = []
    async for event in run.run():
        seen.append(event)
        # After B's turn of a round, whether or not the round had metrics (a 60-token turn from
        # a 135M model may hold no whole prediction).
        if isinstance(event, TurnFinished) and event.role == "agent-b" and event.round == 0:
            channel.send(Pause())
            channel.send(Interject("Consider a viral cause.", to="agent-a"))
            channel.send(SetContentiousness(0.35))
            channel.send(Resume())
        if isinstance(event, TurnFinished) and event.role == "agent-b" and event.round == 1:
            channel.send(Stop("enough"))
    acted = [e.kind for e in seen if isinstance(e, ModeratorActed)]
    assert acted == ["pause", "interject", "set_contentiousness", "resume", "stop"]
    round1 = [e for e in seen if isinstance(e, TurnFinished) and e.round == 1]
    assert [t.kappa for t in round1] == [0.35, 0.35]
    assert any("The moderator says: Consider a viral cause." in m.content for m in run.messages["agent-a"])
    assert not any("Consider a viral cause." in m.content for m in run.messages["agent-b"])
    final = seen[-1]
    assert isinstance(final, DebateFinished) and final.status == "stopped" and final.stop_reason == "enough"
    assert not any(isinstance(e, TurnFinished) and e.round == 2 for e in seen)


async def test_truncated_replies_are_rejected_with_a_reason_and_the_debate_goes_on(smollm: LlamaCppBackend, labels: LabelSet) -> None:
    """A real model cut off after 6 tokens cannot finish its JSON: the turn records why."""
    row = dev_cases()[30]
    config = small_config(labels, row, max_rounds=1, recommendations=False, turn_tokens=6, crit_tokens=8)
    agents = evince.EvinceAgents(Agent("agent-a", smollm, OPTS), Agent("agent-b", smollm, OPTS), Agent("judge", smollm, OPTS))
    events = [e async for e in evince.run(config, agents, debate_id="ev4")]
    turns = [e for e in events if isinstance(e, TurnFinished)]
    assert len(turns) >= 2
    for t in turns:  # cut off: no distribution is invented, and the note says so
        assert t.distribution is None and any("no prediction this turn" in n for n in t.parse_notes)
    retries = [e for e in events if isinstance(e, ModelCalled) and e.call.purpose == "retry"]
    assert len(retries) == len(turns)  # each asked once more under the stricter schema
    assert not any(isinstance(e, MetricsComputed) for e in events)  # no metrics from no predictions
    assert not any(isinstance(e, JudgementMade) for e in events)  # nothing to judge
    assert isinstance(events[-1], DebateFinished) and events[-1].status == "finished"
    assert events[-1].stop_reason.startswith("round cap reached: the opening and ") and "final_distribution" not in events[-1].outcome


MALFORMED = [
    "I think it is probably Malaria, but who knows.",                              # prose, no JSON
    '{"predictions": [{"label": "Malaria", "probability": 0.9, "argument": "fever"},'
    ' {"label": "Typhoid", "probability": 0.9, "argument": "x"}], "arguments": []}',  # sums to 1.8
    '{"predictions": [{"label": "Space flu", "probability": 0.7, "argument": "?"},'
    ' {"label": "Dengue", "probability": -0.3, "argument": "?"}], "arguments": []}',  # unknown + negative
    '{"predictions": [], "arguments": []}',                                          # empty
    '```json\n{"predictions": [{"label": "malaria", "probability": "60%", "argument": "a"},'
    ' {"label": "Typhoid", "probability": "40%", "argument": "b"},], "arguments": ["fever"]}\n```',  # fence, %, comma
]


async def test_malformed_agent_output_is_repaired_or_rejected_with_a_reason(labels: LabelSet) -> None:
    a = ScriptedBackend("scripted-a", MALFORMED[0::2])
    b = ScriptedBackend("scripted-b", MALFORMED[1::2])
    judge = ScriptedBackend("scripted-judge", ['{"claim": "x", "reasons": [], "rival_reasons": [], "score": 7, "justification": "ok"}'] * 10)
    # Negative thresholds: never "converged", so all three rounds run whatever the replies.
    # No retry: each scripted reply is one turn.
    config = evince.EvinceConfig(case="fever, chills", labels=labels, max_rounds=2, recommendations=False,
                                 eps_wd=0, eps_mi=0, eps_jsd=0, eps_crit=0, parse_retry=False)
    agents = evince.EvinceAgents(Agent("agent-a", a, OPTS), Agent("agent-b", b, OPTS), Agent("judge", judge, OPTS))
    events = [e async for e in evince.run(config, agents, debate_id="ev5")]
    turns = [e for e in events if isinstance(e, TurnFinished)]
    notes = [" | ".join(t.parse_notes) for t in turns]
    assert "no JSON" in notes[0] and "no prediction this turn" in notes[0]      # prose: rejected, nothing invented
    assert turns[0].distribution is None
    assert "renormalized" in notes[1]                                            # 1.8 → 1
    assert "Space flu" in notes[2] and "negative" in notes[2]                    # unknown label and negative dropped
    assert "no prediction this turn" in notes[3] and turns[3].distribution is None  # empty arrays
    assert turns[4].distribution == pytest.approx({"Malaria": 0.6, "Typhoid": 0.4})  # repaired
    for t in turns:
        if t.distribution is not None:
            assert sum(t.distribution.values()) == pytest.approx(1.0)
            assert set(t.distribution) <= set(labels.labels)
    assert json.loads(json.dumps(events[-1].outcome))  # the outcome is JSON-able
    assert isinstance(events[-1], DebateFinished) and events[-1].status == "finished"


async def test_agreement_judge_is_logged_beside_the_information_metrics(smollm: LlamaCppBackend, labels: LabelSet) -> None:
    row = dev_cases()[5]
    # The small profile's own turn length: at 50 tokens SmolLM2's replies were cut off before
    # a whole prediction often enough that no round had both (and so no metrics to log beside).
    # The exact pairing is tests/protocols/test_evince_paper.py's scripted test.
    config = small_config(labels, row, max_rounds=1, recommendations=False, agreement_judge=True)
    agents = evince.EvinceAgents(Agent("agent-a", smollm, OPTS), Agent("agent-b", smollm, OPTS), Agent("judge", smollm, OPTS))
    events = [e async for e in evince.run(config, agents, debate_id="ev6")]
    verdicts = [e for e in events if isinstance(e, JudgementMade) and e.kind == "agreement"]
    metrics = [e for e in events if isinstance(e, MetricsComputed)]
    turns = [e for e in events if isinstance(e, TurnFinished) and e.kind in ("opening", "refutation")]
    scored = rounds_both_predicted((t.round, t.role, bool(t.distribution)) for t in turns)
    assert [v.round for v in verdicts] == [m.round for m in metrics] == scored  # one verdict per round with metrics
    for v, m in zip(verdicts, metrics):
        assert v.verdict in ("AGREEMENT", "MORE DEBATE") and v.round == m.round
        assert m.metrics["agreement"] == (1.0 if v.verdict == "AGREEMENT" else 0.0)
        assert {"wd", "mi", "jsd"} <= set(m.metrics)
    final = events[-1]
    assert isinstance(final, DebateFinished)
    if final.stop_reason.startswith("the agreement judge"):
        assert verdicts[-1].verdict == "AGREEMENT" and verdicts[-1].round > 0
