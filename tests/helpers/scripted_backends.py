"""Stand-in backends: replies scripted call by call, or made from the prompt alone.

Why stand-ins here: a real model cannot be made to emit a given malformed string on demand (prose
instead of JSON, negative probabilities, unknown labels, empty arrays), which the tests of repair
and rejection must feed; nor can it give a reply that depends only on its prompt, which the resume
contract needs (a run cut at a journal write and resumed on fresh backends must be asked and
answered as the uninterrupted run was) and which must also parse, or the stages under test are
skipped. Everything else in the suite runs the real bundled models.

:class:`ScriptedBackend` streams its scripted replies in turn, then ``answer(messages, schema)``
(:func:`fits`: any protocol runs). :class:`OracleBackend` is one that answers every call with
:func:`reply_to` (a JSON instance of the call's schema, every choice drawn from the prompt's hash)
and scores candidates from the hash too.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from collections.abc import AsyncIterator, Callable, Sequence
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

#: A reply made from a call's messages and JSON schema (``None``: free text asked for).
Answer = Callable[[Sequence[Message], dict[str, Any] | None], str]
#: The summed log-probability of each candidate continuation of the messages.
Scores = Callable[[Sequence[Message], Sequence[str]], list[float]]
#: One call as a backend saw it: the session's name (the agent's role), the messages, and the
#: schema (a chat call's) or ``{"candidates": [...]}`` (a score call's).
Call = tuple[str, list[Message], dict[str, Any] | None]


@dataclass(frozen=True)
class Fail:
    """A scripted call that streams ``partial`` and then fails as a backend would (server gone)."""

    message: str
    partial: str = ""


def even(messages: Sequence[Message], candidates: Sequence[str]) -> list[float]:
    """Every candidate equally likely."""
    return [-1.0] * len(candidates)


class ScriptedBackend(Backend):
    kind = "scripted"

    def __init__(self, model_id: str, replies: Sequence[str | Fail] = (), *, delay: float = 0.0, chunk: int = 7,
                 warning: str | None = None, answer: Answer | None = None, gate: asyncio.Event | None = None,
                 measured: bool = False, stop_s: float = 0.0, reply_s: float | None = None, scores: Scores = even,
                 score_s: float = 0.0, context_length: int = 4096) -> None:
        """``delay``: seconds between chunks of ``chunk`` characters; about 0.02 streams at a
        small model's pace on this machine (the crash harness's fast mode needs kills to land
        mid-reply as well as between turns). ``reply_s``: no reply streams longer than this in
        all (a short turn's worth). ``warning``: the privacy warning it reports, as a server
        entry off this machine would. ``answer``: when the scripted replies run out, the reply
        to a call made from its messages and JSON schema (``"{}"`` without one).
        ``gate``: every chunk waits until it is set, so a test can hold the debate mid-reply (and
        so short of its end) while it sends a command, instead of racing the debate to it.
        ``measured``: each call reports every cost figure an in-process backend measures, made
        from its prompt and reply (:func:`measured_cost`), so the cost tables have all to add up.
        ``stop_s``: how long a reply that is cut off takes to stop, as a model's thread finishes
        the token under way before it hears the cancel. ``scores``: a score call's log-probabilities
        (:func:`even` by default), each candidate taking ``score_s`` seconds. ``context_length``:
        the window the protocols fit their prompts to."""
        super().__init__()
        self.model_id, self.replies, self.answer, self.warning = model_id, list(replies), answer, warning
        self.delay, self.chunk, self.reply_s, self.gate, self.stop_s = delay, chunk, reply_s, gate, stop_s
        self.measured, self.scores, self.score_s, self.context_length = measured, scores, score_s, context_length
        self.prompts: list[list[Message]] = []  # each chat call's messages
        self.options: list[SamplingOptions] = []  # what each chat call asked for (token limits, schema's cost)
        self.calls: list[Call] = []  # every call, chat and score, in order
        self.closes = 0  # how many times aclose() was called: the engines' lifecycle must make it one

    @property
    def privacy_warning(self) -> str | None:
        return self.warning

    async def aclose(self) -> None:
        self.closes += 1
        await super().aclose()

    def prompts_of(self, role: str) -> list[list[Message]]:
        """The messages of every call (chat and score) session ``role`` made, in order."""
        return [messages for name, messages, _ in self.calls if name == role]

    def _new_session(self, name: str) -> Session:
        return _ScriptedSession(self, name)

    def _refuse_if_closed(self) -> None:
        if self.closes:  # as a real backend: a closed model answers no more
            raise BackendError(f"model {self.model_id!r} was closed")

    async def _stream(self, stream: ChatStream, messages: Sequence[Message], reply: str | Fail, options: SamplingOptions,
                      schema: dict[str, Any] | None) -> AsyncIterator[str]:
        text = reply.partial if isinstance(reply, Fail) else reply
        pause = self.delay if self.reply_s is None else min(self.delay, self.reply_s / max(1, math.ceil(len(text) / self.chunk)))
        for i in range(0, len(text), self.chunk):
            if self.gate is not None:
                await self.gate.wait()
            if pause:
                try:
                    await asyncio.sleep(pause)
                except asyncio.CancelledError:
                    if self.stop_s:
                        await asyncio.sleep(self.stop_s)
                    raise
            yield text[i : i + self.chunk]
        if isinstance(reply, Fail):
            raise BackendError(f"model {self.model_id!r}: {reply.message}")
        usage, timing = (measured_cost(messages, text) if self.measured
                         else (Usage(10, 10, max(1, len(text) // 4)), Timing(total_s=0.01, first_token_s=0.001)))
        stream.completion = Completion(text, usage, timing, "stop", self.model_id, options, schema)


class _ScriptedSession(Session):
    backend: ScriptedBackend

    def chat(self, messages: Sequence[Message], options: SamplingOptions | None = None, *,
             schema: Any = None) -> ChatStream:
        backend = self.backend
        backend._refuse_if_closed()
        opts, as_dict = options or SamplingOptions(), schema_of(schema)
        backend.prompts.append(list(messages))
        backend.options.append(opts)
        backend.calls.append((self.name, list(messages), as_dict))
        if backend.replies:  # a test may put a queue of its own here, answering by the prompt
            reply: str | Fail = backend.replies.pop(0)
        else:
            reply = backend.answer(messages, as_dict) if backend.answer else "{}"
        return ChatStream(lambda stream: backend._stream(stream, messages, reply, opts, as_dict), lambda: None)

    async def score(self, messages: Sequence[Message], candidates: Sequence[str], *, prefix: str = "") -> ScoreResult:
        backend = self.backend
        backend._refuse_if_closed()
        backend.calls.append((self.name, list(messages), {"candidates": list(candidates)}))
        if backend.score_s:
            await asyncio.sleep(backend.score_s * len(candidates))
        logprobs = backend.scores(messages, candidates)
        return ScoreResult.of(candidates, logprobs, [1] * len(candidates), Usage(10, 10, 0), Timing(), backend.model_id)


def measured_cost(messages: Sequence[Message], text: str) -> tuple[Usage, Timing]:
    """A call's cost as an in-process backend would report it, every figure measured and each a
    function of the call alone: a token per four characters; the prompt's last message is new,
    the rest cached; waiting, prefill and decode times from the tokens."""
    prompt = max(1, sum(len(m.content) for m in messages) // 4)
    new = min(prompt, max(1, len(messages[-1].content) // 4 if messages else prompt))
    generated = max(1, len(text) // 4)
    wait, prefill, decode = 0.001 * len(messages), 0.0005 * new, 0.02 * generated
    timing = Timing(total_s=wait + prefill + decode, first_token_s=wait + prefill, prompt_s=wait + prefill,
                    wait_s=wait, prefill_s=prefill, decode_s=decode)
    return Usage(prompt, new, generated, prompt - new), timing


def answering(*, delay: float, chunk: int, answer: Answer | None = None,
              gate: asyncio.Event | None = None, stop_s: float = 0.0) -> Callable[[Any, Any], ScriptedBackend]:
    """A ``create_backend`` for :mod:`backends.lifecycle` (set it in place of
    ``backends.lifecycle.create_backend``): every model the app loads is a scripted one that
    answers each call with ``answer`` (:func:`fits` by default), streamed ``chunk`` characters
    every ``delay`` seconds, so an app test runs the app's own lifecycle at a chosen pace."""
    def create(entry: Any, progress: Any) -> ScriptedBackend:
        backend = ScriptedBackend(entry.id, [], delay=delay, chunk=chunk, answer=answer or fits, gate=gate,
                                  stop_s=stop_s)
        backend.entry = entry  # as the lifecycle's backends carry theirs
        return backend

    return create


class OracleBackend(ScriptedBackend):
    """A backend whose reply is a function of the prompt (:func:`reply_to`, or ``reply``): the
    same call always gets the same reply, however many calls this instance has seen. Scores are
    drawn from the prompt's hash (:func:`drawn`); ``delay`` paces each 16-character chunk and
    each scored candidate (0 answers at once)."""

    kind = "oracle"

    def __init__(self, model_id: str, *, delay: float = 0.0, reply_s: float | None = None, reply: Answer | None = None) -> None:
        super().__init__(model_id, delay=delay, chunk=16, answer=reply or reply_to, reply_s=reply_s, scores=drawn,
                         score_s=delay, context_length=16384)


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


def reply_to(messages: Sequence[Message], schema: dict[str, Any] | None) -> str:
    """The oracle's reply: an :func:`instance` of ``schema`` or a sentence, drawn from the call."""
    seed = json.dumps([[m.role, m.content] for m in messages]) + json.dumps(schema, sort_keys=True)
    draw = Draw(seed)
    return json.dumps(instance(schema, draw)) if schema else draw.sentence()


def drawn(messages: Sequence[Message], candidates: Sequence[str]) -> list[float]:
    """Candidates' log-probabilities drawn from the prompt and the candidates (a :data:`Scores`)."""
    draw = Draw(json.dumps([[m.role, m.content] for m in messages]) + json.dumps(list(candidates)))
    return [-draw.int(1, 50) / 10 for _ in candidates]


def fits(messages: Sequence[Message], schema: dict[str, Any] | None) -> str:
    """A reply any protocol accepts: the smallest JSON instance of ``schema`` (the first enum
    value, the lowest number allowed, as many items as required), or, unasked for JSON, a
    sentence that states a confidence (the panel asks for one)."""
    if schema is None:
        return "I weigh the points made so far and hold my view. Confidence: 70"
    return json.dumps(_smallest(schema, schema))


def _settled(node: dict[str, Any], root: dict[str, Any], pick: Callable[[list[Any]], Any]) -> dict[str, Any]:
    """``node`` with its ``$ref`` followed (within ``root``) and its alternatives settled:
    ``pick`` among anyOf's or oneOf's non-null options, allOf's first.

    The walk both instance generators share; each keeps its own rules at the leaves, and neither
    is to be changed lightly, as tests pin their exact outputs (snapshots, the resume contract, the
    crash harness): :func:`_smallest` is the least a schema allows (the first option, required
    properties only, minimum counts and numbers), while :func:`instance` draws every choice, the
    order of its draws being part of its output."""
    while True:
        if "$ref" in node:
            target: Any = root
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target[part]
            node = target
            continue
        key = next((k for k in ("anyOf", "oneOf", "allOf") if k in node), None)
        if key is None:
            return node
        options = [o for o in node[key] if o.get("type") != "null"] or node[key]
        node = options[0] if key == "allOf" else pick(options)


def _smallest(node: dict[str, Any], root: dict[str, Any]) -> Any:
    node = _settled(node, root, lambda options: options[0])
    if "enum" in node:
        return node["enum"][0]
    if "const" in node:
        return node["const"]
    kind = node.get("type", "object")
    if isinstance(kind, list):
        kind = next(k for k in kind if k != "null")
    if kind == "object":
        props = node.get("properties", {})
        return {name: _smallest(props[name], root) for name in node.get("required", props)}
    if kind == "array":
        return [_smallest(node.get("items", {"type": "string"}), root) for _ in range(max(1, node.get("minItems", 1)))]
    if kind == "integer":
        return int(node.get("minimum", 1))
    if kind == "number":
        return float(node.get("minimum", 0.5))
    if kind == "boolean":
        return True
    return "a fair point"[: node.get("maxLength", 12)]


def instance(schema: dict[str, Any], draw: Draw, root: dict[str, Any] | None = None) -> Any:
    """A JSON value valid under ``schema`` (the subset pydantic and the protocols emit), every
    choice (option, enum member, number in bounds, list length, text) taken from ``draw``."""
    root = schema if root is None else root
    node = _settled(schema, root, draw.pick)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return draw.pick(node["enum"])
    kind = node.get("type", "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object":
        return {name: instance(sub, draw, root) for name, sub in node.get("properties", {}).items()}
    if kind == "array":
        low = int(node.get("minItems", 1))
        high = int(node.get("maxItems", max(low, 3)))
        item = node.get("items", {"type": "string"})
        return [instance(item, draw, root) for _ in range(draw.int(low, max(low, min(high, 3))))]
    if kind in ("integer", "number"):
        low = node.get("minimum", node.get("exclusiveMinimum", 0))
        high = node.get("maximum", node.get("exclusiveMaximum", 10))
        if kind == "integer":
            return draw.int(math.ceil(low), math.floor(high))
        return round(low + (high - low) * draw.int(1, 99) / 100, 3)
    if kind == "boolean":
        return bool(draw.int(0, 1))
    text = draw.sentence()
    limit = node.get("maxLength")
    return text[:limit] if limit else text
