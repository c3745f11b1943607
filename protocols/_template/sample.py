"""A small run of the template for the contract tests (:mod:`protocols.core.sample`): model ids
are placeholders, one per distinct model; ``fewest_turns`` and ``model_turns`` are counted."""

from __future__ import annotations

from protocols.core.sample import Sample

SAMPLES = (
    Sample(
        "template",
        {"question": "Should the clinic open on Sundays?", "agent": "model-1, model-2, model-3"},
        fewest_turns=3,
        moderated={},
        addressed="agent-2",
        on_model={"turn_tokens": "40"},
        model_turns=2,
    ),
)
