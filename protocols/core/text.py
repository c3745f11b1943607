"""Small text helpers every protocol uses on its way to a prompt or a title."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any


def clip(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def rounds_held(refutations: int) -> str:
    """A round cap in words: "the opening round only", "the opening and 1 round of rebuttal"."""
    if refutations <= 0:
        return "the opening round only"
    return f"the opening and {refutations} round{'s' if refutations != 1 else ''} of rebuttal"


def worded(items: Any) -> list[str]:
    """The items of a model's list that say something: each with a letter or a digit. A tiny
    model pads a list with "," or "." items; counted or shown, they would read as advice."""
    return [str(x).strip() for x in items or () if re.search(r"\w", str(x))]


def percent(probs: Mapping[str, Any], label: str) -> str:
    """``label``'s probability in ``probs`` as "62%" ("" when absent): for outcomes in words."""
    value = probs.get(label)
    return f"{value:.0%}" if isinstance(value, int | float) else ""


def listed(items: Sequence[Any]) -> str:
    """"a", "a and b", "a, b and c": a list inside a sentence."""
    words = [str(i) for i in items]
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


#: Control characters (C0 and C1, except tab and newline): a terminal obeys them (ESC starts the
#: sequences that recolour, clear, retitle or write to the clipboard), and they carry no text.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: Characters that change how text is drawn, or hide text, without being seen: the bidi
#: embeddings, overrides and isolates that reorder what a reader sees ("Trojan Source",
#: CVE-2021-42574) and the bidi marks (LRM, RLM, ALM); zero-width spaces, the word joiner and the
#: invisible operators, the byte-order mark, the Mongolian vowel separator; and the tag
#: characters (U+E0000-U+E007F), which spell out hidden text a model reads and a person does
#: not. Wherever untrusted text is shown they are shown as marks (:func:`mark`), not obeyed.
#: The zero-width (non-)joiners U+200C/U+200D stay: Persian and Indic scripts and emoji need them,
#: and they neither reorder text nor hide any.
FORMAT_CHARACTERS = re.compile(r"[\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
                               r"\U000e0000-\U000e007f]")
#: Both sets: never shown as they are, wherever untrusted text is shown (the terminal drops the
#: controls and marks the rest, the HTML report marks both). One definition, so the app and the
#: report cannot drift apart.
UNSAFE_CHARACTERS = re.compile(f"{CONTROL_CHARACTERS.pattern}|{FORMAT_CHARACTERS.pattern}")


def mark(char: str) -> str:
    """How an unsafe character is shown: ``⟨U+202E⟩``, visible and inert."""
    return f"⟨U+{ord(char):04X}⟩"
