"""Masking personal details in an exported debate (``symposium export --redact``).

Clinicians and lawyers share transcripts; the journal keeps the originals, the export masks
emails, phone numbers, dates and names. Names are the hard part: a regular expression cannot
know every name, so this masks what it can find with confidence — words after a title or a
role ("Dr. Ana Ruiz", "patient John", "Judge Harlan"), and pairs of capitalised words inside
a sentence ("met Maria Lopez") that are not the debate's own labels (a disease, a stance).
Check an export before sharing it; a name written in lower case, or alone at the start of a
sentence, is not caught.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
PHONE = re.compile(r"(?<![\w/])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]\d{2,4}){2,3}(?![\w/])")
_MONTHS = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
DATE = re.compile(
    rf"\b\d{{4}}-\d{{1,2}}-\d{{1,2}}\b"                                  # 2024-03-05
    rf"|\b\d{{1,2}}[/.]\d{{1,2}}[/.]\d{{2,4}}\b"                         # 05/03/2024, 5.3.24
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTHS}(?:,?\s+\d{{4}})?\b"       # 5 March 2024
    rf"|\b{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"       # March 5, 2024
)
_TITLES = r"(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Dame|Judge|Justice|Officer|Patient|patient|Mister|Doctor)"
TITLED_NAME = re.compile(rf"\b({_TITLES}\.?)\s+((?:[A-Z][a-z'’-]+)(?:\s+[A-Z][a-z'’-]+)*)")
_WORD = rf"(?!{_TITLES}\b)[A-Z][a-z'’-]+"
NAME_PAIR = re.compile(rf"(?<=[a-z,;:]\s)({_WORD}(?:\s+{_WORD})+)")


def redact_text(text: str, keep: Iterable[str] = ()) -> str:
    """``text`` with emails, phone numbers, dates and (likely) names masked.

    ``keep`` lists phrases never masked as names (the debate's labels, its models).
    """
    kept = {k.casefold() for k in keep}
    text = EMAIL.sub("[EMAIL]", text)
    text = DATE.sub("[DATE]", text)
    text = PHONE.sub("[PHONE]", text)
    text = TITLED_NAME.sub(lambda m: f"{m.group(1)} [NAME]", text)

    def pair(match: re.Match[str]) -> str:
        words = match.group(1)
        return words if words.casefold() in kept or any(k in words.casefold() for k in kept if len(k) > 3) else "[NAME]"

    return NAME_PAIR.sub(pair, text)


def redact_debate(debate: dict[str, Any]) -> dict[str, Any]:
    """A copy of a journalled debate (``Queries.debate``) with every free text redacted."""
    config = debate.get("config") or {}
    keep = [str(x) for x in (config.get("labels") or [])] + [p["model_id"] for p in debate.get("participants", [])]

    def clean(value: Any) -> Any:
        if isinstance(value, str):
            return redact_text(value, keep)
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, dict):
            return {k: clean(v) if k not in ("id", "debate_id", "model_id", "role", "backend", "status") else v
                    for k, v in value.items()}
        return value

    return clean(debate)
