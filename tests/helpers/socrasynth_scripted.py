"""SocraSynth on scripted backends: debaters and judges that say the same thing every round.

What ends a debate and how a row is scored is then decided by the protocol's arithmetic alone,
and a debate of many rounds runs in a second; a real model cannot be made to say exactly this
(the real-model runs are in tests/protocols/test_socrasynth.py).
"""

from __future__ import annotations

import json

from backends.base import SamplingOptions
from protocols import socrasynth as ss
from protocols.core.agents import Agent
from tests.helpers.scripted_backends import ScriptedBackend

OPTS = SamplingOptions(max_tokens=64, temperature=0.7, seed=7)
#: The debate's subject.
SUBJECT = "Should cities ban cars from their centres?"


def crit_reply(score: int = 7, reasons: tuple[tuple[int, int], ...] = ((7, 7),),
               rivals: tuple[tuple[int, int], ...] = ((7, 7),)) -> str:
    """A CRIT judge's reply: ``score``, and each reason (and each rival reason) rated (validity, credibility)."""
    def rated(pairs: tuple[tuple[int, int], ...]) -> list[dict[str, object]]:
        return [{"reason": f"reason {i}", "validity": v, "credibility": c} for i, (v, c) in enumerate(pairs)]
    return json.dumps({"claim": "the claim", "reasons": rated(reasons), "rival_reasons": rated(rivals),
                       "score": score, "justification": "steady"})


class ByPrompt(list):  # type: ignore[type-arg]
    """The scripted backend's reply queue, answering by what the last prompt asks."""

    def __init__(self, backend: ScriptedBackend, crit: str, complete: bool, joint: str | None = None) -> None:
        super().__init__()
        self.backend, self.crit, self.complete, self.joint = backend, crit, complete, joint

    def __bool__(self) -> bool:
        return True

    def pop(self, index: int = -1) -> str:  # noqa: ARG002 - the queue's interface
        ask = self.backend.prompts[-1][-1].content
        if "Apply CRIT" in ask:
            return self.crit
        if "Suggest up to" in ask or "Combine them" in ask:
            return json.dumps({"subtopics": [{"title": "Air quality", "description": "health effects"}]})
        if "If it is balanced" in ask:
            return json.dumps({"accept": True, "subtopics": []})
        if "have you fully presented" in ask:
            return json.dumps({"complete": self.complete})
        if "The debate is over" in ask:
            return self.joint or json.dumps({"proposal": "Pedestrian zones, phased in.", "pros": ["cleaner air"],
                                             "cons": ["deliveries"]})
        if "Which text gives better information" in ask:
            return json.dumps({"better": "debate", "reasons": "deeper"})
        return json.dumps({"points": ["A point argued at length for this subtopic."]})


def scripted(model_id: str, *, crit: str = "", complete: bool = True, joint: str | None = None) -> ScriptedBackend:
    """A scripted backend answering by what it is asked (:class:`ByPrompt`)."""
    backend = ScriptedBackend(model_id, [])
    backend.replies = ByPrompt(backend, crit or crit_reply(), complete, joint)
    return backend


def agents(judge_model: str = "judge-model", crit: str = "", complete: bool = True) -> ss.SocraSynthAgents:
    """Two scripted debaters and one scripted judge on ``judge_model``."""
    return ss.SocraSynthAgents(Agent("agent-a", scripted("model-a", complete=complete), OPTS),
                               Agent("agent-b", scripted("model-b", complete=complete), OPTS),
                               [Agent("judge-1", scripted(judge_model, crit=crit), OPTS)])
