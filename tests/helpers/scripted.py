"""A backend that replies with scripted text, for protocol tests that need *exact* bad output.

Why a stand-in here: the protocol tests below must feed specific malformed replies (prose
instead of JSON, negative probabilities, unknown labels, empty arrays) and check that each is
repaired or rejected with a recorded reason. A real model cannot be made to emit a given bad
string on demand; everything else in the suite runs the real bundled models.

``delay`` paces the stream (seconds between chunks of ``chunk`` characters) so that an app test
or benchmark sees a turn being written at a model's pace, not delivered at once.
"""

from __future__ import annotations

import asyncio
import json
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


@dataclass(frozen=True)
class Fail:
    """A scripted call that streams ``partial`` and then fails as a backend would (server gone)."""

    message: str
    partial: str = ""


class ScriptedBackend(Backend):
    kind = "scripted"

    def __init__(self, model_id: str, replies: Sequence[str | Fail], *, delay: float = 0.0, chunk: int = 7,
                 warning: str | None = None, answer: Callable[[Sequence[Message], dict[str, Any] | None], str] | None = None,
                 gate: asyncio.Event | None = None, measured: bool = False, stop_s: float = 0.0) -> None:
        """``delay``: seconds between chunks of ``chunk`` characters; about 0.02 streams at a
        small model's pace on this machine (the crash harness's fast mode needs kills to land
        mid-reply as well as between turns). ``warning``: the privacy warning it reports, as a
        server entry off this machine would. ``answer``: when the scripted replies run out, the
        reply to a call made from its messages and JSON schema (:func:`fits`: any protocol runs).
        ``gate``: every chunk waits until it is set, so a test can hold the debate mid-reply (and
        so short of its end) while it sends a command, instead of racing the debate to it.
        ``measured``: each call reports every cost figure an in-process backend measures, made
        from its prompt and reply (:func:`measured_cost`), so the cost tables have all to add up.
        ``stop_s``: how long a reply that is cut off takes to stop, as a model's thread finishes
        the token under way before it hears the cancel."""
        super().__init__()
        self.measured = measured
        self.stop_s = stop_s
        self.answer = answer
        self.model_id = model_id
        self.replies = list(replies)
        self.delay = delay
        self.chunk = chunk
        self.warning = warning
        self.gate = gate
        self.prompts: list[list[Message]] = []
        self.options: list[SamplingOptions] = []  # what each call asked for (token limits, schema's cost)
        self.closes = 0  # how many times aclose() was called: the engines' lifecycle must make it one

    @property
    def privacy_warning(self) -> str | None:
        return self.warning

    async def aclose(self) -> None:
        self.closes += 1
        await super().aclose()

    def _new_session(self, name: str) -> Session:
        return _ScriptedSession(self, name)


class _ScriptedSession(Session):
    def __init__(self, backend: ScriptedBackend, name: str) -> None:
        self.backend = backend
        self.name = name

    def chat(self, messages: Sequence[Message], options: SamplingOptions | None = None, *,
             schema: Any = None) -> ChatStream:
        if self.backend.closes:  # as a real backend: a closed model answers no more
            raise BackendError(f"model {self.backend.model_id!r} was closed")
        opts = options or SamplingOptions()
        self.backend.prompts.append(list(messages))
        self.backend.options.append(opts)
        if self.backend.replies:
            reply: str | Fail = self.backend.replies.pop(0)
        else:
            reply = self.backend.answer(messages, schema_of(schema)) if self.backend.answer else "{}"
        text = reply.partial if isinstance(reply, Fail) else reply

        async def produce(stream: ChatStream) -> AsyncIterator[str]:
            step = self.backend.chunk
            for i in range(0, len(text), step):
                if self.backend.gate is not None:
                    await self.backend.gate.wait()
                if self.backend.delay:
                    try:
                        await asyncio.sleep(self.backend.delay)
                    except asyncio.CancelledError:
                        if self.backend.stop_s:
                            await asyncio.sleep(self.backend.stop_s)
                        raise
                yield text[i : i + step]
            if isinstance(reply, Fail):
                raise BackendError(f"model {self.backend.model_id!r}: {reply.message}")
            usage, timing = (measured_cost(messages, text) if self.backend.measured
                             else (Usage(10, 10, max(1, len(text) // 4)), Timing(total_s=0.01, first_token_s=0.001)))
            stream.completion = Completion(text, usage, timing, "stop", self.backend.model_id, opts, schema_of(schema))

        return ChatStream(produce, lambda: None)

    async def score(self, messages: Sequence[Message], candidates: Sequence[str], *, prefix: str = "") -> ScoreResult:
        if self.backend.closes:
            raise BackendError(f"model {self.backend.model_id!r} was closed")
        n = len(candidates)
        return ScoreResult(list(candidates), [-1.0] * n, [1 / n] * n, [1] * n, Usage(10, 10, 0), Timing(), self.backend.model_id)


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


Answer = Callable[[Sequence[Message], dict[str, Any] | None], str]


def answering(*, delay: float, chunk: int, answer: Answer | None = None,
              gate: asyncio.Event | None = None, stop_s: float = 0.0) -> Callable[[Any, Any], ScriptedBackend]:
    """A ``create_backend`` for :mod:`backends.lifecycle` (set it in place of
    ``backends.lifecycle.create_backend``): every model the app loads is a scripted one that
    answers each call with ``answer`` (:func:`fits` by default), streamed ``chunk`` characters
    every ``delay`` seconds, so an app test runs the app's own lifecycle at a chosen pace."""
    def create(entry: Any, progress: Any) -> ScriptedBackend:
        backend = ScriptedBackend(entry.id, [], delay=delay, chunk=chunk, answer=answer or fits, gate=gate,
                                  stop_s=stop_s)
        backend.entry = entry  # type: ignore[attr-defined]  # as the lifecycle's backends carry theirs
        return backend

    return create


def fits(messages: Sequence[Message], schema: dict[str, Any] | None) -> str:
    """A reply any protocol accepts: the smallest JSON instance of ``schema`` (the first enum
    value, the lowest number allowed, as many items as required), or, unasked for JSON, a
    sentence that states a confidence (the panel asks for one)."""
    if schema is None:
        return "I weigh the points made so far and hold my view. Confidence: 70"
    return json.dumps(_instance(schema, schema))


def _instance(node: dict[str, Any], root: dict[str, Any]) -> Any:
    if "$ref" in node:
        target: Any = root
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return _instance(target, root)
    if "enum" in node:
        return node["enum"][0]
    if "const" in node:
        return node["const"]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node:
            options = [o for o in node[key] if o.get("type") != "null"] or node[key]
            return _instance(options[0], root)
    kind = node.get("type", "object")
    if isinstance(kind, list):
        kind = next(k for k in kind if k != "null")
    if kind == "object":
        props = node.get("properties", {})
        return {name: _instance(props[name], root) for name in node.get("required", props)}
    if kind == "array":
        return [_instance(node.get("items", {"type": "string"}), root) for _ in range(max(1, node.get("minItems", 1)))]
    if kind == "integer":
        return int(node.get("minimum", 1))
    if kind == "number":
        return float(node.get("minimum", 0.5))
    if kind == "boolean":
        return True
    return "a fair point"[: node.get("maxLength", 12)]
