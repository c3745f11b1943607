"""A backend whose reply is a function of the prompt: the same prompt always gets the same reply.

Why a stand-in here: the resume contract (tests/protocols/test_resume_every_protocol.py) runs each
protocol straight through and again cut at every journal write, then compares every prompt. That
needs replies that do not depend on how many calls a backend instance has seen (a resumed run
talks to fresh backends) and that parse (a reply a protocol rejects would skip the stages under
test). A real model gives neither on demand. Where a call asks for JSON, the reply is an instance
of the schema, every choice (enum member, number in bounds, list length) drawn from the prompt's
hash; free text is a sentence drawn from it too.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from backends.base import (
    Backend,
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

WORDS = ("evidence", "risk", "cost", "patients", "precedent", "safety", "consent", "error", "benefit", "trust")


class Draw:
    """Deterministic choices from a seed string."""

    def __init__(self, seed: str) -> None:
        self.seed = seed
        self.n = 0

    def int(self, low: int, high: int) -> int:
        self.n += 1
        digest = hashlib.sha256(f"{self.seed}/{self.n}".encode()).digest()
        return low + int.from_bytes(digest[:8], "big") % (high - low + 1)

    def pick(self, items: Sequence[Any]) -> Any:
        return items[self.int(0, len(items) - 1)]

    def sentence(self) -> str:
        words = [self.pick(WORDS) for _ in range(self.int(4, 9))]
        return f"The {' '.join(words)} point {self.int(1, 99)}. I affirm; confidence {self.int(40, 95)}."


def instance(schema: dict[str, Any], draw: Draw, defs: dict[str, Any] | None = None) -> Any:
    """A JSON value valid under ``schema`` (the subset pydantic and the protocols emit)."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return instance(defs[schema["$ref"].rsplit("/", 1)[-1]], draw, defs)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return instance(draw.pick(options), draw, defs)
    if "allOf" in schema:
        return instance(schema["allOf"][0], draw, defs)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return draw.pick(schema["enum"])
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: instance(sub, draw, defs) for name, sub in props.items()}
    if kind == "array":
        low = int(schema.get("minItems", 1))
        high = int(schema.get("maxItems", max(low, 3)))
        item = schema.get("items", {"type": "string"})
        return [instance(item, draw, defs) for _ in range(draw.int(low, max(low, min(high, 3))))]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        high = schema.get("maximum", schema.get("exclusiveMaximum", 10))
        if kind == "integer":
            return draw.int(math.ceil(low), math.floor(high))
        return round(low + (high - low) * draw.int(1, 99) / 100, 3)
    if kind == "boolean":
        return bool(draw.int(0, 1))
    text = draw.sentence()
    limit = schema.get("maxLength")
    return text[:limit] if limit else text


class OracleBackend(Backend):
    kind = "oracle"

    def __init__(self, model_id: str, *, delay: float = 0.0, reply_s: float | None = None,
                 reply: Callable[[Sequence[Message], dict[str, Any] | None], str] | None = None) -> None:
        super().__init__()
        self.model_id = model_id
        #: The reply to a call: a function of its messages and schema (:func:`reply_to` by default).
        self.reply = reply or reply_to
        #: Seconds per streamed 16-character chunk (and per score call): 0 answers at once; the
        #: crash harness's fast mode streams at about a small model's pace …
        self.delay = delay
        #: … and no reply takes longer than this in all (a short turn's worth of streaming).
        self.reply_s = reply_s
        self.context_length = 16384
        #: Every call, in order: (the session's role, the messages, the schema).
        self.calls: list[tuple[str, list[Message], dict[str, Any] | None]] = []

    def _new_session(self, name: str) -> Session:
        return _OracleSession(self, name)

    def prompts(self, role: str) -> list[list[Message]]:
        return [messages for r, messages, _ in self.calls if r == role]


def reply_to(messages: Sequence[Message], schema: dict[str, Any] | None) -> str:
    seed = json.dumps([[m.role, m.content] for m in messages]) + json.dumps(schema, sort_keys=True)
    draw = Draw(seed)
    return json.dumps(instance(schema, draw)) if schema else draw.sentence()


class _OracleSession(Session):
    def __init__(self, backend: OracleBackend, name: str) -> None:
        self.backend = backend
        self.name = name

    def chat(self, messages: Sequence[Message], options: SamplingOptions | None = None, *,
             schema: Any = None) -> ChatStream:
        opts = options or SamplingOptions()
        as_dict = schema_of(schema)
        self.backend.calls.append((self.name, list(messages), as_dict))
        text = self.backend.reply(messages, as_dict)

        async def produce(stream: ChatStream) -> AsyncIterator[str]:
            chunks = max(1, math.ceil(len(text) / 16))
            pause = self.backend.delay if self.backend.reply_s is None else min(self.backend.delay, self.backend.reply_s / chunks)
            for i in range(0, len(text), 16):
                if pause:
                    await asyncio.sleep(pause)
                yield text[i: i + 16]
            stream.completion = Completion(text, Usage(10, 10, max(1, len(text) // 4)), Timing(total_s=0.01, first_token_s=0.001),
                                           "stop", self.backend.model_id, opts, as_dict)

        return ChatStream(produce, lambda: None)

    async def score(self, messages: Sequence[Message], candidates: Sequence[str], *, prefix: str = "") -> ScoreResult:
        self.backend.calls.append((self.name, list(messages), {"candidates": list(candidates)}))
        if self.backend.delay:
            await asyncio.sleep(self.backend.delay * len(candidates))
        draw = Draw(json.dumps([[m.role, m.content] for m in messages]) + json.dumps(list(candidates)))
        logprobs = [-draw.int(1, 50) / 10 for _ in candidates]
        return ScoreResult.of(candidates, logprobs, [1] * len(candidates), Usage(10, 10, 0), Timing(), self.backend.model_id)
