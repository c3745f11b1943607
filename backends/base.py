"""The one interface every model backend implements.

A backend wraps one model (one entry of ``models.toml``) on one serving technology. It knows
nothing about debates: it streams chat replies, constrains them to a JSON schema, reports what
each call cost, and scores candidate continuations by log-likelihood.

Debates need one *conversation context* per agent, so that an agent's growing transcript is
evaluated once rather than re-read from the start every turn. That is a :class:`Session`:
``backend.session("agent-a")`` returns the same session for the same name, and each session
keeps its own KV cache (llama.cpp) or relies on the server's prefix cache (vLLM, llama-server).
"""

from __future__ import annotations

import asyncio
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel

# Defined in the leaf module :mod:`backends.values` and re-exported: callers import them from here.
from .values import Message as Message
from .values import Role as Role
from .values import SamplingOptions as SamplingOptions

FinishReason = Literal["stop", "length", "cancelled", "error"]
#: How a producer hands one piece of reply text to the event loop (see :class:`Generation`).
Emit = Callable[[str], None]


@dataclass
class Usage:
    """Token accounting for one call.

    ``prompt_tokens`` is the length of the whole prompt; ``prompt_tokens_evaluated`` is how many
    tokens the model actually had to run for it (the rest came from the session's cache; for a
    scoring call, also the candidates' tokens). For remote servers that do not report cache hits
    the two are equal. ``cached_tokens``: the prompt's tokens taken from a cache instead of run,
    as the backend or server counts them; ``None`` where it does not say (a server that reports
    no cache hits), so that a reuse nobody measured is never shown as none.
    """

    prompt_tokens: int = 0
    prompt_tokens_evaluated: int = 0
    completion_tokens: int = 0
    cached_tokens: int | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class Timing:
    """Wall-clock timing of one call, in seconds from its start.

    ``prompt_s``: until the prompt was evaluated (a server's: until its first token);
    ``first_token_s`` and ``total_s`` as named. Where a call's time went, where the backend
    sees it (``None`` where it does not: a server's own queue and phases are out of sight
    unless it reports them):

    * ``wait_s``: waiting for the model before any work on this call began — behind another
      agent's call on the same model (the model's lock, a free request slot);
    * ``prefill_s``: evaluating the prompt (for a scoring call, the candidates too);
    * ``decode_s``: from the prompt's end to the reply's end: generating, including the steps
      shared with other replies decoded together (lockstep) and the prompts of replies that
      joined meanwhile.
    """

    started_at: float = field(default_factory=time.time)
    prompt_s: float = 0.0
    first_token_s: float | None = None
    total_s: float = 0.0
    wait_s: float | None = None
    prefill_s: float | None = None
    decode_s: float | None = None


@dataclass
class Completion:
    """The finished result of one chat call."""

    text: str
    usage: Usage
    timing: Timing
    finish_reason: FinishReason
    model_id: str
    options: SamplingOptions
    schema: dict[str, Any] | None = None
    #: The reply's exact token ids, where the backend feeds a reply back as the tokens it
    #: generated rather than as its text re-tokenized (llama.cpp; ``None`` elsewhere). They are
    #: journalled so that a resumed session gets them back (:meth:`Session.recall`): re-tokenizing
    #: a generated reply can give other tokens (" \n" generated as two, read back as one), and
    #: then every later prompt of that agent differs from the uninterrupted run's.
    tokens: tuple[int, ...] | None = None

    @property
    def decode_tokens_per_s(self) -> float | None:
        start = self.timing.first_token_s
        if start is None or self.usage.completion_tokens < 2:
            return None
        span = self.timing.total_s - start
        return (self.usage.completion_tokens - 1) / span if span > 0 else None


@dataclass
class ScoreResult:
    """Log-likelihood scores of candidate continuations of one prompt.

    ``logprobs[i]`` is the summed log-probability of candidate ``i`` (natural log);
    ``probs`` is the softmax of those over the candidate set, so it sums to 1.
    """

    candidates: list[str]
    logprobs: list[float]
    probs: list[float]
    token_counts: list[int]
    usage: Usage
    timing: Timing
    model_id: str

    @classmethod
    def of(cls, candidates: Sequence[str], logprobs: list[float], token_counts: list[int], usage: Usage, timing: Timing,
           model_id: str) -> ScoreResult:
        """The result for summed ``logprobs``, with ``probs`` their softmax over the candidates
        (shifted by the largest, so long candidates' tiny probabilities do not underflow)."""
        import numpy as np  # here, not at the top: the journal commands import this module and need no numpy

        lp = np.array(logprobs)
        probs = np.exp(lp - lp.max())
        probs /= probs.sum()
        return cls(list(candidates), logprobs, probs.tolist(), token_counts, usage, timing, model_id)

    def ranked(self) -> list[tuple[str, float]]:
        return sorted(zip(self.candidates, self.probs), key=lambda cp: cp[1], reverse=True)


class BackendError(RuntimeError):
    """A model could not be loaded or called. The message says which model and what to do."""


class ContextOverflow(BackendError):
    """The prompt plus the reply would not fit in the model's context window: the caller can
    fit the prompt and try again (``Agent.fit`` does), unlike other failures."""


#: How servers and engines word "the prompt does not fit the context" (vLLM, llama-server,
#: OpenAI-compatible servers, Ollama), lower-cased.
_OVERFLOW_WORDS = ("maximum context length", "context_length_exceeded", "longer than the maximum model length",
                   "exceeds the available context size", "exceed context window", "prompt is too long")


def context_overflow(model_id: str, detail: str) -> ContextOverflow | None:
    """A :class:`ContextOverflow` when ``detail`` (a server's or an engine's own words) says the
    prompt did not fit, so that every backend raises the same error for the same cause."""
    if not any(words in detail.lower() for words in _OVERFLOW_WORDS):
        return None
    return ContextOverflow(f"model {model_id!r}: the prompt does not fit the model's context ({detail}); "
                           "raise context_length in models.toml (and the server's own context size) or shorten the transcript")


class BackendUnavailable(BackendError):
    """The backend's runtime is missing here (no CUDA for vLLM, server down, file missing)."""


class NotSupported(BackendError):
    """The backend or server cannot do this (e.g. a server without prompt log-probabilities)."""


class ChatStream:
    """An in-flight chat call: iterate it for text deltas, then read :attr:`completion`.

    ``cancel()`` stops generation at the next token; the completion then has
    ``finish_reason == "cancelled"`` and holds the text produced so far. The backend's
    producer receives the stream itself so it can set :attr:`completion` when it finishes.
    """

    def __init__(
        self,
        producer: Callable[[ChatStream], AsyncIterator[str]],
        cancel: Callable[[], None],
    ) -> None:
        self._cancel = cancel
        self.completion: Completion | None = None
        self._source = producer(self)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._source

    def cancel(self) -> None:
        self._cancel()

    async def collect(self) -> Completion:
        """Drain the stream and return the completion."""
        async for _ in self._source:
            pass
        assert self.completion is not None, "backend finished a stream without a completion"
        return self.completion


class Generation:
    """One chat call from its start to its :class:`Completion`, the same way on every backend.

    Why one class: the four backends each timed replies, honoured ``cancel()``, handed text from
    their producer (a worker thread, an HTTP reader, an engine's stream) to the event loop and
    cleaned up after a consumer that walked away, and each copy drifted a little from the
    others. Here the clock (:attr:`timing`), the cancel flag and the hand-over live once; a
    backend only produces text and says what the call cost.

    A backend's producer is either a blocking function run in a worker thread
    (:meth:`in_thread`) or a coroutine run as a task (:meth:`in_task`); it receives an
    :data:`Emit` for the text, checks :attr:`cancelled` between tokens, and returns
    :meth:`finish`'s completion.
    """

    def __init__(self, model_id: str, options: SamplingOptions, schema: dict[str, Any] | None = None) -> None:
        self.model_id = model_id
        self.options = options
        self.schema = schema
        self.timing = Timing()
        self._started = time.perf_counter()
        self._prompt_timed = False
        self._queued = 0.0
        self._began: float | None = None
        self._cancel = threading.Event()
        self._on_cancel: list[Callable[[], None]] = []

    # -- cancellation (from any thread) -----------------------------------------------------

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        """Stop at the next token; the completion keeps the text so far."""
        self._cancel.set()
        for hook in list(self._on_cancel):
            hook()

    def on_cancel(self, hook: Callable[[], None]) -> None:
        """Also call ``hook`` on cancellation (at once if already cancelled): for producers that
        wait on something other than the next token, such as an HTTP stream to close."""
        self._on_cancel.append(hook)
        if self.cancelled:
            hook()

    def again(self, schema: dict[str, Any] | None = None) -> Generation:
        """Another attempt at this call (a validated reply's retry): its own clock and schema,
        the same cancellation."""
        other = Generation(self.model_id, self.options, schema)
        other._cancel = self._cancel
        return other

    # -- the clock --------------------------------------------------------------------------

    def elapsed(self) -> float:
        return time.perf_counter() - self._started

    def queued(self) -> None:
        """The call's prompt is ready (rendered, tokenized) and it asks for the model: the wait
        (:meth:`began`) counts from here, not from the call's start."""
        self._queued = self.elapsed()

    def began(self) -> None:
        """The model begins on this call: the time since :meth:`queued` (or the call's start)
        was spent waiting for it (the model's lock, a request slot). In-process backends call it
        once they hold the model."""
        now = self.elapsed()
        self.timing.wait_s = now - self._queued
        self._began = now

    def prompt_done(self) -> None:
        """The prompt is evaluated (in-process backends know when; servers do not say). After
        :meth:`began`, the time between is the prompt's evaluation (``prefill_s``)."""
        self.timing.prompt_s = self.elapsed()
        self._prompt_timed = True
        if self._began is not None:
            self.timing.prefill_s = self.timing.prompt_s - self._began

    def token(self) -> None:
        """A token (or a piece of text) arrived; the first one sets ``first_token_s``."""
        if self.timing.first_token_s is None:
            self.timing.first_token_s = self.elapsed()

    def finish(self, text: str, usage: Usage, reason: FinishReason) -> Completion:
        """The completion, timed to now. Where the prompt's end was not seen (a server), the
        first token bounds it, or the whole call when no token came; where it was, the rest of
        the call was decoding (unless the producer measured ``decode_s`` itself)."""
        self.timing.total_s = self.elapsed()
        if not self._prompt_timed:
            self.timing.prompt_s = self.timing.first_token_s or self.timing.total_s
        elif self.timing.decode_s is None:
            self.timing.decode_s = self.timing.total_s - self.timing.prompt_s
        return Completion(text, usage, self.timing, reason, self.model_id, self.options, self.schema)

    # -- hand-over to the event loop --------------------------------------------------------

    def in_thread(self, stream: ChatStream, work: Callable[[Emit], Completion]) -> AsyncIterator[str]:
        """Stream ``work(emit)``, run in a worker thread so the event loop (the TUI) stays live."""

        def start(put: Callable[[str | None], None]) -> asyncio.Future[Completion]:
            loop = asyncio.get_running_loop()

            def emit(delta: str | None) -> None:
                loop.call_soon_threadsafe(put, delta)

            def run() -> Completion:
                try:
                    return work(emit)
                finally:
                    emit(None)

            return loop.run_in_executor(None, run)

        return self._relay(stream, start)

    def in_task(self, stream: ChatStream, work: Callable[[Emit], Awaitable[Completion]]) -> AsyncIterator[str]:
        """Stream ``await work(emit)``, run as its own task so that a slow consumer never holds
        up the producer (an HTTP stream, an engine's outputs)."""

        def start(put: Callable[[str | None], None]) -> asyncio.Future[Completion]:
            async def run() -> Completion:
                try:
                    return await work(put)
                finally:
                    put(None)

            return asyncio.ensure_future(run())

        return self._relay(stream, start)

    async def _relay(self, stream: ChatStream,
                     start: Callable[[Callable[[str | None], None]], asyncio.Future[Completion]]) -> AsyncIterator[str]:
        """Yield the producer's text until it ends, then set ``stream.completion`` (or raise its
        error). A consumer that stops early cancels the call and waits for the producer, so the
        model is free again when it returns."""
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        task = start(queue.put_nowait)
        drained = False
        try:
            while (delta := await queue.get()) is not None:
                yield delta
            drained = True
        finally:
            if not drained:  # the consumer went away: stop the producer and wait for it
                self.cancel()
            await asyncio.wait([task])
        stream.completion = task.result()


class Session(ABC):
    """One agent's conversation with one model, with its own cache."""

    name: str
    backend: Backend

    def __init__(self, backend: Backend, name: str) -> None:
        self.backend = backend
        self.name = name

    def chat(
        self,
        messages: Sequence[Message],
        options: SamplingOptions | None = None,
        *,
        schema: type[BaseModel] | dict[str, Any] | None = None,
    ) -> ChatStream:
        """Start generating the assistant reply to ``messages`` (with the entry's sampling
        defaults where ``options`` is ``None``).

        With ``schema`` the reply is constrained to JSON matching it (grammar-constrained on
        llama.cpp, the server's structured-output dialect on HTTP backends).
        """
        opts = options or self.backend.entry.default_options()
        gen = Generation(self.backend.model_id, opts, schema_of(schema))
        return ChatStream(lambda stream: self._generate(stream, gen, list(messages), schema), gen.cancel)

    def _generate(self, stream: ChatStream, gen: Generation, messages: list[Message],
                  schema: type[BaseModel] | dict[str, Any] | None) -> AsyncIterator[str]:
        """The reply's text, through ``gen.in_thread`` or ``gen.in_task``. ``schema`` is the
        caller's own (a pydantic model validates a fallback reply); ``gen.schema`` is its JSON.
        Sessions that stream from elsewhere (the tests' scripted ones) override :meth:`chat`."""
        raise NotImplementedError(f"{type(self).__name__} implements neither chat() nor _generate()")

    async def complete(
        self,
        messages: Sequence[Message],
        options: SamplingOptions | None = None,
        *,
        schema: type[BaseModel] | dict[str, Any] | None = None,
    ) -> Completion:
        """Generate the whole reply at once (the stream, drained)."""
        return await self.chat(messages, options, schema=schema).collect()

    @abstractmethod
    async def score(
        self,
        messages: Sequence[Message],
        candidates: Sequence[str],
        *,
        prefix: str = "",
    ) -> ScoreResult:
        """Probability distribution over ``candidates`` as the assistant's reply.

        Each candidate is scored as ``prefix + candidate`` followed by the end of the turn, so
        ``"Hepatitis"`` and ``"Hepatitis B"`` are told apart. The shared prompt is evaluated
        once, not once per candidate.
        """

    def recall(self, text: str, tokens: Sequence[int]) -> None:  # noqa: B027 - most sessions keep no tokens
        """A journalled reply of this session's, given back on resuming with the tokens it was
        generated as (:attr:`Completion.tokens`), so that the reply is fed back in later prompts
        exactly as the uninterrupted session fed it. Sessions that re-tokenize every prompt keep
        nothing and ignore it."""

    def reset(self) -> None:  # noqa: B027 - a session that caches nothing has nothing to forget
        """Forget the cached context (the next call evaluates its prompt from scratch)."""

    def count_tokens(self, messages: Sequence[Message]) -> int:
        """Prompt length of ``messages`` in tokens. Backends without a local tokenizer estimate
        (four characters a token, plus the turn markup) and say so by not overriding this."""
        return sum(len(m.content) for m in messages) // 4 + 8 * len(messages)


class ModelSpec(Protocol):
    """What this interface needs of a backend's registry entry (:class:`backends.registry.ModelEntry`
    is one). A protocol rather than an import: the registry imports this module's values, and
    ``base`` importing the registry back was the circle base → registry → chat_format → base."""

    @property
    def id(self) -> str: ...

    def default_options(self) -> SamplingOptions: ...


class Backend(ABC):
    """One loaded model on one serving technology."""

    model_id: str
    kind: str
    #: The model's entry in ``models.toml`` (its sampling defaults, its source); each backend
    #: module narrows this to :class:`backends.registry.ModelEntry`.
    entry: ModelSpec
    #: Tokens the model can attend to (prompt plus reply).
    context_length: int = 4096
    #: Set by :meth:`aclose`: a closed model is refused by name, never touched (a llama.cpp
    #: model used after it was freed crashed the whole process).
    _closed: bool = False

    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}

    def session(self, name: str) -> Session:
        """The session (own cache) for agent ``name``, created on first use."""
        if self._closed:
            raise BackendError(f"model {self.model_id!r} was closed; it cannot answer after its debate or command ended")
        existing = self._sessions.get(name)
        if existing is None:
            existing = self._new_session(name)
            self._sessions[name] = existing
        return existing

    @abstractmethod
    def _new_session(self, name: str) -> Session: ...

    async def aclose(self) -> None:
        """Release the model; :meth:`session` refuses it afterwards. Backends that release
        more call this last."""
        self._closed = True
        self._sessions.clear()

    def describe(self) -> dict[str, Any]:
        """What the journal records about this backend (no secrets, no paths to user data)."""
        return {"model_id": self.model_id, "backend": self.kind}

    @property
    def privacy_warning(self) -> str | None:
        """One line to show the user whenever this backend is loaded, or ``None``. Set where
        debate text leaves this machine (a server entry with ``allow_remote = true``)."""
        return None


def schema_of(schema: type[BaseModel] | dict[str, Any] | None) -> dict[str, Any] | None:
    """The JSON schema for ``schema`` (a pydantic model or an already-made schema dict)."""
    if schema is None:
        return None
    if isinstance(schema, dict):
        return schema
    return schema.model_json_schema()

