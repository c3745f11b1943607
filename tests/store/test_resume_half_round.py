"""A debate cut after agent A's finished turn in a round resumes with B answering A's journalled reply.

The older resume tests cut while A's turn was still streaming, so the half-done round was
never reached and no test read what a resumed agent is sent. Here the run is cut (the
process's way of dying is simulated by an exception raised right after the journal wrote
A's round-1 turn) and resumed with fresh backends; B's first prompt must carry A's reply as
the journal holds it, and A must not be asked again for round 1. Scripted backends: the
exact replies are the point. The journal is a real file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backends.base import SamplingOptions
from protocols import evince
from protocols.core.agents import Agent
from protocols.core.events import Event, TurnFinished
from protocols.measures.labels import LabelSet
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.scripted_backends import ScriptedBackend

OPTS = SamplingOptions(max_tokens=64, temperature=0.0, seed=1)
LABELS = LabelSet(["Malaria", "Dengue", "Typhoid"])
CRIT = '{"claim": "x", "reasons": [], "rival_reasons": [], "score": 6, "justification": "fair"}'


def _reply(top: str, p: float, argument: str) -> str:
    other = "Dengue" if top != "Dengue" else "Typhoid"
    return json.dumps({"predictions": [{"label": top, "probability": p, "argument": argument},
                                       {"label": other, "probability": round(1 - p, 2), "argument": "less likely"}],
                       "arguments": [argument]})


class Cut(Exception):
    """The process dying right after a journal write."""


def _config() -> evince.EvinceConfig:
    return evince.EvinceConfig(case="fever and chills", labels=LABELS, max_rounds=2, recommendations=False,
                               eps_wd=0, eps_mi=0, eps_jsd=0, eps_crit=0, shuffle_labels=False)


async def test_b_resumes_with_a_s_journalled_reply_of_the_cut_round(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    a_round1 = _reply("Typhoid", 0.8, "rose spots on the trunk settle it")
    agents = evince.EvinceAgents(
        Agent("agent-a", ScriptedBackend("scripted-a", [_reply("Malaria", 0.7, "cyclic fever"), a_round1]), OPTS),
        Agent("agent-b", ScriptedBackend("scripted-b", [_reply("Dengue", 0.6, "joint pain")]), OPTS),
        Agent("judge", ScriptedBackend("scripted-judge", [CRIT] * 10), OPTS))

    def cut_after_a_in_round_1(event: Event) -> None:
        if isinstance(event, TurnFinished) and event.role == "agent-a" and event.round == 1:
            raise Cut

    with Journal(db) as journal:
        with pytest.raises(Cut):
            await drive(evince.run(_config(), agents, debate_id="half"), journal, cut_after_a_in_round_1)
        debate = Queries(journal).debate("half")
    assert debate is not None and debate["status"] == "running"
    [a_turn] = [t for t in debate["turns"] if t["role"] == "agent-a" and t["round"] == 1]
    assert [(t["round"], t["role"]) for t in debate["turns"]] == [(0, "agent-a"), (0, "agent-b"), (1, "agent-a")]

    fresh_a = ScriptedBackend("scripted-a", [_reply("Malaria", 0.5, "NEW A REPLY THAT MUST NOT BE USED")] * 3)
    fresh_b = ScriptedBackend("scripted-b", [_reply("Dengue", 0.5, "b answers")] * 3)
    resumed = evince.EvinceAgents(Agent("agent-a", fresh_a, OPTS), Agent("agent-b", fresh_b, OPTS),
                                  Agent("judge", ScriptedBackend("scripted-judge", [CRIT] * 10), OPTS))
    with Journal(db) as journal:
        final = await drive(evince.resume(debate, resumed), journal)
        after = Queries(journal).debate("half")
    assert final is not None and final.status == "finished"
    b_prompt = fresh_b.prompts[0]
    # B, resumed, is sent A's round-1 reply as journalled (its text: distribution and argument)
    assert a_turn["text"].splitlines()[0] == "Typhoid 80% · Dengue 20%"
    assert "Agent A predicts: Typhoid 80% · Dengue 20%" in b_prompt[-1].content
    assert "rose spots on the trunk settle it" in b_prompt[-1].content
    assert "NEW A REPLY" not in b_prompt[-1].content
    # B's own history holds its round-0 exchange, rebuilt from the journal
    assert any(m.role == "assistant" and "joint pain" in m.content for m in b_prompt)
    # A is not asked again for round 1: its first resumed call is round 2's
    assert len(fresh_a.prompts) == 1
    assert [(t["round"], t["role"]) for t in after["turns"]] == [
        (r, role) for r in (0, 1, 2) for role in ("agent-a", "agent-b")]
