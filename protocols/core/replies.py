"""What a run was answered, kept so that a resumed run is answered the same (see
:mod:`protocols.core.replay` for why and how resuming works).

Every model call (:class:`protocols.core.agents.Agent`) and every answer of the person
(:func:`person_answer`) goes through here: while a resume replays a journal (:func:`replaying`),
a call whose prompt hashes to a recorded reply of the same role is answered from the record;
otherwise it runs live and its reply goes to the outbox of the run's driver
(:func:`recording`), which journals it before the next event. Both are context variables, set
by the one driver every run goes through and by the one resume every protocol uses, so no
protocol passes them around.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from backends.base import Message, schema_of

T = TypeVar("T")
E = TypeVar("E")
ReplyKind = Literal["chat", "score", "person"]

#: The journal's role for the person's answers (the seat of deliberation and humanloop).
PERSON_ROLE = "human"


@dataclass(frozen=True)
class Reply:
    """One answer a run received: a model's reply (``chat``: its text; ``score``: its scores as
    JSON) or the person's (``person``: JSON). ``details`` holds what rebuilds the call's record
    (tokens, timing, finish reason)."""

    role: str
    kind: ReplyKind
    prompt_sha256: str
    reply: str | None
    details: dict[str, Any] = field(default_factory=dict)


def prompt_sha256(kind: ReplyKind, messages: Sequence[Message] | str, *, schema: Any = None,
                  extra: Any = None) -> str:
    """The SHA-256 of what was asked: the messages (or the person's prompt), the reply's schema
    and, for a score, the candidates. Equal hashes mean the same prompt, message for message."""
    asked = messages if isinstance(messages, str) else [[m.role, m.content] for m in messages]
    payload = {"kind": kind, "asked": asked, "schema": schema_of(schema), "extra": extra}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- recording: replies reach the journal the moment they exist -------------------------------

_OUTBOX: ContextVar[list[Reply] | None] = ContextVar("symposium_replies_outbox", default=None)
_REPLAY: ContextVar[ReplayLog | None] = ContextVar("symposium_replay_log", default=None)


@contextmanager
def recording() -> Iterator[list[Reply]]:
    """Collect every live reply of the run iterated inside the block (the driver writes them to
    the journal before each event, so a reply is kept even when its turn is cut off)."""
    outbox: list[Reply] = []
    token = _OUTBOX.set(outbox)
    try:
        yield outbox
    finally:
        _OUTBOX.reset(token)


def record(reply: Reply) -> None:
    """Called where a live call or a person's answer finishes."""
    outbox = _OUTBOX.get()
    if outbox is not None:
        outbox.append(reply)


async def side_by_side(*calls: Awaitable[T]) -> list[T]:
    """Run calls that do not depend on each other at once, and return their results in order.

    Why: on one llama.cpp model such calls are decoded together (``backends/lockstep.py``), on
    a server they are in flight together, so a judge panel costs about one judgement. Their
    replies reach the journal in the order of ``calls``, whatever order they finish in, so a
    run's journal does not depend on timing; a reply that finished before the others were cut
    off is still journalled."""
    parent = _OUTBOX.get()
    boxes: list[list[Reply]] = [[] for _ in calls]

    async def one(box: list[Reply], call: Awaitable[T]) -> T:
        token = _OUTBOX.set(box if parent is not None else None)  # this task's own context
        try:
            return await call
        finally:
            _OUTBOX.reset(token)

    try:
        return list(await asyncio.gather(*(one(box, call) for box, call in zip(boxes, calls, strict=True))))
    finally:
        if parent is not None:
            for box in boxes:
                parent.extend(box)


async def streams_side_by_side(*streams: AsyncIterator[E]) -> list[list[E]]:
    """Run event streams that do not depend on each other at once (each a judge's call and the
    events it makes), and return each one's events, in the order of ``streams``. The events are
    given back whole, after all have run: the caller yields them in that order, so the journal
    reads as if they had run one after another."""

    async def collect(stream: AsyncIterator[E]) -> list[E]:
        return [event async for event in stream]

    return await side_by_side(*(collect(stream) for stream in streams))


def replayed(role: str, kind: ReplyKind, sha: str) -> Reply | None:
    """The recorded answer to this prompt when a resume is replaying one, else ``None``."""
    log = _REPLAY.get()
    return None if log is None else log.take(role, kind, sha)


async def person_answer(prompt: str, ask: Callable[[], Awaitable[T]], *, encode: Callable[[T], Any] = lambda v: v,
                        decode: Callable[[Any], T] = lambda v: v) -> T:
    """The person's answer to ``prompt``: from the journal when resuming, else asked live and
    recorded. ``encode``/``decode`` turn an answer into JSON and back (a list of subtopics …)."""
    sha = prompt_sha256("person", prompt)
    hit = replayed(PERSON_ROLE, "person", sha)
    if hit is not None:
        return decode(json.loads(hit.reply) if hit.reply is not None else None)
    answer = await ask()
    record(Reply(PERSON_ROLE, "person", sha, json.dumps(encode(answer), ensure_ascii=False)))
    return answer


class ReplayLog:
    """The recorded replies of one debate, taken in order per role and prompt.

    A reply is matched by role and prompt hash, oldest first, so replies of calls that ran side
    by side (a judge panel, a jury) are found whatever order they finish in now. A prompt with
    no recorded reply is asked live: it is a call the interruption cut off."""

    def __init__(self, replies: Sequence[Reply]) -> None:
        self._left: list[Reply] = list(replies)

    def take(self, role: str, kind: ReplyKind, sha: str) -> Reply | None:
        for i, reply in enumerate(self._left):
            if reply.role == role and reply.kind == kind and reply.prompt_sha256 == sha:
                return self._left.pop(i)
        return None

    @property
    def left(self) -> list[Reply]:
        return list(self._left)


@contextmanager
def replaying(log: ReplayLog) -> Iterator[None]:
    """Answer the calls made inside the block from ``log`` where it holds their replies. The
    caller must not yield inside the block (a context variable set across a yield would leak
    into the consumer's code)."""
    token = _REPLAY.set(log)
    try:
        yield
    finally:
        _REPLAY.reset(token)
