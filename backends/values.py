"""The plain values a model call is made of: a chat :class:`Message` and its :class:`SamplingOptions`.

A leaf module: it imports nothing from ``backends``. The registry (an entry's sampling
defaults), the chat formats (turns of messages) and the backend interface (:mod:`backends.base`,
which re-exports both) all need these values, and when they lived in ``base`` the three modules
imported one another in a circle (base → registry → chat_format → base). Here each of them
imports only downward; ``tests/guarantees/test_layers.py`` fails if a circle comes back.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Literal

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    """One chat message. ``content`` is plain text; nothing in it is ever interpreted."""

    role: Role
    content: str


@dataclass(frozen=True)
class SamplingOptions:
    """Decoding options for one call. ``None`` means "the backend's default"."""

    max_tokens: int = 256
    temperature: float = 0.7
    top_p: float = 0.95
    top_k: int = 40
    min_p: float = 0.05
    repeat_penalty: float = 1.1
    seed: int | None = None
    stop: tuple[str, ...] = ()

    def merged(self, **overrides: Any) -> SamplingOptions:
        """A copy with the given fields replaced; ``None`` values are ignored."""
        clean = {k: v for k, v in overrides.items() if v is not None}
        if "stop" in clean:
            clean["stop"] = tuple(clean["stop"])
        return SamplingOptions(**{**asdict(self), **clean})

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)
