"""The multiagent debate's sample run for the contract tests (see :mod:`protocols.core.sample`):
three agents, an answer alone and two debate rounds."""

from __future__ import annotations

from protocols.core.sample import Sample

SAMPLES = (
    Sample(
        "multiagent",
        {"question": "A patient has fever, a rash and joint pain after a trip. What is the likely diagnosis?",
         "agent": "model-1, model-2, model-3", "rounds": "2"},
        fewest_turns=9,
        moderated={"rounds": "6", "turn_tokens": "32"},
        addressed="agent-2",
        window=768,
        windowed={"rounds": "5"},
        on_model={"rounds": "1", "turn_tokens": "60"},
        model_turns=4,
    ),
)
