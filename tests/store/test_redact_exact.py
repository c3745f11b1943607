"""``--redact`` word for word: what is masked, what the debate's own labels shield, and that a
redacted debate keeps every identifier, so the export still maps to the journal.

test_redact.py checks the gist (no secret left, the labels kept) and the command line; here
the exact output, the rule that lets a label shield a longer capitalised run but never another
name, and :func:`redact_debate` in process, field by field. (Found by mutation testing,
``benchmarks/mutation.py``: each test failed for a change to ``outputs/redact.py`` the others let through.)
"""

from __future__ import annotations

import copy

from outputs.redact import redact_debate, redact_text


def test_each_kind_of_detail_becomes_its_own_mark() -> None:
    text = "Write to ana@clinic.example or call +1 415-555-0199 before 5 March 2024; she met Maria Lopez there."
    assert redact_text(text) == "Write to [EMAIL] or call [PHONE] before [DATE]; she met [NAME] there."
    assert redact_text("Seen by Dr. Ana Ruiz.") == "Seen by Dr. [NAME]."


def test_a_label_shields_the_capitalised_run_that_holds_it_and_nothing_else() -> None:
    keep = ["Dengue Fever", "Zika"]
    assert redact_text("signs of Dengue Fever today", keep) == "signs of Dengue Fever today"
    assert redact_text("signs of Severe Dengue Fever today", keep) == "signs of Severe Dengue Fever today"
    assert redact_text("signs of Zika Virus today", keep) == "signs of Zika Virus today"  # four letters: enough
    assert redact_text("she met Maria Lopez about Dengue Fever", keep) == "she met [NAME] about Dengue Fever"


def test_a_label_of_three_letters_or_fewer_shields_only_itself() -> None:
    """A short label ("Flu", "TB") would otherwise shield every name that happens to contain it."""
    assert redact_text("the nurse Flurina Mendes called", ["Flu"]) == "the nurse [NAME] called"


def _debate() -> dict:
    """A journalled debate as ``Queries.debate`` returns it, with details to mask in every free
    text. Model ids are the user's own registry keys, so one here reads like a titled name."""
    return {
        "id": "3f9c2a1b0c4d", "protocol": "evince", "title": "Fever after travel", "status": "finished",
        "subject": "Patient John Carter, seen on 2024-03-05.",
        "config": {"labels": ["Dengue Fever", "Lyme Disease"], "case": "call 415-555-0199"},
        "participants": [{"role": "agent-a", "model_id": "Mistral Large", "backend": "openai"},
                         {"role": "judge", "model_id": "Doctor Who", "backend": "llamacpp"}],
        "turns": [{"id": 7, "debate_id": "3f9c2a1b0c4d", "role": "judge", "model_id": "Doctor Who",
                   "text": "Lyme Disease seems likelier than Dengue Fever for Mr. Carter; as Mistral Large argued.",
                   "distribution": {"Dengue Fever": 0.6, "Lyme Disease": 0.4}}],
        "judgements": [{"reasons": {"justification": "as ana@clinic.example said", "notes": ["met Maria Lopez"]}}],
        "moderator_events": [{"payload": {"text": "Ask Prof. Smith"}, "round": 1}],
        "outcome": {"final": {"Dengue Fever": 0.6}, "count": 3, "ok": True},
    }


def test_a_redacted_debate_masks_every_free_text_and_keeps_every_identifier() -> None:
    debate = _debate()
    original = copy.deepcopy(debate)
    out = redact_debate(debate)
    assert debate == original  # a copy: the journal's own record is never changed
    assert out["subject"] == "Patient [NAME], seen on [DATE]."
    assert out["config"] == {"labels": ["Dengue Fever", "Lyme Disease"], "case": "call [PHONE]"}
    turn = out["turns"][0]
    # The labels and the debaters' model ids are the debate's own terms: never masked as names.
    assert turn["text"] == "Lyme Disease seems likelier than Dengue Fever for Mr. [NAME]; as Mistral Large argued."
    assert turn["distribution"] == {"Dengue Fever": 0.6, "Lyme Disease": 0.4}
    assert out["judgements"][0]["reasons"] == {"justification": "as [EMAIL] said", "notes": ["met [NAME]"]}
    assert out["moderator_events"][0]["payload"] == {"text": "Ask Prof. [NAME]"}
    assert out["outcome"] == {"final": {"Dengue Fever": 0.6}, "count": 3, "ok": True}
    # Identifiers are data, not text: a model id that reads like "Doctor [NAME]" is kept whole.
    assert out["participants"] == original["participants"]
    assert {k: turn[k] for k in ("id", "debate_id", "role", "model_id")} == \
        {"id": 7, "debate_id": "3f9c2a1b0c4d", "role": "judge", "model_id": "Doctor Who"}
    assert (out["id"], out["status"]) == ("3f9c2a1b0c4d", "finished")


def test_a_debate_without_config_or_participants_is_redacted_too() -> None:
    assert redact_debate({"id": "d1", "subject": "call 415-555-0199"}) == {"id": "d1", "subject": "call [PHONE]"}
