"""An agent's reply: its answer and the reasoning behind it (bounded, so a grammar-constrained
reply fits its budget; read as untrusted text, never evaluated)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from protocols.core.untrusted import parse_as


class Reply(BaseModel):
    reasoning: str = Field(default="", max_length=4000)
    answer: str = Field(min_length=1, max_length=300)


def read_reply(raw: str) -> tuple[Reply | None, list[str]]:
    """The reply and how it was read (``None``: no answer could be read from it)."""
    return parse_as(raw, Reply)
