"""The conference's sample run for the contract tests (see :mod:`protocols.core.sample`): two
topics (stages), two participants and a judge, two rounds a stage at most."""

from __future__ import annotations

from protocols.core.sample import Sample

SAMPLES = (
    Sample(
        "agreement",
        {"issue": "Build a new library or repair the old one?", "topics": "needs; costs", "participant": "model-1, model-2",
         "judge": "model-j", "max_rounds": "2"},
        fewest_turns=7,
        moderated={"topics": "budget", "max_rounds": "8", "turn_tokens": "24"},
        addressed="participant-2",
        window=512,
        windowed={"max_rounds": "5"},
        on_model={"max_rounds": "2", "turn_tokens": "40", "eval_tokens": "60"},
        model_turns=4,
    ),
)
