"""Small text helpers every protocol uses on its way to a prompt or a title."""

from __future__ import annotations


def clip(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
