"""A debater or judge: a role played by one backend session, and how it takes a turn.

Every protocol speaks through :class:`Agent`, so streaming, cost accounting and the
``CallRecord`` of each model call are done the same way everywhere.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import BaseModel

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
from protocols.core.events import CallRecord, ModelCalled, Participant, TokenDelta, TurnStarted
from protocols.core.replies import Reply, prompt_sha256, record, replayed


@dataclass
class Agent:
    """One participant played by a model. ``session`` defaults to one KV cache per role."""

    role: str
    backend: Backend
    options: SamplingOptions
    label: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    #: The backend session (KV cache) this agent speaks through; the role by default. Runs
    #: that share a backend at the same time (the benchmark's parallel cases) give each
    #: agent its own key.
    session_key: str = ""

    @property
    def model_id(self) -> str:
        return self.backend.model_id

    @property
    def session(self) -> Session:
        return self.backend.session(self.session_key or self.role)

    def participant(self) -> Participant:
        return Participant(
            role=self.role,
            model_id=self.model_id,
            backend=self.backend.kind,
            options=asdict(self.options),
            details={**self.backend.describe(), **self.details},
        )

    def turn(
        self,
        messages: Sequence[Message],
        *,
        schema: type[BaseModel] | dict[str, Any] | None = None,
        options: SamplingOptions | None = None,
    ) -> Turn:
        """Prepare a turn; iterate :meth:`Turn.events` to run it."""
        return Turn(self, list(messages), schema, options or self.options)

    def fit(self, messages: list[Message], max_tokens: int) -> Fit:
        """``messages`` shortened to fit the context with room for ``max_tokens`` of reply, and
        the notes that say what was left out.

        Long debates outgrow a window: the oldest exchanges after the opening (system prompt and
        first request) are dropped, two messages at a time, and the model is told so (a line
        added to the first request, so that user and assistant turns still alternate, as the
        templates of Gemma and Mistral insist). The newest turns, which the agent must answer,
        always stay. Every drop is a note (:attr:`Fit.notes`) that the caller puts on its turn
        or judgement, so the journal, the app and the export say what the model did not see; a
        conversation that does not fit even at its shortest is a note too.
        """
        budget = self.backend.context_length - max_tokens
        if self.session.count_tokens(messages) <= budget:
            return Fit(messages)
        shorter, dropped = messages, 0
        for dropped, shorter in _shorter(messages):  # noqa: B007 - the last one tried is read after the loop
            if self.session.count_tokens(shorter) <= budget:
                break
        notes: list[str] = []
        if dropped:
            chars = sum(len(m.content) for m in messages[_HEAD:_HEAD + dropped])
            notes.append(f"dropped the {dropped} oldest messages after the opening (messages {_HEAD + 1}–{_HEAD + dropped} of "
                         f"{len(messages)}, {chars:,} characters) from {self.role}'s conversation to fit its context window "
                         f"({self.backend.context_length:,} tokens, {max_tokens:,} kept for the reply); the model was told "
                         "that earlier rounds are omitted")
        if self.session.count_tokens(shorter) > budget:
            notes.append(f"{self.role}'s conversation does not fit its context window ({self.backend.context_length:,} tokens, "
                         f"{max_tokens:,} kept for the reply) even with only its opening and newest turns: the model may fail "
                         "or cut its reply; raise context_length in models.toml or lower the reply limits")
        return Fit(shorter, tuple(notes))

    @staticmethod
    def shortest(messages: list[Message]) -> list[Message]:
        """The least of ``messages`` that :meth:`fit` may keep: the opening, the note and the
        newest exchange. What a new request is fitted against (:mod:`protocols.core.fitting`), so
        that the request fits however many older exchanges must go."""
        candidates = _shorter(messages)
        return candidates[-1][1] if candidates else messages

    async def ask(
        self,
        messages: Sequence[Message],
        *,
        purpose: str,
        schema: type[BaseModel] | dict[str, Any] | None = None,
        options: SamplingOptions | None = None,
    ) -> tuple[Completion, CallRecord]:
        """A call that is not shown as a debate turn (a judge's score, an analysis).

        A call that fails carries its journal record on the error (``failed_call``): the
        driver (:func:`tui.runner.drive`) writes it before marking the debate failed.
        """
        opts = options or self.options
        sha = prompt_sha256("chat", messages, schema=schema)
        hit = replayed(self.role, "chat", sha)
        if hit is not None:  # a resumed run: answered as journalled, the model is not asked again
            completion = completion_of(hit, opts, schema)
            _recall(self.session, completion)
            return completion, call_record(self.role, purpose, completion)
        started = time.perf_counter()
        try:
            completion = await self.session.complete(messages, opts, schema=schema)
        except BackendError as exc:
            exc.failed_call = failed_call_record(self.role, self.model_id, purpose, opts, started, exc)  # type: ignore[attr-defined]  # backends know no CallRecord: the record rides on the error
            raise
        record(reply_of(self.role, sha, completion))
        return completion, call_record(self.role, purpose, completion)

    async def score(self, messages: Sequence[Message], candidates: Sequence[str]) -> tuple[ScoreResult, CallRecord]:
        """Log-likelihood scores of ``candidates`` after ``messages`` (one scoring call), with
        its journal record; replayed from the journal when a resumed run reaches it again."""
        sha = prompt_sha256("score", messages, extra=list(candidates))
        hit = replayed(self.role, "score", sha)
        if hit is not None and hit.reply is not None:
            data = json.loads(hit.reply)
            d = hit.details
            result = ScoreResult.of(candidates, [float(v) for v in data["logprobs"]], [int(n) for n in data["token_counts"]],
                                    Usage(**d.get("usage", {})),
                                    Timing(total_s=d.get("total_s", 0.0), wait_s=d.get("wait_s"), prefill_s=d.get("prefill_s"),
                                           decode_s=d.get("decode_s")),
                                    str(d.get("model_id") or self.model_id))
        else:
            result = await self.session.score(messages, list(candidates))
            t = result.timing
            record(Reply(self.role, "score", sha, json.dumps({"logprobs": result.logprobs, "token_counts": result.token_counts}),
                         {"usage": asdict(result.usage), "total_s": t.total_s, "wait_s": t.wait_s, "prefill_s": t.prefill_s,
                          "decode_s": t.decode_s, "model_id": result.model_id}))
        return result, score_call_record(self.role, result)


@dataclass(frozen=True)
class Fit:
    """What :meth:`Agent.fit` sends (``messages``) and what it says of it: each drop of older
    messages, or a conversation too long even at its shortest (``notes``; empty when the
    conversation went whole). The notes belong on the journal's record of the call's turn or
    judgement (``parse_notes``, ``reasons["notes"]``)."""

    messages: list[Message]
    notes: tuple[str, ...] = ()


#: What the model is told when older messages are left out (added to its first request).
ELIDED = "(Earlier rounds are omitted to fit the context window.)"
#: The opening that always stays: the system prompt and the first request.
_HEAD = 2


def _shorter(messages: list[Message]) -> list[tuple[int, list[Message]]]:
    """``messages`` with ever more of the oldest exchanges after the opening (system prompt
    and first request) left out, two messages at a time, down to the newest one or two, each
    with how many messages it leaves out. The note :data:`ELIDED` ends the opening's last user
    message rather than standing as a message of its own: two user turns in a row are refused
    by chat templates that require alternation (Gemma, Mistral)."""
    head, tail = messages[:_HEAD], messages[_HEAD:]
    at = max((i for i, m in enumerate(head) if m.role == "user"), default=None)
    if at is not None:
        head = [*head[:at], Message("user", f"{head[at].content}\n\n{ELIDED}"), *head[at + 1:]]
        return [(k, [*head, *tail[k:]]) for k in range(2, len(tail), 2)]
    return [(k, [*head, Message("user", ELIDED), *tail[k:]]) for k in range(2, len(tail), 2)]


def agents_for(roles: Mapping[str, str], backends: Mapping[str, Backend], *, seed: int | None = None) -> dict[str, Agent]:
    """Role → its agent, for ``roles`` (role → model id) on ``backends`` (model id → backend,
    as :meth:`backends.lifecycle.Engines.load` returns them).

    Roles on one model share its backend, each through its own session (KV cache); each samples
    as its model's registry entry says, with ``seed`` where one is given. Which role plays on
    which model is decided here, in the protocols' vocabulary, and not where engines are loaded:
    backends know nothing of debates.
    """
    return {role: Agent(role, backends[model_id], backends[model_id].entry.default_options().merged(seed=seed))
            for role, model_id in roles.items()}


class Turn:
    """One streamed reply. After :meth:`events` is exhausted, :attr:`completion` is set."""

    def __init__(
        self,
        agent: Agent,
        messages: list[Message],
        schema: type[BaseModel] | dict[str, Any] | None,
        options: SamplingOptions,
    ) -> None:
        self.agent = agent
        self.messages = messages
        self.schema = schema
        self.options = options
        self.completion: Completion | None = None
        self._stream: ChatStream | None = None

    async def events(self, debate_id: str, *, phase: str, round: int, kind: str) -> AsyncIterator[TurnStarted | TokenDelta | ModelCalled]:
        """Stream the reply. A backend failure is first reported as a :class:`ModelCalled`
        whose record holds the error (so the journal keeps the failed call), then re-raised."""
        yield TurnStarted(debate_id, self.agent.role, self.agent.model_id, phase, round, kind)
        sha = prompt_sha256("chat", self.messages, schema=self.schema)
        hit = replayed(self.agent.role, "chat", sha)
        if hit is not None:  # a resumed run: the journalled reply, not asked again
            self.completion = completion_of(hit, self.options, self.schema)
            _recall(self.agent.session, self.completion)
            if self.completion.text:
                yield TokenDelta(debate_id, self.agent.role, self.completion.text)
            return
        started = time.perf_counter()
        try:
            stream = self.agent.session.chat(self.messages, self.options, schema=self.schema)
            self._stream = stream
            async for delta in stream:
                yield TokenDelta(debate_id, self.agent.role, delta)
        except BackendError as exc:
            failed = failed_call_record(self.agent.role, self.agent.model_id, "turn", self.options, started, exc)
            yield ModelCalled(debate_id, failed, round)
            raise
        self.completion = stream.completion
        if self.completion is not None:
            record(reply_of(self.agent.role, sha, self.completion))

    def cancel(self) -> None:
        if self._stream is not None:
            self._stream.cancel()

    def call(self, purpose: str = "turn") -> CallRecord:
        assert self.completion is not None, "the turn has not finished"
        return call_record(self.agent.role, purpose, self.completion)


def reply_of(role: str, sha: str, completion: Completion) -> Reply:
    """What the journal keeps of a finished chat call to answer it again on resuming: its text,
    cost and, where the backend has them, the tokens it was generated as."""
    t = completion.timing
    details: dict[str, Any] = {
        "usage": asdict(completion.usage), "finish_reason": completion.finish_reason, "model_id": completion.model_id,
        "total_s": t.total_s, "first_token_s": t.first_token_s, "wait_s": t.wait_s, "prefill_s": t.prefill_s,
        "decode_s": t.decode_s}
    if completion.tokens is not None:
        details["tokens"] = list(completion.tokens)
    return Reply(role, "chat", sha, completion.text, details)


def _recall(session: Session, completion: Completion) -> None:
    """Give a replayed reply's tokens back to the session that made it (see :meth:`Session.recall`)."""
    if completion.tokens is not None and completion.text:
        session.recall(completion.text, completion.tokens)


def completion_of(reply: Reply, options: SamplingOptions, schema: type[BaseModel] | dict[str, Any] | None) -> Completion:
    """The completion a journalled reply stands for, with the cost it had when it was made."""
    d = reply.details
    return Completion(text=reply.reply or "", usage=Usage(**d.get("usage", {})),
                      timing=Timing(total_s=d.get("total_s", 0.0), first_token_s=d.get("first_token_s"), wait_s=d.get("wait_s"),
                                    prefill_s=d.get("prefill_s"), decode_s=d.get("decode_s")),
                      finish_reason=d.get("finish_reason", "stop"), model_id=str(d.get("model_id") or ""),
                      options=options, schema=schema_of(schema), tokens=_tokens(d.get("tokens")))


def _tokens(value: Any) -> tuple[int, ...] | None:
    """A journalled reply's token ids, or None where the journal holds none or not a list of
    integers (read from the file, not trusted; the backend checks them against its vocabulary)."""
    if isinstance(value, list) and all(type(t) is int for t in value):
        return tuple(value)
    return None


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def call_record(role: str, purpose: str, completion: Completion) -> CallRecord:
    """The journal's record of one model call."""
    return CallRecord(
        role=role,
        model_id=completion.model_id,
        purpose=purpose,
        options=asdict(completion.options),
        prompt_tokens=completion.usage.prompt_tokens,
        prompt_tokens_evaluated=completion.usage.prompt_tokens_evaluated,
        completion_tokens=completion.usage.completion_tokens,
        duration_s=round(completion.timing.total_s, 4),
        first_token_s=_seconds(completion.timing.first_token_s),
        finish_reason=completion.finish_reason,
        cached_tokens=completion.usage.cached_tokens,
        wait_s=_seconds(completion.timing.wait_s),
        prefill_s=_seconds(completion.timing.prefill_s),
        decode_s=_seconds(completion.timing.decode_s),
    )



def failed_call_record(
    role: str, model_id: str, purpose: str, options: SamplingOptions, started: float, exc: BaseException
) -> CallRecord:
    """The journal's record of a call that failed: no tokens counted, the error kept."""
    return CallRecord(
        role=role,
        model_id=model_id,
        purpose=purpose,
        options=asdict(options),
        prompt_tokens=0,
        prompt_tokens_evaluated=0,
        completion_tokens=0,
        duration_s=round(time.perf_counter() - started, 4),
        finish_reason="error",
        error=f"{type(exc).__name__}: {exc}",
    )


def score_call_record(role: str, result: ScoreResult) -> CallRecord:
    """The journal's record of one log-likelihood scoring call."""
    return CallRecord(
        role=role,
        model_id=result.model_id,
        purpose="score",
        options={"candidates": len(result.candidates)},
        prompt_tokens=result.usage.prompt_tokens,
        prompt_tokens_evaluated=result.usage.prompt_tokens_evaluated,
        completion_tokens=0,
        duration_s=round(result.timing.total_s, 4),
        cached_tokens=result.usage.cached_tokens,
        wait_s=_seconds(result.timing.wait_s),
        prefill_s=_seconds(result.timing.prefill_s),
        decode_s=_seconds(result.timing.decode_s),
    )
