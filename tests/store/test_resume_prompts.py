"""A resumed EVINCE debate sends every model exactly the prompts an uninterrupted run sends.

`symposium resume` rebuilds each agent's conversation from the journal (its recorded requests
and raw replies). Checking for a phrase in a resumed prompt cannot tell the raw reply from the
text shown for it (both hold the arguments), so here the same scripted debate is run twice:
once straight through, then cut at each place a kill can leave the journal and resumed from the journal with fresh backends that continue the same
scripts. The cuts fall after every event the journal records between turns — the debate's
start, a phase change, a turn (before its judgement), a judgement, a round's metrics, each
closing recommendation — so resume must also judge a turn cut off before its CRIT and must not
ask an agent for recommendations it already gave. Every prompt each backend receives — the debaters', the judge's, the closing
recommendations' — must equal the uninterrupted run's, message for message, and render to the
same prompt text (hence the same tokens) under the ChatML turn format; the outcome must match.

Scripted backends: the point is the exact text each model is sent, which needs exact replies.
The journal is a real file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from backends.base import Message, SamplingOptions
from backends.chat_format import get_format
from protocols import evince
from protocols.core.agents import Agent
from protocols.core.events import DebateFinished, DebateStarted, Event, JudgementMade, MetricsComputed, PhaseChanged, TurnFinished
from protocols.measures.labels import LabelSet
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.scripted_backends import ScriptedBackend

OPTS = SamplingOptions(max_tokens=96, temperature=0.7, seed=11)
LABELS = LabelSet(["Dengue", "Chikungunya", "Zika", "Malaria", "Typhoid"])
ROLES = ("agent-a", "agent-b", "judge")


def reply(probs: dict[str, float], argument: str, general: Sequence[str] = ()) -> str:
    """A debater's JSON reply, deliberately spaced unlike the text shown for it: the raw reply
    and the rendered turn differ in every character of layout."""
    preds = [{"label": k, "probability": v, "argument": argument} for k, v in probs.items()]
    return json.dumps({"predictions": preds, "arguments": list(general)}, indent=3)


def judge(score: int, reason: str) -> str:
    return json.dumps({"claim": "the diagnosis", "score": score, "justification": "weighed",
                       "reasons": [{"reason": reason, "validity": score, "credibility": 7, "argument": 1}],
                       "rival_reasons": [{"reason": "a rival", "validity": 3, "credibility": 5}]})


RECS = json.dumps({"questions": ["Travel in the last month?"], "tests": ["NS1 antigen"]})

#: B and the judge reply alike in both scripts; only A's turns differ.
AGENT_B = [reply({"Chikungunya": 0.5, "Dengue": 0.5}, "severe arthralgia"),
           reply({"Dengue": 0.6, "Chikungunya": 0.4}, "the rash fits dengue too"),
           reply({"Dengue": 0.75, "Zika": 0.25}, "conjunctivitis is absent"), RECS]
JUDGE = [judge(8, "rash"), judge(5, "arthralgia"), judge(7, "pain"), judge(6, "rash"),
         judge(9, "platelets"), judge(4, "no conjunctivitis")]

SCRIPTS: dict[str, dict[str, list[str]]] = {
    "plain": {
        "agent-a": [reply({"Dengue": 0.6, "Zika": 0.4}, "rash and joint pain", ["mosquito season"]),
                    reply({"Dengue": 0.7, "Chikungunya": 0.3}, "retro-orbital pain"),
                    reply({"Dengue": 0.8, "Chikungunya": 0.2}, "low platelets"), RECS],
        "agent-b": AGENT_B,
        "judge": JUDGE,
    },
    # A's round-1 reply does not parse and is asked again under the stricter schema: its
    # conversation then holds both exchanges, which a resume must rebuild as they were.
    "with a retried turn": {
        "agent-a": [reply({"Dengue": 0.6, "Zika": 0.4}, "rash and joint pain"),
                    "I would say dengue, most likely.", reply({"Dengue": 0.7, "Zika": 0.3}, "retro-orbital pain"),
                    reply({"Dengue": 0.8, "Chikungunya": 0.2}, "low platelets"), RECS],
        "agent-b": AGENT_B,
        "judge": JUDGE,
    },
}


def config() -> evince.EvinceConfig:
    # ε = 0: never converged, so the opening and both refutation rounds run, then the closing
    # recommendations are asked for.
    return evince.EvinceConfig(case="fever, rash, joint pain after a trip", labels=LABELS, max_rounds=2,
                               eps_wd=0, eps_mi=0, eps_jsd=0, eps_crit=0, recommendations=True)


def team(script: dict[str, list[str]], used: dict[str, int] | None = None) -> dict[str, ScriptedBackend]:
    """Fresh backends for each role, continuing ``script`` after the ``used`` replies."""
    return {role: ScriptedBackend(f"scripted-{role}", script[role][(used or {}).get(role, 0):]) for role in ROLES}


def agents(backends: dict[str, ScriptedBackend]) -> evince.EvinceAgents:
    return evince.EvinceAgents(*(Agent(role, backends[role], OPTS) for role in ROLES))


#: The events after which a kill leaves a journal that resume starts from (a kill inside a turn,
#: e.g. after a retry's ModelCalled, re-asks that turn: the crash harness covers those).
BOUNDARIES = (DebateStarted, PhaseChanged, TurnFinished, JudgementMade, MetricsComputed)


#: One debate id for the uninterrupted run and every cut one (each in a journal of its own): what
#: a debate's id seeds, as EVINCE's order of the labels, is then the same in both.
DEBATE = "d-resume"


class Cut(Exception):
    """The process dying right after a journal write."""


def chatml(messages: list[Message]) -> str:
    return get_format("chatml").render(messages)


def assert_same_prompts(expected: list[list[Message]], got: list[list[Message]], role: str, where: str) -> None:
    assert len(got) == len(expected), f"{where}: {role} was called {len(got)} times, {len(expected)} uninterrupted"
    for i, (want, have) in enumerate(zip(expected, got)):
        assert have == want, f"{where}: {role}'s call {i + 1} differs from the uninterrupted run's"
        assert chatml(have) == chatml(want)


def turn_keys(journal: Journal, debate_id: str) -> list[tuple[int, str, str, str]]:
    debate = Queries(journal).debate(debate_id)
    assert debate is not None
    return [(t["round"], t["role"], t["kind"], t["raw"]) for t in debate["turns"]]


async def run_straight(tmp_path: Path, script: dict[str, list[str]]) -> tuple[dict[str, ScriptedBackend], DebateFinished, list[Any], int]:
    """The uninterrupted run: its backends (with every prompt), its end, its journalled turns
    and how many boundary events it yields."""
    backends = team(script)
    boundaries = 0

    def count(event: Event) -> None:
        nonlocal boundaries
        boundaries += isinstance(event, BOUNDARIES)

    with Journal(tmp_path / "straight.db") as journal:
        final = await drive(evince.run(config(), agents(backends), debate_id=DEBATE), journal, count)
        turns = turn_keys(journal, DEBATE)
    assert final is not None and final.status == "finished"
    return backends, final, turns, boundaries


@pytest.mark.parametrize("name", list(SCRIPTS))
async def test_resumed_prompts_equal_an_uninterrupted_run_s_at_every_cut(tmp_path: Path, name: str) -> None:
    script = SCRIPTS[name]
    straight, straight_final, straight_turns, boundaries = await run_straight(tmp_path, script)
    assert all(len(b.prompts) == len(script[role]) for role, b in straight.items()), "the script must be used up exactly"
    assert boundaries >= 20  # start, 4 phases, 8 turns, 6 judgements, 3 rounds' metrics
    for cut_at in range(1, boundaries + 1):
        db = tmp_path / f"cut-{cut_at}.db"
        seen, where = 0, ""

        def cut(event: Event) -> None:
            nonlocal seen, where
            if isinstance(event, BOUNDARIES):
                seen += 1
                if seen == cut_at:
                    where = f"{name}, cut after event {cut_at} ({type(event).__name__})"
                    raise Cut

        first = team(script)
        with Journal(db) as journal:
            with pytest.raises(Cut):
                await drive(evince.run(config(), agents(first), debate_id=DEBATE), journal, cut)
            debate = Queries(journal).debate(DEBATE)
        assert debate is not None and debate["status"] == "running"
        used = {role: len(first[role].prompts) for role in ROLES}
        resumed = team(script, used)
        with Journal(db) as journal:
            final = await drive(evince.resume(debate, agents(resumed)), journal)
        assert final is not None and final.status == "finished", where
        for role in ROLES:
            assert_same_prompts(straight[role].prompts, first[role].prompts + resumed[role].prompts, role, where)
        assert _comparable(final.outcome) == _comparable(straight_final.outcome), where
        with Journal(db) as journal:  # nothing asked twice, nothing missing
            assert turn_keys(journal, DEBATE) == straight_turns, where


def _comparable(outcome: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(outcome))
