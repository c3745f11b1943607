"""``--redact`` on ages over 89 and number plates as people outside the first sets write them: with a
word processor's hyphens, in the languages of the project's users, as a year of birth, after a name
in brackets; plates by the shape of their country (France, Italy, the Netherlands, Brazil,
California, Spain) and after the word for "plate" in those languages.

Each rule is held by what it must mask and by the text beside it that it must leave: a vital sign
and its value ("BP 128 HR 64"), a year before an acronym ("2023 NHS"), a count ("1000 PCR tests"),
a coding system ("ICD-10-CM"), a birth year less than ninety years back, a table's number.
No model is stubbed: spaCy's model runs beside the rules as ``find`` runs it.
"""

from __future__ import annotations

from datetime import date

import pytest

from outputs.redact import redact_text


@pytest.mark.parametrize(("text", "masked"), [
    ("A 94‐year‐old woman.", "A [AGE] woman."),        # U+2010, as word processors set it
    ("A 93–year–old man.", "A [AGE] man."),            # en dash
    ("The ninety‑nine‑year‑old resident.", "The [AGE] resident."),  # U+2011
    ("94-y-o female.", "[AGE] female."),
    ("94YOF presents with a fall.", "[AGE] presents with a fall."),
    ("93yoM with SOB.", "[AGE] with SOB."),
    ("94 y.o.f. with hip pain.", "[AGE] with hip pain."),
    ("DOB 01/02/1930 (96 y)", "DOB [DATE] ([AGE])"),
    ("94y 3m, weight 49 kg.", "[AGE], weight 49 kg."),
    ("Im Alter von 94 Jahren verstorben.", "Im [AGE] verstorben."),
    ("Mit 93 Jahren zog sie ins Heim.", "Mit [AGE] zog sie ins Heim."),
    ("92 M, BP 130/80, chest pain.", "[AGE] M, BP 130/80, chest pain."),
    ("Age (years): 95", "Age (years): [AGE]"),
    ("AGE (YRS) 98", "AGE (YRS) [AGE]"),
    ("She is in her ninety-fourth year.", "She is in her [AGE] year."),
    ("He is in his 101st year.", "He is in his [AGE] year."),
    ("A woman in her tenth decade of life.", "A woman in her [AGE] of life."),
    ("Aet. 94, widower.", "Aet. [AGE], widower."),
])
def test_an_age_over_89_in_typeset_and_abbreviated_wordings_is_masked(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize(("text", "masked"), [
    ("Elle est âgée de 94 ans.", "Elle est âgée de [AGE]."),
    ("Paciente de 94 años.", "Paciente de [AGE]."),
    ("Paciente com 93 anos.", "Paciente com [AGE]."),
    ("Paziente di 96 anni.", "Paziente di [AGE]."),
    ("Een vrouw van 95 jaar.", "Een vrouw van [AGE]."),
    ("En 94-årig kvinna.", "En [AGE] kvinna."),
])
def test_an_age_over_89_in_the_users_other_languages_is_masked(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize("text", [
    "Les 95 answered the survey.",           # "ans" only as a whole word
    "In the tenth week of pregnancy.",
    "Follow-up at 92 days; HR 94; SpO2 91%.",
    "Une cohorte de 45 ans et plus.",        # an age under 90
    "She scored 93 on the exam.",
])
def test_a_number_beside_those_words_that_is_no_age_over_89_stays(text: str) -> None:
    assert redact_text(text) == text


def test_a_year_of_birth_ninety_years_back_or_more_is_an_age_and_a_nearer_one_stays() -> None:
    """Safe Harbor counts a birth year among the "elements of dates indicative of" an age over 89;
    the boundary is ninety years before today, so the test reads the clock as the rule does."""
    old, young = date.today().year - 90, date.today().year - 89
    assert redact_text(f"Born in {old}, she sewed.") == "Born in [AGE], she sewed."
    assert redact_text(f"Ada Kirk (b. {old - 3}) attended.") == "[NAME] (b. [AGE]) attended."
    assert redact_text(f"Year of birth: {old - 10}; smoker.") == "Year of birth: [AGE]; smoker."
    assert redact_text(f"Born in {young}, she sewed.") == f"Born in {young}, she sewed."
    assert redact_text("Born in 1985, he trained as a nurse.") == "Born in 1985, he trained as a nurse."
    assert redact_text("The 1930s building; in 1931 the ward opened.") == "The 1930s building; in 1931 the ward opened."


@pytest.mark.parametrize(("text", "masked"), [
    ("Seen with her daughter; Mrs K (94) is alert.", "Seen with her daughter; [NAME] ([AGE]) is alert."),
    ("Walter Pryce (96), on warfarin.", "[NAME] ([AGE]), on warfarin."),
    ("Mr Obi (101) and his son (64).", "Mr [NAME] ([AGE]) and his son (64)."),
])
def test_an_age_over_89_in_brackets_after_a_name_is_masked(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize("text", [
    "Table (94) lists the doses.",
    "See Figure (92) and Table (97).",
])
def test_a_number_in_brackets_after_one_capitalised_word_that_is_no_name_stays(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(("text", "masked"), [
    ("Parked: FG-482-KL.", "Parked: [NUMBER]."),                      # France (SIV)
    ("Parked outside: EZ 219 RT.", "Parked outside: [NUMBER]."),  # Italy
    ("Seen in 12-XKB-4 at noon.", "Seen in [NUMBER] at noon."),       # the Netherlands
    ("Seen in 1-KBB-23 at noon.", "Seen in [NUMBER] at noon."),
    ("Seen in BRA2E19 at noon.", "Seen in [NUMBER] at noon."),        # Brazil (Mercosul)
    ("Seen in GHJ-4412 at noon.", "Seen in [NUMBER] at noon."),       # Brazil (older)
    ("The witness saw 7XYZ482 leave.", "The witness saw [NUMBER] leave."),  # California
    ("Su coche, 9921 HJK, estaba mal aparcado.", "Su coche, [NUMBER], estaba mal aparcado."),  # Spain
])
def test_a_plate_is_masked_by_its_country_s_shape_with_no_word_naming_it(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize(("text", "masked"), [
    ("Matrícula 4821 KLM.", "Matrícula [NUMBER]."),
    ("Targa FG 482 KL.", "Targa [NUMBER]."),
    ("Kenteken 12-XKB-4.", "Kenteken [NUMBER]."),
    ("Tablica rejestracyjna KR 4K221.", "Tablica rejestracyjna [NUMBER]."),
    ("Placa antiga GHJ-4412.", "Placa antiga [NUMBER]."),
    ("Number plate WA 48213.", "Number plate [NUMBER]."),
])
def test_a_plate_after_the_word_for_plate_in_the_users_languages_is_masked(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize("text", [
    "BP 128 HR 64; RR 18.",
    "In 2023 NHS England said so.",
    "We ran 1000 PCR tests.",
    "Coded in ICD-10-CM; HLA-B27 positive; CYP2D6 poor metaboliser.",
    "COVID-19 PCR negative; SARS-CoV-2 IgG positive.",
    "The F-150 and the RAV4; ISO 9001; BRCA1.",
    "Assay kit RX-GHJ-4412 and reagent Q-BRA2E19 used.",
])
def test_codes_vitals_years_and_counts_of_a_plate_s_shape_stay(text: str) -> None:
    assert redact_text(text) == text
