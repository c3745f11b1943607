"""Checking the citations a turn makes against the passages of the user's files.

An agent's reply lists its factual claims, each with the passage it rests on (``source``: a
passage id such as ``E3``) and, when it quotes, the words it quotes (``quote``). A citation is
checked, not trusted; each claim gets one of three verdicts:

* ``supported``: the source names a passage of this debate and, when a quote is given, the quote
  is in that passage, exactly (``match = "exact"``) or once whitespace runs are one space and
  case is folded (``"folded"``: a PDF's line breaks, a capital at the start of a sentence);
* ``not_found``: a source is given but it names no passage (``problem`` says "no passage E9"),
  or the passage is there and the quote is not in it;
* ``uncited``: no source is given (an empty or blank ``source``).

A source is read leniently as to its shape and strictly as to its number: ``E3``, ``e3``,
``[E3]``, ``E03`` and ``E3 p.4 ¶3`` (the label a prompt shows) all name passage 3; anything not
starting with ``E`` and digits names none. A quote of only whitespace counts as no quote.
Nothing here reads a file, the journal or a model: the passages are given (the journalled ones),
so a resumed or replayed debate checks exactly as the live one did.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from protocols.core.events import Citation

_SOURCE = re.compile(r"\[?\s*[Ee]\s*(\d{1,9})(?!\d)")


def passage_id(source: str) -> str | None:
    """The passage id a written ``source`` names (``"[e03 p.4 ¶3]"`` → ``"E3"``), or ``None``."""
    found = _SOURCE.match(source.strip())
    return f"E{int(found.group(1))}" if found else None


def fold(text: str) -> str:
    """``text`` with each whitespace run one space, trimmed, and case folded."""
    return " ".join(text.split()).casefold()


def check_claim(claim: str, source: str, quote: str, passages: Mapping[str, str]) -> Citation:
    """The verdict on one claim (see the module docstring); ``passages``: id → full text."""
    written = source.strip()
    if not written:
        return Citation(claim, source, quote, "uncited")
    pid = passage_id(written)
    if pid is None or pid not in passages:
        return Citation(claim, source, quote, "not_found", problem=f"no passage {pid or written}")
    text = passages[pid]
    if not quote.strip():
        return Citation(claim, source, quote, "supported", passage=pid)
    if quote in text:
        return Citation(claim, source, quote, "supported", passage=pid, match="exact")
    if fold(quote) in fold(text):
        return Citation(claim, source, quote, "supported", passage=pid, match="folded")
    return Citation(claim, source, quote, "not_found", passage=pid, problem=f"the quote is not in {pid}")


def check(claims: Iterable[Mapping[str, Any]], passages: Mapping[str, str]) -> tuple[Citation, ...]:
    """Every claim's verdict, in order. A claim is a mapping with ``claim``, ``source`` and
    ``quote`` (missing or non-text values count as empty)."""
    return tuple(check_claim(_text(c.get("claim")), _text(c.get("source")), _text(c.get("quote")), passages)
                 for c in claims)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def tally(citations: Sequence[Citation | Mapping[str, Any]]) -> dict[str, Any]:
    """Counts of a set of claims: ``claims``, ``supported``, ``not_found``, ``uncited``, ``cited``
    (supported + not found), ``precision`` (the share of citations that check; ``None`` with no
    citation) and ``supported_share`` (the share of claims with a supported citation; ``None``
    with no claim)."""
    statuses = [c.status if isinstance(c, Citation) else str(c.get("status")) for c in citations]
    supported = statuses.count("supported")
    not_found = statuses.count("not_found")
    cited = supported + not_found
    return {"claims": len(statuses), "supported": supported, "not_found": not_found,
            "uncited": statuses.count("uncited"), "cited": cited,
            "precision": supported / cited if cited else None,
            "supported_share": supported / len(statuses) if statuses else None}


__all__ = ["check", "check_claim", "fold", "passage_id", "tally"]
