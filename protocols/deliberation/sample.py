"""The deliberation's sample run for the contract tests (see :mod:`protocols.core.sample`): a
moderator, two deliberators and the person, six turns with an analysis every three."""

from __future__ import annotations

from protocols.core.sample import Sample

SAMPLES = (
    Sample(
        "deliberation",
        {"topic": "Should phones be banned in schools?", "moderator": "model-m", "deliberator": "model-1, model-2",
         "max_turns": "6", "analyze_every": "3"},
        fewest_turns=8,
        moderated={"max_turns": "60", "turn_tokens": "24"},
        addressed="deliberator-2",
        window=768,
        windowed={"max_turns": "14"},
        on_model={"max_turns": "6", "turn_tokens": "40", "analyze_every": "3", "analysis_tokens": "60"},
        model_turns=4,
    ),
)
