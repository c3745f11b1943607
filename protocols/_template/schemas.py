"""What a model's reply must look like. The schema bounds every field, so a grammar-constrained
reply fits its token budget; :func:`read_answer` reads any reply (a model's output is untrusted:
parsed and checked, never evaluated) and says what it repaired or why it refused."""

from __future__ import annotations

from pydantic import BaseModel, Field

from protocols.core.untrusted import parse_as


class Answer(BaseModel):
    answer: str = Field(min_length=1, max_length=2000)
    reason: str = Field(default="", max_length=2000)


def read_answer(raw: str) -> tuple[Answer | None, list[str]]:
    """The reply as an :class:`Answer` and the notes on how it was read (``None``: unreadable)."""
    return parse_as(raw, Answer)
