"""``--redact``'s recognizers that find an identifier by the words around it: ages over 89 by who
they belong to, towns by the words that name them as places, plates by their country's shape,
licences, registers and biometrics by their labels. Each rule is held by what it must mask and by
the text beside it that it must leave (a measure, a department, a batch, a code).

No model is stubbed: the place rules run beside spaCy's model as ``find`` runs them.
"""

from __future__ import annotations

import pytest

from outputs.redact import redact_text
from outputs.redact_models import entities


@pytest.mark.parametrize(("text", "masked"), [
    ("She is in her 90s and drives.", "She is in her [AGE] and drives."),
    ("He is in his late nineties.", "He is in his late [AGE]."),
    ("Mr Walter Pryce celebrated his 95th birthday.", "Mr [NAME] celebrated his [AGE]."),
    ("Grandmother turned 100 last week.", "Grandmother turned [AGE] last week."),
    ("She finally turned 100.", "She finally turned [AGE]."),
    ("My aunt, who is 97, still rings.", "My aunt, who is [AGE], still rings."),
    ("Nana is 101 and lives with us.", "Nana is [AGE] and lives with us."),
    ("Mr Harold Finch (92) of Kendal.", "Mr [NAME] ([AGE]) of [ADDRESS]."),
    ("The victim, 96, lived alone.", "The victim, [AGE], lived alone."),
    ("Demographics: F, 94; ward 7B.", "Demographics: F, [AGE]; ward 7B."),
    ("A woman of 98 was found.", "A woman of [AGE] was found."),
    ("his wife, herself 90, cares for him", "his wife, herself [AGE], cares for him"),
    ("my grandmother, 99 next month", "my grandmother, [AGE] next month"),
    ("92F presents with a fall", "[AGE]F presents with a fall"),
    ("Nonagenarian (96 years) with AF.", "[AGE] ([AGE]) with AF."),
    ("Alter: 93 Jahre.", "[AGE]."),
    ("Die 94-jährige Patientin.", "Die [AGE] Patientin."),
    ("the plaintiff was 91 at the time", "the plaintiff was [AGE] at the time"),
])
def test_an_age_over_89_is_masked_in_the_wordings_notes_use(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize("text", [
    "HR was 92 bpm.", "pt was 92 bpm on arrival", "She is 92 kg.", "The patient is 95% adherent.", "enoxaparin 90 mg for 90 days",
    "married for 90 years", "92 years ago", "in the 90s", "90s music in the day room",
    "the 95th percentile", "his wife, 89 herself", "scores 12, 94, 100", "92Fx", "turned 89",
])
def test_a_number_over_89_that_is_no_age_stays(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(("text", "masked"), [
    ("She lives in Letterkenny.", "She lives in [ADDRESS]."),
    ("She lives alone near Truro.", "She lives alone near [ADDRESS]."),
    ("He moved from Dubbo to Orange last year.", "He moved from [ADDRESS] to [ADDRESS] last year."),
    ("He worked in Athlone until 1985.", "He worked in [ADDRESS] until 1985."),
    ("Respondent of Parramatta.", "Respondent of [ADDRESS]."),
    ("Deceased, late of Wodonga.", "Deceased, late of [ADDRESS]."),
    ("The hearing in Ballymena was adjourned.", "The hearing in [ADDRESS] was adjourned."),
    ("Beklagte aus Ingolstadt.", "Beklagte aus [ADDRESS]."),
    ("She was born in Hamilton, Ontario.", "She was born in [ADDRESS], Ontario."),
    ("the defendant of Yonkers, NY.", "the defendant of [ADDRESS], NY."),
    ("seen at Sassoon General Hospital, Pune; ESR 92.", "seen at [FACILITY], [ADDRESS]; ESR 92."),
    ("she grew up in Marin County", "she grew up in [ADDRESS] County"),
])
def test_a_town_named_as_a_place_is_masked(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize("text", [
    "She works in Radiology.", "He was in Theatre until 3pm.", "She came from England in 2001.",
    "moved to New South Wales", "is of Irish descent", "she came to Accident and Emergency",
    "his GP in Practice 4", "Seen, Ontario", "born in 1930",
])
def test_what_follows_a_place_word_and_is_no_town_stays(text: str) -> None:
    assert redact_text(text) == text


def test_the_model_s_entity_ends_before_its_first_lower_case_word() -> None:
    """The small model runs "Thunder Bay" on into "for PCI": the procedure stays."""
    text = "moved to Thunder Bay for PCI"
    assert redact_text(text) == "moved to [ADDRESS] for PCI"
    assert all(text[start:end] != "Thunder Bay for PCI" for start, end, _ in entities(text))


@pytest.mark.parametrize(("text", "masked"), [
    ("The car, reg. 191-D-12345, and a second car, 12-MO-4471.", "The car, reg. [NUMBER], and a second car, [NUMBER]."),
    ("The vehicles KA 05 MN 1234 and DL 3C AB 1234 were seized.", "The vehicles [NUMBER] and [NUMBER] were seized."),
    ("The van (HH-XY 99) was registered.", "The van ([NUMBER]) was registered."),
    ("Texas tag BKR-4471; NSW rego BX 12 YZ.", "Texas tag [NUMBER]; NSW rego [NUMBER]."),
    ("Federal Court matter NSD 123 of 2023.", "Federal Court matter [NUMBER]."),
    ("Geschäftszeichen 3 Ca 771/23; Record No. 2022/1234 P.", "Geschäftszeichen [NUMBER]; Record No. [NUMBER]."),
    ("NMC PIN 12A3456E; CPSO #98765; Medical Council no. 412233.", "NMC [NUMBER]; CPSO #[NUMBER]; Medical Council no. [NUMBER]."),
    ("Führerschein-Nr. B072RRE2I55; Bar Roll No. D/1234/2010.", "Führerschein-Nr. [NUMBER]; Bar Roll No. [NUMBER]."),
    ("DNA sample DNA-8812-K; iris scan ID IRS-44812.", "DNA sample [NUMBER]; iris scan ID [NUMBER]."),
    ("PPSN 7654321KA; PAN ABCDE1234F.", "PPSN [SSN]; PAN [NUMBER]."),
])
def test_plates_licences_registers_and_biometrics_are_masked(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize("text", [
    "HLA-B27 positive", "COVID-19 and SARS-CoV-2", "a price tag of 4 dollars", "in the matter of 5 children",
    "a case of 5 patients", "The vaccine lot 4539 1488 0343 6468 expired", "ICD-10 J18.9",
])
def test_codes_and_counts_beside_those_words_stay(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(("text", "masked"), [
    ("Flat 402, Shanti Apartments, FC Road, Pune 411004.", "[ADDRESS] [POSTCODE]."),
    ("No. 22, 5th Main, Jayanagar, Bengaluru.", "[ADDRESS]."),
    ("Plot 7, Sardar Patel Marg.", "[ADDRESS]."),
    ("The meeting is on Friday 10th.", "The meeting is on [DATE]."),
    ("The hearing on Wednesday, the 5th of July", "The hearing on Wednesday, the [DATE]"),
])
def test_indian_addresses_and_weekdays_with_a_day_are_masked(text: str, masked: str) -> None:
    assert redact_text(text) == masked
