"""llama.cpp in process, through llama-cpp-python's low-level wrappers.

Why not the high-level ``llama_cpp.Llama``: it owns exactly one context per loaded model, so
two debaters on the same model would either load the weights twice (twice the GPU memory on
Metal/CUDA) or share one KV cache and re-read each other's transcripts every turn. Here one
:class:`LlamaCppBackend` loads the weights once and every :class:`LlamaCppSession` (one per
agent) gets its own ``llama_context``, i.e. its own KV cache:

* a growing transcript is evaluated once: each call evaluates only the tokens after the longest
  prefix already in that agent's cache, and reports that count as
  ``Usage.prompt_tokens_evaluated``;
* structured output is a JSON-schema grammar in the sampler chain (pydantic model -> JSON
  schema -> GBNF), so the reply is valid JSON for the schema unless cut off by ``max_tokens``;
* :meth:`LlamaCppSession.score` evaluates the shared prompt once, then each candidate's few
  tokens, reading the log-probabilities from the logits llama.cpp leaves per position.

All llama.cpp calls run in a worker thread; the event loop only receives text deltas.
By default one session of a model computes at a time: on a CPU, two decodes at once only
thrash unless there are cores to spare (:meth:`LlamaCppBackend.set_parallel`).
"""

from __future__ import annotations

import asyncio
import codecs
import ctypes
import json
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from .base import (
    Backend,
    BackendError,
    BackendUnavailable,
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
from .chat_format import ChatFormat, get_format
from .chat_template import AppendOnly, ChatTemplate, append_only, template_format, tokenize_pieces
from .registry import ModelEntry
from .structured import bounded_ints_as_enums

log = logging.getLogger(__name__)

_INIT_LOCK = threading.Lock()
_initialised = False
_log_callback: Any = None


def _llama() -> Any:
    """Import llama-cpp-python once, quietly: llama.cpp's own log lines go to Python logging
    (``backends.llamacpp.native``) instead of the terminal, where they would break the TUI."""
    global _initialised, _log_callback
    import llama_cpp

    with _INIT_LOCK:
        if not _initialised:
            native = logging.getLogger(f"{__name__}.native")

            @llama_cpp.llama_log_callback
            def forward(level: int, text: bytes, _user: ctypes.c_void_p) -> None:
                # ggml's levels: 0 none, 1 debug, 2 info, 3 warn, 4 error, 5 continuation.
                # Only errors are worth a user's attention; failures also surface as exceptions.
                native.log(logging.WARNING if level == 4 else logging.DEBUG, text.decode("utf-8", "replace").rstrip())

            _log_callback = forward  # keep a reference: the C side holds only a pointer
            llama_cpp.llama_log_set(forward, ctypes.c_void_p(0))
            llama_cpp.llama_backend_init()
            _initialised = True
    return llama_cpp


def default_threads() -> int:
    """Half the logical CPUs (about the physical cores), at least one.

    ggml's worker threads spin while they wait for each other; with one thread per logical CPU
    any other busy thread (the Textual interface, a second process) stalls them all. Measured
    on a 2-CPU machine under load: 1 thread decoded SmolLM2 at 18.7 tok/s, 2 threads at 2.8.
    Set ``threads`` on a model's entry to choose otherwise.
    """
    return max(1, (os.cpu_count() or 2) // 2)


class ContextOverflow(BackendError):
    """The prompt plus the reply would not fit in the model's context window."""


class LlamaCppBackend(Backend):
    """One GGUF model loaded once, with a KV context per session."""

    kind = "llamacpp"

    def __init__(self, entry: ModelEntry, path: Path) -> None:
        super().__init__()
        llama_cpp = _llama()
        from llama_cpp import _internals

        self._internals = _internals
        self.entry = entry
        self.model_id = entry.id
        self.path = path
        params = _internals.LlamaModel.default_params()
        params.n_gpu_layers = 0x7FFFFFFF if entry.gpu_layers == -1 else entry.gpu_layers
        params.use_extra_bufts = entry.cpu_extra_buffers
        try:
            self.model = _internals.LlamaModel(path_model=str(path), params=params, verbose=False)
        except ValueError as exc:
            raise BackendUnavailable(
                f"model {entry.id!r}: llama.cpp could not load {path} ({exc}). "
                "The file may be incomplete or not a GGUF model; pull or reinstall it."
            ) from None
        self._llama_cpp = llama_cpp
        self.n_vocab = self.model.n_vocab()
        self.n_ctx = min(entry.context_length, self.model.n_ctx_train())
        self.context_length = self.n_ctx
        self.n_batch = min(512, self.n_ctx)
        self.n_threads = entry.threads or default_threads()
        self.add_bos = self.model.add_bos_token()
        self.template, self.format = self._chat_format(entry)
        self.parallel = 1
        self._slots = threading.BoundedSemaphore(self.parallel)
        self._eot_tokens = self._end_of_turn_tokens()
        self._piece_buf = ctypes.create_string_buffer(64)
        #: Whether a debate's growing prompts keep this model's KV cache whole (checked at load).
        self.append_only: AppendOnly = self._check_append_only()

    # -- set-up helpers -------------------------------------------------------------------

    def _chat_format(self, entry: ModelEntry) -> tuple[ChatTemplate | None, ChatFormat]:
        """The GGUF's own chat template, unless the entry names a hand-written format or the
        file has none; the :class:`ChatFormat` carries the end-of-turn marker and stops."""
        if entry.chat_format:
            return None, get_format(entry.chat_format)
        source = self.model.metadata().get("tokenizer.chat_template")
        if not source:
            raise BackendError(
                f"model {entry.id!r}: its GGUF has no chat template; "
                "set chat_format (chatml, gemma, llama3 or mistral) on its entry in models.toml"
            )
        special = self.tokenize_text_of
        template = ChatTemplate(source, bos_token=special(self.model.token_bos()), eos_token=special(self.model.token_eos()),
                                origin=f"model {entry.id!r}")
        return template, template_format(template)

    def tokenize_text_of(self, token: int) -> str:
        """The vocabulary's text of a special token (``<bos>``, ``<|im_end|>``), '' for none."""
        if token < 0:
            return ""
        return self.model.token_get_text(token)

    def _check_append_only(self) -> AppendOnly:
        if self.template is None:  # hand-written formats render turn by turn: append-only by construction
            return AppendOnly(True)
        # The cache holds a reply's tokens without the end-of-turn token that stopped it.
        return append_only(self.template_tokens, lambda reply: self.tokenize(reply, special=False))

    def _is_special(self, token: int) -> bool:
        attr = self._llama_cpp.llama_vocab_get_attr(self.model.vocab, token)
        return bool(attr & (self._llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | self._llama_cpp.LLAMA_TOKEN_ATTR_USER_DEFINED))

    def template_tokens(self, messages: Sequence[Message], reply_prefix: str = "") -> list[int]:
        """The prompt the model's own template gives for ``messages``, as tokens.

        The whole rendering is tokenized at once (as transformers or ``llama-server --jinja``
        would) when no message text contains special-token text and no special token forms
        across a markup/text boundary; otherwise markup and text are tokenized apart, so text
        such as ``<|im_end|>`` in a case stays plain text. BOS: one, whether the template
        writes ``bos_token``, the vocabulary asks for it, or both.
        """
        assert self.template is not None
        tokens = tokenize_pieces(self.template.pieces(messages), lambda text, special: self.tokenize(text, special=special),
                                 self._is_special)
        bos = self.model.token_bos()
        if self.add_bos and bos >= 0 and tokens[:1] != [bos]:
            tokens.insert(0, bos)
        return tokens + self.tokenize(reply_prefix, special=False)

    def _end_of_turn_tokens(self) -> set[int]:
        """Token ids that end a reply: the vocabulary's end-of-generation tokens plus the
        format's end-of-turn marker (a base model may not flag it as end-of-generation)."""
        ids = {t for t in (self.model.token_eos(), self.model.token_eot()) if t >= 0}
        if self.format.end_of_turn:
            marker = self.tokenize(self.format.end_of_turn, special=True)
            if len(marker) == 1:
                ids.add(marker[0])
        return ids

    def set_parallel(self, n: int) -> None:
        """How many sessions may compute at once (default 1). Each session has its own context,
        so more than one is safe; it only pays off with spare cores (e.g. 1 thread each on 2
        cores, as the diagnosis benchmark does). Call while nothing is running."""
        self.parallel = max(1, n)
        self._slots = threading.BoundedSemaphore(self.parallel)

    @contextmanager
    def computing(self, session: LlamaCppSession) -> Iterator[None]:
        """Hold ``session``'s context and one of the model's compute slots."""
        with session.lock, self._slots:
            yield

    def is_end(self, token: int) -> bool:
        return token in self._eot_tokens or bool(self._llama_cpp.llama_vocab_is_eog(self.model.vocab, token))

    def tokenize(self, text: str, *, special: bool) -> list[int]:
        """Tokens of ``text``. ``special=False`` keeps markers such as ``<|im_end|>`` inside
        user or model text as plain text, so a case cannot forge a turn boundary."""
        if not text:
            return []
        return self.model.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    def piece(self, token: int) -> bytes:
        """The bytes of one token (special tokens render as nothing)."""
        buf = self._piece_buf
        n = self._llama_cpp.llama_token_to_piece(self.model.vocab, token, buf, len(buf), 0, False)
        if n < 0:  # longer than the buffer: grow it once and retry
            self._piece_buf = buf = ctypes.create_string_buffer(-n)
            n = self._llama_cpp.llama_token_to_piece(self.model.vocab, token, buf, len(buf), 0, False)
        return buf.raw[:n]

    def _new_session(self, name: str) -> LlamaCppSession:
        return LlamaCppSession(self, name)

    def new_context(self) -> Any:
        params = self._internals.LlamaContext.default_params()
        params.n_ctx = self.n_ctx
        params.n_batch = self.n_batch
        params.n_ubatch = self.n_batch
        params.n_threads = self.n_threads
        params.n_threads_batch = self.n_threads
        # A full-size sliding-window cache (Gemma) so that rolling back to a cached prefix,
        # which scoring does for every candidate, never needs positions already evicted.
        params.swa_full = True
        params.no_perf = True
        try:
            return self._internals.LlamaContext(model=self.model, params=params, verbose=False)
        except ValueError as exc:
            raise BackendError(
                f"model {self.model_id!r}: could not create a context of {self.n_ctx} tokens ({exc}); "
                "lower context_length in models.toml"
            ) from None

    async def aclose(self) -> None:
        slots = self._slots
        for _ in range(self.parallel):  # wait until nothing computes
            slots.acquire()
        try:
            for session in self._sessions.values():
                assert isinstance(session, LlamaCppSession)
                session.close()
            self._sessions.clear()
            self.model.close()
        finally:
            for _ in range(self.parallel):
                slots.release()

    def describe(self) -> dict[str, Any]:
        return {
            "model_id": self.model_id,
            "backend": self.kind,
            "chat_format": self.format.name,
            "kv_reuse": self.append_only.describe(),
            "n_ctx": self.n_ctx,
            "gpu_layers": self.entry.gpu_layers,
            "threads": self.n_threads,
        }


class LlamaCppSession(Session):
    """One agent's own KV cache on a shared model."""

    def __init__(self, backend: LlamaCppBackend, name: str) -> None:
        self.backend = backend
        self.name = name
        self.lock = threading.Lock()
        self._ctx: Any = None
        self._batch: Any = None
        #: Tokens whose keys and values are in this session's cache, in order.
        self._cached: list[int] = []
        #: Exact token ids of recent replies, keyed by their (stripped) text, so a reply fed
        #: back as an assistant turn matches the cache even where re-tokenising would differ.
        self._generated: OrderedDict[str, list[int]] = OrderedDict()

    # -- public API -----------------------------------------------------------------------

    def chat(
        self,
        messages: Sequence[Message],
        options: SamplingOptions | None = None,
        *,
        schema: type[BaseModel] | dict[str, Any] | None = None,
    ) -> ChatStream:
        opts = options or self.backend.entry.default_options()
        json_schema = schema_of(schema)
        cancel = threading.Event()
        return ChatStream(lambda stream: self._stream(stream, messages, opts, json_schema, cancel), cancel.set)

    async def score(
        self,
        messages: Sequence[Message],
        candidates: Sequence[str],
        *,
        prefix: str = "",
    ) -> ScoreResult:
        if not candidates:
            raise ValueError("score() needs at least one candidate")
        return await asyncio.to_thread(self._score_sync, list(messages), list(candidates), prefix)

    def reset(self) -> None:
        with self.backend.computing(self):
            if self._ctx is not None:
                self._ctx.kv_cache_clear()
            self._cached = []

    def count_tokens(self, messages: Sequence[Message]) -> int:
        """Prompt length of ``messages`` in tokens (to keep debates inside the context)."""
        return len(self._prompt_tokens(messages))

    def close(self) -> None:
        if self._ctx is not None:
            self._ctx.close()
            self._ctx = None
        self._cached = []

    # -- prompt rendering -------------------------------------------------------------------

    def _prompt_tokens(self, messages: Sequence[Message], *, reply_prefix: str = "") -> list[int]:
        be = self.backend
        if be.template is not None:
            return be.template_tokens(messages, reply_prefix)
        fmt = be.format
        tokens: list[int] = [be.model.token_bos()] if be.add_bos else []
        for message in fmt.turns(messages):
            tokens += be.tokenize(fmt.prefix[message.role], special=True)
            generated = self._generated.get(message.content.strip()) if message.role == "assistant" else None
            tokens += generated if generated is not None else be.tokenize(message.content, special=False)
            tokens += be.tokenize(fmt.suffix[message.role], special=True)
        tokens += be.tokenize(fmt.prefix["assistant"], special=True)
        tokens += be.tokenize(reply_prefix, special=False)
        return tokens

    # -- llama.cpp work (worker thread, under the model lock) -------------------------------

    def _context(self) -> Any:
        if self._ctx is None:
            self._ctx = self.backend.new_context()
            self._batch = self.backend._internals.LlamaBatch(
                n_tokens=self.backend.n_batch, embd=0, n_seq_max=1, verbose=False
            )
        return self._ctx

    def _decode(self, tokens: Sequence[int], start: int, *, all_logits: bool = False) -> None:
        """Run ``tokens`` at positions ``start…``; logits are kept for the last one (or all)."""
        ctx = self._context()
        batch = self._batch
        n_batch = self.backend.n_batch
        for offset in range(0, len(tokens), n_batch):
            chunk = tokens[offset : offset + n_batch]
            batch.set_batch(chunk, n_past=start + offset, logits_all=all_logits)
            try:
                ctx.decode(batch)
            except RuntimeError as exc:
                raise BackendError(f"model {self.backend.model_id!r}: llama_decode failed ({exc})") from None

    def _evaluate_prompt(self, prompt: list[int]) -> int:
        """Bring the cache to exactly ``prompt`` and return how many tokens had to be run."""
        ctx = self._context()
        common = 0
        for cached, new in zip(self._cached, prompt):
            if cached != new:
                break
            common += 1
        if common == len(prompt):  # fully cached: re-run the last token to get fresh logits
            common -= 1
        if common < len(self._cached) and not ctx.kv_cache_seq_rm(0, common, -1):
            ctx.kv_cache_clear()
            common = 0
        self._cached = self._cached[:common]
        self._decode(prompt[common:], common)
        self._cached = list(prompt)
        return len(prompt) - common

    def _check_fits(self, n_prompt: int, max_new: int) -> None:
        n_ctx = self.backend.n_ctx
        if n_prompt + max_new > n_ctx:
            raise ContextOverflow(
                f"model {self.backend.model_id!r}: a prompt of {n_prompt} tokens plus {max_new} new ones "
                f"does not fit its context of {n_ctx} tokens (session {self.name!r}); "
                "raise context_length in models.toml or shorten the transcript"
            )

    def _generate_sync(
        self,
        messages: list[Message],
        opts: SamplingOptions,
        json_schema: dict[str, Any] | None,
        cancel: threading.Event,
        emit: Callable[[str], None],
    ) -> Completion:
        be = self.backend
        timing = Timing()
        started = time.perf_counter()
        grammar = _grammar_for(json_schema) if json_schema else None
        prompt = self._prompt_tokens(messages)
        self._check_fits(len(prompt), 1)
        stops = tuple(opts.stop) + (() if json_schema else be.format.stop)
        hold = max((len(s) for s in stops), default=1) - 1
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        out: list[int] = []
        text = ""
        sent = 0
        finish = "length"
        with be.computing(self):
            evaluated = self._evaluate_prompt(prompt)
            timing.prompt_s = time.perf_counter() - started
            sampler = _Sampler(be, opts, grammar)
            ctx = self._ctx
            position = len(prompt)
            while len(out) < opts.max_tokens and position < be.n_ctx:
                if cancel.is_set():
                    finish = "cancelled"
                    break
                token = sampler.sample(ctx)
                if be.is_end(token):
                    finish = "stop"
                    break
                out.append(token)
                if timing.first_token_s is None:
                    timing.first_token_s = time.perf_counter() - started
                text += decoder.decode(be.piece(token))
                cut = _first_stop(text, stops)
                if cut is not None:
                    text = text[:cut]
                    finish = "stop"
                    break
                safe = len(text) - hold if hold else len(text)
                if safe > sent:
                    emit(text[sent:safe])
                    sent = safe
                self._decode([token], position)
                self._cached.append(token)
                position += 1
            sampler.close()
        text += decoder.decode(b"", final=True) if finish != "stop" else ""
        if len(text) > sent:
            emit(text[sent:])
        self._remember(text, out)
        timing.total_s = time.perf_counter() - started
        return Completion(
            text=text,
            usage=Usage(len(prompt), evaluated, len(out)),
            timing=timing,
            finish_reason=finish,  # type: ignore[arg-type]
            model_id=be.model_id,
            options=opts,
            schema=json_schema,
        )

    def _remember(self, text: str, tokens: list[int]) -> None:
        key = text.strip()
        if not key:
            return
        self._generated[key] = tokens
        self._generated.move_to_end(key)
        while len(self._generated) > 64:
            self._generated.popitem(last=False)

    def _score_sync(self, messages: list[Message], candidates: list[str], prefix: str) -> ScoreResult:
        be = self.backend
        timing = Timing()
        started = time.perf_counter()
        prompt = self._prompt_tokens(messages, reply_prefix=prefix)
        ends = be.tokenize(be.format.end_of_turn, special=True)
        encoded = [be.tokenize(c, special=False) + ends for c in candidates]
        if any(len(e) == len(ends) for e in encoded):
            raise ValueError("score() candidates must be non-empty strings")
        self._check_fits(len(prompt), max(len(e) for e in encoded))
        logprobs: list[float] = []
        with be.computing(self):
            evaluated = self._evaluate_prompt(prompt)
            timing.prompt_s = time.perf_counter() - started
            first = _log_softmax(self._logits(-1))
            n = len(prompt)
            for tokens in encoded:
                total = float(first[tokens[0]])
                if len(tokens) > 1:
                    self._decode(tokens[:-1], n, all_logits=True)
                    for i, token in enumerate(tokens[1:]):
                        total += float(_log_softmax(self._logits(i))[token])
                    self._ctx.kv_cache_seq_rm(0, n, -1)
                logprobs.append(total)
            self._cached = list(prompt)
        timing.total_s = time.perf_counter() - started
        lp = np.array(logprobs)
        probs = np.exp(lp - lp.max())
        probs /= probs.sum()
        return ScoreResult(
            candidates=candidates,
            logprobs=logprobs,
            probs=probs.tolist(),
            token_counts=[len(e) for e in encoded],
            usage=Usage(len(prompt), evaluated + sum(len(e) - 1 for e in encoded), 0),
            timing=timing,
            model_id=be.model_id,
        )

    def _logits(self, index: int) -> np.ndarray:
        ptr = self._ctx.get_logits_ith(index)
        return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(self.backend.n_vocab,)).copy()

    # -- async bridge -----------------------------------------------------------------------

    async def _stream(
        self,
        stream: ChatStream,
        messages: Sequence[Message],
        opts: SamplingOptions,
        json_schema: dict[str, Any] | None,
        cancel: threading.Event,
    ) -> AsyncIterator[str]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | None] = asyncio.Queue()

        def emit(delta: str) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, delta)

        def work() -> Completion:
            try:
                return self._generate_sync(list(messages), opts, json_schema, cancel, emit)
            finally:
                loop.call_soon_threadsafe(queue.put_nowait, None)

        task = loop.run_in_executor(None, work)
        try:
            while (delta := await queue.get()) is not None:
                yield delta
            stream.completion = await task
        finally:
            if not task.done():  # the consumer went away: stop the worker and wait for it
                cancel.set()
                await asyncio.shield(task)


class _Sampler:
    """Token sampling, with a fast path for grammar-constrained replies.

    A grammar applied to the whole vocabulary on every step is slow (every one of 49k–262k
    tokens is checked against the grammar's stacks). As llama.cpp's own ``common_sampler`` does,
    we first sample without the grammar and ask the grammar about that single token; only when
    it is rejected do we resample with the grammar over the full vocabulary. The result is the
    same distribution restricted to valid tokens whenever the first draw is valid, which is
    most of the time.

    Repetition penalties apply to free text only: JSON repeats its punctuation by design, and
    penalising ``"`` or ``,`` derails structured replies.
    """

    def __init__(self, backend: LlamaCppBackend, opts: SamplingOptions, grammar: Any) -> None:
        self._api = backend._llama_cpp
        seed = opts.seed if opts.seed is not None else int.from_bytes(os.urandom(4), "little")
        penalty = opts.repeat_penalty if grammar is None and opts.repeat_penalty else 1.0
        self.free = self._chain(backend, opts, None, penalty, seed)
        self.constrained = self._chain(backend, opts, grammar, 1.0, seed + 1) if grammar is not None else None
        self._one = self._api.llama_token_data()
        self._one_array = self._api.llama_token_data_array(
            data=ctypes.pointer(self._one), size=1, selected=-1, sorted=False
        )

    @staticmethod
    def _chain(backend: LlamaCppBackend, opts: SamplingOptions, grammar: Any, penalty: float, seed: int) -> Any:
        sampler = backend._internals.LlamaSampler()
        if grammar is not None:
            sampler.add_grammar(backend.model, grammar)  # first, so it sees every candidate
        if penalty != 1.0:
            sampler.add_penalties(backend.n_vocab, 64, penalty, 0.0, 0.0)
        if opts.temperature <= 0:
            sampler.add_greedy()
            return sampler
        if opts.top_k > 0:
            sampler.add_top_k(opts.top_k)
        sampler.add_top_p(opts.top_p, 1)
        if opts.min_p > 0:
            sampler.add_min_p(opts.min_p, 1)
        sampler.add_temp(opts.temperature)
        sampler.add_dist(seed)
        return sampler

    def sample(self, ctx: Any) -> int:
        token = self.free.sample(ctx, -1)
        if self.constrained is None:
            return token
        grammar = self._api.llama_sampler_chain_get(self.constrained.sampler, 0)
        self._one.id, self._one.logit, self._one.p = token, 0.0, 0.0
        self._one_array.size, self._one_array.selected = 1, -1
        self._api.llama_sampler_apply(grammar, ctypes.byref(self._one_array))
        if self._one.logit != float("-inf"):
            self._api.llama_sampler_accept(self.constrained.sampler, token)
            return token
        return self.constrained.sample(ctx, -1)  # applies the grammar to all tokens, accepts

    def close(self) -> None:
        self.free.close()
        if self.constrained is not None:
            self.constrained.close()


def _first_stop(text: str, stops: Sequence[str]) -> int | None:
    positions = [i for s in stops if s and (i := text.find(s)) >= 0]
    return min(positions) if positions else None


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max()
    return shifted - np.log(np.exp(shifted).sum())


_GRAMMARS: dict[str, Any] = {}


def _grammar_for(json_schema: dict[str, Any]) -> Any:
    """A compiled GBNF grammar for a JSON schema (cached: protocols reuse a few schemas)."""
    from llama_cpp.llama_grammar import LlamaGrammar

    key = json.dumps(json_schema)  # property order matters: the grammar emits keys in this order
    if key not in _GRAMMARS:
        try:
            grammar_schema = json.dumps(bounded_ints_as_enums(json_schema))
            _GRAMMARS[key] = LlamaGrammar.from_json_schema(grammar_schema, verbose=False)
        except (ValueError, RuntimeError, KeyError, NotImplementedError) as exc:
            raise BackendError(f"cannot turn this JSON schema into a grammar: {exc}") from None
    return _GRAMMARS[key]

