"""``--redact`` on towns: GeoNames' gazetteer (``outputs/redact_models.py``'s ``towns``) checked
against spaCy's tags, and a form's place labels ("City:", "Place of birth:").

Each rule is held by what it must mask and by what an attacker of its precision would try: a
town named like an English word at the start of a sentence ("Reading glasses", "Normal saline",
"Hope is fading"), a place-named disease, score or convention ("Marburg virus", "Paris
classification", "Oxford knee score"), a longer name that starts with a town ("Boston Scientific"),
a possessive ("King's Bench"), an acronym, a country or a state. No model is stubbed: spaCy and the
gazetteer run as ``find`` runs them.
"""

from __future__ import annotations

import pytest

from outputs.redact import find, redact_text
from outputs.redact_models import countries


@pytest.mark.parametrize(("text", "masked"), [
    # Towns no cue names as a place, which only the gazetteer finds.
    ("A Barnsley man with COPD.", "A [ADDRESS] man with COPD."),
    ("Seen at the Dubbo clinic last week.", "Seen at the [ADDRESS] clinic last week."),
    ("Nashik resident, dengue NS1 positive.", "[ADDRESS] resident, dengue NS1 positive."),
    ("The respondent, a Coventry-based builder, denies liability.",
     "The respondent, a [ADDRESS]-based builder, denies liability."),
    ("Has friends in Halifax and Truro.", "Has friends in [ADDRESS] and [ADDRESS]."),
    ("Now in a care home in Bath; MMSE 19/30.", "Now in a care home in [ADDRESS]; MMSE 19/30."),
    # A court or a registry named by its town: the town goes, the court's kind stays.
    ("Heard at Maidstone Crown Court before a jury.", "Heard at [ADDRESS] Crown Court before a jury."),
    ("Appeal from the Ballarat Magistrates' Court.", "Appeal from the [ADDRESS] Magistrates' Court."),
    # Written without its accent, as a keyboard without them writes it.
    ("Vecino de Alcala de Henares, jubilado.", "Vecino de [ADDRESS], jubilado."),
    # A form's label says the value is a place, whatever its size.
    ("Town: Mullingar\nCounty: Westmeath", "Town: [ADDRESS]\nCounty: [ADDRESS]"),
    ("Place of birth: Kurunegala", "Place of birth: [ADDRESS]"),
    ("Wohnort: Bad Kreuznach", "Wohnort: [ADDRESS]"),
])
def test_a_town_is_masked(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize("text", [
    # Towns named like English words, opening a sentence or not tagged as proper nouns.
    "Normal saline given at 100 mL/h.",
    "Reading glasses lost on the ward.",
    "Hope is fading, the family say.",
    "Split skin graft to the left shin.",
    "Police were called at 02:00.",
    "Temple tenderness on the left.",
    "Sandy stools noted on the ward.",
    "Bright red blood per rectum.",
    "Wells were dug on the farm.",
    "Liberty was restricted under the order.",
    # A disease, a score or a convention named after a place.
    "Marburg virus and Ebola excluded; Norwalk virus PCR positive.",
    "Paris classification 0-IIa polyp.",
    "Oxford knee score 31; Manchester triage category 2.",
    "Her Oxford knee score was 31.",
    "Meets the Berlin definition of ARDS.",
    "Claim under the Vienna Convention on the sale of goods.",
    "Lyme disease serology pending.",
    # A longer name that starts with a town, a possessive, an acronym.
    "Boston Scientific stent placed in the LAD.",
    "Montreal Cognitive Assessment 24/30.",
    "Transferred to the King's Bench Division.",
    "CPF on file.",
    # Countries and states stand (Safe Harbor masks what is smaller than a state).
    "Travelled to Tanzania and Kenya; yellow fever vaccinated.",
    "Moved from Texas to Ontario, then to Goa.",
    "Has friends in Nova Scotia.",
    "Place of birth: Ireland",         # a form's place label before a country
    "City: Oncology",                  # ... before a ward
    "Burkitt lymphoma and De Quervain thyroiditis.",
])
def test_what_only_looks_like_a_town_stays(text: str) -> None:
    assert redact_text(text) == text


def test_every_country_the_gazetteer_lists_stands() -> None:
    """Each of GeoNames' 252 countries is a region Safe Harbor lets stand, even where a town of the
    same name exists ("Mexico", a town in Missouri and in the Philippines)."""
    assert {"tanzania", "mexico", "luxembourg", "djibouti", "singapore"} <= countries()
    for country in ("Mexico", "Luxembourg", "Djibouti"):
        assert redact_text(f"She travelled to {country} last year.") == f"She travelled to {country} last year."


def test_a_town_inside_a_person_s_name_is_the_name_s() -> None:
    """"Charlotte Brown" is a person: the gazetteer's Charlotte gives way to the name's recognizers,
    which mask the whole name as a name."""
    spans = find("Seen with Dr Charlotte Brown today.")
    assert [(s.kind, "Seen with Dr Charlotte Brown today."[s.start:s.end]) for s in spans] == [("name", "Charlotte Brown")]


def test_a_name_a_title_found_is_masked_even_where_it_spells_a_state() -> None:
    """A state or a country stands only where the model or capitalisation alone found it: after a
    title, "Georgia" and "Victoria" are people."""
    assert redact_text("Seen by Dr. Georgia today.") == "Seen by Dr. [NAME] today."
    assert redact_text("Seen by Dr. Victoria today.") == "Seen by Dr. [NAME] today."
