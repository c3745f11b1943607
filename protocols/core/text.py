"""Small text helpers every protocol uses on its way to a prompt or a title."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any


def clip(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


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


#: Characters never shown as they are, wherever untrusted text is shown (the terminal, the HTML
#: report): C0 and C1 controls except tab and newline, and the bidi embeddings, overrides and
#: isolates that reorder what a reader sees ("Trojan Source", CVE-2021-42574). One definition,
#: so the app and the report cannot drift apart.
UNSAFE_CHARACTERS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
