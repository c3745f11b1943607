"""EVINCE on scripted backends: the paper's labels, replies in its JSON, a team and a config.

The protocol tests that need agents saying *exactly* a given thing (converge, diverge, fail to
parse, cite an argument the judge rates low) build their debates from these; a real model cannot
be made to say it on demand (the real-model run is tests/protocols/test_evince.py).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from backends.base import SamplingOptions
from protocols import evince
from protocols.core.agents import Agent
from protocols.core.events import Event
from protocols.measures.labels import LabelSet
from tests.helpers.scripted_backends import ScriptedBackend

OPTS = SamplingOptions(max_tokens=96, temperature=0.7, seed=11)
LABELS = LabelSet(["Dengue", "Chikungunya", "Zika", "Malaria", "Typhoid"])


def reply(probs: dict[str, float], arguments: Sequence[str] = ("fever and joint pain",), general: Sequence[str] = ()) -> str:
    """An agent's turn in EVINCE's JSON: one prediction per label of ``probs``, arguments in turn."""
    args = list(arguments)
    preds = [{"label": k, "probability": v, "argument": args[i % len(args)]} for i, (k, v) in enumerate(probs.items())]
    return json.dumps({"predictions": preds, "arguments": list(general)})


def judge_reply(score: int = 7, reasons: Sequence[dict[str, Any]] = (), rivals: Sequence[dict[str, Any]] = ()) -> str:
    """A CRIT judge's reply giving ``score``, with the reasons it rated."""
    return json.dumps({"claim": "the diagnosis", "reasons": list(reasons), "rival_reasons": list(rivals),
                       "score": score, "justification": "ok"})


def agents(a: ScriptedBackend, b: ScriptedBackend, judge: ScriptedBackend) -> evince.EvinceAgents:
    return evince.EvinceAgents(Agent("agent-a", a, OPTS), Agent("agent-b", b, OPTS), Agent("judge", judge, OPTS))


async def run_all(config: evince.EvinceConfig, team: evince.EvinceAgents) -> list[Event]:
    return [e async for e in evince.run(config, team, debate_id="t")]


def config(**kw: Any) -> evince.EvinceConfig:
    """A two-round debate over :data:`LABELS` with no recommendations and no CRIT judge, unless ``kw`` says."""
    values: dict[str, Any] = {"case": "fever, rash, joint pain", "labels": LABELS, "recommendations": False,
                              "crit_judge": False, "max_rounds": 2}
    return evince.EvinceConfig(**{**values, **kw})


def user_prompts(backend: ScriptedBackend) -> list[str]:
    """The last (user) message of every prompt ``backend`` was sent."""
    return [p[-1].content for p in backend.prompts]


def entropy_bits(*ps: float) -> float:
    """Shannon entropy in bits, worked out here from the probabilities written by hand."""
    return -sum(p * math.log2(p) for p in ps if p > 0)
