"""SocraSynth's sample run for the contract tests (see :mod:`protocols.core.sample`): two
subtopics, two rounds, two judges, the Q&A baseline and the agreement judge on, so that every
stage of Table 6.2 is reached."""

from __future__ import annotations

from protocols.core.sample import Sample

SAMPLES = (
    Sample(
        "socrasynth",
        {"subject": "Should hospitals let LLMs draft discharge letters?", "agent-a": "model-a", "agent-b": "model-b",
         "judge": "model-j1, model-j2", "subtopics": "2", "max_rounds": "2", "qa_baseline": "yes",
         "agreement_judge": "yes"},
        fewest_turns=15,
        moderated={"max_rounds": "2", "subtopics": "1", "turn_tokens": "32", "crit_tokens": "32"},
        addressed="agent-b",
        window=1280,
        windowed={"max_rounds": "3"},
        on_model={"subtopics": "2", "max_rounds": "1", "case_check": "no", "turn_tokens": "60", "crit_tokens": "60"},
        model_turns=6,
    ),
)
