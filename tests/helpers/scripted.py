"""A backend that replies with scripted text, for protocol tests that need *exact* bad output.

Why a stand-in here: the protocol tests below must feed specific malformed replies (prose
instead of JSON, negative probabilities, unknown labels, empty arrays) and check that each is
repaired or rejected with a recorded reason. A real model cannot be made to emit a given bad
string on demand; everything else in the suite runs the real bundled models.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from backends.base import (
    Backend,
    BackendError,
    ChatStream,
    Completion,
    Message,
    SamplingOptions,
    ScoreResult,
    Session,
    Timing,
    Usage,
    schema_of,
)


@dataclass(frozen=True)
class Fail:
    """A scripted call that streams ``partial`` and then fails as a backend would (server gone)."""

    message: str
    partial: str = ""


class ScriptedBackend(Backend):
    kind = "scripted"

    def __init__(self, model_id: str, replies: Sequence[str | Fail], *, pace_s: float = 0.0) -> None:
        """``pace_s``: seconds between 7-character chunks; about 0.02 streams at a small
        model's pace on this machine (the crash harness's fast mode needs kills to land
        mid-reply as well as between turns)."""
        super().__init__()
        self.model_id = model_id
        self.replies = list(replies)
        self.pace_s = pace_s
        self.prompts: list[list[Message]] = []

    def _new_session(self, name: str) -> Session:
        return _ScriptedSession(self, name)


class _ScriptedSession(Session):
    def __init__(self, backend: ScriptedBackend, name: str) -> None:
        self.backend = backend
        self.name = name

    def chat(self, messages: Sequence[Message], options: SamplingOptions | None = None, *,
             schema: Any = None) -> ChatStream:
        opts = options or SamplingOptions()
        self.backend.prompts.append(list(messages))
        reply = self.backend.replies.pop(0) if self.backend.replies else "{}"
        text = reply.partial if isinstance(reply, Fail) else reply
        pace = self.backend.pace_s

        async def produce(stream: ChatStream) -> AsyncIterator[str]:
            for i in range(0, len(text), 7):
                if pace:
                    await asyncio.sleep(pace)
                yield text[i : i + 7]
            if isinstance(reply, Fail):
                raise BackendError(f"model {self.backend.model_id!r}: {reply.message}")
            stream.completion = Completion(text, Usage(10, 10, max(1, len(text) // 4)), Timing(total_s=0.01, first_token_s=0.001),
                                           "stop", self.backend.model_id, opts, schema_of(schema))

        return ChatStream(produce, lambda: None)

    async def score(self, messages: Sequence[Message], candidates: Sequence[str], *, prefix: str = "") -> ScoreResult:
        n = len(candidates)
        return ScoreResult(list(candidates), [-1.0] * n, [1 / n] * n, [1] * n, Usage(10, 10, 0), Timing(), self.backend.model_id)
