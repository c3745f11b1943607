"""EVINCE's sample run for the contract tests (see :mod:`protocols.core.sample`): two refutation
rounds with every ε at 0 (so only the agreement judge can end it early), one CRIT step, the
joint recommendations at the end."""

from __future__ import annotations

from protocols.core.sample import Sample

SAMPLES = (
    Sample(
        "evince",
        {"case": "Fever, rash and joint pain after a trip.", "labels": "symptom2disease", "agent-a": "model-a",
         "agent-b": "model-b", "judge": "model-j", "max_rounds": "2", "eps_wd": "0", "eps_mi": "0", "eps_jsd": "0",
         "eps_crit": "0", "agreement_judge": "yes", "crit_depth": "1"},
        fewest_turns=6,
        moderated={"case": "Fever, chills and a rash after a trip.", "max_rounds": "2", "turn_tokens": "40",
                   "crit_tokens": "40"},
        addressed="agent-b",
        window=1536,
        windowed={"max_rounds": "5", "agreement_judge": "no"},
        on_model={"max_rounds": "2", "turn_tokens": "40", "crit_tokens": "40"},
        model_turns=4,
    ),
)
