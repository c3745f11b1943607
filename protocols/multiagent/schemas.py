"""An agent's reply: its answer and the reasoning behind it (bounded, so a grammar-constrained
reply fits its budget; read as untrusted text, never evaluated). Both fields are required, so a
constrained reply reasons before it answers (a grammar puts required fields first, in order).
The bounds stay within what llama.cpp's grammar compiler accepts (about a thousand characters
in all for this shape; a longer bound is refused there and the reply goes unconstrained)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from protocols.core.untrusted import parse_as


class Reply(BaseModel):
    reasoning: str = Field(min_length=1, max_length=800)
    answer: str = Field(min_length=1, max_length=120)


def read_reply(raw: str) -> tuple[Reply | None, list[str]]:
    """The reply and how it was read (``None``: no answer could be read from it)."""
    return parse_as(raw, Reply)
