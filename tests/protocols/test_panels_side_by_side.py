"""Calls the paper's order lets run at once do run at once, and the journal reads as if they had
not: SocraSynth's judge panel (its evaluative cells and its Q&A verdicts) and EVINCE's CRIT of B
beside the agreement judge.

Scripted models (``tests/helpers/scripted_backends.py``): the promise is about when calls are made, which
a scripted backend can count exactly; each call streams at a pace, so calls made one after
another never overlap, and calls made at once do. ``tests/backends/test_lockstep.py`` shows the
same calls decoded together on the real bundled model.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from backends.base import ChatStream, Message, SamplingOptions, Session
from protocols import evince
from protocols import socrasynth as ss
from protocols.core.agents import Agent
from protocols.core.events import Event, JudgementMade
from protocols.measures.labels import LabelSet
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.scripted_backends import ScriptedBackend, fits

OPTS = SamplingOptions(max_tokens=64, temperature=0.0, seed=7)


class Overlapping(ScriptedBackend):
    """A scripted model that counts its calls in flight (the most at once is :attr:`peak`)."""

    def __init__(self, model_id: str) -> None:
        super().__init__(model_id, [], delay=0.005, chunk=4, answer=fits)
        self.in_flight = 0
        self.peak = 0

    def _new_session(self, name: str) -> Session:
        inner = super()._new_session(name)
        backend = self

        class Counted(Session):
            def chat(self, messages: Sequence[Message], options: SamplingOptions | None = None, *,
                     schema: Any = None) -> ChatStream:
                stream = inner.chat(messages, options, schema=schema)
                source = aiter(stream)

                async def counted(outer: ChatStream) -> AsyncIterator[str]:
                    backend.in_flight += 1
                    backend.peak = max(backend.peak, backend.in_flight)
                    try:
                        async for piece in source:
                            yield piece
                        outer.completion = stream.completion
                    finally:
                        backend.in_flight -= 1

                return ChatStream(counted, stream.cancel)

            async def score(self, messages: Sequence[Message], candidates: Sequence[str], *, prefix: str = "") -> Any:
                return await inner.score(messages, candidates, prefix=prefix)

        return Counted(self, name)


async def test_socrasynths_judges_are_asked_at_once_and_journalled_in_the_panels_order(tmp_path: Path) -> None:
    debaters, panel, qa = ScriptedBackend("debater", [], answer=fits), Overlapping("panel"), ScriptedBackend("qa", [], answer=fits)
    config = ss.SocraSynthConfig(subject="Should cities ban cars from their centres?",
                                 **{**ss.SocraSynthConfig.SMALL_MODEL_PROFILE, "max_rounds": 1, "subtopics": 2},
                                 qa_baseline=True)
    judges = [Agent(f"judge-{i}", panel, OPTS) for i in (1, 2, 3)]
    agents = ss.SocraSynthAgents(Agent("agent-a", debaters, OPTS), Agent("agent-b", debaters, OPTS), judges,
                                 qa=Agent("qa", qa, OPTS))
    events: list[Event] = []
    with Journal(tmp_path / "j.db") as journal:
        final = await drive(ss.run(config, agents, debate_id="panel1"), journal, events.append)
        debate = Queries(journal).debate("panel1")
    assert final is not None and debate is not None
    assert panel.peak >= 3, f"the three judges were asked one after another (at most {panel.peak} at once)"
    cells = [(e.round, e.subject, e.judge_role) for e in events if isinstance(e, JudgementMade) and e.kind == "crit"
             and e.reasons.get("position") == "argument" and e.reasons.get("alignment") is not None]
    # per alignment and subtopic, judge-1, judge-2, judge-3: the panel's order, whatever finished first
    assert [role for _, _, role in cells] == ["judge-1", "judge-2", "judge-3"] * (len(cells) // 3) and cells
    verdicts = [e.judge_role for e in events if isinstance(e, JudgementMade) and e.kind == "verdict"]
    assert verdicts == ["judge-1", "judge-2", "judge-3"]
    assert list(debate["outcome"]["qa"]["verdicts"]) == ["judge-1", "judge-2", "judge-3"]


async def test_evinces_crit_of_b_runs_beside_the_agreement_judge(tmp_path: Path) -> None:
    """One model judges CRIT and agreement: B's CRIT and the agreement verdict overlap; A's CRIT
    (which B's turn reads through the quality gate) never overlaps anything."""
    def predict(messages: Sequence[Message], schema: dict[str, Any] | None) -> str:
        if schema is None or "predictions" not in json.dumps(schema):
            return fits(messages, schema)
        return json.dumps({"predictions": [{"label": "Dengue", "probability": 0.6, "argument": "rash and fever"},
                                           {"label": "Malaria", "probability": 0.4, "argument": "travel"}],
                           "arguments": ["a rash after a tropical trip points to dengue"]})

    debaters, judge = ScriptedBackend("debater", [], answer=predict), Overlapping("judge")
    config = evince.EvinceConfig(case="Fever and a rash after a trip.", labels=LabelSet(["Dengue", "Malaria", "Typhoid"]),
                                 **{**evince.EvinceConfig.SMALL_MODEL_PROFILE, "max_rounds": 1}, agreement_judge=True)
    agents = evince.EvinceAgents(Agent("agent-a", debaters, OPTS), Agent("agent-b", debaters, OPTS), Agent("judge", judge, OPTS))
    events: list[Event] = []
    with Journal(tmp_path / "j.db") as journal:
        await drive(evince.run(config, agents, debate_id="ev1"), journal, events.append)
    assert judge.peak == 2, f"CRIT of B and the agreement judge: {judge.peak} at once"
    kinds = [(e.kind, e.target) for e in events if isinstance(e, JudgementMade)]
    assert kinds == [("crit", "agent-a"), ("crit", "agent-b"), ("agreement", None)] * 2  # rounds 0 and 1, in the paper's order
