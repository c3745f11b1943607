"""The decision conference (Heller et al., Algorithm 1): the speaker selection, a real conference
between the bundled models with its journal checked, stages that advance only on an exact
AGREEMENT, the round cap, the person's commands and ``symposium run agreement``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backends.base import SamplingOptions
from backends.llamacpp import LlamaCppBackend
from protocols import agreement as conference
from protocols.agreement import EVALUATOR, FACTORS, JUDGE, MODERATOR, parse_evaluation, select_speaker
from protocols.core.agents import Agent
from protocols.core.events import AdvanceStage, DebateFinished, Interject, JudgementMade, SkipToConclusion, TurnFinished
from protocols.core.moderation import CommandChannel
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.scripted_backends import ScriptedBackend
from tui.cli import main

OPTS = SamplingOptions(max_tokens=40, temperature=0.7, seed=5)
ISSUE = "Should our town build a new library or repair the old one?"
P = ["participant-1", "participant-2"]
SCORES = json.dumps({key: 7 for key, _ in FACTORS} | {"comment": "fine"})


@pytest.mark.parametrize(("n", "last", "verdict", "participants", "expected"), [
    (1, None, None, P, MODERATOR),                       # length(messages) ≤ 1
    (2, MODERATOR, None, P, "participant-1"),
    (3, "participant-1", None, P, "participant-2"),
    (4, "participant-2", None, P, JUDGE),
    (5, JUDGE, "AGREEMENT", P, EVALUATOR),
    (5, JUDGE, "MORE DEBATE", P, MODERATOR),
    (5, JUDGE, None, P, MODERATOR),
    (6, EVALUATOR, None, P, MODERATOR),
    (4, "participant-2", None, [*P, "participant-3"], "participant-3"),  # extended to N participants
    (5, "participant-3", None, [*P, "participant-3"], JUDGE),
])
def test_algorithm_1(n: int, last: str | None, verdict: Any, participants: list[str], expected: str) -> None:
    assert select_speaker(n, last, verdict, participants) == expected


def test_evaluation_replies_are_read_robustly() -> None:
    scores, comment, notes = parse_evaluation(SCORES)
    assert scores == {key: 7 for key, _ in FACTORS} and comment == "fine" and notes == []
    cut = SCORES[: SCORES.index('"comment"') + 15]  # cut off inside the comment
    scores, comment, notes = parse_evaluation(cut)
    assert scores is not None and list(scores) == [key for key, _ in FACTORS] and "cut off" in notes[0]
    assert parse_evaluation(SCORES.replace(": 7", ": 11", 1))[0] is None  # out of range
    tens = json.dumps({"comment": "fine", **{key: 10 for key, _ in FACTORS}})
    assert parse_evaluation(tens[:-2])[0] is None  # cut inside the last "10": not a 1, no scores
    assert parse_evaluation("The debate was good.")[0] is None


def _check_algorithm_1(speakers: list[str], stages: list[dict[str, Any]], verdicts: list[str], max_rounds: int) -> None:
    """Replay the realized order through Algorithm 1 plus the round cap."""
    verdict_iter = iter(verdicts)
    last_verdict = None
    rounds_in_stage = 0
    for n, (last, nxt) in enumerate(zip([None, *speakers], speakers), start=1):
        if last == JUDGE:
            last_verdict = next(verdict_iter)
        expected = select_speaker(n, last, last_verdict if last == JUDGE else None, P)
        if last == MODERATOR:
            rounds_in_stage += 1
        if last == JUDGE and last_verdict != "AGREEMENT" and rounds_in_stage >= max_rounds:
            expected = EVALUATOR  # the round cap closes the stage unresolved
        if last == EVALUATOR:
            rounds_in_stage = 0
        assert nxt == expected, (n, last, nxt, speakers)
    assert speakers[0] == MODERATOR and speakers[-1] == MODERATOR


async def test_a_conference_between_the_bundled_models_runs_to_its_end(
    smollm: LlamaCppBackend, gemma: LlamaCppBackend, tmp_path: Path
) -> None:
    config = conference.ConferenceConfig(issue=ISSUE, topics=["the criteria for deciding"], max_rounds=2,
                                         turn_tokens=24, word_cap=20, eval_tokens=90)
    agents = conference.ConferenceAgents([Agent("participant-1", smollm, OPTS), Agent("participant-2", gemma, OPTS)],
                                         Agent("judge", smollm, OPTS), Agent("evaluator", smollm, OPTS))
    with Journal(tmp_path / "j.db") as journal:
        final = await drive(conference.run(config, agents, debate_id="dc1"), journal)
        debate = Queries(journal).debate("dc1")
    assert final is not None and final.status == "finished" and final.stop_reason == "every stage closed"
    assert debate is not None and debate["protocol"] == "agreement"
    (stage,) = final.outcome["stages"]
    verdicts = [j for j in debate["judgements"] if j["kind"] == "agreement"]
    assert [j["verdict"] for j in verdicts] == stage["verdicts"] and 1 <= stage["rounds"] <= 2
    assert [j["round"] for j in verdicts] == list(range(stage["rounds"]))  # one verdict per round
    # the stage closes on the first AGREEMENT, or unresolved at the cap after MORE DEBATE only
    assert stage["verdicts"][:-1] == ["MORE DEBATE"] * (stage["rounds"] - 1)
    assert stage["closed_by"] == ("agreement" if stage["verdicts"][-1] == "AGREEMENT" else "round cap")
    _check_algorithm_1(final.outcome["speakers"], final.outcome["stages"], stage["verdicts"], 2)
    turns = debate["turns"]
    assert [t["role"] for t in turns] == [s for s in final.outcome["speakers"] if s not in (JUDGE, EVALUATOR)]
    for t in turns:
        if t["role"] == MODERATOR:
            assert t["model_id"] == "rules" and t["finish_reason"] == "human" and t["text"]
        else:
            assert t["kind"] == "argument" and t["completion_tokens"] <= 24
    (evaluation,) = [j for j in debate["judgements"] if j["kind"] == "evaluation"]
    factors = evaluation["reasons"]["factors"]
    assert factors is None and evaluation["reasons"]["notes"] or list(factors) == [k for k, _ in FACTORS]
    if factors:
        assert all(1 <= v <= 10 for v in factors.values()) and evaluation["score"] == pytest.approx(sum(factors.values()) / 10, abs=1e-3)
    assert {p["role"] for p in debate["participants"]} == {*P, JUDGE, EVALUATOR, MODERATOR}
    calls = [c for c in debate["model_calls"] if c["role"] == "participant-1"]
    assert all(c["prompt_tokens_evaluated"] < c["prompt_tokens"] for c in calls[1:])  # the KV cache is reused


def _scripted_agents(judge_replies: list[str], evaluator_replies: list[str]) -> tuple[conference.ConferenceAgents, ScriptedBackend]:
    a = ScriptedBackend("scripted-a", [f"A says {i}" for i in range(20)])
    b = ScriptedBackend("scripted-b", [f"B says {i}" for i in range(20)])
    judge = ScriptedBackend("scripted-judge", judge_replies)
    evaluator = ScriptedBackend("scripted-eval", evaluator_replies)
    agents = conference.ConferenceAgents([Agent("participant-1", a, OPTS), Agent("participant-2", b, OPTS)],
                                         Agent("judge", judge, OPTS), Agent("evaluator", evaluator, OPTS))
    return agents, a


async def test_a_stage_advances_only_on_an_exact_agreement() -> None:
    """Scripted judge and evaluator: the test needs exact replies ("NO AGREEMENT", a cut-off
    evaluation) that a real model under a schema does not write on demand."""
    agents, _ = _scripted_agents(["MORE DEBATE", "NO AGREEMENT", "AGREEMENT", "**Agreement.**"],
                                 [SCORES, "not JSON at all", json.dumps({key: 4 for key, _ in FACTORS})])
    config = conference.ConferenceConfig(issue=ISSUE, topics=["criteria", "decision"], max_rounds=5)
    events = [e async for e in conference.run(config, agents, debate_id="dc2")]
    final = events[-1]
    assert isinstance(final, DebateFinished) and final.status == "finished"
    s1, s2 = final.outcome["stages"]
    assert s1["verdicts"] == ["MORE DEBATE", "MORE DEBATE", "AGREEMENT"] and s1["rounds"] == 3 and s1["closed_by"] == "agreement"
    assert s2["verdicts"] == ["AGREEMENT"] and s2["closed_by"] == "agreement" and final.outcome["agreed_stages"] == 2
    judged = [e for e in events if isinstance(e, JudgementMade) and e.kind == "agreement"]
    assert judged[1].raw == "NO AGREEMENT" and not judged[1].reasons["exact"] and judged[1].reasons["notes"]
    evals = [e for e in events if isinstance(e, JudgementMade) and e.kind == "evaluation"]
    assert [e.target for e in evals] == ["stage-1", "stage-2"] and evals[0].score == 7
    assert evals[1].score == 4 and "attempt 1" in evals[1].reasons["notes"][0]  # retried once with the strict schema
    moderator = [e.kind for e in events if isinstance(e, TurnFinished) and e.role == MODERATOR]
    assert moderator == ["opening", "continue", "continue", "next-stage", "conclusion"]
    _check_algorithm_1(final.outcome["speakers"], final.outcome["stages"], s1["verdicts"] + s2["verdicts"], 5)


async def test_the_round_cap_closes_a_stage_unresolved_and_it_is_still_evaluated() -> None:
    """Scripted judge: it must say MORE DEBATE every round, which no real model promises."""
    agents, _ = _scripted_agents(["MORE DEBATE"] * 4, [SCORES, SCORES])
    config = conference.ConferenceConfig(issue=ISSUE, topics=["criteria", "decision"], max_rounds=2)
    events = [e async for e in conference.run(config, agents, debate_id="dc3")]
    final = events[-1]
    assert isinstance(final, DebateFinished) and final.status == "finished"
    assert [(s["rounds"], s["closed_by"], s["agreed"]) for s in final.outcome["stages"]] == [(2, "round cap", False)] * 2
    assert [s["evaluation"]["mean"] for s in final.outcome["stages"]] == [7, 7]
    texts = [e.text for e in events if isinstance(e, TurnFinished) and e.role == MODERATOR]
    assert "(last round of this stage)" in texts[1] and "round cap (2) is reached without agreement" in texts[2]


async def test_the_person_advances_interjects_and_skips_to_the_conclusion() -> None:
    """Scripted backends: the test is about the command channel, not what models say."""
    agents, a = _scripted_agents(["MORE DEBATE"] * 9, [SCORES] * 3)
    channel = CommandChannel()
    config = conference.ConferenceConfig(issue=ISSUE, max_rounds=5)  # the paper's three stages
    seen = []
    async for event in conference.run(config, agents, debate_id="dc4", channel=channel):
        seen.append(event)
        if isinstance(event, TurnFinished) and event.role == "participant-1" and event.phase == "issue discussion":
            channel.send(AdvanceStage("enough on the issue"))
            channel.send(Interject("Please be concrete.", to="participant-1"))
        if isinstance(event, TurnFinished) and event.role == "participant-2" and event.phase == "model building":
            channel.send(SkipToConclusion())
    final = seen[-1]
    assert isinstance(final, DebateFinished) and final.status == "finished"
    assert final.stop_reason == "the moderator skipped to the conclusion"
    s1, s2, s3 = final.outcome["stages"]
    assert s1["closed_by"] == "moderator" and s1["verdicts"] == [] and s1["evaluation"] is not None
    assert s2["closed_by"] == "skipped" and s2["evaluation"] is None and s3["rounds"] == 0
    acted = [e.kind for e in seen if type(e).__name__ == "ModeratorActed"]
    assert acted == ["advance_stage", "interject", "skip_to_conclusion"]
    moderator = [e.text for e in seen if isinstance(e, TurnFinished) and e.role == MODERATOR]
    assert "enough on the issue" in moderator[1] and "skipped to the conclusion" in moderator[-1]
    assert "The facilitator adds: Please be concrete." in a.prompts[1][-1].content
    assert not any("Please be concrete" in m.content for p in agents.participants[1].backend.prompts for m in p)  # type: ignore[attr-defined]


@pytest.mark.model
def test_symposium_run_agreement_headless(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "j.db"
    assert main(["--db", str(db), "run", "agreement", "--issue", ISSUE, "--topic", "the criteria for deciding",
                 "--participant", "smollm2-135m", "--participant", "smollm2-135m", "--judge", "smollm2-135m",
                 "--max-rounds", "1", "--turn-tokens", "16", "--word-cap", "15", "--no-evaluation", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "moderator (rules) · opening" in out and "participant-2 (smollm2-135m) · argument" in out
    assert "judge (smollm2-135m) agreement" in out and "evaluator (" not in out
    assert "Finished: every stage closed." in out and "journalled as" in out
    assert "Stages" in out and "1. the criteria for deciding" in out
    debate_id = out.rsplit("journalled as", 1)[1].split()[0]
    with Journal(db) as journal:
        debate = Queries(journal).debate(debate_id)
    assert debate is not None and debate["status"] == "finished" and debate["config"]["max_rounds"] == 1
    assert [j["kind"] for j in debate["judgements"]] == ["agreement"]
    assert debate["outcome"]["stages"][0]["closed_by"] in ("agreement", "round cap")


def test_an_evaluator_sharing_the_judges_role_is_refused() -> None:
    """One model may judge and evaluate, but under two roles: the journal keys participants by role."""
    agents, _ = _scripted_agents([], [])
    shared = conference.ConferenceAgents(agents.participants, agents.judge, agents.judge)
    with pytest.raises(ValueError, match="evaluator needs a role of its own"):
        conference.Conference(conference.ConferenceConfig(issue=ISSUE), shared, debate_id="dc-roles")
