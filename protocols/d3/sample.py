"""D3's sample runs for the contract tests (see :mod:`protocols.core.sample`): SAMRE with a jury
of three and the position-swap audit, and MORE with k = 2 (resumed at every cut too)."""

from __future__ import annotations

from protocols.core.sample import Sample

SAMPLES = (
    Sample(
        "d3-samre",
        {"question": "At what temperature does water boil at sea level?", "answer_a": "100 C.", "answer_b": "50 C.",
         "advocate": "model-a", "judge": "model-j", "juror": "model-1, model-2, model-3", "budget": "",
         "variant": "samre", "max_rounds": "2", "swap_audit": "yes", "jury_size": "3"},
        fewest_turns=8,
        moderated={"max_rounds": "5", "turn_tokens": "24", "budget": "100000", "jury_size": "3"},
        addressed="advocate-2",
        window=768,
        windowed={"max_rounds": "4"},
        on_model={"max_rounds": "2", "jury_size": "3", "turn_tokens": "40", "judge_tokens": "60", "vote_tokens": "40",
                  "swap_audit": "no"},
        model_turns=2,
    ),
    Sample(
        "d3-more",
        {"question": "Is a tomato a fruit?", "answer_a": "Yes, botanically.", "answer_b": "No.", "advocate": "model-a",
         "judge": "model-j", "juror": "model-1, model-2, model-3", "budget": "", "variant": "more", "k": "2",
         "swap_audit": "yes", "jury_size": "3"},
        fewest_turns=4,
        addressed="advocate-2",
    ),
)
