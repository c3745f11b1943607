"""What a hostile reader of a ``--redact``ed export found in clear, and what the redaction masked
that a clinician needs: each case below failed before the recognizers it names were changed.

The names with a title or a label survived because a list of words "never in a name" held
common surnames (Graves, Wilson, Lane, Jensen, Ward); the age after a record number and a kernel
version were masked as parts of a number and a date.
"""

from __future__ import annotations

import json

from outputs.redact import redact_debate, redact_text


def test_a_name_after_a_title_or_a_label_is_masked_whatever_its_surname() -> None:
    for text, masked in (("Dr. Sarah Wilson reviewed the echo.", "Dr. [NAME] reviewed the echo."),
                         ("Patient: John Graves, 63.", "Patient: [NAME], 63."),
                         ("Name: Sarah Lane.", "Name: [NAME]."),
                         ("His wife Maria Jensen called.", "His wife [NAME] called."),
                         ("Mr. James Ward was seen.", "Mr. [NAME] was seen.")):
        assert redact_text(text) == masked


def test_an_eponym_is_not_a_name_but_the_person_who_shares_it_is() -> None:
    """The same surname masked as a person and kept as a disease, in one sentence."""
    assert redact_text("Mr. Joseph Bell presented with Bell's palsy.") == "Mr. [NAME] presented with Bell's palsy."
    assert redact_text("Graves' disease and Wilson's disease were discussed.") == \
        "Graves' disease and Wilson's disease were discussed."


def test_a_lower_case_name_and_a_name_opening_a_sentence_are_masked() -> None:
    assert redact_text("seen by dr helen brophy today") == "seen by dr [NAME] today"
    assert redact_text("Margaret Okonkwo was admitted.") == "[NAME] was admitted."


def test_dates_in_the_spellings_people_write() -> None:
    for text in ("DOB: the fifth of March", "seen mar 5 2024", "again on 05.03. for review",
                 "admitted on the 2nd day of February, 2024", "Aufnahme am 7. Mai 2024",
                 "ingresó el 5 de marzo de 2024", "Follow-up 2024-04-02T09:30"):
        out = redact_text(text)
        assert "[DATE]" in out and not any(ch.isdigit() for ch in out), (text, out)
        assert "March" not in out and "Mai" not in out and "marzo" not in out, out


def test_record_docket_and_device_numbers_are_masked() -> None:
    assert redact_text("chart #448192; CT acc# CT-2024-0815532") == "chart #[NUMBER]; CT acc# [NUMBER]"
    assert redact_text("Case No. 1:24-cv-00321-JMF was filed") == "Case No. [NUMBER] was filed"
    assert redact_text("Pacemaker serial no. PJN612345S checked") == "Pacemaker serial no. [NUMBER] checked"


def test_an_age_after_a_record_number_stays() -> None:
    assert redact_text("MRN 00482913. 63-year-old woman") == "MRN [NUMBER]. 63-year-old woman"


def test_a_kernel_version_is_no_date() -> None:
    text = "Kernel 6.18.44-fc on the bedside monitor, firmware v3.2.1, build 2024.03.1"
    assert redact_text(text) == text


def test_clinical_codes_and_measurements_survive() -> None:
    text = "ICD-10 I63.9 and E11.65; LOINC 2160-0 (creatinine 1.4 mg/dL); SNOMED 44054006; BP 150/95, GCS 13/15."
    assert redact_text(text) == text


def test_a_lab_value_s_reference_range_and_a_weight_after_age_survive() -> None:
    """"ref" before a number is a reference number's label, but before two ascending numbers it is
    a lab's reference range; a weight typed into an age field is no age over 89; a short number a
    numbering plan accepts somewhere ("130-170") is no phone. A reference number stays masked."""
    for text in ("Glucose 150 (ref 130-170) mg/dL; K 5.9 (reference 3.5-5.0).",
                 "Platelets 90 (ref 150-400).",
                 "Age: 92 kg entered in error, corrected."):
        assert redact_text(text) == text
    assert redact_text("Our ref 2231-4471 applies.") == "Our ref [NUMBER] applies."
    assert redact_text("REF 1200-900 on the claim.") == "REF [NUMBER] on the claim."
    assert redact_text("REF 1200-1200 on the claim.") == "REF [NUMBER] on the claim."


def _debate(labels: list[str], distribution: dict[str, float]) -> dict:
    return {"id": "d1", "config": {"labels": labels}, "participants": [{"role": "judge", "model_id": "gemma-2-9b"}],
            "turns": [{"role": "judge", "model_id": "gemma-2-9b", "text": "weighed", "distribution": distribution}],
            "moderator_events": [{"payload": {"Maria Lopez, DOB 03/14/1961": "her phone is +1 415-555-0199"}}],
            "judgements": [{"reasons": {"ana.ruiz@clinic.example": "chart #448192"}}]}


def test_no_identifier_leaves_through_a_key_or_a_label() -> None:
    """The attacker writes identifiers where only keys go: a distribution's labels (the
    debate's own terms, which shield words from the name recognizers), a payload's and a
    judgement's keys. None of them may reach the export."""
    secrets = ["Maria Lopez", "John Carter", "555-0199", "ana.ruiz@clinic.example", "448192", "03/14/1961", "Dr. Ana Ruiz"]
    labels = ["Maria Lopez", "patient John Carter", "call 415-555-0199", "Dengue Fever"]
    debate = _debate(labels, {"Maria Lopez": 0.4, "patient John Carter": 0.3, "call 415-555-0199": 0.2, "Dengue Fever": 0.1})
    out = redact_debate(debate)
    blob = json.dumps(out)
    for secret in secrets:
        assert secret not in blob, secret
    # The debate's own terms stay, and every value is still there, under its masked key.
    distribution = out["turns"][0]["distribution"]
    assert distribution["Dengue Fever"] == 0.1 and sorted(distribution.values()) == [0.1, 0.2, 0.3, 0.4]
    assert out["config"]["labels"] == ["[NAME]", "patient [NAME]", "call [PHONE]", "Dengue Fever"]


def test_two_keys_that_mask_alike_keep_both_values() -> None:
    out = redact_debate(_debate([], {"Dr. Ana Ruiz": 0.6, "Dr. Bo Chen": 0.4}))
    assert out["turns"][0]["distribution"] == {"Dr. [NAME]": 0.6, "Dr. [NAME] (2)": 0.4}
