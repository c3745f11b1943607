"""``--redact`` at the edges of its rules: the boundary of each range (a year of birth, a phone's
fifteen digits), each rule that no other rule backs up (a bare Brazilian CPF, an Irish plate, a
federal docket, "05.03.", a holiday, a name at the start of a line), and the words beside an
identifier that must stay (a people's adjective, a ward, a country, a code list).

Each example is one a person writes in a clinical note or a legal file; each was seen to fail
with the rule behind it broken (the mutation benchmark's survivors, applied by hand). No model is
stubbed: spaCy's model and libphonenumber run beside the rules as ``find`` runs them, so an
example here is one they do not mask on their own.
"""

from __future__ import annotations

from collections import Counter

import pytest

from outputs.redact import KINDS, redact, redact_debate, redact_text


@pytest.mark.parametrize(("text", "masked"), [
    # A year of birth ninety years back or more is an age, however far back: 1850 is the oldest read.
    ("The testator's grandmother, born in 1850, left the farm to him.",
     "The testator's grandmother, born in [AGE], left the farm to him."),
    # A year too recent to give away an age does not stop the next one being read; "born" is no name.
    ("Her daughter, born in 1962, says her mother was born in 1931.",
     "Her daughter, born in 1962, says her mother was born in [AGE]."),
    # Fifteen digits, E.164's longest, extension included.
    ("Call her on +1 555 010 4477 ext 4521.", "Call her on [PHONE]."),
    # A number after the word for a phone, written without spaces and valid in no numbering plan.
    ("Phone: 15550104477", "Phone: [PHONE]"),
    ("Mobile: 15550104477 (daughter)", "Mobile: [PHONE] (daughter)"),
    # A town beside its province or state, named by nothing else.
    ("Transferred from Moose Jaw, Saskatchewan.", "Transferred from [ADDRESS], Saskatchewan."),
    ("Seen at Wagga Wagga, New South Wales.", "Seen at [ADDRESS], New South Wales."),
    # A national number after its label written as a form writes it, and nothing after it.
    ("Sécurité sociale : 1 85 05 78 006 084 36.", "Sécurité sociale : [SSN]."),
    ("Her Aadhaar is 2345 6789 0123 and she lives alone.", "Her Aadhaar is [SSN] and she lives alone."),
    # Shapes with no word naming them: a Brazilian CPF, an Irish plate, a US federal docket, a German "05.03.".
    ("Paciente 123.456.789-09 atendido.", "Paciente [SSN] atendido."),
    ("A silver Corolla, 191-D-12345, was seen leaving.", "A silver Corolla, [NUMBER], was seen leaving."),
    ("The complaint, 1:21-cv-01234-ABC, was dismissed.", "The complaint, [NUMBER], was dismissed."),
    ("Befund vom 05.03. unauffällig.", "Befund vom [DATE] unauffällig."),
    # A holiday is a date.
    ("She fell at home on Christmas Eve.", "She fell at home on [DATE]."),
    ("He was admitted the day after Thanksgiving.", "He was admitted the day after [DATE]."),
    # A label in capitals stays, the name after it goes.
    ("PATIENT NAME: JOHN A. SMITH", "PATIENT NAME: [NAME]"),
    ("patient name: MARIA LOPEZ", "patient name: [NAME]"),  # "name" after "patient" is the label's, no name
    # A full name opening a line of a note, under a heading with no full stop.
    ("Day 3\nWilfred Amankwah remains on oxygen.", "Day 3\n[NAME] remains on oxygen."),
    ("She posted as @JaneDoe_RN on the forum.", "She posted as [NAME] on the forum."),
    # A facility whose name opens with "The".
    ("She was moved to The Royal Marsden Hospital.", "She was moved to [FACILITY]."),
    ("Admitted to The Christie Hospital in March.", "Admitted to [FACILITY] in March."),
    # A name with a test or a stage after it is still a name when a title or a given name found it.
    ("Maria Lopez's test results came back normal.", "[NAME] test results came back normal."),
    ("Dr Okafor's test was positive.", "Dr [NAME] test was positive."),
    # A surname in capitals after the title and given name, as court papers write it.
    ("Seen by Dr Jane COX on the ward.", "Seen by Dr [NAME] [NAME] on the ward."),
    # A code list ends at the first word with no digit: a name after it is masked.
    ("ICD-10 F32.1 and Maria Lopez attended.", "ICD-10 F32.1 and [NAME] attended."),
    ("ICD-10 Maria Lopez attended.", "ICD-10 [NAME] attended."),
    # "County" stays, the county goes.
    ("She farms near Ballina, County Mayo.", "She farms near [ADDRESS], County [ADDRESS]."),
    ("Her people are from County Kerry originally.", "Her people are from County [ADDRESS] originally."),
    # A town moved to is masked; a country moved to stays (Safe Harbor lets it stand).
    ("He relocated from Ballina to Scotland in 2019.", "He relocated from [ADDRESS] to Scotland in 2019."),
    ("Referred to Kingston General Hospital, Ontario.", "Referred to [FACILITY], Ontario."),
])
def test_an_identifier_at_the_edge_of_its_rule_is_masked_and_the_words_beside_it_kept(text: str, masked: str) -> None:
    assert redact_text(text) == masked


def test_an_age_next_month_is_masked() -> None:
    out = redact_text("Edna is 97 next month and still drives.")
    assert "97" not in out and "is [AGE] next month" in out


@pytest.mark.parametrize("text", [
    "The respondent, a farmer of Danish descent, appeared.",  # a people's adjective is no town
    "Her father is of Nigerian descent.",
    "He came from Vietnamese parents.",
    "The infusion pump was running 10.2.1.4-beta when it failed.",  # a version, not an IP address
    "SNOMED CT codes 22298006 and 38341003 were recorded.",  # codes, not phone numbers
    "SNOMED CT code 22298006 or 38341003",
    "ATC codes C09AA05 and N02BE01",  # codes, not postcodes
    "The patient was moved from Recovery to Oncology overnight.",  # wards, not towns
    "Transferred to Mercy Hospital, Cardiology, for monitoring.",
    "NATIONALITY: THE UNITED STATES",  # a country stays in capitals too
])
def test_words_beside_identifiers_that_identify_no_one_stay(text: str) -> None:
    assert redact_text(text) in (text, text.replace("Mercy Hospital", "[FACILITY]"))


def test_a_short_label_of_the_debate_does_not_shield_a_name_that_holds_its_letters() -> None:
    # "ALS" is a label (amyotrophic lateral sclerosis); "Walsh" holds "als".
    assert redact("Discussed with Bridget Walsh today.", keep=["ALS", "PSP"]).text == "Discussed with [NAME] today."


def test_counts_are_by_the_kinds_redaction_names() -> None:
    done = redact("Paciente 123.456.789-09 atendido; tel. +1 555 010 4477 ext 4521.")
    assert done.counts == Counter(ssn=1, phone=1)
    assert set(done.counts) <= set(KINDS)


def test_a_redacted_debate_withholds_file_hashes_and_token_ids_and_keeps_keys_that_are_no_text() -> None:
    debate = {
        "id": "d1", "subject": "Maria Lopez, chest pain",
        "evidence": {"files": [{"name": "Maria Lopez discharge.pdf", "sha256": "9f2c" * 16}]},
        "turns": [{"id": 3, "text": "Call Maria Lopez on 415-555-0199.", "tokens": [9906, 11, 1917]}],
        "rounds": {1: "Maria Lopez was seen.", 2: "No change."},  # keyed by round number, as built in code
    }
    out = redact_debate(debate)
    assert out["evidence"]["files"] == [{"name": "[NAME] discharge.pdf", "sha256": "withheld (redacted copy)"}]
    assert out["turns"] == [{"id": 3, "text": "Call [NAME] on [PHONE].", "tokens": "withheld (redacted copy)"}]
    assert out["rounds"] == {1: "[NAME] was seen.", 2: "No change."}
