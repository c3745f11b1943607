"""The human-in-the-loop panel's sample run for the contract tests (see
:mod:`protocols.core.sample`): two agents, the clerk, the person's seat shown, two rounds."""

from __future__ import annotations

from protocols.core.sample import Sample

SAMPLES = (
    Sample(
        "humanloop",
        {"case": "The statute never defines consent; void for vagueness?", "agent": "model-1, model-2",
         "clerk": "model-c", "seat": "shown", "rounds": "2"},
        fewest_turns=6,
        moderated={"rounds": "5", "turn_tokens": "24"},
        addressed="agent-2",
        window=768,
        windowed={"rounds": "5"},
        on_model={"rounds": "2", "turn_tokens": "40", "stance_tokens": "20"},
        model_turns=3,
    ),
)
